"""``tokudb.environment`` and ``tokudb.rollback``.

Source: PerconaFT ``src/ydb.cc`` (``persistent environment`` keys written by
``maybe_upgrade_persistent_environment_dictionary`` / ``capture_persistent_env_contents``:
``current_version``, ``original_version``, ``creation_time``, upgrade
timestamps and counters; integers stored in host (little-endian) order) and
``ft/txn/rollback.cc`` / ``rollback-ct-callbacks.cc`` (``tokuroll`` blocks:
rollback log nodes, present only while transactions are open or after a crash).
"""
from __future__ import annotations


def environment_values(rows: dict[bytes, bytes]) -> dict[str, int | str]:
    """Decode the environment dictionary's rows: 4- or 8-byte values as
    little-endian integers, anything else as hex."""
    out: dict[str, int | str] = {}
    for k, v in sorted(rows.items()):
        name = k.rstrip(b"\0").decode("utf-8", "replace")
        if len(v) in (4, 8):
            out[name] = int.from_bytes(v, "little")
        else:
            out[name] = v.hex()
    return out

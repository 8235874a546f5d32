"""The data directory: ``tokudb.directory`` (dname -> iname) and the grouping
of dictionary files into MySQL tables with roles.

Source: PerconaFT ``src/ydb_db.cc`` (``create_iname``: the iname is the dname
with non-alphanumeric runs turned into ``_``, two hex transaction ids and the
hex layout version, ``_B_<n>`` for loader-built files, ``<db>/`` prefix with
per-database directories) and Percona Server's ``storage/tokudb/ha_tokudb.cc``
(dnames ``./<db>/<table>-main``, ``-status``, ``-key-<index name>``).
``tokudb.directory`` is itself a fractal tree whose keys are NUL-terminated
dnames and values NUL-terminated inames.
"""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

ROLE_MAIN = "main"
ROLE_SECONDARY = "secondary_index"
ROLE_STATUS = "status"
ROLE_DIRECTORY = "directory"
ROLE_ENVIRONMENT = "environment"
ROLE_ROLLBACK = "rollback"
ROLE_DICTIONARY = "dictionary"        # a .tokudb file we could not place

ENGINE_FILES = {"tokudb.directory": ROLE_DIRECTORY, "tokudb.environment": ROLE_ENVIRONMENT,
                "tokudb.rollback": ROLE_ROLLBACK}

# <rest>_<hex id>_<hex id>_<hex layout version>[_B_<n>].tokudb
_INAME_RE = re.compile(r"^(?P<rest>.+?)_(?P<id1>[0-9a-f]+)_(?P<id2>[0-9a-f]+)_(?P<ver>[0-9a-f]+)"
                       r"(?:_B_(?P<loader>\d+))?\.tokudb$")


@dataclass(frozen=True)
class DictName:
    """Where a dictionary belongs: database, table, role, index name."""

    database: str | None
    table: str | None
    role: str
    index: str | None = None


def _split_index(rest: str, sep: str) -> tuple[str, str, str | None] | None:
    """Split '<table><sep>main' / '<sep>status' / '<sep>key<sep><name>'.

    A key index is looked for first (its name may end in "status" or "main")."""
    k = rest.find(sep + "key" + sep)
    if k > 0:
        return rest[:k], ROLE_SECONDARY, rest[k + len(sep + "key" + sep):]
    if rest.endswith(sep + "main"):
        return rest[:-len(sep + "main")], ROLE_MAIN, None
    if rest.endswith(sep + "status"):
        return rest[:-len(sep + "status")], ROLE_STATUS, None
    return None


def parse_dname(dname: str) -> DictName:
    """``./fx/orders-key-idx_status`` -> (fx, orders, secondary_index, idx_status)."""
    d = dname[2:] if dname.startswith("./") else dname
    if "/" not in d:
        return DictName(None, None, ENGINE_FILES.get(d, ROLE_DICTIONARY))
    db, rest = d.split("/", 1)
    sp = _split_index(rest, "-")
    if sp is None:
        return DictName(db, rest, ROLE_DICTIONARY)
    return DictName(db, sp[0], sp[1], sp[2])


def parse_iname(relpath: str) -> DictName:
    """Best guess from a file name alone (when tokudb.directory is missing):
    ``_fx_orders_main_5_1_1d_B_0.tokudb`` (flat) or ``fx/orders_main_..._1d.tokudb``
    (per-database directory).  In the flat layout a database or table name with
    ``_`` is ambiguous; the first ``_``-separated word is taken as the database."""
    name = posixpath.basename(relpath)
    if name in ENGINE_FILES:
        return DictName(None, None, ENGINE_FILES[name])
    m = _INAME_RE.match(name)
    if not m:
        return DictName(None, None, ROLE_DICTIONARY)
    rest = m.group("rest")
    parent = posixpath.basename(posixpath.dirname(relpath))
    if rest.startswith("_"):
        # flat: _<db>_<table>_<index>
        body = rest[1:]
        if "_" not in body:
            return DictName(None, None, ROLE_DICTIONARY)
        db, tail = body.split("_", 1)
    else:
        db, tail = (parent or None), rest
    sp = _split_index(tail, "_")
    if sp is None:
        return DictName(db, tail, ROLE_DICTIONARY)
    return DictName(db, sp[0], sp[1], sp[2])


def directory_map(rows: dict[bytes, bytes]) -> dict[str, str]:
    """dname -> iname from the rows of tokudb.directory (NUL terminators dropped)."""
    out = {}
    for k, v in rows.items():
        dname = k.rstrip(b"\0").decode("utf-8", "replace")
        iname = v.rstrip(b"\0").decode("utf-8", "replace")
        out[dname] = iname
    return out

"""A TokuDB table's figures from its dictionaries' ``tokudb`` sections: the
footprint sums and what SHOW TABLE STATUS / information_schema.TABLES report.

The reported figures are the header estimates (ha_tokudb::info -> DB->stat64:
bt_nkeys, bt_dsize; ``on_disk_numrows`` / ``on_disk_numbytes`` in the sections):
rows and data from the main dictionary, index from the secondary keys.  Used by
the live scan and by saved scans alike (one computation).
"""
from __future__ import annotations

from ..model import FileEntry
from .directory import ROLE_DICTIONARY


def table_info(entries: list[FileEntry], estimates_always: bool = True) -> dict:
    """The ``TableEntry.info`` of a table made of ``entries`` (its dictionaries).

    ``estimates_always``: give the information_schema figures even when no
    dictionary has header estimates (a live scan; a saved scan made before those
    fields existed leaves them out, and the view sums what it has)."""
    secs = {e.path: (e.sections.get("tokudb") or {}) for e in entries}
    info = {
        "roles": {e.path: secs[e.path].get("role", ROLE_DICTIONARY) for e in entries},
        "apparent_bytes": sum(e.apparent_bytes for e in entries),
        "allocated_bytes": sum(e.allocated_bytes for e in entries),
        "bytes_in_use": sum(int(s.get("bytes_in_use") or 0) for s in secs.values()),
        "disk_bytes": sum(int(s.get("disk_bytes") or 0) for s in secs.values()),
        "uncompressed_bytes": sum(int(s.get("uncompressed_bytes") or 0) for s in secs.values()),
    }
    rows = data = index = 0
    known = False
    for e in entries:
        s = secs[e.path]
        if s.get("on_disk_numbytes") is None:
            continue
        known = True
        if s.get("role") == "main":
            rows = int(s.get("on_disk_numrows") or 0)
            data = int(s["on_disk_numbytes"])
            info["records_on_disk"] = int(s.get("records") or 0)
        elif s.get("role") == "secondary_index":
            index += int(s["on_disk_numbytes"])
    if known or estimates_always:
        info["information_schema"] = {"table_rows": rows, "data_length": data, "index_length": index,
                                      "total_length": data + index}
        info["real_footprint_bytes"] = info["allocated_bytes"]
        info["claimed_vs_real"] = round((data + index) / info["allocated_bytes"], 3) \
            if info["allocated_bytes"] else None
    return info

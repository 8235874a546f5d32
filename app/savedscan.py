"""Saved scans (``dbxray scan PATH -o scan.dbxray.json``) reopened in the app:
scan on the database host, look on the desktop.  Only what the JSON holds
comes back (sizes, holes, engine sections); views that need the files
themselves say so."""
from __future__ import annotations

import json

from dbxray.parsers.model import Dataset, FileEntry, TableEntry


def is_saved_scan(path: str) -> bool:
    if not path.endswith(".json"):
        return False
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return b'"tool"' in head and b'"dbxray"' in head


def load_saved_scan(path: str) -> Dataset:
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    if data.get("tool") != "dbxray" or data.get("schema_version") != 1:
        raise ValueError(f"{path}: not a dbxray scan of schema version 1")
    ds = Dataset(root=data["root"], errors=list(data.get("errors", [])), warnings=list(data.get("warnings", [])))
    ds.detail["saved_scan"] = path
    known = {"path", "engine", "role", "apparent_bytes", "allocated_bytes", "holes", "unwritten",
             "errors", "warnings", "database", "table"}
    for f in data["files"]:
        e = FileEntry(path=f["path"], abspath="", engine=f.get("engine"), role=f.get("role", "other"),
                      apparent_bytes=f.get("apparent_bytes", 0), allocated_bytes=f.get("allocated_bytes", 0),
                      holes=[tuple(h) for h in f.get("holes", [])],
                      unwritten=[tuple(h) for h in f.get("unwritten", [])],
                      errors=list(f.get("errors", [])), warnings=list(f.get("warnings", [])),
                      database=f.get("database"), table=f.get("table"))
        e.sections = {k: v for k, v in f.items() if k not in known}
        ds.files.append(e)
        if e.database and e.table and e.engine:
            ds.table(e.engine, e.database, e.table).files.append(e.path)
    for k, v in data.items():
        if k not in ("tool", "schema_version", "root", "engines", "files", "errors", "warnings"):
            ds.sections[k] = v
    _tokudb_tables(ds)
    return ds


def _tokudb_tables(ds: Dataset) -> None:
    """TokuDB tables' info as a live scan has it, from the dictionaries' JSON: the
    footprint sums and what SHOW TABLE STATUS / information_schema.TABLES report
    (the header estimates ``on_disk_numrows`` / ``on_disk_numbytes``: rows and data
    from the main dictionary, index from the secondary keys)."""
    for t in ds.tables:
        if t.engine != "tokudb":
            continue
        entries = [e for e in ds.files if e.path in t.files and isinstance(e.sections.get("tokudb"), dict)]
        secs = {e.path: e.sections["tokudb"] for e in entries}
        info = {
            "roles": {p: s.get("role", "dictionary") for p, s in secs.items()},
            "apparent_bytes": sum(e.apparent_bytes for e in entries),
            "allocated_bytes": sum(e.allocated_bytes for e in entries),
            "bytes_in_use": sum(int(s.get("bytes_in_use") or 0) for s in secs.values()),
            "disk_bytes": sum(int(s.get("disk_bytes") or 0) for s in secs.values()),
            "uncompressed_bytes": sum(int(s.get("uncompressed_bytes") or 0) for s in secs.values()),
        }
        rows = data = index = 0
        known = False
        for p, s in secs.items():
            if s.get("on_disk_numbytes") is None:
                continue
            known = True
            if s.get("role") == "main":
                rows = int(s.get("on_disk_numrows") or 0)
                data = int(s["on_disk_numbytes"])
                info["records_on_disk"] = int(s.get("records") or 0)
            elif s.get("role") == "secondary_index":
                index += int(s["on_disk_numbytes"])
        if known:       # scans saved before these fields existed: the view sums what it has
            info["information_schema"] = {"table_rows": rows, "data_length": data, "index_length": index,
                                          "total_length": data + index}
            info["real_footprint_bytes"] = info["allocated_bytes"]
            info["claimed_vs_real"] = round((data + index) / info["allocated_bytes"], 3) \
                if info["allocated_bytes"] else None
        t.info = info


__all__ = ["is_saved_scan", "load_saved_scan", "TableEntry"]

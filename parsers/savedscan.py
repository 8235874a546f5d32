"""Saved scans (``dbxray scan PATH -o scan.dbxray.json``) reopened in the app:
scan on the database host, look on the desktop.  Only what the JSON holds
comes back (sizes, holes, engine sections); views that need the files
themselves say so.  What a live scan derives from the files (TokuDB table
figures, ...) each engine rebuilds from the sections (``Engine.restore``)."""
from __future__ import annotations

import json

from . import engines
from .fsfacts import FsFacts
from .model import Dataset, FileEntry, TableEntry


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
    ds = Dataset(root=data["root"], errors=list(data.get("errors", [])), warnings=list(data.get("warnings", [])),
                 engine_order=engines.names())
    ds.detail["saved_scan"] = path
    known = {"path", "engine", "role", "apparent_bytes", "allocated_bytes", "holes", "unwritten",
             "errors", "warnings", "database", "table", "fs"}
    for f in data["files"]:
        e = FileEntry(path=f["path"], abspath="", engine=f.get("engine"), role=f.get("role", "other"),
                      apparent_bytes=f.get("apparent_bytes", 0), allocated_bytes=f.get("allocated_bytes", 0),
                      holes=[tuple(h) for h in f.get("holes", [])],
                      unwritten=[tuple(h) for h in f.get("unwritten", [])],
                      errors=list(f.get("errors", [])), warnings=list(f.get("warnings", [])),
                      database=f.get("database"), table=f.get("table"))
        if isinstance(f.get("fs"), dict):
            e.fs = FsFacts.from_json(f["fs"])
            e.fs_block = e.fs.block_size
        engine = engines.get(e.engine)
        e.sections = {k: (engine.section_from_json(v) if engine is not None and k == engine.name else v)
                      for k, v in f.items() if k not in known}
        ds.files.append(e)
        if e.database and e.table and e.engine:
            ds.table(e.engine, e.database, e.table).files.append(e.path)
    for k, v in data.items():
        if k not in ("tool", "schema_version", "root", "engines", "files", "errors", "warnings"):
            ds.sections[k] = v
    for engine in engines.ENGINES:
        engine.restore(ds)
    return ds


__all__ = ["is_saved_scan", "load_saved_scan", "TableEntry"]

"""TokuDB (PerconaFT) behind the engine protocol (parsers/engine.py).

Names as the engine writes them (ydb.cc, logger.cc): ``*.tokudb`` dictionaries,
``tokudb.directory``, ``tokudb.environment``, ``tokudb.rollback``,
``__tokudb_lock_dont_delete_me_*``, ``log<N>.tokulog<V>``; lone files by their
magic (ft/serialize/ft_node-serialize.cc ``tokudata``, logger/logfilemgr.cc ``tokulogg``).
"""
from __future__ import annotations

import re

from ..engine import Engine
from ..model import FileEntry, UnitGeometry

TOKU_LOG_RE = re.compile(r"^log\d+\.tokulog\d+$")
TOKU_NAME_RE = re.compile(
    r"^_(?P<db>[^_]+)_(?P<table>.+?)_(?P<kind>main|status|key_.+?)_[0-9a-f]+_\d+_[0-9a-f]+(?:_B_\d+)?\.tokudb$")


#: partitions drawn to a row of the unit map
PARTITIONS_PER_ROW = 32


class TokuDB(Engine):
    name = "tokudb"
    label = "TokuDB"
    roles = ("dictionary", "engine_environment", "undo", "redo_log")
    claim_order = 30
    head_bytes = 8

    def claim_name(self, rel, state):
        lower = rel.rsplit("/", 1)[-1].lower()
        if lower.endswith(".tokudb") or lower == "tokudb.directory":
            return "dictionary"
        if lower == "tokudb.environment" or lower.startswith("__tokudb_lock_dont_delete_me"):
            return "engine_environment"
        if lower == "tokudb.rollback":
            return "undo"
        if TOKU_LOG_RE.match(lower):
            return "redo_log"
        return None

    def claim_bytes(self, head, tail):
        if head[:8] == b"tokudata":
            return "dictionary"
        if head[:8] == b"tokulogg":
            return "redo_log"
        return None

    def analyze(self, dataset, files, ctx):
        from .scan import analyze
        analyze(dataset, files, ctx)

    def place(self, entry: FileEntry):
        db, table = entry.database, entry.table
        if db is None:
            m = TOKU_NAME_RE.match(entry.path.split("/")[-1])
            if m:
                db, table = m.group("db"), m.group("table")
            else:
                db = "(environment)"
        return db, table, None

    def unit_geometry(self, entry: FileEntry):
        """Partitions (the sub-blocks PerconaFT compresses), of varying size, in file order."""
        if entry.role != "dictionary" or entry.units is None:
            return None
        return UnitGeometry(0, 0, PARTITIONS_PER_ROW, "partition", "row", tree_kind_names=None,
                            modes=(("type", "Compression method"), ("index", "Node"), ("level", "Tree height"),
                                   ("compression", "Stored / uncompressed"), ("allocation", "Allocation (holes)"),
                                   ("checksum", "Checksum")))

    def unit_payload(self, entry, i, max_output):
        from .payloads import unit_payload
        return unit_payload(entry, i, max_output=max_output)

    def section_from_json(self, data):
        from .section import section_from_json
        return section_from_json(data) if isinstance(data, dict) else data

    def restore(self, dataset):
        from .tables import table_info
        for t in dataset.tables:
            if t.engine != self.name:
                continue
            entries = [e for e in dataset.files if e.path in t.files and isinstance(e.sections.get("tokudb"), dict)]
            t.info = table_info(entries, estimates_always=False)


ENGINE = TokuDB()

"""The CSV engine behind the engine protocol (parsers/engine.py): ``<table>.CSV``
(the rows as text) and ``<table>.CSM`` (meta: row count, dirty flag), named so by
ha_tina.cc (CSV_EXT, CSM_EXT; the engine writes them upper case)."""
from __future__ import annotations

from ..engine import Engine
from ..model import FileEntry
from .scan import DATA_EXT, META_EXT, table_of
from .section import section_from_json


class Csv(Engine):
    name = "csv"
    label = "CSV"
    roles = ("table_data", "table_metadata")
    claim_order = 40

    def claim_name(self, rel, state):
        if rel.endswith(DATA_EXT):
            return "table_data"
        if rel.endswith(META_EXT):
            return "table_metadata"
        return None

    def analyze(self, dataset, files, ctx):
        from .scan import analyze
        analyze(dataset, files, ctx)

    def section_from_json(self, data):
        return section_from_json(data) if isinstance(data, dict) else data

    def place(self, entry: FileEntry):
        db, table = table_of(entry)
        return entry.database or db, entry.table or table, None


ENGINE = Csv()

"""The CSV engine behind the engine protocol (parsers/engine.py): ``<table>.CSV``
(the rows as text) and ``<table>.CSM`` (meta: row count, dirty flag), named so by
ha_tina.cc (CSV_EXT, CSM_EXT; the engine writes them upper case)."""
from __future__ import annotations

from ..tablefiles import TableFilesEngine
from .scan import DATA_EXT, META_EXT, analyze
from .section import section_from_json


class Csv(TableFilesEngine):
    name = "csv"
    label = "CSV"
    roles = ("table_data", "table_metadata")
    claim_order = 40
    table_exts = ((DATA_EXT, "table_data"), (META_EXT, "table_metadata"))
    analyze_files = staticmethod(analyze)
    read_section = staticmethod(section_from_json)


ENGINE = Csv()

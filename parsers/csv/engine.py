"""The CSV engine behind the engine protocol (parsers/engine.py): ``<table>.CSV``
(the rows as text) and ``<table>.CSM`` (meta: row count, dirty flag), named so by
ha_tina.cc (CSV_EXT, CSM_EXT; the engine writes them upper case)."""
from __future__ import annotations

from ..model import FileEntry, UnitGeometry
from ..tablefiles import TableFilesEngine
from .names import DATA_EXT, META_EXT


def analyze(dataset, files, ctx):
    """scan.py ``analyze``, imported when a scan holds CSV files."""
    from .scan import analyze as run
    run(dataset, files, ctx)


def section_from_json(data: dict):
    """section.py ``section_from_json``, imported when a saved scan holds a CSV section."""
    from .section import section_from_json as read
    return read(data)


class Csv(TableFilesEngine):
    name = "csv"
    label = "CSV"
    roles = ("table_data", "table_metadata")
    claim_order = 40
    table_exts = ((DATA_EXT, "table_data"), (META_EXT, "table_metadata"))
    analyze_files = staticmethod(analyze)
    read_section = staticmethod(section_from_json)

    def unit_geometry(self, entry: FileEntry):
        """Data files in 1 MiB pieces (rows are text of any length), 16 to a row: where the
        file is allocated and where its last row was cut short."""
        if entry.role != "table_data" or entry.units is None or not len(entry.units):
            return None
        from .data import PIECE
        return UnitGeometry(PIECE, PIECE, 16, "1 MiB piece", "row", tree_kind_names=(),
                            modes=(("type", "Content"), ("allocation", "Allocation (holes)")))


ENGINE = Csv()

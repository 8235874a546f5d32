"""The ARCHIVE engine behind the engine protocol (parsers/engine.py): ``<table>.ARZ``
(ha_archive.cc ARZ), the azio header and the deflate row stream.  (The ``.ARM``
meta file and ``.ARN`` of MySQL 5.0 are gone since ARCHIVE_VERSION 3.)"""
from __future__ import annotations

from ..model import FileEntry, UnitGeometry
from ..tablefiles import TableFilesEngine
from .names import DATA_EXT


def analyze(dataset, files, ctx):
    """scan.py ``analyze``, imported when a scan holds ARCHIVE files."""
    from .scan import analyze as run
    run(dataset, files, ctx)


def section_from_json(data: dict):
    """section.py ``section_from_json``, imported when a saved scan holds an ARCHIVE section."""
    from .section import section_from_json as read
    return read(data)

#: spans drawn to a row of the unit map (32 x 32 KiB = 1 MiB of the file)
SPANS_PER_ROW = 32


class Archive(TableFilesEngine):
    name = "archive"
    label = "ARCHIVE"
    roles = ("table_data",)
    claim_order = 45
    table_exts = ((DATA_EXT, "table_data"),)
    analyze_files = staticmethod(analyze)
    read_section = staticmethod(section_from_json)

    def unit_geometry(self, entry: FileEntry):
        """32 KiB spans of deflate data (and the header unit before them), in file order."""
        if entry.units is None or not len(entry.units):
            return None
        return UnitGeometry(0, 0, SPANS_PER_ROW, "span", "row", tree_kind_names=None,
                            modes=(("type", "Unit kind"), ("compression", "Stored / inflated"),
                                   ("allocation", "Allocation (holes)")))

    def unit_payload(self, entry, i, max_output):
        from .payloads import unit_payload
        return unit_payload(entry, i, max_output)

    def restore(self, dataset):
        from .scan import table_info
        for t in dataset.tables:
            if t.engine == self.name:
                e = dataset.file(t.files[0]) if t.files else None
                if e is not None:
                    t.info = table_info(e, e.sections.get("archive"))


ENGINE = Archive()

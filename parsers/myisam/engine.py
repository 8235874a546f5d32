"""MyISAM behind the engine protocol (parsers/engine.py): ``<table>.MYI`` (state header
and key blocks) and ``<table>.MYD`` (rows), named so by storage/myisam (MI_NAME_IEXT,
MI_NAME_DEXT)."""
from __future__ import annotations

from ..model import FileEntry, UnitGeometry
from ..tablefiles import TableFilesEngine
from .names import DATA_EXT, INDEX_EXT


def section_from_json(data: dict):
    """section.py ``section_from_json``, imported when a saved scan holds a MyISAM section."""
    from .section import section_from_json as read
    return read(data)


def analyze(dataset, files, ctx):
    """scan.py ``analyze``, imported when a scan holds MyISAM files."""
    from .scan import analyze as run
    run(dataset, files, ctx)


def table_info(entries):
    """scan.py ``table_info``, imported when a saved scan holds MyISAM tables."""
    from .scan import table_info as info
    return info(entries)

BLOCKS_PER_ROW = 16


class Myisam(TableFilesEngine):
    name = "myisam"
    label = "MyISAM"
    roles = ("table_data", "table_index")
    claim_order = 41
    table_exts = ((DATA_EXT, "table_data"), (INDEX_EXT, "table_index"))
    analyze_files = staticmethod(analyze)
    read_section = staticmethod(section_from_json)
    table_info = staticmethod(table_info)

    def unit_geometry(self, entry: FileEntry):
        """Index files: key blocks (and the header) in file order; data files: rows or blocks."""
        if entry.units is None or not len(entry.units):
            return None
        sizes = set(int(s) for s in entry.units["stored"][:-1]) if len(entry.units) > 1 else set()
        size = sizes.pop() if len(sizes) == 1 else 0
        if entry.role == "table_index":
            return UnitGeometry(size, size, BLOCKS_PER_ROW, "key block", "row",
                                tree_kind_names=("KEY_LEAF", "KEY_NODE"),
                                modes=(("type", "Block type"), ("index", "Key"), ("level", "B-tree level"),
                                       ("fill", "Fill ratio"), ("allocation", "Allocation (holes)")))
        return UnitGeometry(size, size, BLOCKS_PER_ROW * 2, "row block", "row", tree_kind_names=(),
                            modes=(("type", "Block type"), ("fill", "Fill ratio"),
                                   ("allocation", "Allocation (holes)")))

    def inspect_unit(self, entry, i, unit=None):
        from .inspect import inspect_unit
        return inspect_unit(entry, i, unit)


ENGINE = Myisam()

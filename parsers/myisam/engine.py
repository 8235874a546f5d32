"""MyISAM behind the engine protocol (parsers/engine.py): ``<table>.MYI`` (state header
and key blocks) and ``<table>.MYD`` (rows), named so by storage/myisam (MI_NAME_IEXT,
MI_NAME_DEXT)."""
from __future__ import annotations

from ..engine import Engine
from ..model import FileEntry, UnitGeometry
from .scan import DATA_EXT, INDEX_EXT, table_info, table_of
from .section import section_from_json

BLOCKS_PER_ROW = 16


class Myisam(Engine):
    name = "myisam"
    label = "MyISAM"
    roles = ("table_data", "table_index")
    claim_order = 41

    def claim_name(self, rel, state):
        if rel.endswith(DATA_EXT):
            return "table_data"
        if rel.endswith(INDEX_EXT):
            return "table_index"
        return None

    def analyze(self, dataset, files, ctx):
        from .scan import analyze
        analyze(dataset, files, ctx)

    def section_from_json(self, data):
        return section_from_json(data) if isinstance(data, dict) else data

    def place(self, entry: FileEntry):
        db, table = table_of(entry)
        return entry.database or db, entry.table or table, None

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

    def restore(self, dataset):
        for t in dataset.tables:
            if t.engine == self.name:
                t.info = table_info([e for e in dataset.files if e.path in t.files])


ENGINE = Myisam()

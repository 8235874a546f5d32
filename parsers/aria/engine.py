"""Aria behind the engine protocol (parsers/engine.py): ``<table>.MAI`` (state and
index pages), ``<table>.MAD`` (rows), named so by storage/maria (MARIA_NAME_IEXT,
MARIA_NAME_DEXT), and the engine's log ``aria_log.NNNNNNNN`` and ``aria_log_control``
(ma_loghandler.c, ma_control_file.c)."""
from __future__ import annotations

import posixpath

from ..model import FileEntry, UnitGeometry
from ..tablefiles import TableFilesEngine
from .names import CONTROL_NAME, DATA_EXT, INDEX_EXT, LOG_NAME


def section_from_json(data: dict):
    """section.py ``section_from_json``, imported when a saved scan holds an Aria section."""
    from .section import section_from_json as read
    return read(data)


def analyze(dataset, files, ctx):
    """scan.py ``analyze``, imported when a scan holds Aria files."""
    from .scan import analyze as run
    run(dataset, files, ctx)


def table_info(entries):
    """scan.py ``table_info``, imported when a saved scan holds Aria tables."""
    from .scan import table_info as info
    return info(entries)

PAGES_PER_ROW = 16


class Aria(TableFilesEngine):
    name = "aria"
    label = "Aria"
    roles = ("table_data", "table_index", "redo_log", "engine_environment")
    claim_order = 42
    table_exts = ((DATA_EXT, "table_data"), (INDEX_EXT, "table_index"))
    analyze_files = staticmethod(analyze)
    read_section = staticmethod(section_from_json)
    table_info = staticmethod(table_info)

    def claim_name(self, rel, state):
        role = super().claim_name(rel, state)
        if role:
            return role
        base = posixpath.basename(rel)
        if base == CONTROL_NAME:
            return "engine_environment"
        if LOG_NAME.match(base):
            return "redo_log"
        return None

    def place(self, entry: FileEntry):
        if entry.role in ("redo_log", "engine_environment"):
            return "(engine files)", None, None
        return super().place(entry)

    def unit_geometry(self, entry: FileEntry):
        """Pages of ``block_size`` (index files: the header first, as one page when keystart
        is one block); Dynamic/Fixed data files: their blocks or rows in file order."""
        if entry.units is None or not len(entry.units) or entry.role not in ("table_data", "table_index"):
            return None
        sizes = set(int(s) for s in entry.units["stored"][:-1]) if len(entry.units) > 1 else \
            {int(entry.units["stored"][0])}
        size = sizes.pop() if len(sizes) == 1 else 0
        if entry.role == "table_index":
            return UnitGeometry(size, size, PAGES_PER_ROW, "page", "row", tree_kind_names=("KEY_LEAF", "KEY_NODE"),
                                modes=(("type", "Page type"), ("index", "Key"), ("fill", "Fill ratio"),
                                       ("lsn", "LSN age"), ("allocation", "Allocation (holes)"),
                                       ("checksum", "Checksum")))
        sec = entry.sections.get("aria") or {}
        if sec.get("pages") is not None:
            return UnitGeometry(size, size, PAGES_PER_ROW, "page", "row", tree_kind_names=(),
                                modes=(("type", "Page type"), ("fill", "Fill ratio"), ("lsn", "LSN age"),
                                       ("allocation", "Allocation (holes)"), ("checksum", "Checksum")))
        return UnitGeometry(size, size, PAGES_PER_ROW * 2, "row block", "row", tree_kind_names=(),
                            modes=(("type", "Block type"), ("fill", "Fill ratio"),
                                   ("allocation", "Allocation (holes)")))

    def inspect_unit(self, entry, i, unit=None):
        from .inspect import inspect_unit
        return inspect_unit(entry, i, unit)


ENGINE = Aria()

"""Engines whose tables are files named ``<database>/<table>.<EXT>``: the server's
table-per-file engines (MyISAM, Aria, CSV, ARCHIVE; each handler's ``bas_ext()``,
sql/handler.h).  The database and table of such a file, and an engine base that
claims files by their extensions and places them by their folder and stem."""
from __future__ import annotations

import os
import posixpath
from typing import Any, Callable

from .engine import Engine
from .model import FileEntry


def table_of(entry: FileEntry) -> tuple[str, str]:
    """(database, table) of a table file: its folder (the data dir's database folder, also
    when that folder itself was scanned) and its stem.  Table names stay file-name encoded
    as the server writes them (``@002d`` for ``-``)."""
    folder = posixpath.dirname(entry.path) or os.path.dirname(entry.abspath)
    return os.path.basename(folder) or "(files)", posixpath.basename(entry.path).rsplit(".", 1)[0]


class TableFilesEngine(Engine):
    """An engine of ``<table>.<EXT>`` files: claims by extension, places by folder and stem,
    reads through its scan module's ``analyze`` and rebuilds saved sections with its
    ``section_from_json``; with ``table_info`` set, a saved scan's tables get their figures
    again from their files."""

    #: (extension, role) of the engine's table files
    table_exts: tuple[tuple[str, str], ...] = ()
    #: the scan module's ``analyze(dataset, files, ctx)``
    analyze_files: Callable[..., None] = staticmethod(lambda dataset, files, ctx: None)
    #: the section module's ``section_from_json(dict)``
    read_section: Callable[[dict], Any] | None = None
    #: the scan module's ``table_info(entries) -> dict`` (None: :meth:`restore` does nothing)
    table_info: Callable[[list[FileEntry]], dict] | None = None

    def claim_name(self, rel, state):
        for ext, role in self.table_exts:
            if rel.endswith(ext):
                return role
        return None

    def analyze(self, dataset, files, ctx):
        self.analyze_files(dataset, files, ctx)

    def section_from_json(self, data):
        return self.read_section(data) if self.read_section is not None and isinstance(data, dict) else data

    def place(self, entry: FileEntry):
        db, table = table_of(entry)
        return entry.database or db, entry.table or table, None

    def restore(self, dataset):
        if self.table_info is None:
            return
        for t in dataset.tables:
            if t.engine == self.name:
                t.info = self.table_info([e for e in dataset.files if e.path in t.files])

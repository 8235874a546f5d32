"""CSV engine entry point: ``analyze(dataset, files, ctx)`` reads every ``.CSM``
meta file and counts the rows of every ``.CSV`` data file; files of one table
(same folder and stem) make one table, whose figures set the engine's own
count (the meta file's) beside the rows really in the data file."""
from __future__ import annotations


import numpy as np

from ..fileio import FileReadError, ReadOnlyFile
from ..model import Dataset, FileEntry, ScanContext, UnitFacts
from ..tablefiles import table_of
from .data import count_rows, piece_units
from .section import CsvDataSection, CsvMetaSection
from .meta import META_BUFFER_SIZE, TINA_CHECK_HEADER, TINA_VERSION, MetaError, read_meta

from .names import DATA_EXT, META_EXT
#: kinds of the data file's pieces (csv/data.py piece_units)
PIECE_KINDS = {0: "rows", 1: "row cut short"}


def _read_meta(entry: FileEntry) -> CsvMetaSection | None:
    try:
        with ReadOnlyFile(entry.abspath) as f:
            buf = f.pread(0, META_BUFFER_SIZE)
    except FileReadError as e:
        entry.add_error(str(e).split(": ", 1)[-1])
        return None
    try:
        m = read_meta(buf)
    except MetaError as e:
        entry.add_error(str(e), e.offset)
        return None
    if not m.header_ok:
        entry.add_error(f"TINA_CHECK_HEADER is {m.check_header}, not {TINA_CHECK_HEADER}: the engine calls "
                        f"the table crashed", 0)
    if m.version != TINA_VERSION:
        entry.warnings.append(f"{entry.path} @ offset 1: meta file version {m.version} (this reader knows "
                              f"{TINA_VERSION})")
    if m.dirty:
        entry.warnings.append(f"{entry.path} @ offset 34: dirty flag set: the table was open for writing or "
                              f"crashed; the server repairs it at its next open")
    entry.database, entry.table = table_of(entry)
    return CsvMetaSection(version=m.version, rows=int(m.rows), dirty=m.dirty, header_ok=m.header_ok, role="meta")


def _read_data(entry: FileEntry, ctx: ScanContext) -> CsvDataSection | None:
    try:
        with ReadOnlyFile(entry.abspath) as f:
            d = count_rows(f, ctx.check)
            changed = f.changed()
    except FileReadError as e:
        entry.add_error(str(e).split(": ", 1)[-1])
        return None
    if changed:
        entry.warnings.append(changed)
    if d.trailing_bytes:
        entry.add_error(f"{d.trailing_bytes} bytes after the last line end: a row cut short (the engine "
                        f"marks such a table crashed)", d.data_bytes)
    entry.database, entry.table = table_of(entry)
    if d.piece_rows is not None and len(d.piece_rows):
        entry.units = piece_units(d.data_bytes + d.trailing_bytes, d.data_bytes, d.piece_rows)
        entry.kind_names = dict(PIECE_KINDS)
        entry.unit_facts = UnitFacts(records=d.piece_rows.astype(np.int64))
    return CsvDataSection(rows=d.rows, row_bytes=d.data_bytes, trailing_bytes=d.trailing_bytes,
                          crlf_rows=d.crlf_rows, role="data")


def analyze(dataset: Dataset, files: list[FileEntry], ctx: ScanContext) -> None:
    """Read every CSV engine file handed over by the scan."""
    total = len(files)
    for k, entry in enumerate(files):
        ctx.check()
        ctx.report(k, total, f"reading {entry.path}")
        sec = _read_meta(entry) if entry.path.endswith(META_EXT) else _read_data(entry, ctx)
        if sec is not None:
            entry.sections["csv"] = sec
    groups: dict[tuple[str, str], list[FileEntry]] = {}
    for entry in files:
        groups.setdefault(table_of(entry), []).append(entry)
    for (db, name), entries in sorted(groups.items()):
        t = dataset.table("csv", db, name)
        t.files = [e.path for e in entries]
        meta = next((e.sections.get("csv") for e in entries if e.path.endswith(META_EXT)), None) or {}
        data = next((e.sections.get("csv") for e in entries if e.path.endswith(DATA_EXT)), None) or {}
        t.info = {
            "rows": data.get("rows"),                       # in the data file
            "rows_recorded": meta.get("rows"),              # the meta file's count (SHOW TABLE STATUS Rows)
            "data_bytes": sum(e.apparent_bytes for e in entries if e.path.endswith(DATA_EXT)),
            "allocated_bytes": sum(e.allocated_bytes for e in entries),
            "dirty": meta.get("dirty"),
        }
    ctx.report(total, total, "csv done")

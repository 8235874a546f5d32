"""ARCHIVE engine entry point: ``analyze(dataset, files, ctx)`` reads each ``.ARZ``
header (header.py), inflates its data region span by span (stream.py) into the
shared unit array, and makes one table per file with the figures the server
reports (ha_archive.cc ``info``: ``stats.records`` = the header's rows,
``stats.data_file_length`` = the file's st_size) beside what is really there."""
from __future__ import annotations

import os

import numpy as np

from ..fileio import FileReadError, ReadOnlyFile
from ..model import UNIT_COMPRESSED, Dataset, FileEntry, ScanContext, UnitFacts, empty_units
from ..tablefiles import table_of
from .header import AZ_HEADER_BYTES, AzHeader, HeaderError, read_header
from .section import ArchiveSection
from .stream import Walk, walk
from .names import DATA_EXT, FRM_EXT
#: unit kinds (FileEntry.kind_names)
KIND_HEADER = 1          # azio header, .frm copy, comment: [0, start)
KIND_SPAN = 2            # AZ_BUFSIZE_READ span of the deflate data
KIND_NAMES = {KIND_HEADER: "AZ_HEADER", KIND_SPAN: "AZ_DATA_SPAN"}


def _frm_matches(entry: FileEntry, f: ReadOnlyFile, h: AzHeader) -> bool | None:
    """Whether the header's .frm copy equals ``<table>.frm`` beside the file (None: no such file)."""
    frm = entry.abspath[: -len(DATA_EXT)] + FRM_EXT
    if not h.frm_length or not os.path.isfile(frm):
        return None
    try:
        with ReadOnlyFile(frm) as g:
            return g.size == h.frm_length and g.pread(0, g.size) == f.pread(h.frm_start_pos, h.frm_length)
    except FileReadError:
        return None


def _units(h: AzHeader, w: Walk, table: str) -> tuple[np.ndarray, UnitFacts]:
    n = len(w.unit_offsets)
    units = empty_units(n + 1)
    units[0] = (0, h.start, h.start, KIND_HEADER, 0, 0, np.nan, 0)
    units["offset"][1:] = w.unit_offsets
    units["stored"][1:] = w.unit_stored
    units["logical"][1:] = np.minimum(np.array(w.unit_logical, dtype=np.int64), 0xFFFFFFFF)
    units["kind"][1:] = KIND_SPAN
    units["flags"][1:] = UNIT_COMPRESSED
    units["owner"][:] = 0
    records = np.zeros(n + 1, dtype=np.int64)
    records[1:] = w.unit_rows
    return units, UnitFacts(records=records)


def read_file(entry: FileEntry, ctx: ScanContext) -> ArchiveSection | None:
    """Read one ``.ARZ``: its units, section and errors."""
    entry.database, entry.table = table_of(entry)
    try:
        with ReadOnlyFile(entry.abspath) as f:
            try:
                h = read_header(f.pread(0, AZ_HEADER_BYTES), f.size)
            except HeaderError as e:
                entry.add_error(str(e), e.offset)
                return None
            w = walk(f, h, ctx.check)
            matches = _frm_matches(entry, f, h)
            changed = f.changed()
    except FileReadError as e:
        entry.add_error(str(e).split(": ", 1)[-1])
        return None
    if changed:
        entry.warnings.append(changed)
    for err in (w.error, w.row_error):
        if err is not None:
            msg = str(err) if err.decoded is None else f"{err} (decoded offset {err.decoded})"
            entry.add_error(msg, err.offset)
    if h.state != "clean":
        entry.warnings.append(f"{entry.path} @ offset 77: header state {h.state}: the table was open for writing "
                              f"or crashed; the server checks it at its next open")
    complete = w.error is None and w.row_error is None
    if complete and w.rows != h.rows:
        entry.warnings.append(f"{entry.path} @ offset 29: the header records {h.rows} rows, the row stream holds "
                              f"{w.rows}")
    if matches is False:
        entry.warnings.append(f"{entry.path} @ offset {h.frm_start_pos}: the .frm copy differs from "
                              f"{table_of(entry)[1]}{FRM_EXT} beside it")
    entry.units, entry.unit_facts = _units(h, w, entry.table)
    entry.kind_names = dict(KIND_NAMES)
    entry.owner_names = {0: f"{entry.database}.{entry.table}"}
    entry.detail["azio_header"] = h
    # where the first row starting in each span begins (parser-internal: what-if row models)
    entry.detail["span_first_row"] = np.array(w.unit_first_row, dtype=np.int64)
    return ArchiveSection(
        version=h.version, minor_version=h.minor_version, block_size=h.block_size, state=h.state,
        header_rows=h.rows, auto_increment=h.auto_increment, forced_flushes=h.forced_flushes,
        check_point=h.check_point, header_shortest_row=h.shortest_row, header_longest_row=h.longest_row,
        frm_offset=h.frm_start_pos, frm_length=h.frm_length, frm_matches_file=matches,
        comment_offset=h.comment_start_pos, comment_length=h.comment_length, data_start=h.start,
        compressed_bytes=w.compressed_bytes, uncompressed_bytes=w.uncompressed_bytes, members=len(w.members),
        rows=w.rows, rows_match_header=w.rows == h.rows, shortest_row=w.shortest_row, longest_row=w.longest_row,
        spans=len(w.unit_offsets), complete=complete)


def table_info(entry: FileEntry, sec) -> dict:
    """A table's figures: the server's (information_schema) beside the file's."""
    sec = sec or {}
    return {
        "rows": sec.get("rows"),                              # in the row stream
        "rows_recorded": sec.get("header_rows"),              # the header: I_S TABLE_ROWS
        "data_bytes": int(entry.apparent_bytes),              # st_size: I_S DATA_LENGTH
        "allocated_bytes": int(entry.allocated_bytes),        # the real footprint
        "compressed_bytes": sec.get("compressed_bytes"),
        "uncompressed_bytes": sec.get("uncompressed_bytes"),  # the row stream, rows with their lengths
        "information_schema": {"table_rows": sec.get("header_rows"), "data_length": int(entry.apparent_bytes),
                               "index_length": 0, "data_free": 0},
    }


def analyze(dataset: Dataset, files: list[FileEntry], ctx: ScanContext) -> None:
    """Read every ARCHIVE data file handed over by the scan."""
    total = len(files)
    for k, entry in enumerate(files):
        ctx.check()
        ctx.report(k, total, f"reading {entry.path}")
        sec = read_file(entry, ctx)
        if sec is not None:
            entry.sections["archive"] = sec
        db, name = table_of(entry)
        t = dataset.table("archive", db, name)
        t.files = [entry.path]
        t.info = table_info(entry, sec)
    ctx.report(total, total, "archive done")

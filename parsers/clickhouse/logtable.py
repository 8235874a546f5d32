"""One Log-family table folder (TinyLog, Log, StripeLog): its files, blocks,
marks and the sizes the engine reports (src/Storages/StorageLog.cpp — TinyLog
is StorageLog without a marks file since 21.12, ``use_marks_file`` —,
src/Storages/StorageStripeLog.cpp).

* TinyLog / Log: one ``<stream>.bin`` per stream of every column (the column's
  codec; a stream shared by Nested columns once), ``sizes.json``, and for Log
  ``__marks.mrk`` (:mod:`.logmarks`).  A String has one stream (no ``.size``).
* StripeLog: every column in ``data.bin`` (Native blocks through one
  CompressedWriteBuffer with the default codec), ``index.mrk``
  (:mod:`.nativeindex`), ``sizes.json``.

What the engine reports (``system.columns`` / ``system.tables``):
Log and TinyLog give each column ``data_compressed_bytes`` = the sizes.json
sizes of its files (StorageLog::getColumnSizes), ``data_uncompressed_bytes`` and
``marks_bytes`` 0; StripeLog gives 0 for all three (no getColumnSizes).
``total_bytes`` is the sum of the sizes.json entries (FileChecker::getTotalSize);
``total_rows`` is the last mark's row count (Log) or the sum of the index
blocks' rows (StripeLog) once the server has loaded them (after the first read
or write; NULL before), and NULL for a non-empty TinyLog.

What the engine does not report, computed here from the block walk
(25-byte headers only, :func:`.part.walk_file_blocks`): the uncompressed bytes of
every column, the real compressed bytes per StripeLog column (its blocks
between its index mark and the next), the blocks and codecs, and a TinyLog's
row count from its first stream when that stream's values have a fixed width.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

import numpy as np

from ..fileio import FileReadError
from .blocks import BlockTable, read_stream
from .columns import Column, ColumnsError, parse_type
from .filechecker import SIZES_FILE_NAME, FileCheckerError, FileSizes, read_sizes_json
from .logfiles import is_log_table_dir  # noqa: F401 (detection's, here for the readers)
from .logmarks import MARKS_FILE_NAME, LogMarksError, read_log_marks
from .nativeindex import DATA_FILE_NAME, INDEX_FILE_NAME, IndexBlock, NativeIndexError, read_native_index
from .part import Problem, _read_small, walk_file_blocks
from .streams import derive_streams, escape_for_file_name, unescape_for_file_name

LOG_ENGINES = ("TinyLog", "Log", "StripeLog")
#: the marks and index files are small; larger ones are read up to this
LOG_META_LIMIT = 256 << 20
#: value widths of fixed-width types (src/DataTypes/*: sizeof the column's value)
FIXED_WIDTH = {
    "UInt8": 1, "Int8": 1, "Bool": 1, "Enum8": 1, "UInt16": 2, "Int16": 2, "Enum16": 2, "Date": 2,
    "UInt32": 4, "Int32": 4, "Float32": 4, "DateTime": 4, "Date32": 4, "IPv4": 4, "Decimal32": 4,
    "UInt64": 8, "Int64": 8, "Float64": 8, "DateTime64": 8, "Decimal64": 8,
    "UInt128": 16, "Int128": 16, "UUID": 16, "IPv6": 16, "Decimal128": 16,
    "UInt256": 32, "Int256": 32, "Decimal256": 32,
}
_SUFFIX = re.compile(r"\.(null|dict|size\d*|sparse\.idx)$")


@dataclass
class LogFile:
    """One data file of the table."""

    name: str                          # file name, e.g. "n.null.bin"
    stream: str                        # stream name (escaped), e.g. "n.null"
    column: str | None                 # owning column, None when not known
    size: int | None = None            # real size, None when missing
    recorded_size: int | None = None   # sizes.json
    blocks: BlockTable | None = None
    marks: np.ndarray | None = None    # Log: (rows, offset) per mark


@dataclass
class LogColumn:
    """One column: the engine's figures and the computed ones."""

    name: str
    type: str
    files: list[str] = field(default_factory=list)
    engine_compressed_bytes: int = 0   # system.columns.data_compressed_bytes
    compressed_bytes: int = 0          # computed: stored bytes of its blocks
    uncompressed_bytes: int = 0        # computed: decompressed bytes of its blocks
    blocks: int = 0
    codecs: dict[str, int] = field(default_factory=dict)


@dataclass
class LogTable:
    """A Log-family table folder as read."""

    engine: str
    abspath: str
    files: dict[str, LogFile] = field(default_factory=dict)       # data files by name, in stream order
    columns: list[LogColumn] = field(default_factory=list)
    sizes: FileSizes | None = None
    marks: np.ndarray | None = None          # Log: (marks, data files)
    index: list[IndexBlock] | None = None    # StripeLog
    data_owners: np.ndarray | None = None    # StripeLog: column index per data.bin block, -1 block header
    index_blocks: BlockTable | None = None   # StripeLog: index.mrk's own blocks
    total_rows: int | None = None            # as system.tables once loaded
    computed_rows: int | None = None         # TinyLog: from the first stream
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)         # limits of what could be read, not damage

    @property
    def total_bytes(self) -> int | None:
        """system.tables.total_bytes: the sizes.json total."""
        return self.sizes.total if self.sizes is not None else None

    def problem(self, file: str | None, message: str, offset: int | None = None) -> None:
        self.problems.append(Problem(file, message, offset))


def guess_engine(names: set[str]) -> str:
    """The engine of a folder whose DDL is not at hand, from its files."""
    if INDEX_FILE_NAME in names or (DATA_FILE_NAME in names and MARKS_FILE_NAME not in names
                                    and not any(n.endswith(".bin") and n != DATA_FILE_NAME for n in names)):
        return "StripeLog"
    return "Log" if MARKS_FILE_NAME in names else "TinyLog"


def log_streams(col: Column) -> list[str]:
    """The streams of a column with its default serialization, as StorageLog
    enumerates them (a String is one stream: no ``.size``)."""
    names = derive_streams(col)
    have = set(names)
    return [s for s in names if not (s.endswith(".size") and s[:-5] in have)]


def _stream_width(stream: str, col: Column | None) -> int | None:
    """Bytes per row of a stream, when fixed (``.null``: 1, ``.size<N>``: 8, the
    main stream of a fixed-width type)."""
    if stream.endswith(".null"):
        return 1
    if re.search(r"\.size\d+$", stream):
        return 8
    if col is not None and stream == escape_for_file_name(col.name):
        try:
            t = parse_type(col.type)
        except ColumnsError:
            return None
        return FIXED_WIDTH.get(t.name)
    return None


def _walk(t: LogTable, f: LogFile, verify: bool) -> None:
    path = os.path.join(t.abspath, f.name)
    try:
        f.blocks, f.size = walk_file_blocks(path, verify)
    except (FileReadError, OSError) as e:
        t.problem(f.name, str(e).split(": ", 1)[-1])
        return
    for msg, off in f.blocks.errors:
        t.problem(f.name, msg, off)


def read_log_table(abspath: str, names: set[str], engine: str | None = None,
                   columns: list[Column] | None = None, verify: bool = False) -> LogTable:
    """Reads one Log-family table folder: ``names`` are its entries, ``engine``
    and ``columns`` from the table's DDL when known."""
    t = LogTable(engine if engine in LOG_ENGINES else guess_engine(names), abspath)
    if SIZES_FILE_NAME in names:
        try:
            t.sizes = read_sizes_json(_read_small(os.path.join(abspath, SIZES_FILE_NAME)))
        except FileCheckerError as e:
            t.problem(SIZES_FILE_NAME, str(e), e.offset)
        except (FileReadError, OSError) as e:
            t.problem(SIZES_FILE_NAME, str(e).split(": ", 1)[-1])
    else:
        t.problem(None, "sizes.json is missing: the engine has no recorded file sizes (total_bytes unknown)")
    if t.engine == "StripeLog":
        _read_stripe(t, names, columns, verify)
    else:
        _read_log(t, names, columns, verify)
    _check_recorded_sizes(t, names)
    return t


def _check_recorded_sizes(t: LogTable, names: set[str]) -> None:
    if t.sizes is None:
        return
    for name, rec in t.sizes.sizes.items():
        base = os.path.basename(name)
        path = os.path.join(t.abspath, base)
        if base not in names:
            if rec:
                t.problem(SIZES_FILE_NAME, f"{base}: recorded {rec} bytes, the file is missing")
            continue
        try:
            real = os.path.getsize(path)
        except OSError:
            continue
        if real > rec:
            t.problem(base, f"{real} bytes, sizes.json records {rec}: the engine truncates it to {rec} when it "
                            f"attaches the table (FileChecker::repair); the last {real - rec} bytes are an "
                            f"unfinished write")
        elif real < rec:
            t.problem(base, f"{real} bytes, sizes.json records {rec}: the file is shorter than the engine "
                            f"recorded (CHECK TABLE fails)")


def _read_log(t: LogTable, names: set[str], columns: list[Column] | None, verify: bool) -> None:
    recorded = {os.path.basename(n): s for n, s in (t.sizes.sizes.items() if t.sizes else ())}
    present = {n for n in names if n.endswith(".bin")} | {n for n in recorded if n.endswith(".bin")}
    cols: dict[str, LogColumn] = {}
    col_defs: dict[str, Column] = {}
    if columns:
        for c in columns:
            lc = cols[c.name] = LogColumn(c.name, c.type)
            col_defs[c.name] = c
            try:
                streams = log_streams(c)
            except ColumnsError as e:
                t.problem(None, f"column {c.name}: {e}")
                streams = [escape_for_file_name(c.name)]
            for s in streams:
                fname = s + ".bin"
                if fname not in t.files:        # a Nested offsets stream is shared: first column only
                    t.files[fname] = LogFile(fname, s, c.name)
                lc.files.append(fname)
        for n in sorted(present - set(t.files)):
            t.problem(n, "data file of no column of the table's DDL")
    else:
        for n in sorted(present):
            stem = n[:-4]
            col = unescape_for_file_name(_SUFFIX.sub("", stem)).split(".", 1)[0]
            t.files[n] = LogFile(n, stem, col)
            cols.setdefault(col, LogColumn(col, "")).files.append(n)
    for f in t.files.values():
        f.recorded_size = recorded.get(f.name)
        if f.name in names:
            _walk(t, f, verify)
    t.columns = list(cols.values())
    if t.engine == "Log":
        _read_marks(t, names, bool(columns))
    first = next(iter(t.files.values()), None)
    if t.engine == "Log":
        if t.marks is not None and first is not None:
            t.total_rows = int(t.marks[-1, 0]["rows"]) if len(t.marks) else 0
    elif first is not None:       # TinyLog: the engine gives NULL unless the table is empty
        if not (t.sizes.total if t.sizes else 0):
            t.total_rows = 0
        width = _stream_width(first.stream, col_defs.get(first.column) if first.column else None)
        if width and first.blocks is not None and not first.blocks.errors:
            t.computed_rows = first.blocks.uncompressed_bytes // width
    _column_figures(t)


def _read_marks(t: LogTable, names: set[str], ordered: bool) -> None:
    if MARKS_FILE_NAME not in names:
        if t.sizes is not None and t.sizes.sizes.get(MARKS_FILE_NAME):
            t.problem(None, f"{MARKS_FILE_NAME} is missing (sizes.json records "
                            f"{t.sizes.sizes[MARKS_FILE_NAME]} bytes)")
        return
    files = list(t.files.values())
    try:
        data = _read_small(os.path.join(t.abspath, MARKS_FILE_NAME), LOG_META_LIMIT)
        marks = read_log_marks(data, len(files))
    except (FileReadError, OSError) as e:
        t.problem(MARKS_FILE_NAME, str(e).split(": ", 1)[-1])
        return
    except LogMarksError as e:
        t.problem(MARKS_FILE_NAME, str(e))
        return
    if not ordered:
        order = _match_marks(marks, files)
        if order is None:
            t.notes.append("without the table's DDL (its .sql) the columns of __marks.mrk could not be matched "
                           "to the data files (their offsets fit several files): marks and total_rows not given")
            return
        marks = marks[:, order]
    t.marks = marks
    for j, f in enumerate(files):
        f.marks = marks[:, j]
        _check_marks(t, f, j)


def _match_marks(marks: np.ndarray, files: list[LogFile]) -> list[int] | None:
    """For each file, the marks column whose offsets are all block starts of it
    (or its end): the order of the data files when the DDL is not at hand."""
    starts = []
    for f in files:
        s = set(f.blocks.offsets.tolist()) if f.blocks is not None else set()
        if f.size is not None:
            s.add(f.size)
        starts.append(s)
    order: list[int] = []
    used: set[int] = set()
    for j in range(len(files)):
        fits = [k for k in range(marks.shape[1]) if k not in used
                and all(int(o) in starts[j] for o in marks[:, k]["offset"])]
        if len(fits) != 1:
            return None
        order.append(fits[0])
        used.add(fits[0])
    return order


def _check_marks(t: LogTable, f: LogFile, j: int) -> None:
    offs = f.marks["offset"].astype(np.int64)
    rows = f.marks["rows"].astype(np.int64)
    if len(offs) > 1 and (np.any(np.diff(offs) < 0) or np.any(np.diff(rows) < 0)):
        t.problem(MARKS_FILE_NAME, f"marks of {f.name} (data file {j}) go backwards")
        return
    if f.blocks is None or f.size is None:
        return
    starts = set(f.blocks.offsets.tolist()) | {f.size}
    bad = [int(o) for o in offs if int(o) not in starts]
    if bad:
        t.problem(MARKS_FILE_NAME, f"marks of {f.name} (data file {j}) point inside a compressed block or past "
                                   f"the end: offset {bad[0]} (file of {f.size} bytes)",
                  j * 16 + 8 + int(np.flatnonzero(offs == bad[0])[0]) * 16 * len(t.files))


def _column_figures(t: LogTable) -> None:
    for c in t.columns:
        for fname in c.files:
            f = t.files.get(fname)
            if f is None or f.column != c.name:
                continue          # a shared Nested offsets file counts for its first column
            c.engine_compressed_bytes += f.recorded_size or 0
            if f.blocks is not None:
                c.compressed_bytes += f.blocks.compressed_bytes
                c.uncompressed_bytes += f.blocks.uncompressed_bytes
                c.blocks += len(f.blocks)
                for k, v in f.blocks.codec_counts().items():
                    c.codecs[k] = c.codecs.get(k, 0) + v


def _read_stripe(t: LogTable, names: set[str], columns: list[Column] | None, verify: bool) -> None:
    data = LogFile(DATA_FILE_NAME, "data", None)
    t.files[DATA_FILE_NAME] = data
    if t.sizes is not None:
        data.recorded_size = t.sizes.sizes.get(DATA_FILE_NAME)
    if DATA_FILE_NAME in names:
        _walk(t, data, verify)
    elif data.recorded_size:
        t.problem(None, f"data.bin is missing (sizes.json records {data.recorded_size} bytes)")
    if INDEX_FILE_NAME in names:
        path = os.path.join(t.abspath, INDEX_FILE_NAME)
        try:
            t.index_blocks, _ = walk_file_blocks(path, verify)
            raw = _read_small(path, LOG_META_LIMIT)
            t.index = read_native_index(read_stream(raw, max_output=LOG_META_LIMIT, verify=verify))
        except (FileReadError, OSError) as e:
            t.problem(INDEX_FILE_NAME, str(e).split(": ", 1)[-1])
        except NativeIndexError as e:
            t.problem(INDEX_FILE_NAME, f"index (decompressed) does not parse: {e}", None)
        except Exception as e:         # noqa: BLE001 -- BlockError of a damaged index block
            t.problem(INDEX_FILE_NAME, str(e), getattr(e, "offset", None))
    if columns:
        t.columns = [LogColumn(c.name, c.type, [DATA_FILE_NAME]) for c in columns]
    else:
        seen: dict[str, LogColumn] = {}
        for b in t.index or []:
            for ic in b.columns:
                seen.setdefault(ic.name, LogColumn(ic.name, ic.type, [DATA_FILE_NAME]))
        t.columns = list(seen.values())
    if t.index is not None:
        t.total_rows = sum(b.num_rows for b in t.index)
    if data.blocks is None or t.index is None:
        return
    col_index = {c.name: i for i, c in enumerate(t.columns)}
    starts = data.blocks.offsets.astype(np.int64)
    mark_off: list[int] = []
    mark_col: list[int] = []
    for b in t.index:
        for ic in b.columns:
            if ic.name not in col_index:
                col_index[ic.name] = len(t.columns)
                t.columns.append(LogColumn(ic.name, ic.type, [DATA_FILE_NAME]))
                t.problem(INDEX_FILE_NAME, f"column {ic.name} of the index is not in the table's DDL")
            mark_off.append(ic.offset_in_compressed_file)
            mark_col.append(col_index[ic.name])
    mo = np.array(mark_off, dtype=np.int64)
    if len(mo) and (np.any(np.diff(mo) < 0) or not np.all(np.isin(mo, np.append(starts, data.size or 0)))):
        bad = mo[~np.isin(mo, np.append(starts, data.size or 0))]
        t.problem(INDEX_FILE_NAME, "index marks go backwards or point inside a compressed block of data.bin"
                  + (f": offset {int(bad[0])}" if len(bad) else ""))
    order = np.argsort(mo, kind="stable")
    mo_sorted, mc_sorted = mo[order], np.array(mark_col, dtype=np.int64)[order]
    k = np.searchsorted(mo_sorted, starts, side="right") - 1
    owners = np.where(k >= 0, mc_sorted[np.clip(k, 0, None)] if len(mo_sorted) else -1, -1).astype(np.int32)
    t.data_owners = owners
    stored = data.blocks.stored.astype(np.int64)
    dec = data.blocks.decompressed.astype(np.int64)
    names_of = data.blocks.chain_names()
    for i, c in enumerate(t.columns):
        sel = owners == i
        c.compressed_bytes = int(stored[sel].sum())
        c.uncompressed_bytes = int(dec[sel].sum())
        c.blocks = int(sel.sum())
        if c.blocks:
            ids = np.bincount(data.blocks.chain_ids[sel], minlength=len(names_of))
            for name, n in zip(names_of, ids):
                if n:
                    c.codecs[name] = c.codecs.get(name, 0) + int(n)

"""Marks files: for each granule, where its data starts in a ``.bin`` file.

Flavours (src/Storages/MergeTree/MergeTreeIndexGranularityInfo.cpp,
MergeTreeMarksLoader.cpp; fixtures/clickhouse/FORMAT_NOTES.md section 4):

=========  ==============================  =====================================
extension  part                            one mark
=========  ==============================  =====================================
.mrk       Wide, non-adaptive granularity  2 x UInt64 (offset in compressed file,
                                           offset in decompressed block)
.mrk2      Wide, adaptive                  the pair + UInt64 rows in granule
.mrk3      Compact                         a pair per column, then UInt64 rows
.mrk4      Compact, substream marks        a pair per substream, then rows
.cmrk*     any of the above                the same bytes as a compressed stream
=========  ==============================  =====================================

Adaptive marks end with a final mark of 0 rows pointing at the end of the
data; non-adaptive ``.mrk`` has no row count and no final mark.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .blocks import BlockError, read_stream

MARK_EXTENSIONS = (".mrk", ".mrk2", ".mrk3", ".mrk4", ".cmrk", ".cmrk2", ".cmrk3", ".cmrk4")
MAX_MARKS_BYTES = 512 << 20


class MarksError(Exception):
    """A marks file could not be read; ``offset`` is in the file (or decompressed bytes)."""

    def __init__(self, message: str, offset: int | None = None):
        self.offset = offset
        super().__init__(message)


@dataclass(frozen=True)
class MarksFlavour:
    """What a marks extension says about the layout."""

    extension: str
    compressed: bool
    adaptive: bool     # has a rows column
    compact: bool      # several (offset, offset) pairs per mark


def _flavour_of(ext: str) -> MarksFlavour:
    base = ext.replace("c", "", 1) if ext.startswith(".cmrk") else ext
    return MarksFlavour(ext, ext.startswith(".cmrk"), base != ".mrk", base in (".mrk3", ".mrk4"))


#: extension -> flavour (each extension is a dot and letters: the text after a name's last dot)
_FLAVOURS = {ext: _flavour_of(ext) for ext in MARK_EXTENSIONS}


def marks_flavour(filename: str) -> MarksFlavour | None:
    """Flavour of a marks file from its extension, None when it is not one."""
    dot = filename.rfind(".")
    return _FLAVOURS.get(filename[dot:]) if dot >= 0 else None


@dataclass
class Marks:
    """Decoded marks: ``offsets[mark, stream, 0|1]`` and ``rows[mark]`` (None for .mrk)."""

    flavour: MarksFlavour
    offsets: np.ndarray            # uint64, shape (marks, streams, 2)
    rows: np.ndarray | None        # uint64, shape (marks,)
    raw_bytes: int                 # decompressed size of the marks

    def __len__(self) -> int:
        return self.offsets.shape[0]

    @property
    def total_rows(self) -> int | None:
        return None if self.rows is None else int(self.rows.sum())


def read_marks(data: bytes, flavour: MarksFlavour, streams: int = 1,
               max_bytes: int = MAX_MARKS_BYTES, verify: bool = True) -> Marks:
    """Reads a whole marks file of any flavour; ``streams`` is the number of
    (offset, offset) pairs per mark for compact marks (1 for Wide)."""
    if flavour.compressed:
        try:
            raw = read_stream(data, max_bytes, verify)
        except BlockError as e:
            raise MarksError(f"compressed marks: {str(e).rsplit(' (offset', 1)[0]}", e.offset) from None
    else:
        raw = bytes(data)
    n_pairs = streams if flavour.compact else 1
    if n_pairs < 1:
        raise MarksError("compact marks need at least one stream", 0)
    words = 2 * n_pairs + (1 if flavour.adaptive else 0)
    rec = 8 * words
    if len(raw) % rec:
        good = len(raw) - len(raw) % rec
        raise MarksError(f"{len(raw)} bytes is not a whole number of {rec}-byte marks "
                         f"({'decompressed ' if flavour.compressed else ''}offset {good} starts a partial mark)",
                         good)
    arr = np.frombuffer(raw, dtype="<u8").reshape(-1, words)
    offsets = arr[:, :2 * n_pairs].reshape(-1, n_pairs, 2)
    rows = arr[:, -1].copy() if flavour.adaptive else None
    return Marks(flavour, offsets.copy(), rows, len(raw))


def check_marks(marks: Marks, rows: int | None, index_granularity: int | None,
                block_starts: np.ndarray | None = None, data_size: int | None = None) -> list[tuple[str, int | None]]:
    """Consistency of marks with the part's row count and the data file.

    Returns (message, offset in the marks bytes) problems: rows not adding up
    to count.txt (a marks file shorter than the part), a mark pointing
    outside the data file or not at a block start.
    """
    problems: list[tuple[str, int | None]] = []
    n = len(marks)
    per_mark = marks.offsets.shape[1] * 16 + (8 if marks.rows is not None else 0)
    if rows is not None:
        if marks.rows is not None:
            total = int(marks.rows.sum()) if n else 0
            if total != rows:
                problems.append((f"marks cover {total} rows in {n} marks, count.txt says {rows}",
                                 n * per_mark))
        elif index_granularity:
            need = -(-rows // index_granularity)
            if n < need:
                problems.append((f"{n} marks, {need} needed for {rows} rows at granularity "
                                 f"{index_granularity}", n * per_mark))
    if marks.rows is not None and rows and n and int(marks.rows[-1]) != 0:
        problems.append(("adaptive marks do not end with the final mark of 0 rows (file cut short?)",
                         (n - 1) * per_mark))
    if data_size is not None and n:
        starts = marks.offsets[:, :, 0]
        over = np.nonzero((starts > data_size).any(axis=1))[0]
        if len(over):
            problems.append((f"mark {int(over[0])} points past the end of the data file "
                             f"({int(starts[over[0]].max())} > {data_size})", int(over[0]) * per_mark))
        elif block_starts is not None and len(block_starts):
            valid = np.append(block_starts, np.uint64(data_size))      # sorted
            pos = np.searchsorted(valid, starts)
            ok = valid[np.minimum(pos, len(valid) - 1)] == starts
            if not ok.all():
                i = int(np.nonzero(~ok.all(axis=1))[0][0])
                problems.append((f"mark {i} does not point at a block start", i * per_mark))
    return problems

"""The CSV engine's data file ``<table>.CSV``: one row per line.  ha_tina.cc
writes each row as its fields joined by commas and ended by ``\\n``
(encode_quote; a field's own CR and LF are escaped as ``\\r`` / ``\\n``), and
reads a row up to the next line end, ``\\n``, ``\\r\\n`` or a lone ``\\r``
(find_eoln_buff).  Rows are counted by those line ends, in bounded chunks over
the read-only file (numpy, no Python loop per byte)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..fileio import ReadOnlyFile

CHUNK = 64 << 20
#: the unit map's piece of a data file (rows are text of any length: the file is drawn in
#: fixed pieces, each with the rows that end in it)
PIECE = 1 << 20
LF, CR = 10, 13


@dataclass(frozen=True)
class CsvData:
    """Rows of one data file as the engine would read them."""

    rows: int                 # complete rows (each ended by a line end)
    data_bytes: int           # bytes of those rows, line ends included
    trailing_bytes: int       # bytes after the last line end (a row cut short: the engine calls it crashed)
    crlf_rows: int            # rows ended by \r\n (written elsewhere; the engine writes \n)
    #: rows whose line end lies in each PIECE of the file
    piece_rows: np.ndarray | None = None


def count_rows(f: ReadOnlyFile, check=lambda: None) -> CsvData:
    """Count the rows of the open data file ``f``."""
    size = f.size
    rows = crlf = 0
    piece_rows = np.zeros(-(-size // PIECE), dtype=np.int64)
    last_end = 0                       # offset just past the last line end
    prev_cr = False                    # the previous chunk ended with \r
    pos = 0
    while pos < size:
        check()
        chunk = f.pread(pos, min(CHUNK, size - pos))
        if not chunk:
            break
        a = np.frombuffer(chunk, dtype=np.uint8)
        lf = np.flatnonzero(a == LF)
        cr = np.flatnonzero(a == CR)
        # a \r followed by \n ends one row with the \n; a lone \r ends a row by itself
        nxt = cr + 1
        inside = nxt < len(a)
        pair = np.zeros(len(cr), dtype=bool)
        pair[inside] = a[nxt[inside]] == LF
        lone = cr[~pair & inside]
        ends_cr = bool(len(cr)) and not inside[-1]         # a \r at the chunk's end: decided by the next byte
        first_lf_pairs = prev_cr and len(a) and a[0] == LF
        n = len(lf) + len(lone)
        np.add.at(piece_rows, (pos + lf) // PIECE, 1)
        np.add.at(piece_rows, (pos + lone) // PIECE, 1)
        if prev_cr and not first_lf_pairs:
            n += 1                                         # the previous chunk's last \r stood alone
            piece_rows[(pos - 1) // PIECE] += 1
            last_end = max(last_end, pos)
        rows += n
        crlf += int(pair.sum()) + (1 if first_lf_pairs else 0)
        ends = [int(x) for x in (lf[-1:] if len(lf) else [])] + [int(x) for x in (lone[-1:] if len(lone) else [])]
        if ends:
            last_end = max(last_end, pos + max(ends) + 1)
        prev_cr = ends_cr
        pos += len(chunk)
    if prev_cr:
        rows += 1
        piece_rows[(size - 1) // PIECE] += 1
        last_end = size
    return CsvData(rows=rows, data_bytes=last_end, trailing_bytes=size - last_end, crlf_rows=crlf,
                   piece_rows=piece_rows)


def piece_units(size: int, data_bytes: int, piece_rows: np.ndarray) -> np.ndarray:
    """The data file in PIECE-sized units (the last one shorter): kind 0 rows, 1 the bytes of
    a row cut short after the last line end (the piece that holds them)."""
    from ..model import empty_units
    n = -(-size // PIECE)
    u = empty_units(n)
    u["offset"] = np.arange(n, dtype=np.uint64) * PIECE
    lengths = np.minimum(PIECE, size - np.arange(n, dtype=np.int64) * PIECE)
    u["stored"] = lengths
    u["logical"] = lengths
    if data_bytes < size:
        u["kind"][data_bytes // PIECE:] = 1
    return u

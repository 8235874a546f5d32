"""The data region of an ``.ARZ`` file, inflated in bounded steps
(MariaDB/server storage/archive/azio.c azread, ha_archive.cc unpack_row).

From the header's ``start`` to the end of the file lie one or more *members*:
a raw deflate stream (``inflateInit2(-MAX_WBITS)``: no zlib or gzip wrapper)
followed by its crc32 and its uncompressed length mod 2^32 (azclose: two
``putLong``, little endian).  A table opened for writing again appends a new
member after the last trailer (az_open in 'w' mode starts a new deflate
stream at the end of the file); azread inflates them one after the other
(``Z_STREAM_END``: check the CRC, ``check_header``, ``inflateReset``).  A
table created and written later thus starts with an empty member (2 bytes
of deflate and an 8-byte trailer of zeros).

The decoded bytes are the rows of ARCHIVE_VERSION 3 (ha_archive.cc
pack_row / unpack_row): each row is ``int4store(length)`` (ARCHIVE_ROW_HEADER_SIZE
= 4) followed by ``length`` bytes (null bitmap, then each non-null field's
``Field::pack``).  Rows are counted by walking those lengths.

The walk reads the file in spans of AZ_BUFSIZE_READ (32 KiB) aligned on the
file, as azread does; each span is one *unit* of the shared model: its stored
(compressed) bytes and the bytes inflating it produced.  Output is bounded:
zlib is asked for at most :data:`OUT_STEP` bytes a call and the walk stops
with :class:`StreamError` once the total passes the cap (a deflate stream
can expand 1032:1: a 1 MB bomb is a gigabyte of zeros).
"""
from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

from .header import AZ_BUFSIZE_READ, AzHeader, AZ_STATE_CLEAN

ARCHIVE_ROW_HEADER_SIZE = 4
ARCHIVE_VERSION = 3
#: bytes of output asked of zlib per call (bounds memory whatever the ratio)
OUT_STEP = 4 << 20
#: decoded bytes always allowed before the cap applies
CAP_FLOOR = 256 << 20
#: a row longer than this is impossible (max_allowed_packet is at most 1 GiB)
MAX_ROW = 1 << 30
_U32 = struct.Struct("<I")
_TRAILER = struct.Struct("<II")


class StreamError(ValueError):
    """The stream cannot be read on; ``offset`` is the file offset (or, with
    ``decoded``, the offset in the decoded row stream) where it goes wrong."""

    def __init__(self, message: str, offset: int, decoded: int | None = None):
        super().__init__(message)
        self.offset = offset
        self.decoded = decoded


def output_cap(h: AzHeader, compressed: int) -> int:
    """Most decoded bytes the walk accepts: the rows the header records at their
    longest (never more than deflate's 1032:1 over the compressed bytes), and never
    less than :data:`CAP_FLOOR`."""
    by_header = h.rows * max(h.longest_row, ARCHIVE_ROW_HEADER_SIZE) if h.longest_row else 0
    return max(CAP_FLOOR, min(by_header, 1032 * compressed))


@dataclass
class Member:
    """One deflate stream and its trailer."""

    offset: int                 # file offset of its first deflate byte
    compressed: int = 0         # deflate bytes (trailer not included)
    uncompressed: int = 0
    crc32: int | None = None    # the trailer's
    crc_ok: bool | None = None
    length_ok: bool | None = None


@dataclass
class Walk:
    """What the walk found so far (partial when ``error`` is set)."""

    compressed_bytes: int = 0          # file bytes from ``start`` to the end
    uncompressed_bytes: int = 0
    rows: int = 0                      # rows whose length header was read
    complete_rows: int = 0             # rows whose bytes all came
    shortest_row: int = 0              # framed length (header included), as azwrite records it
    longest_row: int = 0
    members: list[Member] = field(default_factory=list)
    unit_offsets: list[int] = field(default_factory=list)
    unit_stored: list[int] = field(default_factory=list)
    unit_logical: list[int] = field(default_factory=list)
    unit_rows: list[int] = field(default_factory=list)
    #: per span, where in its decoded bytes the first row header that starts in it begins
    #: (-1: none starts in it): rows can be taken from any span on (what-if row models)
    unit_first_row: list[int] = field(default_factory=list)
    error: StreamError | None = None
    row_error: StreamError | None = None   # the row walk stopped here (the inflate went on)
    warnings: list[str] = field(default_factory=list)


class Inflater:
    """Walks the data region span by span; :meth:`step` reads and inflates the next span.

    Its state (zlib object, trailer bytes, row position) carries over between
    spans, so a caller can keep it to continue later (what-if sampling asks for
    units in ascending order)."""

    def __init__(self, h: AzHeader, size: int, cap: int | None = None, count_rows: bool = True):
        self.h = h
        self.size = size
        self.cap = cap if cap is not None else output_cap(h, size - h.start)
        self.count_rows = count_rows and h.version == ARCHIVE_VERSION
        self.pos = h.start                       # next file offset to read
        self.unit = 0                            # index of the next span
        self.walk = Walk(compressed_bytes=size - h.start)
        self.dobj = None                         # current member's decompressor
        self.trailer = b""                       # trailer bytes collected
        self.in_trailer = False
        self.crc = 0
        self.member: Member | None = None
        # row walk: bytes of the current row still to skip, its length header so far
        self.skip = 0
        self.hbuf = b""
        self.out_total = 0
        self.check_bounds = h.dirty == AZ_STATE_CLEAN and h.longest_row > 0
        self.span_out = 0                        # decoded offset where the current span starts
        self.first_row = -1                      # first row header starting in the current span
        self.done = h.start >= size

    # -- rows ------------------------------------------------------------------
    def _rows(self, out: bytes, base: int) -> int:
        """Walk the row framing over ``out`` (decoded offset ``base``); returns the rows started.
        Whole rows inside ``out`` go through one tight loop of locals (one iteration a row);
        a length header or a row cut by the end of ``out`` carries over in ``hbuf`` / ``skip``."""
        w = self.walk
        n = len(out)
        p = 0
        started = 0
        complete = 0
        skip = self.skip
        lo = self.h.shortest_row - ARCHIVE_ROW_HEADER_SIZE if self.check_bounds else 0
        hi = self.h.longest_row - ARCHIVE_ROW_HEADER_SIZE if self.check_bounds else MAX_ROW
        zero_ok = self.h.shortest_row == ARCHIVE_ROW_HEADER_SIZE
        shortest, longest = w.shortest_row or (1 << 62), w.longest_row
        unpack = _U32.unpack_from
        span_out = self.span_out
        first_row = self.first_row
        bad = None                                  # (length, decoded offset) of a length outside the bounds
        rmin, rmax = 1 << 62, -1                    # the tight loop's raw lengths (framed sizes kept above)
        while p < n:
            if skip:
                t = skip if skip <= n - p else n - p
                skip -= t
                p += t
                if not skip:
                    complete += 1
                continue
            if self.hbuf or n - p < 4:
                need = 4 - len(self.hbuf)
                self.hbuf += out[p:p + need]
                p += min(need, n - p)
                if len(self.hbuf) < 4:
                    break
                length = _U32.unpack(self.hbuf)[0]
                self.hbuf = b""
                at = base + p - 4
                if length > hi or length < lo or (length == 0 and not zero_ok):
                    bad = (length, at)
                    break
                started += 1
                if first_row < 0 and at >= span_out:
                    first_row = at - span_out
                framed = length + ARCHIVE_ROW_HEADER_SIZE
                shortest = framed if framed < shortest else shortest
                longest = framed if framed > longest else longest
                skip = length
                if not skip:
                    complete += 1
                continue
            # whole rows from here: a header at p and, as long as they fit, the row behind it
            if first_row < 0 and base + p >= span_out:
                first_row = base + p - span_out
            last = n - 4
            while True:
                length = unpack(out, p)[0]
                if length > hi or length < lo or (length == 0 and not zero_ok):
                    bad = (length, base + p)
                    break
                started += 1
                if length < rmin:
                    rmin = length
                if length > rmax:
                    rmax = length
                end = p + 4 + length
                if end > n:
                    skip = end - n
                    p = n
                    break
                complete += 1
                p = end
                if p > last:
                    break
            if bad is not None:
                break
        if rmax >= 0:                               # the tight loop's lengths as framed sizes
            shortest = min(shortest, rmin + ARCHIVE_ROW_HEADER_SIZE)
            longest = max(longest, rmax + ARCHIVE_ROW_HEADER_SIZE)
        w.rows += started
        w.complete_rows += complete
        self.first_row = first_row
        if bad is not None:
            length, at = bad
            why = (f"outside the header's shortest/longest row ({self.h.shortest_row}..{self.h.longest_row} "
                   f"bytes with its 4-byte length)" if self.check_bounds else
                   "an empty row the header never recorded" if length == 0 else f"over {MAX_ROW} bytes")
            w.row_error = StreamError(f"row {w.rows + 1}: length {length} {why}: not a row stream from here "
                                      f"on (rows counted up to it)", self.pos, decoded=at)
            self.count_rows = False
            self.skip = 0
        else:
            self.skip = skip
        w.shortest_row = 0 if shortest == 1 << 62 else shortest
        w.longest_row = longest
        return started

    # -- one span --------------------------------------------------------------------
    def step(self, f, collect: bool = False) -> bytes | None:
        """Read and inflate the next span of ``f`` (a ReadOnlyFile); returns its decoded
        bytes when ``collect``.  Sets ``done``; a damaged stream sets ``walk.error``."""
        if self.done:
            return b"" if collect else None
        w = self.walk
        span_start = self.pos
        span_end = min(self.size, (self.pos // AZ_BUFSIZE_READ + 1) * AZ_BUFSIZE_READ)
        data = f.pread(span_start, span_end - span_start)
        if len(data) < span_end - span_start:
            w.error = StreamError(f"read {len(data)} of {span_end - span_start} bytes: the file shrank", span_start)
            self.done = True
            return b"" if collect else None
        pieces: list[bytes] = []
        produced = 0
        rows = 0
        self.span_out, self.first_row = self.out_total, -1
        buf = memoryview(data)
        try:
            while buf:
                here = span_end - len(buf)
                if self.in_trailer:
                    take = 8 - len(self.trailer)
                    self.trailer += bytes(buf[:take])
                    buf = buf[take:]
                    if len(self.trailer) == 8:
                        self._end_member(here)
                    continue
                if self.dobj is None:
                    self.dobj = zlib.decompressobj(-zlib.MAX_WBITS)
                    self.member = Member(offset=here)
                    self.crc = 0
                out = self.dobj.decompress(buf, OUT_STEP)
                if out:
                    if self.out_total + len(out) > self.cap:
                        keep = self.cap - self.out_total
                        out = out[:keep]
                        self._produce(out, pieces, collect)
                        produced += len(out)
                        rows += self._rows(out, self.out_total - len(out)) if self.count_rows else 0
                        raise StreamError(
                            f"inflates past the cap of {self.cap} bytes ({self.cap / max(1, w.compressed_bytes):.0f}:1 "
                            f"over {w.compressed_bytes} compressed bytes; the header records {self.h.rows} rows of "
                            f"at most {self.h.longest_row} bytes): a decompression bomb or a damaged stream, "
                            f"not read further", here)
                    self._produce(out, pieces, collect)
                    produced += len(out)
                    if self.count_rows:
                        rows += self._rows(out, self.out_total - len(out))
                if self.dobj.eof:
                    used = len(buf) - len(self.dobj.unused_data)
                    self.member.compressed += used
                    buf = buf[used:]
                    self.in_trailer = True
                    self.trailer = b""
                    self.dobj = None
                elif self.dobj.unconsumed_tail:
                    self.member.compressed += len(buf) - len(self.dobj.unconsumed_tail)
                    buf = memoryview(self.dobj.unconsumed_tail)
                else:
                    self.member.compressed += len(buf)
                    buf = buf[len(buf):]
        except zlib.error as e:
            w.error = StreamError(f"deflate data error ({e}) in the span read from here: the rows after it "
                                  f"cannot be read", span_start)
            self.done = True
        except StreamError as e:
            w.error = e
            self.done = True
        w.unit_offsets.append(span_start)
        w.unit_stored.append(span_end - span_start)
        w.unit_logical.append(produced)
        w.unit_rows.append(rows)
        w.unit_first_row.append(self.first_row if self.count_rows else -1)
        self.pos = span_end
        self.unit += 1
        if self.pos >= self.size and not self.done:
            self.done = True
            self._finish()
        return b"".join(pieces) if collect else None

    def _produce(self, out: bytes, pieces: list, collect: bool) -> None:
        self.out_total += len(out)
        self.walk.uncompressed_bytes = self.out_total
        self.member.uncompressed += len(out)
        self.crc = zlib.crc32(out, self.crc)
        if collect:
            pieces.append(out)

    def _end_member(self, at: int) -> None:
        m = self.member
        crc, length = _TRAILER.unpack(self.trailer)
        m.crc32 = crc
        m.crc_ok = crc == self.crc
        m.length_ok = length == m.uncompressed & 0xFFFFFFFF
        self.walk.members.append(m)
        self.in_trailer = False
        self.trailer = b""
        if not m.crc_ok:
            raise StreamError(f"member at offset {m.offset}: crc32 {crc:08x} in its trailer, {self.crc:08x} computed "
                              f"over its {m.uncompressed} decoded bytes", at - 8)
        if not m.length_ok:
            raise StreamError(f"member at offset {m.offset}: length {length} in its trailer, "
                              f"{m.uncompressed} decoded", at - 4)

    def _finish(self) -> None:
        """End of file: a member still open, or a trailer cut short, means the file was cut."""
        w = self.walk
        if self.dobj is not None:
            w.members.append(self.member)
            w.error = StreamError(f"deflate stream of the member at offset {self.member.offset} ends without its "
                                  f"final block: the file is cut short (rows up to here counted)", self.size)
        elif self.in_trailer:
            w.members.append(self.member)
            w.error = StreamError(f"trailer of the member at offset {self.member.offset} cut short: "
                                  f"{len(self.trailer)} of 8 bytes", self.size)
        elif self.count_rows and (self.skip or self.hbuf):
            w.row_error = StreamError(f"the last row is cut short ({self.skip or 4 - len(self.hbuf)} bytes missing)",
                                      self.size, decoded=self.out_total)


def walk(f, h: AzHeader, check=lambda: None, cap: int | None = None) -> Walk:
    """Inflate the whole data region of the open ``.ARZ`` ``f`` (header ``h``)."""
    inf = Inflater(h, f.size, cap=cap)
    while not inf.done:
        check()
        inf.step(f)
    return inf.walk

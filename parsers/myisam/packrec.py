"""A myisampack-compressed data file (storage/myisam/mi_packrec.c; myisampack.c writes it).

The header (``_mi_read_pack_info``): 32 bytes, little endian after the magic ``fe fe 08``
(myisam_pack_file_magic; Aria's aria_pack writes ``fe fe 0a``, maria_pack_file_magic):
version, header_length (the fixed header, the column pack info, the Huffman trees and the
distinct values: the rows start there), min_pack_length, max_pack_length, elements,
intervall_length, trees, ref_length, rec_reflength.  Then a bit stream (read most significant
bit first, in 32-bit big-endian words: ``fill_buffer``): for each of the table's columns
base_type (5 bits, enum en_fieldtype), pack_type (6), space_length_bits (5) and the number of
its Huffman tree (``max_bit(trees - 1)`` bits); on the next byte each tree (``read_huff_table``):
a flag bit, for a byte-value tree min_chr (8), elements (9), char_bits (5), offset_bits (5),
for a distinct-value tree elements (15), intervall_length (16), char_bits, offset_bits; then
``elements * 2 - 2`` entries, each a bit and either an offset to the next node pair (relative
to the entry) or a leaf value (``char_bits`` bits, plus min_chr); a distinct-value tree is
followed, on the next byte, by its values (intervall_length bytes).

Aria's aria_pack writes the same (storage/maria/ma_packrec.c), its rows beginning with the
record's null bytes as they are (``_ma_pack_rec_unpack``), the columns' bits after them.

The rows follow one after the other (``_mi_pack_get_block_info``): the packed length
(``read_pack_length``: one byte under 254, 254 and 2 bytes, 255 and 4 bytes; 3 in version 1),
with BLOB columns a second such length (the unpacked blobs' bytes), then that many bytes of
bits; a row is unpacked column by column into the server's record (``_mi_pack_rec_unpack``
and the ``uf_*`` functions) and must use its bytes to the last one.  myisampack leaves no
deleted rows; after the last row it writes a few zero bytes (``write_data_suffix``, past
data_file_length, for the memory map).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from ..model import UNIT_CORRUPT, empty_units

MYISAM_PACK_FILE_MAGIC = b"\xfe\xfe\x08"
MARIA_PACK_FILE_MAGIC = b"\xfe\xfe\x0a"
HEAD_LENGTH = 32
_HEAD = struct.Struct("<4sIIIIIHBB")
IS_CHAR = 32768                     # a leaf of a decode tree (mi_packrec.c)

# myisampack.h / maria.h enum en_fieldtype (the column's base_type in the pack info)
FIELD_NORMAL, FIELD_SKIP_ENDSPACE, FIELD_SKIP_PRESPACE, FIELD_SKIP_ZERO = 0, 1, 2, 3
FIELD_BLOB, FIELD_CONSTANT, FIELD_INTERVALL, FIELD_ZERO, FIELD_VARCHAR, FIELD_CHECK = 4, 5, 6, 7, 8, 9
FIELD_TYPE_NAMES = {FIELD_NORMAL: "NORMAL", FIELD_SKIP_ENDSPACE: "SKIP_ENDSPACE", FIELD_SKIP_PRESPACE:
                    "SKIP_PRESPACE", FIELD_SKIP_ZERO: "SKIP_ZERO", FIELD_BLOB: "BLOB", FIELD_CONSTANT: "CONSTANT",
                    FIELD_INTERVALL: "INTERVALL", FIELD_ZERO: "ZERO", FIELD_VARCHAR: "VARCHAR",
                    FIELD_CHECK: "CHECK"}
# myisampack.h pack_type bits
PACK_TYPE_SELECTED, PACK_TYPE_SPACE_FIELDS, PACK_TYPE_ZERO_FILL = 1, 2, 4
PORTABLE_SIZEOF_CHAR_PTR = 8
#: a walk stops after this many rows; the rest of the file is one "not walked" unit
MAX_ROWS = 1_000_000
#: the deepest Huffman code a tree may hold (OFFSET_TABLE_SIZE: find_longest_bitstream's limit)
OFFSET_TABLE_SIZE = 512
_QUICK_BITS = 12

KIND_HEADER, KIND_ROW, KIND_NOT_WALKED, KIND_BAD, KIND_SUFFIX = 0, 1, 2, 3, 4
KIND_NAMES = {KIND_HEADER: "PACK_HEADER (Huffman trees)", KIND_ROW: "PACKED_ROW", KIND_NOT_WALKED: "NOT_WALKED",
              KIND_BAD: "UNREADABLE", KIND_SUFFIX: "DATA_SUFFIX"}


class PackError(ValueError):
    """A packed file or row that cannot be read; ``offset`` is where in the file it goes wrong."""

    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.offset = offset


@dataclass(frozen=True)
class PackHeader:
    version: int
    header_length: int          # bytes before the first row (trees and intervals)
    min_pack_length: int
    max_pack_length: int
    elements: int
    intervall_length: int
    trees: int
    ref_length: int
    rec_reflength: int          # row pointer bytes of the packed file (header[27])


def read_pack_header(buf: bytes, magic: bytes = MYISAM_PACK_FILE_MAGIC) -> PackHeader:
    """The pack header at the start of ``buf`` (ValueError naming what is wrong)."""
    if len(buf) < HEAD_LENGTH:
        raise ValueError(f"pack header cut: {len(buf)} of {HEAD_LENGTH} bytes")
    m, hl, mn, mx, el, il, tr, rl, ol = _HEAD.unpack_from(buf, 0)
    if m[:3] != magic:
        raise ValueError(f"pack magic {m.hex()} ({magic.hex()} expected): not a compressed data file")
    return PackHeader(version=m[3], header_length=hl, min_pack_length=mn, max_pack_length=mx, elements=el,
                      intervall_length=il, trees=tr, ref_length=rl, rec_reflength=ol)


class BitReader:
    """The engine's bit buffer (MI_BIT_BUFF) over ``data``: bits taken from the most
    significant end; reading past the end is an error, as ``fill_buffer`` makes it."""

    __slots__ = ("val", "nbits", "pos")

    def __init__(self, data: bytes):
        self.nbits = 8 * len(data)
        self.val = int.from_bytes(data, "big") << 64      # zero bits to peek past the end
        self.pos = 0

    def bits(self, n: int) -> int:
        if n == 0:
            return 0
        p = self.pos + n
        if p > self.nbits:
            raise EOFError
        self.pos = p
        return (self.val >> (self.nbits + 64 - p)) & ((1 << n) - 1)

    def peek(self, n: int) -> int:
        return (self.val >> (self.nbits + 64 - self.pos - n)) & ((1 << n) - 1)

    def to_byte(self) -> None:
        """``skip_to_next_byte``."""
        self.pos = (self.pos + 7) & ~7


@dataclass
class DecodeTree:
    """One Huffman tree (MI_DECODE_TREE): ``table`` as the file stores it (pairs of entries,
    left for a 0 bit, right for a 1; an entry with IS_CHAR is a leaf, else the offset of the
    next pair from the entry), the distinct values of a distinct-value tree."""

    table: list[int]
    intervalls: bytes = b""
    distinct: bool = False
    #: next _QUICK_BITS bits -> (value, code length), or (-1, pair reached after them)
    quick: list[tuple[int, int]] = field(default_factory=list)
    quick_bits: int = 0

    def build_quick(self) -> None:
        """A lookup table of the codes of up to _QUICK_BITS bits (mi_packrec.c make_quick_table)."""
        k = min(_QUICK_BITS, _depth(self.table))
        quick: list[tuple[int, int]] = [(-1, 0)] * (1 << k)
        stack = [(0, 0, 0)]                     # (pair index, bits so far, depth)
        while stack:
            node, code, depth = stack.pop()
            if depth == k:
                quick[code] = (-1, node)
                continue
            for b in (0, 1):
                e = self.table[node + b]
                c, d = (code << 1) | b, depth + 1
                if e & IS_CHAR:
                    span = 1 << (k - d)
                    quick[c << (k - d):(c << (k - d)) + span] = [(e & ~IS_CHAR, d)] * span
                else:
                    stack.append((node + b + e, c, d))
        self.quick, self.quick_bits = quick, k

    def decode(self, r: BitReader) -> int:
        """One value (``decode_bytes`` for one byte, ``decode_pos``)."""
        v, n = self.quick[r.peek(self.quick_bits)]
        if v >= 0:
            r.pos += n
            if r.pos > r.nbits:
                raise EOFError
            return v
        r.pos += self.quick_bits
        node = n
        table = self.table
        while True:
            at = node + r.bits(1)
            e = table[at]
            if e & IS_CHAR:
                return e & ~IS_CHAR
            node = at + e


@dataclass(frozen=True)
class PackColumn:
    """One column's pack info (MI_COLUMNDEF as _mi_read_pack_info fills it) and its length in
    the record (the ``.MYI``'s column definition)."""

    base_type: int
    pack_type: int
    space_length_bits: int
    tree: int
    length: int

    @property
    def type_name(self) -> str:
        return FIELD_TYPE_NAMES.get(self.base_type, f"type {self.base_type}")


@dataclass
class PackInfo:
    header: PackHeader
    columns: list[PackColumn]
    trees: list[DecodeTree]
    blobs: bool                 # the rows carry a blob length after their own
    reclength: int
    #: Aria: the record's null bytes stored as they are before the bits (ma_packrec.c
    #: _ma_pack_rec_unpack); MyISAM keeps them in a column of their own (0 here)
    null_bytes: int = 0

    @property
    def offsets(self) -> list[int]:
        """Each column's offset in the record."""
        out, at = [], self.null_bytes
        for c in self.columns:
            out.append(at)
            at += c.length
        return out


def _max_bit(value: int) -> int:
    """Bits to hold ``value`` (mi_packrec.c max_bit: at least 1)."""
    power = 1
    while value >> 1:
        value >>= 1
        power += 1
    return power


def _read_tree(r: BitReader, base: int, data: bytes) -> DecodeTree:
    """read_huff_table: one tree at the reader's position (``base``: the file offset of ``data``)."""
    where = base + r.pos // 8
    if not r.bits(1):
        min_chr, elements, char_bits, offset_bits = r.bits(8), r.bits(9), r.bits(5), r.bits(5)
        intervall_length = 0
        if elements > 256:
            raise PackError(f"Huffman tree of {elements} byte values (at most 256)", where)
    else:
        min_chr = 0
        elements, intervall_length, char_bits, offset_bits = r.bits(15), r.bits(16), r.bits(5), r.bits(5)
    size = elements * 2 - 2
    if size < 0:
        raise PackError("Huffman tree of no elements", where)
    table = [0] * size
    for i in range(size):
        if r.bits(1):
            off = r.bits(offset_bits)
            if not off or i + off >= size:
                raise PackError(f"illegal pointer {off} in decode tree entry {i} of {size}", where)
            table[i] = off
        else:
            table[i] = IS_CHAR + r.bits(char_bits) + min_chr
    r.to_byte()
    t = DecodeTree(table=table, distinct=bool(intervall_length))
    if intervall_length:
        a = r.pos // 8
        if a + intervall_length > len(data):
            raise PackError(f"distinct values of {intervall_length} bytes run past the header", base + a)
        t.intervalls = bytes(data[a:a + intervall_length])
        r.pos = (a + intervall_length) * 8
    if size:
        depth = _depth(table)
        if depth >= OFFSET_TABLE_SIZE:
            raise PackError("decode tree does not end (a loop or a pointer out of it)", where)
        t.build_quick()
    return t


def _depth(table: list[int]) -> int:
    """find_longest_bitstream, without recursion: the longest code, OFFSET_TABLE_SIZE if the tree loops."""
    best = 0
    stack = [(0, 1)]
    while stack:
        node, d = stack.pop()
        if d >= OFFSET_TABLE_SIZE or node + 1 >= len(table):
            return OFFSET_TABLE_SIZE
        best = max(best, d)
        for b in (0, 1):
            e = table[node + b]
            if not e & IS_CHAR:
                stack.append((node + b + e, d + 1))
    return best


def read_pack_info(buf, lengths: list[int], blobs: bool, magic: bytes = MYISAM_PACK_FILE_MAGIC,
                   null_bytes: int = 0) -> PackInfo:
    """The header, each column's pack info and the trees at the start of ``buf`` (the whole
    pack header, ``header_length`` bytes); ``lengths`` the record length of each column
    (the ``.MYI``'s / ``.MAI``'s column definitions, in their order), ``null_bytes`` Aria's
    null bytes before the bits.  PackError naming the offset where it goes wrong."""
    try:
        h = read_pack_header(bytes(buf[:HEAD_LENGTH]), magic)
    except ValueError as e:
        raise PackError(str(e), 0) from None
    if h.header_length < HEAD_LENGTH or h.header_length > len(buf):
        raise PackError(f"header_length {h.header_length}: past the file's {len(buf)} bytes"
                        if h.header_length > len(buf) else f"header_length {h.header_length} < {HEAD_LENGTH}", 4)
    if h.trees == 0 and lengths:
        raise PackError("no Huffman trees", 24)
    # the most the pack info can take: 32 bits a column, 7 bytes of tree header, 4 bytes an entry
    # (a flag and at most 31 bits), the distinct values
    most = HEAD_LENGTH + 4 * len(lengths) + 1 + 7 * h.trees + 8 * h.elements + h.intervall_length
    if h.header_length > most:
        raise PackError(f"header_length {h.header_length} larger than {len(lengths)} columns, {h.trees} trees of "
                        f"{h.elements} elements and {h.intervall_length} bytes of values can take ({most})", 4)
    data = bytes(buf[HEAD_LENGTH:h.header_length])
    r = BitReader(data)
    tree_bits = _max_bit(h.trees - 1 if h.trees else 0)
    cols = []
    try:
        for i, length in enumerate(lengths):
            bt, pt, sl, tr = r.bits(5), r.bits(6), r.bits(5), r.bits(tree_bits)
            if tr >= h.trees:
                raise PackError(f"column {i}: tree {tr} of {h.trees}", HEAD_LENGTH + r.pos // 8)
            if bt not in FIELD_TYPE_NAMES:
                raise PackError(f"column {i}: field type {bt} (0-9 expected)", HEAD_LENGTH + r.pos // 8)
            cols.append(PackColumn(bt, pt, sl, tr, length))
        r.to_byte()
        trees = [_read_tree(r, HEAD_LENGTH, data) for _ in range(h.trees)]
    except EOFError:
        raise PackError(f"pack info runs past header_length {h.header_length}", h.header_length) from None
    if (r.pos + 7) // 8 + 4 <= len(data):
        # _mi_read_pack_info: the trees must take the header to (the last word of) its end
        raise PackError(f"the trees end at byte {HEAD_LENGTH + (r.pos + 7) // 8}, header_length says "
                        f"{h.header_length}", HEAD_LENGTH + (r.pos + 7) // 8)
    for i, c in enumerate(cols):
        t = trees[c.tree]
        if c.base_type == FIELD_INTERVALL and not t.distinct:
            raise PackError(f"column {i}: distinct values column with a byte tree", HEAD_LENGTH)
        if c.base_type == FIELD_CONSTANT and len(t.intervalls) < c.length:
            raise PackError(f"column {i}: constant of {len(t.intervalls)} bytes for {c.length}", HEAD_LENGTH)
    return PackInfo(header=h, columns=cols, trees=trees, blobs=blobs, reclength=null_bytes + sum(lengths),
                    null_bytes=null_bytes)


def read_pack_length(buf, pos: int, version: int) -> tuple[int, int]:
    """(length, bytes it takes) at ``pos`` (mi_packrec.c read_pack_length); IndexError if cut."""
    b = buf[pos]
    if b < 254:
        return b, 1
    if b == 254:
        if pos + 3 > len(buf):
            raise IndexError
        return buf[pos + 1] | buf[pos + 2] << 8, 3
    n = 3 if version == 1 else 4
    if pos + 1 + n > len(buf):
        raise IndexError
    return int.from_bytes(bytes(buf[pos + 1:pos + 1 + n]), "little"), 1 + n


@dataclass
class PackedRow:
    offset: int                 # where the row's length is
    data_offset: int            # where its bits start
    rec_len: int                # bytes of bits
    blob_len: int               # bytes of its unpacked blobs


def row_at(buf, pos: int, version: int, blobs: bool, end: int) -> PackedRow:
    """The row at ``pos`` (_mi_pack_get_block_info); PackError if it runs past ``end``."""
    try:
        rec_len, n = read_pack_length(buf, pos, version)
        blob_len = 0
        if blobs:
            blob_len, m = read_pack_length(buf, pos + n, version)
            n += m
    except IndexError:
        raise PackError(f"row length cut by the end of the data at {end}", pos) from None
    if pos + n + rec_len > end:
        raise PackError(f"row of {rec_len} bytes runs past the end of the data at {end}", pos)
    return PackedRow(pos, pos + n, rec_len, blob_len)


@dataclass
class PackWalk:
    """What the row walk found."""

    rows: int = 0
    packed_bytes: int = 0           # bytes of the rows, their lengths included
    record_bytes: int = 0           # rows x the record length: the rows unpacked
    blob_bytes: int = 0             # the unpacked blobs' bytes (the rows' blob lengths)
    longest_row: int = 0            # the longest row's bytes of bits
    walked_to: int = 0
    complete: bool = False
    error: tuple[str, int] | None = None
    units: np.ndarray = field(default_factory=lambda: empty_units(0))


def walk(buf, info_header: PackHeader, blobs: bool, reclength: int, end: int, size: int,
         max_rows: int = MAX_ROWS, check=lambda: None) -> PackWalk:
    """Walk the rows of ``buf`` from the header's end to ``end`` (data_file_length): one unit a
    row (at most ``max_rows``), the header and the suffix after ``end`` units of their own."""
    w = PackWalk()
    start = min(info_header.header_length, end)
    offs, lens = [], []
    pos = start
    v = info_header.version
    lim = min(end, len(buf))
    mn, mx = info_header.min_pack_length, info_header.max_pack_length
    b = buf
    safe = lim - 12                     # both lengths (at most 5 bytes each) read without a bounds check
    n = 0
    while pos < lim:
        if n >= max_rows:
            break
        if n & 0xFFFF == 0:
            check()
        if pos < safe:
            x = b[pos]
            if x < 254:
                rec_len, h = x, 1
            elif x == 254:
                rec_len, h = b[pos + 1] | b[pos + 2] << 8, 3
            else:
                rec_len, h = read_pack_length(b, pos, v)
            blob_len = 0
            if blobs:
                x = b[pos + h]
                if x < 254:
                    blob_len, h = x, h + 1
                else:
                    blob_len, m = read_pack_length(b, pos + h, v)
                    h += m
            total = h + rec_len
            if pos + total > lim:
                w.error = (f"row of {rec_len} bytes runs past the end of the data at {lim}", pos)
                break
        else:
            try:
                r = row_at(buf, pos, v, blobs, lim)
            except PackError as e:
                w.error = (str(e), e.offset)
                break
            rec_len, blob_len, total = r.rec_len, r.blob_len, r.data_offset - pos + r.rec_len
        if rec_len > mx or rec_len < mn:
            w.error = (f"row of {rec_len} bytes outside min_pack_length {mn} .. max_pack_length {mx}", pos)
            break
        offs.append(pos)
        lens.append(total)
        w.blob_bytes += blob_len
        if rec_len > w.longest_row:
            w.longest_row = rec_len
        pos += total
        n += 1
    w.packed_bytes = pos - start
    w.rows = len(offs)
    w.record_bytes = w.rows * reclength
    w.walked_to = pos
    w.complete = pos >= end and w.error is None
    rest = 1 if pos < lim else 0
    suffix = 1 if size > end else 0
    units = empty_units(1 + len(offs) + rest + suffix)
    units[0]["offset"], units[0]["stored"], units[0]["logical"] = 0, start, start
    units[0]["kind"] = KIND_HEADER
    if offs:
        sl = slice(1, 1 + len(offs))
        units["offset"][sl] = offs
        units["stored"][sl] = lens
        units["logical"][sl] = lens
        units["kind"][sl] = KIND_ROW
    if rest:
        i = 1 + len(offs)
        units[i]["offset"] = pos
        units[i]["stored"] = units[i]["logical"] = min(lim - pos, 0xFFFFFFFF)
        units[i]["kind"] = KIND_BAD if w.error else KIND_NOT_WALKED
        units[i]["flags"] = UNIT_CORRUPT if w.error else 0
    if suffix:
        units[-1]["offset"] = end
        units[-1]["stored"] = units[-1]["logical"] = min(size - end, 0xFFFFFFFF)
        units[-1]["kind"] = KIND_SUFFIX
    w.units = units
    return w


def _decode_bytes(t: DecodeTree, r: BitReader, n: int) -> bytes:
    """``n`` byte values of tree ``t`` (``decode_bytes``), the reader's state kept in locals."""
    if not t.table:
        raise ValueError("a column decoded with an empty tree")
    if n > r.nbits - r.pos:                 # every value takes at least one bit
        raise EOFError
    quick, k, table = t.quick, t.quick_bits, t.table
    val, top, nbits, pos = r.val, r.nbits + 64, r.nbits, r.pos
    mask = (1 << k) - 1
    out = bytearray(n)
    for i in range(n):
        v, m = quick[(val >> (top - pos - k)) & mask]
        if v >= 0:
            pos += m
        else:
            pos += k
            node = m
            while True:
                if pos >= nbits:
                    raise EOFError
                at = node + ((val >> (top - pos - 1)) & 1)
                pos += 1
                e = table[at]
                if e & IS_CHAR:
                    v = e & ~IS_CHAR
                    break
                node = at + e
        if pos > nbits:
            raise EOFError
        out[i] = v
    r.pos = pos
    return bytes(out)


def unpack_row(info: PackInfo, data: bytes, blob_len: int) -> tuple[bytes, dict[int, bytes]]:
    """One row's bits unpacked into the server's record (``_mi_pack_rec_unpack``) and the
    blobs' bytes by their column's offset in the record; ValueError if the bits do not make the record or are
    not used to the row's last byte."""
    nb = info.null_bytes
    if len(data) < nb:
        raise ValueError(f"row of {len(data)} bytes, shorter than its {nb} null bytes")
    out = bytearray(data[:nb])
    data = data[nb:]
    r = BitReader(data)
    blobs: dict[int, bytes] = {}
    blob_left = blob_len
    trees = info.trees
    try:
        for i, c in enumerate(info.columns):
            t = trees[c.tree]
            n = c.length
            bt, pt = c.base_type, c.pack_type
            if bt == FIELD_SKIP_ZERO:
                if r.bits(1):
                    out += bytes(n)
                elif pt & PACK_TYPE_ZERO_FILL:
                    k = c.space_length_bits
                    out += _decode_bytes(t, r, n - k) + bytes(k)
                else:
                    out += _decode_bytes(t, r, n)
            elif bt == FIELD_NORMAL:
                if pt & PACK_TYPE_SPACE_FIELDS:
                    out += b" " * n if r.bits(1) else _decode_bytes(t, r, n)
                elif pt & PACK_TYPE_ZERO_FILL:
                    k = c.space_length_bits
                    out += _decode_bytes(t, r, n - k) + bytes(k)
                else:
                    out += _decode_bytes(t, r, n)
            elif bt in (FIELD_SKIP_ENDSPACE, FIELD_SKIP_PRESPACE):
                if pt & PACK_TYPE_SPACE_FIELDS and r.bits(1):
                    out += b" " * n
                    continue
                if pt & PACK_TYPE_SELECTED and not r.bits(1):
                    out += _decode_bytes(t, r, n)
                    continue
                spaces = r.bits(c.space_length_bits)
                if spaces > n:
                    raise ValueError(f"column {i}: {spaces} spaces in a field of {n} bytes")
                body = _decode_bytes(t, r, n - spaces) if spaces != n else b""
                out += body + b" " * spaces if bt == FIELD_SKIP_ENDSPACE else b" " * spaces + body
            elif bt == FIELD_CONSTANT:
                out += t.intervalls[:n]
            elif bt == FIELD_INTERVALL:
                k = t.decode(r)
                if (k + 1) * n > len(t.intervalls):
                    raise ValueError(f"column {i}: distinct value {k} of {len(t.intervalls) // max(n, 1)}")
                out += t.intervalls[k * n:(k + 1) * n]
            elif bt in (FIELD_ZERO, FIELD_CHECK):
                out += bytes(n)
            elif bt == FIELD_BLOB:
                if r.bits(1):
                    out += bytes(n)
                else:
                    length = r.bits(c.space_length_bits)
                    if length > blob_left:
                        raise ValueError(f"column {i}: blob of {length} bytes, {blob_left} left of the row's")
                    blobs[len(out)] = _decode_bytes(t, r, length) if length else b""
                    blob_left -= length
                    pack = n - PORTABLE_SIZEOF_CHAR_PTR
                    out += length.to_bytes(pack, "little") + bytes(PORTABLE_SIZEOF_CHAR_PTR)
            elif bt == FIELD_VARCHAR:
                nb = 1 if n <= 256 else 2
                if r.bits(1):
                    out += bytes(n)
                else:
                    length = r.bits(c.space_length_bits)
                    if length > n - nb:
                        raise ValueError(f"column {i}: VARCHAR of {length} bytes in {n - nb}")
                    body = _decode_bytes(t, r, length) if length else b""
                    out += length.to_bytes(nb, "little") + body + bytes(n - nb - length)
            else:
                raise ValueError(f"column {i}: field type {bt}")
    except EOFError:
        raise ValueError(f"the row's {len(data)} bytes end inside column {i}") from None
    if (r.pos + 7) // 8 != len(data):
        raise ValueError(f"the columns take {nb + (r.pos + 7) // 8} of the row's {nb + len(data)} bytes")
    if blob_left:
        raise ValueError(f"{blob_left} bytes of the row's blob length not used")
    return bytes(out), blobs

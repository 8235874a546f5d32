"""A size model of myisampack / aria_pack: the bytes the packer writes for a table's rows,
worked out as storage/myisam/myisampack.c (and storage/maria/aria_pack.c, the same code over
Aria's record) works them out, from the rows' server records split by the index file's column
definitions (the ``.MYI``'s MI_COLUMNDEF / the ``.MAI``'s MARIA_COLUMNDEF: type and length).

Per column, as ``get_statistic`` counts them: the byte values of its significant part
(trailing and leading spaces left out of a FIELD_NORMAL / FIELD_SKIP_ENDSPACE /
FIELD_SKIP_PRESPACE column, a VARCHAR's and a BLOB's bytes), its empty (all-space) and zero
values, the trailing zero bytes every value has (``max_zero_fill``, columns of up to 8 bytes),
its distinct values while they fit ``tree_buff_length``; then ``check_counts`` /
``test_space_compress`` choose its field type (FIELD_NORMAL, FIELD_SKIP_ENDSPACE,
FIELD_SKIP_PRESPACE, FIELD_SKIP_ZERO, FIELD_ZERO, FIELD_CONSTANT, FIELD_INTERVALL; VARCHAR,
BLOB and CHECK columns keep theirs) and pack type (PACK_TYPE_SPACE_FIELDS, PACK_TYPE_SELECTED,
PACK_TYPE_ZERO_FILL) by ``calc_packed_length``'s Huffman sizes, ``make_huff_tree`` builds its
tree, ``join_same_trees`` joins byte trees whose joined tree is no more than ALLOWED_JOIN_DIFF
bytes larger.  Each row is then ``compress_isam_file``'s: every column's bits (its flags, its
space or length count in ``length_bits``, a Huffman code a byte or a distinct-value code), the
row flushed to whole bytes, behind its length (``save_pack_length``: 1 byte under 254, 3 to
65535, else 5; a second such length for the blobs when the table has BLOBs); Aria's rows
begin with the record's null bytes as they are.  The file: HEAD_LENGTH bytes, the column
infos (5 + 6 + 5 bits and the tree number each, to a whole byte), each tree
(``write_huff_tree``: 28 bits, or 42 for a distinct-value tree, a leaf ``char_bits + 1`` bits,
an offset ``offset_bits + 1``, to a whole byte, then the distinct values), the rows, and
MEMMAP_EXTRA_MARGIN zero bytes (myisamdef.h).

Huffman trees are built with the engine's own priority queue (mysys/queues.c, as
``make_huff_tree`` drives it), so ties are broken as the packer breaks them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from dbxray.parsers.myisam.packrec import (FIELD_BLOB, FIELD_CHECK, FIELD_CONSTANT, FIELD_INTERVALL, FIELD_NORMAL,
                                           FIELD_SKIP_ENDSPACE, FIELD_SKIP_PRESPACE, FIELD_SKIP_ZERO, FIELD_VARCHAR,
                                           FIELD_ZERO, HEAD_LENGTH, PACK_TYPE_SELECTED, PACK_TYPE_SPACE_FIELDS,
                                           PACK_TYPE_ZERO_FILL)

#: my_global.h MALLOC_OVERHEAD; myisampack.c ``tree_buff_length= 65536 - MALLOC_OVERHEAD``
MALLOC_OVERHEAD = 8
TREE_BUFF_LENGTH = 65536 - MALLOC_OVERHEAD
#: myisampack.c IS_OFFSET: a decode tree entry's offset flag (distinct values at most IS_OFFSET / 2)
IS_OFFSET = 1 << 15
#: myisampack.c ALLOWED_JOIN_DIFF: the bytes a joined tree may cost above the two it replaces
ALLOWED_JOIN_DIFF = 256
#: a sample's trees are built from its counts scaled, and its rows with values it saw: the
#: table's own codes differ a little (checked: 0.07% of the rows' bytes on the 75,000-row table
#: of tests/test_myisampack_model.py read at one row in two); allowed for in the interval
SAMPLE_CODE_ERROR = 0.005
#: myisamdef.h / maria_def.h MEMMAP_EXTRA_MARGIN: the zero bytes written after the last row
MEMMAP_EXTRA_MARGIN = 7


def max_bit(value: int) -> int:
    """myisampack.c ``max_bit``: the bits to hold ``value`` (at least 1)."""
    power = 1
    value >>= 1
    while value:
        value >>= 1
        power += 1
    return power


def calc_pack_length(length: int, version: int = 2) -> int:
    """myisampack.c ``calc_pack_length`` / ``save_pack_length``: a row's length bytes (pack
    version 1, aria_pack's: 4 bytes over 65535)."""
    return 1 if length < 254 else 3 if length < 65536 else 4 if version == 1 else 5


def _huffman(counts: list[int]) -> tuple[int, list[int], int]:
    """(bytes_packed as ``make_huff_tree`` / ``calc_packed_length`` sum them, each element's code
    length, ``max_offset`` as ``make_offset_code_tree`` finds it) of ``counts`` (at least 2, in
    the order the packer puts them in its queue: byte value, or distinct value).  The queue is
    mysys/queues.c's (least count at the top): ``queue_fix``, then per step
    ``queue_remove_top`` (``queue_remove``: the last element to the top, ``queue_replace``),
    ``queue_top`` and the new element in its place (``queue_replace_top``: ``_downheap``), so ties
    go as the engine's go and the codes are its codes."""
    n = len(counts)
    cnt = list(counts)
    root = [0] + list(range(n))              # 1-based: root[1] the top
    left: dict[int, int] = {}
    right: dict[int, int] = {}
    internal: dict[int, int] = {}

    def downheap(idx: int, size: int) -> None:             # queues.c _downheap
        element = root[idx]
        half = size >> 1
        while idx <= half:
            nxt = idx + idx
            if nxt < size and cnt[root[nxt]] > cnt[root[nxt + 1]]:
                nxt += 1
            if cnt[root[nxt]] >= cnt[element]:
                break
            root[idx] = root[nxt]
            idx = nxt
        root[idx] = element

    def replace(idx: int, size: int) -> None:              # queues.c queue_replace, insert_at
        element = root[idx]
        half = size >> 1
        first = True
        while idx <= half:
            nxt = idx + idx
            if nxt < size and cnt[root[nxt]] > cnt[root[nxt + 1]]:
                nxt += 1
            if first and cnt[root[nxt]] >= cnt[element]:
                root[idx] = element
                break
            first = False
            root[idx] = root[nxt]
            idx = nxt
        while idx >> 1 > 0 and cnt[element] < cnt[root[idx >> 1]]:
            root[idx] = root[idx >> 1]
            idx >>= 1
        root[idx] = element

    size = n
    for i in range(n >> 1, 0, -1):                          # queue_fix
        downheap(i, size)
    bytes_packed = bits_packed = 0
    for _ in range(n - 1):
        a = root[1]                                         # queue_remove_top
        root[1] = root[size]
        root.pop()
        size -= 1
        replace(1, size)
        b = root[1]                                         # queue_top
        new = len(cnt)
        cnt.append(cnt[a] + cnt[b])
        bits_packed += cnt[new] & 7
        bytes_packed += cnt[new] >> 3
        left[new], right[new] = a, b
        internal[new] = internal.get(a, 0) + internal.get(b, 0) + 1
        root[1] = new                                       # queue_replace_top
        downheap(1, size)
    top = root[1]
    lengths = [0] * n
    max_offset = 2
    stack = [(top, 0)]
    while stack:
        node, d = stack.pop()
        if node < n:
            lengths[node] = d
            continue
        l, r = left[node], right[node]
        if r >= n:                       # an offset to the right pair: past the left subtree's entries
            max_offset = max(max_offset, 1 + 2 * internal.get(l, 0))
        stack.append((l, d + 1))
        stack.append((r, d + 1))
    return bytes_packed + (bits_packed + 7) // 8, lengths, max_offset


def calc_packed_length(counts: np.ndarray, add_tree_length: bool = False) -> int:
    """myisampack.c ``calc_packed_length``: the bytes a byte Huffman tree over ``counts`` packs
    them in (and its decode table's, ``add_tree_length``)."""
    nz = np.flatnonzero(counts)
    if not len(nz):
        return 0
    vals = [int(counts[i]) for i in nz]
    found = len(vals)
    if found < 2:
        vals.append(0)
        found = 2
    out = 0
    if add_tree_length:
        first, last = int(nz[0]), int(nz[-1])
        out = (8 + 9 + 5 + 5 + (max_bit(last - first) + 1) * found + (max_bit(found - 1) + 1 + 1) * (found - 2) + 7) // 8
    return out + _huffman(vals)[0]


@dataclass
class Column:
    """HUFF_COUNTS: one column's statistics and, after :func:`check_counts`, its packing."""

    field_type: int
    length: int
    counts: np.ndarray = field(default_factory=lambda: np.zeros(256, dtype=np.int64))
    empty_fields: int = 0
    zero_fields: int = 0
    tot_end_space: int = 0
    tot_pre_space: int = 0
    end_space: list = field(default_factory=lambda: [0] * 8)
    pre_space: list = field(default_factory=lambda: [0] * 8)
    max_end_space: int = 0
    max_pre_space: int = 0
    max_zero_fill: int = 0
    max_length: int = 0
    #: distinct values and their counts while they fit (``tree_buff``); None: given up
    distinct: dict | None = None
    pack_type: int = 0
    length_bits: int = 0
    min_space: int = 0
    bytes_packed: int = 0
    tree: "Tree | None" = None


@dataclass
class Tree:
    """HUFF_TREE: a column's (or joined columns') code lengths and its bytes in the header."""

    code_len: dict
    elements: int
    tree_pack_length: int
    bytes_packed: int
    header_bits: int              # what ``write_huff_tree`` writes of it, before its distinct values
    values_bytes: int = 0
    height: int = 0
    #: a byte tree's code lengths as a translate table (a byte the tree lacks: its longest + 1)
    table: bytes | None = None


def _init(types_lengths, records: int) -> list[Column]:
    """init_huff_count."""
    cols = []
    for typ, length in types_lengths:
        c = Column(field_type=typ, length=length)
        t = FIELD_NORMAL if typ in (FIELD_INTERVALL, FIELD_CONSTANT, FIELD_ZERO) else typ
        if length <= 8 and t in (FIELD_NORMAL, FIELD_SKIP_ZERO):
            c.max_zero_fill = length
        if records and t not in (FIELD_BLOB, FIELD_VARCHAR):
            c.distinct = {}
        cols.append(c)
    return cols


def _values(record: bytes, blobs: dict, cols: list[Column], start: int):
    at = start
    for c in cols:
        v = record[at:at + c.length]
        yield c, v, at
        at += c.length


def _significant(c: Column, v: bytes, at: int, blobs: dict) -> bytes:
    if c.field_type == FIELD_BLOB:
        return blobs.get(at, b"")
    if c.field_type == FIELD_VARCHAR:
        nb = 1 if c.length - 1 < 256 else 2
        n = v[0] if nb == 1 else int.from_bytes(v[:2], "little")
        return v[nb:nb + n]
    return v


class PackStats:
    """get_statistic over the rows given to :meth:`add` (a server record and its blobs by
    their column's offset in it)."""

    def __init__(self, types_lengths, null_bytes: int = 0, records_hint: int = 1, version: int = 2):
        self.version = version
        self.cols = _init(types_lengths, records_hint)
        self.null_bytes = null_bytes
        self.records = 0
        self.max_blob_length = 0
        self.rows: list[tuple[bytes, dict]] = []
        self.parts = [bytearray() for _ in self.cols]

    def add(self, record: bytes, blobs: dict | None = None) -> None:
        blobs = blobs or {}
        self.rows.append((record, blobs))
        tot_blob = 0
        for k, (c, v, at) in enumerate(_values(record, blobs, self.cols, self.null_bytes)):
            if c.distinct is not None:
                d = c.distinct
                if v in d:
                    d[v] += 1
                elif (len(d) + 1) * c.length > TREE_BUFF_LENGTH or len(d) + 1 > IS_OFFSET // 2 or \
                        (c.length == 1 and len(d) >= 1):
                    c.distinct = None
                else:
                    d[v] = 1
            lo, hi = 0, c.length
            ft = c.field_type
            if ft in (FIELD_NORMAL, FIELD_SKIP_ENDSPACE):
                s = v.rstrip(b" ")
                hi = len(s)
                if hi == 0:
                    c.empty_fields += 1
                    c.max_zero_fill = 0
                    continue
                n = c.length - hi
                c.tot_end_space += n
                if n < 8:
                    c.end_space[n] += 1
                c.max_end_space = max(c.max_end_space, n)
            if ft in (FIELD_NORMAL, FIELD_SKIP_PRESPACE):
                s = v[:hi].lstrip(b" ")
                lo = hi - len(s)
                if lo == hi:
                    c.empty_fields += 1
                    c.max_zero_fill = 0
                    continue
                c.tot_pre_space += lo
                if lo < 8:
                    c.pre_space[lo] += 1
                c.max_pre_space = max(c.max_pre_space, lo)
            body = None
            if ft in (FIELD_BLOB, FIELD_VARCHAR):
                body = _significant(c, v, at, blobs)
                c.max_length = max(c.max_length, len(body))
                if ft == FIELD_BLOB:
                    tot_blob += len(body)
            if c.length <= 8 and ft in (FIELD_NORMAL, FIELD_SKIP_ZERO):
                if not any(v):
                    c.zero_fields += 1
                    continue
                i = 0
                while i < c.max_zero_fill and v[hi - 1 - i] == 0:
                    i += 1
                if i < c.max_zero_fill:
                    c.max_zero_fill = i
            if ft in (FIELD_ZERO, FIELD_CHECK):
                continue
            self.parts[k] += body if body is not None else v[lo:hi]
        self.max_blob_length = max(self.max_blob_length, tot_blob)
        self.records += 1

    def _finish_counts(self) -> None:
        for c, p in zip(self.cols, self.parts):
            if p:
                c.counts = np.bincount(np.frombuffer(bytes(p), dtype=np.uint8), minlength=256).astype(np.int64)


def _test_space_compress(c: Column, records: int, max_space_length: int, space_counts, tot_space_count: int,
                         field_type: int) -> bool:
    """myisampack.c test_space_compress."""
    length_bits = max_bit(max_space_length)
    sp = ord(" ")
    space_count = int(c.counts[sp])
    c.counts[sp] += tot_space_count
    min_space_count = int(c.counts[sp])
    min_pack = calc_packed_length(c.counts)
    min_pos = -2
    c.counts[sp] = space_count
    new_length = c.bytes_packed + length_bits * records // 8
    if new_length + 1 < min_pack:
        min_pos, min_pack, min_space_count = -1, new_length, space_count
    skip = 0
    for i in range(8):
        if space_counts[i]:
            if i:
                c.counts[sp] += space_counts[i]
            skip += c.pre_space[i]
            new_length = calc_packed_length(c.counts) + (records + (records - skip) * (1 + length_bits)) // 8
            if new_length < min_pack:
                min_pos, min_pack, min_space_count = i, new_length, int(c.counts[sp])
    c.counts[sp] = min_space_count
    c.bytes_packed = min_pack
    if min_pos == -2:
        return False
    c.field_type = field_type
    c.length_bits = max_bit(max_space_length)
    if min_pos == -1:
        c.min_space = 0
    else:
        c.min_space = min_pos
        c.pack_type |= PACK_TYPE_SELECTED
    return True


def _distinct_tree(c: Column) -> Tree:
    # tree_walk(left_root_right) of int_tree: the values in compare_tree's (memcmp) order, the
    # unseen ones of a sample after them
    keys = sorted(c.distinct, key=lambda k: (isinstance(k, tuple), k))
    vals = [c.distinct[k] for k in keys]
    found = len(vals)
    char_bits = max_bit(found - 1)
    offset_bits = max_bit(found - 1) + 1
    values_bytes = found * c.length
    tpl = (1 + 15 + 16 + 5 + 5 + (char_bits + 1) * found + (offset_bits + 1) * (found - 2) + 7) // 8 + values_bytes
    if found < 2:
        # make_huff_tree's loop needs two elements: a tree of one value codes it in no bits
        # (write_huff_tree: elements <= 1 writes no entries)
        return Tree(code_len={v: 0 for v in c.distinct}, elements=found, tree_pack_length=tpl, bytes_packed=0,
                    header_bits=42, values_bytes=values_bytes)
    packed, lengths, max_offset = _huffman(vals)
    bits = 42 + found * (char_bits + 1) + (found - 2) * (max_bit(max_offset) + 1)
    return Tree(code_len=dict(zip(keys, lengths)), elements=found, tree_pack_length=tpl, bytes_packed=packed,
                header_bits=bits, values_bytes=values_bytes, height=max(lengths))


def _byte_tree(counts: np.ndarray) -> Tree:
    """make_huff_tree of a byte tree (at least two elements: a zero count beside a lone byte)."""
    syms = [int(i) for i in np.flatnonzero(counts)]
    vals = [int(counts[i]) for i in syms]
    first, last = (syms[0], syms[-1]) if syms else (0, 0)
    while len(syms) < 2:                 # a second element of no count, last in the queue (make_huff_tree)
        if last:
            first = last - 1
            syms.append(first)
        else:
            last = last + 1
            syms.append(last)
        vals.append(0)
    found = len(syms)
    char_bits = max_bit(last - first)
    offset_bits = max_bit(found - 1) + 1
    tpl = (9 + 9 + 5 + 5 + (char_bits + 1) * found + (offset_bits + 1) * (found - 2) + 7) // 8
    packed, lengths, max_offset = _huffman(vals)
    bits = 28 + found * (char_bits + 1) + (found - 2) * (max_bit(max_offset) + 1)
    return Tree(code_len=dict(zip(syms, lengths)), elements=found, tree_pack_length=tpl, bytes_packed=packed,
                header_bits=bits, height=max(lengths))


def check_counts(cols: list[Column], records: int) -> None:
    """myisampack.c check_counts: each column's field type and pack type."""
    sp = ord(" ")
    for c in cols:
        if c.field_type in (FIELD_BLOB, FIELD_VARCHAR):
            c.length_bits = max_bit(c.max_length)
        elif c.field_type == FIELD_CHECK:
            c.bytes_packed = 0
            c.counts[0] = 0
        else:
            c.field_type = FIELD_NORMAL
            c.pack_type = 0
            done = False
            if c.zero_fields or not records:
                if c.zero_fields == records:
                    c.field_type = FIELD_ZERO
                    c.bytes_packed = 0
                    c.counts[0] = 0
                    done = True
                else:
                    old_space = int(c.counts[sp])
                    c.counts[sp] += c.tot_end_space + c.tot_pre_space + c.empty_fields * c.length
                    old_length = calc_packed_length(c.counts) + records // 8
                    length = c.zero_fields * c.length
                    c.counts[0] += length
                    new_length = calc_packed_length(c.counts)
                    if old_length < new_length and c.length > 1:
                        c.field_type = FIELD_SKIP_ZERO
                        c.counts[0] -= length
                        c.bytes_packed = old_length - records // 8
                        done = True
                    else:
                        c.counts[sp] = old_space
            if not done:
                c.bytes_packed = calc_packed_length(c.counts)
                if c.empty_fields:
                    if c.length > 2 and c.empty_fields + (records - c.empty_fields) * \
                            (1 + max_bit(max(c.max_pre_space, c.max_end_space))) < records * max_bit(c.length):
                        c.pack_type |= PACK_TYPE_SPACE_FIELDS
                    else:
                        length = c.empty_fields * c.length
                        if c.tot_end_space or not c.tot_pre_space:
                            c.tot_end_space += length
                            c.max_end_space = c.length
                            if c.length < 8:
                                c.end_space[c.length] += c.empty_fields
                        if c.tot_pre_space:
                            c.tot_pre_space += length
                            c.max_pre_space = c.length
                            if c.length < 8:
                                c.pre_space[c.length] += c.empty_fields
                found = False
                if c.tot_end_space:
                    c.counts[sp] += c.tot_pre_space
                    found = _test_space_compress(c, records, c.max_end_space, c.end_space, c.tot_end_space,
                                                 FIELD_SKIP_ENDSPACE)
                    if not found:
                        c.counts[sp] -= c.tot_pre_space
                if not found and c.tot_pre_space:
                    _test_space_compress(c, records, c.max_pre_space, c.pre_space, c.tot_pre_space,
                                         FIELD_SKIP_PRESPACE)
        # found_pack
        if c.max_zero_fill and c.field_type in (FIELD_NORMAL, FIELD_SKIP_ZERO):
            c.counts[0] -= c.max_zero_fill * (records - c.zero_fields if c.field_type == FIELD_SKIP_ZERO else records)
            c.pack_type |= PACK_TYPE_ZERO_FILL
            c.bytes_packed = calc_packed_length(c.counts)
        if c.distinct is not None:
            if c.distinct and c.field_type not in (FIELD_BLOB, FIELD_VARCHAR, FIELD_CHECK):
                t = _distinct_tree(c)
                if t.bytes_packed + t.tree_pack_length < c.bytes_packed:
                    c.field_type = FIELD_CONSTANT if t.elements == 1 else FIELD_INTERVALL
                    c.pack_type = 0
                    c.tree = t
                else:
                    c.distinct = None
            else:
                c.distinct = None


def make_trees(cols: list[Column]) -> list[Tree]:
    """make_huff_trees and join_same_trees: the trees written (each column's ``tree`` set)."""
    for c in cols:
        if c.distinct is None or c.tree is None:
            c.distinct = None
            c.tree = _byte_tree(c.counts)
    trees: list[Tree] = []
    done = set()
    for i, c in enumerate(cols):
        if id(c.tree) in done:
            continue
        done.add(id(c.tree))
        trees.append(c.tree)
        if c.distinct is not None:
            continue
        for j in range(i + 1, len(cols)):
            d = cols[j]
            if id(d.tree) in done or d.distinct is not None:
                continue
            joined = c.counts + d.counts
            if calc_packed_length(joined, True) <= c.tree.bytes_packed + d.tree.bytes_packed + \
                    c.tree.tree_pack_length + d.tree.tree_pack_length + ALLOWED_JOIN_DIFF:
                c.counts = joined
                old = c.tree
                new = _byte_tree(joined)
                for k in cols:
                    if k.tree is old or k is d:
                        k.tree = new
                c.tree = new
                trees[-1] = new
                done.discard(id(old))
                done.add(id(new))
                # d.counts stays its own: a joined column codes its bytes with the joined tree
    return trees


def _space_run(v: bytes, end: bool) -> int:
    return len(v) - len(v.rstrip(b" ") if end else v.lstrip(b" "))


def _code_bits(tree: Tree, data: bytes) -> int:
    """The Huffman bits of ``data``'s bytes (a byte the sampled rows did not have: the tree's
    longest code and one more)."""
    if tree.table is None:
        tree.table = bytes(min(255, tree.code_len.get(b, tree.height + 1)) for b in range(256))
    return sum(data.translate(tree.table))


def row_bits(cols: list[Column], record: bytes, blobs: dict, start: int) -> tuple[int, int]:
    """compress_isam_file for one row: (its bits, its blobs' bytes)."""
    bits = 0
    tot_blob = 0
    at = start
    for c in cols:
        v = record[at:at + c.length]
        a = at
        at += c.length
        code = c.tree.code_len
        if c.pack_type & PACK_TYPE_SPACE_FIELDS:
            bits += 1
            if not v.strip(b" "):
                continue
        mzf = c.max_zero_fill if c.pack_type & PACK_TYPE_ZERO_FILL else 0
        body = v[:c.length - mzf]
        ft = c.field_type
        if ft == FIELD_SKIP_ZERO:
            bits += 1
            if not any(body):
                continue
            ft = FIELD_NORMAL
        if ft == FIELD_NORMAL:
            bits += _code_bits(c.tree, body)
        elif ft in (FIELD_SKIP_ENDSPACE, FIELD_SKIP_PRESPACE):
            n = _space_run(body, ft == FIELD_SKIP_ENDSPACE)
            if c.pack_type & PACK_TYPE_SELECTED:
                bits += 1
                if n > c.min_space:
                    bits += c.length_bits
                else:
                    n = 0
            else:
                bits += c.length_bits
            keep = body[:len(body) - n] if ft == FIELD_SKIP_ENDSPACE else body[n:]
            bits += _code_bits(c.tree, keep)
        elif ft == FIELD_INTERVALL:
            bits += code.get(v, c.tree.height + 1)
        elif ft in (FIELD_BLOB, FIELD_VARCHAR):
            s = _significant(c, v, a, blobs)
            bits += 1
            if s:
                bits += c.length_bits + _code_bits(c.tree, s)
                if ft == FIELD_BLOB:
                    tot_blob += len(s)
    return bits, tot_blob


@dataclass
class PackedSize:
    """What :func:`packed_size` found."""

    file_bytes: int               # the data file as the packer writes it (suffix included)
    header_bytes: int             # HEAD_LENGTH, the column infos and the trees
    rows_bytes: int               # the rows, their lengths included
    rows: int
    row_bytes: np.ndarray         # each row's bytes, its lengths included
    field_types: list[int]
    pack_types: list[int]
    trees: int
    #: a sample's distinct values the table has beyond the sample's (their bytes in the header, estimated)
    unseen_bytes: int = 0
    #: the most the file can take: every row at the longest the columns' codes make it
    #: (:func:`max_row_bytes`; a sample's longest VARCHAR / BLOB the longest)
    bound_bytes: int = 0


def max_row_bytes(cols: list[Column], null_bytes: int, max_blob_length: int, has_blobs: bool, version: int) -> int:
    """The longest row the columns' codes can make (compress_isam_file's ``max_calc_length``,
    with the flag bits it leaves out: a space field's, a SKIP_ZERO column's, a selected space
    count's), its length bytes included."""
    bits = 0
    for c in cols:
        if c.field_type in (FIELD_CONSTANT, FIELD_ZERO, FIELD_CHECK):
            continue
        h = c.tree.height
        mzf = c.max_zero_fill if c.pack_type & PACK_TYPE_ZERO_FILL else 0
        bits += 1 if c.pack_type & PACK_TYPE_SPACE_FIELDS else 0
        if c.field_type == FIELD_INTERVALL:
            bits += h
        elif c.field_type in (FIELD_BLOB, FIELD_VARCHAR):
            bits += h * c.max_length + c.length_bits + 1
        else:
            bits += (c.length - mzf) * h + c.length_bits + (1 if c.field_type == FIELD_SKIP_ZERO else 0) + \
                (1 if c.pack_type & PACK_TYPE_SELECTED else 0)
    n = null_bytes + (bits + 7) // 8
    return n + calc_pack_length(n, version) + (calc_pack_length(max_blob_length, version) if has_blobs else 0)


def _scale_distinct(c: Column, f: float) -> int:
    """A sampled column's distinct values scaled to the table: the seen ones' counts by ``f``,
    the values the sample did not see estimated from the ones it saw once and twice
    (bias-corrected Chao1: f1 (f1 - 1) / (2 (f2 + 1))), each counted once; the column's tree
    given up as ``get_statistic`` gives it up when they would not fit.  The unseen values."""
    d = c.distinct
    f1 = sum(1 for v in d.values() if v == 1)
    f2 = sum(1 for v in d.values() if v == 2)
    unseen = int(math.ceil(f1 * (f1 - 1) / (2 * (f2 + 1)))) if f > 1 else 0
    total = len(d) + unseen
    if total * c.length > TREE_BUFF_LENGTH or total > IS_OFFSET // 2 or (c.length == 1 and total > 1):
        c.distinct = None
        return 0
    scaled = {k: max(1, int(round(v * f))) for k, v in d.items()}
    for i in range(unseen):
        scaled[("unseen", i)] = 1
    c.distinct = scaled
    return unseen


def packed_size(stats: PackStats, rows_total: int | None = None) -> PackedSize:
    """The packed data file of the rows ``stats`` was given (``rows_total``: the table's rows,
    when those were a sample of it: the counts scaled to them, the rows' mean taken for the
    rest; the distinct values as the sample has them)."""
    stats._finish_counts()
    n = stats.records
    total = n if rows_total is None else max(int(rows_total), n)
    cols = stats.cols
    unseen_values: dict[int, int] = {}
    if total != n and n:
        f = total / n
        for c in cols:
            c.counts = np.round(c.counts * f).astype(np.int64)
            for name in ("empty_fields", "zero_fields", "tot_end_space", "tot_pre_space"):
                setattr(c, name, int(round(getattr(c, name) * f)))
            c.end_space = [int(round(x * f)) for x in c.end_space]
            c.pre_space = [int(round(x * f)) for x in c.pre_space]
            if c.distinct is not None:
                unseen_values[id(c)] = _scale_distinct(c, f)
    check_counts(cols, total)
    unseen = sum(n * c.length for c in cols if c.distinct is not None for n in [unseen_values.get(id(c), 0)])
    trees = make_trees(cols)
    has_blobs = any(c.field_type == FIELD_BLOB for c in cols)
    nb = stats.null_bytes
    sizes = np.zeros(n, dtype=np.int64)
    for k, (rec, blobs) in enumerate(stats.rows):
        bits, tot_blob = row_bits(cols, rec, blobs, nb)
        length = nb + (bits + 7) // 8
        sizes[k] = length + calc_pack_length(length, stats.version) + \
            (calc_pack_length(tot_blob, stats.version) if has_blobs else 0)
    tree_bits = max_bit(len(trees) - 1 if trees else 0)
    info = (len(cols) * (5 + 6 + 5 + tree_bits) + 7) // 8
    tree_bytes = sum((t.header_bits + 7) // 8 + t.values_bytes for t in trees)
    header = HEAD_LENGTH + info + tree_bytes
    rows_bytes = int(sizes.sum()) if total == n else int(round(sizes.mean() * total)) if n else 0
    return PackedSize(file_bytes=header + rows_bytes + MEMMAP_EXTRA_MARGIN, header_bytes=header,
                      rows_bytes=rows_bytes, rows=total, row_bytes=sizes,
                      field_types=[c.field_type for c in cols], pack_types=[c.pack_type for c in cols],
                      trees=len(trees), unseen_bytes=int(unseen),
                      bound_bytes=header + total * max_row_bytes(cols, nb, stats.max_blob_length, has_blobs,
                                                                 stats.version) + MEMMAP_EXTRA_MARGIN)


def interval(p: PackedSize, sampled: int) -> tuple[float, float]:
    """A 95% interval of the file's bytes: none when every row was read (the figure is the
    packer's: the same statistics, trees and ties); for a sample of ``sampled`` of ``p.rows``
    rows the rows' mean's (1.96 standard errors, finite population corrected), plus the unseen
    distinct values' bytes (an estimate, taken whole) and SAMPLE_CODE_ERROR of the rows' bytes
    (the sample's counts code the rows a little otherwise than the table's would)."""
    if sampled >= p.rows or sampled < 2:
        return float(p.file_bytes), float(p.file_bytes)
    sd = float(np.std(p.row_bytes, ddof=1))
    fpc = math.sqrt(max(0.0, 1 - sampled / p.rows))
    half = 1.96 * sd / math.sqrt(sampled) * p.rows * fpc + p.unseen_bytes + SAMPLE_CODE_ERROR * p.rows_bytes
    return max(0.0, p.file_bytes - half), min(float(p.bound_bytes or math.inf), p.file_bytes + half)

"""Leaf partitions (basement nodes) and the leaf entries in them.

Source: PerconaFT ``ft/serialize/ft_node-serialize.cc``
(``deserialize_ftnode_partition``), ``ft/bndata.cc``
(``bn_data::deserialize_from_rbuf``, ``initialize_from_separate_keys_and_vals``),
``ft/leafentry.h`` and ``ft/ule.cc`` (``leafentry_rest_memsize``,
``uxr_unpack_*``).  A decompressed basement is::

    u8 FTNODE_PARTITION_DMT_LEAVES (0xAA), u32 num_entries,
    u32 key_data_size, u32 val_data_size, u32 fixed_klpair_length,
    u8 all_keys_same_length, u8 keys_vals_separate,
    data, u32 x1764 of everything before it

keys_vals_separate = 1: num_entries x fixed_klpair_length key records
(u32 leafentry offset + key), then val_data_size bytes of leaf entries
without keys.  keys_vals_separate = 0: packed leaf entries with their keys.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Iterator

from .node import FTNODE_PARTITION_DMT_LEAVES
from .wire import FormatError, u32
from .x1764 import x1764

# leafentry.h
LE_CLEAN = 0
LE_MVCC = 1
# ule-internal.h: the top bit of a committed record's length word marks an insert
INSERT_LENGTH_BIT = 1 << 31
# ule-internal.h: XR_INSERT = 1, XR_DELETE = 2, XR_PLACEHOLDER = 3
XR_INSERT = 1
# bndata.h: HEADER_LENGTH of the v26+ basement header
BASEMENT_HEADER_LENGTH = 4 + 4 + 4 + 1 + 1
TXNID_SIZE = 8


@dataclass
class LeafEntry:
    """One leaf entry: its key and the value a reader sees (None = deleted)."""

    key: bytes
    value: bytes | None
    mvcc: bool
    committed: int = 1
    provisional: int = 0


@dataclass
class Basement:
    """One decoded basement node."""

    num_entries: int
    key_data_size: int
    val_data_size: int
    fixed_klpair_length: int
    keys_vals_separate: bool
    checksum_ok: bool
    entries: list[LeafEntry] = field(default_factory=list)

    @property
    def clean(self) -> int:
        return sum(1 for e in self.entries if not e.mvcc)

    @property
    def mvcc(self) -> int:
        return sum(1 for e in self.entries if e.mvcc)


def read_basement(raw: bytes, offset: int = 0) -> Basement:
    """Read a decompressed leaf partition (``bn_data``) starting at ``offset``.

    Raises FormatError naming the offset inside ``raw`` when the bytes do not
    add up (every entry is bounds-checked; nothing is allocated from a count).
    """
    raw = bytes(raw[offset:])
    if len(raw) < 5 + BASEMENT_HEADER_LENGTH + 4:
        raise FormatError("basement shorter than its header", offset)
    if raw[0] != FTNODE_PARTITION_DMT_LEAVES:
        raise FormatError(f"basement type byte 0x{raw[0]:02x}, expected 0xaa", offset)
    n, ksize, vsize, fixed = struct.unpack_from("<IIII", raw, 1)
    same, separate = raw[17], raw[18]
    end = len(raw) - 4
    ok = x1764(raw[:end]) == u32(raw, end)
    bn = Basement(n, ksize, vsize, fixed, bool(separate), ok)
    p = 19
    if separate:
        if (n and fixed < 4) or p + n * fixed + vsize != end or ksize != n * fixed:
            raise FormatError(f"basement sizes do not add up ({n} x {fixed} + {vsize})", offset + 1)
        vbase = p + n * fixed
        for i in range(n):
            k = p + i * fixed
            le_off = u32(raw, k)
            key = raw[k + 4:k + fixed]
            if le_off >= vsize:
                raise FormatError(f"leaf entry {i} offset {le_off} past the value area", offset + k)
            le, _ = _read_leafentry(raw, vbase + le_off, None, end)
            le.key = key
            bn.entries.append(le)
    else:
        for i in range(n):
            le, p = _read_leafentry(raw, p, True, end)
            bn.entries.append(le)
        if p != end:
            raise FormatError(f"basement has {end - p} bytes after its {n} entries", offset + p)
    return bn


def _need(raw: bytes, p: int, n: int, end: int) -> None:
    if p + n > end:
        raise FormatError("leaf entry overruns its basement", p)


def _read_leafentry(raw: bytes, p: int, with_key: bool | None, end: int) -> tuple[LeafEntry, int]:
    """Read one leaf entry at ``p`` (``LEAFENTRY``); with_key: the packed layout
    with a u32 key length and the key inline.  Returns (entry, next offset)."""
    _need(raw, p, 1, end)
    t = raw[p]
    p += 1
    keylen = 0
    if with_key:
        _need(raw, p, 4, end)
        keylen = u32(raw, p)
        p += 4
    if t == LE_CLEAN:
        _need(raw, p, 4, end)
        vlen = u32(raw, p)
        p += 4
        _need(raw, p, keylen + vlen, end)
        key = raw[p:p + keylen]
        p += keylen
        val = raw[p:p + vlen]
        return LeafEntry(key, val, False), p + vlen
    if t != LE_MVCC:
        raise FormatError(f"leaf entry type {t} is neither clean nor MVCC", p - 1)
    _need(raw, p, 5, end)
    ncx = u32(raw, p)
    npx = raw[p + 4]
    p += 5
    if ncx < 1:
        raise FormatError("MVCC leaf entry without a committed record", p - 5)
    _need(raw, p, keylen, end)
    key = raw[p:p + keylen]
    p += keylen
    # ule.cc leafentry_rest_memsize: txnids, lengths inner to outer, data, nested provisional records
    p += (TXNID_SIZE if npx else 0) + (ncx - 1) * TXNID_SIZE
    nlen = (1 if npx else 0) + ncx
    _need(raw, p, 4 * nlen, end)
    lengths = [u32(raw, p + 4 * i) for i in range(nlen)]
    p += 4 * nlen
    first = lengths[0]
    vals_total = sum(x & ~INSERT_LENGTH_BIT for x in lengths if x & INSERT_LENGTH_BIT)
    _need(raw, p, vals_total, end)
    value = raw[p:p + (first & ~INSERT_LENGTH_BIT)] if first & INSERT_LENGTH_BIT else None
    p += vals_total
    if npx > 1:
        # outermost-but-one .. innermost provisional records
        for j in range(npx - 1):
            if j > 0:
                p += TXNID_SIZE
            _need(raw, p, 1, end)
            rt = raw[p]
            p += 1
            if rt == XR_INSERT:
                _need(raw, p, 4, end)
                vl = u32(raw, p)
                p += 4 + vl
                _need(raw, p, 0, end)
        p += TXNID_SIZE
        _need(raw, p, 0, end)
    return LeafEntry(key, value, True, ncx, npx), p


def iter_entries(raw: bytes) -> Iterator[LeafEntry]:
    """Leaf entries of a decompressed basement."""
    yield from read_basement(raw).entries

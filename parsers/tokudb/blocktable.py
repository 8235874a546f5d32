"""The block translation table (BTT): block number -> (disk offset, size).

Source: PerconaFT ``ft/serialize/block_table.cc`` / ``block_table.h``
(``block_table::_deserialize_translation``, ``internal_fragmentation``):

* u64 smallest_never_used_blocknum (N, the number of entries)
* u64 blocknum_freelist_head (-1 when empty)
* N x (u64 diskoff, u64 size)
* u32 x1764 of everything before it.

Entry 0 is ``RESERVED_BLOCKNUM_NULL``, 1 the table itself, 2 the descriptor;
tree nodes start at 3.  ``diskoff_unused`` (-2) with size 0 is a block number
without a disk block; size ``size_is_free`` (-1) marks a free-list entry.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .header import BLOCK_ALLOCATOR_HEADER_RESERVE
from .wire import FormatError, s64
from .x1764 import x1764

# block_table.h
RESERVED_BLOCKNUM_NULL = 0
RESERVED_BLOCKNUM_TRANSLATION = 1
RESERVED_BLOCKNUM_DESCRIPTOR = 2
RESERVED_BLOCKNUMS = 3
# block_table.cc: static const DISKOFF diskoff_unused = -2; size_is_free = -1
DISKOFF_UNUSED = -2
SIZE_IS_FREE = -1
#: both header copies sit before the first block (block_allocator.h)
HEADER_BYTES = 2 * BLOCK_ALLOCATOR_HEADER_RESERVE

#: translation tables larger than this are refused (16 bytes per block: 128M blocks)
MAX_TRANSLATION_BYTES = 2 << 30

BTT_DTYPE = np.dtype([("blocknum", "<i8"), ("offset", "<i8"), ("size", "<i8")])


@dataclass
class BlockTable:
    """The checkpointed translation table of one file."""

    offset: int
    size: int
    smallest_never_used_blocknum: int
    blocknum_freelist_head: int
    entries: np.ndarray                 # BTT_DTYPE, one row per block number
    checksum: int
    checksum_ok: bool
    problems: list[tuple[int, str]] = field(default_factory=list)   # (file offset, message)

    @property
    def used(self) -> np.ndarray:
        """Entries that occupy disk space (size > 0), as tokuftdump iterates them."""
        return self.entries[self.entries["size"] > 0]

    @property
    def free_entries(self) -> int:
        """Block numbers on the free list (size ``size_is_free``)."""
        return int((self.entries["size"] == SIZE_IS_FREE).sum())

    @property
    def unused_entries(self) -> int:
        """Block numbers without a disk block (``diskoff_unused``, size 0), entry 0 included."""
        return int(((self.entries["offset"] == DISKOFF_UNUSED) & (self.entries["size"] == 0)).sum())

    def fragmentation(self) -> dict:
        """``tokuftdump --fragmentation``: used / total (end of the last block) / frag.

        Source: ``block_table::internal_fragmentation`` -- every used block
        (reserved ones included) adds its size to used; total is the highest
        offset+size.
        """
        u = self.used
        used = int(u["size"].sum()) if len(u) else 0
        total = int((u["offset"] + u["size"]).max()) if len(u) else 0
        frag = total - used
        return {"used_size": used, "total_size": total, "fragsizes": frag,
                "fragmentation": round(100.0 * frag / total, 1) if total else 0.0}


def read_block_table(buf, offset: int, size: int, file_size: int) -> BlockTable:
    """Read the translation table at ``offset`` (``size`` bytes, from the header).

    Raises FormatError when the table itself cannot be read.  Entries pointing
    outside the file, overlapping the header slots or each other are kept and
    listed in ``problems`` (with the offset of the entry) so the caller can
    skip them and go on.
    """
    if size < 20 or offset < HEADER_BYTES or offset + size > file_size or offset + size > len(buf):
        raise FormatError(f"translation table ({size} bytes) lies outside the file "
                          f"({file_size} bytes) or in the header area", offset)
    if size > MAX_TRANSLATION_BYTES:
        raise FormatError(f"translation table of {size} bytes is implausibly large, not read", offset)
    b = bytes(buf[offset:offset + size])
    n = s64(b, 0)
    head = s64(b, 8)
    if n < RESERVED_BLOCKNUMS or 16 + 16 * n + 4 != size:
        raise FormatError(f"translation table claims {n} entries, which does not fit its {size} bytes",
                          offset)
    raw = np.frombuffer(b, dtype="<u4", count=4 * n, offset=16).reshape(n, 2, 2)
    vals = (raw[:, :, 0].astype(np.uint64) << np.uint64(32)) | raw[:, :, 1].astype(np.uint64)
    vals = vals.view(np.int64)
    entries = np.zeros(n, dtype=BTT_DTYPE)
    entries["blocknum"] = np.arange(n)
    entries["offset"] = vals[:, 0]
    entries["size"] = vals[:, 1]
    stored = int.from_bytes(b[size - 4:size], "little")
    bt = BlockTable(offset=offset, size=size, smallest_never_used_blocknum=n,
                    blocknum_freelist_head=head, entries=entries, checksum=stored,
                    checksum_ok=(x1764(memoryview(b)[:size - 4]) == stored))
    # sanity of every entry that claims disk space
    sz = entries["size"]
    off = entries["offset"]
    used = sz > 0
    bad = used & ((off < HEADER_BYTES) | (off + sz > file_size) | (off < 0))
    for i in np.flatnonzero(bad):
        bt.problems.append((offset + 16 + 16 * int(i),
                            f"block {int(i)} at offset {int(off[i])} size {int(sz[i])} lies outside "
                            f"the file ({file_size} bytes) or in the header area"))
    weird = (~used) & (sz != 0) & (sz != SIZE_IS_FREE)
    for i in np.flatnonzero(weird):
        bt.problems.append((offset + 16 + 16 * int(i), f"block {int(i)} has a negative size {int(sz[i])}"))
    ok = used & ~bad
    idx = np.flatnonzero(ok)
    if len(idx) > 1:
        order = idx[np.argsort(off[idx], kind="stable")]
        ends = off[order] + sz[order]
        overl = np.flatnonzero(off[order][1:] < ends[:-1])
        for j in overl[:20]:
            a, c = int(order[j]), int(order[j + 1])
            bt.problems.append((offset + 16 + 16 * c, f"block {c} overlaps block {a}"))
    e1 = entries[RESERVED_BLOCKNUM_TRANSLATION]
    if int(e1["offset"]) != offset or int(e1["size"]) != size:
        bt.problems.append((offset + 32, "entry 1 does not describe the translation table itself"))
    return bt


@dataclass
class Descriptor:
    """Block 2: the row descriptor the MySQL handler stores (``ft-serialize.cc``)."""

    offset: int
    size: int
    dbt: bytes
    checksum_ok: bool


def read_descriptor(buf, offset: int, size: int) -> Descriptor:
    """Read the descriptor block: u32 length L, L bytes, u32 x1764 of the L+4 bytes."""
    if size < 8 or offset + size > len(buf):
        raise FormatError(f"descriptor block of {size} bytes does not fit", offset)
    b = bytes(buf[offset:offset + size])
    n = int.from_bytes(b[:4], "little")
    if n + 8 > size:
        raise FormatError(f"descriptor claims {n} bytes in a {size}-byte block", offset)
    stored = int.from_bytes(b[4 + n:8 + n], "little")
    return Descriptor(offset, size, b[4:4 + n], x1764(b[:4 + n]) == stored)

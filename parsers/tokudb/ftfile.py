"""One fractal-tree file read from its headers: header slots, translation table,
descriptor and every node's headers.

Nodes are the blocks >= 3 of the checkpointed translation table that occupy
disk space -- the same set ``tokuftdump --summary`` iterates
(``block_table::iterate(TRANSLATION_CHECKPOINTED, ..., data_only, used_only)``
in ``tools/tokuftdump.cc``).  Nothing here decompresses a partition payload.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .blocktable import (RESERVED_BLOCKNUM_DESCRIPTOR, RESERVED_BLOCKNUMS, BlockTable, Descriptor,
                         read_block_table, read_descriptor)
from .header import FtHeader, HeaderSlots, read_header_slots
from .node import LEAF_MAGIC, MAX_NODE_BLOCK, NONLEAF_MAGIC, ROLLBACK_MAGIC, Node, read_node_header, read_node
from .wire import FormatError


@dataclass
class FtFile:
    """What the headers of one fractal-tree file say."""

    size: int
    slots: HeaderSlots
    header: FtHeader | None = None
    block_table: BlockTable | None = None
    descriptor: Descriptor | None = None
    nodes: dict[int, Node] = field(default_factory=dict)
    #: rollback-log blocks ("tokuroll": tokudb.rollback only), (blocknum, offset, size), not decoded
    rollback_blocks: list[tuple[int, int, int]] = field(default_factory=list)
    errors: list[tuple[int | None, str]] = field(default_factory=list)
    #: True when nodes were found by searching for their magic (no translation table)
    recovered: bool = False

    @property
    def height(self) -> int | None:
        hs = [n.height for n in self.nodes.values() if n.height is not None]
        return max(hs) if hs else None


def read_ft_file(buf, size: int, verify: bool = True, entries: bool = True,
                 check: Callable[[], None] | None = None,
                 data_ranges: list[tuple[int, int]] | None = None) -> FtFile:
    """Read the headers of a fractal-tree file held in ``buf`` (mmap or bytes).

    Problems are collected in ``errors`` as (offset, message); reading goes on
    past every bad node.  ``check`` is called every 64 nodes (cancel hook).
    ``data_ranges`` (the file minus its holes) bounds the search for nodes by
    their magic when no translation table can be read.
    """
    slots = read_header_slots(buf)
    ft = FtFile(size=size, slots=slots)
    ft.errors.extend(slots.errors)
    h = slots.active
    if h is None:
        ft.errors.append((0, "no valid header slot"))
        _recover_nodes(buf, size, ft, verify, entries, check, data_ranges)
        return ft
    ft.header = h
    try:
        bt = read_block_table(buf, h.translation_offset, h.translation_size, size)
    except FormatError as e:
        ft.errors.append((e.offset, f"translation table: {e}"))
        # partial results: the other slot's (older) checkpoint may still be whole,
        # e.g. in a file truncated after it
        bt = None
        for older in slots.slots.values():
            if older is None or older is h or not older.checksum_ok:
                continue
            try:
                bt = read_block_table(buf, older.translation_offset, older.translation_size, size)
            except FormatError:
                continue
            ft.errors.append((older.slot_offset, f"using the older header slot at {older.slot_offset} "
                              f"(checkpoint {older.checkpoint_count}) and its translation table: "
                              f"an older view of the tree"))
            ft.header = older
            break
        if bt is None:
            _recover_nodes(buf, size, ft, verify, entries, check, data_ranges)
            return ft
    ft.block_table = bt
    if not bt.checksum_ok:
        ft.errors.append((bt.offset + bt.size - 4, "translation table checksum mismatch"))
    ft.errors.extend(bt.problems)
    bad = {int(o) for o, _ in bt.problems}
    entries_arr = bt.entries
    d = entries_arr[RESERVED_BLOCKNUM_DESCRIPTOR] if len(entries_arr) > RESERVED_BLOCKNUM_DESCRIPTOR else None
    if d is not None and int(d["size"]) > 0 and bt.offset + 16 + 16 * RESERVED_BLOCKNUM_DESCRIPTOR not in bad:
        try:
            ft.descriptor = read_descriptor(buf, int(d["offset"]), int(d["size"]))
            if not ft.descriptor.checksum_ok:
                ft.errors.append((int(d["offset"]), "descriptor checksum mismatch"))
        except FormatError as e:
            ft.errors.append((e.offset, f"descriptor: {e}"))
    used = bt.used
    for k, (bn, off, sz) in enumerate(used.tolist()):
        if bn < RESERVED_BLOCKNUMS:
            continue
        if check is not None and k % 64 == 0:
            check()
        if bt.offset + 16 + 16 * bn in bad:
            continue            # already reported: outside the file or in the header area
        try:
            node = read_node(buf, off, sz, bn, verify=verify, entries=entries)
        except FormatError as e:
            if bytes(buf[off:off + 8]) == ROLLBACK_MAGIC:
                ft.rollback_blocks.append((bn, off, sz))
            else:
                ft.errors.append((e.offset, str(e)))
            continue
        ft.nodes[bn] = node
        ft.errors.extend(node.errors)
    _fill_heights(ft)
    return ft


#: nodes start on the block allocator's alignment (``BlockAllocator::BLOCK_ALLOCATOR_ALIGNMENT``
#: is 4096 in ft/serialize/block_allocator.h; BTT sizes are 512 multiples, so search every 512)
_NODE_SEARCH_STEP = 512
#: the two header slots (``BLOCK_ALLOCATOR_TOTAL_HEADER_RESERVE``) come first
_FIRST_NODE_OFFSET = 2 * 4096


#: bytes searched per step (copied from the map, so memory stays bounded)
_SEARCH_CHUNK = 64 << 20


def data_ranges_from_holes(holes: list[tuple[int, int]] | None, size: int) -> list[tuple[int, int]]:
    """The [start, end) ranges of a file that are not holes."""
    out, pos = [], 0
    for off, ln in sorted(holes or []):
        if off > pos:
            out.append((pos, min(off, size)))
        pos = max(pos, off + ln)
    if pos < size:
        out.append((pos, size))
    return [(a, b) for a, b in out if b > a]


def find_node_offsets(buf, size: int, data_ranges: list[tuple[int, int]] | None = None,
                      check: Callable[[], None] | None = None) -> list[int]:
    """Offsets (512-aligned, past the header slots, outside holes) where a leaf or
    internal node magic starts: the fallback when no translation table can be
    read.  Searches in bounded chunks; ``check`` (cancel hook) runs per chunk."""
    magics = [np.frombuffer(m, dtype=np.uint8) for m in (LEAF_MAGIC, NONLEAF_MAGIC)]
    out: list[int] = []
    step = _NODE_SEARCH_STEP
    for lo, hi in (data_ranges if data_ranges is not None else [(0, size)]):
        start = -(-max(lo, _FIRST_NODE_OFFSET) // step) * step
        hi = min(hi, size)
        for c0 in range(start, hi - 7, _SEARCH_CHUNK):
            if check is not None:
                check()
            c1 = min(hi, c0 + _SEARCH_CHUNK)
            arr = np.frombuffer(bytes(buf[c0:min(c1 + 7, size)]), dtype=np.uint8)
            rel = np.arange(0, min(c1 - c0, len(arr) - 7), step, dtype=np.int64)
            if not len(rel):
                continue
            heads = arr[rel[:, None] + np.arange(8)]
            hits = np.zeros(len(rel), dtype=bool)
            for m in magics:
                hits |= (heads == m).all(axis=1)
            out.extend((rel[hits] + c0).tolist())
    return out


def _recover_nodes(buf, size: int, ft: FtFile, verify: bool, entries: bool,
                   check: Callable[[], None] | None, data_ranges: list[tuple[int, int]] | None) -> None:
    """Partial results without a translation table: read every node found by its
    magic, sized from its own partition table.  Block numbers are unknown; the
    node is keyed by its offset / 512."""
    found = 0
    end_prev = 0
    for k, off in enumerate(find_node_offsets(buf, size, data_ranges, check)):
        if check is not None and k % 64 == 0:
            check()
        if off < end_prev:
            continue            # a magic inside the node before: payload bytes, not a node
        try:
            head = read_node_header(buf, off, min(MAX_NODE_BLOCK, size - off))
            used = max([p.start + p.disk_size for p in head.partitions] + [head.header_len])
            nsize = min(-(-used // _NODE_SEARCH_STEP) * _NODE_SEARCH_STEP, size - off)
            node = read_node(buf, off, nsize, off // _NODE_SEARCH_STEP, verify=verify, entries=entries)
        except FormatError:
            continue
        ft.nodes[node.blocknum] = node
        ft.errors.extend(node.errors)
        end_prev = off + nsize
        found += 1
    ft.recovered = True
    ft.errors.append((None, f"no translation table could be read: {found} node(s) recovered by "
                            f"searching the file for node headers (block numbers unknown; each is "
                            f"named by its offset)"))
    _fill_heights(ft)


def _fill_heights(ft: FtFile) -> None:
    """Internal nodes whose node info could not be read get their height from
    their parent (height - 1) where the parent is known."""
    changed = True
    while changed:
        changed = False
        for n in ft.nodes.values():
            if n.height and n.children:
                for c in n.children:
                    ch = ft.nodes.get(c)
                    if ch is not None and ch.height is None:
                        ch.height = n.height - 1
                        changed = True

"""The key blocks of a ``.MYI`` file (storage/myisam/mi_page.c, mi_search.c): from
``keystart`` on, blocks of each key's ``block_length``.  A block starts with two bytes
(mi_putint: the bytes used, header included, in the low 15 bits; bit 15 set on a node,
mi_test_if_nod), a node holds ``key_reflength``-byte child pointers counted in
MI_MIN_KEY_BLOCK_LENGTH units (_mi_kpos) before each key and after the last, and a
deleted block holds the next deleted block's offset in its first 8 bytes, from
``state.key_del[block_size_index]`` on (_mi_dispose).

Owners and levels come from a walk of each key's tree from its root where the keys have
a fixed stride (mi_open.c setup_key_functions: neither HA_VAR_LENGTH_KEY nor
HA_BINARY_PACK_KEY: an entry is ``keylength + nod_flag`` bytes, _mi_get_static_key);
the blocks of packed keys are classified by their own header (leaf/node, fill), their
root only named.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model import UNIT_FREE, UNIT_LEAF, empty_units
from .state import MI_MIN_KEY_BLOCK_LENGTH, MyiHeader, be

HA_OFFSET_ERROR = 0xFFFFFFFFFFFFFFFF

KIND_HEADER, KIND_LEAF, KIND_NODE, KIND_FREE, KIND_UNREACHED = 0, 1, 2, 3, 4
KIND_NAMES = {KIND_HEADER: "MYI_HEADER", KIND_LEAF: "KEY_LEAF", KIND_NODE: "KEY_NODE",
              KIND_FREE: "KEY_DELETED", KIND_UNREACHED: "KEY_NOT_REACHED"}
UNKNOWN_LEVEL = 0xFFFF
MAX_BLOCKS_WALKED = 2_000_000


@dataclass
class KeyBlocks:
    """The key blocks of one index file, as units, and their counts."""

    units: np.ndarray
    level: np.ndarray
    records: np.ndarray
    blocks: int
    leaf_blocks: int
    node_blocks: int
    deleted_blocks: int
    deleted_bytes: int
    per_key: list[dict]
    problems: list[tuple[str, int]]


def _walk_static(buf, h: MyiHeader, k: int, seen: dict, problems) -> list[int]:
    """Blocks of key ``k``'s tree: {offset: (owner, depth, used, nod, keys)} into ``seen``."""
    kd = h.keydefs[k]
    root = h.key_root[k]
    if root == HA_OFFSET_ERROR:
        return []
    bl = kd.block_length
    todo = [(root, 0)]
    found = []
    while todo and len(seen) < MAX_BLOCKS_WALKED:
        off, depth = todo.pop()
        if off in seen:
            problems.append((f"key {k}: block {off} reached twice", off))
            continue
        if off + bl > len(buf) or off < h.keystart:
            problems.append((f"key {k}: block pointer {off} outside the key blocks", off))
            continue
        used = be(buf, off, 2) & 0x7FFF
        nod = h.key_reflength if buf[off] & 0x80 else 0
        if used < 2 or used > bl:
            problems.append((f"key {k}: block used length {used} outside 2..{bl}", off))
            seen[off] = (k, depth, used, nod, 0)
            continue
        step = kd.keylength + nod
        nkeys = max(0, (used - 2 - nod) // step) if not kd.packed else -1
        seen[off] = (k, depth, used, nod, nkeys)
        found.append(off)
        if nod and not kd.packed:
            for j in range(nkeys + 1):
                p = off + 2 + j * step
                child = be(buf, p, nod) * MI_MIN_KEY_BLOCK_LENGTH
                todo.append((child, depth + 1))
    return found


def read_key_blocks(buf: bytes, h: MyiHeader) -> KeyBlocks:
    """Classify every key block of the index file ``buf`` (the whole file)."""
    problems: list[tuple[str, int]] = []
    end = min(len(buf), max(h.key_file_length, h.keystart))
    seen: dict[int, tuple] = {}
    for k in range(min(h.keys, len(h.keydefs), len(h.key_root))):
        _walk_static(buf, h, k, seen, problems)
    heights = {}
    for off, (k, depth, *_r) in seen.items():
        heights[k] = max(heights.get(k, 0), depth + 1)
    free: dict[int, int] = {}
    for i, link in enumerate(h.key_del):
        size = (i + 1) * MI_MIN_KEY_BLOCK_LENGTH
        n = 0
        while link != HA_OFFSET_ERROR and n < MAX_BLOCKS_WALKED:
            if link < h.keystart or link + size > len(buf) or link in free or link in seen:
                problems.append((f"key_del[{i}] chain: deleted block {link} outside the key blocks or "
                                 f"reached twice", link))
                break
            free[link] = size
            link = be(buf, link, 8)
            n += 1
    sizes = {kd.block_length for kd in h.keydefs}
    rows: list[tuple[int, int, int, int, int, float, int, int]] = []   # offset, size, kind, owner, flags, fill, level, recs
    rows.append((0, min(h.keystart, len(buf)), KIND_HEADER, -1, 0, float("nan"), UNKNOWN_LEVEL, 0))

    def block_row(off: int, size: int):
        if off in free:
            return (off, size, KIND_FREE, -1, UNIT_FREE, float("nan"), UNKNOWN_LEVEL, 0)
        if off in seen:
            k, depth, used, nod, nkeys = seen[off]
            level = heights[k] - 1 - depth
            return (off, size, KIND_NODE if nod else KIND_LEAF, k, 0 if nod else UNIT_LEAF,
                    min(used / size, 1.0), level, max(nkeys, 0) if nkeys >= 0 else 0)
        used = be(buf, off, 2) & 0x7FFF
        nod = buf[off] & 0x80
        return (off, size, KIND_NODE if nod else KIND_LEAF, -1, 0 if nod else UNIT_LEAF,
                min(used / size, 1.0), UNKNOWN_LEVEL if nod else 0, 0)

    if len(sizes) == 1 and h.keys:
        # one block size: tile the key blocks; each block's header read with numpy (a 2 GB index
        # has 2M blocks), the walk's and the delete chains' facts laid over it
        size = sizes.pop()
        n = max(0, (end - h.keystart) // size)
        starts = h.keystart + np.arange(n, dtype=np.int64) * size
        head = np.frombuffer(buf, dtype=np.uint8, count=h.keystart + n * size)[h.keystart:].reshape(n, size)[:, :2] \
            if n else np.zeros((0, 2), np.uint8)
        used = ((head[:, 0].astype(np.int64) & 0x7F) << 8) | head[:, 1]
        nod = (head[:, 0] & 0x80) != 0
        units = empty_units(1 + n + (1 if h.keystart + n * size < end else 0))
        level = np.full(len(units), UNKNOWN_LEVEL, dtype=np.uint16)
        records = np.zeros(len(units), dtype=np.uint32)
        units[0]["stored"] = units[0]["logical"] = min(h.keystart, len(buf))
        sl = slice(1, 1 + n)
        units["offset"][sl] = starts
        units["stored"][sl] = units["logical"][sl] = size
        units["kind"][sl] = np.where(nod, KIND_NODE, KIND_LEAF)
        units["flags"][sl] = np.where(nod, 0, UNIT_LEAF)
        units["fill"][sl] = np.minimum(used / size, 1.0)
        level[sl] = np.where(nod, UNKNOWN_LEVEL, 0)
        for off, (k, depth, u, nd, nkeys) in seen.items():
            j = 1 + (off - h.keystart) // size
            if (off - h.keystart) % size or not 1 <= j <= n:
                continue
            units["owner"][j] = k
            level[j] = heights[k] - 1 - depth
            records[j] = max(nkeys, 0)
        for off in free:
            j = 1 + (off - h.keystart) // size
            if (off - h.keystart) % size == 0 and 1 <= j <= n:
                units["kind"][j], units["flags"][j], units["owner"][j] = KIND_FREE, UNIT_FREE, -1
                units["fill"][j], level[j] = np.nan, UNKNOWN_LEVEL
        tail = h.keystart + n * size
        if tail < end:
            units[-1]["offset"], units[-1]["kind"] = tail, KIND_UNREACHED
            units[-1]["stored"] = units[-1]["logical"] = end - tail
            problems.append((f"{end - tail} bytes after the last whole key block of {size} bytes", tail))
        return _result(units, level, records, h, heights, free, problems)
    else:
        known = sorted(set(seen) | set(free))
        pos = h.keystart
        for off in known:
            size = free.get(off) or h.keydefs[seen[off][0]].block_length
            if off > pos:
                rows.append((pos, off - pos, KIND_UNREACHED, -1, 0, float("nan"), UNKNOWN_LEVEL, 0))
            rows.append(block_row(off, size))
            pos = max(pos, off + size)
        if pos < end:
            rows.append((pos, end - pos, KIND_UNREACHED, -1, 0, float("nan"), UNKNOWN_LEVEL, 0))
    units = empty_units(len(rows))
    arr = np.array([r[:2] for r in rows], dtype=np.int64).reshape(-1, 2)
    units["offset"] = arr[:, 0]
    units["stored"] = arr[:, 1]
    units["logical"] = arr[:, 1]
    units["kind"] = [r[2] for r in rows]
    units["owner"] = [r[3] for r in rows]
    units["flags"] = [r[4] for r in rows]
    units["fill"] = [r[5] for r in rows]
    level = np.array([r[6] for r in rows], dtype=np.uint16)
    records = np.array([r[7] for r in rows], dtype=np.uint32)
    return _result(units, level, records, h, heights, free, problems)


def _result(units, level, records, h: MyiHeader, heights: dict, free: dict, problems) -> KeyBlocks:
    kinds = units["kind"]
    per_key = []
    for k, kd in enumerate(h.keydefs):
        mine = units["owner"] == k
        per_key.append({"key": k, "root": h.key_root[k] if k < len(h.key_root) else None,
                        "block_length": kd.block_length, "packed": kd.packed,
                        "blocks": int(mine.sum()) if not kd.packed else None,
                        "levels": heights.get(k) if not kd.packed else None,
                        "entries": int(records[mine].sum()) if not kd.packed else None})
    return KeyBlocks(units=units, level=level, records=records,
                     blocks=int(((kinds == KIND_LEAF) | (kinds == KIND_NODE) | (kinds == KIND_FREE)).sum()),
                     leaf_blocks=int((kinds == KIND_LEAF).sum()), node_blocks=int((kinds == KIND_NODE).sum()),
                     deleted_blocks=len(free), deleted_bytes=sum(free.values()), per_key=per_key,
                     problems=problems)

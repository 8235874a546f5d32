"""Units against the file's holes: how many bytes of each unit lie in a hole
(the filesystem's list, ``FileEntry.holes``), and how many an engine that punches
the unused tail of each unit should have left unallocated.

Engines that punch holes per unit: InnoDB page compression (a page_compressed
page occupies its stored bytes rounded up to the filesystem block; MariaDB
fil_page_compress_for_full_crc32 / _for_non_full_crc32 align the write to
``block_size`` and punch the rest; MySQL punches the tail of a type-14 page the
same way; freed pages of a page_compressed tablespace are punched whole).
Shared by the parsers and the views (no engine module needed to draw them).
"""
from __future__ import annotations

import numpy as np

from .model import UNIT_COMPRESSED, UNIT_HOLE_MISSING, UnitFacts
from .ranges import ranges_array, sorted_ranges_array


def as_ranges(ranges) -> np.ndarray:
    """(n, 2) int64 [offset, length]: sorted, empty ones dropped, overlaps merged (vectorised)."""
    a = ranges_array(ranges) if len(ranges) else np.zeros((0, 2), np.int64)
    a = a[a[:, 1] > 0]
    if len(a) < 2:
        return a
    if np.any(a[1:, 0] < a[:-1, 0]):
        a = a[np.argsort(a[:, 0], kind="stable")]
    ends = a[:, 0] + a[:, 1]
    run_end = np.maximum.accumulate(ends)
    new = np.ones(len(a), dtype=bool)
    new[1:] = a[1:, 0] > run_end[:-1]
    if new.all():
        return a
    first = np.nonzero(new)[0]
    last = np.append(first[1:] - 1, len(a) - 1)
    starts = a[first, 0]
    return np.stack([starts, run_end[last] - starts], axis=1)


def covered_upto(ranges, x: np.ndarray) -> np.ndarray:
    """Bytes of ``ranges`` (sorted, disjoint [offset, length] pairs) below each offset in ``x``."""
    h = ranges_array(ranges)
    x = np.asarray(x, dtype=np.int64)
    if not len(h):
        return np.zeros(x.shape, dtype=np.int64)
    hs, he = h[:, 0], h[:, 0] + h[:, 1]
    cum = np.concatenate([[0], np.cumsum(h[:, 1])])
    k = np.searchsorted(hs, x, side="right") - 1
    kk = np.clip(k, 0, None)
    part = np.where(k >= 0, np.clip(np.minimum(x, he[kk]) - hs[kk], 0, None), 0)
    return np.where(k >= 0, cum[kk] + part, 0)


def covered_per_bin(ranges, edges: np.ndarray) -> np.ndarray:
    """Bytes of ``ranges`` (sorted, disjoint) inside each [edges[i], edges[i+1])."""
    return np.diff(covered_upto(ranges, edges))


def hole_bytes_per_unit(holes: list[tuple[int, int]], starts: np.ndarray, length: int | np.ndarray) -> np.ndarray:
    """Bytes of each [start, start+length) range that fall in a hole (vectorised)."""
    starts = np.asarray(starts, dtype=np.int64)
    if not holes or starts.size == 0:
        return np.zeros(starts.size, dtype=np.int64)
    h = sorted_ranges_array(holes)
    ends = starts + np.asarray(length, dtype=np.int64)
    return covered_upto(h, ends) - covered_upto(h, starts)


def expected_hole_per_page(stored: np.ndarray, page_size: int, fs_block: int) -> np.ndarray:
    """Bytes the engine should leave unallocated in a unit (page) whose payload takes
    ``stored`` bytes: the unit size minus the payload rounded up to the fs block."""
    stored = np.asarray(stored, dtype=np.int64)
    alloc = (stored + fs_block - 1) // fs_block * fs_block
    return np.maximum(page_size - alloc, 0)


def missing_hole_ranges(entry, unit_bytes: int) -> np.ndarray:
    """Byte ranges the engine should have punched but are allocated: for every
    UNIT_HOLE_MISSING unit, its expected hole (the unit's tail) less the hole bytes
    really there, placed at the start of that tail; (n, 2) [offset, length].
    ``unit_bytes``: the unit size (0: each unit's largest logical size stands in)."""
    u = entry.units
    if u is None or not len(u):
        return np.zeros((0, 2), np.int64)
    sel = np.nonzero((u["flags"] & UNIT_HOLE_MISSING) != 0)[0]
    if not len(sel):
        return np.zeros((0, 2), np.int64)
    facts = entry.unit_facts or UnitFacts()
    exp = facts.array("expected_hole_bytes", len(u))
    real = facts.array("hole_bytes", len(u))
    size = unit_bytes or int(u["logical"][sel].max())
    if exp is not None:
        expected = np.asarray(exp, dtype=np.int64)[sel]
    else:
        fs = getattr(entry, "fs", None)
        gran = max(int(fs.engine_block or 0) if fs is not None else 0, int(entry.fs_block))
        expected = np.where((u["flags"][sel] & UNIT_COMPRESSED) != 0,
                            expected_hole_per_page(u["stored"][sel], size, gran), size)
    starts_all = u["offset"][sel].astype(np.int64)
    if real is not None:
        there = np.asarray(real, dtype=np.int64)[sel]
    else:
        there = hole_bytes_per_unit(entry.holes, starts_all, size)
    miss = expected - np.minimum(there, expected)
    starts = starts_all + size - expected
    return as_ranges(np.stack([starts, miss], axis=1))

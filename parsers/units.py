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


def hole_bytes_per_unit(holes: list[tuple[int, int]], starts: np.ndarray, length: int | np.ndarray) -> np.ndarray:
    """Bytes of each [start, start+length) range that fall in a hole (vectorised)."""
    starts = np.asarray(starts, dtype=np.int64)
    if not holes or starts.size == 0:
        return np.zeros(starts.size, dtype=np.int64)
    h = np.asarray(sorted(holes), dtype=np.int64)
    hs, he = h[:, 0], h[:, 0] + h[:, 1]
    cum = np.concatenate([[0], np.cumsum(h[:, 1])])

    def covered(x: np.ndarray) -> np.ndarray:
        # total hole bytes in [0, x)
        k = np.searchsorted(hs, x, side="right") - 1
        kk = np.clip(k, 0, None)
        part = np.where(k >= 0, np.clip(np.minimum(x, he[kk]) - hs[kk], 0, None), 0)
        return cum[kk] * (k >= 0) + part

    ends = starts + np.asarray(length, dtype=np.int64)
    return covered(ends) - covered(starts)


def expected_hole_per_page(stored: np.ndarray, page_size: int, fs_block: int) -> np.ndarray:
    """Bytes the engine should leave unallocated in a unit (page) whose payload takes
    ``stored`` bytes: the unit size minus the payload rounded up to the fs block."""
    stored = np.asarray(stored, dtype=np.int64)
    alloc = (stored + fs_block - 1) // fs_block * fs_block
    return np.clip(page_size - alloc, 0, None)

"""ROW_FORMAT=COMPRESSED (KEY_BLOCK_SIZE 1/2/4/8/16) tablespaces.

Every page of such a tablespace is a physical page of the zip size (FSP
flags ZIP_SSIZE, fsp0types.h); the FIL header and the INDEX page header are
stored uncompressed (page0zip.h: the first PAGE_DATA bytes), so the page map
reads them like any other page.  Externally stored columns go to
FIL_PAGE_TYPE_ZBLOB pages followed by FIL_PAGE_TYPE_ZBLOB2 pages, chained
through FIL_PAGE_NEXT, the zlib stream starting at FIL_PAGE_DATA
(btr0cur.cc btr_store_big_rec_extern_fields, zip branch).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .fil import FIL_NULL, FIL_PAGE_TYPE_ZBLOB, FIL_PAGE_TYPE_ZBLOB2


@dataclass
class ZblobChain:
    """One compressed BLOB: its first (ZBLOB) page and every page of the chain."""

    first_page: int
    pages: list[int]
    broken: str | None = None     # why the chain stopped early, if it did


def zblob_chains(kind: np.ndarray, next_page: np.ndarray, max_len: int | None = None) -> list[ZblobChain]:
    """Follow FIL_PAGE_NEXT from every ZBLOB page through ZBLOB2 pages.

    Vectorised over chains (one numpy step per chain position), bounded by
    the number of pages so a loop in corrupt pointers cannot hang.
    """
    n = len(kind)
    starts = np.nonzero(kind == FIL_PAGE_TYPE_ZBLOB)[0]
    chains = [ZblobChain(int(s), [int(s)]) for s in starts]
    cur = starts.astype(np.int64)
    active = np.ones(len(starts), dtype=bool)
    seen = np.zeros(n, dtype=bool)
    seen[starts] = True
    steps = max_len or n
    for _ in range(steps):
        if not active.any():
            break
        idx = np.nonzero(active)[0]
        nxt = next_page[cur[idx]].astype(np.int64)
        end = nxt == FIL_NULL
        active[idx[end]] = False
        go = idx[~end]
        nx = nxt[~end]
        bad_range = nx >= n
        for j in go[bad_range]:
            chains[j].broken = f"next page {int(next_page[cur[j]])} beyond the file"
        active[go[bad_range]] = False
        go, nx = go[~bad_range], nx[~bad_range]
        wrong = (kind[nx] != FIL_PAGE_TYPE_ZBLOB2) | seen[nx]
        for j, p in zip(go[wrong], nx[wrong]):
            chains[j].broken = f"page {int(p)} is not an unvisited FIL_PAGE_TYPE_ZBLOB2 page"
        active[go[wrong]] = False
        go, nx = go[~wrong], nx[~wrong]
        seen[nx] = True
        for j, p in zip(go, nx):
            chains[j].pages.append(int(p))
        cur[go] = nx
    return chains

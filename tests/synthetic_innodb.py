"""Hand-built InnoDB units (UNIT_DTYPE) for the view tests and benchmarks:
a tablespace of ``n`` pages with a few indexes, BLOB pages, free extents,
page-compressed pages with punched tails and some pages whose hole is missing."""
from __future__ import annotations

import numpy as np

from dbxray.parsers.model import (UNIT_BAD_CHECKSUM, UNIT_COMPRESSED, UNIT_FREE, UNIT_HOLE, UNIT_HOLE_MISSING,
                           UNIT_LEAF, Dataset, FileEntry, empty_units)

NAMES = {0: "FIL_PAGE_TYPE_ALLOCATED", 2: "FIL_PAGE_UNDO_LOG", 3: "FIL_PAGE_INODE", 5: "FIL_PAGE_IBUF_BITMAP",
         8: "FIL_PAGE_TYPE_FSP_HDR", 9: "FIL_PAGE_TYPE_XDES", 10: "FIL_PAGE_TYPE_BLOB", 17855: "FIL_PAGE_INDEX"}


def synthetic_entry(n: int, page: int = 16384, compressed: bool = False, seed: int = 7,
                    path: str = "db/t_synth.ibd") -> FileEntry:
    rng = np.random.default_rng(seed)
    u = empty_units(n)
    u["offset"] = np.arange(n, dtype=np.uint64) * np.uint64(page)
    u["logical"] = page
    u["stored"] = page
    kind = np.full(n, 17855, dtype=np.uint16)
    kind[rng.random(n) < 0.08] = 10
    kind[0], kind[1:2], kind[2:3] = 8, 5, 3
    kind[np.arange(n) % 16384 == 0] = 8
    kind[(np.arange(n) % 16384 == 0) & (np.arange(n) > 0)] = 9
    free = np.zeros(n, bool)
    free[int(n * 0.85):] = True
    kind[free] = 0
    u["kind"] = kind
    owner = np.where(kind == 17855, 40 + (np.arange(n) * 7 // max(1, n)) % 4, -1).astype(np.int32)
    owner[(kind == 17855) & (rng.random(n) < 0.3)] = 41
    u["owner"] = owner
    fill = rng.beta(6, 2, n).astype(np.float32)
    fill[kind != 17855] = np.nan
    u["fill"] = fill
    u["lsn"] = (1_000_000 + np.sort(rng.integers(0, 50_000_000, n))).astype(np.uint64)
    u["lsn"][free] = 0
    flags = np.zeros(n, np.uint16)
    flags[free] |= UNIT_FREE
    flags[(kind == 17855) & (rng.random(n) < 0.9)] |= UNIT_LEAF
    flags[rng.random(n) < 0.0005] |= UNIT_BAD_CHECKSUM
    holes: list[tuple[int, int]] = []
    if compressed:
        pc = (kind != 8) & ~free
        flags[pc] |= UNIT_COMPRESSED
        stored = (rng.integers(300, page - 1, n) // 256 * 256 + 256).astype(np.uint32)
        u["stored"] = np.where(pc, stored, page)
        blk = (u["stored"].astype(np.int64) + 4095) // 4096 * 4096
        punched = pc & (blk < page)
        miss = punched & (np.arange(n) > n // 2) & (np.arange(n) < n // 2 + n // 10)
        for i in np.nonzero(punched & ~miss)[0][:200000]:
            holes.append((int(i) * page + int(blk[i]), page - int(blk[i])))
        flags[punched & ~miss] |= UNIT_HOLE
        flags[miss] |= UNIT_HOLE_MISSING
    u["flags"] = flags
    e = FileEntry(path=path, abspath="/nonexistent/" + path, engine="innodb", role="tablespace",
                  apparent_bytes=n * page, allocated_bytes=n * page - sum(x for _, x in holes), holes=holes,
                  database=path.split("/")[0], table=path.split("/")[-1].split(".")[0])
    e.units = u
    e.kind_names = dict(NAMES)
    e.owner_names = {40: "t_synth.PRIMARY", 41: "t_synth.k_a", 42: "t_synth.k_b", 43: "t_synth.k_c"}
    idx = []
    for iid, nm in e.owner_names.items():
        idx.append({"index_id": iid, "name": nm.split(".")[1], "pages": int((owner == iid).sum())})
    exp = 0
    if compressed:
        blk = (u["stored"].astype(np.int64) + 4095) // 4096 * 4096
        exp = int(np.where(flags & UNIT_COMPRESSED, page - blk, 0).clip(0).sum())
    e.sections["innodb"] = {"page_size": page, "physical_page_size": page, "pages": n, "indexes": idx,
                            "expected_hole_bytes": exp, "hole_bytes": e.hole_bytes}
    return e


def synthetic_dataset(n: int = 5000, **kw) -> Dataset:
    e = synthetic_entry(n, **kw)
    return Dataset(root="/synthetic", files=[e])

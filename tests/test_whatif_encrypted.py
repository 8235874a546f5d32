"""What-if on encrypted InnoDB tables (issue 17, item 3) and intervals inside what is
physically possible (item 4, first part): without the key, "encrypted: cannot project" and no
engine projection (compressing ciphertext says nothing); with it, the rows are projected as the
engine compresses them (before it encrypts), and the page-compressed encrypted twin's real size
lies inside that projection; no interval of InnoDB page compression exceeds the pages."""
from __future__ import annotations

import pytest

from dbxray.compress.whatif import run_whatif
from dbxray.parsers.keyfile import load_key_file
from dbxray.parsers.model import ScanContext
from dbxray.parsers.scan import scan


@pytest.fixture(scope="module")
def enc(sparse_fixtures):
    return sparse_fixtures / "mariadb" / "datadir" / "enc"


def _target(res, name):
    return next(t for t in res["targets"] if t["target"].endswith(name))


def test_without_the_key_no_projection(enc):
    res = run_whatif(scan(str(enc)), ["lz4", "zlib:1"], sample="all")
    for name in ("k4.ibd", "pc_enc.ibd", "k7.ibd"):
        t = _target(res, name)
        assert any(n.startswith("encrypted: cannot project") and "key id" in n for n in t["notes"]), t
        assert not [r for r in t["results"] if r["model"].startswith("innodb_")], t["results"]
        # the filesystem compresses what is on disk, ciphertext included: that projection stays
        assert any(r["model"].startswith("zfs_") for r in t["results"])
    assert not [a for a in res["advice"] if a["target"].endswith(("k4.ibd", "pc_enc.ibd"))]
    forced_off = _target(res, "forced_off.ibd")              # not encrypted: projected as usual
    assert "notes" not in forced_off or not any(n.startswith("encrypted") for n in forced_off["notes"])
    assert any(r["model"] == "innodb_page_compressed" for r in forced_off["results"])


def test_with_the_key_the_twin_lies_inside(enc, sparse_fixtures):
    keys = load_key_file(str(sparse_fixtures / "mariadb" / "keys.txt"))
    ds = scan(str(enc), ScanContext(keys=keys))
    pc_enc = next(f for f in ds.files if f.path.endswith("pc_enc.ibd"))
    res = run_whatif(ds, ["lz4"], sample="0.3", seed=1)
    k4 = _target(res, "k4.ibd")
    r = next(r for r in k4["results"] if r["codec"] == "lz4" and r["model"] == "innodb_page_compressed")
    lo, hi = r["ci95"]
    # enc.pc_enc: the same 1,000 rows as enc.k4, PAGE_COMPRESSED (lz4) + ENCRYPTED: the engine
    # compressed them first, then encrypted the compressed payload
    assert lo <= pc_enc.lasting_allocated_bytes <= hi, (lo, pc_enc.lasting_allocated_bytes, hi)


def test_intervals_never_exceed_the_pages(sparse_fixtures):
    res = run_whatif(scan(str(sparse_fixtures / "innodb" / "datadir16k")), ["lz4", "zlib:1", "none"],
                     sample="0.05", seed=2, filesystem="xfs")     # ext4 would add its extent-tree blocks
    checked = 0
    for t in res["targets"]:
        if t["engine"] != "innodb":
            continue
        for r in t["results"]:
            if r["model"] == "innodb_page_compressed":
                lo, hi = r["ci95"]
                assert 0 <= lo <= r["projected_bytes"] <= hi <= t["logical_bytes"], (t["target"], r)
                checked += 1
    assert checked > 20


def test_physical_bounds_clip_the_interval():
    """The estimator's interval and estimate never pass the physical bound the model gives
    (InnoDB: a page at most the page; RocksDB: a block at most raw + its 5-byte trailer)."""
    import numpy as np
    from dbxray.compress.engines.innodb import InnoDBPageCompressed
    from dbxray.compress.engines.rocksdb import RocksDBBlocks
    from dbxray.compress.estimate import StratumSample, ratio_estimate
    logical = np.array([16384, 16384, 4000])
    assert InnoDBPageCompressed(page_size=16384).max_bytes(logical).tolist() == [16384] * 3
    assert RocksDBBlocks().max_bytes(logical).tolist() == [16389, 16389, 4005]
    # a wildly spread sample of 3 of 100 units: unclipped, the interval runs past 100 pages
    s = [StratumSample(100, 100 * 16384.0, np.full(3, 16384.0), np.array([16384.0, 4096.0, 16384.0]))]
    free = ratio_estimate(s, granularity=4096)
    assert free.hi > 100 * 16384
    est = ratio_estimate(s, granularity=4096, upper_bound=100 * 16384)
    assert est.hi == 100 * 16384 and est.lo <= est.projected <= est.hi and est.lo == free.lo

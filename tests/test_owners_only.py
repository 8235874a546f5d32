"""``ScanContext(owners_only=True)`` (the what-if's scan): of a MariaDB page-compressed
tablespace only the pages of fragment extents are decoded, the others take their owner
from the segment owning their extent; every owner, free flag and stored size is the full
scan's, and so is every what-if projection (parsers/innodb/pagemap.py)."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from dbxray.compress.whatif import run_whatif
from dbxray.parsers.fileio import ReadOnlyFile
from dbxray.parsers.innodb.fil import KIND_PAGE_COMPRESSED_UNDECODED
from dbxray.parsers.innodb.pagemap import build_page_map
from dbxray.parsers.model import ScanContext
from dbxray.parsers.scan import scan

from mariadb_server import PrivateServer, missing


def _page_compressed(root):
    files = sorted(root.rglob("*.ibd"))
    out = []
    for p in files:
        with ReadOnlyFile(str(p)) as f:
            pm = build_page_map(f, p.name, verify_checksums=False, exact_payload=False)
        if pm.compressed.any():
            out.append(p)
    return out


@pytest.fixture(scope="module")
def big_page_compressed(tmp_path_factory):
    """Page-compressed tables big enough for segments to own extents (the fixtures' are
    20 pages): written by a private MariaDB, full_crc32 and the legacy layout, a secondary
    index and BLOB pages among them."""
    why = missing()
    if why:
        pytest.skip(why)
    base = tmp_path_factory.mktemp("pcbig")
    out = base / "copy"
    for layout, opts in (("fcrc32", []), ("legacy", ["--innodb-checksum-algorithm=crc32"])):
        with PrivateServer(base / layout, ["--innodb-compression-default=ON", *opts]) as s:
            s.sql("CREATE DATABASE d;")
            s.sql("CREATE TABLE t (id INT PRIMARY KEY, k INT, v VARCHAR(400), b MEDIUMBLOB, KEY (k)) "
                  "ENGINE=InnoDB PAGE_COMPRESSED=1;"
                  "INSERT INTO t SELECT seq, seq % 97, REPEAT(MD5(seq), 1 + seq % 12), "
                  "IF(seq % 50 = 0, REPEAT(SHA2(seq, 256), 900), NULL) FROM seq_1_to_12000;", "d")
            s.sql("SET GLOBAL innodb_fast_shutdown=0;")
        (out / layout).mkdir(parents=True)
        shutil.copyfile(base / layout / "datadir" / "d" / "t.ibd", out / layout / "t.ibd")
    return out


def test_owners_from_segments_are_the_decoded_pages_owners(sparse_fixtures, big_page_compressed):
    files = _page_compressed(sparse_fixtures / "innodb") + _page_compressed(sparse_fixtures / "mariadb")
    assert len(files) >= 8                      # every algorithm, both layouts, 4k/16k/64k pages
    files += _page_compressed(big_page_compressed)
    skipped_total = 0
    for p in files:
        with ReadOnlyFile(str(p)) as f:
            full = build_page_map(f, p.name, verify_checksums=False, exact_payload=False)
        with ReadOnlyFile(str(p)) as f:
            light = build_page_map(f, p.name, verify_checksums=False, exact_payload=False, owners_only=True)
        assert np.array_equal(full.owner_index, light.owner_index), p
        assert np.array_equal(full.owned, light.owned), p
        assert np.array_equal(full.free, light.free), p
        assert np.array_equal(full.stored, light.stored), p
        assert np.array_equal(full.compressed, light.compressed), p
        assert full.roots == light.roots, p
        skipped = light.compressed & (light.kind == KIND_PAGE_COMPRESSED_UNDECODED) & \
            (full.kind != KIND_PAGE_COMPRESSED_UNDECODED)
        # only pages of extents a segment owns are left undecoded
        assert not (skipped & (light.seg_id == 0)).any(), p
        skipped_total += int(skipped.sum())
    assert skipped_total > 1000                 # it really skipped most pages


def _projections(doc: dict) -> list:
    return [(t["target"], [(r["codec"], r["model"], r["projected_bytes"], r["ci95"]) for r in t["results"]])
            for t in doc["targets"]]


@pytest.mark.parametrize("sample", ["0.05", "all"])
@pytest.mark.parametrize("where", ["fixtures", "big"])
def test_whatif_of_the_owners_only_scan_is_the_full_scans(sparse_fixtures, big_page_compressed, sample, where):
    folder = str(sparse_fixtures / "innodb" / "16k" / "fx") if where == "fixtures" else str(big_page_compressed)
    full = scan(folder, ScanContext(verify_checksums=False, exact_payload=False))
    light = scan(folder, ScanContext(verify_checksums=False, exact_payload=False, owners_only=True))
    a = run_whatif(full, ["zstd:3", "lz4"], sample=sample, raw_models=False)
    b = run_whatif(light, ["zstd:3", "lz4"], sample=sample, raw_models=False)
    assert _projections(a) == _projections(b)
    assert a["sample"] == b["sample"]
    assert json.dumps(a.get("advice"), sort_keys=True, default=str) is not None

"""MySQL transparent page compression (FIL_PAGE_COMPRESSED, COMPRESSION="zlib"/"lz4") in the
default scan: a page is decoded only to its headers where the codec can stop early (zlib)
and only the headers are kept (INODE pages whole), while ``--full`` (checksums verified:
MySQL's checksum belongs to the page before compression) decodes and keeps pages whole.
Both give the same page facts; a MySQL 8 tablespace is made type-14 page by page with the
meta_t layout (pagecomp.build_mysql_compressed_page), checksums as they were."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from dbxray.parsers.fileio import ReadOnlyFile
from dbxray.parsers.innodb import pagecomp
from dbxray.parsers.innodb.fil import FIL_PAGE_INDEX, FIL_PAGE_INODE
from dbxray.parsers.innodb.pagemap import build_page_map

FIELDS = ("kind", "original_type", "level", "n_recs", "index_id", "heap_top", "garbage", "prev", "next",
          "seg_id", "payload_len", "stored", "compressed", "corrupt")


@pytest.fixture(params=[1, 2], ids=["zlib", "lz4"])
def compressed_copy(request, fixtures_root, tmp_path):
    src = fixtures_root / "innodb-mysql" / "ibdninja" / "8.0" / "multi_page.ibd"
    data = bytearray(src.read_bytes())
    ps, n = 16384, 0
    for i in range(1, len(data) // ps):
        page = bytes(data[i * ps:(i + 1) * ps])
        if int.from_bytes(page[24:26], "big") in (FIL_PAGE_INDEX, FIL_PAGE_INODE):
            data[i * ps:(i + 1) * ps] = pagecomp.build_mysql_compressed_page(page, algorithm_id=request.param)
            n += 1
    assert n >= 10
    out = tmp_path / f"t_{request.param}.ibd"
    out.write_bytes(bytes(data))
    return out


def test_default_scan_decodes_headers_only_and_agrees_with_full(compressed_copy, monkeypatch):
    with ReadOnlyFile(str(compressed_copy)) as f:
        full = build_page_map(f, compressed_copy.name, verify_checksums=True)
    calls = []
    real = pagecomp.decode_mysql_page

    def spy(raw, page_size, prefix=None):
        d = real(raw, page_size, prefix)
        calls.append((prefix, len(d.page), d.original_type))
        return d
    from dbxray.parsers.innodb import pagemap
    monkeypatch.setattr(pagemap, "decode_mysql_page", spy, raising=False)
    monkeypatch.setattr(pagecomp, "decode_mysql_page", spy)
    with ReadOnlyFile(str(compressed_copy)) as f:
        light = build_page_map(f, compressed_copy.name, verify_checksums=False)
    assert full.compressed.sum() >= 10 and not full.corrupt.any()
    for name in FIELDS:
        assert np.array_equal(getattr(light, name), getattr(full, name)), name
    assert calls and all(p is None for p, _, t in calls if t == FIL_PAGE_INODE)
    assert all(p is not None for p, _, t in calls if t != FIL_PAGE_INODE)
    if compressed_copy.name == "t_1.ibd":                    # zlib stops at the headers
        assert all(ln == 128 for p, ln, t in calls if t != FIL_PAGE_INODE)


def test_cli_default_and_full_give_the_same_indexes(compressed_copy):
    def run(*extra):
        out = subprocess.run([sys.executable, "-m", "dbxray.app.main", "scan", str(compressed_copy), "--json",
                              "--no-progress", *extra], capture_output=True, text=True, check=True)
        return json.loads(out.stdout)["files"][0]["innodb"]
    light, full = run(), run("--full")
    assert full["checksum"]["algorithm"] == "crc32" and full["checksum"]["bad_pages"] == []   # pages as before
    assert light["checksum"]["verified"] is False
    for key in ("page_types", "indexes", "page_compressed_pages", "compressed_payload_bytes"):
        assert light.get(key) == full.get(key), key

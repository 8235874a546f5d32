"""InnoDB page map against ../shared/fixtures/innodb-mysql (real MySQL 5.6 to
9.x files) and its manifest: FSP flags, page sizes, page counts, the FIL
page-type histogram (type-14 pages counted under their original type),
index page counts, ibdNinja's golden per-index and per-page facts, the
crc32 / legacy big-endian crc32 / innodb checksums, encrypted tablespaces
(shown and counted, not decrypted) and the zipped data directories
(unzipped into a temp dir here).
"""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from dbxray.parsers.model import UNIT_COMPRESSED, UNIT_ENCRYPTED
from dbxray.parsers.scan import scan
from dbxray.parsers.innodb.fil import MYSQL_PAGE_TYPES
from dbxray.parsers.innodb.scan import inspect_page

_CODE = {v: k for k, v in MYSQL_PAGE_TYPES.items()}


def _code(short: str) -> int:
    for name in ("FIL_PAGE_" + short, "FIL_PAGE_TYPE_" + short):
        if name in _CODE:
            return _CODE[name]
    raise KeyError(short)


@pytest.fixture(scope="module")
def manifest(fixtures_root):
    return json.loads((fixtures_root / "innodb-mysql" / "manifest.json").read_text())


@pytest.fixture(scope="module")
def loose(fixtures_root):
    ds = scan(str(fixtures_root / "innodb-mysql"))
    assert ds.errors == []
    return {f.path: f for f in ds.files}


@pytest.fixture(scope="module")
def zipped(fixtures_root, tmp_path_factory):
    """Every zip of the set unzipped into a temp dir and scanned: zip path -> {member: FileEntry}."""
    out = {}
    man = json.loads((fixtures_root / "innodb-mysql" / "manifest.json").read_text())
    for mf in man["files"]:
        if not mf["path"].endswith(".zip"):
            continue
        dest = tmp_path_factory.mktemp(Path(mf["path"]).stem)
        with zipfile.ZipFile(fixtures_root / "innodb-mysql" / mf["path"]) as z:
            z.extractall(dest)
        ds = scan(str(dest))
        out[mf["path"]] = {f.path: f for f in ds.files}
    return out


def expected_histogram(obs: dict) -> dict[int, int]:
    hist: dict[int, int] = {}
    for key, count in obs["page_type_histogram"].items():
        code = int(key.split(":")[0])
        hist[code] = hist.get(code, 0) + count
    t14 = obs.get("type14_pages")
    if t14:   # a type-14 page counts under the type it decompresses to
        hist.pop(14)
        for short, count in t14["original_types"].items():
            hist[_code(short)] = hist.get(_code(short), 0) + count
    return hist


def my_histogram(e) -> dict[int, int]:
    back = {name: code for code, name in e.kind_names.items()}
    return {back[name]: c for name, c in e.sections["innodb"]["page_types"].items()}


def check_observed(e, obs: dict) -> None:
    sec = e.sections["innodb"]
    assert sec["space_id"] == obs["fsp_space_id"]
    assert sec["physical_page_size"] == obs["page_size_used"]
    assert sec["pages"] == obs["page_count_by_file_size"]
    pm = e.detail["innodb"]["page_map"]
    assert pm.fsp.size_pages == obs["fsp_size_pages"]
    flags = obs["fsp_flags"]["flags"] if "fsp_flags" in obs else int(obs["fsp_flags_hex"], 16)
    assert sec["fsp_flags"] == flags
    if "fsp_flags" in obs:
        assert sec["page_size"] == obs["fsp_flags"]["logical_page_size"]
        assert pm.flags.sdi == bool(obs["fsp_flags"]["sdi"])
        assert pm.flags.encryption == bool(obs["fsp_flags"]["encryption"])
    if "fsp_free_limit" in obs:
        assert pm.fsp.free_limit == obs["fsp_free_limit"]
    assert my_histogram(e) == expected_histogram(obs)
    assert sec["checksum"]["bad_pages"] == []
    enc = (e.units["flags"] & UNIT_ENCRYPTED) != 0
    assert bool(enc.any()) == bool(obs["has_encrypted_pages"])
    for key, count in (obs.get("index_ids") or {}).items():
        kind, iid = key.split(":")
        sel = (pm.index_id == np.uint64(int(iid))) & pm.is_index_kind(pm.kind)
        assert int(sel.sum()) == count, key


def _loose_files(manifest):
    return [mf for mf in manifest["files"] if "page_type_histogram" in (mf.get("observed") or {})]


def test_loose_files_against_observed(manifest, loose):
    files = _loose_files(manifest)
    assert len(files) == 46
    for mf in files:
        check_observed(loose[mf["path"]], mf["observed"])


def test_zipped_members_against_observed(manifest, zipped):
    n = 0
    for mf in manifest["files"]:
        for mem in (mf.get("observed") or {}).get("members", []):
            if mem.get("kind") != "tablespace":
                continue
            e = zipped[mf["path"]][mem["name"]]
            check_observed(e, mem["observed"])
            n += 1
    assert n == 43


def test_ibdninja_golden_values(manifest, loose):
    """Space id, page counts, index roots, B-tree shape and page 4's header as
    ibdNinja's golden outputs state them."""
    n = 0
    for mf in manifest["files"]:
        for exp in mf.get("expected", []):
            v = exp.get("value")
            if not isinstance(v, dict):
                continue
            e = loose[mf["path"]]
            sec = e.sections["innodb"]
            by_id = {ix["index_id"]: ix for ix in sec["indexes"]}
            if exp["what"].startswith("file information"):
                assert sec["space_id"] == v["space_id"]
                assert sec["pages"] == v["total_pages"]
                assert sec["page_size"] == v["logical_page_size"]
                assert sec["physical_page_size"] == v["physical_page_size"]
                assert by_id[0xFFFFFFFFFFFFFFFF]["root_page"] == v["sdi_root_page"]
                for ix in v["indexes"]:
                    assert by_id[ix["id"]]["root_page"] == ix["root_page"], (mf["path"], ix)
                    # names come from names.py (SDI); unrelated files of this set share
                    # space ids, so only a name resolved for this very table is compared
                    if by_id[ix["id"]]["table"] == v["tables"][0][1]:
                        assert by_id[ix["id"]]["name"] == ix["name"]
            elif exp["what"].startswith("index analysis"):
                ix = by_id[v["index_id"]]
                assert ix["root_page"] == v["root_page"]
                assert ix["levels"] == v["levels"]
                assert ix["pages"] == v["pages"]
                assert ix["leaf_pages"] == v["leaf_pages"]
                assert ix["pages"] - ix["leaf_pages"] == v["non_leaf_pages"]
            elif exp["what"].startswith("page 4"):
                info = inspect_page(e, 4)
                assert info["FIL_PAGE_TYPE"] == "FIL_PAGE_" + v["page_type"]
                assert info["PAGE_LEVEL"] == v["page_level"]
                assert info["PAGE_N_RECS"] == v["n_records"]
                assert info["PAGE_INDEX_ID"] == v["index_id"]
                assert info["PAGE_N_DIR_SLOTS"] == v["n_dir_slots"]
                assert info["PAGE_HEAP_TOP"] == v["heap_top"]
                assert info["PAGE_N_HEAP"] == v["n_heap"]
                assert info["PAGE_GARBAGE"] == v["garbage_bytes"]
                assert info["FIL_PAGE_LSN"] == v["lsn"]
                assert info["format"] == ("compact" if v["row_format"] in ("DYNAMIC", "COMPACT") else "redundant")
            else:
                continue
            n += 1
    assert n == 42


def test_type14_transparent_compression(manifest, loose):
    """COMPRESSION='zlib' (MySQL 8.0.23): 4 type-14 pages, counted under their
    original type and in page_compressed_pages, with their meta-data."""
    mf = [m for m in manifest["files"] if m["path"] == "mysql-std_data/import_compression_8_0_23/t1.ibd"][0]
    obs = mf["observed"]["type14_pages"]
    e = loose[mf["path"]]
    sec = e.sections["innodb"]
    assert sec["page_compressed"] is True
    assert sec["compression_algorithm"] == "zlib"
    assert sec["page_compressed_pages"] == obs["count"] == 4
    det = e.detail["innodb"]
    for p in obs["first"]:
        i = p["page"]
        assert int(det["type"][i]) == 14
        assert int(e.units["kind"][i]) == p["orig_type"]
        assert int(det["payload_len"][i]) == p["comp_size"]
        assert int(e.units["stored"][i]) == 38 + p["comp_size"]
        assert e.units["flags"][i] & UNIT_COMPRESSED
    assert sec["compressed_payload_bytes"] == int(det["payload_len"][e.units["flags"] & UNIT_COMPRESSED != 0].sum())
    assert sec["checksum"]["bad_pages"] == []


def test_encrypted_tablespaces(manifest, loose, zipped):
    """Encrypted pages are shown (UNIT_ENCRYPTED, FIL_PAGE_ENCRYPTED /
    FIL_PAGE_COMPRESSED_AND_ENCRYPTED) and counted; not decrypted."""
    e = loose["mysql-std_data/table_encrypted_64/t1.ibd"]
    sec = e.sections["innodb"]
    assert sec["page_types"]["FIL_PAGE_ENCRYPTED"] == 4
    assert int(((e.units["flags"] & UNIT_ENCRYPTED) != 0).sum()) == 4
    assert any("encrypted" in w and "not decrypted" in w for w in e.warnings)
    z = zipped["mysql-std_data/import_8021.zip"]["import_8021/t1.ibd"]
    zs = z.sections["innodb"]
    assert zs["page_types"]["FIL_PAGE_COMPRESSED_AND_ENCRYPTED"] == 118
    assert zs["page_compressed_pages"] == 118
    both = (z.units["flags"] & (UNIT_ENCRYPTED | UNIT_COMPRESSED)) == (UNIT_ENCRYPTED | UNIT_COMPRESSED)
    assert int(both.sum()) == 118


def test_checksum_algorithms(loose):
    assert loose["mysql-std_data/crc32_endianness/crc32_big_endian.ibd"].sections["innodb"]["checksum"] == {
        "algorithm": "crc32 (legacy big-endian)", "bad_pages": []}
    assert loose["mysql-std_data/crc32_endianness/crc32_little_endian.ibd"].sections["innodb"]["checksum"] == {
        "algorithm": "crc32", "bad_pages": []}
    assert loose["innodb-java-reader/mysql56/simple/tb01.ibd"].sections["innodb"]["checksum"] == {
        "algorithm": "innodb", "bad_pages": []}


def test_key_block_size_8_on_mysql9(loose):
    e = loose["idb-utils/mysql90_compressed.ibd"]
    sec = e.sections["innodb"]
    assert (sec["page_size"], sec["physical_page_size"], sec["pages"]) == (16384, 8192, 7)
    assert sec["checksum"] == {"algorithm": "crc32", "bad_pages": []}
    assert [ix["root_page"] for ix in sec["indexes"] if ix["index_id"] == 159] == [4]

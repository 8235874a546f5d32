"""InnoDB page map against ../shared/fixtures/innodb/manifest.json, field by
field, for every tablespace of the 16k, 4k, 64k and datadir16k instances
(MariaDB 10.11 files; ground truth from the server's information_schema,
from MariaDB's own innochecksum and from the fixture helper's page reads).

Scans run on the sparse copy (holes re-punched) made by ``sparse_fixtures``.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from dbxray.parsers.innodb.index import data_size
from dbxray.parsers.model import UNIT_COMPRESSED, UNIT_FREE, UNIT_HOLE_MISSING, UNIT_LEAF
from dbxray.parsers.scan import scan
from dbxray.parsers.innodb import checksum as ck
from dbxray.parsers.innodb.fil import FIL_PAGE_INDEX, MARIADB_PAGE_TYPES
from dbxray.parsers.innodb.payloads import unit_payload, page_bytes
from dbxray.parsers.innodb.scan import inspect_page

INSTANCES = ("16k", "4k", "64k", "datadir16k")


@pytest.fixture(scope="module")
def manifest(fixtures_root) -> dict:
    return json.loads((fixtures_root / "innodb" / "manifest.json").read_text())


@pytest.fixture(scope="module")
def scanned(sparse_fixtures) -> dict[str, object]:
    """manifest path -> FileEntry, scanning each instance directory once."""
    out = {}
    for inst in INSTANCES:
        ds = scan(str(sparse_fixtures / "innodb" / inst))
        for f in ds.files:
            out[f"{inst}/{f.path}"] = f
        out[f"__ds__{inst}"] = ds
    return out


def paged_files(manifest) -> list[dict]:
    return [f for f in manifest["files"] if f["kind"] in ("ibd", "system_tablespace")]


def _ids(manifest):
    return [f["path"] for f in paged_files(manifest)]


def pytest_generate_tests(metafunc):
    if "mf" in metafunc.fixturenames:
        from fixtures_util import require_fixtures
        man = json.loads((require_fixtures() / "innodb" / "manifest.json").read_text())
        files = paged_files(man)
        metafunc.parametrize("mf", files, ids=[f["path"] for f in files])


def expected_page_types(mf: dict) -> dict[str, int]:
    """The manifest's FIL histogram with every page_compressed page moved under
    the original type it decompresses to (what innochecksum gets wrong)."""
    hist = Counter(mf["pages"]["page_type_histogram"])
    for key in ("page_compressed(full_crc32)", "FIL_PAGE_PAGE_COMPRESSED"):
        hist.pop(key, None)
    for p in mf["pages"].get("page_compressed_pages") or []:
        hist[p["original_page_type"]] += 1
    return dict(hist)


def test_every_tablespace_is_scanned(manifest, scanned):
    assert len(paged_files(manifest)) == 36      # 35 .ibd + ibdata1
    for mf in paged_files(manifest):
        assert mf["path"] in scanned, mf["path"]
        assert "innodb" in scanned[mf["path"]].sections


def test_fsp_header_and_flags(mf, scanned):
    e = scanned[mf["path"]]
    sec = e.sections["innodb"]
    fsp = mf["pages"]["fsp_header"]
    dec = mf["pages"]["fsp_flags_decoded"]
    assert sec["space_id"] == fsp["space_id"]
    assert sec["fsp_flags"] == fsp["flags"] == dec["raw"]
    assert sec["page_size"] == dec["logical_page_size"]
    assert sec["physical_page_size"] == dec["physical_page_size"] == mf["pages"]["physical_page_size"]
    assert sec["pages"] == mf["pages"]["n_pages"]
    assert sec["page_compressed"] == dec["page_compressed"] == bool(mf.get("page_compressed"))
    pm = e.detail["innodb"]["page_map"]
    assert pm.fsp.size_pages == fsp["size_pages"]
    assert pm.fsp.free_limit == fsp["free_limit"]
    assert pm.fsp.frag_n_used == fsp["frag_n_used"]
    assert pm.fsp.free.length == fsp["free_list_len"]
    assert pm.fsp.free_frag.length == fsp["free_frag_list_len"]
    assert pm.fsp.full_frag.length == fsp["full_frag_list_len"]
    assert pm.fsp.seg_id_next == fsp["seg_id_next"]
    assert pm.fsp.seg_inodes_full.length == fsp["seg_inodes_full_len"]
    assert pm.fsp.seg_inodes_free.length == fsp["seg_inodes_free_len"]
    assert pm.flags.full_crc32 == (dec["format"] == "full_crc32")
    assert int(pm.lsn[0]) == fsp["fil_header"]["lsn"]
    if dec["format"] == "full_crc32":
        algo = dec["compression_algorithm"]
        assert sec["compression_algorithm"] == (None if algo == "none" else algo)
        assert pm.flags.zip_size == 0
    else:
        assert pm.flags.zip_size == dec["zip_size"]
        assert sec["compression_algorithm"] == mf["compression_algorithm"]


def test_page_type_histogram(mf, scanned):
    sec = scanned[mf["path"]].sections["innodb"]
    assert sec["page_types"] == expected_page_types(mf)
    assert sum(sec["page_types"].values()) == mf["pages"]["n_pages"]


def test_page_compressed_pages(mf, scanned):
    e = scanned[mf["path"]]
    sec = e.sections["innodb"]
    pcs = mf["pages"].get("page_compressed_pages") or []
    assert sec["page_compressed_pages"] == len(pcs)
    assert sec["compressed_payload_bytes"] == sum(p["payload_len"] for p in pcs)
    det = e.detail["innodb"]
    units = e.units
    compressed = np.nonzero(units["flags"] & UNIT_COMPRESSED)[0]
    assert [int(i) for i in compressed] == [p["page_no"] for p in pcs]
    for p in pcs:
        i = p["page_no"]
        assert int(det["payload_len"][i]) == p["payload_len"], i
        assert int(det["type"][i]) == p["page_type_field"], i
        if p["stored_bytes"] is not None:
            assert int(units["stored"][i]) == p["stored_bytes"], i
        else:   # legacy layout: header + payload
            assert int(units["stored"][i]) == p["header_len"] + p["payload_len"], i
        assert e.kind_names[int(units["kind"][i])] == p["original_page_type"], i
        # the decompressed page is the original page: its own page number and space id
        # (full_crc32 computes the checksum over the compressed form only)
        logical = unit_payload(e, i)
        assert len(logical) == sec["page_size"]
        assert int.from_bytes(logical[4:8], "big") == p["original_page_no"]
        assert int.from_bytes(logical[34:38], "big") == sec["space_id"]
        if not det["fsp_flags"].full_crc32:
            rows = np.frombuffer(logical, dtype=np.uint8).reshape(1, -1)
            assert int(ck.crc32_page_checksum(rows)[0]) == int.from_bytes(logical[:4], "big"), i


def test_checksums_all_good(mf, scanned):
    sec = scanned[mf["path"]].sections["innodb"]
    assert mf["innochecksum"]["summary_exit_code"] == 0
    assert sec["checksum"]["bad_pages"] == []
    want = "full_crc32" if mf["pages"]["fsp_flags_decoded"]["format"] == "full_crc32" else None
    if want:
        assert sec["checksum"]["algorithm"] == want
    elif mf.get("page_compressed"):
        assert sec["checksum"]["algorithm"] == "none"    # BUF_NO_CHECKSUM_MAGIC on 34354 pages
    else:
        assert sec["checksum"]["algorithm"] == "crc32"


def _innochecksum_index_id(v: int) -> int:
    return v & 0xFFFFFFFFFFFFFFFF     # innochecksum prints ids >= 2^63 as signed


def test_indexes_against_innochecksum(mf, scanned):
    """Per-index pages / leaf pages / records and data bytes per page as
    innochecksum -S computes them (free pages excluded)."""
    e = scanned[mf["path"]]
    summary = mf["innochecksum"]["index_summary"]
    if not summary:
        pytest.skip("innochecksum lists no index for this file (page_compressed: it cannot read them)")
    det = e.detail["innodb"]
    pm = det["page_map"]
    got = {ix["index_id"]: ix for ix in e.sections["innodb"]["indexes"]}
    live = pm.is_index_kind(pm.kind) & ~pm.free
    # innochecksum counts the page images in ibdata1's doublewrite buffer as index pages;
    # dbxray lists them as the doublewrite area (issue 15): ids seen only there are no index
    dblwr = pm.doublewrite if pm.doublewrite is not None else np.zeros(pm.n_pages, bool)
    only_copies = {iid for iid in (_innochecksum_index_id(s["index_id"]) for s in summary)
                   if not (live & ~dblwr & (pm.index_id == np.uint64(iid))).any()}
    assert sorted(got) == sorted(_innochecksum_index_id(s["index_id"]) for s in summary
                                 if _innochecksum_index_id(s["index_id"]) not in only_copies)
    if mf["path"].endswith("ibdata1"):
        assert only_copies and all((dblwr & (pm.index_id == np.uint64(i))).any() for i in only_copies)
    for s in summary:
        iid = _innochecksum_index_id(s["index_id"])
        copies = live & dblwr & (pm.index_id == np.uint64(iid))
        if iid in only_copies:
            assert int(copies.sum()) == s["pages"], iid
            continue
        ix = got[iid]
        assert ix["pages"] + int(copies.sum()) == s["pages"], iid
        assert ix["leaf_pages"] + int((copies & (pm.level == 0)).sum()) == s["leaf_pages"], iid
        sel = live & (pm.index_id == np.uint64(iid))
        assert int(sel.sum()) == s["pages"]
        assert int(pm.n_recs[sel].astype(np.int64).sum()) // s["pages"] == s["recs_per_page"], iid
        # page_get_data_size of every page innochecksum reads (doublewrite copies included)
        ds = data_size(pm.heap_top[sel], pm.n_heap[sel], pm.garbage[sel])
        assert int(ds.sum()) // s["pages"] == s["bytes_per_page"], iid


def test_indexes_against_information_schema(mf, scanned):
    """Root pages and index ids as INNODB_SYS_INDEXES lists them; page_compressed
    files (innochecksum is blind there) checked against the decompressed types."""
    e = scanned[mf["path"]]
    sys_idx = (mf.get("information_schema") or {}).get("INNODB_SYS_INDEXES")
    if not sys_idx:
        pytest.skip("no INNODB_SYS_INDEXES rows for this file")
    got = {ix["index_id"]: ix for ix in e.sections["innodb"]["indexes"]}
    assert sorted(got) == sorted(r["INDEX_ID"] for r in sys_idx)
    for r in sys_idx:
        assert got[r["INDEX_ID"]]["root_page"] == r["PAGE_NO"], r
        if mf["instance"] == "datadir16k":
            # a whole data dir: names come from ibdata1's SYS_INDEXES (names.py)
            assert got[r["INDEX_ID"]]["name"] == r["NAME"], r
        else:
            # lone .ibd files: no dictionary, the index is named by its id
            assert got[r["INDEX_ID"]]["name"] == f"index {r['INDEX_ID']}", r
    pcs = mf["pages"].get("page_compressed_pages") or []
    if pcs:
        n_index = sum(1 for p in pcs if p["original_page_type"] == "FIL_PAGE_INDEX")
        assert sum(ix["pages"] for ix in got.values()) == n_index
        assert all(ix["levels"] >= 1 for ix in got.values())


def test_records_match_row_count(mf, scanned):
    """The clustered index's leaf records equal SELECT COUNT(*) (slow shutdown:
    no delete-marked rows left)."""
    sys_idx = (mf.get("information_schema") or {}).get("INNODB_SYS_INDEXES")
    if not sys_idx or mf.get("row_count") is None:
        pytest.skip("no row count")
    got = {ix["index_id"]: ix for ix in scanned[mf["path"]].sections["innodb"]["indexes"]}
    clustered = [r for r in sys_idx if r["TYPE"] & 1]
    assert len(clustered) == 1
    assert got[clustered[0]["INDEX_ID"]]["records"] == mf["row_count"]


def test_holes_after_repunch(mf, scanned):
    e = scanned[mf["path"]]
    sec = e.sections["innodb"]
    assert e.holes == [tuple(h) for h in mf["holes"]]
    assert sec["hole_bytes"] == mf["hole_bytes"]
    # what the engine should have punched = what is really unallocated (punched holes)
    unallocated = sum(n for _, n in mf["holes_unallocated"])
    if mf.get("page_compressed"):
        assert sec["expected_hole_bytes"] == unallocated
    else:
        assert sec["expected_hole_bytes"] == 0
    assert not (e.units["flags"] & UNIT_HOLE_MISSING).any()


def test_units_array(mf, scanned):
    e = scanned[mf["path"]]
    u = e.units
    sec = e.sections["innodb"]
    n = mf["pages"]["n_pages"]
    assert len(u) == n
    assert list(u["offset"][:3]) == [i * sec["physical_page_size"] for i in range(min(3, n))]
    assert (u["logical"] == sec["page_size"]).all()
    plain = (u["flags"] & UNIT_COMPRESSED) == 0
    assert (u["stored"][plain] == sec["physical_page_size"]).all()
    assert int(u["lsn"][0]) == mf["pages"]["fsp_header"]["fil_header"]["lsn"]
    leaf = (u["flags"] & UNIT_LEAF) != 0
    assert int(leaf.sum()) == sum(ix["leaf_pages"] for ix in sec["indexes"]) + int(
        (leaf & ((u["flags"] & UNIT_FREE) != 0)).sum())
    idx_pages = u["kind"] == FIL_PAGE_INDEX
    pm = e.detail["innodb"]["page_map"]
    if pm.doublewrite is not None:            # copies in the doublewrite buffer: no fill, no index
        assert np.isnan(u["fill"][idx_pages & pm.doublewrite]).all()
        idx_pages &= ~pm.doublewrite
    assert np.isfinite(u["fill"][idx_pages]).all()
    assert ((u["fill"][idx_pages] >= 0) & (u["fill"][idx_pages] <= 1)).all()
    for code, name in e.kind_names.items():
        assert name == MARIADB_PAGE_TYPES[code]


def test_owner_names_and_tables(manifest, scanned):
    """Index pages belong to their index, tables are named (dictionary or path)."""
    for mf in paged_files(manifest):
        e = scanned[mf["path"]]
        if mf["kind"] != "ibd":
            continue
        assert e.database == mf["schema"]
        assert e.table == mf["table"]
        for ix in e.sections["innodb"]["indexes"]:
            assert ix["table"].startswith(f"{mf['schema']}.{mf['table']}")
            assert ix["index_id"] in e.owner_names
    ds = scanned["__ds__16k"]
    t = [t for t in ds.tables if t.name == "t_part"]
    assert len(t) == 1 and len(t[0].files) == 5


def test_freed_pages_of_t_deleted(manifest, scanned):
    """t_deleted: 83 INDEX pages by FIL type, 57 of them freed (stale records):
    the extent map says so, innochecksum agrees (26 pages in the index)."""
    e = scanned["16k/fx/t_deleted.ibd"]
    u = e.units
    idx = u["kind"] == FIL_PAGE_INDEX
    free = (u["flags"] & UNIT_FREE) != 0
    mf = [f for f in manifest["files"] if f["path"] == "16k/fx/t_deleted.ibd"][0]
    assert int(idx.sum()) == mf["pages"]["page_type_histogram"]["FIL_PAGE_INDEX"]
    assert int((idx & ~free).sum()) == mf["innochecksum"]["index_summary"][0]["pages"]
    assert (u["owner"][idx & free] == -1).all()
    assert (u["owner"][idx & ~free] == 37).all()


def test_zblob2_counted(scanned, manifest):
    """innochecksum -S skips ZBLOB2 pages (its summary totals 21 of 31 pages)."""
    mf = [f for f in manifest["files"] if f["path"] == "16k/fx/t_zip4.ibd"][0]
    sec = scanned["16k/fx/t_zip4.ibd"].sections["innodb"]
    assert sum(mf["innochecksum"]["page_type_counts"].values()) == 21
    assert sec["page_types"]["FIL_PAGE_TYPE_ZBLOB2"] == mf["innochecksum"]["dump_page_type_counts"][
        "Subsequent Compressed BLOB page"] == 10
    assert sec["pages"] == 31


def test_inspector_regions(scanned):
    e = scanned["16k/fx/t_dynamic.ibd"]
    root = e.sections["innodb"]["indexes"][0]["root_page"]
    info = inspect_page(e, root)
    assert info["FIL_PAGE_OFFSET"] == root
    assert info["FIL_PAGE_TYPE"] == "FIL_PAGE_INDEX"
    assert info["PAGE_LEVEL"] == 1
    regions = info["regions"]
    assert [r[2] for r in regions] == ["FIL header", "page header", "records", "free space",
                                       "page directory", "FIL trailer"]
    assert regions[0][0] == 0 and regions[-1][1] == 16384
    for (a, b, _), (c, _, _) in zip(regions, regions[1:]):
        assert a <= b == c
    # a page_compressed page is shown decompressed
    e2 = scanned["16k/fx/t_pc_zlib.ibd"]
    info2 = inspect_page(e2, 3)
    assert info2["FIL_PAGE_TYPE"] == "FIL_PAGE_INDEX" and info2["PAGE_INDEX_ID"] > 0
    assert len(page_bytes(e2, 3)) == 16384


def test_missing_holes_flagged(tmp_path, fixtures_root, manifest):
    """A copy that lost its sparseness: every page_compressed page whose tail
    should be punched is flagged and the file is reported."""
    src = fixtures_root / "innodb" / "16k" / "fx" / "t_pc_zlib.ibd"
    dst = tmp_path / "fx" / "t_pc_zlib.ibd"
    dst.parent.mkdir()
    dst.write_bytes(src.read_bytes())          # a plain write: no holes at all
    ds = scan(str(dst))
    e = ds.files[0]
    assert (e.database, e.table) == ("fx", "t_pc_zlib")      # a lone file: db from its directory
    assert e.holes == []
    missing = (e.units["flags"] & UNIT_HOLE_MISSING) != 0
    mf = [f for f in manifest["files"] if f["path"] == "16k/fx/t_pc_zlib.ibd"][0]
    expected_pages = {p["page_no"] for p in mf["pages"]["page_compressed_pages"]
                      if (p["stored_bytes"] + 4095) // 4096 * 4096 < 16384}
    expected_pages |= {mf["pages"]["n_pages"] - 1}     # the freed (all-zero) last page
    assert set(int(i) for i in np.nonzero(missing)[0]) == expected_pages
    assert e.sections["innodb"]["hole_bytes"] == 0
    assert e.sections["innodb"]["expected_hole_bytes"] == sum(n for _, n in mf["holes_unallocated"])
    assert any("sparseness lost" in w for w in e.warnings)


def test_zblob_chains(manifest, scanned):
    """t_zip4 (KEY_BLOCK_SIZE=4): every ZBLOB page starts a chain through
    ZBLOB2 pages; every ZBLOB2 page is in exactly one chain, all owned by the
    clustered index (its leaf segment)."""
    e = scanned["16k/fx/t_zip4.ibd"]
    hist = [f for f in manifest["files"] if f["path"] == "16k/fx/t_zip4.ibd"][0]["pages"]["page_type_histogram"]
    chains = e.detail["innodb"]["zblob_chains"]
    assert len(chains) == hist["FIL_PAGE_TYPE_ZBLOB"]
    assert all(c.broken is None for c in chains)
    tails = [p for c in chains for p in c.pages[1:]]
    assert len(tails) == len(set(tails)) == hist["FIL_PAGE_TYPE_ZBLOB2"]
    assert all(int(e.units["kind"][p]) == 12 for p in tails)
    clustered = e.sections["innodb"]["indexes"][0]["index_id"]
    assert all(int(e.units["owner"][p]) == clustered for c in chains for p in c.pages)


def test_zblob_chain_loop_is_bounded():
    from dbxray.parsers.innodb.zip import zblob_chains
    kind = np.array([11, 12, 12], dtype=np.uint16)
    nxt = np.array([1, 2, 1], dtype=np.uint32)         # 2 -> 1 loops
    (c,) = zblob_chains(kind, nxt)
    assert c.pages == [0, 1, 2] and "not an unvisited" in c.broken


def test_inspector_fsp_and_inode_pages(manifest, scanned):
    mf = [f for f in manifest["files"] if f["path"] == "16k/fx/t_blob.ibd"][0]
    e = scanned["16k/fx/t_blob.ibd"]
    info = inspect_page(e, 0)
    fsp = mf["pages"]["fsp_header"]
    assert (info["FSP_SPACE_ID"], info["FSP_SIZE"], info["FSP_FREE_LIMIT"], info["FSP_SPACE_FLAGS"],
            info["FSP_FRAG_N_USED"], info["FSP_SEG_ID"]) == (fsp["space_id"], fsp["size_pages"], fsp["free_limit"],
                                                            fsp["flags"], fsp["frag_n_used"], fsp["seg_id_next"])
    assert [r[2] for r in info["regions"]][:3] == ["FIL header", "FSP header", "extent descriptors"]
    inode_page = [i for i in range(len(e.units)) if e.kind_names[int(e.units["kind"][i])] == "FIL_PAGE_INODE"][0]
    segs = inspect_page(e, inode_page)["segments"]
    # 5 indexes x (leaf + non-leaf segment); FSP_SEG_ID is the next id to hand out
    assert len(segs) == 2 * len(e.sections["innodb"]["indexes"]) == fsp["seg_id_next"] - 1


def test_payloads_of_zip_pages(scanned):
    """ROW_FORMAT=COMPRESSED: the payload is the physical zip page itself."""
    e = scanned["16k/fx/t_zip8.ibd"]
    root = e.sections["innodb"]["indexes"][0]["root_page"]
    raw = page_bytes(e, root)
    assert len(raw) == 8192 and unit_payload(e, root) == raw
    assert int.from_bytes(raw[4:8], "big") == root
    with pytest.raises(Exception, match="out of range"):
        page_bytes(e, len(e.units))


def test_header_decode_mode_equals_full_decode(manifest, fixtures_root):
    """build_page_map(exact_payload=False) decodes only the headers of zlib/lzma
    pages and reads the payload length from the zero fill: on every such page
    of the fixtures it gives the manifest's payload length and original type."""
    from dbxray.parsers.fileio import ReadOnlyFile
    from dbxray.parsers.innodb.pagemap import build_page_map
    n = 0
    for mf in paged_files(manifest):
        pcs = mf["pages"].get("page_compressed_pages") or []
        if not pcs or mf["pages"]["fsp_flags_decoded"].get("compression_algorithm") not in ("zlib", "lzma"):
            continue
        with ReadOnlyFile(str(fixtures_root / "innodb" / mf["path"])) as f:
            pm = build_page_map(f, mf["path"], verify_checksums=False, exact_payload=False)
        for p in pcs:
            assert int(pm.payload_len[p["page_no"]]) == p["payload_len"]
            assert MARIADB_PAGE_TYPES[int(pm.kind[p["page_no"]])] == p["original_page_type"]
            n += 1
    assert n == 88


def test_header_decode_mode_keeps_every_page_fact(manifest, fixtures_root):
    """exact_payload=False (the what-if's scan: zlib and bzip2 pages decoded only as far as
    their headers) gives every page the same type, kind, owner, level, fill and stored bytes
    as the full decode on every page-compressed fixture file; only the payload length may
    come from the zero fill (bzip2: at most the stream's last bytes when they are zero)."""
    from dbxray.parsers.fileio import ReadOnlyFile
    from dbxray.parsers.innodb.pagemap import build_page_map
    algos = set()
    for mf in paged_files(manifest):
        if not mf["pages"].get("page_compressed_pages"):
            continue
        with ReadOnlyFile(str(fixtures_root / "innodb" / mf["path"])) as f:
            full = build_page_map(f, mf["path"], verify_checksums=False)
            light = build_page_map(f, mf["path"], verify_checksums=False, exact_payload=False)
        for name in ("type", "kind", "original_type", "index_id", "level", "n_recs", "n_heap", "heap_top",
                     "garbage", "data_size", "fill", "stored", "compressed", "encrypted", "corrupt", "zero",
                     "free", "seg_id", "owner_index", "owned"):
            a, b = getattr(full, name, None), getattr(light, name, None)
            assert (a is None) == (b is None), (mf["path"], name)
            if a is not None:
                assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), (mf["path"], name)
        diff = full.payload_len.astype(np.int64) - light.payload_len.astype(np.int64)
        assert diff.min() >= 0 and diff.max() <= 8, mf["path"]
        algos.add(full.compression_algorithm)
    assert {"zlib", "bzip2", "lzma"} <= algos

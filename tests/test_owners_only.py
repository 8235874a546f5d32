"""``ScanContext(owners_only=True)`` (the what-if's scan): of a MariaDB page-compressed
tablespace only the pages of fragment extents are decoded, the others take their owner
from the segment owning their extent; every owner, free flag and stored size is the full
scan's, and so is every what-if projection (parsers/innodb/pagemap.py)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema

import numpy as np
import pytest

from dbxray.compress.whatif import run_whatif
from dbxray.parsers.fileio import ReadOnlyFile
from dbxray.parsers.innodb.fil import KIND_PAGE_COMPRESSED_UNDECODED
from dbxray.parsers.innodb.pagemap import build_page_map
from dbxray.parsers.model import ScanContext
from dbxray.parsers.scan import scan

from mariadb_server import PrivateServer, missing

REPO = Path(__file__).resolve().parents[1]


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


# -- the default `dbxray scan` (owners only, --full decodes every page) ---------------------------

#: keys of files[].innodb that the light scan may leave out or state differently; everything
#: else is the full decode's (indexes are checked one key at a time below)
_LIGHT_KEYS = {"page_types", "compressed_payload_bytes", "undecoded_pages", "indexes"}


def _sections(folder, owners_only: bool) -> dict:
    ds = scan(str(folder), ScanContext(depth="headers", verify_checksums=False, owners_only=owners_only))
    return {f.path: f.to_json() for f in ds.files}


def _check_light(full: dict, light: dict) -> int:
    """Everything of the light scan is the full scan's except what it says it did not read;
    returns the pages it left undecoded."""
    assert full.keys() == light.keys()
    undecoded = 0
    for path, a in full.items():
        b = light[path]
        assert {k: v for k, v in a.items() if k != "innodb"} == {k: v for k, v in b.items() if k != "innodb"}, path
        sa, sb = a.get("innodb") or {}, b.get("innodb") or {}
        assert {k: v for k, v in sa.items() if k not in _LIGHT_KEYS} == \
            {k: v for k, v in sb.items() if k not in _LIGHT_KEYS}, path
        n = sb.get("undecoded_pages", 0)
        undecoded += n
        if not n:
            assert sa == sb, path
            continue
        assert "undecoded_pages" not in sa
        # the page types the light scan read are the full scan's, the rest is named as not decoded
        assert sum(sa["page_types"].values()) == sum(sb["page_types"].values()), path
        assert sb["page_types"]["page_compressed (not decoded)"] == n, path
        for kind, c in sb["page_types"].items():
            if kind != "page_compressed (not decoded)":
                assert c <= sa["page_types"].get(kind, 0), (path, kind)
        assert sb["compressed_payload_bytes"] in (None, sa["compressed_payload_bytes"]), path
        assert len(sa["indexes"]) == len(sb["indexes"]), path
        for ia, ib in zip(sa["indexes"], sb["indexes"]):
            for k in ("index_id", "name", "table", "root_page", "pages", "leaf_pages", "levels"):
                assert ia[k] == ib[k], (path, ia["index_id"], k)
            if ib.get("undecoded_pages"):
                assert ib["records"] is None and ib["fill_ratio"] is None, (path, ib)
            else:
                assert (ia["records"], ia["fill_ratio"]) == (ib["records"], ib["fill_ratio"]), (path, ib)
    return undecoded


def test_light_scan_states_what_the_full_decode_states(sparse_fixtures, big_page_compressed):
    """Pages, leaf pages and levels of every index equal the full decode's, BLOB pages of
    the leaf segment included (they are compressed too, and are no B-tree page); records and
    fill are None exactly where pages were left undecoded."""
    undecoded = 0
    for folder in (sparse_fixtures / "innodb", sparse_fixtures / "mariadb", big_page_compressed):
        undecoded += _check_light(_sections(folder, False), _sections(folder, True))
    assert undecoded > 1000
    full = _sections(big_page_compressed, False)
    light = _sections(big_page_compressed, True)
    for path in full:
        blob_full = full[path]["innodb"]["page_types"].get("FIL_PAGE_TYPE_BLOB", 0)
        blob_light = light[path]["innodb"]["page_types"].get("FIL_PAGE_TYPE_BLOB", 0)
        assert blob_full > 500 and blob_light < blob_full / 4, path   # most BLOB pages not decoded


def test_cli_scan_default_is_light_and_full_decodes(big_page_compressed, tmp_path):
    from dbxray.app.cli import main
    for layout in ("fcrc32", "legacy"):
        f = big_page_compressed / layout / "t.ibd"
        assert main(["scan", str(f), "--json", "-o", str(tmp_path / "d.json"), "--no-progress"]) == 0
        assert main(["scan", str(f), "--json", "--full", "-o", str(tmp_path / "f.json"), "--no-progress"]) == 0
        d = json.loads((tmp_path / "d.json").read_text())["files"][0]["innodb"]
        full = json.loads((tmp_path / "f.json").read_text())["files"][0]["innodb"]
        assert d["undecoded_pages"] > 500 and "undecoded_pages" not in full
        clustered_d, clustered_f = d["indexes"][0], full["indexes"][0]
        assert clustered_f["records"] == 12000 and clustered_d["records"] is None
        assert clustered_d["pages"] == clustered_f["pages"] and clustered_d["leaf_pages"] == clustered_f["leaf_pages"]
        assert "page_compressed (not decoded)" not in full["page_types"]
        assert main(["scan", str(f), "--summary", "-o", str(tmp_path / "s.json"), "--no-progress"]) == 0
        s = json.loads((tmp_path / "s.json").read_text())
        jsonschema.validate(s, json.loads((REPO / "resources" / "scan_summary.schema.json").read_text()))
        assert s["files"][0]["innodb"]["undecoded_pages"] == d["undecoded_pages"]
        assert s["files"][0]["innodb"]["compressed_payload_bytes"] == d["compressed_payload_bytes"]


def test_compare_of_a_light_scan_says_rows_are_not_known(big_page_compressed, tmp_path):
    """`dbxray compare` of a saved light scan: the page-compressed table's rows are not
    known (not 0), with the reason; the full scan counts them."""
    from dbxray.parsers.compare import twins
    root = tmp_path / "dd"
    for db, layout in (("d1", "fcrc32"), ("d2", "legacy")):
        (root / db).mkdir(parents=True)
        shutil.copyfile(big_page_compressed / layout / "t.ibd", root / db / "t.ibd")
    rows = {}
    for light in (False, True):
        ds = scan(str(root), ScanContext(depth="headers", verify_checksums=False, owners_only=light))
        groups = twins(ds)
        assert len(groups) == 1
        rows[light] = {r.table: (r.rows, r.notes) for r in groups[0]}
    assert {k: v[0] for k, v in rows[False].items()} == {"d1.t": 12000, "d2.t": 12000}
    for table, (n, notes) in rows[True].items():
        assert n is None, table
        assert any("not decode" in x for x in notes), notes

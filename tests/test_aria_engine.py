"""The Aria engine (parsers/aria/), behind the engine protocol: every Aria file of the
real MariaDB data dir (its own tables, MariaDB's ``mysql.*`` system tables, the log
and its control file) gets its engine, database, table and role; each table's
TABLE_ROWS, DATA_LENGTH, INDEX_LENGTH and DATA_FREE equal what the server reported, the
rows on the data pages equal them, every page's CRC is verified; a bad CRC, impossible
counts and truncation are named with file and offset, the rest still read, nothing
written."""
from __future__ import annotations

import hashlib
import json
import os
import shutil

import pytest

from dbxray.parsers.model import UNIT_BAD_CHECKSUM
from dbxray.parsers.scan import scan
from dbxray.parsers.tree import build_tree

ROLE = {"data": "table_data", "index": "table_index", "log": "redo_log", "log_control": "engine_environment"}


@pytest.fixture(scope="module")
def manifest(fixtures_root):
    return json.loads((fixtures_root / "mariadb" / "manifest.json").read_text())


@pytest.fixture(scope="module")
def ds(sparse_fixtures):
    return scan(str(sparse_fixtures / "mariadb" / "datadir"))


def test_every_aria_file_gets_engine_database_table_and_role(ds, manifest):
    want = {f["path"]: f for f in manifest["files"] if f["engine"] == "aria"}
    got = {f.path: f for f in ds.files if f.engine == "aria"}
    assert set(got) == set(want) and len(got) == 56
    for path, f in got.items():
        assert f.role == ROLE[want[path]["role"]], path
        if want[path].get("table"):
            assert f"{f.database}.{f.table}" == want[path]["table"], path
            assert int(f.units["stored"].sum()) == f.apparent_bytes == want[path]["apparent_size"], path
        else:
            assert f.table is None
        assert f.errors == [] and f.warnings == [], (path, f.errors, f.warnings)


def _aria_tables(manifest):
    return [r for r in manifest["sql"]["tables"] if r["ENGINE"] == "Aria"]


def test_every_aria_table_equals_information_schema_field_by_field(ds, manifest):
    rows = _aria_tables(manifest)
    assert len(rows) == 26 and {r["TABLE_SCHEMA"] for r in rows} == {"misc", "mysql"}
    tables = {t.key: t for t in ds.tables if t.engine == "aria"}
    for r in rows:
        key = f"{r['TABLE_SCHEMA']}.{r['TABLE_NAME']}"
        i = tables[key].info
        assert (i["table_rows"], i["data_length"], i["index_length"], i["data_free"]) == (
            r["TABLE_ROWS"], r["DATA_LENGTH"], r["INDEX_LENGTH"], r["DATA_FREE"]), key
        assert i["row_format"] == r["ROW_FORMAT"], key
        assert i["transactional"] == ("transactional=1" in r["CREATE_OPTIONS"]), key
        assert i["rows"] == r["TABLE_ROWS"], key             # rows found on the pages / in the blocks
        assert i["bad_crc_pages"] == 0, key
    for key in ("misc.aria_dyn", "misc.aria_page"):
        m = manifest["tables"][key]
        i = tables[key].info
        assert (i["table_rows"], i["data_length"], i["index_length"], i["data_free"]) == (
            m["is_table_rows"], m["is_data_length"], m["is_index_length"], m["is_data_free"])
        assert i["rows"] == manifest["sql"]["row_counts"][key] == m["row_count"]      # COUNT(*)
    st = {r["Name"]: r for r in manifest["sql"]["aria_myisam_csv_table_status"]}
    for name in ("aria_dyn", "aria_page"):
        i = tables[f"misc.{name}"].info
        assert (i["table_rows"], i["data_length"], i["index_length"], i["data_free"]) == (
            st[name]["Rows"], st[name]["Data_length"], st[name]["Index_length"], st[name]["Data_free"])


def test_pages_and_their_crcs(ds):
    f = ds.file("mysql/help_topic.MAD")
    sec = f.sections["aria"]
    assert sec["page_types"] == {"HEAD_PAGE": 211, "TAIL_PAGE": 12, "BLOB_PAGE": 79, "BITMAP_PAGE": 1}
    assert sec["checksum"]["bad_pages"] == [] and sec["checksum"]["algorithm"].startswith("crc32")
    assert sec["pages"] * 8192 == f.apparent_bytes and int(f.unit_facts.records.sum()) >= sec["rows"] == 1010
    proc = ds.file("mysql/proc.MAD").sections["aria"]
    assert proc["page_types"]["UNALLOCATED_PAGE"] == proc["unallocated_pages"] == 1   # the all-zero page 56
    idx = ds.file("misc/aria_page.MAI").sections["aria"]
    assert (idx["pages"], idx["leaf_pages"], idx["node_pages"], idx["deleted_pages"]) == (9, 7, 2, 0)
    assert idx["per_key"] == {"0": {"pages": 5, "leaf_pages": 4, "node_pages": 1},
                              "1": {"pages": 4, "leaf_pages": 3, "node_pages": 1}}
    assert idx["transactional"] is True and idx["checksum"]["bad_pages"] == []
    # an empty table's bitmap page carries no CRC (MARIA_NO_CRC_BITMAP_PAGE), which is accepted
    assert ds.file("mysql/db.MAD").sections["aria"]["checksum"]["no_crc_pages"] == 1
    secs = [(f.role, f.sections["aria"]) for f in ds.files if f.engine == "aria" and f.role != "redo_log"
            and "checksum" in f.sections.get("aria", {})]
    data = sum(s["pages"] - s["checksum"]["no_crc_pages"] - s["unallocated_pages"] for r, s in secs
               if r == "table_data")
    index = sum(s["pages"] - s["checksum"]["no_crc_pages"] for r, s in secs if r == "table_index")
    assert (data, index) == (415, 41) and not any(s["checksum"]["bad_pages"] for _r, s in secs)


def test_log_and_control_files(ds, manifest):
    c = ds.file("aria_log_control").sections["aria"]
    assert c["checksums_ok"] is True and c["block_size"] == 8192 and c["last_log_number"] == 1
    log = ds.file("aria_log.00000001").sections["aria"]
    major, minor, patch = (int(x) for x in manifest["server_version"].split("-")[0].split("."))
    assert log["server_version"] == major * 10000 + minor * 100 + patch and log["file_number"] == 1
    assert log["page_size"] == 8192


def test_tree_has_the_system_tables(ds):
    root = build_tree(ds)
    row = next(c for c in root.children if c.kind == "engine" and c.name == "Aria")
    assert {"misc", "mysql", "sys"} <= {c.name for c in row.children}
    assert {"aria", "myisam"} <= set(ds.to_json()["engines"])


# -- bad input -------------------------------------------------------------------------

def _copy(fixtures_root, tmp_path, db, name):
    d = tmp_path / db
    d.mkdir(parents=True, exist_ok=True)
    for ext in ("MAI", "MAD"):
        shutil.copy(fixtures_root / "mariadb" / "datadir" / db / f"{name}.{ext}", d / f"{name}.{ext}")
    return d


def _scan(d):
    def fp():
        return {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), os.stat(p).st_mtime_ns) for p in d.iterdir()}
    before = fp()
    ds = scan(str(d))
    assert fp() == before                             # nothing written
    return {f.path: f for f in ds.files}, next(t for t in ds.tables if t.engine == "aria")


def _patch(path, offset, data):
    b = bytearray(path.read_bytes())
    b[offset:offset + len(data)] = data
    path.write_bytes(bytes(b))


def test_a_page_with_a_bad_crc_is_named_and_the_rest_read(fixtures_root, tmp_path):
    d = _copy(fixtures_root, tmp_path, "misc", "aria_page")
    b = (d / "aria_page.MAD").read_bytes()
    _patch(d / "aria_page.MAD", 3 * 8192 + 4000, bytes([b[3 * 8192 + 4000] ^ 0x40]))
    _patch(d / "aria_page.MAI", 5 * 8192 + 100, b"\x99")
    files, t = _scan(d)
    assert files["aria_page.MAD"].errors == ["aria_page.MAD @ offset 24576: page 3: CRC does not match "
                                             "(ma_pagecrc.c)"]
    assert files["aria_page.MAI"].errors == ["aria_page.MAI @ offset 40960: index page 5: CRC does not match "
                                             "(ma_pagecrc.c)"]
    u = files["aria_page.MAD"].units
    assert [int(i) for i in (u["flags"] & UNIT_BAD_CHECKSUM).nonzero()[0]] == [3]
    assert t.info["bad_crc_pages"] == 2 and t.info["rows"] == 2000 and t.info["table_rows"] == 2000


def test_impossible_counts_and_truncation(fixtures_root, tmp_path):
    d = _copy(fixtures_root, tmp_path, "misc", "aria_page")
    _patch(d / "aria_page.MAI", 49, (10 ** 9).to_bytes(8, "big"))               # state.records
    files, t = _scan(d)
    assert files["aria_page.MAI"].errors == ["aria_page.MAI @ offset 49: records 1000000000 > 255 rows on each "
                                             "of the 31 pages of data_file_length 253952"]
    assert t.info["rows"] == 2000 and t.info["table_rows"] == 10 ** 9
    assert files["aria_page.MAD"].warnings == ["aria_page.MAD: 2000 rows on the HEAD pages, the state says "
                                               "1000000000"]

    d = _copy(fixtures_root, tmp_path / "b", "misc", "aria_page")
    data = (d / "aria_page.MAD").read_bytes()
    (d / "aria_page.MAD").write_bytes(data[:10 * 8192 + 100])
    files, t = _scan(d)
    assert files["aria_page.MAD"].errors == [
        "aria_page.MAD @ offset 82020: file ends at 82020, the state's data_file_length is 253952: truncated",
        "aria_page.MAD @ offset 81920: 100 bytes after the last whole page of 8192"]
    sec = files["aria_page.MAD"].sections["aria"]
    assert sec["pages"] == 10 and 0 < sec["rows"] < 2000 and sec["checksum"]["bad_pages"] == []

    idx = (fixtures_root / "mariadb" / "datadir" / "misc" / "aria_page.MAI").read_bytes()
    (d / "aria_page.MAI").write_bytes(idx[:100])
    files, t = _scan(d)
    assert files["aria_page.MAI"].errors == ["aria_page.MAI @ offset 100: state cut at byte 100 (it takes 155 "
                                             "bytes)"]
    assert files["aria_page.MAD"].warnings == ["aria_page.MAD: no readable .MAI state beside it: the rows are not "
                                               "counted"]


def test_damaged_control_and_log_files(fixtures_root, tmp_path):
    d = tmp_path / "dd"
    d.mkdir()
    src = fixtures_root / "mariadb" / "datadir"
    ctl = bytearray((src / "aria_log_control").read_bytes())
    ctl[40] ^= 1
    (d / "aria_log_control").write_bytes(bytes(ctl))
    (d / "aria_log.00000001").write_bytes((src / "aria_log.00000001").read_bytes()[:20])
    ds = scan(str(d))
    files = {f.path: f for f in ds.files}
    assert files["aria_log_control"].errors == ["aria_log_control @ offset 0: checksum of the changeable part does "
                                                "not match (ma_control_file.c: the server refuses to start)"]
    assert files["aria_log.00000001"].errors == ["aria_log.00000001 @ offset 20: log header cut: 20 of 44 bytes"]
    assert files["aria_log.00000001"].role == "redo_log" and files["aria_log.00000001"].engine == "aria"


def test_a_saved_scan_gives_the_same_table_figures(ds, tmp_path):
    from dbxray.parsers.savedscan import load_saved_scan
    p = tmp_path / "s.dbxray.json"
    p.write_text(json.dumps(ds.to_json()))
    saved = load_saved_scan(str(p))
    for engine in ("aria", "myisam"):
        live = {t.key: t.info for t in ds.tables if t.engine == engine}
        again = {t.key: t.info for t in saved.tables if t.engine == engine}
        assert again == live and len(live) >= 2

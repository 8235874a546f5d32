"""Parts and Log-family tables written by several ClickHouse releases (chdb
1.4.1 = ClickHouse 23.10, 2.1.1 = 24.8, 3.7.2 = 25.8, 4.4.0 = 26.9), each
compared with that release's own system tables (tests/data/clickhouse_versions,
made by its make.py; chdb 1.4.1's server has no system.parts, so its part
figures were read by chdb 2.1.1 on a copy: ``truth_from_copy`` in truth.json)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dbxray.parsers.model import ScanContext
from dbxray.parsers.scan import scan

DATA = Path(__file__).resolve().parent / "data" / "clickhouse_versions"
DIRS = sorted(p for p in DATA.glob("chdb-*") if (p / "truth.json").is_file())


def _id(p: Path) -> str:
    truth = json.loads((p / "truth.json").read_text())
    return f"{p.name}-clickhouse-{truth['clickhouse_version']}"


@pytest.fixture(scope="module", params=DIRS, ids=[_id(p) for p in DIRS])
def version(request, tmp_path_factory):
    src: Path = request.param
    dst = tmp_path_factory.mktemp(src.name) / "datadir"
    shutil.copytree(src / "datadir", dst, symlinks=True)
    truth = json.loads((src / "truth.json").read_text())
    ds = scan(str(dst), ScanContext())
    tables = {t["table"]: t for t in ds.sections["clickhouse"]["tables"]}
    return truth, ds, tables


def test_four_releases_present():
    assert {p.name for p in DIRS} >= {"chdb-1.4.1", "chdb-2.1.1", "chdb-3.7.2", "chdb-4.4.0"}


def test_tables_totals_and_keys(version):
    truth, ds, tables = version
    for st in truth["system_tables"]:
        t = tables[st["name"]]
        assert t["engine"] == st["engine"], st["name"]
        assert t["total_bytes"] == st["total_bytes"], st["name"]
        if st["total_rows"] is None and st["engine"] in ("Log", "StripeLog"):
            # the server had not loaded the marks / index yet (releases before 25.x do not on INSERT):
            # the figure it gives once it has is the table's row count
            assert t["total_rows"] == truth["row_counts"][st["name"]], st["name"]
        else:
            assert t["total_rows"] == st["total_rows"], st["name"]
        assert t["sorting_key"] == st["sorting_key"], st["name"]
        assert t["primary_key"] == st["primary_key"], st["name"]
        assert t["partition_key"] == st["partition_key"], st["name"]
        assert t["errors"] == [], (st["name"], t["errors"])


def test_system_columns(version):
    truth, ds, tables = version
    n = 0
    for sc in truth["system_columns"]:
        cols = {c["name"]: c for c in tables[sc["table"]]["columns"]}
        c = cols[sc["name"]]
        assert c["type"] == sc["type"]
        assert (c["compressed_bytes"], c["uncompressed_bytes"], c["marks_bytes"]) == \
            (sc["data_compressed_bytes"], sc["data_uncompressed_bytes"], sc["marks_bytes"]), (sc["table"], sc["name"])
        n += 1
    assert n >= 30


def test_log_family_computed(version):
    """What the engine does not report: every byte of every data file is in a
    column's blocks, and the fixed-width column's uncompressed bytes are its rows x 4."""
    truth, ds, tables = version
    rows = truth["row_counts"]
    for name in ("log_tiny", "log_log", "log_stripe", "log_codec"):
        t = tables[name]
        files = {f["file"]: f for f in t["log_files"]}
        assert all(f["size"] == f["recorded_size"] == f["compressed_bytes"] for f in files.values())
        data = sum(f["size"] for f in files.values())
        owned = sum(c["computed"]["compressed_bytes"] for c in t["columns"])
        if t["engine"] == "StripeLog":
            assert 0 < data - owned <= 64      # the first Native block's header: a small block of its own
        else:
            assert owned == data
        cols = {c["name"]: c for c in t["columns"]}
        if name != "log_codec":
            a = cols["a"]["computed"]["uncompressed_bytes"]
            if t["engine"] == "StripeLog":      # the column's name and type strings before each block's values
                assert a == 4 * rows[name] + 3 * len(b"\x01a\x06UInt32")
            else:
                assert a == 4 * rows[name]
        if t["engine"] == "Log":
            assert t["marks_count"] == (3 if name == "log_log" else 2)
        if t["engine"] == "TinyLog":
            assert t["computed_rows"] == rows[name] and t["total_rows"] is None
    # the data files are units (compressed blocks) owned by their column
    for f in ds.files:
        if f.table == "log_log" and f.path.endswith("a.bin"):
            assert f.role == "table_data" and len(f.units) >= 3 and set(f.owner_names.values()) == {"a"}


def test_parts_and_columns(version):
    truth, ds, tables = version
    active = [p for p in truth["system_parts"] if p["active"]]
    assert active
    for sp in active:
        (p,) = [p for p in tables[sp["table"]]["parts"] if p["name"] == sp["name"] and p["state"] == "active"]
        assert (p["part_type"], p["rows"], p["marks"], p["bytes_on_disk"], p["data_compressed_bytes"],
                p["data_uncompressed_bytes"], p["marks_bytes"]) == \
            (sp["part_type"], sp["rows"], sp["marks"], sp["bytes_on_disk"], sp["data_compressed_bytes"],
             sp["data_uncompressed_bytes"], sp["marks_bytes"]), (sp["table"], sp["name"])
    for pc in truth["system_parts_columns"]:
        (p,) = [p for p in tables[pc["table"]]["parts"] if p["name"] == pc["part"] and p["state"] == "active"]
        c = next(c for c in p["columns"] if c["name"] == pc["column"])
        assert (c["compressed_bytes"], c["uncompressed_bytes"], c["marks_bytes"]) == (pc["c"], pc["u"], pc["m"]), \
            (pc["table"], pc["part"], pc["column"])
    kinds = {p["part_type"] for p in active}
    assert kinds == {"Wide", "Compact"}


def test_projection_parts(version):
    truth, ds, tables = version
    assert truth["system_projection_parts"]
    for pp in truth["system_projection_parts"]:
        (p,) = [p for p in tables[pp["table"]]["parts"] if p["name"] == pp["parent_name"]]
        (q,) = [q for q in p["projection_parts"] if q["name"] == pp["name"]]
        assert (q["rows"], q["bytes_on_disk"], q["data_compressed_bytes"], q["data_uncompressed_bytes"]) == \
            (pp["rows"], pp["bytes_on_disk"], pp["data_compressed_bytes"], pp["data_uncompressed_bytes"])


def test_detached_parts(version):
    """system.detached_parts.bytes_on_disk is the folder's size; the checksums sum beside it."""
    truth, ds, tables = version
    assert truth["system_detached_parts"]
    for dp in truth["system_detached_parts"]:
        (p,) = [p for p in tables[dp["table"]]["parts"] if p["name"] == dp["name"] and p["state"] == "detached"]
        assert p["bytes_on_disk"] == dp["bytes_on_disk"], dp
        assert p["checksums_bytes"] < p["bytes_on_disk"]


def test_format_version_belongs_to_its_table(version):
    truth, ds, tables = version
    fv = [f for f in ds.files if f.path.endswith("/format_version.txt")]
    assert len(fv) == 3          # the three MergeTree tables
    for f in fv:
        assert f.table in ("mt_wide", "mt_compact", "mt_detach") and f.database == "v"
        assert f.role == "table_metadata"
        assert f.path in ds.table("clickhouse", "v", f.table).files


def test_log_sections_typed_and_saved(version, tmp_path):
    """Every key written for the Log-family tables is declared, and a saved scan reads them back."""
    from dbxray.parsers.clickhouse.section import ClickHouseLogFile, ClickHouseSection, ClickHouseTable
    from dbxray.parsers.savedscan import load_saved_scan
    truth, ds, tables = version
    for name in ("log_tiny", "log_log", "log_stripe"):
        t = tables[name]
        assert ClickHouseTable.undeclared(t) == []
        assert all(isinstance(f, ClickHouseLogFile) and not ClickHouseLogFile.undeclared(f) for f in t["log_files"])
    p = tmp_path / "s.dbxray.json"
    p.write_text(json.dumps(ds.to_json()))
    again = load_saved_scan(str(p)).sections["clickhouse"]
    assert isinstance(again, ClickHouseSection) and again == json.loads(json.dumps(ds.sections["clickhouse"]))
    back = {t["table"]: t for t in again["tables"]}
    assert isinstance(back["log_log"]["log_files"][0], ClickHouseLogFile)

"""Log-family tables (TinyLog, Log, StripeLog) of the ClickHouse 26.9 sample
(tests/data/clickhouse_versions/chdb-4.4.0): one table folder scanned alone,
copied out of its data dir (no DDL), and damaged copies (named errors, the rest
still read)."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from dbxray.parsers.clickhouse.filechecker import FileCheckerError, read_sizes_json
from dbxray.parsers.clickhouse.logmarks import LogMarksError, read_log_marks
from dbxray.parsers.model import ScanContext
from dbxray.parsers.scan import scan

SRC = Path(__file__).resolve().parent / "data" / "clickhouse_versions" / "chdb-4.4.0"
TRUTH = json.loads((SRC / "truth.json").read_text())


def _folder(table: str) -> Path:
    (st,) = [t for t in TRUTH["system_tables"] if t["name"] == table]
    return SRC / "datadir" / st["rel_paths"][0]


def _alone(tmp_path: Path, table: str) -> Path:
    dst = tmp_path / table
    shutil.copytree(_folder(table), dst)
    return dst


def _only_table(ds):
    (t,) = ds.sections["clickhouse"]["tables"]
    return t


@pytest.mark.parametrize("table", ["log_tiny", "log_log", "log_stripe"])
def test_folder_alone_finds_the_engine(tmp_path, table):
    ds = scan(str(_alone(tmp_path, table)), ScanContext())
    assert ds.engines == ["clickhouse"]
    assert all(f.engine == "clickhouse" for f in ds.files)
    t = _only_table(ds)
    (st,) = [x for x in TRUTH["system_tables"] if x["name"] == table]
    assert t["engine"] == st["engine"] and t["total_bytes"] == st["total_bytes"]
    assert t["errors"] == []
    sc = {c["name"]: c for c in TRUTH["system_columns"] if c["table"] == table}
    got = {c["name"]: c for c in t["columns"]}
    assert set(got) == set(sc)
    for name, c in sc.items():
        assert got[name]["compressed_bytes"] == c["data_compressed_bytes"]
    if table == "log_log":
        assert t["total_rows"] == st["total_rows"] == TRUTH["row_counts"][table]
    if table == "log_stripe":        # the index names the columns and types
        assert [c["type"] for c in t["columns"]] == [c["type"] for c in sc.values()]
        assert t["total_rows"] == TRUTH["row_counts"][table]


def test_sizes_json_reader():
    assert read_sizes_json(b'{"yandex":{"a%2Ebin":{"size":"12"}}}').sizes == {"a.bin": 12}
    for bad in (b"{", b'{"clickhouse":{"a%2Ebin":{"size":"x"}}}', b"[]", b'{"other":{}}'):
        with pytest.raises(FileCheckerError):
            read_sizes_json(bad)


def test_marks_reader_inconsistent_size():
    with pytest.raises(LogMarksError, match="inconsistent"):
        read_log_marks(b"\0" * 40, 2)


def test_sizes_json_that_does_not_parse(tmp_path):
    d = _alone(tmp_path, "log_log")
    (d / "sizes.json").write_bytes(b'{"clickhouse":{"a%2Ebin":')
    ds = scan(str(d), ScanContext())
    t = _only_table(ds)
    assert t["total_bytes"] is None
    assert any("sizes.json does not parse" in e for e in t["errors"])
    cols = {c["name"]: c for c in t["columns"]}
    assert cols["a"]["computed"]["uncompressed_bytes"] == 4 * TRUTH["row_counts"]["log_log"]   # the rest read


def test_marks_shorter_than_the_data(tmp_path):
    d = _alone(tmp_path, "log_log")
    data = (d / "__marks.mrk").read_bytes()
    (d / "__marks.mrk").write_bytes(data[:-8])
    t = _only_table(scan(str(d), ScanContext()))
    assert any("size of marks file is inconsistent" in e for e in t["errors"])
    assert t["marks_count"] is None and t["total_rows"] is None
    assert sum(c["computed"]["blocks"] for c in t["columns"]) > 0


def test_file_longer_than_recorded(tmp_path):
    d = _alone(tmp_path, "log_tiny")
    with open(d / "a.bin", "ab") as f:
        f.write(b"\0" * 100)
    t = _only_table(scan(str(d), ScanContext()))
    assert any("truncates it to" in e for e in t["errors"])
    cols = {c["name"]: c for c in t["columns"]}
    (sc,) = [c for c in TRUTH["system_columns"] if c["table"] == "log_tiny" and c["name"] == "a"]
    assert cols["a"]["compressed_bytes"] == sc["data_compressed_bytes"]      # the engine counts the recorded size


def test_stripelog_index_damaged(tmp_path):
    d = _alone(tmp_path, "log_stripe")
    raw = bytearray((d / "index.mrk").read_bytes())
    raw[40] ^= 0xFF
    (d / "index.mrk").write_bytes(bytes(raw))
    t = _only_table(scan(str(d), ScanContext()))
    assert any("index.mrk" in e or "checksum" in e for e in t["errors"])
    assert t["total_bytes"] == [x for x in TRUTH["system_tables"] if x["name"] == "log_stripe"][0]["total_bytes"]


def test_whatif_samples_log_blocks():
    from dbxray.compress.engines.clickhouse import column_unitset
    from dbxray.parsers.clickhouse import payloads
    from dbxray.parsers.codecs import ch_block
    ds = scan(str(SRC / "datadir"), ScanContext())
    for table in ("log_log", "log_stripe", "log_tiny"):
        t = next(x for x in ds.sections["clickhouse"]["tables"] if x["table"] == table)
        col = next(c for c in t["columns"] if c["name"] == "a")
        us, model, current = column_unitset(ds, payloads, ch_block, "v", table, col, "LZ4")
        assert len(us.logical) == col["computed"]["blocks"]
        assert int(us.logical.sum()) == col["computed"]["uncompressed_bytes"]
        assert len(us.payload(0)) == int(us.logical[0])

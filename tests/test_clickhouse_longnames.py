"""Stream names longer than max_file_name_length are stored under their hex
SipHash128 (a small part written by the engine: tests/data/clickhouse_longname,
made by its make.py with chdb); with and without columns_substreams.txt."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from dbxray.parsers.clickhouse.streams import hashed_file_name
from dbxray.parsers.model import ScanContext
from dbxray.parsers.scan import scan

DATA = Path(__file__).resolve().parent / "data" / "clickhouse_longname"


@pytest.fixture(scope="module")
def expected():
    return json.loads((DATA / "expected.json").read_text())


def _check(ds, expected):
    t = next(t for t in ds.sections["clickhouse"]["tables"] if t["table"] == "t")
    assert t["database"] == "ln" and t["errors"] == []
    (p,) = t["parts"]
    (mp,) = expected["system_parts"]
    assert (p["name"], p["rows"], p["marks"], p["bytes_on_disk"], p["data_compressed_bytes"],
            p["data_uncompressed_bytes"], p["marks_bytes"]) == \
        (mp["name"], mp["rows"], mp["marks"], mp["bytes_on_disk"], mp["c"], mp["u"], mp["m"])
    cols = {c["name"]: c for c in p["columns"]}
    for mc in expected["system_parts_columns"]:
        c = cols[mc["column"]]
        assert (c["compressed_bytes"], c["uncompressed_bytes"], c["marks_bytes"]) == (mc["c"], mc["u"], mc["m"])
        assert [s["stream"] for s in c["streams"]] == mc["substreams"]
        assert [s["file"][:-4] for s in c["streams"]] == mc["filenames"]


def test_hashed_names_equal_engine(expected):
    n = 0
    for mc in expected["system_parts_columns"]:
        for stream, fname in zip(mc["substreams"], mc["filenames"]):
            if stream != fname:
                assert hashed_file_name(stream) == fname
                n += 1
    assert n >= 3


def test_long_names_sizes(expected):
    _check(scan(str(DATA / "datadir"), ScanContext()), expected)


def test_long_names_without_substreams_file(expected, tmp_path):
    dst = tmp_path / "datadir"
    shutil.copytree(DATA / "datadir", dst, symlinks=True)
    (part,) = list(dst.glob("store/*/*/all_1_1_0"))
    os.remove(part / "columns_substreams.txt")      # streams derived from the types instead
    _check(scan(str(dst), ScanContext()), expected)

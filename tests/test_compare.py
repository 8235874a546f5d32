"""Engine comparison (parsers/compare.py, `dbxray compare`, the Compare view): the
fixture's twins arc.lineorder_phrase (ARCHIVE, 26,000 rows) and inno.lineorder_phrase
(InnoDB, the first 500 rows of the same input) side by side, each figure against the
manifest: rows = COUNT(*), information_schema's TABLE_ROWS and DATA_LENGTH as each
engine computes them, bytes on disk and allocated from the files; the CLI table, JSON
and PNG/SVG export of the view."""
from __future__ import annotations

import json
import os
import struct
import subprocess
import sys

import pytest

from dbxray.parsers.compare import compare_json, twins
from dbxray.parsers.scan import scan


@pytest.fixture(scope="module")
def manifest(fixtures_root):
    return json.loads((fixtures_root / "mariadb" / "manifest.json").read_text())


@pytest.fixture(scope="module")
def datadir(sparse_fixtures):
    return sparse_fixtures / "mariadb" / "datadir"


@pytest.fixture(scope="module")
def ds(datadir):
    return scan(str(datadir))


def test_twins_equal_the_manifest(ds, datadir, manifest):
    groups = twins(ds)
    assert [[r.table for r in g] for g in groups] == [["arc.lineorder_phrase", "inno.lineorder_phrase"]]
    arc, inno = groups[0]
    files = {f["path"]: f for f in manifest["files"]}
    for r in (arc, inno):
        mt = manifest["tables"][r.table]
        assert r.rows == manifest["sql"]["row_counts"][r.table] == mt["row_count"]
        assert r.is_table_rows == mt["is_table_rows"]
        assert r.is_data_length == mt["is_data_length"]
        assert r.is_index_length == mt["is_index_length"]
        assert sorted(r.files) == sorted(mt["files"])
        assert r.disk_bytes == sum(files[p]["apparent_size"] for p in mt["files"])
        assert r.allocated_bytes == sum(os.stat(datadir / p).st_blocks * 512 for p in mt["files"])
        assert r.bytes_per_row == r.allocated_bytes / r.rows
    assert (arc.engine, inno.engine) == ("archive", "innodb")
    raw = ds.file("arc/lineorder_phrase.ARZ").sections["archive"].uncompressed_bytes / 26000
    assert arc.raw_row_bytes == inno.raw_row_bytes == raw
    assert inno.ratio_to_raw == pytest.approx(inno.bytes_per_row / raw)
    assert arc.ratio_to_raw < 1 < inno.ratio_to_raw          # ARCHIVE compresses; InnoDB pages do not
    js = compare_json(ds)
    assert js["kind"] == "compare" and js["groups"][0]["name"] == "lineorder_phrase"
    assert js["groups"][0]["tables"][1]["information_schema"] == {"table_rows": 500, "data_length": 245760,
                                                                 "index_length": 0}


def _dbxray(*args, cwd):
    return subprocess.run([sys.executable, "-m", "dbxray.app", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})


def test_cli_table_json_and_export(datadir, tmp_path):
    res = _dbxray("compare", str(datadir), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0] == "lineorder_phrase:"
    arc = next(line for line in lines if line.strip().startswith("arc.lineorder_phrase"))
    inno = next(line for line in lines if line.strip().startswith("inno.lineorder_phrase"))
    assert "archive" in arc and "26,000" in arc and "innodb" in inno and "500" in inno
    assert any(line.strip().startswith("raw row: 355.4 B") for line in lines)
    res = _dbxray("compare", str(datadir), "-o", str(tmp_path / "c.json"), cwd=tmp_path)
    assert res.returncode == 0 and json.loads((tmp_path / "c.json").read_text())["groups"][0]["tables"][0]["rows"] \
        == 26000
    res = _dbxray("compare", str(tmp_path / "nothing"), cwd=tmp_path)
    assert res.returncode == 1 and "no such file or directory" in res.stderr
    for ext in ("png", "svg"):
        out = tmp_path / f"compare.{ext}"
        res = _dbxray("export", str(datadir), "--view", "compare", "-o", str(out), "--width", "1000",
                      "--height", "600", cwd=tmp_path)
        assert res.returncode == 0, res.stderr
        data = out.read_bytes()
        if ext == "png":
            assert data[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", data[16:24]) == (1000, 600)
        else:
            assert b"<svg" in data and b"inno.lineorder_phrase" in data


def test_view_draws_the_twins_and_hides_without(ds, datadir, tmp_path, qtbot):
    from dbxray.parsers.tree import build_tree
    from dbxray.viz.compare import CompareView
    from dbxray.viz.registry import view_shows
    v = CompareView()
    qtbot.addWidget(v)
    v.set_dataset(ds, build_tree(ds))
    assert v.table.rowCount() == 2 and v.table.item(1, 0).text() == "inno.lineorder_phrase"
    assert v.table.item(0, 2).text() == "26,000" and v.table.item(1, 8).text() == f"{twins(ds)[0][1].bytes_per_row:,.1f}"
    assert view_shows(CompareView, ds)
    alone = scan(str(datadir / "arc"))
    assert not view_shows(CompareView, alone) and compare_json(alone)["groups"] == []

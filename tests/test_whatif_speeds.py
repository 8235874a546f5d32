"""What-if speeds mean something (issue 17, item 5): only the C libraries the engines link are
timed, on one thread; ClickHouse transforms (reference implementations here) and 'none' are
"not measured" (null), never drawn at 0, never ranked; advice decides on size first."""
from __future__ import annotations

import shutil

import pytest

from dbxray.compress.registry import parse_codec
from dbxray.compress.whatif import run_whatif
from dbxray.parsers.scan import scan

CODECS = ["none", "lz4", "zstd:1", "DoubleDelta,ZSTD(1)", "Delta(4),LZ4", "T64,ZSTD(1)"]


@pytest.mark.parametrize("name,measured", [
    ("zlib:6", True), ("lz4", True), ("zstd:3", True), ("lzma:6", True), ("bzip2:1", True), ("snappy", True),
    ("brotli:5", True), ("ZSTD(3)", True), ("LZ4HC(9)", True), ("none", False), ("NONE", False),
    ("Delta(4),ZSTD(1)", False), ("DoubleDelta", False), ("Gorilla,LZ4", False), ("T64", False),
    ("FPC", False), ("GCD,ZSTD(1)", False)])
def test_which_codecs_are_timed(name, measured):
    assert parse_codec(name).speed_measured is measured


@pytest.fixture(scope="module")
def result(fixtures_root, tmp_path_factory):
    d = tmp_path_factory.mktemp("ch") / "clickhouse"
    shutil.copytree(fixtures_root / "clickhouse", d, symlinks=True)
    return run_whatif(scan(str(d)), CODECS, sample="0.2", seed=4)


def test_reference_codecs_have_no_speed(result):
    assert "one thread" in result["speed_method"] and "reference" in result["speed_method"]
    seen = set()
    for t in result["targets"]:
        for r in t["results"]:
            measured = parse_codec(r["codec"]).speed_measured if r["codec"] != "current" else None
            if measured is False:
                assert r["compress_mb_s"] is None and r["decompress_mb_s"] is None, (t["target"], r)
                seen.add(r["codec"])
            elif measured and r["model"] == "clickhouse_blocks":
                assert r["compress_mb_s"] > 0 and r["decompress_mb_s"] > 0, (t["target"], r)
    assert {"none", "DoubleDelta,ZSTD(1)", "Delta(4),LZ4", "T64,ZSTD(1)"} <= seen


def test_advice_ranks_speed_only_where_measured(result):
    assert result["advice"]
    for a in result["advice"]:
        if "fastest_decode_within_5pct" in a["choice"]:
            assert parse_codec(a["codec"]).speed_measured and a["decompress_mb_s"] > 0, a
        if not parse_codec(a["codec"]).speed_measured:
            assert a["decompress_mb_s"] is None and "smallest" in a["choice"], a
    # a reference codec can still be advised: on size (DoubleDelta on a monotonic id)
    assert any(not parse_codec(a["codec"]).speed_measured for a in result["advice"])


def test_cli_and_report_show_a_dash(result):
    from dbxray.app.cli_whatif import human_table
    text = human_table(result)
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("DoubleDelta,ZSTD(1)"))
    assert line.split()[-2:] == ["-", "-"]
    assert "speeds: one thread" in text


def test_view_leaves_unmeasured_codecs_off_the_scatter(result, qtbot):
    from dbxray.viz.whatif import WhatIfView
    v = WhatIfView()
    qtbot.addWidget(v)
    v.resize(1300, 800)
    v.show()
    v.set_results(result)
    t = next(t for t in result["targets"] if t["target"] == "fx.codecs.id")
    v.target.setCurrentIndex(v.target.findText(t["target"]))
    qtbot.wait(20)
    sp = v.scatter.getPlotItem()
    spots = [s for item in sp.items if hasattr(item, "points") for s in item.points()]
    model_rows = [r for r in t["results"] if r["model"] == (v.model.currentData() or r["model"])]
    measured = [r for r in model_rows if r["decompress_mb_s"]]
    assert len(spots) == len(measured) and all(s.pos().x() > 0 for s in spots)
    assert "speed not measured" in sp.titleLabel.text and "DoubleDelta" in sp.titleLabel.text
    dash_rows = [i for i in range(v.table.rowCount()) if v.table.item(i, 1).text() == "DoubleDelta,ZSTD(1)"]
    assert dash_rows and all(v.table.item(i, 8).text() == "-" for i in dash_rows)     # decompress MB/s

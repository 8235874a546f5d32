"""The HTML report uses the what-if the user ran (issue 17, item 7): its codecs, sample and
seed, one summary row per target with the numbers the window shows, every projection
collapsed under it; `dbxray report --whatif-json` does the same from the CLI, with progress."""
from __future__ import annotations

import json
import re

import pytest
from PySide6.QtCore import QSettings

from dbxray.app.cli import main
from dbxray.app.report import whatif_summary
from dbxray.compress.whatif import run_whatif
from dbxray.parsers.humanize import human_bytes
from dbxray.parsers.scan import scan


@pytest.fixture(scope="module")
def folder(sparse_fixtures):
    return sparse_fixtures / "innodb" / "4k"


@pytest.fixture(scope="module")
def result(folder):
    return run_whatif(scan(str(folder)), ["lz4", "zlib:1", "zstd:1"], sample="0.2", seed=7)


def test_summary_rows_are_the_results(result):
    rows = whatif_summary(result)
    assert len(rows) == len({t["target"] for t in result["targets"]})
    for row in rows:
        t = next(t for t in result["targets"] if t["target"] == row["target"])
        prim = [r for r in t["results"] if r["model"] == t["primary_model"] and r["codec"] != t["current_codec"]]
        best = min(prim, key=lambda r: r["projected_bytes"])
        assert (row["codec"], row["projected"], row["current"]) == (best["codec"], best["projected_bytes"],
                                                                     t["current_bytes"])
        # compression only: a codec whose DDL rebuilds the table saves against the rebuilt table
        base = t["split"]["rebuilt_bytes"] if "compression_saving_bytes" in best else t["current_bytes"]
        if "compression_saving_bytes" in best:
            assert row["saving"] == best["compression_saving_bytes"]
        assert row["saving"] == base - best["projected_bytes"]
        assert row["saving_ci95"] == [base - best["ci95"][1], base - best["ci95"][0]]
        assert row["reclaimable"] == (t.get("split") or {}).get("reclaimable_bytes", 0)
        advised = [a for a in result["advice"] if a["codec"] == row["codec"] and a["kind"] == "codec"
                   and row["target"] in (a.get("files") or [])]
        assert row["verdict"].startswith("advised") == bool(advised)


def test_cli_report_uses_the_given_whatif(folder, result, tmp_path, capsys, qapp):
    wi = tmp_path / "wi.json"
    wi.write_text(json.dumps(result))
    out = tmp_path / "r.html"
    assert main(["report", str(folder), "-o", str(out), "--whatif-json", str(wi)]) == 0
    text = out.read_text()
    assert "As run: a 20% sample (seed 7" in text and "codecs lz4, zlib:1, zstd:1" in text
    assert "zstd:3" not in text and "lzma:6" not in text           # not the default codecs re-run
    assert text.count("<details>") == len(result["targets"])
    for row in whatif_summary(result):
        assert f"<td>{row['target']}</td>" in text and human_bytes(row["projected"]) in text
    assert main(["report", str(folder), "-o", str(out), "--whatif-json", str(tmp_path / "nope.json")]) == 1
    (tmp_path / "bad.json").write_text(json.dumps({"kind": "scan"}))
    assert main(["report", str(folder), "-o", str(out), "--whatif-json", str(tmp_path / "bad.json")]) == 1
    assert "not a dbxray what-if result" in capsys.readouterr().err


def test_cli_report_runs_its_whatif_with_progress(folder, tmp_path, capsys, qapp):
    out = tmp_path / "r.html"
    assert main(["report", str(folder), "-o", str(out), "--codec", "lz4", "--seed", "3", "--sample", "0.1"]) == 0
    err = capsys.readouterr().err
    pct = [int(m) for m in re.findall(r"report what-if: (\d+)%", err)]
    assert pct and pct == sorted(pct) and pct[-1] == 100              # a line per 10%, never backwards
    text = out.read_text()
    assert "As run: a 10% sample (seed 3" in text and "codecs lz4" in text


def test_window_report_uses_the_whatif_the_user_ran(qtbot, tmp_path, sparse_fixtures):
    from dbxray.app.window import MainWindow
    w = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat))
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    with qtbot.waitSignal(w.scan_done, timeout=60000):
        w.open_path(str(sparse_fixtures / "innodb" / "4k"))
    v = next(v for v in w.views if v.view_id == "whatif")
    w.tabs.setCurrentWidget(v)
    texts = [v.codec_list.item(i).text() for i in range(v.codec_list.count())]
    pick = [t for t in texts if t in ("lz4", "snappy", "lzma:6")][:2]
    assert len(pick) == 2, texts
    for i in range(v.codec_list.count()):
        item = v.codec_list.item(i)
        item.setCheckState(item.checkState().Checked if item.text() in pick else item.checkState().Unchecked)
    with qtbot.waitSignal(w.whatif_done, timeout=300000) as sig:
        v.run_button.click()
    res = sig.args[0]
    out = tmp_path / "r.html"
    with qtbot.waitSignal(w.report_written, timeout=120000):
        w.export_report(str(out))
    text = out.read_text()
    shown = re.search(r"\), codecs ([^;]+);", text).group(1).split(", ")
    assert sorted(shown) == sorted(res["codecs"]) == sorted(pick) and "zstd:1" not in text
    for row in whatif_summary(res):
        assert human_bytes(row["projected"]) in text


def test_the_sample_in_words(result, folder, tmp_path, qapp):
    """"fraction 0.05 (528 of 699 units)" was unexplained: the JSON says how many units were
    re-encoded and how many were known without encoding, and why small owners get more."""
    s = result["sample"]
    assert 0 < s["units_encoded"] <= s["units_sampled"] <= s["units_total"]
    d = s["description"]
    assert f"{s['units_encoded']:,} of {s['units_total']:,} units" in d and "re-encoded" in d
    known = s["units_sampled"] - s["units_encoded"]
    assert (f"{known:,} more are known without encoding" in d) if known else "none is known" in d
    assert "20% of its units are drawn at random (seed 7)" in d and "at least 2" in d
    from dbxray.app.cli_whatif import human_table
    assert f"sample: {d}" in human_table(result)


def test_clickhouse_table_row_points_at_its_columns(fixtures_root, tmp_path):
    """A ClickHouse codec is set per column: the table's summary row says its advice is its
    columns' entries (it is never advised as a whole, issue 17 item 2)."""
    import shutil
    d = tmp_path / "clickhouse"
    shutil.copytree(fixtures_root / "clickhouse", d, symlinks=True)
    res = run_whatif(scan(str(d / "datadir")), ["ZSTD(1)", "LZ4"], sample="0.1", seed=2, raw_models=False)
    rows = {r["target"]: r for r in whatif_summary(res)}
    tables = [t["target"] for t in res["targets"] if t["engine"] == "clickhouse" and t["target"].count(".") == 1]
    advised = 0
    for name in tables:
        cols = [a for a in res["advice"] if a["target"].startswith(name + ".")]
        assert not [a for a in res["advice"] if a["target"] == name]
        if cols and name in rows:
            assert rows[name]["verdict"] == f"advised per column ({len(cols)} entries below)", rows[name]
            advised += 1
    assert advised

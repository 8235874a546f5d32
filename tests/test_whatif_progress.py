"""Progress and cancel of the what-if and the report (issue 17, item 6), and the advice's verdict
where a DBA reads it (item 2):

* the CLI's progress never goes back (the old one went 0% -> 99% and 51 -> 52 -> 51): a bar
  redrawn in place on a terminal, one plain line per 10% step otherwise;
* `dbxray whatif` and `dbxray report` print it for every phase (the report's scan, what-if,
  types and views: it used to run 18 s with nothing on the screen);
* the window's progress is monotonic and says "done" only once the results are drawn, with
  Cancel gone; a cancelled report is "cancelled", not an error, and writes nothing;
* "tie within error" and the sample that would separate the codecs are printed under the advice
  line in the CLI and are a column of the window's Advice table.
"""
from __future__ import annotations

import io
import json
import re

import pytest
from PySide6.QtCore import QSettings

from dbxray.app.cli import main
from dbxray.app.cliprogress import ProgressPrinter

#: fractions reported out of order, as phases that overlap did
JUMPY = [0.0, 0.05, 0.31, 0.51, 0.52, 0.51, 0.6, 0.59, 0.99, 1.0]


def test_plain_lines_one_per_step_never_back():
    out = io.StringIO()
    p = ProgressPrinter("what-if", stream=out, tty=False)
    for f in JUMPY:
        p(f * 1000, 1000, f"at {f}")
    p.close("77 of 753 units re-encoded")
    lines = out.getvalue().splitlines()
    assert [ln.split(":")[1].split()[0] for ln in lines[:-1]] == ["0%", "30%", "50%", "60%", "90%", "100%"]
    assert lines[-1] == "what-if: 77 of 753 units re-encoded"
    assert "\r" not in out.getvalue()


def test_terminal_bar_redrawn_never_back():
    out = io.StringIO()
    p = ProgressPrinter("scan", stream=out, tty=True, width=20)
    for f in JUMPY:
        p(f * 1000, 1000, "reading")
    p.close("12 files")
    text = out.getvalue()
    frames = [f for f in text.split("\r") if f]
    pct = [int(re.search(r"\]\s+(\d+)%", f).group(1)) for f in frames]
    assert pct == sorted(pct) and pct[-1] == 100 and 52 in pct
    assert pct.count(51) == 1                        # 51 shown once, never again after 52
    bar = re.search(r"\[([#.]+)\]", frames[-1]).group(1)
    assert bar == "#" * 20
    assert text.endswith("\nscan: 12 files\n")


def _steps(err: str, what: str) -> list[int]:
    return [int(m) for m in re.findall(rf"^{re.escape(what)}: (\d+)%", err, re.M)]


def test_cli_whatif_progress_counts_every_phase(sparse_fixtures, capsys):
    d = sparse_fixtures / "innodb" / "datadir16k"
    assert main(["whatif", str(d), "--codec", "zlib:1", "--codec", "lz4", "--no-raw"]) == 0
    cap = capsys.readouterr()
    err = cap.err
    for what in ("scan", "what-if"):
        steps = _steps(err, what)
        # strictly increasing 10% steps from 0 to 100, with steps between (not 0 -> 99)
        assert steps == sorted(set(steps)) and steps[0] == 0 and steps[-1] == 100, (what, steps)
        assert all(s % 10 == 0 for s in steps) and len(steps) >= 5, (what, steps)
    # the last line says what the sample's description says: re-encoded, and known without encoding
    m = re.search(r"^what-if: ([\d,]+) of ([\d,]+) units re-encoded, ([\d,]+) more known without encoding$",
                  err, re.M)
    assert m, err[-500:]
    enc, total, known = m.groups()
    assert int(known.replace(",", "")) > 0
    assert f"\nsample: {enc} of {total} units (pages, blocks, nodes) re-encoded, {known} more are known" in cap.out


def test_cli_report_shows_every_phase(sparse_fixtures, tmp_path, capsys, qapp):
    d = sparse_fixtures / "innodb" / "4k"
    wi = tmp_path / "wi.json"
    assert main(["whatif", str(d), "--codec", "lz4", "--sample", "0.2", "--no-progress", "-o", str(wi)]) == 0
    capsys.readouterr()
    out = tmp_path / "r.html"
    assert main(["report", str(d), "-o", str(out), "--codec", "lz4", "--sample", "0.2"]) == 0
    err = capsys.readouterr().err
    order = [m.group(1) for m in re.finditer(r"^report (scan|what-if|views): 0%", err, re.M)]
    assert order == ["scan", "what-if", "views"], err
    for what in ("report scan", "report what-if", "report views"):
        steps = _steps(err, what)
        assert steps == sorted(set(steps)) and steps[-1] == 100, (what, steps)
    assert err.rstrip().endswith("report views: views drawn, report written")
    # "As run" counts units as the sample's description does (it said "109 of 846 units
    # re-encoded" where 102 were re-encoded and 7 known without encoding)
    html_text = out.read_text()
    m = re.search(r"As run: a 20% sample \(seed 0, ([\d,]+) of ([\d,]+) units re-encoded, ([\d,]+) more known "
                  r"without encoding\)", html_text)
    assert m, re.search(r"As run: [^<]*", html_text).group(0)
    assert f"The sample: {m.group(1)} of {m.group(2)} units (pages, blocks, nodes) re-encoded" in html_text
    # with the what-if the user ran: no what-if phase, the scan and the views still shown
    assert main(["report", str(d), "-o", str(out), "--whatif-json", str(wi)]) == 0
    err = capsys.readouterr().err
    assert _steps(err, "report scan")[-1] == 100 and _steps(err, "report views")[-1] == 100
    assert "report what-if" not in err
    assert main(["report", str(d), "-o", str(out), "--whatif-json", str(wi), "--no-progress"]) == 0
    assert capsys.readouterr().err == ""


@pytest.fixture
def window(qtbot, tmp_path, sparse_fixtures):
    from dbxray.app.window import MainWindow
    w = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat))
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    with qtbot.waitSignal(w.scan_done, timeout=60000):
        w.open_path(str(sparse_fixtures / "innodb" / "datadir16k"))
    return w


def _whatif_view(w):
    v = next(v for v in w.views if v.view_id == "whatif")
    w.tabs.setCurrentWidget(v)
    for i in range(v.codec_list.count()):
        item = v.codec_list.item(i)
        item.setCheckState(item.checkState().Checked if item.text() in ("zlib:6", "lzma:6", "lz4")
                           else item.checkState().Unchecked)
    return v


def test_window_done_only_when_the_results_are_drawn(window, qtbot):
    v = _whatif_view(window)
    seen = []                      # (status text, progress value, results drawn, Cancel visible)
    set_text = window.status_label.setText

    def record(text):
        seen.append((text, window.progress.value(), v.table.rowCount(), window.cancel_button.isVisible()))
        set_text(text)
    window.status_label.setText = record
    values = []
    window.progress.valueChanged.connect(values.append)
    with qtbot.waitSignal(window.whatif_done, timeout=300000) as sig:
        v.run_button.click()
    res = sig.args[0]
    assert res is not None
    drawn = sum(len(t["results"]) for t in res["targets"])
    assert v.table.rowCount() == drawn > 0
    # the job's progress: monotonic while it runs (values after the range is set)
    assert values and values == sorted(values), values
    done = [i for i, s in enumerate(seen) if "done" in s[0].lower()]
    assert done and seen[-1][0] == "What-if done"
    for i in done:
        text, _, rows, cancel = seen[i]
        assert rows == drawn and not cancel, seen[i]          # never "done" before the results
    assert any("units re-encoded" in s[0] for s in seen[:done[0]]), seen
    # the sample in words on the view's line, not only "552 of 753 units"
    smp = res["sample"]
    line = v.status.text()
    assert f"a 5% sample (seed 0): {smp['units_encoded']:,} of {smp['units_total']:,} units" in line, line
    known = smp["units_sampled"] - smp["units_encoded"]
    assert f"{known:,} more known without encoding" in line and "drawn per owner" in line, line
    assert smp["description"] in v.status.toolTip()
    # the advice's verdict is a column of its own
    if res["advice"]:
        verdicts = [v.advice.item(r, v.ADVICE_VERDICT).text() for r in range(v.advice.rowCount())]
        assert verdicts == [a.get("verdict") or "" for a in res["advice"]]
        assert [v.advice.item(r, v.ADVICE_DDL).text() for r in range(v.advice.rowCount())] == \
            [a.get("ddl", "") for a in res["advice"]]
        assert v.copy_ddl().splitlines()[0] == res["advice"][0]["ddl"].splitlines()[0]


def test_window_report_cancel_is_not_an_error(window, qtbot, tmp_path):
    errors_before = window.errors.count()
    out = tmp_path / "r.html"
    window.export_report(str(out), whatif_sample="all")
    assert window.job is not None and window.cancel_button.isVisible()
    qtbot.wait(100)
    window.cancel_button.click()
    qtbot.waitUntil(lambda: window.job is None, timeout=60000)
    assert window.status_label.text().startswith("Report cancelled"), window.status_label.text()
    assert window.errors.count() == errors_before
    assert not out.exists() and not window.cancel_button.isVisible()


def test_cli_prints_the_verdict_under_the_advice(sparse_fixtures, capsys):
    d = sparse_fixtures / "innodb" / "datadir16k" / "fx" / "t_access.ibd"
    assert main(["whatif", str(d), "--codec", "zlib:6", "--codec", "lzma:6", "--no-raw", "--no-progress",
                 "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    tied = [a for a in res["advice"] if a.get("verdict")]
    assert tied, res["advice"]
    assert main(["whatif", str(d), "--codec", "zlib:6", "--codec", "lzma:6", "--no-raw", "--no-progress"]) == 0
    out = capsys.readouterr().out
    for a in tied:
        assert f"      verdict: {a['verdict']}" in out
    lo, hi = tied[0]["saving_bytes_ci95"]
    from dbxray.parsers.humanize import human_bytes
    assert f"95% interval {human_bytes(lo)}..{human_bytes(hi)})" in out

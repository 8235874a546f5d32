"""The type advisor in the window: the Columns view's Types page runs it in a worker
(progress, Cancel), then draws the selected column's before/after bars and the table's
UInt32/UInt64/Float32/Float64 comparison (viz/typeadvice.py)."""
import threading

import pytest
from PySide6.QtCore import QSettings

from dbxray.app.window import MainWindow
from dbxray.compress import typeadvice
from dbxray.viz.typeadvice import column_bars, type_comparison


@pytest.fixture
def window(qtbot, tmp_path, fixtures_root):
    w = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat))
    qtbot.addWidget(w)
    w.resize(1500, 950)
    w.show()
    with qtbot.waitSignal(w.scan_done, timeout=120000):
        w.open_path(str(fixtures_root / "clickhouse" / "datadir"))
    return w


def _view(w):
    v = next(v for v in w.views if v.view_id == "columns")
    w.tabs.setCurrentWidget(v)
    v.show_advice_page()
    return v


def test_advise_in_a_worker_then_draw(window, qtbot, monkeypatch, artifacts_dir):
    threads = set()
    real = typeadvice.advise_column

    def spy(*a, **k):
        threads.add(threading.current_thread() is threading.main_thread())
        return real(*a, **k)

    monkeypatch.setattr(typeadvice, "advise_column", spy)
    v = _view(window)
    v.show_table("fx.seed_nq_u1000")
    page = v.advice_page
    # before the advisor has run: the button and its hint, no empty axes under them
    assert not page.glw.isVisible() and page.run_button.isVisible()
    steps = []
    window.progress.valueChanged.connect(steps.append)
    with qtbot.waitSignal(window.advise_done, timeout=300000) as sig:
        v.advice_page.run_button.click()
        assert not v.advice_page.run_button.isEnabled()
    res = sig.args[0]
    assert res is not None and not res["cancelled"] and res["columns"]
    assert threads == {False}, "the advisor ran in the GUI thread"
    assert steps and max(steps) == len(res["columns"])
    # the table's comparison: the four metric columns, each as the types projected for it
    types, table = v.advice_page.compare
    assert {"UInt32", "UInt64", "Float32", "Float64"} <= set(types)
    assert set(table) == {"nq_UInt32", "nq_UInt64", "nq_Float32", "nq_Float64"}
    f64 = next(a for a in res["columns"] if a["table"] == "seed_nq_u1000" and a["column"] == "nq_Float64")
    assert table["nq_Float64"]["Float32"] == next(c["projected_bytes"] for c in f64["candidates"]
                                                  if c["type"] == "Float32")
    assert table["nq_Float64"]["Float64"] == f64["current_bytes"]
    # a column's before/after bars: now first, then every suggestion
    v.select_column("nq_UInt64")
    bars = v.advice_page.bars
    u64 = next(a for a in res["columns"] if a["table"] == "seed_nq_u1000" and a["column"] == "nq_UInt64")
    assert bars[0][1] == u64["current_bytes"] and bars[0][0].startswith("now")
    assert [b[1] for b in bars[1:]] == [c["projected_bytes"] for c in u64["candidates"] + u64["codec_candidates"]]
    assert "suggestions" in v.advice_page.status.text()
    assert page.glw.isVisible() and page.col_plot.getAxis("bottom").isVisible()
    # a table without numeric columns: its comparison a title alone, no empty axes
    page.show("fx.no_such_table", None)
    assert not page.cmp_plot.getAxis("left").isVisible() and not page.col_plot.getAxis("bottom").isVisible()
    assert "No column advice" in page.col_plot.titleLabel.text
    v.select_column("nq_UInt64")
    page.show("fx.seed_nq_u1000", "nq_UInt64")
    assert page.col_plot.getAxis("bottom").isVisible() and page.cmp_plot.getAxis("left").isVisible()
    qtbot.wait(100)
    path = artifacts_dir / "typeadvice.png"
    assert window.export_view(str(path))
    window.grab().save(str(artifacts_dir / "typeadvice_window.png"))


def test_cancel_midway(window, qtbot, monkeypatch):
    real = typeadvice.advise_column

    def slow(*a, **k):
        threading.Event().wait(0.05)
        return real(*a, **k)

    monkeypatch.setattr(typeadvice, "advise_column", slow)
    v = _view(window)
    v.advice_page.sample_combo.setCurrentIndex(v.advice_page.sample_combo.findData("all"))
    with qtbot.waitSignal(window.advise_done, timeout=300000) as sig:
        v.advice_page.run_button.click()
        qtbot.wait(300)
        window.cancel_button.click()
    assert sig.args[0] is None
    assert "cancel" in window.status_label.text().lower()
    assert "cancelled" in v.advice_page.status.text()
    assert v.advice_page.run_button.isEnabled()


def test_chart_data_without_qt():
    a = {"type": "UInt64", "current_codec": "LZ4", "current_bytes": 100, "column": "c",
         "candidates": [{"type": "UInt32", "lossless": True, "projected_bytes": 60, "projected_bytes_ci95": [55, 65]},
                        {"type": "Float32", "lossless": False, "projected_bytes": 50,
                         "projected_bytes_ci95": [50, 50]}],
         "codec_candidates": [{"type": "UInt32", "codec": "T64, ZSTD(1)", "projected_bytes": 30,
                               "projected_bytes_ci95": [28, 33]}]}
    bars = column_bars(a)
    assert [b[1] for b in bars] == [100, 60, 50, 30] and "loses precision" in bars[2][0]
    assert "Compact" not in bars[1][0]
    a["candidates"][0]["warning"] = "1 part would fall under min_bytes_for_wide_part ..."
    assert "parts would turn Compact" in column_bars(a)[1][0]
    types, table = type_comparison([a])
    assert types == ["UInt32", "UInt64", "Float32"] and table["c"] == {"UInt64": 100, "UInt32": 60, "Float32": 50}

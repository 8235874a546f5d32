"""The what-if view in the window: run to the end, cancel midway, copy DDL, export."""
import pytest
from PySide6.QtCore import QSettings

from dbxray.app.window import MainWindow
from dbxray.viz.whatif import WhatIfView, pareto_front


@pytest.fixture
def window(qtbot, tmp_path, sparse_fixtures):
    w = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat))
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    with qtbot.waitSignal(w.scan_done, timeout=60000):
        w.open_path(str(sparse_fixtures / "tokudb" / "datadir"))
    return w


def _view(w) -> WhatIfView:
    v = next(v for v in w.views if v.view_id == "whatif")
    w.tabs.setCurrentWidget(v)
    return v


def test_run_to_the_end(window, qtbot, artifacts_dir):
    v = _view(window)
    for i in range(v.codec_list.count()):     # a quick subset
        item = v.codec_list.item(i)
        item.setCheckState(item.checkState().Checked if item.text() in ("zlib:6", "lzma:6", "snappy")
                           else item.checkState().Unchecked)
    assert v.selected_codecs() == ["zlib:6", "lzma:6", "snappy"]
    with qtbot.waitSignal(window.whatif_done, timeout=300000) as sig:
        v.run_button.click()
    res = sig.args[0]
    assert res is not None and res["kind"] == "whatif"
    assert v.target.count() == len(res["targets"]) > 0
    # the chart shows the biggest target of the first engine (InnoDB here; issue 21: not the
    # biggest file whatever its engine, a TokuDB one in the demo), the table every (target, codec, model) row
    assert v.table.rowCount() == sum(len(t["results"]) for t in res["targets"])
    from dbxray.parsers import engines
    order = list(engines.names())
    first_engine = min((t["engine"] for t in res["targets"]), key=order.index)
    want = max((t for t in res["targets"] if t["engine"] == first_engine), key=lambda t: t["current_bytes"])["target"]
    assert v.target.currentText() == want
    shown = next(t for t in res["targets"] if t["target"] == want)
    codecs = {r["codec"] for r in shown["results"]}
    assert {"zlib:6", "lzma:6", "snappy"} <= codecs <= {"zlib:6", "lzma:6", "snappy", "none"}   # "none": a column stored uncompressed
    if v.advice.rowCount():
        text = v.copy_ddl()
        assert "ALTER TABLE" in text
    qtbot.wait(50)
    window.grab().save(str(artifacts_dir / "whatif.png"))
    assert window.export_view(str(artifacts_dir / "whatif_charts.png"))


def test_cancel_midway(window, qtbot):
    v = _view(window)
    v.sample.setCurrentIndex(v.sample.findData("all"))
    errors_before = window.errors.count()
    with qtbot.waitSignal(window.whatif_done, timeout=300000) as sig:
        v.run_button.click()
        qtbot.wait(150)
        assert v.status.text().startswith("Running")
        window.cancel_button.click()
    assert sig.args[0] is None
    assert "cancel" in window.status_label.text().lower()
    assert v.run_button.isEnabled()
    # a cancel is not an error, and the view's "Running…" line does not stay behind
    assert window.errors.count() == errors_before, [window.errors.item(i).text() for i in range(window.errors.count())]
    assert "cancelled" in v.status.text() and not v.status.text().startswith("Running")
    assert not window.cancel_button.isVisible()


def test_pareto_front():
    import numpy as np
    ratio = np.array([3.0, 2.0, 2.5, 1.0])
    speed = np.array([100.0, 500.0, 50.0, 1000.0])
    assert sorted(pareto_front(ratio, speed).tolist()) == [0, 1, 3]

"""Every legend and value text of the charts inside its view in narrow windows (issue 21,
defect 7's leftovers): the TokuDB chart legends wrap onto as many lines as the plot's width
needs, the value texts after the bars of the Holes, Columns and TokuDB charts get room (a
shorter wording, or an ellipsis with the whole text in the tooltip and in the chart's CSV),
the LSM legend takes as many columns as fit.  Checked by geometry: the scene bounding
rectangle of each text lies inside its plot and inside the part of the view the window
shows, at 1024x700 and at the window's minimum width (966 px); screenshots to artifacts/."""
from __future__ import annotations

import csv
import io

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QSettings

from dbxray.app.demo import prepare_demo
from dbxray.app.window import MainWindow
from dbxray.viz.textfit import (BarText, cut_texts, fit_legend_columns, legend_html, overlapping_texts,
                                place_bar_texts, wrap_title)

SIZES = [(1024, 700), (966, 700)]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    path, _ = prepare_demo(tmp_path_factory.mktemp("demo"))
    return path


@pytest.fixture
def window(qtbot, tmp_path):
    w = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat))
    qtbot.addWidget(w)
    w.resize(1400, 860)
    w.show()
    qtbot.waitExposed(w)
    return w


def _open(qtbot, w, path):
    with qtbot.waitSignal(w.scan_done, timeout=60000):
        w.open_path(str(path))
    qtbot.wait(50)


def _show(qtbot, w, view_id):
    view = next(v for v in w.views if v.view_id == view_id)
    w.tabs.setCurrentWidget(view)
    qtbot.wait(100)
    return view


def _fits(qtbot, view, what):
    """Every text of the view's charts inside (after the layout settles: the views re-fit
    their texts once the plots have their final size)."""
    try:
        qtbot.waitUntil(lambda: not cut_texts(view) and not overlapping_texts(view), timeout=5000)
    except Exception:
        pass
    assert cut_texts(view) == [], what
    assert overlapping_texts(view) == [], what


@pytest.mark.parametrize("size", SIZES)
def test_every_chart_text_of_the_demo_fits(window, qtbot, demo, artifacts_dir, size):
    _open(qtbot, window, demo)
    window.resize(*size)
    qtbot.wait(100)
    assert window.width() == size[0], window.width()       # the window accepts the width
    for view_id in ("sizes", "holes", "columns", "tokudb", "lsm"):
        view = _show(qtbot, window, view_id)
        _fits(qtbot, view, f"{view_id} at {size}")
        window.grab().save(str(artifacts_dir / f"textfit_{view_id}_{size[0]}x{size[1]}.png"))


@pytest.mark.parametrize("size", SIZES)
def test_tokudb_legends_and_texts_fit_for_every_selection(window, qtbot, sparse_fixtures, artifacts_dir, size):
    _open(qtbot, window, sparse_fixtures / "tokudb" / "datadir")
    window.resize(*size)
    view = _show(qtbot, window, "tokudb")
    for i in range(view.combo.count()):
        view.combo.setCurrentIndex(i)
        qtbot.wait(30)
        _fits(qtbot, view, f"tokudb {view.combo.itemText(i).strip()} at {size}")
    view.combo.setCurrentIndex(0)
    _fits(qtbot, view, "all tables")
    # the footprint legend wraps: more than one line in a narrow view, every entry whole
    title = view.foot.titleLabel.item
    assert title.boundingRect().height() > 1.5 * view.fontMetrics().height()
    assert "nodes on disk (true size)" in title.toPlainText().replace("\xa0", " ")
    view.page.grab().save(str(artifacts_dir / f"textfit_tokudb_page_{size[0]}x{size[1]}.png"))


@pytest.mark.parametrize("size", SIZES)
def test_columns_texts_fit_for_every_table(window, qtbot, sparse_fixtures, size):
    _open(qtbot, window, sparse_fixtures / "clickhouse" / "datadir")
    window.resize(*size)
    view = _show(qtbot, window, "columns")
    for i in range(view.table_combo.count()):
        view.table_combo.setCurrentIndex(i)
        qtbot.wait(30)
        _fits(qtbot, view, f"columns {view.table_combo.itemText(i)} at {size}")
        # a shortened text is whole in its tooltip and in the chart's CSV
        rows = list(csv.DictReader(io.StringIO(view.chart_csv())))
        assert [r["text"] for r in rows] == [t.full for t in view.bar_texts]
        for t in view.bar_texts:
            assert t.item.toolTip() == ("" if t.shown == t.full else t.full)


@pytest.mark.parametrize("size", SIZES)
def test_holes_texts_fit_per_file_and_in_bytes(window, qtbot, demo, size):
    _open(qtbot, window, demo)
    window.resize(*size)
    view = _show(qtbot, window, "holes")
    for by in range(view.bars_by.count()):
        for unit in range(view.bars_scale.count()):
            view.bars_by.setCurrentIndex(by)
            view.bars_scale.setCurrentIndex(unit)
            _fits(qtbot, view, f"holes {view.bars_by.currentText()} {view.bars_scale.currentText()} at {size}")
    # the strips' name and facts columns: inside the list's visible width; what a narrow
    # view cuts is whole in the row's tooltip and in the CSV
    strips = view.strips
    qtbot.waitUntil(lambda: bool(getattr(strips, "drawn_texts", None)), timeout=3000)
    shown_w = view.scroll.viewport().width()
    assert strips.width() <= shown_w
    table = view.chart_csv()
    cut = 0
    for shown, whole, rect in strips.drawn_texts:
        assert rect.left() >= 0 and rect.right() <= shown_w, (shown, rect, shown_w)
        if shown != whole:
            cut += 1
            row = (rect.top() - 4) // strips.ROW_H
            assert whole in strips.slice_text(row, rect.left() + 2).replace("&amp;", "&"), whole
            assert whole in table, whole
    assert cut, "the 966/1024 px views cut some facts (this test checks their tooltip)"


def test_view_menus_offer_the_chart_csv(window, qtbot, demo):
    _open(qtbot, window, demo)
    for view_id in ("holes", "columns", "tokudb"):
        view = next(v for v in window.views if v.view_id == view_id)
        assert "Copy chart data as CSV" in [a.text() for a in view.actions()], view_id
        assert view.chart_csv().count("\n") > 1, view_id


# -- the helpers on a bare plot -----------------------------------------------------------------

def _plot(qtbot, width, height=300):
    w = pg.PlotWidget()
    qtbot.addWidget(w)
    w.resize(width, height)
    w.show()
    qtbot.waitExposed(w)
    return w, w.getPlotItem()


def test_a_long_legend_title_wraps_inside_its_plot(qtbot):
    w, plot = _plot(qtbot, 320)
    wrap_title(plot)
    parts = [("#1E88E5", "reported (logical)"), ("#66BB6A", "nodes uncompressed"),
             ("#E53935", "nodes on disk (true size)")]
    plot.setTitle("On disk vs SHOW TABLE STATUS: " + legend_html(parts), size="9pt")
    qtbot.wait(50)
    assert cut_texts(w) == []
    assert plot.titleLabel.item.boundingRect().height() > 2 * w.fontMetrics().height()
    w.resize(1400, 300)
    qtbot.wait(50)
    assert cut_texts(w) == []
    assert plot.titleLabel.item.boundingRect().height() < 2 * w.fontMetrics().height()


def test_bar_texts_shorten_then_elide_never_cut(qtbot):
    w, plot = _plot(qtbot, 360)
    qtbot.wait(50)
    texts = [BarText(float(i), 10.0 * (i + 1), ["a long text with every figure " * (i + 1), "short", "s"])
             for i in range(3)]
    texts.append(BarText(3.0, 40.0, ["x" * 200]))                  # one wording, longer than the plot
    xmax = place_bar_texts(plot, texts, 100.0)
    plot.setXRange(0, xmax, padding=0)
    plot.setYRange(-0.6, 3.6, padding=0)
    qtbot.wait(50)
    assert cut_texts(w) == []
    assert texts[0].shown == texts[0].full                       # room for the first row's whole text
    assert texts[2].shown == "short" and texts[2].item.toolTip() == texts[2].full
    assert texts[3].elided and texts[3].shown.endswith("…") and texts[3].item.toolTip() == texts[3].full


def test_legend_columns_follow_the_width(qtbot):
    w, plot = _plot(qtbot, 1200)
    legend = plot.addLegend(offset=(-10, 5))
    for i, name in enumerate(["raw key + value", "on disk, LZ4", "on disk, NoCompression", "on disk, Snappy"]):
        legend.addItem(plot.plot([0, 1], [i, i]), name)
    qtbot.wait(50)
    assert fit_legend_columns(legend, plot.getViewBox().width() - 20) == 1
    w.resize(330, 300)
    qtbot.wait(50)
    rows = fit_legend_columns(legend, plot.getViewBox().width() - 20)
    qtbot.wait(50)
    assert rows > 1 and cut_texts(w) == []


def test_the_check_sees_a_cut_text(qtbot):
    """The check itself: a text past the plot's right edge is reported."""
    w, plot = _plot(qtbot, 300)
    t = pg.TextItem("a value text that runs past the right edge of the plot", anchor=(0, 0.5))
    plot.addItem(t)
    t.setPos(0.8, 0.5)
    plot.setXRange(0, 1, padding=0)
    plot.setYRange(0, 1, padding=0)
    qtbot.wait(50)
    assert any("past the right edge of its plot" in c for c in cut_texts(w))

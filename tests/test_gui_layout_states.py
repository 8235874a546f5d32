"""Layout and states of the window (issue 21, defects 7 and 8): it fits 1024x700; the
errors dock can be hidden from the View menu; tree names are not cut when there is room;
the inspector shows what the selected node holds and folds the page part until a page is
clicked; the map's legend goes under it when the view is narrow; while nothing is scanned
the centre says so instead of empty 0..1 plots; tabs of engines not in the data are
hidden; the status never says "done" while the tree is still empty."""
import pytest
from PySide6.QtCore import QSettings, Qt

from dbxray.app.window import MainWindow


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


def test_window_fits_1024x700(window, qtbot):
    hint = window.minimumSizeHint()
    assert hint.width() <= 1024 and hint.height() <= 700, hint
    window.resize(1024, 700)
    qtbot.wait(50)
    assert (window.width(), window.height()) == (1024, 700)


def test_errors_dock_can_be_hidden(window, qtbot):
    action = window.errors_dock.toggleViewAction()
    assert action.isEnabled()
    action.trigger()
    assert not window.errors_dock.isVisible()
    action.trigger()
    assert window.errors_dock.isVisible()


def test_placeholder_then_only_the_views_with_something_to_draw(window, qtbot, sparse_fixtures):
    assert window.centre.currentWidget() is window.placeholder
    assert "Open a data directory" in window.placeholder.text()
    _open(qtbot, window, sparse_fixtures / "innodb" / "16k")
    assert window.centre.currentWidget() is window.tabs
    shown = [window.tabs.tabText(i) for i in range(window.tabs.count()) if window.tabs.isTabVisible(i)]
    assert "Columns" not in shown and "TokuDB" not in shown, shown
    assert {"Sizes", "Extent map", "Holes", "What if"} <= set(shown), shown


def test_the_status_does_not_say_done_before_the_tree(window):
    window._on_progress(10, 10, "done")
    assert "done" not in window.status_label.text().lower()
    assert "building" in window.status_label.text().lower()


def test_tree_names_not_cut_when_there_is_room(window, qtbot, sparse_fixtures):
    window.resize(1600, 1000)
    _open(qtbot, window, sparse_fixtures / "innodb" / "16k")
    qtbot.wait(100)         # the tree as it opens (two levels expanded)
    need = window.tree.sizeHintForColumn(0)
    assert window.tree.header().sectionSize(0) >= need, (window.tree.header().sectionSize(0), need)
    assert window.tree.textElideMode() == Qt.ElideMiddle


def test_inspector_lists_what_the_node_holds_and_folds_the_page_part(window, qtbot, sparse_fixtures):
    _open(qtbot, window, sparse_fixtures / "innodb" / "16k")
    text = window.inspector.toPlainText()
    assert "Largest inside" in text and "InnoDB" in text, text
    assert window.inspector_split.sizes()[1] < 100
    em = window.extent_map
    window.tabs.setCurrentWidget(em)
    qtbot.wait(50)
    em.click_page(3)
    qtbot.wait(50)
    assert window.inspector_split.sizes()[1] >= 200


def test_map_legend_goes_under_a_narrow_map(qtbot, window, sparse_fixtures):
    _open(qtbot, window, sparse_fixtures / "innodb" / "16k")
    em = window.extent_map
    window.tabs.setCurrentWidget(em)
    window.resize(1024, 700)
    qtbot.wait(100)
    assert em.width() < em.LEGEND_BELOW and em.report.orientation() == Qt.Vertical
    window.resize(1900, 1000)
    qtbot.wait(100)
    assert em.report.orientation() == Qt.Horizontal


@pytest.mark.parametrize("size", [(1024, 700), (1600, 1000)])
def test_sizes_value_texts_inside_the_plot(window, qtbot, sparse_fixtures, size):
    """The "X of Y" text after each bar of the Sizes chart ends inside the plot (it was cut)."""
    window.resize(*size)
    _open(qtbot, window, sparse_fixtures / "innodb" / "16k")
    view = next(v for v in window.views if v.view_id == "sizes")
    window.tabs.setCurrentWidget(view)
    qtbot.wait(100)
    vb = view.plot.getViewBox()
    (x0, x1), _ = vb.viewRange()
    texts = [it for it in view.plot.items if type(it).__name__ == "TextItem"]
    assert texts
    right = vb.mapViewToScene(vb.viewRect().topRight()).x()
    for t in texts:
        assert t.mapToScene(t.boundingRect().topRight()).x() <= right + 1, (t.toPlainText(), right)


def test_shrinking_the_window_keeps_room_for_the_tree(window, qtbot):
    window.resize(1400, 860)
    qtbot.wait(50)
    window.resize(1024, 700)
    qtbot.wait(100)
    assert window.inspector_dock.width() <= 0.3 * 1024, window.inspector_dock.width()
    assert window.splitter.widget(0).width() >= 200


def test_block_histogram_labels_do_not_run_together(window, qtbot, sparse_fixtures):
    window.resize(1024, 700)
    _open(qtbot, window, sparse_fixtures / "clickhouse" / "datadir")
    view = next(v for v in window.views if v.view_id == "columns")
    window.tabs.setCurrentWidget(view)
    qtbot.wait(150)
    ticks = view.hist.getAxis("bottom")._tickLevels[0]
    px = view.hist.getViewBox().width()
    (x0, x1), _ = view.hist.getViewBox().viewRange()
    fm = view.fontMetrics()
    xs = [(v - x0) / (x1 - x0) * px for v, _ in ticks]
    widths = [fm.horizontalAdvance(t) for _, t in ticks]
    for i in range(1, len(xs)):
        assert xs[i] - xs[i - 1] >= (widths[i] + widths[i - 1]) / 2, ticks

"""Page facts stay readable while the mouse rests on a page of the extent map
(issue 21, defect 2): the tooltip is still shown 3 s after the last move (Qt's
tooltip event ~0.7 s after the mouse stops used to close it), and the window's
status bar carries the hovered page's facts on one line until the mouse leaves
the map (as WinDirStat and QDirStat show the hovered item)."""
import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QToolTip

from dbxray.app.window import MainWindow


@pytest.fixture
def window(qtbot, tmp_path, sparse_fixtures):
    w = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat))
    qtbot.addWidget(w)
    w.resize(1400, 860)
    w.show()
    qtbot.waitExposed(w)
    with qtbot.waitSignal(w.scan_done, timeout=60000):
        w.open_path(str(sparse_fixtures / "innodb" / "16k" / "fx" / "t_pc_zlib.ibd"))
    w.tabs.setCurrentWidget(w.extent_map)
    qtbot.wait(50)
    return w


def _hover(qtbot, v, page):
    pos = v.page_center_in_widget(page)
    qtbot.mouseMove(v.glw.viewport(), pos + type(pos)(60, 60))
    qtbot.wait(20)
    qtbot.mouseMove(v.glw.viewport(), pos)
    qtbot.waitUntil(lambda: v.hover_page == page, timeout=2000)


def test_tooltip_and_status_line_stay_while_the_mouse_rests(window, qtbot):
    v = window.extent_map
    page = 4
    _hover(qtbot, v, page)
    qtbot.wait(3000)
    assert QToolTip.isVisible(), "the page tooltip closed while the mouse rested on the page"
    assert f"Page {page}" in QToolTip.text()
    line = window.hover_label.text()
    assert line.startswith(f"Page {page} ") and "INDEX" in line and "Fill" in line, line
    assert window.hover_label.isVisible()


def test_status_line_cleared_when_the_mouse_leaves_the_map(window, qtbot):
    v = window.extent_map
    _hover(qtbot, v, 4)
    assert window.hover_label.text().startswith("Page 4 ")
    assert not window.status_label.isVisible()
    qtbot.mouseMove(window.tree.viewport())             # out of the map
    qtbot.waitUntil(lambda: window.hover_label.text() == "", timeout=2000)
    assert window.status_label.isVisible() and not window.hover_label.isVisible()

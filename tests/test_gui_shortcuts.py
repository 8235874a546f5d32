"""The window's shortcuts act wherever the focus is (issue 21, defect 3): Ctrl+E with
the focus in the filter box (where QLineEdit takes Ctrl+E as end-of-line) exports the
view, as from the tree; every shortcut is listed in Help > Keyboard Shortcuts."""
import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QApplication

from dbxray.app.window import MainWindow


@pytest.fixture
def window(qtbot, tmp_path):
    w = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat))
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    w.activateWindow()
    return w


@pytest.mark.parametrize("focus", ["filter", "tree"])
def test_ctrl_e_exports_with_focus_anywhere(window, qtbot, monkeypatch, focus):
    calls = []
    monkeypatch.setattr(window, "export_view_dialog", lambda kind: calls.append(kind))
    widget = window.filter_edit if focus == "filter" else window.tree
    widget.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is widget, timeout=2000)
    qtbot.keyClick(widget, Qt.Key_E, Qt.ControlModifier)
    qtbot.keyClick(widget, Qt.Key_E, Qt.ControlModifier | Qt.ShiftModifier)
    assert calls == ["png", "svg"]


def test_typing_in_the_filter_still_edits(window, qtbot):
    window.filter_edit.setFocus()
    qtbot.keyClicks(window.filter_edit, "abc")
    qtbot.keyClick(window.filter_edit, Qt.Key_Home)
    qtbot.keyClick(window.filter_edit, Qt.Key_A, Qt.ControlModifier)      # select all stays the editor's
    assert window.filter_edit.text() == "abc" and window.filter_edit.selectedText() == "abc"


def test_ctrl_g_and_ctrl_r_from_the_filter_box(window, qtbot, monkeypatch):
    calls = []
    monkeypatch.setattr(window, "go_to_page_prompt", lambda: calls.append("goto"))
    monkeypatch.setattr(window, "export_report_dialog", lambda: calls.append("report"))
    window.filter_edit.setFocus()
    qtbot.keyClick(window.filter_edit, Qt.Key_G, Qt.ControlModifier)
    qtbot.keyClick(window.filter_edit, Qt.Key_R, Qt.ControlModifier)
    assert calls == ["goto", "report"]

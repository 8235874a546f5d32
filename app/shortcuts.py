"""Window shortcuts that work wherever the focus is.

A QLineEdit claims some Ctrl keys for editing before the window's actions see them
(Ctrl+E moves to the end of the line on X11, ...): it accepts Qt's ShortcutOverride
event, and the action's shortcut never fires.  This filter, installed on the
application, refuses that claim for the keys the window's own actions use, so they
act the same with the focus in the filter box, a spin box or the tree."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QWidget


class WindowShortcuts(QObject):
    """Lets ``window``'s actions' shortcuts through from any widget of that window."""

    def __init__(self, window: QWidget):
        super().__init__(window)
        self.window = window
        QApplication.instance().installEventFilter(self)

    def keys(self) -> set[str]:
        """The window's action shortcuts (portable text)."""
        out = set()
        for action in self.window.findChildren(QAction):
            if action.isEnabled():
                for ks in action.shortcuts():
                    if not ks.isEmpty():
                        out.add(ks.toString(QKeySequence.PortableText))
        return out

    def eventFilter(self, obj, event) -> bool:
        if event.type() != QEvent.ShortcutOverride or not isinstance(obj, QWidget):
            return False
        if obj.window() is not self.window:
            return False
        pressed = QKeySequence(event.keyCombination()).toString(QKeySequence.PortableText)
        if pressed in self.keys():
            event.ignore()          # not the editor's: the window's action takes the key
            return True
        return False

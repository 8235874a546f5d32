"""What the window shows, written as JSON for a test or a bug report driving the real
app from outside (xdotool under X11 reads nothing from the screen but pixels).

Enabled by ``DBXRAY_STATE_DUMP=FILE``: every 200 ms the window writes FILE (atomically)
with its size, title, status-bar text, hovered-page line, the tooltip, the modal dialog
or popup menu shown, the focused widget, the tree's files and visible rows (with their
screen rectangles, so a driver can click them) and the errors list.  Off by default."""
from __future__ import annotations

import json
import os

from PySide6.QtCore import QObject, QPoint, QTimer
from PySide6.QtWidgets import QApplication, QMenu, QToolTip

ENV = "DBXRAY_STATE_DUMP"
TREE_FILES_MAX = 2000


def _rect(widget, rect=None) -> list[int] | None:
    """Global [x, y, w, h] of ``rect`` in ``widget`` (its whole area when None), in the
    screen's device pixels, as an X driver (xdotool) clicks them: Qt's logical pixels
    times the device pixel ratio (QT_SCALE_FACTOR=2: twice)."""
    if widget is None or not widget.isVisible():
        return None
    r = rect if rect is not None else widget.rect()
    tl = widget.mapToGlobal(r.topLeft())
    k = widget.devicePixelRatioF()
    return [round(tl.x() * k), round(tl.y() * k), round(r.width() * k), round(r.height() * k)]


def window_state(win) -> dict:
    """The window's visible state as plain data."""
    app = QApplication.instance()
    focus = app.focusWidget()
    modal = app.activeModalWidget()
    popup = app.activePopupWidget()
    tree = win.tree
    files = [n.path for n in win.tree_root.walk() if n.kind == "file"] if win.tree_root else []
    if len(files) <= TREE_FILES_MAX:
        files.sort()
    rows = []
    idx = tree.indexAt(QPoint(2, 2))
    while idx.isValid() and len(rows) < 40:
        r = tree.visualRect(idx)
        if r.top() > tree.viewport().height():
            break
        rows.append({"text": idx.data(), "rect": _rect(tree.viewport(), r)})
        idx = tree.indexBelow(idx)
    state = {
        "pid": os.getpid(),
        "size": [win.width(), win.height()],
        "min_size": [win.minimumSizeHint().width(), win.minimumSizeHint().height()],
        "title": win.windowTitle(),
        "status": win.status_label.text(),
        "hover": win.hover_label.text(),
        "busy": win.job is not None,
        "tooltip": QToolTip.text() if QToolTip.isVisible() else "",
        "modal": modal.windowTitle() if modal is not None else "",
        "popup": [a.text() for a in popup.actions()] if isinstance(popup, QMenu) else [],
        "focus": (focus.objectName() or type(focus).__name__) if focus is not None else "",
        "tab": win.tabs.tabText(win.tabs.currentIndex()),
        "tabs": [win.tabs.tabText(i) for i in range(win.tabs.count()) if win.tabs.isTabVisible(i)],
        # every file's path up to TREE_FILES_MAX files (a dump every 200 ms must not slow a
        # window of 20,000 tables); the count always
        "tree_files": files if len(files) <= TREE_FILES_MAX else [],
        "tree_file_count": len(files),
        "progress": [win.progress.value(), win.progress.maximum()] if win.progress.isVisible() else None,
        "cancel": _rect(win.cancel_button),
        "tree_rows": rows,
        "selected": win.selected_node_name(),
        "errors": [win.errors.item(i).text() for i in range(min(200, win.errors.count()))],
        "filter": _rect(win.filter_edit),
        "tree": _rect(tree.viewport()),
        "view": _rect(win.tabs.currentWidget()),
    }
    view = win.tabs.currentWidget()
    if view is not None and view.isVisible():
        from PySide6.QtWidgets import QPushButton

        from dbxray.viz.textfit import cut_texts, overlapping_texts
        state["buttons"] = {b.text(): _rect(b) for b in view.findChildren(QPushButton) if b.isVisible()}
        # texts of the view's charts cut by an edge or on top of each other (viz/textfit.py), and
        # what-if point names on a marker or another name
        state["cut_texts"] = cut_texts(view) + overlapping_texts(view)
        if hasattr(view, "scatter_label_collisions"):
            state["scatter_collisions"] = view.scatter_label_collisions()
    em = win.extent_map
    if em is not None and em.isVisible() and em.data is not None:
        pages = {}
        for p in (0, 3, 4, 5):
            if em.data.unit_at(p) is not None:
                pt = em.page_center_in_widget(p)
                g = em.glw.mapToGlobal(pt)
                pages[str(p)] = [g.x(), g.y()]
        state["map_pages"] = pages
        state["map_file"] = em.entry.path if em.entry is not None else ""
    return state


class StateDump(QObject):
    """Writes ``window_state`` to ``path`` every ``interval_ms``."""

    def __init__(self, win, path: str, interval_ms: int = 200):
        super().__init__(win)
        self.win = win
        self.path = path
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.write)
        self.timer.start(interval_ms)

    def write(self) -> None:
        tmp = self.path + ".tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(window_state(self.win), fh, indent=1)
            os.replace(tmp, self.path)
        except OSError:
            pass


def install(win) -> StateDump | None:
    path = os.environ.get(ENV)
    return StateDump(win, path) if path else None

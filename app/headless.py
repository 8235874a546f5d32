"""Views rendered without a window or display: used by `dbxray export`,
`dbxray report` and the tests."""
from __future__ import annotations

import os
import sys


def ensure_app():
    """A QApplication, offscreen when there is no display."""
    if "QT_QPA_PLATFORM" not in os.environ and not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")
    from PySide6.QtCore import qInstallMessageHandler
    from PySide6.QtWidgets import QApplication
    qInstallMessageHandler(quiet_offscreen_messages)
    return QApplication.instance() or QApplication(sys.argv[:1])


#: what the offscreen platform says on every show(): true and useless to a user of `dbxray export`
_OFFSCREEN_NOISE = ("This plugin does not support propagateSizeHints()",)


def quiet_offscreen_messages(mode, context, message: str) -> None:
    """Qt's messages to stderr as Qt prints them, without the offscreen plugin's
    propagateSizeHints() notice (headless commands print only what matters)."""
    if any(n in message for n in _OFFSCREEN_NOISE):
        return
    sys.stderr.write(message + "\n")


def view_ids() -> dict[str, type]:
    from dbxray.viz.registry import view_classes
    return {cls.view_id: cls for cls in view_classes()}


def find_node(root, target: str):
    """The tree node named by ``target``: a file path, "db.table", "db.table.column" or a name."""
    best = None
    for n in root.walk():
        if n.path == target:
            return n
        full = n.name
        if n.kind == "table" and n.parent is not None:
            full = f"{n.parent.name}.{n.name}"
        if full == target or (best is None and n.name == target):
            if full == target:
                return n
            best = n
    return best


def make_view(view_id: str, dataset, root, width: int, height: int, target: str | None = None,
              whatif: dict | None = None):
    """An instance of the view, laid out at the size, showing the dataset (and target)."""
    from dbxray.viz.theme import pg  # noqa: F401  (pyqtgraph configured before any view)
    ids = view_ids()
    if view_id not in ids:
        raise KeyError(f"unknown view {view_id!r}; available: {', '.join(sorted(ids))}")
    view = ids[view_id]()
    view.resize(width, height)
    view.show()
    view.set_dataset(dataset, root)
    if whatif is not None and hasattr(view, "set_results"):
        view.set_results(whatif)
    if target:
        if hasattr(view, "set_target"):
            view.set_target(target)
        elif hasattr(view, "select_node"):
            node = find_node(root, target)
            if node is None:
                raise KeyError(f"target {target!r} not found in the scan")
            view.select_node(node)
    settle()
    return view


def settle(rounds: int = 10) -> None:
    import time

    from PySide6.QtWidgets import QApplication
    for _ in range(rounds):
        QApplication.processEvents()
        time.sleep(0.003)

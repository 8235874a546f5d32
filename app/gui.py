"""Starting the window (and the headless --screenshot mode)."""
from __future__ import annotations

import os
import sys


def settle(app, rounds: int = 10) -> None:
    """Let pending layouts and paints run (offscreen grabs need it)."""
    import time
    for _ in range(rounds):
        app.processEvents()
        time.sleep(0.005)


def _view_key(name: str) -> str:
    """A view's name as ``--view`` compares it: lower case, words joined by hyphens
    (``Extent map``, ``extent_map`` and ``extent-map`` are one name)."""
    return "-".join(name.lower().replace("_", " ").replace("-", " ").split())


def view_class(view: str):
    """The view class ``view`` names, by its id (as ``dbxray export --view`` takes it) or its
    tab's title (:func:`_view_key` of each), or None."""
    from dbxray.viz.registry import view_classes
    key = _view_key(view)
    return next((cls for cls in view_classes() if key in (_view_key(cls.view_id), _view_key(cls.title))), None)


def run_gui(path: str | None, screenshot: str | None = None, view: str | None = None,
            screenshot_timeout: float = 3600.0) -> int:
    if screenshot and "QT_QPA_PLATFORM" not in os.environ and not os.environ.get("DISPLAY"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")
    from dbxray.app.platformcheck import platform_problem
    problem = None if screenshot else platform_problem()
    if problem:
        print(f"dbxray: {problem}", file=sys.stderr)
        return 1
    from PySide6.QtCore import Qt, QTimer
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QApplication

    if os.environ.get("QT_QPA_PLATFORM") == "offscreen":
        from PySide6.QtCore import qInstallMessageHandler

        from dbxray.app.headless import quiet_offscreen_messages
        qInstallMessageHandler(quiet_offscreen_messages)
    QGuiApplication.setHighDpiScaleFactorRoundingPolicy(Qt.HighDpiScaleFactorRoundingPolicy.PassThrough)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("dbxray")
    app.setOrganizationName("dbxray")

    from dbxray.app.window import MainWindow
    shown = view_class(view) if screenshot and view else None
    if screenshot and view and shown is None:
        from dbxray.viz.registry import view_classes
        names = ", ".join(cls.view_id for cls in view_classes())
        print(f"dbxray: --view {view}: no such view (the views: {names}); no screenshot written",
              file=sys.stderr)
        return 2

    win = MainWindow()
    if path is None:
        from dbxray.app.demo import prepare_demo
        path, _sparse = prepare_demo()
    if not screenshot:
        # shown first, then the scan starts (its thread imports the parsers): the window is
        # usable before the data arrives
        win.show()
        QTimer.singleShot(0, lambda: win.open_path(str(path)))
        return app.exec()
    win.open_path(str(path))
    win.resize(1400, 860)
    win.show()
    # the screenshot shows the finished scan or none: never a window still filling in
    if not win.wait_idle(int(screenshot_timeout * 1000)):
        win.cancel_scan()
        win.wait_idle(30000)
        win.close()
        print(f"dbxray: --screenshot: the scan of {path} did not finish within {screenshot_timeout:g} s "
              f"(--screenshot-timeout); no screenshot written", file=sys.stderr)
        return 1
    ds = win.dataset
    if ds is None or (not ds.files and ds.errors):      # as `dbxray scan`: nothing read is a failure
        why = "; ".join(ds.errors[:3]) if ds is not None else win.status_label.text()
        win.close()
        print(f"dbxray: --screenshot: {path} could not be read ({why}); no screenshot written",
              file=sys.stderr)
        return 1
    settle(app)
    for i in range(win.tabs.count()):
        if shown is not None and isinstance(win.tabs.widget(i), shown):
            win.tabs.setCurrentIndex(i)
    settle(app)
    ok = win.grab().save(screenshot)
    win.close()
    if not ok:
        print(f"dbxray: {screenshot}: cannot write PNG", file=sys.stderr)
        return 1
    return 0

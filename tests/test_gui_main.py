"""The main window on real widgets: demo, scan worker, cancel, drop, screenshot."""
import os
import threading

import pytest
from PySide6.QtCore import QMimeData, QPointF, QSettings, Qt, QUrl
from PySide6.QtGui import QDropEvent

from dbxray.app.demo import prepare_demo
from dbxray.app.treemodel import NODE_ROLE
from dbxray.app.window import MainWindow


@pytest.fixture
def window(qtbot, tmp_path):
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)
    w = MainWindow(settings=settings)
    qtbot.addWidget(w)
    w.resize(1400, 860)
    w.show()
    return w


def _top_names(w):
    m = w.model
    return [m.index(r, 0).data() for r in range(m.rowCount())]


def test_demo_opens_and_screenshot(window, qtbot, tmp_path, artifacts_dir):
    demo, sparse = prepare_demo(tmp_path / "cache")
    assert sparse, "holes could not be re-punched in the demo copy"
    with qtbot.waitSignal(window.scan_done, timeout=60000):
        window.open_path(str(demo))
    ds = window.dataset
    assert {"innodb", "clickhouse", "tokudb", "rocksdb"} <= set(ds.engines)
    assert {"InnoDB", "ClickHouse", "TokuDB", "MyRocks / RocksDB"} <= set(_top_names(window))
    pc = ds.file("mariadb/fx/t_pc_zlib.ibd")
    assert pc.allocated_bytes < pc.apparent_bytes and pc.holes
    assert not window.progress.isVisible() and not window.cancel_button.isVisible()
    assert "files" in window.status_label.text()
    qtbot.wait(50)
    img = window.grab()
    assert img.width() >= 1000 and img.height() >= 600
    assert img.save(str(artifacts_dir / "main_window.png"))


def test_tree_selection_fills_inspector(window, qtbot, sparse_fixtures):
    with qtbot.waitSignal(window.scan_done, timeout=60000):
        window.open_path(str(sparse_fixtures / "innodb" / "16k"))
    # find the t_pc_zlib.ibd file node and select it
    target = None
    for n in window.tree_root.walk():
        if n.kind == "file" and n.path == "fx/t_pc_zlib.ibd":
            target = n
    assert target is not None
    with qtbot.waitSignal(window.node_selected, timeout=5000):
        window.select_node(target)
    html = window.inspector.toPlainText()
    assert "t_pc_zlib.ibd" in html and "148.0 KiB" in html
    assert window.model.data(window.tree.currentIndex(), NODE_ROLE) is target


def test_sorting_by_allocated(window, qtbot, sparse_fixtures):
    with qtbot.waitSignal(window.scan_done, timeout=60000):
        window.open_path(str(sparse_fixtures / "innodb"))
    window.tree.sortByColumn(2, Qt.DescendingOrder)
    inno = window.model.index(0, 0)
    sizes = [window.model.data(window.model.index(r, 2, inno), NODE_ROLE).allocated
             for r in range(window.model.rowCount(inno))]
    assert sizes == sorted(sizes, reverse=True) and len(sizes) >= 2


def test_cancel_midway(window, qtbot, sparse_fixtures, monkeypatch):
    """A scan blocked in a parser is cancelled from the button; the window stays usable."""
    import dbxray.parsers.scan as scanmod
    gate = threading.Event()
    real = scanmod.read_facts

    def slow(entry, fs_block=None):
        gate.wait(0.05)
        return real(entry, fs_block)

    monkeypatch.setattr(scanmod, "read_facts", slow)
    window.open_path(str(sparse_fixtures / "innodb"))
    qtbot.waitUntil(lambda: window.cancel_button.isVisible(), timeout=5000)
    qtbot.wait(100)
    window.cancel_button.click()
    qtbot.waitUntil(lambda: window.job is None, timeout=30000)
    assert "cancel" in window.status_label.text().lower()
    assert window.dataset is None


def test_drop_opens_path(window, qtbot, sparse_fixtures):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(sparse_fixtures / "tokudb" / "datadir"))])
    ev = QDropEvent(QPointF(10, 10), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    with qtbot.waitSignal(window.scan_done, timeout=60000):
        window.dropEvent(ev)
    assert "tokudb" in window.dataset.engines
    assert window.recent_paths()[0] == str(sparse_fixtures / "tokudb" / "datadir")


def test_save_and_reopen_scan(window, qtbot, sparse_fixtures, tmp_path):
    with qtbot.waitSignal(window.scan_done, timeout=60000):
        window.open_path(str(sparse_fixtures / "innodb" / "4k"))
    saved = tmp_path / "scan.dbxray.json"
    window.save_scan(str(saved))
    first = {f.path: (f.apparent_bytes, f.allocated_bytes, f.holes) for f in window.dataset.files}
    with qtbot.waitSignal(window.scan_done, timeout=60000):
        window.open_path(str(saved))
    second = {f.path: (f.apparent_bytes, f.allocated_bytes, [tuple(h) for h in f.holes]) for f in window.dataset.files}
    assert first == second


def test_screenshot_command(tmp_path, monkeypatch):
    """`dbxray --screenshot FILE` renders the demo headless and writes a PNG."""
    import subprocess
    import sys
    out = tmp_path / "shot.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CACHE_HOME=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, "-m", "dbxray.app", "--screenshot", str(out)], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20000


def test_screenshot_never_of_an_unfinished_scan(tmp_path, sparse_fixtures):
    """`--screenshot` on a scan that does not finish in time writes nothing and exits 1 with the
    reason (it used to give up after 120 s and save the half-filled window, exit 0); a path that
    cannot be scanned likewise."""
    import subprocess
    import sys
    out = tmp_path / "shot.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CACHE_HOME=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, "-m", "dbxray.app", str(sparse_fixtures / "innodb"), "--screenshot",
                        str(out), "--screenshot-timeout", "0.001"], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 1 and not out.exists()
    assert "did not finish within 0.001 s" in r.stderr and "no screenshot written" in r.stderr
    broken = tmp_path / "gone"
    broken.symlink_to(tmp_path / "nowhere")
    r = subprocess.run([sys.executable, "-m", "dbxray.app", str(broken), "--screenshot", str(out)], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and not out.exists()
    assert "could not be read" in r.stderr and "No such file or directory" in r.stderr


def test_screenshot_view_names_and_an_unknown_one(tmp_path, sparse_fixtures, monkeypatch, qapp):
    """`--view` takes a view's id (as `dbxray export --view`) or its tab's title as written
    (`extent-map`, `Extent map`) and shows that tab in the screenshot; a name of no view exits
    2 naming the views, before any scan, and writes nothing (it used to screenshot the first
    view with status 0)."""
    import subprocess
    import sys
    from dbxray.app import gui
    for name in ("Extent map", "extent-map", "EXTENT_MAP"):
        assert gui.view_class(name).view_id == "extent-map"
    assert gui.view_class("whatif") is gui.view_class("What if") is not None   # export's id, the tab's title
    assert gui.view_class("extent") is None and gui.view_class("map") is None
    shown = []

    class Window(MainWindow):           # settings of its own; the tab shown when it closes
        def __init__(self):
            super().__init__(settings=QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat))

        def close(self):
            shown.append(self.tabs.tabText(self.tabs.currentIndex()))
            return super().close()

    monkeypatch.setattr("dbxray.app.window.MainWindow", Window)
    one = sparse_fixtures / "innodb" / "16k" / "fx" / "t_dynamic.ibd"
    out = tmp_path / "map.png"
    assert gui.run_gui(str(one), screenshot=str(out), view="Extent map", screenshot_timeout=120) == 0
    assert shown == ["Extent map"] and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = tmp_path / "bad.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CACHE_HOME=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, "-m", "dbxray.app", str(one), "--screenshot", str(bad), "--view", "map"],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and not bad.exists()
    assert "--view map: no such view" in r.stderr and "extent-map" in r.stderr and "whatif" in r.stderr


def test_window_exports_view_and_report(window, qtbot, sparse_fixtures, tmp_path):
    with qtbot.waitSignal(window.scan_done, timeout=60000):
        window.open_path(str(sparse_fixtures / "innodb" / "4k"))
    assert window.export_view(str(tmp_path / "v.png"), dpi=192)
    assert (tmp_path / "v.png").read_bytes()[:4] == b"\x89PNG"
    assert window.export_view(str(tmp_path / "v.svg"))
    assert b"<svg" in (tmp_path / "v.svg").read_bytes()[:400]
    with qtbot.waitSignal(window.report_written, timeout=120000):
        window.export_report(str(tmp_path / "r.html"), whatif_sample=None)
    assert "data:image/png;base64," in (tmp_path / "r.html").read_text()


def _open(window, qtbot, path):
    with qtbot.waitSignal(window.scan_done, timeout=60000):
        window.open_path(str(path))


def _file_node(root, path):
    return next(n for n in root.walk() if n.kind == "file" and n.path == path)


def test_page_inspector_is_the_right_dock_and_selection_is_shared(window, qtbot, sparse_fixtures, artifacts_dir):
    """Click a page: the right dock shows its header fields and coloured hex, and its index
    is selected in the tree; pick another index in the tree: its pages are highlighted."""
    _open(window, qtbot, sparse_fixtures / "innodb" / "16k")
    em = window.extent_map
    assert window.dockWidgetArea(window.inspector_dock) == Qt.RightDockWidgetArea
    assert window.inspector_dock.isAncestorOf(window.page_inspector)
    assert em.inspector is window.page_inspector and not em.isAncestorOf(window.page_inspector)
    window.tabs.setCurrentWidget(em)
    fnode = _file_node(window.tree_root, "fx/t_pc_zlib.ibd")
    window.select_node(fnode)
    qtbot.wait(50)
    qtbot.mouseClick(em.glw.viewport(), Qt.LeftButton, pos=em.page_center_in_widget(4))
    insp = window.page_inspector
    assert insp.page_no == 4 and insp.field_value("FIL_PAGE_OFFSET") == "4"
    assert insp.hex.region_at(0) == "FIL header" and insp.hex.region_at(16380) == "FIL trailer"
    assert insp.isVisible() and insp.hex.width() > 300
    cur = window.model.data(window.tree.currentIndex(), NODE_ROLE)
    assert cur.kind == "index" and cur.parent is fnode
    assert int(insp.field_value("PAGE_INDEX_ID").replace(",", "")) == cur.ref["index_id"]
    assert em.highlight_owner == cur.ref["index_id"]
    window.grab().save(str(artifacts_dir / "window_page_inspector.png"))
    # another file's index picked in the tree: the map switches to its file and highlights its pages
    other = next(n for n in _file_node(window.tree_root, "fx/t_dynamic.ibd").children if n.kind == "index")
    window.select_node(other)
    assert em.entry is other.parent.ref
    assert em.highlighted_btree_count() == other.ref["pages"] > 0
    assert "highlighted" in em.status.text()


def test_keyboard_shortcuts(window, qtbot, sparse_fixtures, tmp_path, monkeypatch):
    """Open (Ctrl+O), go to page (Ctrl+G), zoom in/out/reset (Ctrl++, Ctrl+-, Ctrl+0) and
    export (Ctrl+E), as key presses on the real window."""
    from PySide6.QtGui import QImage
    from PySide6.QtWidgets import QFileDialog

    from dbxray.viz.export import ExportOptionsDialog
    window.activateWindow()
    qtbot.waitActive(window)
    monkeypatch.setattr(QFileDialog, "getExistingDirectory",
                        staticmethod(lambda *a, **k: str(sparse_fixtures / "innodb" / "16k")))
    with qtbot.waitSignal(window.scan_done, timeout=60000):
        qtbot.keyClick(window, Qt.Key_O, Qt.ControlModifier)
    em = window.extent_map
    window.select_node(_file_node(window.tree_root, "fx/t_dynamic.ibd"))
    # Ctrl+G: the extent map, its page field focused; type a page number and Enter
    qtbot.keyClick(window, Qt.Key_G, Qt.ControlModifier)
    assert window.tabs.currentWidget() is em
    qtbot.waitUntil(lambda: em.goto.hasFocus(), timeout=2000)
    qtbot.keyClicks(em.goto, "5")
    qtbot.keyClick(em.goto, Qt.Key_Return)
    assert em.selected_page == 5 and window.page_inspector.page_no == 5
    # zoom on the current view (the extent map)
    em.glw.setFocus()

    def xspan():
        (x0, x1), _ = em.vb.viewRange()
        return x1 - x0

    qtbot.wait(20)
    fitted = xspan()
    qtbot.keyClick(window, Qt.Key_Plus, Qt.ControlModifier)
    one_in = xspan()
    assert one_in < fitted * 0.9
    qtbot.keyClick(window, Qt.Key_Plus, Qt.ControlModifier)
    assert xspan() < one_in * 0.9
    qtbot.keyClick(window, Qt.Key_Minus, Qt.ControlModifier)
    assert abs(xspan() - one_in) < 1e-6
    qtbot.keyClick(window, Qt.Key_0, Qt.ControlModifier)
    assert abs(xspan() - fitted) < 1e-6
    # zoom acts on whichever view is current: the sizes chart
    sizes = window.views[0]
    window.tabs.setCurrentWidget(sizes)
    vb = sizes.plot_widget.getPlotItem().getViewBox()
    qtbot.wait(20)
    before = vb.viewRange()[0][1] - vb.viewRange()[0][0]
    qtbot.keyClick(window, Qt.Key_Plus, Qt.ControlModifier)
    assert vb.viewRange()[0][1] - vb.viewRange()[0][0] < before * 0.9
    # Ctrl+E: export the current view at the size and DPI asked for
    out = tmp_path / "exported.png"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(out), "")))

    def accept(dlg):
        dlg.width_box.setValue(1000)
        dlg.height_box.setValue(700)
        dlg.dpi_box.setValue(192)
        return ExportOptionsDialog.Accepted

    monkeypatch.setattr(ExportOptionsDialog, "exec", accept)
    window.tabs.setCurrentWidget(em)
    qtbot.keyClick(window, Qt.Key_E, Qt.ControlModifier)
    img = QImage(str(out))
    assert (img.width(), img.height()) == (2000, 1400)

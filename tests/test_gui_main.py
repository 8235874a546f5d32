"""The main window on real widgets: demo, scan worker, cancel, drop, screenshot."""
import os
import threading

import pytest
from PySide6.QtCore import QMimeData, QPointF, QSettings, Qt, QUrl
from PySide6.QtGui import QDropEvent

from app.demo import prepare_demo
from app.treemodel import NODE_ROLE
from app.window import MainWindow


@pytest.fixture
def window(qtbot, tmp_path):
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)
    w = MainWindow(settings=settings)
    qtbot.addWidget(w)
    w.resize(1400, 860)
    w.show()
    return w


def _top_names(w):
    m = w.proxy
    return [m.index(r, 0).data() for r in range(m.rowCount())]


def test_demo_opens_and_screenshot(window, qtbot, tmp_path, artifacts_dir):
    demo, sparse = prepare_demo(tmp_path / "cache")
    assert sparse, "holes could not be re-punched in the demo copy"
    with qtbot.waitSignal(window.dataset_loaded, timeout=60000):
        window.open_path(str(demo))
    ds = window.dataset
    assert set(ds.engines) == {"innodb", "clickhouse", "tokudb"}
    assert set(_top_names(window)) == {"InnoDB", "ClickHouse", "TokuDB"}
    pc = ds.file("mariadb/fx/t_pc_zlib.ibd")
    assert pc.allocated_bytes < pc.apparent_bytes and pc.holes
    assert not window.progress.isVisible() and not window.cancel_button.isVisible()
    assert "files" in window.status_label.text()
    qtbot.wait(50)
    img = window.grab()
    assert img.width() >= 1000 and img.height() >= 600
    assert img.save(str(artifacts_dir / "main_window.png"))


def test_tree_selection_fills_inspector(window, qtbot, sparse_fixtures):
    with qtbot.waitSignal(window.dataset_loaded, timeout=60000):
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
    assert window.proxy.data(window.tree.currentIndex(), NODE_ROLE) is target


def test_sorting_by_allocated(window, qtbot, sparse_fixtures):
    with qtbot.waitSignal(window.dataset_loaded, timeout=60000):
        window.open_path(str(sparse_fixtures / "innodb"))
    window.tree.sortByColumn(2, Qt.DescendingOrder)
    inno = window.proxy.index(0, 0)
    sizes = [window.proxy.data(window.proxy.index(r, 2, inno), NODE_ROLE).allocated
             for r in range(window.proxy.rowCount(inno))]
    assert sizes == sorted(sizes, reverse=True) and len(sizes) >= 2


def test_cancel_midway(window, qtbot, sparse_fixtures, monkeypatch):
    """A scan blocked in a parser is cancelled from the button; the window stays usable."""
    import parsers.scan as scanmod
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
    with qtbot.waitSignal(window.dataset_loaded, timeout=60000):
        window.dropEvent(ev)
    assert "tokudb" in window.dataset.engines
    assert window.recent_paths()[0] == str(sparse_fixtures / "tokudb" / "datadir")


def test_save_and_reopen_scan(window, qtbot, sparse_fixtures, tmp_path):
    with qtbot.waitSignal(window.dataset_loaded, timeout=60000):
        window.open_path(str(sparse_fixtures / "innodb" / "4k"))
    saved = tmp_path / "scan.dbxray.json"
    window.save_scan(str(saved))
    first = {f.path: (f.apparent_bytes, f.allocated_bytes, f.holes) for f in window.dataset.files}
    with qtbot.waitSignal(window.dataset_loaded, timeout=60000):
        window.open_path(str(saved))
    second = {f.path: (f.apparent_bytes, f.allocated_bytes, [tuple(h) for h in f.holes]) for f in window.dataset.files}
    assert first == second


def test_screenshot_command(tmp_path, monkeypatch):
    """`dbxray --screenshot FILE` renders the demo headless and writes a PNG."""
    import subprocess
    import sys
    out = tmp_path / "shot.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CACHE_HOME=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, "-m", "app", "--screenshot", str(out)], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20000


def test_window_exports_view_and_report(window, qtbot, sparse_fixtures, tmp_path):
    with qtbot.waitSignal(window.dataset_loaded, timeout=60000):
        window.open_path(str(sparse_fixtures / "innodb" / "4k"))
    assert window.export_view(str(tmp_path / "v.png"), dpi=192)
    assert (tmp_path / "v.png").read_bytes()[:4] == b"\x89PNG"
    assert window.export_view(str(tmp_path / "v.svg"))
    assert b"<svg" in (tmp_path / "v.svg").read_bytes()[:400]
    with qtbot.waitSignal(window.report_written, timeout=120000):
        window.export_report(str(tmp_path / "r.html"), whatif_sample=None)
    assert "data:image/png;base64," in (tmp_path / "r.html").read_text()

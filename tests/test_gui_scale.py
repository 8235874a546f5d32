"""The window on data dirs of many tables (issue 22 items 5 and 7): the files listed in
the tree before the scan has read them, rows arriving in batches with a monotonic progress,
Cancel keeping the rows found so far, the lazy tree model against Qt's own sorting and
filtering, and a start-up that imports neither pyqtgraph nor the parsers."""
import shutil
import subprocess
import sys
import threading

import pytest
from PySide6.QtCore import QModelIndex, QSettings, QSortFilterProxyModel, Qt

import dbxray.app.workers as workers
from dbxray.app.tablecsv import model_rows
from dbxray.app.treemodel import NODE_ROLE, SORT_ROLE, DatasetTreeModel
from dbxray.app.window import MainWindow
from dbxray.app.workers import dataset_tree
from dbxray.parsers.scan import scan

SMALL = ("16k/fx/t_part#P#pmax.ibd", "datadir16k/fx/t_zip8.ibd", "datadir16k/mysql/gtid_slave_pos.ibd")


@pytest.fixture(scope="module")
def many(fixtures_root, tmp_path_factory):
    """120 small tablespaces in 4 databases (real copies)."""
    root = tmp_path_factory.mktemp("many")
    for i in range(120):
        d = root / f"db{i // 30}"
        d.mkdir(exist_ok=True)
        shutil.copyfile(fixtures_root / "innodb" / SMALL[i % 3], d / f"t{i:04d}.ibd")
    return root


@pytest.fixture
def window(qtbot, tmp_path):
    w = MainWindow(settings=QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat))
    qtbot.addWidget(w)
    w.resize(1200, 800)
    w.show()
    return w


def _file_rows(w) -> int:
    return sum(1 for n in w.tree_root.walk() if n.kind == "file") if w.tree_root is not None else 0


def test_rows_arrive_in_batches_before_the_scan_ends(window, qtbot, many, monkeypatch):
    monkeypatch.setattr(workers, "LIST_FIRST_FILES", 10)
    monkeypatch.setattr(workers, "LIST_BATCH_SECONDS", 0.0)
    seen, values = [], []
    window.job = None
    real_listing = window._on_listing

    def listing(part):
        real_listing(part)
        if part.get("kind") == "files":
            # what the tree holds after each batch, while the scan job still runs
            seen.append((_file_rows(window), window.model.rowCount() > 0, window.job is not None))
    monkeypatch.setattr(window, "_on_listing", listing)
    window.progress.valueChanged.connect(values.append)
    with qtbot.waitSignal(window.scan_done, timeout=120000):
        window.open_path(str(many))
    counts = [c for c, _, _ in seen]
    assert len(counts) >= 3 and counts[0] < 120 and counts[-1] == 120, counts
    assert counts == sorted(counts)                                  # rows only added
    assert all(shown and running for _, shown, running in seen)      # shown while the scan runs
    assert values == sorted(values)                                  # progress never goes back
    # the scan's tree replaced the listing: the same files, now with their index rows
    assert _file_rows(window) == 120 and window.listing is None
    assert any(n.kind == "index" for n in window.tree_root.walk())


def test_cancel_keeps_the_rows_found_so_far(window, qtbot, many, monkeypatch):
    import dbxray.parsers.scan as scanmod
    gate = threading.Event()
    real = scanmod.read_facts

    def slow(entry, fs_block=None):
        gate.wait(0.05)
        return real(entry, fs_block)
    monkeypatch.setattr(scanmod, "read_facts", slow)
    errors_before = window.errors.count()
    window.open_path(str(many))
    qtbot.waitUntil(lambda: _file_rows(window) == 120, timeout=30000)
    assert window.job is not None                    # the scan is still reading
    window.cancel_button.click()
    qtbot.waitUntil(lambda: window.job is None, timeout=30000)
    gate.set()
    assert _file_rows(window) == 120                 # the listed rows stay
    assert window.model.rowCount() > 0
    status = window.status_label.text()
    assert "cancelled" in status.lower() and "120 files listed" in status
    assert window.errors.count() == errors_before    # a cancel is not an error
    assert window.dataset is None
    # the rows carry their stat sizes
    db = next(n for n in window.tree_root.walk() if n.kind == "database")
    assert db.allocated > 0 and db.apparent == sum(f.apparent for f in db.walk() if f.kind == "file")


def _eager_rows(root, column, order, text=""):
    """Qt's own sort and recursive filter (QSortFilterProxyModel) over the model with every
    row fetched at once: what an eager model shows."""
    src = DatasetTreeModel(root, batch=10 ** 9)
    proxy = QSortFilterProxyModel()
    proxy.setSourceModel(src)
    proxy.setSortRole(SORT_ROLE)
    proxy.setRecursiveFilteringEnabled(True)
    proxy.setFilterCaseSensitivity(Qt.CaseInsensitive)
    proxy.setFilterKeyColumn(0)
    proxy.setFilterFixedString(text)
    proxy.sort(column, order)
    return model_rows(proxy, tree=True), src, proxy


@pytest.mark.parametrize("where", ["demo", "innodb", "clickhouse"])
def test_lazy_rows_equal_the_eager_ones(where, sparse_fixtures, tmp_path, qapp):
    if where == "demo":
        from dbxray.app.demo import prepare_demo
        path, _ = prepare_demo(tmp_path / "cache")
    else:
        path = sparse_fixtures / where / ("datadir" if where == "clickhouse" else "")
    root, _ = dataset_tree(scan(str(path)))
    for column, order, text in ((2, Qt.DescendingOrder, ""), (0, Qt.AscendingOrder, ""),
                                (1, Qt.AscendingOrder, "t_"), (4, Qt.DescendingOrder, "primary")):
        lazy = DatasetTreeModel(root, batch=2)
        lazy.set_filter(text)
        lazy.sort(column, order)
        eager, _src, _proxy = _eager_rows(root, column, order, text)
        got = model_rows(lazy, tree=True)           # fetches every batch on the way
        assert got == eager and len(got) > 5, (where, column, text)


def test_rows_are_fetched_in_batches(many, qapp):
    root, _ = dataset_tree(scan(str(many)))
    model = DatasetTreeModel(root, batch=7)
    model.sort(2, Qt.DescendingOrder)
    eng = model.index(0, 0)
    db = model.index(0, 0, eng)
    node = model.data(db, NODE_ROLE)
    assert len(node.children) == 30
    assert model.rowCount(db) == 7 and model.canFetchMore(db)
    model.fetchMore(db)
    assert model.rowCount(db) == 14
    # a node far down is reachable: the rows up to it are fetched on the way
    last = sorted(node.children, key=lambda n: -n.allocated)[-1]
    idx = model.index_of(last)
    assert idx.isValid() and model.data(idx, NODE_ROLE) is last and model.rowCount(db) == 30
    assert not model.canFetchMore(db)


def test_start_up_imports_no_view_and_no_parser(tmp_path):
    """The window is made and shown before pyqtgraph, numpy, the views or any engine parser
    is imported (they come with the data)."""
    code = ("import sys\n"
            "from PySide6.QtWidgets import QApplication\n"
            "app = QApplication([])\n"
            "from dbxray.app.window import MainWindow\n"
            "w = MainWindow(); w.show(); app.processEvents()\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('pyqtgraph', 'numpy')\n"
            "             or m.startswith(('dbxray.viz', 'dbxray.parsers.innodb', 'dbxray.parsers.engines')))\n"
            "print(bad)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]", r.stdout


def test_filter_box_filters_once_typing_pauses(window, qtbot, many):
    with qtbot.waitSignal(window.scan_done, timeout=120000):
        window.open_path(str(many))
    window.filter_edit.setFocus()
    qtbot.keyClicks(window.filter_edit, "t0001")
    assert window.model.kept_count() > 100          # not filtered per key: once typing pauses
    qtbot.waitUntil(lambda: window.model.kept_count() == 4, timeout=5000)     # engine, database, table, file
    rows = [r[0] for r in model_rows(window.model, tree=True)]
    assert rows[-1].endswith("t0001 / t0001.ibd") and len(rows) == 4, rows
    window.filter_edit.clear()
    qtbot.waitUntil(lambda: window.model.kept_count() > 100, timeout=5000)


def test_listing_rows_say_what_is_not_read_yet(window, qtbot, many, monkeypatch):
    """While the scan runs, a listed row shows stat's sizes and leaves holes, logical size and
    errors empty (not 0 B); the inspector says they are not read yet."""
    import dbxray.parsers.scan as scanmod
    gate = threading.Event()
    real = scanmod.read_facts
    monkeypatch.setattr(scanmod, "read_facts", lambda e, fs_block=None: (gate.wait(0.05), real(e, fs_block))[1])
    window.open_path(str(many))
    qtbot.waitUntil(lambda: _file_rows(window) == 120, timeout=30000)
    eng = window.model.index(0, 0)
    assert window.model.index(0, 1, QModelIndex()).data() not in ("", None)          # apparent
    assert [window.model.index(0, c).data() for c in (3, 4, 5)] == ["", "", ""]       # holes, logical, errors
    window.tree.setCurrentIndex(eng)
    assert "not read yet" in window.inspector.toPlainText()
    window.cancel_scan()
    qtbot.waitUntil(lambda: window.job is None, timeout=30000)
    gate.set()

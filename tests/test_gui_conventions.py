"""Conventions of desktop data tools (issue 21, defect 9): right-click menus on the tree,
the tables and the views; CSV of every table; Help with the shortcut list and About;
export dialogs start in the last folder written to; the title says "demo" for the
embedded demo; the hex view has 16 bytes a row, search and go-to-offset; storage models
named in words; the what-if target shown first is the one the advice saves most on."""
import csv
import io

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QAbstractItemView, QFileDialog

from dbxray.app.demo import prepare_demo
from dbxray.app.window import MainWindow
from dbxray.viz.pageinspector import find_next, parse_offset, parse_pattern
from dbxray.viz.whatif import model_label


@pytest.fixture
def window(qtbot, tmp_path):
    w = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat))
    qtbot.addWidget(w)
    w.resize(1400, 860)
    w.show()
    qtbot.waitExposed(w)
    return w


@pytest.fixture
def opened(window, qtbot, sparse_fixtures):
    with qtbot.waitSignal(window.scan_done, timeout=60000):
        window.open_path(str(sparse_fixtures / "innodb" / "16k"))
    return window


def _file_index(w, suffix):
    node = next(n for n in w.tree_root.walk() if n.kind == "file" and n.path.endswith(suffix))
    w.select_node(node)
    return w.tree.currentIndex(), node


def test_tree_menu_copies_path_and_row_and_opens_the_folder(opened):
    idx, node = _file_index(opened, "fx/t_pc_zlib.ibd")
    acts = dict(opened.tree_menu_actions(idx))
    assert {"Copy name", "Copy path", "Copy row", "Open containing folder", "Copy tree as CSV",
            "Save tree as CSV…"} <= set(acts)
    acts["Copy path"]()
    assert QGuiApplication.clipboard().text() == node.ref.abspath
    acts["Copy row"]()
    row = QGuiApplication.clipboard().text().split("\t")
    assert row[0] == "t_pc_zlib.ibd" and len(row) >= 4


def test_tree_csv_has_every_row(opened, tmp_path):
    text = opened.tree_csv()
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][:2] == ["place in tree", "Name"]
    n_nodes = sum(1 for _ in opened.tree_root.walk()) - 1
    assert len(rows) - 1 == n_nodes
    assert any(r[0].endswith("t_pc_zlib.ibd") for r in rows)
    assert opened.write_text(str(tmp_path / "t.csv"), text) and (tmp_path / "t.csv").read_text() == text


def _in_combo(widget) -> bool:
    from PySide6.QtWidgets import QComboBox
    w = widget.parent()
    while w is not None:
        if isinstance(w, QComboBox):
            return True
        w = w.parent()
    return False


def test_every_view_and_table_has_its_menu(opened):
    for view in opened.views:
        texts = [a.text() for a in view.actions()]
        assert "Export this view as PNG…" in texts and "Copy this view to the clipboard" in texts, view.title
        for table in view.findChildren(QAbstractItemView):
            if _in_combo(table):        # a combo box's drop-down list, made when first needed: not a table
                continue
            assert "Save table as CSV…" in [a.text() for a in table.actions()], (view.title, table)
    em = opened.extent_map
    opened.tabs.setCurrentWidget(em)
    opened.copy_table_csv(em.legend)
    rows = list(csv.reader(io.StringIO(QGuiApplication.clipboard().text())))
    assert rows[0][:2] == ["category", "pages"] and len(rows) > 2


def test_help_lists_the_shortcuts(window):
    keys = dict(window.shortcut_list())
    assert "Ctrl+E" in keys and "F1" in keys and "Ctrl+G" in keys and "Home" in keys
    menus = [a.text().replace("&", "") for a in window.menuBar().actions()]
    assert "Help" in menus
    assert window.about_action.text().replace("&", "") == "About dbxray"


def test_export_dialog_starts_in_the_last_folder(opened, tmp_path, monkeypatch):
    seen = []

    def fake(parent, caption, start, flt):
        seen.append(start)
        return "", ""
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(fake))
    out = tmp_path / "exports"
    out.mkdir()
    assert opened.export_view(str(out / "sizes.png"))
    opened.export_view_dialog("png")
    opened.save_tree_csv_dialog()
    assert all(s.startswith(str(out)) for s in seen) and len(seen) == 2, seen


def test_title_says_demo(window, qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    demo, _ = prepare_demo()
    with qtbot.waitSignal(window.scan_done, timeout=60000):
        window.open_path(str(demo))
    assert "demo" in window.windowTitle() and ".cache" not in window.windowTitle() \
        and str(tmp_path) not in window.windowTitle(), window.windowTitle()
    assert "demo" in window.status_label.text()


def test_hex_view_16_a_row_find_and_go_to(opened, qtbot):
    em = opened.extent_map
    opened.tabs.setCurrentWidget(em)
    _file_index(opened, "fx/t_pc_zlib.ibd")
    em.click_page(0)
    pi = opened.page_inspector
    qtbot.wait(50)
    assert pi.hex.bpl == 16 and pi.hex.width() < pi.hex.line_width(16) + 40     # narrow dock: scrolls sideways
    data = pi.hex.data
    pi.goto_offset.setText("0x26")
    pi._on_goto_offset()
    assert pi.hex.mark == (0x26, 0x27)
    pi.find_box.setText(" ".join(f"{b:02x}" for b in data[38:42]))
    pi.find_box.returnPressed.emit()
    assert pi.hex.mark[0] == data.find(data[38:42], 0x27) if data.find(data[38:42], 0x27) >= 0 else data.find(data[38:42])


def test_search_and_offset_parsing():
    assert parse_offset("0x1f0") == 496 and parse_offset("1f0h") == 496 and parse_offset("1,024") == 1024
    assert parse_offset("zz") is None
    assert parse_pattern("53 59 53") == b"SYS" and parse_pattern("0x5359") == b"SY"
    assert parse_pattern("infimum") == b"infimum"
    assert find_next(b"abcabc", b"bc", 2) == 4 and find_next(b"abcabc", b"bc", 5) == 1
    assert find_next(b"abc", b"zz", 0) == -1


def test_model_names_in_words():
    assert model_label("innodb_page_compressed_64k_pages_approximation") == \
        "InnoDB page compression, 64 KiB pages (approximation)"
    assert model_label("innodb_row_compressed_kbs8k_estimate") == "ROW_FORMAT=COMPRESSED, KEY_BLOCK_SIZE=8 (estimate)"
    assert model_label("zfs_recordsize_128k_ashift12") == "ZFS, recordsize 128K, ashift 12"
    assert model_label("innodb_row_compressed_kbs4k_from_rows_estimate") == \
        "the rows as ROW_FORMAT=COMPRESSED, KEY_BLOCK_SIZE=4 (estimate)"
    assert model_label("myrocks_from_rows_estimate") == "the rows as MyRocks SSTs (estimate)"
    assert model_label("tokudb_from_rows_estimate") == "the rows as TokuDB (estimate)"
    assert model_label("something_new") == "something_new"


def test_what_if_shows_the_first_engine_first():
    from dbxray.viz.whatif import default_target
    targets = [{"target": "tokudb/big.tokudb", "engine": "tokudb", "current_bytes": 4 << 20},
               {"target": "fx/t_blob.ibd", "engine": "innodb", "current_bytes": 600 << 10},
               {"target": "fx/t_small.ibd", "engine": "innodb", "current_bytes": 100 << 10}]
    assert default_target(targets) == "fx/t_blob.ibd"

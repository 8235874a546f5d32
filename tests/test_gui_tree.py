"""The tree's ClickHouse column nodes (engine > database > table > part > column)
against the engine's own system.parts_columns (fixtures manifest), and sorting
them on the real window."""
import json

import pytest
from PySide6.QtCore import QSettings, Qt

from dbxray.app.treemodel import CH_COLUMNS, COLUMNS, NODE_ROLE, DatasetTreeModel, add_clickhouse_columns
from dbxray.app.window import MainWindow
from dbxray.parsers.humanize import human_bytes
from dbxray.parsers.scan import scan
from dbxray.parsers.tree import build_tree


@pytest.fixture(scope="module")
def manifest(fixtures_root):
    return json.loads((fixtures_root / "clickhouse" / "manifest.json").read_text())


@pytest.fixture(scope="module")
def ds(sparse_fixtures):
    return scan(str(sparse_fixtures / "clickhouse" / "datadir"))


def _part_node(root, db, table, part):
    eng = next(c for c in root.children if c.name == "ClickHouse")
    dbn = next(c for c in eng.children if c.kind == "database" and c.name == db)
    tn = next(c for c in dbn.children if c.kind == "table" and c.name == table)
    return next(c for c in tn.children if c.kind == "part" and c.name == part)


def _src_index(model, node):
    """The model index of a tree node (row path from the root)."""
    path = []
    while node.parent is not None:
        path.append(node)
        node = node.parent
    from PySide6.QtCore import QModelIndex
    idx = QModelIndex()
    for n in reversed(path):
        idx = model.index(n.parent.children.index(n), 0, idx)
    return idx


def test_column_nodes_equal_system_parts_columns(ds, manifest, qapp):
    root = build_tree(ds)
    added = add_clickhouse_columns(root, ds)
    model = DatasetTreeModel(root)
    col = {name: i for i, name in enumerate(COLUMNS)}
    checked = compact = 0
    for tname, mt in manifest["tables"].items():
        types = {p["name"]: p["part_type"] for p in mt["system_parts"]}
        for mc in mt["system_parts_columns"]:
            part = _part_node(root, manifest["database"], tname, mc["part_name"])
            node = next(c for c in part.children if c.kind == "column" and c.name == mc["column"])
            c, u, m, computed = node.ch_sizes
            assert node.ref["type"] == mc["type"]
            # the engine's own figures travel with the node, equal
            assert node.ref["compressed_bytes"] == mc["column_data_compressed_bytes"]
            assert node.ref["uncompressed_bytes"] == mc["column_data_uncompressed_bytes"]
            assert node.ref["marks_bytes"] == mc["column_marks_bytes"]
            row = part.children.index(node)
            pidx = _src_index(model, part)
            assert model.data(model.index(row, 0, pidx)) == mc["column"]
            tip = model.data(model.index(row, col["Compressed"], pidx), Qt.ToolTipRole)
            if types[mc["part_name"]] == "Wide":
                assert (c, u, m, computed) == (mc["column_data_compressed_bytes"],
                                               mc["column_data_uncompressed_bytes"], mc["column_marks_bytes"], False)
                assert model.data(model.index(row, col["Compressed"], pidx)) == human_bytes(c)
                assert model.data(model.index(row, col["Uncompressed"], pidx)) == human_bytes(u)
                assert model.data(model.index(row, col["Marks"], pidx)) == human_bytes(m)
                assert f"compressed {c:,} B" in tip
            else:
                # Compact: the engine reports 0; the node shows the split from the marks, flagged
                assert mc["column_data_compressed_bytes"] == 0 and computed and c > 0
                assert model.data(model.index(row, col["Compressed"], pidx)) == "≈ " + human_bytes(c)
                assert "reports 0 B" in tip
                compact += 1
            checked += 1
    assert checked == added == 371 and compact > 0
    # part rows carry system.parts' figures
    for tname, mt in manifest["tables"].items():
        for mp in mt["system_parts"]:
            part = _part_node(root, manifest["database"], tname, mp["name"])
            assert part.ch_sizes[:3] == (mp["data_compressed_bytes"], mp["data_uncompressed_bytes"], mp["marks_bytes"])


def test_column_nodes_sort_in_the_window(ds, qtbot, tmp_path, sparse_fixtures):
    w = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat))
    qtbot.addWidget(w)
    w.resize(1400, 860)
    w.show()
    with qtbot.waitSignal(w.scan_done, timeout=60000):
        w.open_path(str(sparse_fixtures / "clickhouse" / "datadir"))
    assert not any(w.tree.isColumnHidden(c) for c in CH_COLUMNS)
    part = _part_node(w.tree_root, "fx", "codecs", "202401_1_2_1")
    col_node = next(c for c in part.children if c.kind == "column")
    w.select_node(col_node)
    assert w.model.data(w.tree.currentIndex().parent(), NODE_ROLE) is part
    for sort_col, key in ((6, 0), (7, 1), (8, 2)):
        w.tree.sortByColumn(sort_col, Qt.DescendingOrder)
        pidx = w.model.index_of(part)
        vals = [w.model.data(w.model.index(r, 0, pidx), NODE_ROLE) for r in range(w.model.rowCount(pidx))]
        cols = [n.ch_sizes[key] for n in vals if n.kind == "column"]
        assert len(cols) > 5 and cols == sorted(cols, reverse=True)
    # selecting a column node shows its figures in the inspector and the column in the view
    w.select_node(col_node)
    text = w.inspector.toPlainText()
    assert col_node.name in text and "Compressed" in text and f"{col_node.ch_sizes[0]:,} B" in text
    # an InnoDB-only scan hides the ClickHouse columns
    with qtbot.waitSignal(w.scan_done, timeout=60000):
        w.open_path(str(sparse_fixtures / "innodb" / "4k"))
    assert all(w.tree.isColumnHidden(c) for c in CH_COLUMNS)

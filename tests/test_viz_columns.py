"""Column sizes view and treemap on real ClickHouse fixture scans: the bars'
values are the engine's own figures (manifest system.columns /
system.parts_columns), the treemap's areas are proportional, the histogram
counts the column's blocks.  Screenshots of every mode go to artifacts/."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest
from PySide6.QtCore import QPointF, QRectF, Qt

from dbxray.parsers.scan import scan
from dbxray.parsers.tree import build_tree
from dbxray.viz.columns import ColumnSizesView, column_rows, treemap_tree
from dbxray.viz.export import export_png, export_svg
from dbxray.viz.treemap import TreeBox, TreemapItem, squarify

W, H = 1400, 860


@pytest.fixture(scope="module")
def manifest(fixtures_root):
    return json.loads((fixtures_root / "clickhouse" / "manifest.json").read_text())


@pytest.fixture(scope="module")
def ds(sparse_fixtures):
    return scan(str(sparse_fixtures / "clickhouse" / "datadir"))


@pytest.fixture(scope="module")
def root(ds):
    return build_tree(ds)


@pytest.fixture
def view(qtbot, ds, root):
    v = ColumnSizesView()
    qtbot.addWidget(v)
    v.resize(W, H)
    v.show()
    v.set_dataset(ds, root)
    qtbot.wait(10)
    return v


def drawn(view, name):
    """{column: bytes} as drawn by the bar item ``name`` (width x axis unit)."""
    if name not in view.bar_graphs:
        return {}
    item, idx = view.bar_graphs[name]
    widths = np.asarray(item.opts["width"], dtype=float) * view.scale
    return {view.shown[i].name: int(round(w)) for i, w in zip(idx, widths)}


def settle():
    from dbxray.app.headless import settle as _settle
    _settle()


def shot(view, artifacts_dir, name):
    settle()                      # let the layout follow the new heading/note before rendering
    path = artifacts_dir / f"{name}.png"
    assert export_png(view.export_widget(), str(path))
    return path


def table_node(root, db, table):
    for n in root.walk():
        if n.kind == "table" and n.name == table and n.parent is not None and n.parent.name == db:
            return n
    raise AssertionError(f"{db}.{table} not in the tree")


# -- bars ----------------------------------------------------------------------------------

@pytest.mark.parametrize("table", ["codecs", "seed_nq_u1000"])
def test_table_bars_equal_system_columns(view, manifest, table, artifacts_dir):
    view.set_target(f"fx.{table}")
    mcols = {c["name"]: c for c in manifest["tables"][table]["system_columns"]}
    comp, unc, marks = drawn(view, "compressed"), drawn(view, "uncompressed"), drawn(view, "marks")
    # every column has its own bar at this size (a smaller window sums the smallest in one row)
    assert sorted(unc) == sorted(mcols)
    for name, mc in mcols.items():
        # bar widths are floats in KiB/MiB: equal to the byte within rounding of the float
        assert abs(comp.get(name, 0) - mc["data_compressed_bytes"]) <= 1, name
        assert abs(unc[name] - mc["data_uncompressed_bytes"]) <= 1, name
        assert abs(marks.get(name, 0) - mc["marks_bytes"]) <= 1, name
    # and the rows behind them are exact
    rows = {r.name: r for r in view.rows}
    for name, mc in mcols.items():
        assert (rows[name].compressed, rows[name].uncompressed, rows[name].marks) == \
            (mc["data_compressed_bytes"], mc["data_uncompressed_bytes"], mc["marks_bytes"])
    # sorted by compressed size, largest at the top
    sizes = [r.compressed for r in view.shown]
    assert sizes == sorted(sizes, reverse=True)
    shot(view, artifacts_dir, f"columns_{table}")


def test_ratio_and_codec_written_on_bars(view, manifest):
    view.set_target("fx.codecs")
    mcols = {c["name"]: c for c in manifest["tables"]["codecs"]["system_columns"]}
    labels = dict(zip([r.name for r in view.shown], view.bar_labels))
    for name in ("s_zstd9", "u64_t64_zstd", "ts", "s_none"):
        mc = mcols[name]
        codec = mc["compression_codec"][6:-1]
        assert codec in labels[name]
        ratio = mc["data_uncompressed_bytes"] / mc["data_compressed_bytes"]
        assert f"×{ratio:.2f}" in labels[name]
    # a column without a declared codec names the codec its blocks use
    assert "default LZ4" in labels["s_default"]


def test_part_mode_equals_system_parts_columns(view, manifest, artifacts_dir):
    mt = manifest["tables"]["seed_nq_u1000"]
    part = mt["system_parts"][0]["name"]
    view.set_target(f"fx.seed_nq_u1000@{part}")
    assert view.mode == "part" and view.scope_key == part
    rows = {r.name: r for r in view.rows}
    mpc = [c for c in mt["system_parts_columns"] if c["part_name"] == part]
    assert sorted(rows) == sorted(c["column"] for c in mpc)
    for c in mpc:
        r = rows[c["column"]]
        assert r.compressed == c["column_data_compressed_bytes"]
        assert r.uncompressed == c["column_data_uncompressed_bytes"]
        assert r.marks == c["column_marks_bytes"]
    assert part in view.heading.text()
    shot(view, artifacts_dir, "columns_part")


def test_partition_mode_sums_the_partition(view, manifest, ds, artifacts_dir):
    mt = manifest["tables"]["seed_unmerged"]
    pid = "202401"
    view.set_target(f"fx.seed_unmerged@partition:{pid}")
    assert view.mode == "partition"
    parts = [p for p in mt["system_parts"] if p["partition_id"] == pid and p["active"] == 1]
    assert len(parts) > 1
    assert f"{len(parts)} active parts" in view.heading.text()
    # the partition's total is the engine's sum of its parts' data_compressed_bytes
    # (compact parts: engine per-column 0, the computed split adds up to data.bin)
    assert sum(r.compressed for r in view.rows) == sum(p["data_compressed_bytes"] for p in parts)
    assert sum(r.uncompressed for r in view.rows) == sum(p["data_uncompressed_bytes"] for p in parts)
    wide = {p["name"] for p in parts if p["part_type"] == "Wide"}
    for r in view.rows:
        engine = sum(c["column_data_compressed_bytes"] for c in mt["system_parts_columns"]
                     if c["part_name"] in wide and c["column"] == r.name)
        assert r.compressed - r.computed_bytes == engine
    assert drawn(view, "computed") and drawn(view, "compressed")      # both kinds of bar drawn
    assert view.note.isVisibleTo(view)
    shot(view, artifacts_dir, "columns_partition")


def test_compact_part_shows_computed_sizes_and_says_engine_reports_zero(view, manifest, artifacts_dir):
    mt = manifest["tables"]["compact_default"]
    view.set_target("fx.compact_default")
    assert all(c["data_compressed_bytes"] == 0 for c in mt["system_columns"])   # what the engine says
    assert view.note.isVisibleTo(view)
    assert "reports 0" in view.note.text()
    comp = drawn(view, "computed")
    assert sorted(comp) == sorted(c["name"] for c in mt["system_columns"])
    assert "compressed" not in view.bar_graphs      # no engine-reported bar for a compact-only table
    part = mt["system_parts"][0]
    assert sum(r.compressed for r in view.rows) == part["data_compressed_bytes"]
    assert sum(r.uncompressed for r in view.rows) == part["data_uncompressed_bytes"]
    assert all(r.computed and r.compressed > 0 for r in view.rows)
    shot(view, artifacts_dir, "columns_compact")


# -- histogram -----------------------------------------------------------------------------

@pytest.mark.parametrize("column", ["s_zstd9", "n_str", "arr_str", "id"])
def test_histogram_counts_the_columns_blocks(view, manifest, column, artifacts_dir):
    view.set_target(f"fx.codecs.{column}")
    assert view.column == column
    blocks = sum(sum(r["codec_block_counts"].values()) for r in manifest["tables"]["codecs"]["codec_block_counts"]
                 if r["column"] == column)
    assert int(view.hist_counts.sum()) == blocks
    all_blocks = sum(sum(r["codec_block_counts"].values())
                     for r in manifest["tables"]["codecs"]["codec_block_counts"])
    assert int(view.hist_all.sum()) <= all_blocks       # shared Nested streams counted once
    assert int(view.hist_all.sum()) == sum(r.blocks for r in view.rows)
    if column == "s_zstd9":
        shot(view, artifacts_dir, "columns_codecs_s_zstd9")


def test_histogram_of_a_compact_column(view, ds):
    view.set_target("fx.compact_default.name")
    t = next(t for t in ds.sections["clickhouse"]["tables"] if t["table"] == "compact_default")
    c = next(c for c in t["parts"][0]["columns"] if c["name"] == "name")
    assert int(view.hist_counts.sum()) == c["computed"]["blocks"]


def test_click_on_a_bar_selects_the_column(view, qtbot):
    view.set_target("fx.codecs")
    target = view.shown[3].name
    vb = view.plot.getViewBox()
    y = len(view.shown) - 1 - 3
    scene_pt = vb.mapViewToScene(QPointF(0.5, y))
    pt = view.glw.mapFromScene(scene_pt)
    qtbot.mouseClick(view.glw.viewport(), Qt.LeftButton, pos=pt)
    qtbot.waitUntil(lambda: view.column == target, timeout=2000)
    assert view.column_combo.currentData() == target


# -- tree selection ------------------------------------------------------------------------

def test_select_node_table_part_and_column(view, root):
    tnode = table_node(root, "fx", "seed_nq_mostly1")
    view.select_node(tnode)
    assert view.table["table"] == "seed_nq_mostly1" and view.mode == "table"
    part = next(c for c in tnode.children if c.kind == "part")
    view.select_node(part)
    assert view.mode == "part" and view.scope_key == part.name
    cnode = table_node(root, "fx", "codecs")
    part = next(c for c in cnode.children if c.kind == "part")
    f = next(c for c in part.children if c.kind == "file" and c.name == "s_lz4.bin")
    view.select_node(f)
    assert view.table["table"] == "codecs" and view.mode == "part" and view.scope_key == part.name
    assert view.column == "s_lz4"
    assert view.stack.currentIndex() == 0


# -- treemap -------------------------------------------------------------------------------

def test_squarify_areas_are_proportional():
    rnd = random.Random(7)
    for _ in range(30):
        vals = sorted((rnd.random() ** 3 * 1000 + 0.01 for _ in range(rnd.randint(1, 40))), reverse=True)
        w, h = rnd.uniform(50, 900), rnd.uniform(50, 700)
        rects = squarify(vals, 10, 20, w, h)
        total = sum(vals)
        for v, r in zip(vals, rects):
            assert r.width() * r.height() == pytest.approx(v / total * w * h, rel=1e-6)
            assert r.left() >= 10 - 1e-6 and r.top() >= 20 - 1e-6
            assert r.right() <= 10 + w + 1e-6 and r.bottom() <= 20 + h + 1e-6
        for i in range(len(rects)):
            for j in range(i + 1, len(rects)):
                inter = rects[i].intersected(rects[j])
                assert inter.width() * inter.height() < 1e-6
    # zeros get nothing, order is kept
    rects = squarify([5, 0, 3], 0, 0, 100, 100)
    assert rects[1].width() * rects[1].height() == 0


def test_treemap_areas_proportional_and_equal_system_columns(view, manifest, artifacts_dir, qtbot):
    view.set_target("treemap")
    assert view.stack.currentWidget() is view.tree_page
    qtbot.wait(10)
    item: TreemapItem = view.treemap.item
    assert item.leaf_rects
    # every leaf is a column sized by compressed bytes (system.columns for wide tables)
    leaves = {(b.payload[1], b.payload[2]): (b, r) for b, r in item.leaf_rects}
    for c in manifest["tables"]["codecs"]["system_columns"]:
        b, _ = leaves[("fx.codecs", c["name"])]
        assert b.value == c["data_compressed_bytes"]
    # within each table, leaf areas are proportional to their values and fill its inner box
    groups = {b.payload: (b, r) for b, r, d in item.group_rects if b.payload[0] == "table"}
    assert len(groups) == len(manifest["tables"])
    checked = 0
    for payload, (tb, outer) in groups.items():
        kids = [(b, r) for b, r in item.leaf_rects if b.payload[1] == payload[1]]
        if len(kids) < 2:
            continue
        dens = [r.width() * r.height() / b.value for b, r in kids]
        assert max(dens) == pytest.approx(min(dens), rel=1e-6)
        checked += 1
    assert checked >= 10
    # tables within the database: outer boxes proportional to their totals
    tdens = [r.width() * r.height() / b.total for b, r in groups.values()]
    assert max(tdens) == pytest.approx(min(tdens), rel=1e-6)
    shot(view, artifacts_dir, "treemap")


def test_treemap_tooltips_and_click(view, root, qtbot):
    view.set_target("treemap")
    qtbot.wait(10)
    item = view.treemap.item
    box, rect = max(item.leaf_rects, key=lambda br: br[1].width() * br[1].height())
    tips = [c.toolTip() for c in item.childItems() if c.toolTip() and c.data(0) == box.payload]
    assert tips and box.payload[2] in tips[0] and "compressed" in tips[0]
    with qtbot.waitSignal(view.node_selected, timeout=2000) as sig:
        pt = view.treemap.mapFromScene(item.mapToScene(rect.center()))
        qtbot.mouseClick(view.treemap.viewport(), Qt.LeftButton, pos=pt)
    node = sig.args[0]
    db, table = box.payload[1].split(".", 1)
    assert node.kind == "table" and node.name == table and node.parent.name == db
    assert view.stack.currentIndex() == 0 and view.column == box.payload[2]


def test_treemap_labels_fit_their_boxes(view, qtbot):
    from PySide6.QtWidgets import QGraphicsSimpleTextItem
    view.set_target("treemap")
    qtbot.wait(10)
    item = view.treemap.item
    texts = [c for c in item.childItems() if isinstance(c, QGraphicsSimpleTextItem)]
    assert len(texts) > 30
    boxes = [r for _, r in item.leaf_rects] + [r for _, r, _ in item.group_rects]
    for t in texts:
        tr = t.mapRectToParent(t.boundingRect())
        assert any(r.adjusted(-0.5, -0.5, 0.5, 0.5).contains(tr) for r in boxes), t.text()


def test_treemap_item_in_a_bare_scene():
    from PySide6.QtWidgets import QGraphicsScene
    scene = QGraphicsScene()
    item = TreemapItem()
    scene.addItem(item)
    item.set_rect(QRectF(0, 0, 300, 200))
    item.set_tree(TreeBox("r", children=[TreeBox("a", children=[TreeBox("x", 3), TreeBox("y", 1)]),
                                         TreeBox("b", children=[TreeBox("z", 4)])]))
    assert len(item.leaf_rects) == 3
    assert item.payload_at(QPointF(-5, -5)) is None


def test_treemap_tree_model(ds):
    tree = treemap_tree(ds)
    assert [d.name for d in tree.children] == ["fx"]
    tables = {t.name: t for t in tree.children[0].children}
    t = next(t for t in ds.sections["clickhouse"]["tables"] if t["table"] == "codecs")
    assert tables["codecs"].total == sum(r.compressed for r in column_rows(ds, t))


# -- export and edge cases ---------------------------------------------------------------------

def test_export_png_and_svg(view, tmp_path):
    from PySide6.QtGui import QImage
    view.set_target("fx.codecs.s_zstd9")
    png, svg = tmp_path / "c.png", tmp_path / "c.svg"
    assert export_png(view.export_widget(), str(png))
    img = QImage(str(png))
    assert img.width() >= 1000 and img.height() >= 600
    assert export_svg(view.export_widget(), str(svg))
    import xml.etree.ElementTree as ET
    ET.parse(str(svg))
    view.set_target("treemap")
    assert export_svg(view.export_widget(), str(svg))
    ET.parse(str(svg))


def test_unknown_target_and_no_clickhouse(view, qtbot, sparse_fixtures):
    with pytest.raises(KeyError):
        view.set_target("fx.nope")
    other = scan(str(sparse_fixtures / "tokudb" / "datadir"))
    v = ColumnSizesView()
    qtbot.addWidget(v)
    v.set_dataset(other, build_tree(other))
    assert "No ClickHouse" in v.heading.text()
    v.select_node(build_tree(other))       # nothing to show, no error


def test_small_window_sums_the_smallest_columns(view, manifest, qtbot):
    view.set_target("fx.codecs")
    view.resize(900, 520)
    qtbot.waitUntil(lambda: any(r.name.startswith("(") for r in view.shown), timeout=3000)
    mcols = {c["name"]: c for c in manifest["tables"]["codecs"]["system_columns"]}
    other = view.shown[-1]
    named = [r.name for r in view.shown[:-1]]
    rest = [n for n in mcols if n not in named]
    assert other.name == f"({len(rest)} smaller columns)"
    assert other.compressed == sum(mcols[n]["data_compressed_bytes"] for n in rest)
    assert max(mcols[n]["data_compressed_bytes"] for n in rest) <= min(r.compressed for r in view.shown[:-1])
    # the selected column keeps its own bar even when small
    view.select_column("d")
    assert "d" in [r.name for r in view.shown]


def test_full_view_screenshot(view, artifacts_dir):
    from dbxray.viz.export import export_png as ep
    view.set_target("fx.seed_unmerged")
    settle()
    assert ep(view, str(artifacts_dir / "columns_view.png"))


def test_in_the_window_treemap_click_keeps_the_column(qtbot, sparse_fixtures):
    """Treemap click -> node_selected -> the window selects the table in the tree ->
    select_node(table) comes back: the picked column must survive the round trip."""
    import tempfile

    from PySide6.QtCore import QSettings

    from dbxray.app.treemodel import NODE_ROLE
    from dbxray.app.window import MainWindow
    s = QSettings(tempfile.mktemp(suffix=".ini"), QSettings.IniFormat)
    w = MainWindow(s)
    qtbot.addWidget(w)
    w.show()
    w.open_path(str(sparse_fixtures / "clickhouse" / "datadir"))
    assert w.wait_idle(120000)
    view = next(v for v in w.views if isinstance(v, ColumnSizesView))
    w.tabs.setCurrentWidget(view)
    view.show_treemap()
    qtbot.wait(50)
    box = next(b for b, _ in view.treemap.item.leaf_rects if b.payload[1] == "fx.codecs" and b.payload[2] == "s_zstd9")
    view._on_treemap_click(box.payload)
    qtbot.wait(20)
    cur = w.model.data(w.tree.currentIndex(), NODE_ROLE)
    assert cur.kind == "table" and cur.name == "codecs"
    assert view.column == "s_zstd9" and view.table["table"] == "codecs"


def test_saved_scan_bars_without_block_sizes(qtbot, ds, tmp_path, manifest):
    from dbxray.parsers.savedscan import load_saved_scan
    p = tmp_path / "scan.dbxray.json"
    p.write_text(json.dumps(ds.to_json()))
    saved = load_saved_scan(str(p))
    v = ColumnSizesView()
    qtbot.addWidget(v)
    v.resize(W, H)
    v.show()
    v.set_dataset(saved, build_tree(saved))
    v.set_target("fx.codecs.s_zstd9")
    rows = {r.name: r for r in v.rows}
    for c in manifest["tables"]["codecs"]["system_columns"]:
        assert rows[c["name"]].compressed == c["data_compressed_bytes"]
    # no block sizes in a saved scan: the histogram is the JSON's, as many blocks as the codecs count
    blocks = sum(sum(r["codec_block_counts"].values()) for r in manifest["tables"]["codecs"]["codec_block_counts"]
                 if r["column"] == "s_zstd9")
    assert int(v.hist_counts.sum()) == blocks
    assert "median in" in v.hist.titleLabel.text


def test_report_targets(view):
    targets = view.report_targets()
    assert ("Column treemap", "treemap") in targets
    for _, t in targets:
        view.set_target(t)


def test_treemap_outlines_the_current_table_or_column(view, qtbot, artifacts_dir):
    view.set_target("fx.codecs.s_none")
    view.set_target("treemap")
    settle()
    item = view.treemap.item
    assert item.highlight == ("column", "fx.codecs", "s_none")
    hl = item._hl_item
    leaf = next(r for b, r in item.leaf_rects if b.payload == item.highlight)
    assert hl is not None and leaf.contains(hl.rect().center())
    shot(view, artifacts_dir, "treemap_selected")
    view.set_target("fx.seed_nq_u1m")
    assert item.highlight == ("table", "fx.seed_nq_u1m", None)


def test_cli_export_columns(sparse_fixtures, tmp_path, qapp):
    from PySide6.QtGui import QImage

    from dbxray.app.cli import main
    png, svg = tmp_path / "cols.png", tmp_path / "tree.svg"
    ch = str(sparse_fixtures / "clickhouse" / "datadir")
    assert main(["export", ch, "--view", "columns", "--target", "fx.codecs.s_zstd9", "-o", str(png)]) == 0
    assert QImage(str(png)).width() == 1400
    assert main(["export", ch, "--view", "columns", "--target", "treemap", "-o", str(svg)]) == 0
    import xml.etree.ElementTree as ET
    ET.parse(str(svg))
    assert main(["export", ch, "--view", "columns", "--target", "fx.nope", "-o", str(png)]) == 2


def test_bar_click_selects_the_columns_file_in_the_tree(view, qtbot, manifest):
    part = manifest["tables"]["codecs"]["system_parts"][0]["name"]
    view.set_target(f"fx.codecs@{part}")
    i = next(i for i, r in enumerate(view.shown) if r.name == "s_lz4")
    vb = view.plot.getViewBox()
    pt = view.glw.mapFromScene(vb.mapViewToScene(QPointF(0.5, len(view.shown) - 1 - i)))
    with qtbot.waitSignal(view.node_selected, timeout=2000) as sig:
        qtbot.mouseClick(view.glw.viewport(), Qt.LeftButton, pos=pt)
    node = sig.args[0]
    assert node.kind == "file" and node.name == "s_lz4.bin" and node.parent.name == part
    # the window hands the node back: nothing changes
    view.select_node(node)
    assert view.column == "s_lz4" and view.mode == "part" and view.scope_key == part


@pytest.mark.parametrize("column", ["s_zstd9", "n_str", "id"])
def test_saved_scan_histogram_equals_the_live_one(qtbot, ds, sparse_fixtures, tmp_path, column, artifacts_dir):
    """A saved scan has no block sizes, only the JSON's per-part power-of-two
    histograms: the view sums those, and gets the live scan's counts on the same bins."""
    from dbxray.app.cli import main as cli_main
    from dbxray.parsers.savedscan import load_saved_scan
    from dbxray.viz.columns import block_histogram
    out = tmp_path / "ch.dbxray.json"
    # --full: the histograms come from the block walk, which the default scan leaves out
    assert cli_main(["scan", str(sparse_fixtures / "clickhouse" / "datadir"), "--full", "-o", str(out)]) == 0
    saved = load_saved_scan(str(out))
    live = ColumnSizesView()
    qtbot.addWidget(live)
    live.resize(W, H)
    live.set_dataset(ds, build_tree(ds))
    live.set_target(f"fx.codecs.{column}")
    v = ColumnSizesView()
    qtbot.addWidget(v)
    v.resize(W, H)
    v.show()
    v.set_dataset(saved, build_tree(saved))
    v.set_target(f"fx.codecs.{column}")
    assert len(v.hist_edges) >= 7 and v.hist_counts.sum() > 0
    sel = next(r for r in live.rows if r.name == column)
    sizes = np.concatenate(sel.block_sizes)
    assert v.hist_counts.tolist() == block_histogram(sizes, v.hist_edges).tolist()
    all_sizes = np.concatenate([b for r in live.rows for b in r.block_sizes])
    assert v.hist_all.tolist() == block_histogram(all_sizes, v.hist_edges).tolist()
    assert "median in" in v.hist.titleLabel.text
    if column == "s_zstd9":
        shot(v, artifacts_dir, "columns_saved_scan_histogram")

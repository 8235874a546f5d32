"""TokuDB view on the real PerconaFT fixture scan: the bars are what the
engine's own tools say (manifest tokuftdump_summary, tokuftdump_fragmentation,
the header estimates information_schema reports, final_logical_content), the
block strip is the translation table.  Screenshots go to artifacts/."""
from __future__ import annotations

import json
import posixpath

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt

from dbxray.parsers.scan import scan
from dbxray.parsers.tree import build_tree
from dbxray.viz.export import export_png, export_svg
from dbxray.viz.tokudb import TableRow, TokuDBView, block_at, dictionaries, strip_blocks

W, H = 1400, 860


@pytest.fixture(scope="module")
def manifest(fixtures_root):
    m = json.loads((fixtures_root / "tokudb" / "manifest.json").read_text())
    return {posixpath.basename(f["path"]): f for f in m["files"]}


@pytest.fixture(scope="module")
def ds(sparse_fixtures):
    return scan(str(sparse_fixtures / "tokudb" / "datadir"))


@pytest.fixture(scope="module")
def root(ds):
    return build_tree(ds)


@pytest.fixture
def view(qtbot, ds, root):
    v = TokuDBView()
    qtbot.addWidget(v)
    v.resize(W, H)
    v.show()
    v.set_dataset(ds, root)
    qtbot.wait(10)
    return v


def settle():
    from dbxray.app.headless import settle as _settle
    _settle()


def row_values(view):
    """{row label: {reported, uncompressed, disk}} as drawn in the footprint chart."""
    bv = view.bar_values
    out = {}
    for i, r in enumerate(view.footprint_rows):
        key = r.key if isinstance(r, TableRow) else r.path
        out[key] = {k: int(bv[k][i]) for k in ("reported", "uncompressed", "disk", "allocated")}
    return out


def drawn_widths(view):
    """Widths of the three footprint bar items, back in bytes."""
    from pyqtgraph import BarGraphItem
    items = [it for it in view.foot.items if isinstance(it, BarGraphItem) and len(it.opts["width"]) > 1]
    return [np.asarray(it.opts["width"], dtype=float) for it in items]


DICTS = [n for n in (
    "_fx_orders_main_5_1_1d_B_0.tokudb", "_fx_orders_key_idx_status_6_1_1d_B_0.tokudb",
    "_fx_orders_status_4_1_1d.tokudb", "_fx_events_main_8_1_1d.tokudb", "_fx_events_key_idx_user_9_1_1d.tokudb",
    "_fx_events_status_a_1_1d.tokudb", "_fx_blobs_main_178_1_1d.tokudb", "_fx_blobs_key_idx_kind_179_1_1d.tokudb",
    "_fx_blobs_status_17a_1_1d.tokudb")]


def test_every_dictionary_has_a_row_equal_to_tokuftdump(view, manifest, artifacts_dir):
    vals = row_values(view)
    for name in DICTS:
        m = manifest[name]
        v = vals[name]
        s = m["tokuftdump_summary"]
        assert v["disk"] == s["total_size"], name
        assert v["uncompressed"] == s["total_uncompressed_size"], name
        # what information_schema adds up: the header's logical estimate (stat64 bt_dsize)
        assert v["reported"] == m["engine_header"]["on_disk_numbytes"], name
    # bulk-loaded dictionaries: the estimate is exactly the live logical content
    for name in ("_fx_orders_main_5_1_1d_B_0.tokudb", "_fx_orders_key_idx_status_6_1_1d_B_0.tokudb"):
        fl = manifest[name]["final_logical_content"]
        assert vals[name]["reported"] == fl["key_bytes"] + fl["val_bytes"]
    settle()
    assert export_png(view.export_widget(), str(artifacts_dir / "tokudb.png"))


def test_drawn_bar_widths_are_the_values(view):
    widths = drawn_widths(view)
    assert len(widths) == 3
    from dbxray.parsers.humanize import axis_unit as _unit
    bv = view.bar_values
    scale, _ = _unit(max(bv["reported"].max(), bv["uncompressed"].max(), bv["disk"].max(), bv["allocated"].max()))
    for w, key in zip(widths, ("reported", "uncompressed", "disk")):
        assert np.allclose(w * scale, bv[key])


def test_table_rows_show_the_gap(view, ds, manifest):
    vals = row_values(view)
    o = vals["fx.orders"]
    main, key = manifest[DICTS[0]], manifest[DICTS[1]]
    assert o["reported"] == main["engine_header"]["on_disk_numbytes"] + key["engine_header"]["on_disk_numbytes"]
    assert o["disk"] == sum(manifest[n]["tokuftdump_summary"]["total_size"] for n in DICTS[:3])
    t = next(t for t in ds.tables if t.key == "fx.orders")
    assert o["allocated"] == t.info["allocated_bytes"]
    # the user's point: reported (uncompressed) is well above what is on disk, and the view says so
    assert o["reported"] > 1.3 * o["disk"]
    labels = dict(zip([r.key if isinstance(r, TableRow) else r.path for r in view.footprint_rows], view.foot_labels))
    assert "reported" in labels["fx.orders"] and "on disk" in labels["fx.orders"]
    assert "not in SHOW TABLE STATUS" in labels[DICTS[2]]
    assert "overstates" in view.heading.text()


def test_per_height_equals_tokuftdump_summary(view, manifest, artifacts_dir):
    for name in ("_fx_events_main_8_1_1d.tokudb", "_fx_orders_main_5_1_1d_B_0.tokudb"):
        view.set_target(name)
        ph = manifest[name]["tokuftdump_summary"]["per_height"]
        assert sorted(view.height_values) == sorted(int(h) for h in ph)
        for h, m in ph.items():
            v = view.height_values[int(h)]
            assert (v["nodes"], v["disk_bytes"], v["uncompressed_bytes"]) == \
                (m["nodes"], m["disksize"], m["uncompressed_size"]), (name, h)
            if int(h) > 0:
                assert v["entries"] == m["msg_cnt"], (name, h)      # messages buffered in internal nodes
    view.set_target("_fx_events_main_8_1_1d.tokudb")
    settle()
    assert export_png(view.export_widget(), str(artifacts_dir / "tokudb_file.png"))


def test_fragmentation_equals_tokuftdump(view, manifest):
    view.set_target("")
    rows = {d.path: d for d in view.frag_rows}
    assert sorted(rows) == sorted(DICTS)
    for name in DICTS:
        f = manifest[name]["tokuftdump_fragmentation"]
        d = rows[name]
        assert d.used == f["used_size"] and d.unused == f["fragsizes"], name
        assert d.used + d.unused + d.tail == manifest[name]["apparent_size"]


def test_block_strip_is_the_translation_table(view, manifest, ds):
    name = "_fx_events_main_8_1_1d.tokudb"
    view.set_target(name)
    d = view.strip_rows[0]
    assert len(view.strip_rows) == 1 and d.path == name
    rows = manifest[name]["tokuftdump_translation_table"]["rows"]
    used = [r for r in rows if r[2] > 0]
    blocks = strip_blocks(d)
    counted = sum(len(blocks[k][0]) for k in blocks if k != "header")
    assert counted == len(used)
    assert sum(view.strip_counts.get(k, 0) for k in view.strip_counts if k != "header") == len(used)
    s = manifest[name]["tokuftdump_summary"]
    assert len(blocks["h0"][0]) == s["leaf_nodes"]
    assert len(blocks["h1"][0]) + len(blocks["h2"][0]) == s["nonleaf_nodes"]
    got = sorted((int(o), int(z)) for k in blocks if k != "header" for o, z in zip(*blocks[k]))
    assert got == sorted((r[1], r[2]) for r in used)
    # hover text for a known block: the root of the orders main tree
    om = next(x for x in dictionaries(ds) if x.path == DICTS[0])
    assert block_at(om, 8192).startswith("block 3: leaf node")
    assert "translation table" in block_at(om, 6959104 + 10)


def test_hover_sets_a_tooltip(view, qtbot):
    view.set_target("_fx_orders_main_5_1_1d_B_0.tokudb")
    vb = view.strip.getViewBox()
    scene_pt = vb.mapViewToScene(QPointF(0.5, 0))       # 0.5 MiB into the file: leaf block 3
    view._on_move(scene_pt)
    assert "block 3" in view.glw.toolTip()


def test_select_node_and_click_row(view, root, qtbot, artifacts_dir):
    tnode = next(n for n in root.walk() if n.kind == "table" and n.name == "events")
    view.select_node(tnode)
    assert view.selection_key == "table:fx.events"
    assert {d.path for d in view.selected} == {n for n in DICTS if "_events_" in n}
    settle()
    assert export_png(view.export_widget(), str(artifacts_dir / "tokudb_table.png"))
    fnode = next(n for n in root.walk() if n.kind == "file" and n.path == DICTS[1])
    view.select_node(fnode)
    assert view.selection_key == f"file:{DICTS[1]}"
    # clicking a dictionary row selects it and tells the window
    i = next(i for i, r in enumerate(view.footprint_rows) if not isinstance(r, TableRow) and r.path == DICTS[6])
    vb = view.foot.getViewBox()
    y = len(view.footprint_rows) - 1 - i
    pt = view.glw.mapFromScene(vb.mapViewToScene(QPointF(0.1, y)))
    with qtbot.waitSignal(view.node_selected, timeout=2000) as sig:
        qtbot.mouseClick(view.glw.viewport(), Qt.LeftButton, pos=pt)
    assert sig.args[0].path == DICTS[6]
    assert view.selection_key == f"file:{DICTS[6]}"


def test_engine_files_selectable(view):
    view.set_target("tokudb.directory")
    assert view.selected[0].role == "directory"
    assert view.height_values[0]["nodes"] == 1


def test_export_svg_and_errors(view, tmp_path, qtbot, sparse_fixtures):
    import xml.etree.ElementTree as ET
    svg = tmp_path / "t.svg"
    assert export_svg(view.export_widget(), str(svg))
    ET.parse(str(svg))
    with pytest.raises(KeyError):
        view.set_target("fx.nope")
    other = scan(str(sparse_fixtures / "clickhouse" / "datadir"))
    v = TokuDBView()
    qtbot.addWidget(v)
    v.set_dataset(other, build_tree(other))
    assert "No TokuDB" in v.heading.text()


def test_full_view_screenshot(view, artifacts_dir):
    settle()
    assert export_png(view, str(artifacts_dir / "tokudb_view.png"))


def test_saved_scan_shows_what_the_json_holds(qtbot, ds, tmp_path, manifest):
    from dbxray.parsers.savedscan import load_saved_scan
    p = tmp_path / "scan.dbxray.json"
    p.write_text(json.dumps(ds.to_json()))
    saved = load_saved_scan(str(p))
    v = TokuDBView()
    qtbot.addWidget(v)
    v.resize(W, H)
    v.show()
    v.set_dataset(saved, build_tree(saved))
    vals = row_values(v)
    for name in DICTS:
        assert vals[name]["disk"] == manifest[name]["tokuftdump_summary"]["total_size"]
        assert vals[name]["uncompressed"] == manifest[name]["tokuftdump_summary"]["total_uncompressed_size"]
    assert "fx.orders" in vals
    v.set_target("_fx_orders_main_5_1_1d_B_0.tokudb")
    assert "saved scan" in v.strip.titleLabel.text


def test_report_targets(view):
    targets = view.report_targets()
    assert targets[0] == ("TokuDB: all tables", "all")
    assert [t for _, t in targets[1:]] == ["fx.blobs", "fx.events", "fx.orders"]
    for _, t in targets:
        view.set_target(t)


def test_cli_export_tokudb(sparse_fixtures, tmp_path, qapp):
    from PySide6.QtGui import QImage

    from dbxray.app.cli import main
    png = tmp_path / "t.png"
    tk = str(sparse_fixtures / "tokudb" / "datadir")
    assert main(["export", tk, "--view", "tokudb", "--target", "fx.orders", "-o", str(png)]) == 0
    assert QImage(str(png)).width() == 1400
    assert main(["export", tk, "--view", "tokudb", "--target", "nope", "-o", str(png)]) == 2


def test_saved_scan_reports_what_a_live_scan_reports(qtbot, ds, root, tmp_path, manifest):
    """The header estimates (what information_schema adds up) travel in the JSON:
    a saved and reopened scan shows the same 'reported' figures as the live scan."""
    from dbxray.parsers.savedscan import load_saved_scan
    from dbxray.viz.tokudb import table_rows
    p = tmp_path / "scan.dbxray.json"
    p.write_text(json.dumps(ds.to_json()))
    saved = load_saved_scan(str(p))
    sec = next(f for f in json.loads(p.read_text())["files"]
               if f["path"].endswith("_fx_orders_main_5_1_1d_B_0.tokudb"))["tokudb"]
    m = manifest["_fx_orders_main_5_1_1d_B_0.tokudb"]["engine_header"]
    assert sec["on_disk_numbytes"] == m["on_disk_numbytes"] and sec["on_disk_numrows"] == m["on_disk_numrows"]

    def facts(d):
        return {x.path: (x.reported, x.rows, x.disk_bytes, x.uncompressed_bytes, x.allocated) for x in dictionaries(d)}

    live_d, saved_d = facts(ds), facts(saved)
    assert saved_d == live_d
    assert all(v[0] is not None and v[0] > 0 for k, v in saved_d.items() if "_main_" in k)
    live_t = [(r.key, r.reported, r.data_length, r.index_length, r.rows, r.disk_bytes, r.allocated)
              for r in table_rows(ds, dictionaries(ds))]
    saved_t = [(r.key, r.reported, r.data_length, r.index_length, r.rows, r.disk_bytes, r.allocated)
               for r in table_rows(saved, dictionaries(saved))]
    assert saved_t == live_t and any(t[1] > 0 for t in saved_t)
    views = []
    for d, r in ((ds, root), (saved, build_tree(saved))):
        v = TokuDBView()
        qtbot.addWidget(v)
        v.resize(W, H)
        v.show()
        v.set_dataset(d, r)
        views.append(v)
    assert row_values(views[1]) == row_values(views[0])
    assert any(x["reported"] > 0 for x in row_values(views[1]).values())

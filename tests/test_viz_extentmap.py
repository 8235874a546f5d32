"""Extent map and page inspector on real widgets: real fixture scans (16k,
datadir16k, page-compressed t_pc_zlib, ROW_FORMAT=COMPRESSED t_zip4) and
hand-built units; tooltip facts checked against the fixtures' manifest."""
from __future__ import annotations

import json

import numpy as np
import pytest
from PySide6.QtCore import Qt

from dbxray.parsers.model import UNIT_FREE
from dbxray.parsers.scan import scan
from dbxray.parsers.tree import build_tree
from PySide6.QtGui import QColor

from synthetic_innodb import synthetic_dataset
from dbxray.viz import theme
from dbxray.viz.extentmap import MODES, ExtentMapView, MapData


def _settle(qtbot, view):
    qtbot.wait(30)


@pytest.fixture(scope="module")
def scanned16k(sparse_fixtures):
    ds = scan(str(sparse_fixtures / "innodb" / "16k"))
    return ds, build_tree(ds)


@pytest.fixture(scope="module")
def manifest(fixtures_root):
    return json.loads((fixtures_root / "innodb" / "manifest.json").read_text())


def _man_file(manifest, path):
    for f in manifest["files"]:
        if f["path"] == path:
            return f
    raise KeyError(path)


def _file_node(root, suffix):
    for n in root.walk():
        if n.kind == "file" and n.path and n.path.endswith(suffix):
            return n
    raise KeyError(suffix)


def _view(qtbot, ds, root, size=(1300, 950)):
    v = ExtentMapView()
    qtbot.addWidget(v)
    v.resize(*size)
    v.show()
    qtbot.waitExposed(v)
    v.set_dataset(ds, root)
    return v


# -- pure data (hand-built units) ------------------------------------------------------
def test_modes_on_synthetic_units_count_every_page():
    ds = synthetic_dataset(5000, compressed=True)
    d = MapData(ds.files[0])
    assert d.extent_pages == 64 and d.rows == 79 and d.contiguous
    for mode, _ in MODES:
        res = d.mode(mode)
        assert int(res.counts.sum()) == 5000, mode
        assert len(res.labels) == len(res.colours) == len(res.counts)
        img = d.rgba(res)
        assert img.shape == (79, 64, 4) and img.dtype == np.uint8
        # cells past the last page are transparent, pages are opaque
        assert img.reshape(-1, 4)[5000:, 3].max() == 0 and img.reshape(-1, 4)[:5000, 3].min() == 255
    t = d.mode("type")
    assert t.counts[t.labels.index("free (XDES)")] == int((ds.files[0].units["flags"] & UNIT_FREE != 0).sum())


def test_extent_size_follows_page_size():
    for page, ext in ((4096, 256), (8192, 128), (16384, 64), (32768, 64), (65536, 64)):
        ds = synthetic_dataset(300, page=page)
        assert MapData(ds.files[0]).extent_pages == ext


def test_highlight_on_synthetic(qtbot):
    ds = synthetic_dataset(4000)
    v = _view(qtbot, ds, build_tree(ds))
    owner = ds.files[0].units["owner"]
    assert v.highlight_index(41) == int((owner == 41).sum())
    v.set_mode("fill")                     # highlight survives a mode change
    assert v.highlighted_count() == int((owner == 41).sum())
    v.clear_highlight()
    assert v.highlighted_count() == 4000
    # legend click highlights a category
    v.set_mode("type")
    v.legend.selectRow(0)
    assert v.highlighted_count() == int(v.result.counts[v.legend.cats[0]])


# -- real scans ----------------------------------------------------------------------------
def test_every_mode_on_16k_with_screenshots(qtbot, scanned16k, artifacts_dir):
    ds, root = scanned16k
    v = _view(qtbot, ds, root)
    v.select_node(_file_node(root, "fx/t_deleted.ibd"))
    assert v.entry.path == "fx/t_deleted.ibd"
    assert v.data.extent_pages == 64 and v.data.n_pages == 576
    for mode, label in MODES:
        v.set_mode(mode)
        assert v.mode_combo.currentText() == label
        _settle(qtbot, v)
        assert int(v.result.counts.sum()) == 576
        assert v.legend.rowCount() >= 1
        img = v.grab()
        assert img.width() > 1000
        img.save(str(artifacts_dir / f"extentmap_{mode}.png"))
    # the combo box drives the same thing
    v.mode_combo.setCurrentIndex(0)
    assert v.mode_id == "type"
    v.set_mode("lsn")
    assert v.colorbar is not None
    v.set_mode("type")
    assert v.colorbar is None


def test_hover_page_compressed_page_matches_manifest(qtbot, scanned16k, manifest):
    ds, root = scanned16k
    v = _view(qtbot, ds, root)
    v.select_node(_file_node(root, "fx/t_pc_zlib.ibd"))
    mf = _man_file(manifest, "16k/fx/t_pc_zlib.ibd")
    pc = {p["page_no"]: p for p in mf["pages"]["page_compressed_pages"]}
    page = 4
    want = pc[page]
    _settle(qtbot, v)
    pos = v.page_center_in_widget(page)
    # move somewhere else first: a cursor already there (left by an earlier test) sends no move
    qtbot.mouseMove(v.glw.viewport(), pos + type(pos)(40, 40))
    qtbot.wait(20)      # consecutive moves with no event processing between are merged
    qtbot.mouseMove(v.glw.viewport(), pos)
    qtbot.waitUntil(lambda: v.hover_page == page, timeout=2000)
    tip = v.last_tooltip
    assert f"<b>Page {page}</b>" in tip
    assert want["original_page_type"].replace("FIL_PAGE_", "") in tip          # INDEX
    assert f"{want['payload_len']:,} B compressed" in tip                       # payload 5,020 B
    assert f"{want['stored_bytes']:,} B stored" in tip
    # allocated = page minus the punched tail, as the manifest's holes say
    hole = sum(max(0, min(o + n, (page + 1) * 16384) - max(o, page * 16384)) for o, n in mf["holes"])
    assert f"Allocated: {16384 - hole:,} B" in tip
    assert "index" in tip.lower() and "level 0" in tip
    # every page-compressed page: tooltip payload is the manifest's
    for p in list(pc)[:8]:
        assert f"{pc[p]['payload_len']:,} B compressed" in v.page_tooltip(p)


def test_click_page_opens_inspector_and_selects_index(qtbot, scanned16k, artifacts_dir):
    ds, root = scanned16k
    v = _view(qtbot, ds, root)
    fnode = _file_node(root, "fx/t_pc_zlib.ibd")
    v.select_node(fnode)
    _settle(qtbot, v)
    with qtbot.waitSignal(v.node_selected, timeout=2000) as sig:
        qtbot.mouseClick(v.glw.viewport(), Qt.LeftButton, pos=v.page_center_in_widget(4))
    node = sig.args[0]
    assert node.kind == "index" and node.parent is fnode
    assert v.selected_page == 4
    insp = v.inspector
    assert insp.page_no == 4
    assert insp.field_value("FIL_PAGE_OFFSET") == "4"
    assert insp.field_value("FIL_PAGE_TYPE") == "FIL_PAGE_INDEX"
    assert "page_compressed" in insp.note.text() and "5,020 B payload" in insp.note.text()
    # decompressed logical page with the INDEX regions
    assert len(insp.decoded.data) == 16384
    assert insp.hex.region_at(0) == "FIL header"
    assert insp.hex.region_at(40) == "page header"
    assert insp.hex.region_at(200) == "records"
    assert insp.hex.region_at(16380) == "FIL trailer"
    assert int(insp.field_value("PAGE_INDEX_ID").replace(",", "")) == node.ref["index_id"]
    v.grab().save(str(artifacts_dir / "extentmap_inspector.png"))
    # the inspector lives in the window's dock; here it stands alone, so give it a size first
    if not insp.isVisible():
        insp.resize(1100, 900)
        insp.show()
        qtbot.waitExposed(insp)
    insp.grab().save(str(artifacts_dir / "pageinspector.png"))


def test_select_index_highlights_its_pages(qtbot, scanned16k, artifacts_dir):
    ds, root = scanned16k
    v = _view(qtbot, ds, root)
    checked = 0
    for n in root.walk():
        if n.kind == "index" and n.parent.ref.engine == "innodb":
            v.select_node(n)
            assert v.entry is n.parent.ref
            total = v.highlighted_count()
            assert v.highlighted_btree_count() == n.ref["pages"], (n.parent.path, n.name)
            assert total >= n.ref["pages"]
            checked += 1
    assert checked >= 20
    v.select_node(_file_node(root, "fx/t_blob.ibd"))
    idx = [c for c in _file_node(root, "fx/t_blob.ibd").children if c.kind == "index"]
    v.select_node(max(idx, key=lambda c: c.ref["pages"]))
    _settle(qtbot, v)
    v.grab().save(str(artifacts_dir / "extentmap_highlight_index.png"))
    v.select_node(_file_node(root, "fx/t_blob.ibd"))
    assert v.highlighted_count() == len(v.data.units)


def test_table_with_several_files_offers_a_file_selector(qtbot, scanned16k):
    ds, root = scanned16k
    v = _view(qtbot, ds, root)
    table = next(n for n in root.walk() if n.kind == "table" and n.name == "t_part")
    v.select_node(table)
    assert v.file_combo.count() == len([c for c in table.children if c.kind == "file"]) >= 5
    assert v.file_combo.isEnabled()
    v.file_combo.setCurrentIndex(2)
    assert v.entry is v.files[2]
    db = next(n for n in root.walk() if n.kind == "database")
    v.select_node(db)
    assert v.file_combo.count() > 10


def test_a_long_file_list_is_a_list_model_with_the_same_items(qtbot, scanned16k, monkeypatch):
    from dbxray.viz import extentmap as em
    ds, root = scanned16k
    v = _view(qtbot, ds, root)
    db = next(n for n in root.walk() if n.kind == "database")
    v.select_node(db)
    short = [(v.file_combo.itemText(i), v.file_combo.itemData(i)) for i in range(v.file_combo.count())]
    assert len(short) > 10 and not isinstance(v.file_combo.model(), em.FileListModel)
    monkeypatch.setattr(em, "COMBO_ITEMS_MAX", 3)
    v.select_node(next(n for n in root.walk() if n.kind == "table" and n.name == "t_part"))
    v.select_node(db)
    assert isinstance(v.file_combo.model(), em.FileListModel)
    assert [(v.file_combo.itemText(i), v.file_combo.itemData(i)) for i in range(v.file_combo.count())] == short
    v.file_combo.setCurrentIndex(4)
    assert v.entry is v.files[4]
    monkeypatch.setattr(em, "COMBO_ITEMS_MAX", 2000)
    v.select_node(next(n for n in root.walk() if n.kind == "table" and n.name == "t_part"))
    assert not isinstance(v.file_combo.model(), em.FileListModel) and v.file_combo.count() >= 5


def test_datadir16k_and_zip4(qtbot, sparse_fixtures, artifacts_dir, manifest):
    ds = scan(str(sparse_fixtures / "innodb" / "datadir16k"))
    root = build_tree(ds)
    v = _view(qtbot, ds, root)
    v.select_node(_file_node(root, "ibdata1"))
    assert v.data.n_pages == 640
    v.set_mode("type")
    _settle(qtbot, v)
    v.grab().save(str(artifacts_dir / "extentmap_ibdata1.png"))
    assert {"FSP_HDR", "TRX_SYS", "SYS", "INDEX"} <= set(v.result.labels)
    v.set_mode("index")
    _settle(qtbot, v)
    v.grab().save(str(artifacts_dir / "extentmap_ibdata1_index.png"))
    # the change buffer's index id does not fit an int32: its pages are still an index, named
    assert "innodb_change_buffer.CLUST_IND" in v.result.labels
    assert v.result.labels[-2:] == ["no index (file / system pages)", "free (XDES)"]
    big = next(n for n in _file_node(root, "ibdata1").children if n.kind == "index" and n.ref["index_id"] >= 2 ** 32)
    code = v.data.owner_code(big.ref["index_id"])
    page = int(np.nonzero(v.data.units["owner"] == code)[0][0])
    assert "innodb_change_buffer.CLUST_IND" in v.page_tooltip(page)
    with qtbot.waitSignal(v.node_selected, timeout=2000) as sig:
        v.click_page(page)
    assert sig.args[0] is big
    # clicking a page of an index of ibdata1 (ids >= 2**31 too) finds its tree node
    for n in _file_node(root, "ibdata1").children:
        if n.kind == "index" and n.ref["pages"]:
            v.select_node(n)
            assert v.highlighted_btree_count() == n.ref["pages"]

    ds4 = scan(str(sparse_fixtures / "innodb" / "16k" / "fx" / "t_zip4.ibd"))
    root4 = build_tree(ds4)
    v4 = _view(qtbot, ds4, root4)
    assert v4.data.physical == 4096 and v4.data.logical == 16384 and v4.data.extent_pages == 64
    mf = _man_file(manifest, "16k/fx/t_zip4.ibd")
    assert v4.data.n_pages == mf["apparent_size"] // 4096
    for mode, _ in MODES:
        v4.set_mode(mode)
        assert int(v4.result.counts.sum()) == v4.data.n_pages
    v4.set_mode("compression")
    _settle(qtbot, v4)
    v4.grab().save(str(artifacts_dir / "extentmap_zip4_compression.png"))
    v4.set_mode("type")
    v4.grab().save(str(artifacts_dir / "extentmap_zip4_type.png"))
    assert "compressed to 4 KiB" in v4.plot.titleLabel.text


def test_allocation_mode_on_page_compressed(qtbot, scanned16k, artifacts_dir):
    ds, root = scanned16k
    v = _view(qtbot, ds, root)
    v.select_node(_file_node(root, "fx/t_pc_zlib.ibd"))
    v.set_mode("allocation")
    res = v.result
    punched = res.counts[res.labels.index("hole punched in page")]
    assert punched >= 15 and res.counts[res.labels.index("hole missing (should be punched)")] == 0
    _settle(qtbot, v)
    v.grab().save(str(artifacts_dir / "extentmap_pc_allocation.png"))
    v.set_mode("compression")
    v.grab().save(str(artifacts_dir / "extentmap_pc_compression.png"))


def test_large_synthetic_map_windowing(qtbot):
    ds = synthetic_dataset(400_000)
    v = _view(qtbot, ds, build_tree(ds))
    assert v.data.rows == 6250
    r0, r1, stride = v._window
    assert r0 == 0 and r1 <= 6250
    qtbot.wait(30)
    v.show_extents(3000, 3050)
    qtbot.wait(20)
    r0, r1, stride = v._window
    assert r0 <= 3000 and r1 >= 3050 and stride == 1
    v.whole_file()
    qtbot.wait(20)
    assert v._window[2] > 1
    # hover facts far into the file
    assert "Page 300,000" in v.page_tooltip(300_000)


def test_go_to_page_and_export(qtbot, sparse_fixtures, tmp_path):
    from PySide6.QtGui import QImage

    from dbxray.viz.export import export_png, export_svg
    ds = synthetic_dataset(200_000)
    v = _view(qtbot, ds, build_tree(ds))
    qtbot.wait(30)
    v.goto.setValue(150_000)
    v.goto.editingFinished.emit()
    assert v.selected_page == 150_000 and v.inspector.page_no == 150_000
    (_, _), (y0, y1) = v.vb.viewRange()
    assert y0 <= 150_000 // 64 < y1
    png = tmp_path / "map.png"
    w = v.export_widget()
    assert w is v.report                       # map + legend, no toolbar or inspector
    assert export_png(w, str(png), dpi=144)
    img = QImage(str(png))
    assert (img.width(), img.height()) == (round(w.width() * 1.5), round(w.height() * 1.5))
    svg = tmp_path / "map.svg"
    assert export_svg(w, str(svg))
    import xml.etree.ElementTree as ET
    assert ET.parse(str(svg)).getroot().tag.endswith("svg")


def test_bad_checksum_page_shows_in_checksum_mode(qtbot, sparse_fixtures, tmp_path, artifacts_dir):
    src = sparse_fixtures / "innodb" / "16k" / "fx" / "t_dynamic.ibd"
    dst_dir = tmp_path / "fx"
    dst_dir.mkdir()
    dst = dst_dir / "t_dynamic.ibd"
    data = bytearray(src.read_bytes())
    data[3 * 16384 + 5000] ^= 0xFF            # one flipped byte in page 3 (the clustered root)
    dst.write_bytes(bytes(data))
    ds = scan(str(dst))
    v = _view(qtbot, ds, build_tree(ds))
    v.set_mode("checksum")
    res = v.result
    bad = res.labels.index("bad checksum")
    assert res.counts[bad] == 1
    assert res.labels[0].startswith("checksum OK")
    assert "BAD CHECKSUM" in v.page_tooltip(3)
    v.legend.selectRow(v.legend.cats.index(bad))
    assert v.highlighted_count() == 1
    _settle(qtbot, v)
    v.grab().save(str(artifacts_dir / "extentmap_bad_checksum.png"))


D_TYPES = {"Index page": "INDEX", "BLOB page": "BLOB", "Compressed BLOB page": "ZBLOB",
           "Subsequent Compressed BLOB page": "ZBLOB2", "File Space Header": "FSP_HDR",
           "Freshly allocated page": "ALLOCATED", "Inode page": "INODE", "Insert Buffer Bitmap": "IBUF_BITMAP"}


def _innochecksum_pages(fixtures_root, rel):
    """page -> (type, extra) from MariaDB's own `innochecksum -D` dump of the fixture."""
    import re
    out = {}
    txt = (fixtures_root / "innodb" / "innochecksum" / (rel + ".D.txt")).read_text()
    for line in txt.splitlines():
        if line.startswith("#::"):
            no, typ, extra = (x.strip() for x in line[3:].split("|"))
            m = re.search(r"index id=(\d+), page level=(\d+), No. of records=(\d+)", extra)
            out[int(no)] = (typ, tuple(int(x) for x in m.groups()) if m else None)
    return out


@pytest.mark.parametrize("rel", ["16k/fx/t_blob.ibd", "16k/fx/t_deleted.ibd", "16k/fx/t_redundant.ibd",
                                 "16k/fx/t_zip4.ibd", "4k/fx/t4_dynamic.ibd", "64k/fx/t64_dynamic.ibd"])
def test_tooltips_match_innochecksum_dump(qtbot, sparse_fixtures, fixtures_root, rel):
    """Every page's tooltip: type, index id, level and records as innochecksum -D printed them."""
    ds = scan(str(sparse_fixtures / "innodb" / rel))
    v = _view(qtbot, ds, build_tree(ds))
    pages = _innochecksum_pages(fixtures_root, rel)
    assert pages
    for no, (typ, idx) in pages.items():
        tip = v.page_tooltip(no)
        want = D_TYPES[typ]
        assert f"Type: {want} (" in tip, (rel, no, typ, tip)
        if idx is not None:
            iid, level, recs = idx
            assert f"level {level}, {recs:,} records" in tip, (rel, no, tip)
            assert f"id {iid}" in tip, (rel, no, tip)


def test_level_mode_csv_and_headless_target(qtbot, scanned16k, tmp_path):
    ds, root = scanned16k
    v = _view(qtbot, ds, root)
    fnode = _file_node(root, "fx/t_blob.ibd")
    v.select_node(fnode)
    v.set_mode("level")
    res = v.result
    ixs = fnode.ref.sections["innodb"]["indexes"]
    assert res.counts[res.labels.index("leaf (level 0)")] == sum(ix["leaf_pages"] for ix in ixs)
    assert res.counts[res.labels.index("level 1 (non-leaf)")] == \
        sum(ix["pages"] - ix["leaf_pages"] for ix in ixs)
    csv = v.legend_csv().splitlines()
    assert csv[0] == "file,mode,category,pages,percent,stored_bytes"
    assert any('"leaf (level 0)"' in line for line in csv)
    v.legend.selectRow(0)
    assert len(v.highlighted_pages()) == int(res.counts[v.legend.cats[0]])

    # dbxray export --view extent-map --target FILE:INDEX (headless path)
    from dbxray.app.headless import make_view
    from dbxray.viz.export import export_png
    view = make_view("extent-map", ds, root, 1200, 800, target="fx/t_blob.ibd:index 33")
    qtbot.addWidget(view)
    assert view.entry.path == "fx/t_blob.ibd"
    assert view.highlight_owner == 33 and view.highlighted_btree_count() == 1
    out = tmp_path / "em.png"
    assert export_png(view.export_widget(), str(out))
    assert out.stat().st_size > 10_000


def test_fill_as_height(qtbot, scanned16k):
    ds, root = scanned16k
    v = _view(qtbot, ds, root)
    v.select_node(_file_node(root, "fx/t_deleted.ibd"))
    v.set_mode("index")
    assert v.fill_height.isChecked() and v.fill_height_active()
    d = v.data
    assert v._rgba.shape == (d.rows * 8, d.cols * 8, 4)
    bg = np.array(QColor(theme.background()).getRgb(), dtype=np.uint8)

    def bar(page):              # coloured pixels in the page's block column 0
        r, c = divmod(page, d.cols)
        block = v._rgba[r * 8:(r + 1) * 8, c * 8]
        return int((block != bg).any(axis=1).sum())

    fills = d.units["fill"]
    for page in range(3, 16):
        if np.isfinite(fills[page]) and not d.units["flags"][page] & UNIT_FREE:
            assert bar(page) == max(1, int(np.ceil(fills[page] * 7))), page
    v.set_mode("lsn")
    assert not v.fill_height_active() and v._rgba.shape[0] == d.rows
    v.set_mode("type")
    v.fill_height.setChecked(False)
    assert v._rgba.shape[0] == d.rows


def test_coded_image_colours_like_the_full_rgba_image():
    """Large maps keep 1-byte colour codes (and the highlight mask as it is) and colour
    only the rows handed to the image item: every row slice equals the full image's."""
    from synthetic_innodb import synthetic_entry
    from dbxray.viz.extentmap import CodedImage, MapData
    e = synthetic_entry(300_000, compressed=False)
    d = MapData(e)
    mask = np.random.default_rng(1).random(len(e.units)) < 0.3
    for mode in ("type", "lsn", "fill"):
        res = d.mode(mode)
        for m in (None, mask):
            full = d.rgba(res, m)
            table, codes, cmask, dim = d.cell_codes(res, m, lazy_mask=True)
            assert codes.dtype == np.uint8          # one byte a page
            ci = CodedImage(table, codes, cmask, dim)
            assert ci.shape == full.shape
            for sl in (slice(0, None), slice(3, 900, 7), slice(100, 101)):
                assert (ci[sl] == full[sl]).all(), (mode, sl)

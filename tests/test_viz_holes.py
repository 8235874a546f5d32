"""Holes view on real widgets: strips add up to the files' holes, the
lost-sparseness banner shows on a dense copy of a page-compressed file and
not on the sparse one; works for files of every engine."""
from __future__ import annotations

import os
import shutil

import numpy as np
from PySide6.QtCore import QPoint, Qt

from dbxray.parsers.scan import scan
from dbxray.parsers.tree import build_tree
from synthetic_innodb import synthetic_dataset
from dbxray.parsers.units import as_ranges, covered_per_bin
from dbxray.viz.holes import HolesView, file_holes, nice_ticks


def _view(qtbot, ds, size=(1300, 950)):
    v = HolesView()
    qtbot.addWidget(v)
    v.resize(*size)
    v.show()
    qtbot.waitExposed(v)
    v.set_dataset(ds, build_tree(ds))
    return v


def _dense_copy(src, dst) -> None:
    """Copy every byte (holes become allocated zeros), as a plain cp/backup would."""
    with open(src, "rb") as fi, open(dst, "wb") as fo:
        while True:
            b = fi.read(1 << 20)
            if not b:
                break
            fo.write(b)
        fo.flush()
        os.fsync(fo.fileno())


def test_range_helpers():
    assert as_ranges([(50, 10), (0, 10), (5, 10), (15, 0), (60, 5), (100, 1)]).tolist() == \
        [[0, 15], [50, 15], [100, 1]]
    edges = np.array([0, 25, 50, 75, 100])
    assert covered_per_bin([(10, 20), (60, 5)], edges).tolist() == [15, 5, 5, 0]
    assert nice_ticks(327680, 5)[0] == 0 and nice_ticks(327680, 5)[-1] == 327680
    assert all(t % 1024 == 0 for t in nice_ticks(327680, 5))


def test_strip_totals_equal_hole_bytes_16k(qtbot, sparse_fixtures, artifacts_dir):
    ds = scan(str(sparse_fixtures / "innodb" / "16k"))
    v = _view(qtbot, ds)
    checked = 0
    for e in ds.files:
        if e.apparent_bytes == 0:
            continue
        for width in (37, 800):
            t = v.strip_totals(e.path, width)
            assert t["hole"] + t["unwritten"] == e.hole_bytes, e.path
            assert t["data"] + t["hole"] + t["unwritten"] + t["missing"] == e.apparent_bytes
        checked += 1
    assert checked > 20
    assert not v.banner.isVisible()
    assert v.lost_files() == []
    pc = file_holes(ds.file("fx/t_pc_zlib.ibd"))
    assert pc.expected_hole == ds.file("fx/t_pc_zlib.ibd").sections["innodb"]["expected_hole_bytes"] > 0
    assert not pc.lost_sparseness and pc.missing_bytes == 0
    qtbot.wait(30)
    v.grab().save(str(artifacts_dir / "holes.png"))
    v.bars_by.setCurrentIndex(v.bars_by.findData("file"))
    v.bars_scale.setCurrentIndex(v.bars_scale.findData("bytes"))
    assert len(v.bar_rows) >= 10
    qtbot.wait(60)
    v.grab().save(str(artifacts_dir / "holes_per_file_bytes.png"))


def test_banner_on_dense_copy_not_on_sparse(qtbot, sparse_fixtures, tmp_path, artifacts_dir):
    src = sparse_fixtures / "innodb" / "16k" / "fx" / "t_pc_zlib.ibd"
    sparse_dir = tmp_path / "sparse" / "fx"
    dense_dir = tmp_path / "dense" / "fx"
    sparse_dir.mkdir(parents=True)
    dense_dir.mkdir(parents=True)
    shutil.copy(src.with_suffix(".frm"), dense_dir / "t_pc_zlib.frm")
    _dense_copy(src, dense_dir / "t_pc_zlib.ibd")

    ds_sparse = scan(str(src))
    v = _view(qtbot, ds_sparse)
    assert not v.banner.isVisible() and v.lost_files() == []
    e = ds_sparse.files[0]
    assert v.strip_totals(e.path)["hole"] == e.hole_bytes > 0

    ds_dense = scan(str(dense_dir / "t_pc_zlib.ibd"))
    d = ds_dense.files[0]
    assert d.hole_bytes == 0 and d.allocated_bytes >= d.apparent_bytes
    v2 = _view(qtbot, ds_dense)
    assert v2.banner.isVisible()
    assert "lost its sparseness" in v2.banner.text() and "t_pc_zlib.ibd" in v2.banner.text()
    assert v2.lost_files() == [d.path]
    t = v2.strip_totals(d.path)
    fh = file_holes(d)
    # the missing holes are what the engine expected (the parser's numbers)
    assert t["missing"] == fh.missing_bytes == d.sections["innodb"]["expected_hole_bytes"]
    assert t["hole"] == 0
    qtbot.wait(30)
    v2.grab().save(str(artifacts_dir / "holes_lost_sparseness.png"))


def test_every_engine_fixture_folder(qtbot, sparse_fixtures, artifacts_dir):
    for sub in ("tokudb", "clickhouse", "innodb/datadir16k"):
        ds = scan(str(sparse_fixtures / sub))
        v = _view(qtbot, ds)
        for r in v.all_rows:
            assert v.strip_totals(r.entry.path, 100)["hole"] + v.strip_totals(r.entry.path, 100)["unwritten"] \
                == r.entry.hole_bytes
        assert v.summary.text()
        if not v.rows:
            assert "None of the" in v.strips.message and v.bar_rows
        qtbot.wait(60)
        v.grab().save(str(artifacts_dir / f"holes_{sub.replace('/', '_')}.png"))


def test_select_node_scopes_strips(qtbot, sparse_fixtures):
    ds = scan(str(sparse_fixtures / "innodb" / "16k"))
    v = _view(qtbot, ds)
    root = v.root
    v.only_holes.setChecked(False)
    table = next(n for n in root.walk() if n.kind == "table" and n.name == "t_part")
    v.select_node(table)
    assert {r.entry.path for r in v.rows} == {c.path for c in table.children if c.kind == "file"}
    v.select_node(root)
    assert len(v.rows) == len([e for e in ds.files if e.apparent_bytes > 0])
    # a file already listed is marked, the list stays
    fnode = next(n for n in root.walk() if n.kind == "file" and n.path == "fx/t_pc_zlib.ibd")
    v.select_node(fnode)
    assert len(v.rows) == len([e for e in ds.files if e.apparent_bytes > 0])
    assert v.strips.selected is fnode.ref
    # hover a strip: offsets and what is there; click it: its tree node is emitted
    i = next(k for k, r in enumerate(v.rows) if r.entry is fnode.ref)
    y = 4 + i * v.strips.ROW_H + 10
    x = v.strips.column_widths()[0] + 8 + 2
    v.scroll.ensureVisible(x, y, 10, 40)
    qtbot.mouseMove(v.strips, QPoint(x, y))
    qtbot.waitUntil(lambda: "fx/t_pc_zlib.ibd" in v.strips.last_tooltip, timeout=2000)
    assert "offset " in v.strips.last_tooltip and "data: " in v.strips.last_tooltip
    with qtbot.waitSignal(v.node_selected, timeout=2000) as sig:
        qtbot.mouseClick(v.strips, Qt.LeftButton, pos=QPoint(x, y))
    assert sig.args[0] is fnode


def test_synthetic_missing_holes_partial_banner(qtbot):
    ds = synthetic_dataset(3000, compressed=True)
    v = _view(qtbot, ds)
    fh = v.all_rows[0]
    assert fh.missing_bytes > 0 and not fh.lost_sparseness
    assert v.banner.isVisible() and "holes missing" in v.banner.text()


def test_rows_without_holes_share_one_empty_range_array():
    from dbxray.parsers.model import FileEntry
    from dbxray.viz.holes import NO_RANGES, file_holes
    a, b = FileEntry(path="a", abspath="/nonexistent/a"), FileEntry(path="b", abspath="/nonexistent/b")
    a.apparent_bytes = b.apparent_bytes = a.allocated_bytes = b.allocated_bytes = 8192
    ra, rb = file_holes(a), file_holes(b)
    assert ra.holes is NO_RANGES and rb.unwritten is NO_RANGES and ra.missing is NO_RANGES
    assert not NO_RANGES.flags.writeable and NO_RANGES.shape == (0, 2)
    assert not hasattr(ra, "__dict__")                  # slotted: a row a file at 100,000 files
    b.holes = [(4096, 4096)]
    assert file_holes(b).holes.tolist() == [[4096, 4096]] and file_holes(b).hole_bytes == 4096

"""The MyRocks LSM view: one bar pair per column family level of the real MariaDB data
dir (raw key+value bytes, bytes on disk in the level's codec), its texts equal to the
scan's level figures, shown only for datasets with RocksDB levels, exported to PNG."""
from __future__ import annotations

import shutil

import pytest

from dbxray.parsers.rocksdb.facts import lsm_rows
from dbxray.parsers.scan import scan
from dbxray.parsers.tree import build_tree


@pytest.fixture(scope="module")
def ds(fixtures_root, tmp_path_factory):
    d = tmp_path_factory.mktemp("lsm")
    shutil.copytree(fixtures_root / "mariadb" / "datadir" / "#rocksdb", d / "#rocksdb")
    return scan(str(d))


def test_lsm_rows_are_the_scan_levels(ds):
    rows = lsm_rows(ds)
    levels = ds.to_json()["rocksdb"]["directories"][0]["levels"]
    assert len(rows) == len(levels) == 22
    tiered5 = next(r for r in rows if r.column_family == "cf_tiered" and r.level == 5)
    lv = next(x for x in levels if x["column_family"] == "cf_tiered" and x["level"] == 5)
    assert tiered5.file_bytes == lv["file_bytes"] and tiered5.raw_bytes == lv["raw_key_bytes"] + lv["raw_value_bytes"]
    assert tiered5.written == ("ZSTD",) and not tiered5.differs
    assert sum(r.files for r in rows) == 78


def test_lsm_view_draws_and_exports(ds, qtbot, artifacts_dir):
    from dbxray.viz.lsm import LsmView
    from dbxray.viz.registry import view_classes
    assert LsmView in view_classes()
    v = LsmView()
    qtbot.addWidget(v)
    v.resize(1200, 700)
    v.show()
    v.set_dataset(ds, build_tree(ds))
    qtbot.wait(50)
    assert LsmView.shows(ds) and len(v.rows) == 22
    ticks = v.plot.getAxis("left")._tickLevels[0]
    assert {t[1] for t in ticks} >= {"cf_tiered L4", "cf_dyn L6", "__system__ L0"}
    texts = [i.toPlainText() for i in v.plot.items if hasattr(i, "toPlainText")]
    assert any(t.startswith("ZSTD · 19 files") for t in texts)
    img = v.grab()
    assert img.width() >= 1200 and img.save(str(artifacts_dir / "view_lsm.png"))


def test_lsm_view_not_shown_without_rocksdb(fixtures_root):
    from dbxray.viz.lsm import LsmView
    ds = scan(str(fixtures_root / "innodb" / "16k"))
    assert not LsmView.shows(ds)


def test_sizes_chart_leaves_out_spread_tables(fixtures_root):
    """The Sizes chart ranks files' allocation: a MyRocks table's rows (its indexes over the
    SSTs it shares) are not drawn there again beside the column family levels that hold them."""
    from dbxray.viz.sizebars import size_rows
    ds = scan(str(fixtures_root / "mariadb" / "datadir"))
    root = build_tree(ds)
    rows = size_rows(root, limit=10_000)
    spread = {id(n) for s in root.walk() if s.kind == "spread" for n in s.walk()}
    assert spread and not any(id(r) in spread for r in rows)
    assert sum(r.allocated for r in rows) <= ds.allocated_bytes
    assert any(r.name == "L4" and r.parent.name == "cf_tiered" for r in rows)

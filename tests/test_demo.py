"""The embedded demo: real files of each engine, holes re-punched, every table named."""
import json
from pathlib import Path

from dbxray.app.demo import demo_source, prepare_demo
from dbxray.parsers.scan import scan


def test_demo_is_small_and_real(fixtures_root):
    src = demo_source()
    total = sum(p.stat().st_size for p in src.rglob("*") if p.is_file() and not p.is_symlink())
    assert total < 10 * 1024 * 1024
    # the shipped InnoDB files are byte-identical to the fixtures written by MariaDB
    for p in (src / "data" / "mariadb" / "fx").iterdir():
        assert p.read_bytes() == (fixtures_root / "innodb" / "16k" / "fx" / p.name).read_bytes()


def test_demo_holes_restored_and_tables_named(tmp_path, fixtures_root):
    path, sparse = prepare_demo(tmp_path)
    assert sparse
    ds = scan(str(path))
    assert not ds.errors
    assert {"innodb", "clickhouse", "tokudb", "rocksdb"} <= set(ds.engines)
    tables = {(t.engine, f"{t.database}.{t.name}") for t in ds.tables}
    assert {("innodb", "fx.t_pc_zlib"), ("clickhouse", "fx.marks_default"), ("tokudb", "fx.blobs"),
            ("rocksdb", "shop.orders"), ("rocksdb", "shop.events")} <= tables
    man = json.loads((fixtures_root / "innodb" / "manifest.json").read_text())
    m = next(f for f in man["files"] if f["path"] == "16k/fx/t_pc_zlib.ibd")
    f = ds.file("mariadb/fx/t_pc_zlib.ibd")
    assert f.allocated_bytes == m.get("copy_allocated_bytes", m["allocated_bytes"]) and [list(h) for h in f.holes] == m["holes"]
    # a second start reuses the prepared copy
    assert prepare_demo(tmp_path) == (path, True)
    assert Path(path).is_dir()

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


def test_a_demo_that_gained_files_is_copied_afresh(tmp_path, monkeypatch):
    """The working copy is keyed by the demo's files, not only its holes: a copy made before
    a data dir was added to the demo (the MyRocks one) is not served again."""
    import shutil as _sh

    from dbxray.app import demo as demo_mod
    src = tmp_path / "src"
    _sh.copytree(demo_source(), src)
    extra = src / "data" / "myrocks"
    _sh.move(str(extra), str(tmp_path / "held"))                 # an older demo without MyRocks
    monkeypatch.setattr(demo_mod, "demo_source", lambda: src)
    old, _ = prepare_demo(tmp_path / "cache")
    assert not (Path(old) / "myrocks").exists()
    _sh.move(str(tmp_path / "held"), str(extra))                 # the demo gains it
    new, _ = prepare_demo(tmp_path / "cache")
    assert new != old and (Path(new) / "myrocks").is_dir()

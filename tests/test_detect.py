"""Detection: every fixture folder, lone files, part dirs, bad paths."""
import collections
import os

import pytest

from dbxray.parsers.detect import detect
from dbxray.parsers.scan import scan


def roles(found, engine=None):
    return collections.Counter((f.engine, f.role) for f in found.files if engine is None or f.engine == engine)


def test_mariadb_datadir(fixtures_root):
    d = detect(str(fixtures_root / "innodb" / "datadir16k"))
    by = {f.path: f for f in d.files}
    assert by["ibdata1"].role == "system_tablespace" and by["ibdata1"].engine == "innodb"
    assert by["ib_logfile0"].role == "redo_log"
    assert by["fx/t_metrics.ibd"].role == "tablespace"
    assert by["mysql/innodb_table_stats.ibd"].engine == "innodb"
    assert by["mysql/db.MAD"].engine == "aria" and by["mysql/db.MAD"].role == "table_data"      # Aria
    assert by["mysql/db.MAI"].engine == "aria" and by["mysql/db.MAI"].role == "table_index"
    assert not d.errors


def test_innodb_16k_every_ibd(fixtures_root):
    import json
    man = json.loads((fixtures_root / "innodb" / "manifest.json").read_text())
    expected = sorted(f["path"][4:] for f in man["files"] if f["path"].startswith("16k/") and f["path"].endswith(".ibd"))
    d = detect(str(fixtures_root / "innodb" / "16k"))
    ibd = [f for f in d.files if f.path.endswith(".ibd")]
    assert sorted(f.path for f in ibd) == expected and all(f.engine == "innodb" and f.role == "tablespace" for f in ibd)
    assert all((f.engine, f.role) == ("server", "table_definition" if f.path.endswith(".frm") else
                                      "partition_definition")
               for f in d.files if f.path.endswith((".frm", ".par")))


def test_innodb_public_and_mysql(fixtures_root):
    d = detect(str(fixtures_root / "innodb-public"))
    assert sum(1 for f in d.files if f.engine == "innodb") >= 3
    d = detect(str(fixtures_root / "innodb-mysql"))
    assert any(f.engine == "innodb" for f in d.files)


def test_clickhouse_datadir(fixtures_root):
    d = detect(str(fixtures_root / "clickhouse" / "datadir"))
    r = roles(d)
    assert r[("clickhouse", "part_column_data")] > 100
    assert r[("clickhouse", "marks")] > 100
    assert r[("clickhouse", "primary_index")] > 10
    assert r[("clickhouse", "table_metadata")] >= 17
    assert all(f.engine == "clickhouse" for f in d.files)
    proj = [f for f in d.files if ".proj/" in f.path]
    assert proj and all(f.engine == "clickhouse" for f in proj)


def test_clickhouse_single_part_dir(fixtures_root):
    root = fixtures_root / "clickhouse" / "datadir" / "store"
    part = next(p for p in root.rglob("checksums.txt") if ".proj" not in str(p)).parent
    d = detect(str(part))
    assert d.files and all(f.engine == "clickhouse" for f in d.files)
    assert any(f.role == "part_column_data" for f in d.files)


def test_tokudb_datadir(fixtures_root):
    d = detect(str(fixtures_root / "tokudb" / "datadir"))
    by = {f.path: f for f in d.files}
    assert by["tokudb.directory"].role == "dictionary"
    assert by["tokudb.environment"].role == "engine_environment"
    assert by["tokudb.rollback"].role == "undo"
    assert by["log000000000007.tokulog29"].role == "redo_log"
    assert by["__tokudb_lock_dont_delete_me_data"].role == "engine_environment"
    assert sum(1 for f in d.files if f.path.endswith(".tokudb")) == 9


def test_whole_fixture_tree_has_three_engines(fixtures_root):
    d = detect(str(fixtures_root))
    engines = {f.engine for f in d.files}
    assert {"innodb", "clickhouse", "tokudb"} <= engines


def test_single_file_by_name_and_by_magic(fixtures_root, tmp_path):
    d = detect(str(fixtures_root / "innodb" / "16k" / "fx" / "t_dynamic.ibd"))
    assert [(f.path, f.engine, f.role) for f in d.files] == [("t_dynamic.ibd", "innodb", "tablespace")]
    # renamed copies are still recognised by their first bytes
    src = (fixtures_root / "innodb" / "16k" / "fx" / "t_dynamic.ibd").read_bytes()
    (tmp_path / "renamed.dat").write_bytes(src)
    assert detect(str(tmp_path / "renamed.dat")).files[0].engine == "innodb"
    tok = (fixtures_root / "tokudb" / "datadir" / "tokudb.directory").read_bytes()
    (tmp_path / "dict.bak").write_bytes(tok)
    assert detect(str(tmp_path / "dict.bak")).files[0].engine == "tokudb"


def test_unknown_files_are_other_not_errors(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "empty").write_bytes(b"")
    d = detect(str(tmp_path))
    assert {(f.path, f.engine, f.role) for f in d.files} == {("notes.txt", None, "other"), ("empty", None, "other")}
    assert not d.errors


def test_symlink_loop_and_broken_link_are_reported(tmp_path):
    (tmp_path / "db").mkdir()
    (tmp_path / "db" / "t.ibd").write_bytes(b"\0" * 16384)
    os.symlink("..", tmp_path / "db" / "loop")           # directory loop
    os.symlink("nowhere", tmp_path / "db" / "broken")   # broken link
    os.symlink("self", tmp_path / "self")               # self loop
    d = detect(str(tmp_path))
    assert [f.path for f in d.files] == ["db/t.ibd"]
    assert any("broken" in e for e in d.errors) and any("self" in e and "loop" in e for e in d.errors)


def test_nonexistent_path_raises_named(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        scan(str(tmp_path / "missing"))
    assert "missing" in str(e.value)


def test_unreadable_file_is_named_and_scan_goes_on(tmp_path, monkeypatch):
    (tmp_path / "a.ibd").write_bytes(b"\0" * 16384)
    (tmp_path / "b.ibd").write_bytes(b"\0" * 16384)
    real_open = os.open

    def deny(path, flags, *a, **k):
        if str(path).endswith("a.ibd"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *a, **k)

    monkeypatch.setattr(os, "open", deny)
    ds = scan(str(tmp_path))
    a = ds.file("a.ibd")
    b = ds.file("b.ibd")
    assert any("a.ibd" in e and "Permission denied" in e for e in a.errors)
    assert b.apparent_bytes == 16384


def test_zero_byte_file_warns(tmp_path):
    (tmp_path / "z.ibd").write_bytes(b"")
    ds = scan(str(tmp_path))
    f = ds.file("z.ibd")
    assert f.apparent_bytes == 0 and any("empty" in w for w in f.warnings)


def test_mysql8_doublewrite_files(tmp_path):
    (tmp_path / "#ib_16384_0.dblwr").write_bytes(b"\0" * 16384)
    (tmp_path / "#ib_16384_1.dblwr").write_bytes(b"\0" * 16384)
    d = detect(str(tmp_path))
    assert {(f.engine, f.role) for f in d.files} == {("innodb", "doublewrite")}


def test_tokulog_names_and_magic(fixtures_root, tmp_path):
    d = detect(str(fixtures_root / "tokudb"))
    logs = {f.path for f in d.files if f.role == "redo_log"}
    assert "datadir/log000000000007.tokulog29" in logs
    assert not any(p.endswith(".txt") for p in logs)       # dumps beside logs are not logs
    src = fixtures_root / "tokudb" / "datadir" / "log000000000007.tokulog29"
    (tmp_path / "renamed.log").write_bytes(src.read_bytes())
    assert [(f.engine, f.role) for f in detect(str(tmp_path / "renamed.log")).files] == [("tokudb", "redo_log")]


def test_clickhouse_part_missing_checksums_is_still_a_part(fixtures_root, tmp_path):
    import shutil
    src = fixtures_root / "clickhouse" / "datadir"
    dst = tmp_path / "ch"
    shutil.copytree(src, dst, symlinks=True)
    part = next(p for p in (dst / "store").rglob("checksums.txt") if ".proj" not in str(p)).parent
    (part / "checksums.txt").unlink()
    (part / "columns.txt").unlink()
    d = detect(str(dst))
    in_part = [f for f in d.files if f.path.startswith(str(part.relative_to(dst)) + "/")]
    assert in_part and all(f.engine == "clickhouse" and f.role != "other" for f in in_part)
    sql = [f for f in d.files if f.path.startswith("store/") and f.path.endswith(".sql")]
    assert sql and all(f.role == "table_metadata" for f in sql)

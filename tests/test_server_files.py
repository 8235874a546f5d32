"""The server's own files (parsers/server/): every ``.frm`` of the real MariaDB data
dir names its database, table and the table's engine as information_schema does
(plugin engines by the name in the extra segment, partitioned tables by their
partitions' engine), every ``.par`` its partitions as I_S.PARTITIONS lists them,
``db.opt`` and the environment files their roles; damaged files named with offsets.

``test_every_file_has_an_engine_and_a_table`` walks every file of the fixture: the
engines other work covers are listed in :data:`NOT_COVERED_HERE` (remove yours when
your engine claims its files)."""
from __future__ import annotations

import json
import shutil
import struct

import pytest

from dbxray.parsers.scan import scan

#: manifest engine labels (files[].engine) whose files this test does not require yet
NOT_COVERED_HERE = {"rocksdb"}
#: roles of files that belong to no one table (the engine's or the server's environment)
ENVIRONMENT_ROLES = {"system_tablespace", "redo_log", "undo", "doublewrite", "engine_environment", "ddl_log",
                     "database_options", "leftover", "dictionary"}


@pytest.fixture(scope="module")
def manifest(fixtures_root):
    return json.loads((fixtures_root / "mariadb" / "manifest.json").read_text())


@pytest.fixture(scope="module")
def ds(sparse_fixtures):
    return scan(str(sparse_fixtures / "mariadb" / "datadir"))


def test_frm_names_the_table_and_its_engine(ds, manifest):
    i_s = {(t["TABLE_SCHEMA"], t["TABLE_NAME"]): t for t in manifest["sql"]["tables"]}
    frms = [f for f in ds.files if f.path.endswith(".frm")]
    assert len(frms) == sum(1 for f in manifest["files"] if f["path"].endswith(".frm")) == 167
    checked = 0
    for f in frms:
        assert (f.engine, f.role) == ("server", "table_definition") and not f.errors, (f.path, f.errors)
        db, stem = f.path.split("/")[-2], f.path.rsplit("/", 1)[-1][:-4]
        assert (f.database, f.table) == (db, stem)
        sec = f.sections["server"]
        row = i_s.get((db, stem))
        if row is not None:
            want = "VIEW" if row["TABLE_TYPE"] == "VIEW" else row["ENGINE"]
            assert sec.table_engine == want, f.path
            checked += 1
        else:
            assert db == "sys" and sec.table_engine == ("Aria" if stem == "sys_config" else "VIEW"), f.path
    assert checked == len(i_s) == 66
    t_part = ds.file("rdb/t_part.frm").sections["server"]
    assert (t_part.partitioned, t_part.engine_name, t_part.table_engine) == (True, "partition", "ROCKSDB")
    assert t_part.partition_clause.lstrip().startswith("PARTITION BY")
    events = ds.file("rdb/events.frm").sections["server"]
    assert (events.legacy_db_type, events.engine_name, events.table_engine) == (45, "ROCKSDB", "ROCKSDB")
    arc = ds.file("arc/lineorder_words.frm").sections["server"]
    assert (arc.legacy_db_type, arc.table_engine, arc.mysql_version) == (16, "ARCHIVE", 101119)


def test_par_lists_the_partitions(ds, manifest):
    want: dict[tuple[str, str], list[str]] = {}
    for p in manifest["sql"]["partitions"]:
        name = p["PARTITION_NAME"] + (f"#SP#{p['SUBPARTITION_NAME']}" if p["SUBPARTITION_NAME"] else "")
        want.setdefault((p["TABLE_SCHEMA"], p["TABLE_NAME"]), []).append(name)
    engines = {(t["TABLE_SCHEMA"], t["TABLE_NAME"]): t["ENGINE"] for t in manifest["sql"]["tables"]}
    pars = [f for f in ds.files if f.path.endswith(".par")]
    assert len(pars) == 4 and {(f.database, f.table) for f in pars} == set(want)
    for f in pars:
        assert (f.engine, f.role) == ("server", "partition_definition") and not f.errors
        sec = f.sections["server"]
        assert sec.partitions == want[(f.database, f.table)], f.path
        assert sec.table_engine == engines[(f.database, f.table)] and sec.checksum_ok
        assert f"{f.database}.{f.table}" == next(m["table"] for m in manifest["files"] if m["path"] == f.path)


def test_database_options_and_environment_roles(ds, manifest):
    for m in manifest["files"]:
        if m["path"].endswith("db.opt"):
            f = ds.file(m["path"])
            assert (f.engine, f.role, f.database, f.table) == ("server", "database_options", m["path"].split("/")[0],
                                                               None)
            assert f.sections["server"].default_character_set
    up = ds.file("mysql_upgrade_info")
    assert (up.engine, up.role) == ("server", "engine_environment")
    assert up.sections["server"].text == manifest["server_version"].split("-deb")[0].rsplit("-0+", 1)[0] \
        or manifest["server_version"].startswith(up.sections["server"].text.split("-MariaDB")[0])
    mm = ds.file("multi-master.info")
    assert (mm.engine, mm.role) == ("server", "engine_environment")
    bp = ds.file("ib_buffer_pool")
    assert (bp.engine, bp.role, bp.sections["server"].of_engine) == ("server", "engine_environment", "InnoDB")


def test_every_file_has_an_engine_and_a_table(ds, manifest):
    """Every file of the data dir: an engine, and a table unless it belongs to no table
    (then a role that says what it is)."""
    seen = 0
    for m in manifest["files"]:
        if m["engine"] in NOT_COVERED_HERE:
            continue
        f = ds.file(m["path"])
        assert f is not None and f.engine is not None, m["path"]
        assert f.role != "other", m["path"]
        if f.role not in ENVIRONMENT_ROLES:
            assert f.database and f.table, m["path"]
            if m.get("table") and m["path"].endswith((".frm", ".par", ".ARZ", ".CSV", ".CSM", ".MYD", ".MYI", ".MAD",
                                                      ".MAI")):
                assert f"{f.database}.{f.table}" == m["table"], m["path"]
        seen += 1
    assert seen >= 240
    # every file but MyRocks' (its own tests: an SST may hold several tables), Aria and MyISAM included
    assert seen == sum(1 for m in manifest["files"] if m["engine"] not in NOT_COVERED_HERE) == 302


def _dir_with(tmp_path, name: str, data: bytes):
    d = tmp_path / "db1"
    d.mkdir()
    (d / name).write_bytes(data)
    return d


def test_damaged_definitions_named_with_offsets(tmp_path, sparse_fixtures):
    src = (sparse_fixtures / "mariadb" / "datadir" / "arc" / "lineorder_words.frm").read_bytes()
    bad = bytearray(src)
    bad[2] = 42                                   # an frm version no server wrote
    d = _dir_with(tmp_path, "t.frm", bytes(bad))
    (d / "u.frm").write_bytes(src[:40])
    (d / "v.frm").write_bytes(b"not a frm")
    par = (sparse_fixtures / "mariadb" / "datadir" / "inno" / "part_list.par").read_bytes()
    (d / "t.par").write_bytes(par[:8] + struct.pack("<I", 99) + par[12:])
    before = {p.name: p.read_bytes() for p in d.iterdir()}
    ds = scan(str(d))
    assert {p.name: p.read_bytes() for p in d.iterdir()} == before
    assert ds.file("t.frm").errors == ["t.frm @ offset 2: frm version 42 (known: 6..11): unknown format"]
    assert ds.file("u.frm").errors == ["u.frm @ offset 40: header cut short: 40 of 64 bytes"]
    assert ds.file("v.frm").errors[0].startswith("v.frm @ offset 0: magic 6e 6f is neither fe 01 nor TYPE=VIEW")
    assert ds.file("t.par").errors == ["t.par @ offset 8: 99 partitions do not fit a file of 56 bytes"]
    for name in ("t.frm", "u.frm", "v.frm", "t.par"):
        f = ds.file(name)
        assert (f.engine, f.database, f.table) == ("server", "db1", name[:-4])   # still placed

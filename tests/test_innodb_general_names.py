"""InnoDB names of general (shared) tablespaces and each file's own SDI first.

Ground truth:
* ``innodb-mysql/mysql-std_data/datadirs/wl12261_upgrade_80013.zip`` (MySQL 8.0.13): general
  tablespaces ts0..ts5 with i_ts1..i_ts4 in ts1..ts4 (ts3 encrypted); the manifest's ``observed``
  members give each file's FSP flags and the tables its SDI holds (``sdi_tables``).
* ibdNinja's golden outputs recorded in ``innodb-mysql/manifest.json`` (``expected`` "file
  information and table/index list": table name, index ids and names per file), checked on a scan
  of the whole ``innodb-mysql`` folder, where files of many servers share space ids.
* ``innodb-public/sakila/8.0`` against the public sakila schema (``test_innodb_sdi.SAKILA_INDEXES``).

No fixture holds a general tablespace with several tables, nor a MySQL 5.7 / MariaDB data dir
with a general tablespace (MariaDB has none): those two cases are checked on dictionary rows and
SDI summaries built in the tests (said at each test).
"""
from __future__ import annotations

import json
import zipfile

import pytest

from dbxray.parsers.innodb import names as nm
from dbxray.parsers.innodb import scan as iscan
from dbxray.parsers.innodb import sdi, sysdict
from dbxray.parsers.innodb.sysfile import SpaceFile
from dbxray.parsers.model import FileEntry
from dbxray.parsers.scan import scan

FSP_FLAGS_MASK_SHARED = 1 << 11          # fsp0types.h FSP_FLAGS_POS_SHARED
IT_SPATIAL = 5                           # sql/dd/types/index.h enum_index_type
ZIP80013 = "mysql-std_data/datadirs/wl12261_upgrade_80013.zip"


@pytest.fixture(scope="module")
def mysql_manifest(fixtures_root):
    return json.loads((fixtures_root / "innodb-mysql" / "manifest.json").read_text())


@pytest.fixture(scope="module")
def dd80013(fixtures_root, tmp_path_factory, mysql_manifest):
    entry = [e for e in mysql_manifest["files"] if e["path"] == ZIP80013][0]
    members = entry["observed"]["members"]
    out = tmp_path_factory.mktemp("dd80013")
    with zipfile.ZipFile(fixtures_root / "innodb-mysql" / ZIP80013) as z:
        for m in members:
            if m.get("kind") == "tablespace":
                z.extract(m["name"], out)
    top = members[0]["name"].split("/", 1)[0]
    ds = scan(str(out / top))
    return ds, {m["name"][len(top) + 1:]: m["observed"] for m in members if m.get("kind") == "tablespace"}


def test_general_tablespaces_named_from_their_sdi(dd80013):
    ds, observed = dd80013
    by_path = {f.path: f for f in ds.files}
    general = [p for p in observed if "/" not in p and p.startswith("ts")]
    assert sorted(general) == [f"ts{i}.ibd" for i in range(6)]
    for path in general:
        o, f = observed[path], by_path[path]
        sec = f.sections["innodb"]
        flags = int(o["fsp_flags_hex"], 16)
        assert sec["fsp_flags"] == flags and flags & FSP_FLAGS_MASK_SHARED
        ts = sec["tablespace"]
        assert ts["shared"] is True
        assert not any("dictionary names space id" in w for w in f.warnings), f.warnings
        if o["has_encrypted_pages"]:
            # ts3: its SDI is encrypted; mysql.ibd's dictionary names it (upgrade_schema.test:
            # i_ts3 in ts3), no index is listed as no page is readable
            assert ts["names_from"] == "mysql.ibd" and ts["name"] == "ts3"
            assert ts["tables"] == ["db1.i_ts3"] and (f.database, f.table) == ("db1", "i_ts3")
            assert sec["indexes"] == []
            continue
        assert ts["name"] == path[:-4]                 # dd::Tablespace name = file name
        want_tables = o.get("sdi_tables", [])
        assert ts["tables"] == want_tables
        real = [i for i in sec["indexes"] if i["name"] != "SDI"]
        if not want_tables:                            # ts0, ts5: empty general tablespaces
            assert real == [] and (f.database, f.table) == (None, path[:-4])
            assert o["page_type_histogram"].get("17855:INDEX", 0) == 0
            continue
        assert ts["names_from"] == "own SDI"
        db, table = want_tables[0].split(".")
        assert (f.database, f.table) == (db, table)
        # one INDEX page (the clustered index root) and it is named by the table it belongs to
        assert len(real) == o["page_type_histogram"]["17855:INDEX"] == 1
        assert real[0]["name"] == "PRIMARY" and real[0]["table"] == want_tables[0]
        assert not real[0]["name"].startswith("index ")
        assert f.path in ds.table("innodb", db, table).files


def test_file_per_table_files_of_80013(dd80013):
    ds, observed = dd80013
    by_path = {f.path: f for f in ds.files}
    n = 0
    for path, o in observed.items():
        if "/" not in path or not path.endswith(".ibd"):
            continue
        f = by_path[path]
        sec = f.sections["innodb"]
        assert not sec["fsp_flags"] & FSP_FLAGS_MASK_SHARED and not sec["tablespace"]["shared"]
        want = path[:-4].replace("/", ".", 1)
        db, rest = want.split(".", 1)
        table = rest.split("#P#")[0]
        assert (f.database, f.table) == (db, table)
        if o["has_encrypted_pages"]:
            assert sec["tablespace"]["names_from"] == "mysql.ibd"
            assert sec["tablespace"]["tables"] == [want]
            continue
        real = [i for i in sec["indexes"] if i["name"] != "SDI"]
        assert len(real) == o["page_type_histogram"]["17855:INDEX"]
        assert all(i["table"] == want and not i["name"].startswith("index ") for i in real), (path, real)
        if o.get("sdi_tables"):                   # the file's own SDI holds the table
            assert sec["tablespace"]["names_from"] == "own SDI"
            assert o["sdi_tables"] == [want.split("#P#")[0]]
        else:                                     # other partitions: named by mysql.ibd
            assert "#P#" in path and sec["tablespace"]["names_from"] == "mysql.ibd"
        n += 1
    assert n == 9         # i1, i3, i_part1 p0..p2, i_part3 p0..p2, sys_config (i_ts* above)


def _golden_lists(mysql_manifest):
    for e in mysql_manifest["files"]:
        for x in e.get("expected") or []:
            if x["what"] == "file information and table/index list":
                yield e["path"], x["value"]


def test_own_sdi_wins_over_clashing_space_ids(fixtures_root, mysql_manifest):
    """The innodb-mysql folder mixes files of many servers (space id 2 alone is claimed by
    several): every file is still named by its own SDI, as ibdNinja's golden output says."""
    ds = scan(str(fixtures_root / "innodb-mysql"))
    by_path = {f.path: f for f in ds.files}
    checked = 0
    for path, gold in _golden_lists(mysql_manifest):
        f = by_path[path]
        sec = f.sections["innodb"]
        assert sec["space_id"] == gold["space_id"]
        (_, full), = gold["tables"]
        assert f"{f.database}.{f.table}" == full
        assert sec["tablespace"]["names_from"] == "own SDI"
        got = {i["index_id"]: (i["table"], i["name"]) for i in sec["indexes"] if i["name"] != "SDI"}
        want = {i["id"]: (full, i["name"]) for i in gold["indexes"]}
        # every index the golden list names is named the same; pages of no other index exist
        assert {k: got.get(k) for k in want} == want, path
        # ibdNinja leaves out indexes on virtual columns (ddl_test's idx_data_v3) and spatial ones
        # (type_test's idx_point, dd::Index::IT_SPATIAL = 5); the SDI says which they are
        extra = set(got) - set(want)
        if extra:
            with SpaceFile(f.abspath, f.path) as space:
                skipped = {i.id: i for t in sdi.read_sdi(space).tables for i in t.indexes
                           if i.on_virtual_column or i.type == IT_SPATIAL}
            assert extra <= set(skipped), path
            assert {k: got[k][1] for k in extra} == {k: skipped[k].name for k in extra}
        assert {i["index_id"]: i["root_page"] for i in sec["indexes"] if i["index_id"] in want} == \
            {i["id"]: i["root_page"] for i in gold["indexes"] if i["id"] in got}
        checked += 1
    assert checked == 14
    clashes = [f for f in ds.files if f.path.startswith("ibdninja/")
               and any("dictionary names space id" in w for w in f.warnings)]
    assert clashes == []


def test_sakila_80_named_by_own_sdi(sparse_fixtures):
    import test_innodb_sdi
    ds = scan(str(sparse_fixtures / "innodb-public" / "sakila" / "8.0"))
    seen = {}
    for f in ds.files:
        sec = f.sections.get("innodb")
        if not sec or not f.path.endswith(".ibd"):
            continue
        assert sec["tablespace"]["names_from"] == "own SDI", f.path
        assert sec["tablespace"]["tables"] == [f.path[:-4].replace("/", ".")]
        for i in sec["indexes"]:
            if i["name"] != "SDI":
                seen.setdefault(i["table"], set()).add(i["name"])
    for table, want in test_innodb_sdi.SAKILA_INDEXES.items():
        pages_of = seen.get(f"sakila.{table}", set())
        # indexes with pages (an index root page always exists) carry the schema's names
        # film_text: sakila-schema.sql's FULLTEXT KEY idx_title_description has no B-tree in
        # film_text.ibd (its data is in the FTS_* auxiliary tables); InnoDB adds FTS_DOC_ID_INDEX
        if table == "film_text":
            want = (set(want) - {"idx_title_description"}) | {"FTS_DOC_ID_INDEX"}
        assert pages_of == set(want), table


def test_multi_table_general_tablespace_from_sdi_summary():
    """No fixture has a general tablespace holding two tables: the SDI summary of one
    (what ``file_names_from_sdi`` returns for it) is built here."""
    fn = nm.FileNames(path="ts9.ibd", space_id=77, tablespace="ts9", shared=True,
                      tables=["db1.a", "db2.b"],
                      indexes={(77, 500): ("db1.a", "PRIMARY"), (77, 501): ("db2.b", "PRIMARY"),
                               (77, 502): ("db2.b", "k")})
    names = nm.Names({77: "ts9"}, dict(fn.indexes), "SDI", shared={77: "ts9"}, by_file={"ts9.ibd": fn})
    entry = FileEntry("ts9.ibd", "/nonexistent/ts9.ibd", "innodb", "tablespace")
    got = iscan.file_naming(entry, 77, names, shared_flag=True)
    assert (got.database, got.table, got.partition) == (None, "ts9", None)
    assert got.tables == ["db1.a", "db2.b"]
    assert got.index_names == {500: ("db1.a", "PRIMARY"), 501: ("db2.b", "PRIMARY"), 502: ("db2.b", "k")}
    # the same space id in a file of another name is another server's tablespace: not used
    other = FileEntry("ts8.ibd", "/nonexistent/ts8.ibd", "innodb", "tablespace")
    assert iscan.file_naming(other, 77, nm.Names({77: "ts9"}, dict(fn.indexes), "SDI",
                                                 shared={77: "ts9"})).index_names == {}


def _systable(name, tid, space, mix_len):
    return sysdict.SysTable(name=name, id=tid, n_cols_raw=0x80000003, type=0x21, mix_id=0,
                            mix_len=mix_len, space=space)


def test_general_tablespace_from_sys_tables():
    """MySQL 5.7 general tablespace as SYS_TABLES/SYS_INDEXES show it (no 5.7 data dir with
    one is among the fixtures; MariaDB has none): two tables in space 9 without
    DICT_TF2_USE_FILE_PER_TABLE, one file-per-table table in space 10 (rows built here)."""
    d = sysdict.Dictionary(has_sys_tables=True)
    d.tables = [_systable("db1/i_ts1", 30, 9, 0x40), _systable("db2/j", 31, 9, 0x40),
                _systable("db1/own", 32, 10, 0x50)]
    d.indexes = [sysdict.SysIndex(30, 40, "GEN_CLUST_INDEX", 0, 1, 9, 3, None),
                 sysdict.SysIndex(31, 41, "PRIMARY", 1, 3, 9, 4, None),
                 sysdict.SysIndex(32, 42, "PRIMARY", 1, 3, 10, 3, None)]
    names = nm.Names({}, {}, "")
    nm.names_from_dictionary(d, names)
    assert names.shared == {9: None}
    assert names.tables[10] == "db1.own"
    ts = FileEntry("ts1.ibd", "/x/ts1.ibd", "innodb", "tablespace")
    got = iscan.file_naming(ts, 9, names)
    assert got.shared and (got.database, got.table) == (None, "ts1")
    assert got.tables == ["db1.i_ts1", "db2.j"]
    assert got.index_names == {40: ("db1.i_ts1", "GEN_CLUST_INDEX"), 41: ("db2.j", "PRIMARY")}
    own = FileEntry("db1/own.ibd", "/x/db1/own.ibd", "innodb", "tablespace")
    got = iscan.file_naming(own, 10, names)
    assert not got.shared and (got.database, got.table) == ("db1", "own")
    assert got.index_names == {42: ("db1.own", "PRIMARY")}
    # a file-per-table file whose space id the dictionary gives to another table is not named by it
    wrong = FileEntry("db1/zzz.ibd", "/x/db1/zzz.ibd", "innodb", "tablespace")
    got = iscan.file_naming(wrong, 10, names)
    assert got.index_names == {} and (got.database, got.table) == ("db1", "zzz")
    assert any("dictionary names space id 10" in w for w in wrong.warnings)

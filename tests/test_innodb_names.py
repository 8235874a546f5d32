"""names.resolve_names / names.system_info against the manifests:
MariaDB 10.11 datadir16k (information_schema INNODB_SYS_TABLES / INNODB_SYS_INDEXES),
the MySQL 8.0.13 / 8.0.16 / 8.4.8 data directories of innodb-mysql (unzipped into tmp,
manifest ``observed`` members), and innodb-public sakila (5.7: no dictionary; 8.0: SDI)."""
from __future__ import annotations

import json
import re
import zipfile

import pytest

from dbxray.parsers.detect import detect
from dbxray.parsers.innodb import names as nm
from dbxray.parsers.model import FileEntry

DATADIR_ZIPS = ("data_80016.zip", "mysql_inplace_upgrade84_lctn0.zip", "wl12261_upgrade_80013.zip")
MYSQL_DD_SPACE_ID = 4294967294          # dict0dd.h dict_sys_t::s_dd_space_id
MYSQL_DD_SPACE_NAME = "mysql"           # dict0dd.h dict_sys_t::s_dd_space_name


@pytest.fixture(scope="module")
def inno_manifest(sparse_fixtures):
    return json.loads((sparse_fixtures / "innodb" / "manifest.json").read_text())


@pytest.fixture(scope="module")
def mysql_manifest(sparse_fixtures):
    return json.loads((sparse_fixtures / "innodb-mysql" / "manifest.json").read_text())


@pytest.fixture(scope="module")
def datadir16k_names(sparse_fixtures):
    return nm.resolve_names(detect(str(sparse_fixtures / "innodb" / "datadir16k")).files)


def test_datadir16k_tables_and_indexes(datadir16k_names, inno_manifest):
    n = datadir16k_names
    assert n.errors == []
    assert n.source == "ibdata1 SYS_TABLES/SYS_INDEXES"
    rows = [f["information_schema"] for f in inno_manifest["files"]
            if f["path"].startswith("datadir16k/") and "INNODB_SYS_TABLES" in f.get("information_schema", {})]
    assert len(rows) == 8
    n_idx = 0
    for isr in rows:
        t = isr["INNODB_SYS_TABLES"]
        want = t["NAME"].replace("/", ".")
        assert n.tables[t["SPACE"]] == want
        assert isr["INNODB_SYS_TABLESPACES"]["SPACE"] == t["SPACE"]
        for i in isr["INNODB_SYS_INDEXES"]:
            assert n.indexes[(i["SPACE"], i["INDEX_ID"])] == (want, i["NAME"])
            n_idx += 1
    assert {s for s in n.tables if s != 0} == {r["INNODB_SYS_TABLES"]["SPACE"] for r in rows}
    assert len([k for k in n.indexes if k[0] != 0]) == n_idx == 15
    assert n.tables[0] == "innodb_system"


def test_datadir16k_system_indexes_cover_innochecksum(datadir16k_names, inno_manifest):
    """Every index id innochecksum -S lists for ibdata1 has a name (incl. the change buffer).

    Index ids are global (DICT_HDR_INDEX_ID); ibdata1 also holds two stale pages of index ids
    16 and 17 (mysql.innodb_table_stats / innodb_index_stats, whose trees live in spaces 1 and 2):
    those are named by the index id in their own space."""
    fx = [f for f in inno_manifest["files"] if f["path"] == "datadir16k/ibdata1"][0]
    by_id = {i: key for key in datadir16k_names.indexes for i in [key[1]]}
    in_space0 = 0
    for e in fx["innochecksum"]["index_summary"]:
        index_id = e["index_id"] & 0xFFFFFFFFFFFFFFFF       # innochecksum prints the ibuf id signed
        if (0, index_id) in datadir16k_names.indexes:
            in_space0 += 1
        else:
            assert by_id[index_id][0] != 0 and e["pages"] == 1, e
    assert in_space0 == 11
    assert datadir16k_names.indexes[(1, 16)] == ("mysql.innodb_table_stats", "PRIMARY")
    assert datadir16k_names.indexes[(2, 17)] == ("mysql.innodb_index_stats", "PRIMARY")
    assert datadir16k_names.indexes[(0, 0xFFFFFFFF00000000)] == ("innodb_change_buffer", "CLUST_IND")
    assert datadir16k_names.indexes[(0, 1)] == ("SYS_TABLES", "CLUST_IND")


def test_lone_ibd_files_have_no_names(sparse_fixtures):
    for sub in (("innodb", "16k"), ("innodb-public", "sakila", "5.7")):
        n = nm.resolve_names(detect(str(sparse_fixtures.joinpath(*sub))).files)
        assert (n.tables, n.indexes, n.source, n.errors) == ({}, {}, "", [])


def test_sakila_80_names(sparse_fixtures):
    import test_innodb_sdi
    root = sparse_fixtures / "innodb-public" / "sakila" / "8.0"
    files = detect(str(root)).files
    n = nm.resolve_names(files)
    assert n.errors == [] and n.source == "SDI"
    ibds = [f for f in files if f.path.endswith(".ibd")]
    assert len(ibds) == 26         # sakila/: 14 tables + 11 FTS aux (payment, rental absent), sys/sys_config
    assert sorted(n.tables.values()) == sorted(f.path[:-4].replace("/", ".") for f in ibds)
    for table, want in test_innodb_sdi.SAKILA_INDEXES.items():
        got = {iname for (_, _), (t, iname) in n.indexes.items() if t == f"sakila.{table}"}
        hidden = {"FTS_DOC_ID_INDEX"} if table == "film_text" else set()
        assert got == set(want) | hidden, table


# -- MySQL 8 data directories ------------------------------------------------------

def _wanted(name: str) -> bool:
    base = name.rsplit("/", 1)[-1]
    return base.endswith(".ibd") or base == "ibdata1" or base.startswith("undo_") or "#innodb_redo/" in name \
        or base.startswith("ib_logfile")


@pytest.fixture(scope="module")
def datadirs(sparse_fixtures, tmp_path_factory, mysql_manifest):
    """{zip name: (data dir root, manifest members)} with tablespaces, undo and redo extracted."""
    out = tmp_path_factory.mktemp("mysqldd")
    res = {}
    for entry in mysql_manifest["files"]:
        name = entry["path"].rsplit("/", 1)[-1]
        if name not in DATADIR_ZIPS:
            continue
        members = entry["observed"]["members"]
        with zipfile.ZipFile(sparse_fixtures / "innodb-mysql" / entry["path"]) as z:
            for m in members:
                if _wanted(m["name"]):
                    z.extract(m["name"], out / name)
        top = members[0]["name"].split("/", 1)[0]
        res[name] = (out / name / top, members)
    return res


@pytest.fixture(scope="module")
def datadir_names(datadirs):
    return {k: (root, members, detect(str(root)).files) for k, (root, members) in datadirs.items()}


def test_mysql_datadir_tablespace_names(datadir_names):
    checked = 0
    for zname, (root, members, files) in datadir_names.items():
        n = nm.resolve_names(files)
        assert n.source == "SDI + mysql.ibd dictionary"
        top = root.name
        for m in members:
            o = m.get("observed") or {}
            rel = m["name"][len(top) + 1:]
            if m.get("kind") != "tablespace" or not rel.endswith(".ibd") or rel == "mysql.ibd":
                continue
            space = o["fsp_space_id"]
            if o["has_encrypted_pages"]:
                assert f"{rel} page 3: page is encrypted (type 15); not decrypted" in n.errors
                assert space not in n.tables
                continue
            if "/" in rel:                                  # file-per-table: <db>/<table>.ibd
                want = rel[:-4].replace("/", ".", 1)
            else:                                           # general tablespace: its one table, else its name
                want = o["sdi_tables"][0] if o.get("sdi_tables") else rel[:-4]
            assert n.tables[space] == want, (zname, rel)
            if o.get("sdi_tables"):
                assert o["sdi_tables"] == [want.split("#P#")[0]]
            checked += 1
        encrypted = [m for m in members if (m.get("observed") or {}).get("has_encrypted_pages")]
        assert len(n.errors) == len(encrypted)
    assert checked == 3 + 8 + 14


def test_mysql_dictionary_tablespace(datadir_names):
    for zname, (root, members, files) in datadir_names.items():
        n = nm.resolve_names(files)
        m = [x for x in members if x["name"].endswith("/mysql.ibd")][0]["observed"]
        assert n.tables[MYSQL_DD_SPACE_ID] == MYSQL_DD_SPACE_NAME
        in_dd = [t for (space, _), (t, _) in n.indexes.items() if space == MYSQL_DD_SPACE_ID]
        listed = [t for t in m["sdi_tables"] if not t.startswith("... ")]
        assert set(listed) <= set(in_dd)
        # the manifest lists the first 12 table records in SDI order, then "... N more"
        entry = [f for f in files if f.path == "mysql.ibd"][0]
        info = nm.system_info(entry)
        assert info["kind"] == "data_dictionary_tablespace" and info["errors"] == []
        assert info["space_id"] == m["fsp_space_id"]
        assert info["mysqld_version_ids"] == m["sdi_mysqld_version_ids"]
        more = int(re.match(r"\.\.\. (\d+) more", m["sdi_tables"][-1]).group(1))
        if zname == "wl12261_upgrade_80013.zip":
            # the manifest found SDI by scanning for zlib streams and counted a stale copy left in
            # page garbage as well (mysql.character_sets etc. appear twice in the raw pages); the
            # B-tree holds 62 live table records.
            assert info["sdi_tables"] == len(listed) + more - 1
        else:
            assert info["sdi_tables"] == len(listed) + more
        assert len(set(in_dd)) == info["sdi_tables"]


def test_mysql_system_info(datadir_names):
    for zname, (root, members, files) in datadir_names.items():
        by_path = {f.path: f for f in files}
        top = root.name
        for m in members:
            rel = m["name"][len(top) + 1:]
            o = m.get("observed") or {}
            f = by_path.get(rel)
            if f is None:
                continue
            info = nm.system_info(f)
            json.dumps(info)                                   # JSON-able
            if m.get("kind") == "redo":
                assert info["format"] == o["log_format"] and info["creator"] == o["creator"]
            elif rel.startswith("undo_"):
                h = o["page_type_histogram"]
                assert info["kind"] == "undo_tablespace" and info["errors"] == []
                assert info["space_id"] == o["fsp_space_id"]
                assert info["rseg_array"]["version_ok"]
                # every rollback segment header page is a FIL_PAGE_TYPE_SYS page of the undo tablespace
                assert len(info["rseg_array"]["rseg_pages"]) == h["6:SYS"]
                assert info["rollback_segment_headers"]["count"] == h["6:SYS"]
                assert info["undo"]["pages"] == h["2:UNDO_LOG"]
            elif rel == "ibdata1":
                h = o["page_type_histogram"]
                assert info["kind"] == "system_tablespace" and info["errors"] == []
                assert info["space_id"] == 0 and info["pages"] == o["fsp_size_pages"]
                assert info["fsp_flags"] == int(o["fsp_flags_hex"], 16)
                assert info["dictionary"]["source"].startswith("none")
                assert info["undo"]["pages"] == h.get("2:UNDO_LOG", 0)
                assert info["doublewrite"]["magic_ok"] and info["doublewrite"]["repeat_ok"]
            elif rel.endswith(".ibd") and rel != "mysql.ibd":
                assert info is None


def test_mariadb_system_info(sparse_fixtures, inno_manifest):
    root = sparse_fixtures / "innodb" / "datadir16k"
    files = {f.path: f for f in detect(str(root)).files}
    fx = [f for f in inno_manifest["files"] if f["path"] == "datadir16k/ibdata1"][0]
    inst = inno_manifest["instances"]["datadir16k"]
    info = nm.system_info(files["ibdata1"])
    json.dumps(info)
    assert info["errors"] == []
    assert info["space_id"] == fx["pages"]["fsp_header"]["space_id"]
    assert info["pages"] == fx["pages"]["n_pages"]
    assert info["fsp_flags"] == fx["pages"]["fsp_header"]["flags"]
    # innochecksum -S: "Undo page state: 0 active, 5 cached, 0 to_purge, 0 prepared, 0 other"
    states = dict((k, int(v)) for v, k in re.findall(r"(\d+) (\w+)", fx["innochecksum"]["undo_page_state"]))
    mine = info["undo"]["states"]
    assert {k: mine.get(k, 0) for k in states} == states
    assert info["undo"]["pages"] == fx["innochecksum"]["page_type_counts"]["Undo log page"]
    # innodb_undo_tablespaces=0: all 128 rollback segments (TRX_SYS_N_RSEGS) live in ibdata1
    assert inst["variables"]["innodb_undo_tablespaces"] == 0
    assert len(info["trx_sys"]["rollback_segments"]) == 128
    assert info["rollback_segment_headers"]["count"] == 128
    assert info["undo"]["rollback_segments_in_undo_tablespaces"] == 0
    # innodb_doublewrite=ON: two blocks of FSP_EXTENT_SIZE pages (buf0dblwr.cc)
    assert inst["variables"]["innodb_doublewrite"] == "ON"
    dw = info["doublewrite"]
    assert dw["magic_ok"] and dw["repeat_ok"] and dw["space_id_stored"]
    assert dw["block2"] == dw["block1"] + dw["pages_per_block"] == dw["block1"] + 64
    h = info["dictionary_header"]
    assert (h["tables_root"], h["indexes_root"]) == (8, 11)
    assert info["dictionary"]["tables"] == 11 and info["dictionary"]["indexes"] == 20
    r = nm.system_info(files["ib_logfile0"])
    assert r["format_name"] == "MariaDB FORMAT_10_8" and r["checkpoint_lsn"] == max(
        c["lsn"] for c in r["checkpoints"])
    assert nm.system_info(files["fx/t_access.ibd"]) is None
    assert nm.system_info(files["fx/t_access.frm"]) is None


def test_system_info_bad_files(tmp_path):
    zero = tmp_path / "ibdata1"
    zero.write_bytes(bytes(16384 * 8))
    info = nm.system_info(FileEntry("ibdata1", str(zero), "innodb", "system_tablespace"))
    assert info["errors"] == ["ibdata1 page 7: dictionary header page is all zeros",
                              "ibdata1 page 5: TRX_SYS page is all zeros"]
    short = tmp_path / "ib_logfile0"
    short.write_bytes(b"\0\0\0\x01")
    info = nm.system_info(FileEntry("ib_logfile0", str(short), "innodb", "redo_log"))
    assert info == {"kind": "redo_log", "errors": [
        "ib_logfile0 @ offset 0: truncated redo log header (4 bytes, need 512)"]}
    n = nm.resolve_names([FileEntry("ibdata1", str(zero), "innodb", "system_tablespace")])
    assert n.errors == ["ibdata1 page 0: not an FSP header page (page type 0)"]
    assert (n.tables, n.indexes, n.source) == ({}, {}, "")


def test_space_id_clashes_are_reported(sparse_fixtures, mysql_manifest):
    """innodb-mysql mixes files of many servers: space ids repeat.  The clash is reported,
    with as many ambiguous space ids as the manifest's own observations show."""
    n = nm.resolve_names(detect(str(sparse_fixtures / "innodb-mysql")).files)
    by_space: dict[int, set[str]] = {}
    for e in mysql_manifest["files"]:
        for o in e["observed"].get("sdi") or []:
            if o["type"] == "Tablespace":
                by_space.setdefault(e["observed"]["fsp_space_id"], set()).add(o["name"])
    want = sum(1 for v in by_space.values() if len(v) > 1)
    msgs = [x for x in n.errors if "claimed by more than one tablespace" in x]
    assert len(msgs) == 1 and msgs[0].startswith(f"{want} space id(s) are claimed")
    assert want == 6

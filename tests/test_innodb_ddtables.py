"""MySQL 8 data dictionary tables read from mysql.ibd (parsers/innodb/ddtables.py).

Ground truth: the three MySQL data directories of innodb-mysql (8.0.13, 8.0.16, 8.4.8, unzipped
into tmp).  Two independent stores must agree: every tablespace's own SDI (what
``names.file_names_from_sdi`` reads from the file) and mysql.ibd's ``mysql.tablespaces`` /
``tables`` / ``indexes`` / ``index_partitions`` records (what ddtables reads from the B-trees).
Every tablespace the manifest lists (``observed`` members, FSP space id) is in the dictionary;
the encrypted ones (no readable SDI) are named by it as their paths and the source's DDL
(upgrade_schema.test: i2, i_part2 partitions, i_ts3 in ts3) say.
"""
from __future__ import annotations

import json
import zipfile

import pytest

from dbxray.parsers.detect import detect
from dbxray.parsers.innodb import ddtables as ddt
from dbxray.parsers.innodb import names as nm

DATADIR_ZIPS = ("data_80016.zip", "mysql_inplace_upgrade84_lctn0.zip", "wl12261_upgrade_80013.zip")


@pytest.fixture(scope="module")
def datadirs(fixtures_root, tmp_path_factory):
    manifest = json.loads((fixtures_root / "innodb-mysql" / "manifest.json").read_text())
    out = tmp_path_factory.mktemp("ddt")
    res = {}
    for e in manifest["files"]:
        name = e["path"].rsplit("/", 1)[-1]
        if name not in DATADIR_ZIPS:
            continue
        members = e["observed"]["members"]
        with zipfile.ZipFile(fixtures_root / "innodb-mysql" / e["path"]) as z:
            for m in members:
                if m.get("kind") == "tablespace":
                    z.extract(m["name"], out / name)
        top = members[0]["name"].split("/", 1)[0]
        root = out / name / top
        res[name] = (nm.resolve_names(detect(str(root)).files),
                     {m["name"][len(top) + 1:]: m["observed"] for m in members if m.get("kind") == "tablespace"})
    return res


def test_dictionary_agrees_with_every_sdi(datadirs):
    checked_idx = checked_ts = want_ts = 0
    for zname, (n, observed) in datadirs.items():
        # every readable tablespace but ibdata1 (whose SDI holds no tablespace record) and the undo
        # tablespaces (no SDI) is compared
        want_ts += sum(1 for p, o in observed.items()
                       if not o["has_encrypted_pages"] and p != "ibdata1" and not p.startswith("undo_"))
        assert list(n.dd) == [""], zname                      # mysql.ibd at the data dir root
        dd = n.dd[""]
        assert dd.errors == [] and all(dd.rows[t] > 0 for t in ("tablespaces", "schemata", "tables", "indexes"))
        for path, fn in n.by_file.items():
            if fn.space_id is None:
                continue
            ds = dd.spaces[fn.space_id]
            if fn.tablespace is not None:
                assert ds.name == fn.tablespace and ds.shared == fn.shared, (zname, path)
                checked_ts += 1
            for (space, iid), v in fn.indexes.items():
                assert dd.spaces[space].indexes[iid] == v, (zname, path, iid)
                checked_idx += 1
            own_tables = {t for (sp, _), (t, _) in fn.indexes.items() if sp == fn.space_id}
            if own_tables:
                assert set(ds.tables) == own_tables, (zname, path)
        # mysql.ibd: its SDI and its dictionary tables list exactly the same indexes
        own = {iid: v for (sp, iid), v in n.by_file["mysql.ibd"].indexes.items() if sp == ddt.DD_SPACE_ID}
        assert dd.spaces[ddt.DD_SPACE_ID].indexes == own and len(own) > 100
    assert checked_ts == want_ts == 28 and checked_idx > 400


def test_every_tablespace_is_in_the_dictionary(datadirs):
    n_enc = 0
    for zname, (n, observed) in datadirs.items():
        dd = n.dd[""]
        for path, o in observed.items():
            ds = dd.spaces[o["fsp_space_id"]]
            if path == "mysql.ibd":
                assert ds.name == "mysql" and ds.shared
                continue
            if path == "ibdata1":
                assert ds.name == "innodb_system" and ds.shared and ds.tables == []
                continue
            if path.startswith("undo_"):
                assert ds.name == f"innodb_undo_{path[5:]}" and ds.tables == []
                continue
            if "/" in path:                                     # file per table
                assert ds.name.lower() == path[:-4].lower() and not ds.shared, (zname, path)
                assert ds.tables == [path[:-4].replace("/", ".", 1)]
            else:                                               # general tablespace
                assert ds.name == path[:-4] and ds.shared
            if o["has_encrypted_pages"]:
                n_enc += 1
                want = {"ts3.ibd": ["db1.i_ts3"]}.get(path, [path[:-4].replace("/", ".", 1)])
                assert ds.tables == want and len(ds.indexes) == 1
                assert list(ds.indexes.values())[0] == (want[0], "PRIMARY")
    assert n_enc == 5                                           # i2, i_part2 p0..p2, ts3


def test_column_layout_from_the_dd_types():
    c = ddt.DdColumn
    assert ddt.column_spec(c("id", ddt.TYPE_LONGLONG, 20, False, True)).fixed_len == 8
    assert ddt.column_spec(c("n", ddt.TYPE_SHORT, 5, False, True)).fixed_len == 2
    spec = ddt.column_spec(c("name", ddt.TYPE_VARCHAR, 192, False, False))
    assert (spec.fixed_len, spec.big) == (0, False)                # 192 bytes: 1-byte length
    assert ddt.column_spec(c("comment", ddt.TYPE_VARCHAR, 6144, False, False)).big
    assert ddt.column_spec(c("opts", ddt.TYPE_MEDIUM_BLOB, 8, True, False)).big
    assert ddt.column_spec(c("t", ddt.TYPE_TIMESTAMP2, 19, False, False, precision=0)).fixed_len == 4
    assert ddt.column_spec(c("t", ddt.TYPE_DATETIME2, 26, False, False, precision=6)).fixed_len == 8
    assert ddt.column_spec(c("e", ddt.TYPE_ENUM, 33, False, False, n_elements=3)).fixed_len == 1
    assert ddt.column_spec(c("e", ddt.TYPE_ENUM, 33, False, False, n_elements=300)).fixed_len == 2
    # hidden system columns: their SDI length is their size, whatever type they carry
    assert ddt.column_spec(c("DB_TRX_ID", ddt.TYPE_INT24, 6, False, False)).fixed_len == 6
    assert ddt.column_spec(c("DB_ROLL_PTR", ddt.TYPE_LONGLONG, 7, False, False)).fixed_len == 7
    with pytest.raises(ddt.DdError, match="column 'd': dictionary column type 21 is not decoded"):
        ddt.column_spec(c("d", ddt.TYPE_NEWDECIMAL, 10, False, False))

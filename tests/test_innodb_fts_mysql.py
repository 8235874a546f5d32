"""MySQL 8 FULLTEXT aux tables (issue 15 item 5): ``fts_<table id>_<index id>_index_1..6.ibd``
and ``fts_<table id>_config/deleted/...`` (lower case in MySQL 8) attached by the ids the
indexes' se_private_data give in SDI (``id=..;table_id=..``; a FULLTEXT index has them too,
with root FIL_NULL) or in mysql.ibd's dictionary tables.

The fixture ``innodb-public/sakila/8.0`` (jeremycole/innodb_ruby spec/data) holds
film_text.ibd as MySQL 8.0.40 wrote it (its SDI: table id 1073 = 0x431, FULLTEXT index
idx_title_description 182 = 0xb6, space 11) beside the 11 aux files of an earlier film_text:
``fts_0000000000000451_00000000000000f1_*`` (table id 1105, index 241), which innodb_ruby
committed with MySQL 8.0.33 (commit e3dbd58, whose film_text.ibd's SDI says table id 1105,
FULLTEXT index 241, space 42) and did not replace when it moved to 8.0.40 (commit 8bbd8c2).
So the truth for this folder: the aux files are orphans, and film_text's own aux tables are
absent."""
from __future__ import annotations

import shutil

from dbxray.parsers.detect import detect
from dbxray.parsers.innodb import names as nm
from dbxray.parsers.scan import scan

AUX_IDS = (0x451, 0xF1)            # in the aux files' names
FILM_TEXT_IDS = (1073, 182)        # film_text.ibd's SDI


def _sakila(root):
    return root / "innodb-public" / "sakila" / "8.0"


def test_ids_from_sdi(fixtures_root):
    n = nm.resolve_names(detect(str(_sakila(fixtures_root))).files)
    assert n.table_ids[1073] == "sakila.film_text"
    assert n.index_ids[182] == ("sakila.film_text", "idx_title_description")
    assert n.index_ids[175] == ("sakila.film_text", "PRIMARY")
    assert n.fulltext == {182: (1073, "sakila.film_text", "idx_title_description")}
    assert AUX_IDS[0] not in n.table_ids and AUX_IDS[1] not in n.index_ids
    # every index of the other tables too (e.g. actor: table id 1064, indexes 154/155)
    assert n.table_ids[1064] == "sakila.actor" and n.index_ids[155] == ("sakila.actor", "idx_actor_last_name")


def test_orphan_aux_files_not_attached_and_missing_ones_named(fixtures_root):
    ds = scan(str(_sakila(fixtures_root)))
    files = {f.path: f for f in ds.files}
    aux = {p: f for p, f in files.items() if "/fts_" in p}
    assert len(aux) == 11
    for p, f in aux.items():
        fts = f.sections["innodb"]["fts"]
        assert (fts["table_id"], fts["table"]) == (AUX_IDS[0], None), p
        assert fts["index_id"] == (AUX_IDS[1] if "_index_" in p else None)
        assert any("table id 1105 (0x451)" in w and "not attached" in w for w in f.warnings), f.warnings
        assert f.table != "film_text"
    ft = files["sakila/film_text.ibd"]
    assert "fulltext" not in ft.sections["innodb"]
    assert any("idx_title_description (index id 182)" in w and "table id 1073" in w and
               "fts_0000000000000431_00000000000000b6_index_1..6" in w for w in ft.warnings), ft.warnings
    others = [w for p, f in files.items() if p not in aux and p != "sakila/film_text.ibd" for w in f.warnings
              if "FULLTEXT" in w]
    assert others == []


def test_aux_files_attached_by_the_sdi_ids(fixtures_root, tmp_path):
    """The attachment itself: the fixture's aux files copied under the names film_text.ibd's
    SDI ids give (fts_0000000000000431_00000000000000b6_*, as MySQL 8.0.40 names film_text's
    aux tables; innodb_ruby's 8.4 copy has files of exactly these names): listed under
    sakila.film_text, their bytes and pages under idx_title_description (index id 182) and
    the table's common aux tables."""
    src = _sakila(fixtures_root) / "sakila"
    dst = tmp_path / "8.0" / "sakila"
    dst.mkdir(parents=True)
    shutil.copy(src / "film_text.ibd", dst)
    for f in src.glob("fts_*.ibd"):
        shutil.copy(f, dst / f.name.replace("0000000000000451", "0000000000000431")
                    .replace("00000000000000f1", "00000000000000b6"))
    ds = scan(str(tmp_path / "8.0"))
    files = {f.path: f for f in ds.files}
    aux = [f for p, f in files.items() if "/fts_" in p]
    assert len(aux) == 11
    for f in aux:
        fts = f.sections["innodb"]["fts"]
        assert (fts["table"], fts["table_id"], f.database, f.table) == ("sakila.film_text", 1073, "sakila",
                                                                           "film_text"), f.path
        if fts["index_id"] is not None:
            assert (fts["index_id"], fts["index"]) == (182, "idx_title_description")
        assert not any("FULLTEXT" in w for w in f.warnings)
    ft = files["sakila/film_text.ibd"]
    full = ft.sections["innodb"]["fulltext"]
    idx_files = [f for f in aux if "_index_" in f.path]
    common = [f for f in aux if "_index_" not in f.path]
    assert [(i["index_id"], i["name"], i["aux_tables"]) for i in full["indexes"]] == \
        [(182, "idx_title_description", 6)]
    assert full["indexes"][0]["aux_bytes"] == sum(f.apparent_bytes for f in idx_files)
    assert full["indexes"][0]["aux_pages"] == sum(f.sections["innodb"]["pages"] for f in idx_files)
    assert full["common"]["aux_tables"] == 5
    assert full["common"]["aux_bytes"] == sum(f.apparent_bytes for f in common)
    assert not any("FULLTEXT" in w for w in ft.warnings)
    table = next(t for t in ds.tables if t.engine == "innodb" and (t.database, t.name) == ("sakila", "film_text"))
    assert sorted(table.files) == sorted(files)


def test_fulltext_ids_from_mysql_ibd_dictionary(fixtures_root, tmp_path):
    """mysql.ibd's dictionary tables give table and index ids too (the 8.4 data dir: 75
    tables' ids from mysql.indexes' se_private_data, equal to the ids their SDI gives)."""
    import zipfile
    z = fixtures_root / "innodb-mysql" / "mysql-std_data" / "datadirs" / "mysql_inplace_upgrade84_lctn0.zip"
    with zipfile.ZipFile(z) as zf:
        zf.extract("data/mysql.ibd", tmp_path)
    from dbxray.parsers.innodb import ddtables, sdi
    from dbxray.parsers.innodb.sysfile import SpaceFile
    with SpaceFile(str(tmp_path / "data" / "mysql.ibd"), "mysql.ibd") as s:
        info = sdi.read_sdi(s)
        dd = ddtables.read_dd_names(s, info)
    by_sdi = nm.Names({}, {}, "")
    for t in info.tables:
        nm.ids_from_sdi(t, by_sdi)
    assert len(dd.table_ids) > 50 and dd.fulltext == {}
    # the dictionary tables themselves are described by mysql.ibd's own SDI: the same ids
    common = set(by_sdi.index_ids) & set(dd.index_ids)
    assert len(common) >= 20
    assert all(by_sdi.index_ids[i] == dd.index_ids[i] for i in common)
    assert all(dd.table_ids[t] == by_sdi.table_ids[t] for t in set(by_sdi.table_ids) & set(dd.table_ids))

"""ibdata1 data dictionary (DICT_HDR, SYS_TABLES/INDEXES/COLUMNS/FIELDS) and the
record walker, against information_schema recorded by MariaDB 10.11 in
../shared/fixtures/innodb/manifest.json (datadir16k)."""
from __future__ import annotations

import json
import shutil
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbxray.parsers.innodb import index as ix
from dbxray.parsers.innodb import records as rec
from dbxray.parsers.innodb import sysdict
from dbxray.parsers.innodb.sysfile import PageError, SpaceFile

P = 16384


@pytest.fixture(scope="module")
def manifest(sparse_fixtures):
    return json.loads((sparse_fixtures / "innodb" / "manifest.json").read_text())


@pytest.fixture(scope="module")
def ibdata1(sparse_fixtures):
    return sparse_fixtures / "innodb" / "datadir16k" / "ibdata1"


@pytest.fixture(scope="module")
def dictionary(ibdata1):
    with SpaceFile(str(ibdata1), "datadir16k/ibdata1") as s:
        return sysdict.read_dictionary(s)


def _is_rows(manifest):
    """information_schema of every datadir16k tablespace that MariaDB listed."""
    return [f["information_schema"] for f in manifest["files"]
            if f["path"].startswith("datadir16k/") and "INNODB_SYS_TABLES" in f.get("information_schema", {})]


def test_dictionary_reads_without_errors(dictionary):
    assert dictionary.errors == []
    assert dictionary.has_sys_tables
    assert dictionary.header is not None


def test_sys_tables_match_information_schema(dictionary, manifest):
    by_name = {t.name: t for t in dictionary.tables}
    rows = _is_rows(manifest)
    assert len(rows) == 8
    for isr in rows:
        row = isr["INNODB_SYS_TABLES"]
        t = by_name[row["NAME"]]
        assert t.id == row["TABLE_ID"]
        assert t.space == row["SPACE"]
        assert t.type == row["FLAG"]
        # INNODB_SYS_TABLES.N_COLS is dict_table_t::n_cols, which adds DB_ROW_ID, DB_TRX_ID, DB_ROLL_PTR
        assert t.n_cols + sysdict.DATA_N_SYS_COLS == row["N_COLS"]
        assert t.row_format == row["ROW_FORMAT"]
        assert t.zip_page_size == row["ZIP_PAGE_SIZE"]


def test_sys_indexes_match_information_schema(dictionary, manifest):
    by_id = {i.id: i for i in dictionary.indexes}
    n = 0
    for isr in _is_rows(manifest):
        for row in isr["INNODB_SYS_INDEXES"]:
            i = by_id[row["INDEX_ID"]]
            assert i.name == row["NAME"]
            assert i.table_id == row["TABLE_ID"]
            assert i.type == row["TYPE"]
            assert i.n_fields == row["N_FIELDS"]
            assert i.page_no == row["PAGE_NO"]
            assert i.space == row["SPACE"]
            assert i.merge_threshold == row["MERGE_THRESHOLD"]
            n += 1
    assert n == 15
    # every SYS_INDEXES row of a file-per-table space is one information_schema listed
    user = [i for i in dictionary.indexes if i.space != 0]
    assert len(user) == n


def test_sys_columns_and_fields_match_information_schema(dictionary, manifest):
    cols = {(c.table_id, c.pos): c for c in dictionary.columns}
    flds = {(f.index_id, f.pos): f for f in dictionary.fields}
    for isr in _is_rows(manifest):
        for row in isr["INNODB_SYS_COLUMNS"]:
            c = cols[(row["TABLE_ID"], row["POS"])]
            assert (c.name, c.mtype, c.prtype, c.len) == (row["NAME"], row["MTYPE"], row["PRTYPE"], row["LEN"])
        for row in isr["INNODB_SYS_FIELDS"]:
            assert flds[(row["INDEX_ID"], row["POS"])].col_name == row["NAME"]
        tid = isr["INNODB_SYS_TABLES"]["TABLE_ID"]
        assert len([c for c in dictionary.columns if c.table_id == tid]) == len(isr["INNODB_SYS_COLUMNS"])


def test_dict_header_counters(dictionary, manifest):
    """DICT_HDR holds the latest assigned ids; nothing was dropped in datadir16k."""
    rows = _is_rows(manifest)
    h = dictionary.header
    assert h.table_id == max(r["INNODB_SYS_TABLES"]["TABLE_ID"] for r in rows)
    assert h.index_id == max(i["INDEX_ID"] for r in rows for i in r["INNODB_SYS_INDEXES"])
    assert h.max_space_id == max(r["INNODB_SYS_TABLES"]["SPACE"] for r in rows)
    # the SYS_* roots are INDEX pages of the dictionary's own index ids (dict0boot.h DICT_*_ID)
    fx = [f for f in manifest["files"] if f["path"] == "datadir16k/ibdata1"][0]
    ids = {e["index_id"] for e in fx["innochecksum"]["index_summary"]}
    assert {sysdict.DICT_TABLES_ID, sysdict.DICT_COLUMNS_ID, sysdict.DICT_INDEXES_ID,
            sysdict.DICT_FIELDS_ID, sysdict.DICT_TABLE_IDS_ID} <= ids


def test_system_tables_of_mariadb(dictionary):
    """SYS_FOREIGN, SYS_FOREIGN_COLS, SYS_VIRTUAL live in space 0 with their indexes listed by innochecksum."""
    sys_tables = {t.name for t in dictionary.tables if t.space == 0}
    assert sys_tables == {"SYS_FOREIGN", "SYS_FOREIGN_COLS", "SYS_VIRTUAL"}


# -- bad input ------------------------------------------------------------------

def _copy(ibdata1, tmp_path):
    dst = tmp_path / "ibdata1"
    shutil.copyfile(ibdata1, dst)
    return dst


def _patch(path, offset, data):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def test_zeroed_dictionary_header_page(ibdata1, tmp_path):
    p = _copy(ibdata1, tmp_path)
    _patch(p, 7 * P, bytes(P))
    with SpaceFile(str(p), "ibdata1") as s:
        d = sysdict.read_dictionary(s)
    assert d.header is None and d.tables == []
    assert d.errors == ["ibdata1 page 7: dictionary header page is all zeros"]


def test_zeroed_sys_tables_root_keeps_other_trees(ibdata1, tmp_path, dictionary):
    p = _copy(ibdata1, tmp_path)
    root = dictionary.header.tables_root
    _patch(p, root * P, bytes(P))
    with SpaceFile(str(p), "ibdata1") as s:
        d = sysdict.read_dictionary(s)
    assert d.tables == []
    assert d.errors == [f"ibdata1 SYS_TABLES page {root}: B-tree page is all zeros"]
    assert len(d.indexes) == len(dictionary.indexes)           # partial results
    assert len(d.columns) == len(dictionary.columns)


def test_looping_record_list_is_named(ibdata1, tmp_path, dictionary):
    p = _copy(ibdata1, tmp_path)
    root = dictionary.header.indexes_root
    page = bytearray(open(p, "rb").read()[root * P:(root + 1) * P])
    origins = rec.walk_record_list(bytes(page), compact=False)
    # point the third record back at the first: a loop
    struct.pack_into(">H", page, origins[2] - rec.REC_NEXT, origins[0])
    _patch(p, root * P, bytes(page))
    with SpaceFile(str(p), "ibdata1") as s:
        d = sysdict.read_dictionary(s)
    assert d.errors == [f"ibdata1 SYS_INDEXES page {root}: record list loops back to offset {origins[0]}"]
    assert d.indexes == []
    assert len(d.tables) == len(dictionary.tables)


def test_truncated_ibdata1(ibdata1, tmp_path):
    p = tmp_path / "ibdata1"
    p.write_bytes(open(ibdata1, "rb").read()[:9 * P + 100])
    with SpaceFile(str(p), "ibdata1") as s:
        d = sysdict.read_dictionary(s)
    assert d.header is not None
    assert "ibdata1 page 7: SYS_INDEXES root page 11 is outside the file" in d.errors
    assert len(d.tables) == 11                                  # SYS_TABLES (page 8) still read


def test_not_an_innodb_file(tmp_path):
    p = tmp_path / "x"
    p.write_bytes(b"hello")
    with pytest.raises(PageError, match="x page 0: file of 5 bytes is too short"):
        SpaceFile(str(p), "x")


# -- fuzz: the record walker never crashes, never loops -------------------------------

@pytest.fixture(scope="module")
def leaf_page(ibdata1, dictionary):
    root = dictionary.header.columns_root
    with open(ibdata1, "rb") as f:
        f.seek(root * P)
        return f.read(P)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(94, P - 9), st.integers(0, 255)), min_size=1, max_size=40),
       st.booleans())
def test_fuzz_record_walker(leaf_page, edits, compact):
    page = bytearray(leaf_page)
    for off, val in edits:
        page[off] = val
    page = bytes(page)
    try:
        origins = rec.walk_record_list(page, compact=compact)
    except rec.RecordError:
        return
    assert len(origins) <= rec.MAX_RECORDS_PER_PAGE
    for o in origins:
        try:
            if compact:
                rec.read_new_record(page, o, [rec.ColumnSpec("a", 4), rec.ColumnSpec("b", 0, True, True)])
            else:
                r = rec.read_old_record(page, o)
                for f in r.fields:
                    assert 0 <= f.start and f.start + f.length <= len(page)
                sysdict.parse_sys_columns_record(page, o)
        except rec.RecordError:
            pass


@settings(max_examples=100, deadline=None)
@given(st.binary(min_size=0, max_size=600))
def test_fuzz_random_pages(blob):
    page = (blob + bytes(1024))[:1024]
    for compact in (False, True):
        try:
            rec.walk_record_list(page, compact=compact)
        except rec.RecordError:
            pass
    try:
        rec.read_index_page_header(page)
    except rec.RecordError:
        pass


def test_btree_walk_is_bounded(leaf_page):
    """A node-pointer page whose children point back at itself: reported, no hang."""
    page = bytearray(leaf_page)
    struct.pack_into(">H", page, ix.PAGE_HEADER + ix.PAGE_LEVEL, 1)     # pretend non-leaf
    page = bytes(page)
    index_id = rec.read_index_page_header(page).index_id
    n = len(rec.walk_record_list(page, compact=False))
    errors: list[str] = []
    leaves = rec.walk_btree(lambda no: page, 10, (17855,), index_id, lambda p, o, c: 10,
                            max_pages=100, errors=errors, where="x")
    assert leaves == []
    assert errors == ["x page 10: node pointer to page 10, already visited (loop)"] * n
    # children that are all different but never end: the page budget stops the walk
    counter = iter(range(11, 10 ** 6))
    errors = []
    leaves = rec.walk_btree(lambda no: page, 10, (17855,), None, lambda p, o, c: next(counter),
                            max_pages=50, errors=errors, where="x")
    assert leaves == [] and any("walk stopped after 50 pages" in e for e in errors)

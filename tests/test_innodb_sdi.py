"""MySQL 8 SDI: table, columns, indexes with their ids and root pages, space id.

Ground truth: ibdNinja's golden outputs recorded in
../shared/fixtures/innodb-mysql/manifest.json (``expected``), the manifest's
independent SDI observations (``observed.sdi``), and the public sakila schema
(sakila-schema.sql, MySQL documentation) for innodb-public/sakila/8.0.
"""
from __future__ import annotations

import json
import re
import shutil
import struct
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbxray.parsers.innodb import records as rec
from dbxray.parsers.innodb import sdi
from dbxray.parsers.innodb.fil import FIL_PAGE_COMPRESSED, FIL_PAGE_SDI, FIL_PAGE_SDI_BLOB
from dbxray.parsers.innodb.sysfile import PageError, SpaceFile

P = 16384

#: sakila-schema.sql (MySQL sakila sample database, 8.0 version): the indexes of each
#: table present in innodb-public/sakila/8.0 (payment and rental are not in the fixture).
SAKILA_INDEXES = {
    "actor": ["PRIMARY", "idx_actor_last_name"],
    "address": ["PRIMARY", "idx_fk_city_id", "idx_location"],
    "category": ["PRIMARY"],
    "city": ["PRIMARY", "idx_fk_country_id"],
    "country": ["PRIMARY"],
    "customer": ["PRIMARY", "idx_fk_store_id", "idx_fk_address_id", "idx_last_name"],
    "film": ["PRIMARY", "idx_title", "idx_fk_language_id", "idx_fk_original_language_id"],
    "film_actor": ["PRIMARY", "idx_fk_film_id"],
    "film_category": ["PRIMARY", "fk_film_category_category"],
    "film_text": ["PRIMARY", "idx_title_description"],
    "inventory": ["PRIMARY", "idx_fk_film_id", "idx_store_id_film_id"],
    "language": ["PRIMARY"],
    "staff": ["PRIMARY", "idx_fk_store_id", "idx_fk_address_id"],
    "store": ["PRIMARY", "idx_unique_manager", "idx_fk_address_id"],
}


@pytest.fixture(scope="module")
def mysql_dir(sparse_fixtures) -> Path:
    return sparse_fixtures / "innodb-mysql"


@pytest.fixture(scope="module")
def mysql_manifest(mysql_dir):
    return json.loads((mysql_dir / "manifest.json").read_text())


def read(path: Path, display: str | None = None) -> sdi.SdiInfo:
    with SpaceFile(str(path), display or path.name) as s:
        return sdi.read_sdi(s)


def _expected_lists(entry):
    return [e["value"] for e in entry["expected"]
            if isinstance(e.get("value"), dict) and "indexes" in e["value"] and "tables" in e["value"]]


def test_ibdninja_golden_outputs(mysql_dir, mysql_manifest):
    """space id, SDI root, table id + name, index id / root / name as ibdNinja prints them."""
    checked = 0
    for entry in mysql_manifest["files"]:
        for exp in _expected_lists(entry):
            info = read(mysql_dir / entry["path"])
            assert info.errors == [], entry["path"]
            assert info.space_id == exp["space_id"]
            assert info.root_page == exp["sdi_root_page"]
            assert [[str(t.indexes[0].table_id), t.full_name] for t in info.tables] == exp["tables"]
            mine = {i.id: i for t in info.tables for i in t.indexes}
            for e in exp["indexes"]:
                assert (mine[e["id"]].root, mine[e["id"]].name) == (e["root_page"], e["name"])
            # ibdNinja lists plain B-tree indexes only: not FULLTEXT / SPATIAL (dd::Index::enum_index_type
            # IT_FULLTEXT = 4, IT_SPATIAL = 5 in sql/dd/types/index.h) nor indexes on virtual columns
            btree = {i for i, x in mine.items() if x.type in (1, 2, 3) and not x.on_virtual_column}
            assert btree == {e["id"] for e in exp["indexes"]}
            checked += 1
    assert checked == 14


_OBS_COLUMN = re.compile(r"^(\S+) (.*?)(?: \[hidden=(\d+)\])?(?: \{(.*)\})?$")


def _columns(t: sdi.SdiTable, dd: dict) -> list[tuple]:
    """(name, type, hidden) of each column, as the manifest's observed strings hold them."""
    return [(c.name, c.column_type_utf8, c.hidden) for c in t.columns]


def _parse_observed_columns(cols: list[str], dd: dict) -> list[tuple]:
    """Observed "name type [hidden=N] {se_private_data}" strings -> (name, type, hidden).

    Where the observation carries se_private_data it must equal the column's in the SDI."""
    out = []
    by_name = {c["name"]: c for c in dd.get("columns", [])}
    for s in cols:
        m = _OBS_COLUMN.match(s)
        name, ctype, hidden, se = m.group(1), m.group(2), m.group(3), m.group(4)
        if se is not None and name in by_name:
            assert by_name[name].get("se_private_data") == se, s
        out.append((name, ctype, int(hidden) if hidden else 1))
    return out


def _observed_table(t: sdi.SdiTable, rec_json: dict) -> dict:
    dd = rec_json["dd_object"]
    return {"type": "Table", "name": t.name, "mysqld_version_id": t.mysqld_version_id, "schema": t.schema,
            "row_format_dd_enum": dd.get("row_format"), "options": dd.get("options"),
            "se_private_data": dd.get("se_private_data"), "columns": _columns(t, dd),
            "indexes": [{"name": i.get("name"), "se_private_data": i.get("se_private_data")}
                        for i in dd.get("indexes", [])]}


def test_sdi_matches_manifest_observations(mysql_dir, mysql_manifest):
    """Every file whose SDI the manifest observed: same tablespace and table records, field by field.

    The manifest found SDI by locating zlib streams, so it also lists stale copies of a table
    record left in page garbage after ALTERs; the live record must be one of them.
    """
    n_files = 0
    for entry in mysql_manifest["files"]:
        obs = entry["observed"].get("sdi")
        if not obs:
            continue
        info = read(mysql_dir / entry["path"])
        assert info.errors == [], entry["path"]
        ts_obs = [o for o in obs if o["type"] == "Tablespace"]
        ts_mine = [r for r in info.records if r.type == sdi.SDI_TYPE_TABLESPACE]
        assert len(ts_mine) == len(ts_obs) == 1
        dd = ts_mine[0].json["dd_object"]
        assert {"type": "Tablespace", "name": dd["name"], "mysqld_version_id": ts_mine[0].json["mysqld_version_id"],
                "se_private_data": dd["se_private_data"], "options": dd["options"]} == ts_obs[0]
        assert info.tablespaces[0].space_id == info.space_id == entry["observed"]["fsp_space_id"]
        t_obs = [o for o in obs if o["type"] == "Table"]
        t_recs = [r for r in info.records if r.type == sdi.SDI_TYPE_TABLE]
        assert len(t_recs) == len(info.tables) == min(1, len(t_obs))
        if t_recs:
            mine = _observed_table(info.tables[0], t_recs[0].json)
            dd = t_recs[0].json["dd_object"]
            t_obs = [dict(o, columns=_parse_observed_columns(o["columns"], dd)) for o in t_obs]
            if len(t_obs) == 1:
                assert mine == t_obs[0], entry["path"]
            else:
                assert mine in t_obs, entry["path"]
        n_files += 1
    assert n_files == 40          # manifest files with observed SDI (one of them ROW_FORMAT=COMPRESSED)


def test_transparent_compression_sdi_page(mysql_dir):
    """import_compression_8_0_23/t1.ibd: the SDI root is stored as a zlib type-14 page."""
    path = mysql_dir / "mysql-std_data/import_compression_8_0_23/t1.ibd"
    raw = path.read_bytes()[3 * P:4 * P]
    assert struct.unpack_from(">H", raw, 24)[0] == FIL_PAGE_COMPRESSED
    assert struct.unpack_from(">H", raw, sdi.FIL_PAGE_ORIGINAL_TYPE_V1)[0] == FIL_PAGE_SDI
    page = sdi.uncompress_mysql_page(raw, 3)
    assert struct.unpack_from(">H", page, 24)[0] == FIL_PAGE_SDI and len(page) == P
    info = read(path)
    assert [(t.full_name, [(i.name, i.id, i.root) for i in t.indexes]) for t in info.tables] == \
        [("test.t1", [("PRIMARY", 152, 4)])]


def test_page_zip_encrypted_and_pre80(mysql_dir):
    # ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8 (MySQL 9.0.1): SDI found in the page_zip page
    info = read(mysql_dir / "idb-utils/mysql90_compressed.ibd", "mysql90_compressed.ibd")
    assert info.errors == []
    assert [(t.full_name, [(i.name, i.id, i.root, i.space_id) for i in t.indexes]) for t in info.tables] == \
        [("fixtures.compressed", [("PRIMARY", 159, 4, 3)])]
    info = read(mysql_dir / "mysql-std_data/table_encrypted_64/t1.ibd", "t1.ibd")
    assert info.errors == ["t1.ibd page 3: page is encrypted (type 15); not decrypted"]
    assert info.tables == []
    info = read(mysql_dir / "innodb-java-reader/mysql57/simple/tb01.ibd", "tb01.ibd")
    assert info.errors == ["tb01.ibd page 0: no SDI (version 0, root page 0)"]


def test_sakila_80_against_public_schema(sparse_fixtures):
    base = sparse_fixtures / "innodb-public" / "sakila" / "8.0" / "sakila"
    seen = {}
    for name, want in SAKILA_INDEXES.items():
        info = read(base / f"{name}.ibd")
        assert info.errors == []
        assert [t.full_name for t in info.tables] == [f"sakila.{name}"]
        t = info.tables[0]
        visible = [i.name for i in t.indexes if not i.hidden]
        assert visible == want
        assert len(visible) == len(want)
        assert all(i.space_id == info.space_id for i in t.indexes)
        assert [ts.name for ts in info.tablespaces] == [f"sakila/{name}"]
        seen[name] = t
    # FULLTEXT adds InnoDB's hidden FTS_DOC_ID_INDEX; a FULLTEXT index has no B-tree root (FIL_NULL)
    ft = {i.name: i for i in seen["film_text"].indexes}
    assert ft["FTS_DOC_ID_INDEX"].hidden and ft["idx_title_description"].root == 0xFFFFFFFF
    cols = [c.name for c in seen["actor"].columns if c.hidden == 1]
    assert cols == ["actor_id", "first_name", "last_name", "last_update"]
    info = read(sparse_fixtures / "innodb-public" / "sakila" / "8.0" / "sys" / "sys_config.ibd")
    assert [(t.full_name, [i.name for i in t.indexes]) for t in info.tables] == [("sys.sys_config", ["PRIMARY"])]


# -- bad input -------------------------------------------------------------------

@pytest.fixture()
def actor_copy(sparse_fixtures, tmp_path):
    dst = tmp_path / "actor.ibd"
    shutil.copyfile(sparse_fixtures / "innodb-public" / "sakila" / "8.0" / "sakila" / "actor.ibd", dst)
    return dst


def _table_record(path):
    page = path.read_bytes()[3 * P:4 * P]
    for o in rec.walk_record_list(page, compact=True):
        r = rec.read_new_record(page, o, sdi.SDI_LEAF_COLUMNS)
        if struct.unpack_from(">I", page, o)[0] == sdi.SDI_TYPE_TABLE:
            return page, o, r
    raise AssertionError("no table record")


def _patch(path, offset, data):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def test_corrupt_sdi_record_is_named(actor_copy):
    page, o, r = _table_record(actor_copy)
    f = r.fields[6]
    _patch(actor_copy, 3 * P + f.start + 10, b"\xff" * 16)            # garble the zlib stream
    info = read(actor_copy, "actor.ibd")
    assert len(info.errors) == 1
    assert info.errors[0].startswith(f"actor.ibd page 3 offset {o} (SDI type 1 id ")
    assert "SDI data does not inflate" in info.errors[0] or "SDI is not JSON" in info.errors[0]
    assert info.tables == [] and [t.name for t in info.tablespaces] == ["sakila/actor"]   # the rest is read


def test_sdi_length_bomb_is_capped(actor_copy):
    page, o, r = _table_record(actor_copy)
    _patch(actor_copy, 3 * P + o + sdi.REC_OFF_DATA_UNCOMP_LEN, struct.pack(">I", 0x7FFFFFFF))
    info = read(actor_copy, "actor.ibd")
    assert len(info.errors) == 1 and "over the cap" in info.errors[0] and f"page 3 offset {o}" in info.errors[0]
    _patch(actor_copy, 3 * P + o + sdi.REC_OFF_DATA_UNCOMP_LEN, struct.pack(">I", 100))
    info = read(actor_copy, "actor.ibd")
    assert len(info.errors) == 1 and "zlib: claims" in info.errors[0] or "inflates to" in info.errors[0]


def test_zeroed_sdi_root(actor_copy):
    _patch(actor_copy, 3 * P, bytes(P))
    info = read(actor_copy, "actor.ibd")
    assert info.errors == ["actor.ibd SDI page 3: B-tree page is all zeros"]
    assert info.records == []


def test_truncated_tablespace(actor_copy, tmp_path):
    short = tmp_path / "short.ibd"
    short.write_bytes(actor_copy.read_bytes()[:3 * P + 500])
    info = read(short, "short.ibd")
    assert info.errors == ["short.ibd page 0: SDI root page 3 is past the end of the file (3 pages; truncated?)"]


def test_external_sdi_blob_chain(actor_copy):
    """An SDI record stored off-page in FIL_PAGE_SDI_BLOB pages.

    No fixture has one, so it is built here from the layout MySQL's ibd2sdi.cc reads
    (copy_uncompressed_blob: LOB_HDR_PART_LEN / LOB_HDR_NEXT_PAGE_NO at FIL_PAGE_DATA,
    data after LOB_HDR_SIZE; the record keeps a 20-byte BTR_EXTERN reference).
    """
    page, o, r = _table_record(actor_copy)
    f = r.fields[6]
    data = page[f.start:f.start + f.length]
    n_pages = actor_copy.stat().st_size // P
    half = len(data) // 2
    chunks = [data[:half], data[half:]]
    blob_pages = [n_pages, n_pages + 1]
    out = bytearray()
    for i, chunk in enumerate(chunks):
        bp = bytearray(P)
        struct.pack_into(">II", bp, 4, blob_pages[i], 0xFFFFFFFF)
        struct.pack_into(">H", bp, 24, FIL_PAGE_SDI_BLOB)
        nxt = blob_pages[i + 1] if i + 1 < len(chunks) else 0xFFFFFFFF
        struct.pack_into(">II", bp, 38, len(chunk), nxt)
        bp[46:46 + len(chunk)] = chunk
        out += bp
    newpage = bytearray(page)
    ref = struct.pack(">IIIQ", 2, blob_pages[0], 38, len(data))
    newpage[f.start:f.start + 20] = ref
    # the 2-byte length of the data field, with the extern bit (rem0rec.h), right before the null bitmap
    newpage[o - rec.REC_N_NEW_EXTRA_BYTES - 1] = 0x80 | 0x40      # high byte: 2-byte length, extern
    newpage[o - rec.REC_N_NEW_EXTRA_BYTES - 2] = 20                # low byte
    _patch(actor_copy, 3 * P, bytes(newpage))
    with open(actor_copy, "ab") as fh:
        fh.write(out)
    info = read(actor_copy, "actor.ibd")
    assert info.errors == []
    t = [r for r in info.records if r.type == sdi.SDI_TYPE_TABLE][0]
    assert t.external
    assert [i.name for i in info.tables[0].indexes] == ["PRIMARY", "idx_actor_last_name"]
    # a chain that loops back is an error, not a hang
    struct.pack_into(">I", out, P + 42, blob_pages[0])
    with open(actor_copy, "r+b") as fh:
        fh.seek(n_pages * P)
        fh.write(out)
    info = read(actor_copy, "actor.ibd")
    assert len(info.errors) == 1 and "bad or repeated SDI BLOB page" in info.errors[0]


# -- fuzz ---------------------------------------------------------------------------

@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=300), st.integers(0, 1 << 32))
def test_fuzz_sdi_decoder(blob, n):
    for data in (blob, zlib.compress(blob)):
        try:
            obj = sdi.decode_sdi_blob(data, n, "fuzz")
        except sdi.SdiError:
            continue
        assert isinstance(obj, dict)


@pytest.fixture(scope="module")
def sdi_leaf(sparse_fixtures):
    return (sparse_fixtures / "innodb-public" / "sakila" / "8.0" / "sakila" / "film.ibd").read_bytes()[3 * P:4 * P]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(94, P - 9), st.integers(0, 255)), min_size=1, max_size=30))
def test_fuzz_sdi_records(sdi_leaf, edits):
    page = bytearray(sdi_leaf)
    for off, val in edits:
        page[off] = val
    page = bytes(page)

    class Pages:
        class space:
            n_pages = 8

        def __call__(self, page_no):
            raise PageError("fuzz.ibd", page_no, "no such page in the fuzz test")

    try:
        origins = rec.walk_record_list(page, compact=True)
    except rec.RecordError:
        return
    for o in origins:
        try:
            r = sdi.parse_sdi_record(Pages(), page, 3, o, "fuzz.ibd")
            sdi.table_from_sdi(r.json, r.id)
        except (rec.RecordError, sdi.SdiError, PageError):
            pass
        except (TypeError, ValueError, AttributeError):
            pass            # odd JSON shapes: read_sdi reports these as "unexpected SDI JSON shape"


def test_page_zip_bad_pages(mysql_dir, tmp_path):
    src = mysql_dir / "idb-utils/mysql90_compressed.ibd"
    zp = 8192
    p = tmp_path / "z.ibd"
    data = bytearray(src.read_bytes())
    data[3 * zp + 94:3 * zp + 200] = b"\x00" * 106            # garble the start of the zlib stream
    p.write_bytes(bytes(data))
    info = read(p, "z.ibd")
    assert info.errors[0].startswith("z.ibd page 3: compressed page stream does not inflate")
    assert info.errors[-1] == ("z.ibd page 3: no SDI record found in the compressed (page_zip 8192-byte) "
                               "SDI pages")
    data[3 * zp:4 * zp] = bytes(zp)                             # zeroed SDI page
    p.write_bytes(bytes(data))
    info = read(p, "z.ibd")
    assert info.errors == ["z.ibd page 3: no SDI record found in the compressed (page_zip 8192-byte) SDI pages"]


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=400))
def test_fuzz_zip_scan(blob):
    good = zlib.compress(b'{"dd_object": {}}')
    rec_bytes = struct.pack(">IQII", 1, 7, 17, len(good)) + good
    for data in (blob, blob + rec_bytes, rec_bytes + blob):
        out = sdi.scan_zip_sdi_records(data, "fuzz", 3)
        assert all(isinstance(r.json, dict) for r in out)
        if data.endswith(rec_bytes) or data.startswith(rec_bytes):
            assert any((r.type, r.id) == (1, 7) for r in out)

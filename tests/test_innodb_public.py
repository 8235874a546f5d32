"""InnoDB page map on ../shared/fixtures/innodb-public: MySQL 5.7 and 8.0
sakila tablespaces (from jeremycole/innodb_ruby).  No manifest comes with
them: the facts checked are what the files state (FSP header, FIL headers,
crc32c checksums) read here independently with struct, and the public sakila
schema (sakila-schema.sql: B-tree indexes per table; FULLTEXT lives in the FTS
auxiliary tables, SPATIAL is an R-tree).
"""
from __future__ import annotations

import struct
from collections import Counter

import pytest

from dbxray.parsers.scan import scan
from dbxray.parsers.innodb.fil import MYSQL_PAGE_TYPES

#: B-tree / R-tree indexes of each sakila table in the public schema
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
    "film_text": ["PRIMARY", "FTS_DOC_ID_INDEX"],
    "inventory": ["PRIMARY", "idx_fk_film_id", "idx_store_id_film_id"],
    "language": ["PRIMARY"],
    "staff": ["PRIMARY", "idx_fk_store_id", "idx_fk_address_id"],
    "store": ["PRIMARY", "idx_unique_manager", "idx_fk_address_id"],
}
SDI_ID = 0xFFFFFFFFFFFFFFFF


@pytest.fixture(scope="module")
def public(fixtures_root):
    ds = scan(str(fixtures_root / "innodb-public"))
    assert ds.errors == []
    return {f.path: f for f in ds.files if f.engine == "innodb"}


def independent_facts(path):
    """Page count, space id, FSP flags and the FIL type histogram read with struct."""
    data = path.read_bytes()
    space, flags = struct.unpack_from(">I", data, 38)[0], struct.unpack_from(">I", data, 38 + 16)[0]
    n = len(data) // 16384
    hist = Counter(struct.unpack_from(">H", data, i * 16384 + 24)[0] for i in range(n))
    return n, space, flags, hist


def test_every_file_against_its_own_headers(public, fixtures_root):
    assert len(public) == 54
    for path, e in public.items():
        sec = e.sections["innodb"]
        n, space, flags, hist = independent_facts(fixtures_root / "innodb-public" / path)
        assert (sec["pages"], sec["space_id"], sec["fsp_flags"]) == (n, space, flags), path
        assert sec["page_size"] == sec["physical_page_size"] == 16384
        assert sec["page_types"] == {MYSQL_PAGE_TYPES[t]: c for t, c in hist.items()}, path
        assert sec["checksum"]["bad_pages"] == [], path
        if path.startswith("sakila/"):      # MySQL 5.7 / 8.0 write crc32c
            assert sec["checksum"]["algorithm"] == "crc32", path
        assert sec["page_compressed"] is False and sec["page_compressed_pages"] == 0
        assert e.errors == []
        # 8.0 files carry SDI (flag bit 14 and an SDI B-tree), 5.7 files do not
        is80 = path.startswith("sakila/8.0/")
        assert e.detail["innodb"]["page_map"].flags.sdi == is80
        assert (SDI_ID in [ix["index_id"] for ix in sec["indexes"]]) == is80


@pytest.mark.parametrize("version", ["5.7", "8.0"])
def test_sakila_index_count_per_table(public, version):
    for table, names in SAKILA_INDEXES.items():
        e = public[f"sakila/{version}/sakila/{table}.ibd"]
        assert (e.database, e.table) == ("sakila", table)
        idx = [ix for ix in e.sections["innodb"]["indexes"] if ix["index_id"] != SDI_ID]
        assert len(idx) == len(names), table
        assert all(ix["pages"] >= 1 and ix["levels"] >= 1 for ix in idx)
        # the clustered index is the first B-tree created: root page right after the SDI root (8.0) or page 3
        assert min(ix["root_page"] for ix in idx) == (4 if version == "8.0" else 3)


def test_sakila_80_index_names_from_sdi(public):
    for table, names in SAKILA_INDEXES.items():
        e = public[f"sakila/8.0/sakila/{table}.ibd"]
        got = [ix["name"] for ix in sorted(e.sections["innodb"]["indexes"], key=lambda ix: ix["root_page"])
               if ix["index_id"] != SDI_ID]
        if all(g.startswith("index ") for g in got):
            pytest.skip("names.py not present")
        assert sorted(got) == sorted(names), table


def test_spatial_index_is_rtree(public):
    for version in ("5.7", "8.0"):
        sec = public[f"sakila/{version}/sakila/address.ibd"].sections["innodb"]
        assert sec["page_types"]["FIL_PAGE_RTREE"] >= 1

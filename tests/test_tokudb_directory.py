"""dname / iname parsing: the MySQL handler's dictionary names and the engine's file names."""
from __future__ import annotations

import pytest

from dbxray.parsers.tokudb.directory import DictName, directory_map, parse_dname, parse_iname
from test_tokudb_manifest import manifest

ROLE_OF = {"main (clustered PK)": "main", "status/metadata": "status"}


def _role(r: str) -> str:
    return "secondary_index" if r.startswith("secondary key") else ROLE_OF[r]


@pytest.mark.parametrize("f", [f for f in manifest()["files"] if "dname" in f],
                         ids=lambda f: f["dname"])
def test_fixture_names(f):
    db, table = f["table"].split(".")
    d = parse_dname(f["dname"])
    assert (d.database, d.table, d.role) == (db, table, _role(f["role"]))
    i = parse_iname(f["path"].split("/", 1)[1])
    assert (i.database, i.table, i.role) == (db, table, _role(f["role"]))
    if d.role == "secondary_index":
        assert d.index == i.index == f["dname"].split("-key-", 1)[1]


@pytest.mark.parametrize("dname,want", [
    ("./shop/order_items-main", DictName("shop", "order_items", "main")),
    ("./shop/order_items-key-by_status", DictName("shop", "order_items", "secondary_index", "by_status")),
    ("./shop/order_items-key-idx_main", DictName("shop", "order_items", "secondary_index", "idx_main")),
    ("./shop/t-status", DictName("shop", "t", "status")),
    ("tokudb.directory", DictName(None, None, "directory")),
    ("./shop/weird", DictName("shop", "weird", "dictionary")),
])
def test_dnames(dname, want):
    assert parse_dname(dname) == want


@pytest.mark.parametrize("path,want", [
    ("shop/order_items_main_12_1_1d.tokudb", DictName("shop", "order_items", "main")),
    ("shop/order_items_key_by_status_13_1_1d_B_0.tokudb",
     DictName("shop", "order_items", "secondary_index", "by_status")),
    ("_shop_t_status_a_1_1d.tokudb", DictName("shop", "t", "status")),
    ("tokudb.rollback", DictName(None, None, "rollback")),
    ("notes.tokudb", DictName(None, None, "dictionary")),
])
def test_inames(path, want):
    assert parse_iname(path) == want


def test_directory_map_strips_terminators():
    rows = {b"./a/b-main\0": b"_a_b_main_1_1_1d.tokudb\0"}
    assert directory_map(rows) == {"./a/b-main": "_a_b_main_1_1_1d.tokudb"}

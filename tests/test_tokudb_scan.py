"""`dbxray scan` on the TokuDB fixture data directory: the JSON section of every
fractal-tree file, units, tables and payloads, against the manifest."""
from __future__ import annotations

import json
import shutil
from collections import Counter

import numpy as np
import pytest

from dbxray.parsers.model import UNIT_COMPRESSED, UNIT_LEAF
from dbxray.parsers.scan import scan
from dbxray.parsers.tokudb.payloads import unit_payload
from dbxray.parsers.tokudb.x1764 import x1764
from test_tokudb_manifest import manifest, tree_files

FIELDS = ["layout_version", "checkpoint_count", "nodesize", "basementnodesize", "fanout",
          "compression_method", "node_methods", "blocks_in_use", "bytes_in_use", "unused_bytes",
          "height", "leaf_nodes", "nonleaf_nodes", "disk_bytes", "uncompressed_bytes", "per_height",
          "records", "on_disk_numrows", "on_disk_numbytes", "table", "role"]
ROLE_OF = {"main (clustered PK)": "main", "status/metadata": "status"}
METHOD_OF_BYTE = {0x00: "none", 0x07: "snappy", 0x78: "zlib", 0x39: "quicklz", 0x2a: "lzma",
                  0x5b: "zlib_without_checksum"}


def _role(manifest_role: str) -> str:
    return "secondary_index" if manifest_role.startswith("secondary key") else ROLE_OF[manifest_role]


@pytest.fixture(scope="module")
def ds(sparse_fixtures):
    return scan(str(sparse_fixtures / "tokudb" / "datadir"))


def _entry(ds, mpath):
    return ds.file(mpath.split("/", 1)[1])


def test_no_errors_and_json_serialisable(ds):
    assert ds.errors == []
    for f in ds.files_of("tokudb"):
        assert f.errors == [], f.path
    json.dumps(ds.to_json())


@pytest.mark.parametrize("m", tree_files(), ids=[f["path"].rsplit("/", 1)[-1] for f in tree_files()])
def test_section_equals_manifest(ds, m):
    e = _entry(ds, m["path"])
    sec = e.sections["tokudb"]
    assert list(sec) == FIELDS
    eh, s, fr = m["engine_header"], m["tokuftdump_summary"], m["tokuftdump_fragmentation"]
    assert sec["layout_version"] == eh["layout_version"]
    assert sec["checkpoint_count"] == eh["checkpoint_count"]
    assert sec["nodesize"] == eh["nodesize"]
    assert sec["basementnodesize"] == eh["basementnodesize"]
    assert sec["fanout"] == eh["fanout"]
    assert sec["compression_method"] == eh["compression_method"]
    rows = m["tokuftdump_translation_table"]["rows"]
    assert sec["blocks_in_use"] == sum(1 for _, _, size in rows if size > 0)
    assert sec["bytes_in_use"] == fr["used_size"]
    assert sec["unused_bytes"] == fr["fragsizes"]
    assert sec["height"] == s["tree_height"]
    assert sec["leaf_nodes"] == s["leaf_nodes"]
    assert sec["nonleaf_nodes"] == s["nonleaf_nodes"]
    assert sec["disk_bytes"] == s["total_size"]
    assert sec["uncompressed_bytes"] == s["total_uncompressed_size"]
    assert sec["records"] == s["records_count"]
    assert sec["on_disk_numrows"] == eh["on_disk_numrows"]
    assert sec["on_disk_numbytes"] == eh["on_disk_numbytes"]
    assert sec["per_height"] == [{"height": int(k), "nodes": v["nodes"], "disk_bytes": v["disksize"],
                                  "uncompressed_bytes": v["uncompressed_size"]}
                                 for k, v in sorted(s["per_height"].items(), key=lambda kv: int(kv[0]))]
    # node methods: partitions per method byte, from the cross-check
    want = Counter()
    for n in m["fixture_parser_crosscheck"]["nodes"]:
        for p in n["partitions"]:
            want[METHOD_OF_BYTE[p["method_byte"]]] += 1
    assert sec["node_methods"] == dict(want)
    if "table" in m:
        assert sec["table"] == m["table"]
        assert sec["role"] == _role(m["role"])
        assert (e.database, e.table) == tuple(m["table"].split("."))
    else:
        assert sec["table"] is None
        assert sec["role"] == m["path"].rsplit(".", 1)[-1]


@pytest.mark.parametrize("m", tree_files(), ids=[f["path"].rsplit("/", 1)[-1] for f in tree_files()])
def test_units_are_partitions(ds, m):
    e = _entry(ds, m["path"])
    u = e.units
    parts = [(en, p) for en in m["engine_nodes"] for p in en["partitions"]]
    assert len(u) == len(parts)
    cc = {n["blocknum"]: n for n in m["fixture_parser_crosscheck"]["nodes"]}
    want = sorted((en["offset"] + p["start"], p["disk_size"], cp["uncompressed_size"], cp["method_byte"],
                   en["blocknum"], en["height"] == 0)
                  for en in m["engine_nodes"]
                  for p, cp in zip(en["partitions"], cc[en["blocknum"]]["partitions"]))
    got = sorted((int(r["offset"]), int(r["stored"]), int(r["logical"]), int(r["kind"]), int(r["owner"]),
                  bool(r["flags"] & UNIT_LEAF)) for r in u)
    assert got == want
    assert all(bool(r["flags"] & UNIT_COMPRESSED) == (r["kind"] != 0) for r in u)
    assert set(e.kind_names.values()) == set(e.sections["tokudb"]["node_methods"])
    assert set(np.unique(u["owner"]).tolist()) == set(e.owner_names)


@pytest.mark.parametrize("m", tree_files(), ids=[f["path"].rsplit("/", 1)[-1] for f in tree_files()])
def test_unit_payloads_decode(ds, m):
    e = _entry(ds, m["path"])
    for i in range(len(e.units)):
        raw = unit_payload(e, i)
        assert len(raw) == int(e.units[i]["logical"])
        assert x1764(raw[:-4]) == int.from_bytes(raw[-4:], "little")   # inner checksum of the partition
        assert raw[0] == (0xAA if e.units[i]["flags"] & UNIT_LEAF else 0xBB)


def test_tables_grouped_with_roles(ds):
    dicts = [f for f in manifest()["files"] if "table" in f]
    tables = {t.key: t for t in ds.tables if t.engine == "tokudb"}
    assert sorted(tables) == sorted({f["table"] for f in dicts})
    for f in dicts:
        t = tables[f["table"]]
        rel = f["path"].split("/", 1)[1]
        assert rel in t.files
        assert t.info["roles"][rel] == _role(f["role"])
    for key, t in tables.items():
        mine = [f for f in dicts if f["table"] == key]
        assert t.info["apparent_bytes"] == sum(f["apparent_size"] for f in mine)
        assert t.info["allocated_bytes"] == sum(ds.file(p).allocated_bytes for p in t.files)
        assert t.info["bytes_in_use"] == sum(f["tokuftdump_fragmentation"]["used_size"] for f in mine)
        assert t.info["disk_bytes"] == sum(f["tokuftdump_summary"]["total_size"] for f in mine)
        main = next(f for f in mine if _role(f["role"]) == "main")
        keys = [f for f in mine if _role(f["role"]) == "secondary_index"]
        i_s = t.info["information_schema"]
        assert i_s["table_rows"] == main["engine_header"]["on_disk_numrows"]
        assert i_s["data_length"] == main["engine_header"]["on_disk_numbytes"]
        assert i_s["index_length"] == sum(k["engine_header"]["on_disk_numbytes"] for k in keys)
        assert t.info["records_on_disk"] == main["tokuftdump_summary"]["records_count"]


def test_footprint_vs_logical_content(ds):
    """The user's point: the node bytes on disk vs the logical bytes of the rows
    (what information_schema would claim): compressed tables are far smaller."""
    dicts = [f for f in manifest()["files"] if "table" in f]
    for t in ds.tables:
        mine = [f for f in dicts if f["table"] == t.key]
        logical = sum(f["final_logical_content"]["key_bytes"] + f["final_logical_content"]["val_bytes"]
                      for f in mine)
        real = t.info["disk_bytes"]
        if t.key in ("fx.orders", "fx.events"):      # zlib / quicklz / snappy / zlib-raw tables
            assert real * 1.3 < logical, (t.key, real, logical)
        else:                                        # fx.blobs: main stored uncompressed
            assert real > logical * 0.9, (t.key, real, logical)


def test_log_and_lock_files(ds):
    for f in manifest()["files"]:
        e = _entry(ds, f["path"])
        if "log_entries" in f:
            assert e.sections["tokudb"]["log_entries"] == f["log_entries"]
            assert e.sections["tokudb"]["log_version"] == 29
            assert e.sections["tokudb"]["bad_checksums"] == 0
        elif "lock_dont_delete_me" in f["path"]:
            assert e.sections["tokudb"]["role"] == "lock_file"


def test_directory_and_environment_read(ds):
    d = ds.file("tokudb.directory").detail["directory"]
    want = {f["dname"]: f["path"].split("/", 1)[1] for f in manifest()["files"] if "dname" in f}
    assert d == want
    env = ds.file("tokudb.environment").detail["environment"]
    assert env["current_version"] == env["original_version"] == 29
    created = next(f for f in manifest()["files"] if f["path"].endswith("tokudb.environment"))
    assert env["creation_time"] == created["engine_header"]["time_of_creation"]


def test_per_database_layout_without_directory(sparse_fixtures, tmp_path):
    """tokudb_dir_per_db=ON: <db>/<table>_<index>_..._1d.tokudb; grouped from names alone."""
    src = sparse_fixtures / "tokudb" / "datadir"
    (tmp_path / "fx").mkdir()
    dicts = [f for f in manifest()["files"] if "table" in f]
    for f in dicts:
        name = f["path"].split("/", 1)[1]
        shutil.copy(src / name, tmp_path / "fx" / name[len("_fx_"):])
    d2 = scan(str(tmp_path))
    tables = {t.key: t for t in d2.tables}
    assert sorted(tables) == sorted({f["table"] for f in dicts})
    for f in dicts:
        rel = "fx/" + f["path"].split("/", 1)[1][len("_fx_"):]
        e = d2.file(rel)
        assert e.sections["tokudb"]["table"] == f["table"]
        assert e.sections["tokudb"]["role"] == _role(f["role"])
        assert e.sections["tokudb"]["disk_bytes"] == f["tokuftdump_summary"]["total_size"]


@pytest.mark.parametrize("m", tree_files(), ids=[f["path"].rsplit("/", 1)[-1] for f in tree_files()])
def test_block_map_covers_the_file(ds, m):
    e = _entry(ds, m["path"])
    bm = e.detail["tokudb"]["block_map"]
    assert sum(r[1] for r in bm) == m["apparent_size"]
    assert all(a[0] + a[1] == b[0] for a, b in zip(bm, bm[1:]))          # contiguous, no overlap
    unused = sum(r[1] for r in bm if r[2] == "unused")
    assert unused == m["apparent_size"] - 8192 - m["tokuftdump_fragmentation"]["used_size"]
    nodes = sorted((r[3], r[0], r[1]) for r in bm if r[2] == "leaf" or r[2].startswith("node h"))
    assert nodes == sorted((n["blocknum"], n["offset"], n["size"]) for n in m["engine_nodes"])


def test_lone_files_found_by_magic(sparse_fixtures, tmp_path):
    """A dictionary or a log copied under an unusual name is still read (detection by magic)."""
    src = sparse_fixtures / "tokudb"
    m = next(f for f in manifest()["files"] if f["path"].endswith("_fx_events_status_a_1_1d.tokudb"))
    shutil.copy(src / m["path"], tmp_path / "backup.bin")
    d = scan(str(tmp_path / "backup.bin"))
    e = d.files[0]
    assert e.errors == []
    assert e.sections["tokudb"]["disk_bytes"] == m["tokuftdump_summary"]["total_size"]
    log = next(f for f in manifest()["files"] if "log_entries" in f)
    shutil.copy(src / log["path"], tmp_path / "old.log.bin")
    d = scan(str(tmp_path / "old.log.bin"))
    assert d.files[0].sections["tokudb"]["log_entries"] == log["log_entries"]

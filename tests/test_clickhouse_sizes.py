"""ClickHouse parser vs the engine's own figures (fixtures manifest), equal not close:
every table, every part, every column."""
from __future__ import annotations

import json

import pytest

from dbxray.parsers.scan import scan

PART_FIELDS = ("part_type", "active", "rows", "marks", "bytes_on_disk", "data_compressed_bytes",
               "data_uncompressed_bytes", "marks_bytes", "primary_key_size", "files",
               "secondary_indices_compressed_bytes", "secondary_indices_uncompressed_bytes",
               "secondary_indices_marks_bytes", "partition_id", "min_block_number", "max_block_number", "level",
               "default_compression_codec")
PROJ_FIELDS = ("part_type", "rows", "marks", "bytes_on_disk", "data_compressed_bytes", "data_uncompressed_bytes",
               "marks_bytes")


@pytest.fixture(scope="module")
def manifest(fixtures_root):
    return json.loads((fixtures_root / "clickhouse" / "manifest.json").read_text())


@pytest.fixture(scope="module")
def ds(sparse_fixtures):
    return scan(str(sparse_fixtures / "clickhouse" / "datadir"))


@pytest.fixture(scope="module")
def tables(ds):
    return {(t["database"], t["table"]): t for t in ds.sections["clickhouse"]["tables"]}


def test_every_table_found_without_errors(ds, tables, manifest):
    db = manifest["database"]
    assert sorted(n for d, n in tables) == sorted(manifest["tables"])
    assert all(d == db for d, _ in tables)
    assert ds.errors == []
    ch_errors = [e for f in ds.files if f.engine == "clickhouse" for e in f.errors]
    assert ch_errors == []
    for t in tables.values():
        assert t["errors"] == []


def test_table_identity(tables, manifest):
    for name, mt in manifest["tables"].items():
        t = tables[(manifest["database"], name)]
        st = mt["system_tables"]
        assert t["uuid"] == st["uuid"]
        assert t["engine"] == st["engine"]
        assert t["path"] == mt["table_dir"]["rel_path"]
        assert t["format_version"] == mt["table_dir"]["format_version_txt"]
        assert t["total_rows"] == st["total_rows"]
        assert t["total_bytes"] == st["total_bytes"]
        assert t["active_parts"] == st["active_parts"]
        assert t["partition_key"] == st["partition_key"]


def test_system_parts(tables, manifest):
    checked = 0
    for name, mt in manifest["tables"].items():
        t = tables[(manifest["database"], name)]
        got = {p["name"]: p for p in t["parts"]}
        assert sorted(got) == sorted(p["name"] for p in mt["system_parts"])
        for mp in mt["system_parts"]:
            p = got[mp["name"]]
            for f in PART_FIELDS:
                assert p[f] == mp[f], (name, mp["name"], f)
            assert p["path"] == mp["rel_path"]
            assert p["partition"] == mp["partition"]
            if mp["min_time"] != "1970-01-01 00:00:00":        # DateTime partition column
                assert list(p["minmax"].values()) == [[mp["min_time"], mp["max_time"]]]
            if mp["min_date"] != "1970-01-01":                 # Date partition column
                assert list(p["minmax"].values()) == [[mp["min_date"], mp["max_date"]]]
            assert p["metadata_version"] == mp["text_files"]["metadata_version.txt"]
            assert p["folder_bytes"] == mp["sum_file_sizes"]
            assert p["projections"] == sorted(mp["projections"])
            checked += 1
    assert checked == 35


def test_system_parts_columns(tables, manifest):
    checked = 0
    for name, mt in manifest["tables"].items():
        t = tables[(manifest["database"], name)]
        parts = {p["name"]: p for p in t["parts"]}
        for mc in mt["system_parts_columns"]:
            p = parts[mc["part_name"]]
            cols = {c["name"]: c for c in p["columns"]}
            c = cols[mc["column"]]
            assert c["type"] == mc["type"]
            assert c["serialization_kind"] == mc["serialization_kind"]
            assert c["compressed_bytes"] == mc["column_data_compressed_bytes"], (name, mc["part_name"], mc["column"])
            assert c["uncompressed_bytes"] == mc["column_data_uncompressed_bytes"], (name, mc["column"])
            assert c["marks_bytes"] == mc["column_marks_bytes"], (name, mc["column"])
            assert c["bytes_on_disk"] == mc["column_bytes_on_disk"]
            if p["part_type"] == "Wide":
                assert [s["stream"] for s in c["streams"]] == mc["filenames"]
            else:
                assert c["engine_reports_zero"] is True
            checked += 1
        for p in t["parts"]:
            assert [c["name"] for c in p["columns"]] == \
                [mc["column"] for mc in mt["system_parts_columns"] if mc["part_name"] == p["name"]]
    assert checked > 300


def test_system_columns(tables, manifest):
    for name, mt in manifest["tables"].items():
        t = tables[(manifest["database"], name)]
        assert [c["name"] for c in t["columns"]] == [c["name"] for c in mt["system_columns"]]
        for c, mc in zip(t["columns"], mt["system_columns"]):
            assert c["type"] == mc["type"]
            assert c["codec"] == mc["compression_codec"]
            assert c["compressed_bytes"] == mc["data_compressed_bytes"], (name, c["name"])
            assert c["uncompressed_bytes"] == mc["data_uncompressed_bytes"], (name, c["name"])
            assert c["marks_bytes"] == mc["marks_bytes"], (name, c["name"])


def test_codec_block_counts(tables, manifest):
    n = 0
    for name, mt in manifest["tables"].items():
        t = tables[(manifest["database"], name)]
        parts = {p["name"]: p for p in t["parts"]}
        for row in mt["codec_block_counts"]:
            p = parts[row["part_name"]]
            col = {c["name"]: c for c in p["columns"]}[row["column"]]
            if p["part_type"] == "Compact":
                assert row["codec_block_counts"] == {}     # the engine gives none for Compact parts
                continue
            s = {s["stream"]: s for s in col["streams"]}[row["substream"]]
            assert s["codecs"] == row["codec_block_counts"], (name, row["part_name"], row["substream"])
            assert s["compressed_bytes"] == row["data_compressed_bytes"]
            assert s["uncompressed_bytes"] == row["data_uncompressed_bytes"]
            n += 1
    assert n > 300


def test_projection_parts(tables, manifest):
    mt = manifest["tables"]["features"]
    t = tables[(manifest["database"], "features")]
    parent = {p["name"]: p for p in t["parts"]}
    n = 0
    for mp in mt["system_projection_parts"]:
        p = {x["name"]: x for x in parent[mp["parent_name"]]["projection_parts"]}[mp["name"]]
        for f in PROJ_FIELDS:
            assert p[f] == mp[f], (mp["name"], f)
        n += 1
    for mc in mt["system_projection_parts_columns"]:
        p = {x["name"]: x for x in parent[mc["parent_name"]]["projection_parts"]}[mc["projection"]]
        c = {c["name"]: c for c in p["columns"]}[mc["column"]]
        assert c["type"] == mc["type"]
        assert c["compressed_bytes"] == mc["column_data_compressed_bytes"]
        assert c["uncompressed_bytes"] == mc["column_data_uncompressed_bytes"]
        assert c["marks_bytes"] == mc["column_marks_bytes"]
        n += 1
    assert n == 2 + 8


def test_compact_split_adds_up(tables, manifest):
    """Compact parts: the computed per-column split covers data.bin exactly, one
    block per column per granule (fixtures/clickhouse/FORMAT_NOTES.md section 8)."""
    n = 0
    for t in tables.values():
        for p in t["parts"]:
            if p["part_type"] != "Compact":
                continue
            comp = [c["computed"] for c in p["columns"]]
            assert sum(c["compressed_bytes"] for c in comp) == p["data_compressed_bytes"]
            assert sum(c["uncompressed_bytes"] for c in comp) == p["data_uncompressed_bytes"]
            for c in comp:
                assert c["blocks"] == p["marks"] - 1, (t["table"], p["name"])
            n += 1
    assert n == 12


def test_units_per_bin_file(ds, tables, manifest):
    """One unit per compressed block; stored sizes add up to the file, owners name the column."""
    n = 0
    for f in ds.files:
        if f.engine != "clickhouse" or f.role != "part_column_data":
            continue
        if f.path.rsplit("/", 1)[-1].startswith("skp_idx"):
            continue
        assert f.units is not None, f.path
        assert int(f.units["stored"].sum()) == f.apparent_bytes
        assert f.database == manifest["database"] and f.table in manifest["tables"]
        owners = set(int(o) for o in f.units["owner"])
        assert owners <= set(f.owner_names), f.path
        assert set(int(k) for k in f.units["kind"]) <= set(f.kind_names)
        n += 1
    assert n > 380


def test_json_validates_against_schema(ds):
    jsonschema = pytest.importorskip("jsonschema")
    from pathlib import Path
    schema = json.loads((Path(__file__).resolve().parent.parent / "resources" / "scan.schema.json").read_text())
    doc = json.loads(json.dumps(ds.to_json()))
    jsonschema.validate(doc, schema)
    assert doc["clickhouse"]["tables"]


@pytest.mark.parametrize("walk", [True, False])
def test_quick_sizes_path(fixtures_root, manifest, walk):
    """The benchmark's sizes path (checksums.txt + block headers) gives system.parts_columns exactly."""
    from dbxray.parsers.clickhouse.quick import column_sizes
    got = column_sizes(str(fixtures_root / "clickhouse" / "datadir"), walk=walk)
    exp = {(manifest["database"], name, r["part_name"], r["column"]):
           (r["column_data_compressed_bytes"], r["column_data_uncompressed_bytes"], r["column_marks_bytes"])
           for name, mt in manifest["tables"].items() for r in mt["system_parts_columns"]}
    assert got == exp

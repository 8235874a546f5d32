"""Every field of system.parts_columns, per part column, against the engine's own rows
(fixtures manifest, 371 rows): column_position, substreams, filenames and the
subcolumns.* arrays, besides the sizes tests/test_clickhouse_sizes.py checks.
Compact parts: the engine reports '' filenames and 0 subcolumn sizes; that is what is
compared (the real split is in 'computed', tested elsewhere)."""
from __future__ import annotations

import json
import shutil

import pytest

from dbxray.parsers.clickhouse.subcolumns import StringSerialization, enumerate_serialization
from dbxray.parsers.scan import scan

SUBCOLUMN_FIELDS = {                     # manifest array -> our per-subcolumn key
    "subcolumns.names": "name",
    "subcolumns.types": "type",
    "subcolumns.serializations": "serialization",
    "subcolumns.bytes_on_disk": "bytes_on_disk",
    "subcolumns.data_compressed_bytes": "compressed_bytes",
    "subcolumns.data_uncompressed_bytes": "uncompressed_bytes",
    "subcolumns.marks_bytes": "marks_bytes",
}


@pytest.fixture(scope="module")
def manifest(fixtures_root):
    return json.loads((fixtures_root / "clickhouse" / "manifest.json").read_text())


@pytest.fixture(scope="module")
def tables(sparse_fixtures):
    ds = scan(str(sparse_fixtures / "clickhouse" / "datadir"))
    assert ds.errors == []
    assert [e for f in ds.files if f.engine == "clickhouse" for e in f.errors] == []
    return {t["table"]: t for t in ds.sections["clickhouse"]["tables"]}


def _rows(manifest):
    for name, mt in manifest["tables"].items():
        for r in mt["system_parts_columns"]:
            yield name, r


def test_every_row_every_field(tables, manifest):
    n = with_sub = compact = 0
    for name, r in _rows(manifest):
        part = {p["name"]: p for p in tables[name]["parts"]}[r["part_name"]]
        c = {c["name"]: c for c in part["columns"]}[r["column"]]
        where = (name, r["part_name"], r["column"])
        assert c["type"] == r["type"], where
        assert c["serialization_kind"] == r["serialization_kind"], where
        assert c["column_position"] == r["column_position"], where
        assert c["substreams"] == r["substreams"], where
        assert c["filenames"] == r["filenames"], where
        assert c["subcolumns"] is not None, where
        for mkey, key in SUBCOLUMN_FIELDS.items():
            assert [s[key] for s in c["subcolumns"]] == r[mkey], (where, mkey)
        if part["part_type"] == "Compact":
            compact += 1
            assert c["engine_reports_zero"] is True
        else:
            assert c["compressed_bytes"] == r["column_data_compressed_bytes"], where
            assert c["marks_bytes"] == r["column_marks_bytes"], where
        with_sub += bool(r["subcolumns.names"])
        n += 1
    assert (n, with_sub) == (371, 163)
    assert compact > 50


def test_subcolumn_sizes_are_their_files(tables, sparse_fixtures, manifest):
    """Each Wide subcolumn size is the size of one file of the part folder (its stream's
    .bin and marks file), independent of checksums.txt."""
    root = sparse_fixtures / "clickhouse" / "datadir"
    n = 0
    for t in tables.values():
        for p in t["parts"]:
            if p["part_type"] != "Wide":
                continue
            for c in p["columns"]:
                streams = {s["stream"]: s for s in c.get("streams", [])}
                for sc, stem in ((sc, _stem_for(c, sc)) for sc in c["subcolumns"]):
                    assert stem in streams, (p["name"], c["name"], sc["name"])
                    s = streams[stem]
                    assert sc["compressed_bytes"] == (root / p["path"] / s["file"]).stat().st_size
                    assert sc["uncompressed_bytes"] == s["uncompressed_bytes"]
                    assert sc["marks_bytes"] == (root / p["path"] / s["marks_file"]).stat().st_size
                    n += 1
    wide = {(name, p["name"]) for name, mt in manifest["tables"].items() for p in mt["system_parts"]
            if p["part_type"] == "Wide"}
    assert n == sum(len(r["subcolumns.names"]) for name, r in _rows(manifest) if (name, r["part_name"]) in wide)
    assert n > 100


def _stem_for(c, sc):
    """The stream a subcolumn is sized by, from its name: Tuple/Map elements are
    %2E-joined, the last dotted piece of a size/null subcolumn is a suffix."""
    pieces = sc["name"].split(".")
    tail = pieces[-1]
    if tail in ("null", "size") or tail.startswith("size") and tail[4:].isdigit():
        elems, suffix = pieces[:-1], "." + tail
    else:
        elems, suffix = pieces, ""
    base = c["name"].replace(".", "%2E")
    if suffix.startswith(".size0") and not elems and "." in c["name"]:
        base = c["name"].split(".", 1)[0]           # Nested: shared n.size0
    return base + "".join("%2E" + e for e in elems) + suffix


def test_columns_substreams_file_agrees(tables, sparse_fixtures):
    """The enumeration equals the part's own columns_substreams.txt, which the engine
    wrote (Compact LowCardinality '.dict_prefix' aside)."""
    from dbxray.parsers.clickhouse.columns import parse_columns_substreams
    root = sparse_fixtures / "clickhouse" / "datadir"
    n = 0
    for t in tables.values():
        for p in t["parts"]:
            f = root / p["path"] / "columns_substreams.txt"
            if not f.exists():          # compact_legacy_mrk3 has none
                continue
            listed = parse_columns_substreams(f.read_bytes())
            for c in p["columns"]:
                assert [s for s in listed[c["name"]] if not s.endswith(".dict_prefix")] == c["substreams"]
                n += 1
    assert n > 350


def test_single_stream_strings_have_no_size_subcolumn():
    ws = enumerate_serialization("s", "Tuple(a UInt32, b String)", strings=StringSerialization(True, True))
    ss = enumerate_serialization("s", "Tuple(a UInt32, b String)")
    assert [x.name for x in ws.subcolumns] == ["a", "b", "b.size"]
    assert [x.name for x in ss.subcolumns] == ["a", "b"]
    assert ss.substreams == ["s%2Ea", "s%2Eb"]


def test_nested_types():
    """The same rules composed on deeper types than the fixtures hold (our model, not
    engine output): Array(Array(...)) levels, Nullable inside Array, Tuple inside Tuple
    (the intermediate Tuple is not a subcolumn), Sparse, unmodelled Dynamic."""
    ws = StringSerialization(True, True)
    a = enumerate_serialization("a", "Array(Array(Nullable(String)))", strings=ws)
    assert a.substreams == ["a.size0", "a.size1", "a.null", "a.size", "a"]
    assert [(x.name, x.type) for x in a.subcolumns] == [
        ("size0", "UInt64"), ("size1", "Array(UInt64)"), ("null", "Array(Array(UInt8))"),
        ("size", "Array(Array(Nullable(UInt64)))")]
    t = enumerate_serialization("t", "Tuple(x Tuple(y UInt8, z Array(UInt16)))", strings=ws)
    assert t.substreams == ["t%2Ex%2Ey", "t%2Ex%2Ez.size0", "t%2Ex%2Ez"]
    assert [(x.name, x.type) for x in t.subcolumns] == [
        ("x.y", "UInt8"), ("x.z", "Array(UInt16)"), ("x.z.size0", "UInt64")]
    sp = enumerate_serialization("v", "UInt64", "Sparse")
    assert (sp.substreams, sp.subcolumns) == (["v.sparse.idx", "v"], [])
    assert enumerate_serialization("v", "Dynamic").subcolumns is None


def test_wrong_columns_substreams_is_named(sparse_fixtures, tmp_path):
    """A columns_substreams.txt that disagrees with the types is reported on that file."""
    dst = tmp_path / "datadir"
    shutil.copytree(sparse_fixtures / "clickhouse" / "datadir", dst, symlinks=True)
    (part,) = [p for p in dst.glob("store/*/*/202401_1_2_1") if (p / "tup%2Eb.size.bin").exists()]
    f = part / "columns_substreams.txt"
    text = f.read_text().replace("\ttup%2Eb.size\n", "\ttup%2Eb.sizz\n")
    f.chmod(0o644)
    f.write_text(text)
    ds = scan(str(dst))
    errs = [e for x in ds.files if x.path.endswith("202401_1_2_1/columns_substreams.txt") for e in x.errors]
    assert any("column tup" in e and "tup%2Eb.sizz" in e for e in errs), errs

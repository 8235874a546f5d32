"""statistics.packed decoded (Basic and UniqV2 statistics, the kinds the fixtures hold).

The manifest records no statistics values, so each figure is checked against
something independent of the statistics file:
* rows and Basic row_count against count.txt;
* Basic default_count against serialization.json num_defaults (the engine's own
  exact count, written separately), and for Array/Map columns (not in
  serialization.json) against the empty rows of the decoded sizes stream;
* Basic min/max against the part's column values decoded from its .bin files
  (parsers/codecs), NULLs left out, a Sparse column's defaults (0) counted in;
* Basic string_total_bytes against the String data stream's uncompressed size plus
  8 bytes per row (StatisticsBasic sums ColumnString::byteSize: chars + UInt64 offsets);
* UniqV2: the exact hash sets (small/medium) against the number of distinct decoded
  values, equal; the HyperLogLog estimate (large) within four standard errors of it
  (K = 12: 1.04 / sqrt(4096) = 1.6%, so 6.5%; the raw estimate also carries HLL's
  known positive bias just above 2.5 * 4096, where uniqCombined applies no bias
  correction); its stored rank histogram equals the histogram of its registers and
  its zeros counter the empty registers (checked by the reader itself)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from dbxray.parsers.clickhouse.blocks import read_stream
from dbxray.parsers.clickhouse.packed import read_packed_directory
from dbxray.parsers.clickhouse.statistics import (LARGE, StatisticsError, read_column_statistics)
from dbxray.parsers.clickhouse.streams import unescape_for_file_name
from dbxray.parsers.codecs.ch_block import decompress_stream
from dbxray.parsers.scan import scan

HLL_TOLERANCE = 4 * 1.04 / 4096 ** 0.5
NUMERIC = {"UInt8": "<u1", "UInt16": "<u2", "UInt32": "<u4", "UInt64": "<u8", "Int8": "<i1", "Int16": "<i2",
           "Int32": "<i4", "Int64": "<i8", "Float32": "<f4", "Float64": "<f8", "Date": "<u2", "DateTime": "<u4",
           "Bool": "<u1", "IPv4": "<u4"}


@pytest.fixture(scope="module")
def root(sparse_fixtures):
    return sparse_fixtures / "clickhouse" / "datadir"


@pytest.fixture(scope="module")
def parts(root):
    ds = scan(str(root))
    assert ds.errors == []
    assert [e for f in ds.files if f.engine == "clickhouse" for e in f.errors] == []
    return [p for t in ds.sections["clickhouse"]["tables"] for p in t["parts"] if p["statistics"] is not None]


def _dtype(type_name: str):
    if type_name in NUMERIC:
        return np.dtype(NUMERIC[type_name]), None
    if type_name.startswith("Enum8"):
        return np.dtype("<i1"), None
    if type_name.startswith("Enum16"):
        return np.dtype("<i2"), None
    if type_name.startswith("DateTime64"):
        return np.dtype("<i8"), int(type_name[11:-1].split(",")[0])
    if type_name.startswith("Decimal("):
        p, s = (int(x) for x in type_name[8:-1].split(","))
        return (np.dtype("<i4") if p <= 9 else np.dtype("<i8") if p <= 18 else None), s
    return None, None


def _values(part_dir: Path, col: str, type_name: str):
    """The column's non-NULL values, decoded from its streams (None when not plain)."""
    inner = type_name[9:-1] if type_name.startswith("Nullable(") else type_name
    dt, _ = _dtype(inner)
    stem = col.replace(".", "%2E")
    if dt is None or not (part_dir / f"{stem}.bin").exists():
        return None
    vals = np.frombuffer(decompress_stream((part_dir / f"{stem}.bin").read_bytes()), dtype=dt)
    if inner != type_name:
        null = np.frombuffer(decompress_stream((part_dir / f"{stem}.null.bin").read_bytes()), dtype=np.uint8)
        vals = vals[null == 0]
    return vals


def _strings(part_dir: Path, col: str):
    """(list of the column's non-NULL strings, data stream uncompressed bytes), with_size_stream layout."""
    stem = col.replace(".", "%2E")
    if not (part_dir / f"{stem}.size.bin").exists():
        return None, None
    sizes = np.frombuffer(decompress_stream((part_dir / f"{stem}.size.bin").read_bytes()), dtype="<u8")
    chars = decompress_stream((part_dir / f"{stem}.bin").read_bytes())
    ends = np.cumsum(sizes)
    starts = ends - sizes
    keep = np.ones(len(sizes), dtype=bool)
    if (part_dir / f"{stem}.null.bin").exists():
        keep = np.frombuffer(decompress_stream((part_dir / f"{stem}.null.bin").read_bytes()), dtype=np.uint8) == 0
    out = [chars[a:b] for a, b, k in zip(starts.tolist(), ends.tolist(), keep.tolist()) if k]
    return out, len(chars)


def _serialization(part_dir: Path) -> dict:
    return {c["name"]: c for c in json.loads((part_dir / "serialization.json").read_text())["columns"]}


def test_every_entry_decoded(parts, root):
    n = 0
    for p in parts:
        part_dir = root / p["path"]
        rows = int((part_dir / "count.txt").read_text())
        ser = _serialization(part_dir)
        types = {c["name"]: c["type"] for c in p["columns"]}
        contents = p["statistics_contents"]
        assert sorted(contents) == sorted(unescape_for_file_name(n[len("statistics_"):-len(".stats")])
                                          for n in p["statistics"])
        for col, st in contents.items():
            assert col in types
            assert st["rows"] == rows and st["data_type"] == types[col]
            kinds = [k["kind"] for k in st["statistics"]]
            assert kinds[0] == "Basic"
            basic = st["statistics"][0]
            assert basic["row_count"] == rows
            if col in ser:
                assert basic["default_count"] == ser[col]["num_defaults"], (p["path"], col)
                assert ser[col].get("exact_num_defaults", True) is True
                n += 1
            elif types[col].startswith(("Array(", "Map(")):
                # not in serialization.json: the default is the empty array / map, whose
                # rows have length 0 in the sizes stream
                stem = col.replace(".", "%2E") if "." not in col else col.split(".", 1)[0]
                sizes = np.frombuffer(decompress_stream((part_dir / f"{stem}.size0.bin").read_bytes()), "<u8")
                assert basic["default_count"] == int((sizes == 0).sum()), (p["path"], col)
                n += 1
    assert len(parts) == 17 and n > 150


def test_stored_bytes_are_the_packed_entries(parts, root):
    for p in parts:
        data = (root / p["path"] / "statistics.packed").read_bytes()
        _, entries = read_packed_directory(data)
        sizes = {unescape_for_file_name(e.name[len("statistics_"):-len(".stats")]): e.size for e in entries}
        assert {c: s["stored_bytes"] for c, s in p["statistics_contents"].items()} == sizes
        for e in entries:
            st = read_column_statistics(read_stream(data[e.offset:e.offset + e.size]))
            assert [s.size for s in st.stats] == [k["serialized_bytes"] for k in
                                                  p["statistics_contents"][unescape_for_file_name(
                                                      e.name[11:-6])]["statistics"]]


def test_minmax_and_uniq_against_decoded_columns(parts, root):
    checked = {"minmax": 0, "exact_uniq": 0, "hll_uniq": 0, "strings": 0}
    for p in parts:
        part_dir = root / p["path"]
        ser = _serialization(part_dir)
        rows = p["rows"]
        for c in p["columns"]:
            st = p["statistics_contents"].get(c["name"])
            if st is None or c["type"].startswith("LowCardinality"):
                continue           # LowCardinality: the stats see the dictionary (uniq) / full column
            by_kind = {k["kind"]: k for k in st["statistics"]}
            basic = by_kind["Basic"]
            uniq = by_kind.get("UniqV2")
            vals = _values(part_dir, c["name"], c["type"])
            distinct = None
            if vals is not None and "min" in basic:
                if ser.get(c["name"], {}).get("kind") == "Sparse":
                    vals = np.concatenate([vals, np.zeros(1 if basic["default_count"] else 0, vals.dtype)])
                lo, hi = basic["min"], basic["max"]
                if isinstance(lo, dict):
                    lo, hi = lo["value"], hi["value"]
                if vals.dtype.kind == "f":
                    assert (lo, hi) == (float(vals.min()), float(vals.max())), (p["path"], c["name"])
                else:
                    assert (lo, hi) == (int(vals.min()), int(vals.max())), (p["path"], c["name"])
                checked["minmax"] += 1
                distinct = len(np.unique(vals))
            if c["type"] in ("String", "Nullable(String)"):
                strings, chars = _strings(part_dir, c["name"])
                if strings is not None:
                    assert basic["string_total_bytes"] == chars + 8 * rows, (p["path"], c["name"])
                    checked["strings"] += 1
                    distinct = len(set(strings))
            if uniq is None or distinct is None:
                continue
            if uniq["container"] in ("small", "medium"):
                assert uniq["estimated_cardinality"] == distinct, (p["path"], c["name"])
                checked["exact_uniq"] += 1
            else:
                assert abs(uniq["estimated_cardinality"] - distinct) <= HLL_TOLERANCE * distinct, \
                    (p["path"], c["name"], uniq["estimated_cardinality"], distinct)
                checked["hll_uniq"] += 1
    assert checked["minmax"] > 60 and checked["exact_uniq"] > 5 and checked["hll_uniq"] > 40 \
        and checked["strings"] > 10, checked


def test_hll_histogram_mismatch_is_an_error(parts, root):
    """A LARGE uniq state whose rank histogram disagrees with its registers is refused."""
    p = next(p for p in parts if "id" in p["statistics_contents"] and p["rows"] > 5000)
    data = (root / p["path"] / "statistics.packed").read_bytes()
    _, entries = read_packed_directory(data)
    e = next(e for e in entries if e.name == "statistics_id.stats")
    raw = bytearray(read_stream(data[e.offset:e.offset + e.size]))
    st = read_column_statistics(bytes(raw))
    u = next(s for s in st.stats if s.kind == "UniqV2")
    assert u.value.container == LARGE
    raw[u.offset + 2] ^= 0x3F             # first register(s) changed, histogram not
    with pytest.raises(StatisticsError, match="rank histogram"):
        read_column_statistics(bytes(raw))
    with pytest.raises(StatisticsError):
        read_column_statistics(bytes(raw[:-3]))


def test_corrupt_statistics_entry_is_named(root, tmp_path):
    """A statistics.packed whose entry does not decode: a named problem on that file,
    the part still read."""
    import shutil
    src = next(root.glob("store/*/*/202401_1_2_1/statistics.packed"))
    dst = tmp_path / "datadir"
    shutil.copytree(root, dst, symlinks=True)
    f = dst / src.relative_to(root)
    data = bytearray(f.read_bytes())
    _, entries = read_packed_directory(bytes(data))
    e = entries[0]
    data[e.offset + 20] ^= 0xFF            # inside the first block's header/payload
    f.chmod(0o644)
    f.write_bytes(bytes(data))
    ds = scan(str(dst))
    errs = [x for fe in ds.files if fe.path.endswith(str(f.relative_to(dst))) for x in fe.errors]
    assert any(e.name in x for x in errs), errs
    t = next(t for t in ds.sections["clickhouse"]["tables"] if any(
        pp["path"].endswith(f.parent.name) and pp["path"] in str(f.relative_to(dst)) for pp in t["parts"]))
    pj = next(pp for pp in t["parts"] if str(f.relative_to(dst)).startswith(pp["path"]))
    assert e.name[11:-6] not in pj["statistics_contents"] and len(pj["statistics_contents"]) == len(entries) - 1

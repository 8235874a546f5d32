"""ARCHIVE what-if (compress/engines/archive.py): the row stream of each ``.ARZ``
re-encoded with zlib levels, zstd, lz4 and lzma.  With every unit sampled the
zlib:6 projection (the codec and level ARCHIVE writes) equals the real file within
0.5%; a sampled run's 95% interval holds the all-units figure; no ARCHIVE DDL is
advised (the engine writes deflate only)."""
from __future__ import annotations

import shutil
import struct

import pytest

from dbxray.compress.engines import archive as arc_whatif
from dbxray.compress.registry import parse_codec
from dbxray.compress.whatif import result_for, run_whatif, targets_by_name
from dbxray.parsers.scan import scan

CODECS = ["zlib:1", "zlib:6", "zlib:9", "zstd:3", "lz4", "lzma:6"]


@pytest.fixture(scope="module")
def arc_dir(fixtures_root, tmp_path_factory):
    d = tmp_path_factory.mktemp("arcw") / "arc"
    shutil.copytree(fixtures_root / "mariadb" / "datadir" / "arc", d)
    return d


def test_all_units_zlib6_equals_the_file(arc_dir):
    ds = scan(str(arc_dir))
    res = run_whatif(ds, CODECS, sample="all", raw_models=False, cross_engine=False)
    assert not res.get("errors")
    ts = targets_by_name(res)
    assert set(ts) == {"lineorder_words.ARZ", "lineorder_phrase.ARZ"}
    for name, t in ts.items():
        e = ds.file(name)
        assert (t["engine"], t["current_codec"]) == ("archive", "zlib:6")
        assert t["logical_bytes"] == e.sections["archive"].uncompressed_bytes
        z6 = result_for(t, "zlib:6", "archive_row_stream")
        assert abs(z6["projected_bytes"] / e.apparent_bytes - 1) < 0.005, (name, z6, e.apparent_bytes)
        lo, hi = z6["ci95"]
        assert lo == hi == z6["projected_bytes"]                     # every unit encoded: exact
        size = {c: result_for(t, c, "archive_row_stream")["projected_bytes"] for c in CODECS}
        assert size["zlib:1"] > size["zlib:6"] >= size["zlib:9"] and size["lzma:6"] < size["zlib:6"]
        assert size["lz4"] > size["zlib:6"]
    assert not [a for a in res["advice"] if a["target"].endswith(".ARZ")]
    t = next(iter(ts.values()))
    assert arc_whatif.WHATIF.ddl(None, parse_codec("zstd:3"), "archive_row_stream").startswith(
        "-- zstd:3: ARCHIVE writes deflate only")


def test_sampled_interval_holds_the_full_figure(arc_dir, tmp_path):
    """A 7 MB table of 4 members (the fixture's stream appended 4 times, as reopening a
    table for writing appends members): 7 groups; half of them sampled."""
    raw = (arc_dir / "lineorder_phrase.ARZ").read_bytes()
    start = struct.unpack_from("<Q", raw, 21)[0]
    member = raw[start + 10:]                          # after the empty first member
    hdr = bytearray(raw[:start])
    struct.pack_into("<Q", hdr, 29, 4 * 26000)
    d = tmp_path / "db"
    d.mkdir()
    (d / "t.ARZ").write_bytes(bytes(hdr) + member * 4)
    ds = scan(str(d))
    e = ds.file("t.ARZ")
    assert not e.errors and e.sections["archive"].rows == 4 * 26000 and e.sections["archive"].members == 4
    full = targets_by_name(run_whatif(ds, ["zlib:6", "zstd:3"], sample="all", raw_models=False, cross_engine=False))["t.ARZ"]
    part = targets_by_name(run_whatif(ds, ["zlib:6", "zstd:3"], sample="0.5", seed=3, raw_models=False, cross_engine=False))["t.ARZ"]
    for c in ("zlib:6", "zstd:3"):
        f, p = result_for(full, c), result_for(part, c)
        lo, hi = p["ci95"]
        assert lo <= f["projected_bytes"] <= hi, (c, f, p)
        assert lo < hi
    assert abs(result_for(full, "zlib:6")["projected_bytes"] / e.apparent_bytes - 1) < 0.005

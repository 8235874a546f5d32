"""The ARCHIVE engine (parsers/archive/): the two ``.ARZ`` tables of the real MariaDB
data dir against the manifest (rows = COUNT(*) = SHOW TABLE STATUS Rows, file bytes =
I_S DATA_LENGTH), the inflated row stream against an independent inflate of the same
bytes, units that tile the data region and decode to the same bytes, and damaged
files (cut short, corrupt deflate data, a decompression bomb) named with their
offsets, partial results kept, nothing written."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import time
import zlib

import numpy as np
import pytest

from dbxray.parsers import engines
from dbxray.parsers.archive.header import AZ_BUFSIZE_READ
from dbxray.parsers.archive.stream import CAP_FLOOR
from dbxray.parsers.scan import scan
from dbxray.parsers.tree import build_tree

TABLES = ("lineorder_words", "lineorder_phrase")


@pytest.fixture(scope="module")
def manifest(fixtures_root):
    return json.loads((fixtures_root / "mariadb" / "manifest.json").read_text())


@pytest.fixture(scope="module")
def arc_dir(fixtures_root, tmp_path_factory):
    d = tmp_path_factory.mktemp("arc") / "arc"
    shutil.copytree(fixtures_root / "mariadb" / "datadir" / "arc", d)
    return d


@pytest.fixture(scope="module")
def ds(arc_dir):
    return scan(str(arc_dir))


def _inflate_members(raw: bytes, start: int) -> tuple[bytes, int]:
    """An independent reading of the data region: raw deflate members, each followed by
    crc32 + length (azio.c azclose), one after the other."""
    out, pos, members = [], start, 0
    while pos < len(raw):
        d = zlib.decompressobj(-15)
        o = d.decompress(raw[pos:])
        assert d.eof
        used = len(raw) - pos - len(d.unused_data)
        crc, ln = struct.unpack_from("<II", raw, pos + used)
        assert crc == zlib.crc32(o) and ln == len(o)
        out.append(o)
        pos += used + 8
        members += 1
    return b"".join(out), members


def test_tables_equal_the_manifest(ds, manifest, arc_dir):
    files = {f["path"]: f for f in manifest["files"]}
    status = {r["Name"]: r for r in manifest["sql"]["archive_table_status"]}
    tables = {t.name: t for t in ds.tables if t.engine == "archive"}
    assert set(tables) == set(TABLES)
    for name in TABLES:
        path = f"arc/{name}.ARZ"
        want, mt = files[path], manifest["tables"][f"arc.{name}"]
        assert (want["engine"], want["role"]) == ("archive", "data")
        e = ds.file(f"{name}.ARZ")
        assert (e.engine, e.role, e.database, e.table) == ("archive", "table_data", "arc", name)
        assert not e.errors and not e.warnings
        sec = e.sections["archive"]
        rows = manifest["sql"]["row_counts"][f"arc.{name}"]
        assert rows == manifest["sql"]["archive_raw"][name]["rows"] == 26000
        assert sec.rows == sec.header_rows == rows == status[name]["Rows"] == mt["is_table_rows"]
        assert e.apparent_bytes == want["apparent_size"] == mt["is_data_length"] == status[name]["Data_length"]
        assert e.allocated_bytes == os.stat(arc_dir / f"{name}.ARZ").st_blocks * 512
        raw = (arc_dir / f"{name}.ARZ").read_bytes()
        stream, members = _inflate_members(raw, sec.data_start)
        assert sec.uncompressed_bytes == len(stream) and sec.members == members == 2
        assert sec.compressed_bytes == len(raw) - sec.data_start
        # every row of the TSV the server measured (extra_data alone) is inside the row stream
        assert sec.uncompressed_bytes > manifest["sql"]["archive_raw"][name]["extra_data_bytes"] + 4 * rows
        # the header fields as azio.c wrote them
        assert (sec.version, sec.minor_version, sec.block_size, sec.state) == (3, 1, 16384, "clean")
        assert (sec.frm_offset, sec.frm_length, sec.frm_matches_file) == (78, 1127, True)
        assert raw[78:78 + 1127] == (arc_dir / f"{name}.frm").read_bytes()
        assert sec.check_point == len(raw)
        assert (sec.shortest_row, sec.longest_row) == (sec.header_shortest_row, sec.header_longest_row)
        # the server's figures beside the file's
        info = tables[name].info
        assert info["information_schema"]["data_length"] == mt["is_data_length"]
        assert info["information_schema"]["table_rows"] == mt["is_table_rows"]
        assert info["allocated_bytes"] == e.allocated_bytes and info["rows"] == rows
    js = ds.to_json()
    assert js["engines"] == ["archive", "server"]              # the .frm and db.opt beside them
    root = build_tree(ds)
    row = next(c for c in root.children if c.kind == "engine" and c.name == "ARCHIVE")
    assert [c.name for c in row.children] == ["arc"]


def test_units_tile_the_data_and_decode_to_the_stream(ds, arc_dir):
    eng = engines.get("archive")
    for name in TABLES:
        e = ds.file(f"{name}.ARZ")
        sec = e.sections["archive"]
        u = e.units
        assert e.kind_names[int(u["kind"][0])] == "AZ_HEADER" and int(u["stored"][0]) == sec.data_start
        ends = u["offset"].astype(np.int64) + u["stored"].astype(np.int64)
        assert int(u["offset"][0]) == 0 and (ends[:-1] == u["offset"][1:].astype(np.int64)).all()
        assert int(ends[-1]) == e.apparent_bytes
        assert (u["offset"][2:] % AZ_BUFSIZE_READ == 0).all() and len(u) - 1 == sec.spans
        assert int(u["logical"][1:].astype(np.int64).sum()) == sec.uncompressed_bytes
        assert int(e.unit_facts.records.sum()) == sec.rows
        geo = eng.unit_geometry(e)
        assert geo is not None and geo.unit_bytes == 0
        raw = (arc_dir / f"{name}.ARZ").read_bytes()
        stream, _ = _inflate_members(raw, sec.data_start)
        # in order (one pass), then out of order (restarts)
        got = b"".join(eng.unit_payload(e, i, 1 << 26) for i in range(1, len(u)))
        assert got == stream
        assert eng.unit_payload(e, 0, 1 << 26) == raw[:sec.data_start]
        k = len(u) // 2
        start = int(u["logical"][1:k].astype(np.int64).sum())
        assert eng.unit_payload(e, k, 1 << 26) == stream[start:start + int(u["logical"][k])]
        assert eng.unit_payload(e, 2, 1 << 26) == stream[int(u["logical"][1]):int(u["logical"][1:3].sum())]


def _listing(d):
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
            for p in sorted(d.iterdir())}


def _bad_dir(tmp_path, arc_dir, data: bytes):
    d = tmp_path / "bad"
    d.mkdir()
    (d / "t.ARZ").write_bytes(data)
    return d


def test_truncated_file_named_with_offset_partial_rows(tmp_path, arc_dir):
    raw = (arc_dir / "lineorder_words.ARZ").read_bytes()
    cut = 1_000_000
    d = _bad_dir(tmp_path, arc_dir, raw[:cut])
    before = _listing(d)
    e = scan(str(d)).file("t.ARZ")
    assert _listing(d) == before
    assert any(f"t.ARZ @ offset {cut}:" in m and "cut short" in m for m in e.errors), e.errors
    sec = e.sections["archive"]
    assert 0 < sec.rows < 26000 and sec.complete is False and sec.header_rows == 26000
    assert sec.uncompressed_bytes > 0 and int(e.units["stored"].astype(np.int64).sum()) == cut


def test_corrupt_deflate_named_with_offset(tmp_path, arc_dir):
    raw = bytearray((arc_dir / "lineorder_words.ARZ").read_bytes())
    at = 700_000
    raw[at:at + 4096] = bytes(range(256)) * 16
    d = _bad_dir(tmp_path, arc_dir, bytes(raw))
    before = _listing(d)
    e = scan(str(d)).file("t.ARZ")
    assert _listing(d) == before
    assert e.errors and all(m.startswith("t.ARZ @ offset ") for m in e.errors), e.errors
    sec = e.sections["archive"]
    assert sec.complete is False and 0 < sec.rows < 26000
    # the rows before the damage are counted: about as many as its share of the file
    assert sec.rows > 26000 * (at - 65536) / len(raw) * 0.9


def test_bomb_capped_quickly(tmp_path, arc_dir):
    """A 2 MB stream inflating to 2 GiB of zeros behind a real header: capped at
    CAP_FLOOR with a named error, the row walk stopped at the first impossible row."""
    raw = (arc_dir / "lineorder_words.ARZ").read_bytes()
    start = struct.unpack_from("<Q", raw, 21)[0]
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    seg = c.compress(bytes(64 << 20)) + c.flush(zlib.Z_FULL_FLUSH)
    bomb = seg * 32 + c.flush(zlib.Z_FINISH)
    assert len(bomb) < 4 << 20
    d = _bad_dir(tmp_path, arc_dir, raw[:start] + bomb + struct.pack("<II", 0, 0))
    t0 = time.perf_counter()
    e = scan(str(d)).file("t.ARZ")
    took = time.perf_counter() - t0
    assert took < 20, took
    assert any("over the cap" not in m and "past the cap" in m and "decompression bomb" in m
               and m.startswith("t.ARZ @ offset ") for m in e.errors), e.errors
    assert any("row 1: length 0" in m for m in e.errors)
    sec = e.sections["archive"]
    assert sec.uncompressed_bytes == CAP_FLOOR and sec.complete is False and sec.rows == 0


def test_not_an_azio_file(tmp_path, arc_dir):
    d = _bad_dir(tmp_path, arc_dir, b"\x1f\x8b\x08" + bytes(100))
    e = scan(str(d)).file("t.ARZ")
    assert e.engine == "archive" and e.errors == ["t.ARZ @ offset 0: gzip magic 1f 8b: ARCHIVE version 2 "
                                                  "(pre-5.1) data file, not read"]
    (d / "t.ARZ").write_bytes(b"\xfe\x03\x01" + bytes(20))
    e = scan(str(d)).file("t.ARZ")
    assert e.errors == ["t.ARZ @ offset 23: azio header cut short: 23 of 78 bytes"]

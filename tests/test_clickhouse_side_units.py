"""Units of the compressed files that are not .bin streams: compressed marks (.cmrk,
.cmrk2, .cmrk3, .cmrk4) and primary.cidx.  Checked against an independent walk of
each file's 25-byte block headers (struct, written here), the file size, and the
uncompressed size checksums.txt records for the file (the engine's own figure)."""
from __future__ import annotations

import struct
from pathlib import Path

import pytest

from dbxray.parsers.clickhouse.checksums import parse_checksums
from dbxray.parsers.model import UNIT_COMPRESSED
from dbxray.parsers.scan import scan


@pytest.fixture(scope="module")
def ds(sparse_fixtures):
    return scan(str(sparse_fixtures / "clickhouse" / "datadir"))


def _headers(data: bytes) -> list[tuple[int, int, int, int]]:
    """(offset, method, compressed size incl. 9-byte header, decompressed size) per block."""
    out, pos = [], 0
    while pos < len(data):
        method, csize, dsize = struct.unpack_from("<BII", data, pos + 16)
        out.append((pos, method, csize, dsize))
        pos += 16 + csize
    assert pos == len(data)
    return out


def _side(name: str) -> bool:
    return name == "primary.cidx" or ".cmrk" in name


def test_side_files_have_their_blocks_as_units(ds):
    n = {"cmrk": 0, "cidx": 0}
    extensions = set()
    for f in ds.files:
        name = f.path.rsplit("/", 1)[-1]
        if f.engine != "clickhouse" or not _side(name):
            continue
        assert f.units is not None, f.path
        data = Path(f.abspath).read_bytes()
        hdr = _headers(data)
        u = f.units
        assert len(u) == len(hdr)
        assert [int(x) for x in u["offset"]] == [h[0] for h in hdr]
        assert [int(x) for x in u["stored"]] == [16 + h[2] for h in hdr]
        assert [int(x) for x in u["logical"]] == [h[3] for h in hdr]
        assert [int(x) for x in u["kind"]] == [h[1] for h in hdr]
        assert int(u["stored"].sum()) == f.apparent_bytes == len(data)
        assert all(int(fl) & UNIT_COMPRESSED for fl, h in zip(u["flags"], hdr) if h[1] != 0x02)
        assert set(int(k) for k in u["kind"]) <= set(f.kind_names)
        # the engine's own figure: checksums.txt of the part lists the uncompressed size
        ck = parse_checksums((Path(f.abspath).parent / "checksums.txt").read_bytes())
        ent = ck.files[name]
        assert ent.is_compressed and ent.file_size == len(data)
        assert int(u["logical"].sum()) == ent.uncompressed_size, f.path
        sec = f.sections["clickhouse"]
        assert sec["blocks"] == len(hdr) and sec["uncompressed_bytes"] == ent.uncompressed_size
        if name != "primary.cidx" and not name.startswith("data."):
            if not name.startswith("skp_idx_"):
                assert set(int(o) for o in u["owner"]) <= set(f.owner_names), f.path
                assert f.owner_names and sec["column"] in f.owner_names.values()
        n["cidx" if name == "primary.cidx" else "cmrk"] += 1
        extensions.add(name[name.rfind(".cmrk"):] if ".cmrk" in name else name)
    assert n["cmrk"] > 300 and n["cidx"] > 20
    assert {".cmrk", ".cmrk2", ".cmrk3", ".cmrk4", "primary.cidx"} <= extensions


def test_marks_units_owner_is_the_column(ds):
    """A Wide .cmrk2 file's units are owned by the column its stream belongs to,
    the same owner as the .bin units of that stream."""
    by_path = {f.path: f for f in ds.files}
    n = 0
    for f in ds.files:
        if f.engine != "clickhouse" or not f.path.endswith(".cmrk2") or f.units is None:
            continue
        name = f.path.rsplit("/", 1)[-1]
        if name.startswith("skp_idx_"):
            continue
        b = by_path.get(f.path[:-len(".cmrk2")] + ".bin")
        assert b is not None and b.units is not None
        col = f.owner_names[int(f.units["owner"][0])]
        assert col == b.owner_names[int(b.units["owner"][0])]
        n += 1
    assert n > 250

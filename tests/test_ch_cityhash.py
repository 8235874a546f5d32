"""CityHash v1.0.2 as ClickHouse uses it: the scalar port, the vectorised
many-message variant, and both against the checksums the engine stored."""
from __future__ import annotations

import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dbxray.parsers.codecs.ch_block import scan_blocks, verify_checksums
from dbxray.parsers.codecs.ch_cityhash import (chained_file_hash, chained_file_hash_many, cityhash128,
                                        cityhash128_many, cityhash128_with_seed,
                                        cityhash128_with_seed_many)

LENGTHS = st.sampled_from([0, 1, 3, 8, 15, 16, 17, 31, 33, 64, 100, 127, 128, 129, 191, 255, 256, 257,
                           300, 511, 1000, 2048, 5000])


@st.composite
def messages(draw):
    n = draw(st.integers(1, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return [rng.integers(0, 256, size=draw(LENGTHS), dtype=np.uint8).tobytes() for _ in range(n)]


@settings(max_examples=40, deadline=None)
@given(messages(), st.integers(0, 2**32 - 1))
def test_many_equals_scalar(msgs, seed):
    rng = np.random.default_rng(seed)
    seeds = [(int(a), int(b)) for a, b in rng.integers(0, 2**63, size=(len(msgs), 2))]
    assert cityhash128_many(msgs) == [cityhash128(m) for m in msgs]
    assert cityhash128_with_seed_many(msgs, seeds) == [cityhash128_with_seed(m, s) for m, s in zip(msgs, seeds)]
    assert chained_file_hash_many(msgs) == [chained_file_hash(m) for m in msgs]


def test_stored_block_checksums(fixtures_root):
    """Every block checksum in every compressed fixture file, scalar and vectorised."""
    root = fixtures_root / "clickhouse" / "datadir" / "store"
    files = [p for p in root.rglob("*") if p.is_file() and (p.suffix == ".bin" or ".cmrk" in p.name
                                                          or p.name == "primary.cidx")]
    total = 0
    for p in files:
        data = p.read_bytes()
        blocks = scan_blocks(data)
        ok = verify_checksums(data, blocks)
        assert ok.all(), p
        total += len(ok)
        # one flipped payload byte is caught in that block only
        if len(blocks) > 1 and p.suffix == ".bin":
            bad = bytearray(data)
            last = blocks[-1]
            bad[int(last["offset"]) + 30] ^= 0x40
            flags = verify_checksums(bytes(bad), blocks)
            assert not flags[-1] and flags[:-1].all()
    assert total >= 2200


def test_file_hashes_in_checksums_txt(fixtures_root):
    """checksums.txt's per-file hash is the chained CityHash128WithSeed over 2048-byte pieces
    (fixtures/clickhouse/FORMAT_NOTES.md section 6): recompute it for every file a part lists and compare with the stored one."""
    from dbxray.parsers.codecs.ch_block import decompress_block, parse_block_header
    man = json.loads((fixtures_root / "clickhouse" / "manifest.json").read_text())
    part = man["tables"]["marks_mrk2"]["system_parts"][0]
    pdir = fixtures_root / "clickhouse" / "datadir" / part["rel_path"]
    text = (pdir / "checksums.txt").read_bytes()
    body_at = text.index(b"\n") + 1
    h = parse_block_header(text, body_at)
    body = decompress_block(text[body_at:body_at + h.stored_size])
    # walk the entries: varint count, then name, size, hash, compressed flag [, size, hash]
    pos = 0

    def varint():
        nonlocal pos
        v = shift = 0
        while True:
            b = body[pos]
            pos += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return v

    entries = {}
    for _ in range(varint()):
        n = varint()
        name = body[pos:pos + n].decode()
        pos += n
        size = varint()
        digest = body[pos:pos + 16]
        pos += 16
        compressed = body[pos]
        pos += 1
        if compressed:
            varint()
            pos += 16
        entries[name] = (size, digest)
    names = sorted(entries)
    datas = [(pdir / n).read_bytes() for n in names]
    assert all(len(d) == entries[n][0] for n, d in zip(names, datas))
    assert chained_file_hash_many(datas) == [entries[n][1] for n in names]
    assert len(names) > 20


@settings(max_examples=60, deadline=None)
@given(messages(), st.integers(0, 2**32 - 1))
def test_c_wheel_and_pure_port_agree(msgs, seed):
    """The clickhouse-cityhash C path (unseeded CityHash128; seeded hashes via the
    16-byte seed prefix) and the pure Python / numpy port give the same bytes
    for every function; the C path is the one checked against the engine's
    stored checksums above."""
    import pytest

    import dbxray.parsers.codecs.ch_cityhash as ch
    if ch._C_CITY128 is None:
        pytest.skip("clickhouse-cityhash is not installed")
    rng = np.random.default_rng(seed)
    seeds = [(int(a), int(b)) for a, b in rng.integers(0, 2**64 - 1, size=(len(msgs), 2), dtype=np.uint64, endpoint=True)]

    def every():
        return (cityhash128_many(msgs), cityhash128_with_seed_many(msgs, seeds), chained_file_hash_many(msgs),
                [cityhash128(m) for m in msgs], [cityhash128_with_seed(m, s) for m, s in zip(msgs, seeds)],
                [chained_file_hash(m) for m in msgs])
    c_path = every()
    saved = ch._C_CITY128
    ch._C_CITY128 = None
    try:
        py_path = every()
    finally:
        ch._C_CITY128 = saved
    assert c_path == py_path

"""The block walk's hot path (headers read in one call each, checked with numpy
over all of them) against the careful one-block-at-a-time walk it replaces,
which is kept as the oracle: same blocks, sizes, methods, chains, problems
and end, on every fixture compressed file and on corrupted copies of them."""
from __future__ import annotations

import os
import random

import numpy as np
import pytest

from fixtures_util import fixtures_dir
from dbxray.parsers.clickhouse import blocks
from dbxray.parsers.clickhouse.blocks import BlockTable, walk_blocks


def careful(data: bytes, max_blocks: int = 50_000_000) -> BlockTable:
    chains, index = [], {}
    o, c, u, m, k, b, e, end = blocks._walk_slow(data, len(data), max_blocks, None, 0, chains, index)
    return BlockTable(np.array(o, dtype=np.uint64), np.array(c, dtype=np.uint32), np.array(u, dtype=np.uint32),
                      np.array(m, dtype=np.uint8), chains, np.array(k, dtype=np.uint16), len(data), end, e,
                      np.array(b, dtype=bool))


def same(a: BlockTable, b: BlockTable) -> None:
    assert a.offsets.tolist() == b.offsets.tolist()
    assert a.compressed.tolist() == b.compressed.tolist()
    assert a.decompressed.tolist() == b.decompressed.tolist()
    assert a.methods.tolist() == b.methods.tolist()
    assert [a.chains[i] for i in a.chain_ids.tolist()] == [b.chains[i] for i in b.chain_ids.tolist()]
    assert a.chains == b.chains                       # first-appearance order, as before
    assert a.bad.tolist() == b.bad.tolist()
    assert a.errors == b.errors
    assert a.end == b.end
    assert a.codec_counts() == b.codec_counts()


def _bins() -> list[str]:
    base = fixtures_dir()
    assert base is not None, "fixtures missing (../shared/fixtures or DBXRAY_FIXTURES)"
    root = base / "clickhouse"
    out = []
    for d, _, fs in os.walk(root):
        out += [os.path.join(d, f) for f in fs if f.endswith((".bin", ".cmrk2", ".cmrk3", ".cmrk4", ".cidx"))
                and not os.path.islink(os.path.join(d, f))]
    return sorted(out)


def test_fixture_files_walk_the_same():
    files = _bins()
    assert len(files) > 300
    blocks_seen = 0
    for p in files:
        data = open(p, "rb").read()
        ref = careful(data)
        same(walk_blocks(data), ref)
        fd = os.open(p, os.O_RDONLY)
        try:
            same(walk_blocks(None, fd=fd), ref)
        finally:
            os.close(fd)
        blocks_seen += len(ref)
    assert blocks_seen > 1500


@pytest.mark.parametrize("seed", range(6))
def test_corrupted_copies_walk_the_same(seed):
    rng = random.Random(seed)
    files = [p for p in _bins() if os.path.getsize(p) > 200]
    for p in rng.sample(files, 60):
        data = bytearray(open(p, "rb").read())
        ref_blocks = careful(bytes(data))
        for _ in range(8):
            d = bytearray(data)
            if len(ref_blocks) and rng.random() < 0.7:      # aim at a header field
                off = int(rng.choice(ref_blocks.offsets.tolist()))
                d[off + rng.randrange(16, min(64, len(d) - off))] ^= 1 << rng.randrange(8)
            else:
                d = d[:rng.randrange(len(d))]
            d = bytes(d)
            same(walk_blocks(d), careful(d))
        same(walk_blocks(bytes(data), max_blocks=2), careful(bytes(data), max_blocks=2))


def test_long_codec_list_and_huge_decompressed_size_go_to_the_careful_walk():
    from dbxray.parsers.codecs.ch_methods import LZ4, Multiple, NONE
    def block(method: int, payload: bytes, usize: int) -> bytes:
        c = 9 + len(payload)
        return bytes(16) + bytes([method]) + c.to_bytes(4, "little") + usize.to_bytes(4, "little") + payload
    long_list = bytes([45]) + bytes([NONE] * 44 + [LZ4]) + bytes(10)
    data = (block(LZ4, bytes(30), 100) + block(Multiple, long_list, 50) + block(NONE, bytes(5), 5)
            + block(Multiple, bytes([0]) + bytes(4), 5) + block(NONE, bytes(3), 0x50000000) + block(NONE, b"x", 1))
    t = walk_blocks(data)
    same(t, careful(data))
    assert len(t) == 4 and t.chains[1] == (NONE,) * 44 + (LZ4,)
    assert any("lists 0 codecs" in m for m, _ in t.errors)
    assert any("decompressed bytes" in m for m, _ in t.errors)

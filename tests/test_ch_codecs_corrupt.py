"""Bad ClickHouse blocks: bombs, truncation, unknown methods, random corruption.

Every failure must be a DecodeError that names what failed, raised quickly,
never another exception, a hang, or a huge allocation.
"""
from __future__ import annotations

import struct
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbxray.parsers.codecs.ch_block import (CHECKSUM_SIZE, chain_of, compress_block, decompress_block,
                                     parse_block_header, walk_blocks)
from dbxray.parsers.codecs.ch_cityhash import cityhash128
from dbxray.parsers.codecs.general import DecodeError

RAW = (np.cumsum(np.random.default_rng(3).integers(0, 9, size=8192)) * 7).astype("<u8").tobytes()
CHAINS = ["NONE", "LZ4", "ZSTD(1)", "Delta,ZSTD(1)", "DoubleDelta", "DoubleDelta,LZ4", "Gorilla",
          "Gorilla,ZSTD(1)", "T64", "T64,LZ4", "GCD,LZ4", "FPC(12)", "Delta,GCD,T64,LZ4"]


def _blocks():
    return {c: compress_block(RAW, c, type_size=8) for c in CHAINS}


BLOCKS = _blocks()


def _with_header(block: bytes, method=None, csize=None, dsize=None, payload=None) -> bytes:
    m, c, d = struct.unpack_from("<BII", block, CHECKSUM_SIZE)
    p = block[CHECKSUM_SIZE + 9:] if payload is None else payload
    c = (9 + len(p)) if csize is None else csize
    body = struct.pack("<BII", m if method is None else method, c, d if dsize is None else dsize) + p
    return cityhash128(body) + body


def _fast_error(fn, *args, match=None, seconds=1.0, **kw):
    t0 = time.perf_counter()
    with pytest.raises(DecodeError, match=match):
        fn(*args, **kw)
    assert time.perf_counter() - t0 < seconds


@pytest.mark.parametrize("chain", CHAINS)
def test_header_claiming_gigabytes(chain):
    block = _with_header(BLOCKS[chain], dsize=0x3FFFFFFF)
    _fast_error(decompress_block, block, match="cap")
    _fast_error(decompress_block, _with_header(BLOCKS[chain], dsize=0x7FFFFFFF), match="DBMS_MAX")
    # under an explicit cap the same block still fails fast
    _fast_error(decompress_block, BLOCKS[chain], max_output=1000, match="cap")


@pytest.mark.parametrize("chain", CHAINS)
def test_claim_just_under_the_cap_is_refused_without_work(chain):
    # 200 MB claimed from a few KB: rejected by size arithmetic, not by decoding
    _fast_error(decompress_block, _with_header(BLOCKS[chain], dsize=200_000_000))


@pytest.mark.parametrize("chain", CHAINS)
def test_truncated_payload(chain):
    block = BLOCKS[chain]
    for cut in (len(block) - 1, len(block) // 2, CHECKSUM_SIZE + 9, CHECKSUM_SIZE + 3, 5, 0):
        _fast_error(decompress_block, block[:cut])
    # a header that is consistent but whose payload lost its tail
    h = parse_block_header(block)
    short = _with_header(block, payload=block[CHECKSUM_SIZE + 9:CHECKSUM_SIZE + h.compressed_size - 7])
    _fast_error(decompress_block, short)


def test_unknown_and_unsupported_methods():
    block = BLOCKS["LZ4"]
    _fast_error(decompress_block, _with_header(block, method=0x77), match="unknown compression method byte 0x77")
    _fast_error(decompress_block, _with_header(block, method=0x96), match="encrypted")
    _fast_error(decompress_block, _with_header(block, method=0x9C), match="SZ3")
    # an unknown method inside a Multiple chain
    mblock = BLOCKS["Delta,ZSTD(1)"]
    p = bytearray(mblock[CHECKSUM_SIZE + 9:])
    p[1] = 0x77
    _fast_error(decompress_block, _with_header(mblock, payload=bytes(p)), match="0x77")
    assert chain_of(mblock, params=False) == "Delta,ZSTD"


def test_bad_sizes_in_header():
    block = BLOCKS["ZSTD(1)"]
    _fast_error(parse_block_header, _with_header(block, csize=3), match="below")
    _fast_error(decompress_block, _with_header(block, csize=len(block)), match="truncated")
    data = block + _with_header(block, csize=10_000_000)
    with pytest.raises(DecodeError, match=f"offset {len(block)}"):
        list(walk_blocks(data))


def test_multiple_wrong_methods_list():
    mblock = BLOCKS["Delta,ZSTD(1)"]
    p = bytearray(mblock[CHECKSUM_SIZE + 9:])
    for bad in (bytes([0]) + bytes(p[1:]), bytes([200]) + bytes(p[1:4]), b""):
        _fast_error(decompress_block, _with_header(mblock, payload=bad), match="Multiple")
    swapped = bytes([p[0], p[2], p[1]]) + bytes(p[3:])
    _fast_error(decompress_block, _with_header(mblock, payload=swapped), match="Multiple")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(CHAINS), st.data())
def test_random_corruption_never_crashes(chain, data):
    block = bytearray(BLOCKS[chain])
    n = data.draw(st.integers(1, 8))
    for _ in range(n):
        i = data.draw(st.integers(CHECKSUM_SIZE + 9, len(block) - 1))
        block[i] = data.draw(st.integers(0, 255))
    t0 = time.perf_counter()
    try:
        out = decompress_block(bytes(block))
    except DecodeError as e:
        assert str(e)
    else:
        assert len(out) == len(RAW)
    assert time.perf_counter() - t0 < 2.0


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=0, max_size=200), st.sampled_from([0x02, 0x82, 0x90, 0x91, 0x92, 0x93, 0x94,
                                                            0x95, 0x98, 0x9A]),
       st.integers(0, 1 << 20))
def test_garbage_payloads(payload, method, dsize):
    body = struct.pack("<BII", method, 9 + len(payload), dsize) + payload
    try:
        out = decompress_block(cityhash128(body) + body, max_output=1 << 20)
    except DecodeError:
        return
    assert len(out) == dsize


def test_bomb_inside_a_chain_is_refused_before_decoding():
    import zstandard
    frame = zstandard.ZstdCompressor(level=1).compress(bytes(100_000_000))   # ~3 KB claiming 100 MB
    layer = struct.pack("<BII", 0x90, 9 + len(frame), 100_000_000) + frame
    payload = bytes([2, 0x92, 0x90]) + layer
    body = struct.pack("<BII", 0x91, 9 + len(payload), 65536) + payload
    _fast_error(decompress_block, cityhash128(body) + body, seconds=0.5, match="ZSTD")


def test_scan_blocks_agrees_with_walk_and_refuses_overruns():
    from dbxray.parsers.codecs.ch_block import scan_blocks
    data = b"".join(BLOCKS[c] for c in CHAINS)
    arr = scan_blocks(data)
    walked = list(walk_blocks(data))
    assert [int(o) for o in arr["offset"]] == [o for o, _ in walked]
    assert [int(m) for m in arr["method"]] == [h.method for _, h in walked]
    assert int((arr["compressed_size"].astype(int) + CHECKSUM_SIZE).sum()) == len(data)
    assert list(arr["decompressed_size"]) == [len(RAW)] * len(CHAINS)
    with pytest.raises(DecodeError, match="left in the file"):
        scan_blocks(data[:-1])
    with pytest.raises(DecodeError, match="of 25 bytes"):
        scan_blocks(data + b"\0" * 10)
    with pytest.raises(DecodeError, match="below"):
        scan_blocks(data + _with_header(BLOCKS["LZ4"], csize=4))


def test_nested_multiple_decodes_and_deep_nesting_is_refused():
    from dbxray.parsers.codecs.ch_block import encode_chain

    def wrap(inner: bytes) -> bytes:
        payload = bytes([1, 0x91]) + inner
        return struct.pack("<BII", 0x91, 9 + len(payload), len(RAW)) + payload

    body = encode_chain(RAW, "Delta,LZ4", type_size=8)
    nested = wrap(body)
    assert decompress_block(cityhash128(nested) + nested) == RAW
    deep = body
    for _ in range(40):
        deep = wrap(deep)
    _fast_error(decompress_block, cityhash128(deep) + deep, match="nested too deeply")

"""Round trips of the ClickHouse column codecs on generated typed arrays.

Each codec is checked on its own (payload level) and inside full blocks
(header, checksum, Multiple chains), including the edge cases: empty input,
one value, sizes that are not a multiple of the value size, extreme values.
"""
from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbxray.parsers.codecs import ch_delta, ch_doubledelta, ch_fpc, ch_gcd, ch_gorilla, ch_t64
from dbxray.parsers.codecs.ch_block import (chain_of, compress_block, decompress_block, encode_chain,
                                     exact_chain, method_chain,
                                     parse_block_header, parse_chain, reencode_params, verify_checksum)
from dbxray.parsers.codecs.ch_cityhash import cityhash128, cityhash128_with_seed

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
WIDTHS = st.sampled_from([1, 2, 4, 8])


@st.composite
def typed_bytes(draw, width=None, max_values=600):
    """Bytes of an array of ``width``-byte values, shaped like column data, plus a ragged tail."""
    w = draw(WIDTHS) if width is None else width
    n = draw(st.integers(0, max_values))
    kind = draw(st.sampled_from(["random", "walk", "const", "small", "extreme", "float"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dt = np.dtype(f"<u{w}")
    if kind == "random":
        a = rng.integers(0, 256, size=n * w, dtype=np.uint8).view(dt)
    elif kind == "walk":
        a = np.cumsum(rng.integers(-50, 51, size=n)).astype(np.int64).astype(dt)
    elif kind == "const":
        a = np.full(n, rng.integers(0, 2**63), dtype=np.uint64).astype(dt)
    elif kind == "small":
        a = rng.integers(0, 7, size=n).astype(dt)
    elif kind == "extreme":
        info = np.iinfo(np.dtype(f"<i{w}"))
        a = rng.choice(np.array([info.min, info.max, -1, 0, 1], dtype=np.int64), size=n).astype(dt)
    else:
        a = (np.cumsum(rng.normal(size=n)) * 100).astype(np.float64).view(np.uint64).astype(dt) \
            if w == 8 else np.round(rng.normal(size=n), 2).astype(f"<f{max(w, 4)}").view(np.uint8)[:n * w].view(dt)
    tail = draw(st.binary(max_size=w - 1)) if w > 1 and draw(st.booleans()) else b""
    return w, tail + a.tobytes()


@SETTINGS
@given(typed_bytes())
def test_delta_roundtrip(case):
    w, raw = case
    assert ch_delta.decode(ch_delta.encode(raw, w), len(raw)) == raw


@SETTINGS
@given(typed_bytes())
def test_doubledelta_roundtrip(case):
    w, raw = case
    assert ch_doubledelta.decode(ch_doubledelta.encode(raw, w), len(raw)) == raw


@SETTINGS
@given(typed_bytes())
def test_gorilla_roundtrip(case):
    w, raw = case
    assert ch_gorilla.decode(ch_gorilla.encode(raw, w), len(raw)) == raw


@SETTINGS
@given(typed_bytes(), st.sampled_from([1, 3, 7, 10]))
def test_gcd_roundtrip(case, factor):
    w, raw = case
    # make the values share a divisor sometimes
    body = np.frombuffer(raw[len(raw) % w:], dtype=f"<u{w}")
    scaled = raw[:len(raw) % w] + (body * body.dtype.type(factor)).astype(body.dtype).tobytes()
    for data in (raw, scaled):
        assert ch_gcd.decode(ch_gcd.encode(data, w), len(data)) == data


@SETTINGS
@given(st.sampled_from([16, 32]), st.lists(st.integers(0, 2**64), max_size=40), st.integers(1, 1000))
def test_gcd_wide_roundtrip(width, values, factor):
    raw = b"".join(((v * factor) % (1 << (8 * width))).to_bytes(width, "little") for v in values)
    enc = ch_gcd.encode(raw, width)
    assert ch_gcd.decode(enc, len(raw)) == raw


@SETTINGS
@given(st.data(), st.sampled_from(sorted(ch_t64.MAGIC_NUMBERS)), st.sampled_from([0, 1]))
def test_t64_roundtrip(data, type_name, variant):
    width = ch_t64.base_type_info(type_name)[0]
    _, raw = data.draw(typed_bytes(width=width))
    assert ch_t64.decode(ch_t64.encode(raw, type_name, variant), len(raw)) == raw


@SETTINGS
@given(st.data(), st.sampled_from([4, 8]), st.sampled_from([1, 2, 5, 12, 16, 28]))
def test_fpc_roundtrip(data, width, level):
    _, raw = data.draw(typed_bytes(width=width, max_values=300))
    assert ch_fpc.decode(ch_fpc.encode(raw, width, level), len(raw)) == raw


CHAINS = ["NONE", "LZ4", "LZ4HC(9)", "LZ4HC(0)", "ZSTD(1)", "ZSTD(3)", "ZSTD(1, 24)", "Delta,ZSTD(1)",
          "Delta,LZ4", "DoubleDelta", "DoubleDelta,LZ4", "Gorilla", "Gorilla,ZSTD(1)", "T64",
          "T64('bit'),ZSTD(1)", "GCD,LZ4", "FPC(12),ZSTD", "Delta,GCD,T64,LZ4", "CODEC(Delta(2), LZ4)"]


@SETTINGS
@given(typed_bytes(max_values=400), st.sampled_from(CHAINS))
def test_block_roundtrip(case, chain):
    w, raw = case
    if "FPC" in chain and w not in (4, 8):
        w = 8
    block = compress_block(raw, chain, type_size=w)
    h = parse_block_header(block)
    assert h.compressed_size + 16 == len(block)
    assert h.decompressed_size == len(raw)
    assert verify_checksum(block)
    assert decompress_block(block) == raw
    # what the block records is enough to write it again identically
    # (LZ4/LZ4HC and ZSTD levels excepted: they are not stored)
    if "LZ4HC" not in chain and "ZSTD" not in chain:
        prm = reencode_params(block)
        assert compress_block(raw, prm["chain"], prm["type_size"], prm["value_type"]) == block
    assert len(method_chain(block)) == len(parse_chain(chain))


def test_chain_of_names():
    raw = np.arange(1000, dtype="<u4").tobytes()
    assert chain_of(compress_block(raw, "Delta(4),ZSTD(1)")) == "Delta(4),ZSTD"
    assert chain_of(compress_block(raw, "Delta,ZSTD(1)", type_size=4), params=False) == "Delta,ZSTD"
    assert chain_of(compress_block(raw, "T64,LZ4", type_size=4)) == "T64,LZ4"
    assert chain_of(compress_block(raw, "T64('bit')", type_size=4)) == "T64('bit')"
    assert chain_of(compress_block(raw, "Gorilla", type_size=4)) == "Gorilla(4)"
    assert chain_of(compress_block(raw, "FPC(12)", type_size=4)) == "FPC(12)"
    assert chain_of(compress_block(raw, "LZ4HC(9)")) == "LZ4"
    assert chain_of(compress_block(raw, "NONE")) == "NONE"
    prm = reencode_params(compress_block(raw, "T64,ZSTD(1)", value_type="DateTime"))
    assert prm == {"chain": "T64,ZSTD", "type_size": 4, "value_type": "DateTime"}


def test_known_examples():
    # the worked example in CompressionCodecGorilla.cpp's comment
    raw = np.array([0.1, 0.1, 0.11, 0.2, 0.1], dtype="<f4").tobytes()
    assert ch_gorilla.encode(raw, 4) == bytes([4, 0]) + bytes.fromhex(
        "05000000cdcccc3d6a5ad8b63ccd75b16c77000000")
    # Delta: running differences after [width][skip]
    assert ch_delta.encode(bytes([9, 1, 2, 4]), 1) == bytes([1, 0, 9, 0xF8, 1, 2])
    # DoubleDelta: count, first, first delta, then '0' bits for constant steps
    raw = np.array([10, 20, 30, 40], dtype="<u4").tobytes()
    assert ch_doubledelta.encode(raw, 4) == bytes([4, 0]) + bytes.fromhex("040000000a0000000a00000000")


def test_cityhash_reference_values():
    # seeded and unseeded agree through the identity the fixtures' notes use
    s = bytes(range(256)) * 5
    lo, hi = int.from_bytes(s[:8], "little") ^ 0xC949D7C7509E6557, int.from_bytes(s[8:16], "little")
    assert cityhash128(s) == cityhash128_with_seed(s[16:], (lo, hi))
    assert len({cityhash128(s[:n]) for n in range(0, 300)}) == 300


@pytest.mark.parametrize("codec,width", [("Gorilla", 8), ("Gorilla", 4), ("DoubleDelta", 8),
                                         ("DoubleDelta", 4), ("T64", 8), ("T64", 4), ("Delta", 4),
                                         ("GCD", 8), ("FPC", 8), ("FPC", 4)])
def test_one_mib_block_is_fast(codec, width):
    rng = np.random.default_rng(7)
    n = (1 << 20) // width
    if codec in ("Gorilla", "FPC"):
        vals = np.cumsum(rng.normal(size=n)).astype(f"<f{width}").view(f"<u{width}")
    else:
        vals = (np.cumsum(rng.integers(0, 1000, size=n)) * 3).astype(f"<u{width}")
    raw = vals.tobytes()
    t0 = time.process_time()
    block = compress_block(raw, codec, type_size=width)
    t1 = time.process_time()
    assert decompress_block(block) == raw
    t2 = time.process_time()
    # "well under a second" each way (CPU time, so that a loaded machine does not fail it)
    assert t1 - t0 < 1.0 and t2 - t1 < 1.0, (t1 - t0, t2 - t1)


def test_encode_chain_is_the_block_without_checksum():
    raw = np.arange(5000, dtype="<u8").tobytes()
    for chain in ("LZ4", "Delta,ZSTD(3)", "T64,LZ4"):
        assert compress_block(raw, chain, type_size=8)[16:] == encode_chain(raw, chain, type_size=8)


def test_exact_chain_finds_the_levels():
    rng = np.random.default_rng(5)
    raw = rng.integers(0, 50, size=40000).astype("<u4").tobytes()
    assert exact_chain(compress_block(raw, "ZSTD(7)")) == "ZSTD(7)"
    assert exact_chain(compress_block(raw, "LZ4")) == "LZ4"
    assert exact_chain(compress_block(raw, "LZ4HC(0)")) == "LZ4HC(9)"
    assert exact_chain(compress_block(raw, "Delta(4),ZSTD(5)")) == "Delta(4),ZSTD(5)"
    assert exact_chain(compress_block(raw, "DoubleDelta", type_size=4)) == "DoubleDelta"
    # a long-range ZSTD frame is not among the candidates
    assert exact_chain(compress_block(raw, "ZSTD(3, 27)")) in (None, "ZSTD(3)")


def test_t64_every_bit_width_both_variants():
    """T64 byte planes and bit masks (a view of the values' bytes, transposed, and the bits
    of the planes above them unpacked): every width of valuable bits of every integer type,
    'byte' and 'bit' variants, decode back to the values; a 'bit' mask j holds bit j of each
    of its 64 values."""
    from dbxray.parsers.codecs import ch_t64
    rng = np.random.default_rng(5)
    for t in ("UInt8", "Int8", "UInt16", "Int16", "UInt32", "Int32", "UInt64", "Int64", "DateTime", "Decimal64"):
        w, signed = ch_t64.base_type_info(t)
        for bits in range(8 * w + 1):
            top = (1 << bits) - 1
            v = [int(x) % (top + 1) if top else 0 for x in rng.integers(0, 2**62, 200)]
            if signed and bits:
                v = [x - (1 << (bits - 1)) for x in v]
            raw = np.array(v, dtype=f"<{'i' if signed else 'u'}{w}").tobytes() + bytes(int(rng.integers(0, w)))
            for variant in (ch_t64.VARIANT_BYTE, ch_t64.VARIANT_BIT):
                enc = ch_t64.encode(raw, t, variant)
                assert ch_t64.decode(enc, len(raw)) == raw, (t, bits, variant)
    # unsigned, the 'bit' variant, 64 values 0..63 shifted up 8 bits and bit 14 set in all:
    # 14 valuable bits (bit 14 comes from min), each a plane of its bit in the 64 values
    vals = (np.arange(64, dtype=np.uint64) << np.uint64(8)) | np.uint64(1 << 14)
    enc = ch_t64.encode(vals.astype("<u4").tobytes(), "UInt32", ch_t64.VARIANT_BIT)
    assert ch_t64.valuable_bits(int(vals.min()), int(vals.max()), False) == 14
    masks = np.frombuffer(enc[1 + 16:], dtype="<u8")
    assert len(masks) == 14
    for j in range(14):
        want = sum(1 << i for i in range(64) if int(vals[i]) >> j & 1)
        assert int(masks[j]) == want, j

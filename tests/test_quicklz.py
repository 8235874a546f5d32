"""QuickLZ level-3 decoder: real engine streams, round trips, lying headers, fuzz."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbxray.parsers.codecs import quicklz
from dbxray.parsers.codecs.general import DecodeError
from dbxray.parsers.tokudb.ftfile import read_ft_file
from dbxray.parsers.tokudb.x1764 import x1764
from test_tokudb_manifest import file_bytes, tree_files


def _real_streams():
    """(name, stream without the 0x39 method byte, uncompressed size) of every
    QuickLZ sub-block the engine wrote in the fixtures (node info + partitions)."""
    out = []
    for f in tree_files():
        b = file_bytes(f)
        ft = read_ft_file(b, len(b), verify=False, entries=False)
        for n in ft.nodes.values():
            sbs = [n.node_info] + [p.sub_block for p in n.partitions]
            for k, sb in enumerate(sbs):
                if sb.method_byte == 0x39:
                    start = sb.offset + 8
                    out.append((f"{f['path'].rsplit('/', 1)[-1]}:{n.blocknum}:{k}",
                                b[start + 1:start + sb.compressed_size], sb.uncompressed_size))
    return out


REAL = _real_streams()


def test_fixtures_hold_both_header_forms():
    assert len(REAL) >= 70
    flags = {s[0] & 0x4F for _, s, _ in REAL}
    assert flags == {0x4D, 0x4F}          # 3-byte and 9-byte headers, level 3, compressed


@pytest.mark.parametrize("name,stream,usize", REAL, ids=[r[0] for r in REAL])
def test_real_engine_streams_decode(name, stream, usize):
    out = quicklz.decompress(stream, expected_size=usize)
    assert len(out) == usize
    # every node sub-block ends with the x1764 of what precedes it
    assert x1764(out[:-4]) == int.from_bytes(out[-4:], "little")
    assert quicklz.qlz_sizes(stream) == (len(stream), usize)
    assert quicklz.decompress(stream, stop_after=5) == out[:5]


def test_lying_decompressed_size_is_an_error():
    name, stream, usize = max(REAL, key=lambda r: r[2])
    s = bytearray(stream)
    assert s[0] & 2                                       # 9-byte header
    s[5:9] = (usize + 1000).to_bytes(4, "little")         # claims more than the body holds
    with pytest.raises(DecodeError):
        quicklz.decompress(bytes(s))
    s[5:9] = (usize - 1000).to_bytes(4, "little")         # claims less: a match overruns
    with pytest.raises(DecodeError):
        quicklz.decompress(bytes(s))
    s[5:9] = (0xFFFFFFFF).to_bytes(4, "little")           # huge: refused before allocating
    with pytest.raises(DecodeError, match="over the cap"):
        quicklz.decompress(bytes(s), max_output=1 << 20)
    s[5:9] = usize.to_bytes(4, "little")
    s[1:5] = (len(stream) + 50).to_bytes(4, "little")     # compressed size past the data
    with pytest.raises(DecodeError):
        quicklz.decompress(bytes(s))
    with pytest.raises(DecodeError):
        quicklz.decompress(stream, expected_size=usize + 1)


def test_bad_flags():
    with pytest.raises(DecodeError):
        quicklz.decompress(b"")
    with pytest.raises(DecodeError):
        quicklz.decompress(bytes([0x01, 3, 1]))           # bit 6 not set
    with pytest.raises(DecodeError, match="level"):
        quicklz.decompress(bytes([0x45, 8, 1, 0, 0, 0, 0x80, 0x41]))   # level 1


@pytest.mark.parametrize("data", [b"a", b"abc" * 3, b"x" * 300, bytes(range(256)) * 40,
                                  b"hello world, hello world, hello world!" * 100])
def test_round_trip_examples(data):
    enc = quicklz.compress(data)
    assert quicklz.decompress(enc) == data
    if len(set(data)) < 50 and len(data) > 100:
        assert len(enc) < len(data)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.binary(min_size=1, max_size=3000),
                 st.lists(st.sampled_from([b"ab", b"abcabc", b"\0\0\0\0", b"xyz", b"q"]),
                          min_size=1, max_size=600).map(b"".join)))
def test_round_trip_fuzz(data):
    assert quicklz.decompress(quicklz.compress(data)) == data


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=0, max_size=400))
def test_decoder_fuzz_random_bytes(data):
    try:
        out = quicklz.decompress(data, max_output=1 << 16)
    except DecodeError:
        return
    assert len(out) == quicklz.qlz_sizes(data)[1] <= 1 << 16


@settings(max_examples=200, deadline=None)
@given(st.integers(0, len(REAL) - 1), st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(1, 255)),
                                               min_size=1, max_size=6))
def test_decoder_fuzz_mutated_real_streams(k, flips):
    _, stream, usize = REAL[k]
    s = bytearray(stream)
    for pos, x in flips:
        s[pos % len(s)] ^= x
    try:
        out = quicklz.decompress(bytes(s), max_output=1 << 22)
    except DecodeError:
        return
    assert len(out) == quicklz.qlz_sizes(bytes(s))[1]


def test_encoder_sizes_close_to_the_engine():
    """Re-encoding engine-written partitions gives (nearly) the engine's sizes, so
    projections for QuickLZ dictionaries can use this encoder."""
    sample = REAL[::10]
    engine = sum(len(s) for _, s, _ in sample)
    mine = 0
    for _, s, _ in sample:
        raw = quicklz.decompress(s)
        enc = quicklz.compress(raw)
        assert quicklz.decompress(enc) == raw
        mine += len(enc)
    assert abs(mine - engine) <= 0.01 * engine, (mine, engine)

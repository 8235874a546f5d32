"""Codec registry: stable names, levels, round trips, bounded decoders."""
import os

import pytest

from dbxray.compress.registry import (LEVELS, Codec, UnknownCodec, all_codec_names, normalize_ch_chain,
                               parse_codec)
from dbxray.parsers.codecs.general import DecodeError

DATA = (b"dbxray " * 700) + os.urandom(3000) + bytes(5000)


def test_every_name_parses_back_to_itself():
    names = all_codec_names()
    assert "zstd:-5" in names and "zstd:22" in names and "lz4hc:12" in names and "brotli:0" in names
    assert len(names) == len(set(names))
    for n in names:
        assert parse_codec(n).name == n


@pytest.mark.parametrize("name", ["none", "zlib:1", "zlib:9", "lz4", "lz4hc:1", "lz4hc:12", "zstd:-5",
                                  "zstd:1", "zstd:19", "lzma:0", "lzma:6", "bzip2:1", "bzip2:9", "snappy",
                                  "brotli:0", "brotli:5"])
def test_round_trip(name):
    c = parse_codec(name)
    blob = c.compress(DATA)
    assert c.decompress(blob, len(DATA)) == DATA
    if c.family != "none":
        assert len(blob) < len(DATA)


def test_defaults_and_shorthand():
    assert parse_codec("zstd").name == "zstd:3"
    assert parse_codec("zlib").name == "zlib:6"
    assert parse_codec("LZ4").name == "lz4"
    assert parse_codec("ZSTD(1)").name == "zstd:1"
    assert parse_codec("ZSTD").name == "zstd:1"          # ClickHouse's default level
    assert parse_codec("LZ4HC(0)").name == "lz4hc:9"     # LZ4HC(0) means the default 9
    assert parse_codec("zstd:3").ch_chain == "ZSTD(3)"
    assert parse_codec("lzma:6").ch_chain is None


@pytest.mark.parametrize("bad", ["", "zstd:23", "zlib:0", "lz4:3", "bzip2:x", "gzip", "Delta(4),FOO",
                                 "brotli:12", "lzma:10"])
def test_unknown_names_raise(bad):
    with pytest.raises(UnknownCodec):
        parse_codec(bad)


def test_clickhouse_chains_normalised():
    assert normalize_ch_chain("Delta(4), ZSTD(1)") == "Delta(4),ZSTD(1)"
    assert normalize_ch_chain("t64, lz4") == "T64,LZ4"
    assert normalize_ch_chain("DoubleDelta,ZSTD") == "DoubleDelta,ZSTD(1)"
    c = parse_codec("Delta(4),ZSTD(1)")
    assert c.is_chain and c.name == "Delta(4),ZSTD(1)" and c.ch_chain == "Delta(4),ZSTD(1)"
    assert parse_codec("Gorilla").is_chain


def test_lzma_size_is_without_the_xz_check():
    c = parse_codec("lzma:2")
    assert c.compressed_size(DATA) == len(c.compress(DATA)) - 8
    import lzma
    assert c.compressed_size(DATA) == len(lzma.compress(DATA, format=lzma.FORMAT_XZ, check=lzma.CHECK_NONE,
                                                       preset=2))


@pytest.mark.parametrize("name", ["zlib:6", "zstd:3", "lzma:1", "bzip2:1", "brotli:1", "lz4", "snappy"])
def test_decoders_are_bounded(name):
    c = parse_codec(name)
    bomb = bytes(1 << 20)
    blob = c.compress(bomb)
    with pytest.raises(DecodeError):
        c.decompress(blob, len(bomb), max_output=4096)


def test_levels_table_matches_issue():
    assert LEVELS["zlib"][:2] == (1, 9) and LEVELS["lz4hc"][:2] == (1, 12) and LEVELS["zstd"][:2] == (-5, 22)
    assert LEVELS["lzma"][:2] == (0, 9) and LEVELS["bzip2"][:2] == (1, 9) and LEVELS["brotli"][:2] == (0, 11)
    assert LEVELS["none"] is None and LEVELS["lz4"] is None and LEVELS["snappy"] is None
    assert Codec("zstd", 3).name == "zstd:3"


@pytest.mark.parametrize("n", [100, 16384, 65546, 65547, 200000])
def test_lz4_is_lz4_compress_default(n):
    """Same bytes as LZ4_compress_default (cramjam's compress_block calls it) at every size."""
    import cramjam
    data = (b"innodb page " * 20000)[:n // 2] + os.urandom(n - n // 2)
    assert parse_codec("lz4").compress(data) == bytes(cramjam.lz4.compress_block(data, store_size=False))


@pytest.mark.parametrize("name", ["lz4", "snappy"])
@pytest.mark.parametrize("n", [0, 1, 100, 16384, 65546, 65547, 200000, 3 << 20])
def test_counted_size_equals_the_bytes(name, n):
    """lz4/snappy count their output in a reused per-thread buffer: the same number as the bytes."""
    data = (b"innodb page " * 300000)[:n // 2] + os.urandom(n - n // 2)
    c = parse_codec(name)
    assert c.compressed_size(data) == len(c.compress(data))
    assert c.compressed_size(data[:n // 3]) == len(c.compress(data[:n // 3]))   # after a bigger one

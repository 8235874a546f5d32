"""Storage models against the engines' own numbers (fixture manifests) and their sources' rules."""
import json
import os
import zlib

import numpy as np
import pytest

from dbxray.compress.engines.clickhouse import CH_FRAMING, ClickHouseBlocks, clickhouse_block_sizes
from dbxray.compress.engines.innodb import InnoDBPageCompressed, InnoDBRowCompressedEstimate
from dbxray.compress.engines.tokudb import TokuDBPartitions
from dbxray.compress.fsmodels import BtrfsExtents, ZFSRecords, ext4_extent_tree_bytes
from dbxray.compress.registry import Codec, parse_codec

ALGO_CODEC = {"zlib": Codec("zlib", 6), "lz4": Codec("lz4"), "lzma": Codec("lzma", 6),
              "bzip2": Codec("bzip2", 1), "snappy": Codec("snappy")}


def test_full_crc32_write_size_matches_every_page_compressed_page(fixtures_root):
    """stored_bytes the server wrote = (26 + payload + lsb + 4 + 255) & ~255, for every such page."""
    man = json.loads((fixtures_root / "innodb" / "manifest.json").read_text())
    checked = 0
    for f in man["files"]:
        pages = (f.get("pages") or {}).get("page_compressed_pages") or []
        flags = (f.get("pages") or {}).get("fsp_flags_decoded") or {}
        if not pages or flags.get("format") != "full_crc32":
            continue
        model = InnoDBPageCompressed(page_size=flags["logical_page_size"], fs_block=4096)
        codec = ALGO_CODEC.get(pages[0]["algorithm"])
        if codec is None:        # lzo: not in the registry
            continue
        for p in pages:
            assert model.engine_write_size(codec, p["payload_len"]) == p["stored_bytes"], (f["path"], p)
            checked += 1
    assert checked >= 80


def test_page_compression_rules():
    m = InnoDBPageCompressed(page_size=16384, fs_block=4096)
    z = Codec("zlib", 6)
    assert m.write_size(z, 100) == 4096                  # rounded up to the fs block
    assert m.write_size(z, 4096 - 30) == 4096            # 26 + 4066 + 4 = 4096
    assert m.write_size(z, 4096 - 29) == 8192
    assert m.write_size(z, 16384 - 26 - 4) == 16384      # no saving: stored whole
    assert m.write_size(Codec("lz4"), 4096 - 30) == 8192  # lz4 keeps one length byte more
    assert InnoDBPageCompressed(page_size=4096, fs_block=4096).write_size(z, 10) == 4096
    legacy = InnoDBPageCompressed(page_size=16384, fs_block=4096, layout="legacy")
    assert legacy.engine_write_size(z, 100) == 140
    page = bytearray(16384)
    assert m.project(z, bytes(page)) == 0                # never written: a hole
    page[24:26] = (8).to_bytes(2, "big")                 # FSP_HDR: never compressed
    assert m.project(z, bytes(page)) == 16384
    page[24:26] = (17855).to_bytes(2, "big")
    assert m.project(z, bytes(page)) == 4096
    assert m.project(Codec("none"), bytes(page)) == 16384


def test_ext4_extent_tree():
    assert ext4_extent_tree_bytes(4) == 0
    assert ext4_extent_tree_bytes(5) == 4096
    assert ext4_extent_tree_bytes(341) == 8192


def test_row_compressed_estimate_is_labelled_and_splits():
    m = InnoDBRowCompressedEstimate(page_size=16384, key_block_size=8192)
    assert "estimate" in m.name
    page = bytearray(os.urandom(16384))
    page[24:26] = (17855).to_bytes(2, "big")
    page[38 + 16:38 + 18] = bytes(2)                                 # PAGE_N_RECS 0
    page[38 + 2:38 + 4] = (16384 - 8).to_bytes(2, "big")             # PAGE_HEAP_TOP: a full page
    page[38 + 8:38 + 10] = bytes(2)                                  # PAGE_GARBAGE 0
    assert m.project(Codec("zlib", 6), bytes(page)) == 3 * 8192     # random: splits
    page = bytearray(16384)
    page[24:26] = (17855).to_bytes(2, "big")
    page[38 + 2:38 + 4] = (16384 - 8).to_bytes(2, "big")
    assert m.project(Codec("zlib", 6), bytes(page)) == 8192
    # 500 records of the clustered index (id 7) keep 2 + 13 bytes each outside the stream
    # (page0zip.cc): 7,500 bytes, more than one 8 KiB block holds with the stream
    page[38 + 16:38 + 18] = (500).to_bytes(2, "big")
    page[38 + 28:38 + 36] = (7).to_bytes(8, "big")
    assert m.project(Codec("zlib", 6), bytes(page)) == 8192
    assert InnoDBRowCompressedEstimate(clustered_index=7).project(Codec("zlib", 6), bytes(page)) == 2 * 8192
    assert m.supports(Codec("lz4")) is not None
    # a half-full page is half of a full page of these records (the rebuild packs them): a full
    # page of 1,000 such records takes 3 blocks, this one half of that
    page[38 + 2:38 + 4] = (120 + (16384 - 128) // 2).to_bytes(2, "big")
    assert InnoDBRowCompressedEstimate(clustered_index=7).project(Codec("zlib", 6), bytes(page)) == 3 * 8192 // 2
    # the bound holds even for a page whose header claims the most records a page can hold
    page = bytearray(os.urandom(16384))
    page[24:26] = (17855).to_bytes(2, "big")
    page[38 + 16:38 + 18] = (65535).to_bytes(2, "big")
    most = int(m.max_bytes(np.array([16384]))[0])
    assert m.project(Codec("zlib", 6), bytes(page)) <= most


def test_tokudb_framing_matches_partition_sizes(fixtures_root):
    """disk_size of every partition = compressed stream (method byte included) + 12."""
    man = json.loads((fixtures_root / "tokudb" / "manifest.json").read_text())
    n = 0
    for f in man["files"]:
        for node in (f.get("fixture_parser_crosscheck") or {}).get("nodes", []):
            for p in node["partitions"]:
                assert p["disk_size"] == p["compressed_size"] + 12
                n += 1
    assert n > 100


def test_tokudb_codecs():
    data = b"tokudb partition " * 1000
    m = TokuDBPartitions()
    assert m.project(Codec("none"), data) == len(data) + 13
    assert m.project(Codec("zlib", 5), data) == len(zlib.compress(data, 5)) + 12
    import lzma
    assert m.project(Codec("lzma", 2), data) == 13 + len(lzma.compress(data, format=lzma.FORMAT_XZ,
                                                                     check=lzma.CHECK_NONE, preset=2))
    raw = zlib.compressobj(5, zlib.DEFLATED, -15)
    deflated = raw.compress(data) + raw.flush()
    assert TokuDBPartitions(zlib_without_checksum=True).project(Codec("zlib", 5), data) == 12 + 2 + len(deflated)


def test_clickhouse_general_codecs_framing():
    data = np.arange(20000, dtype=np.uint32).tobytes()
    m = ClickHouseBlocks()
    assert m.project(Codec("none"), data) == len(data) + CH_FRAMING
    import lz4.block
    assert m.project(Codec("lz4"), data) == CH_FRAMING + len(lz4.block.compress(data, store_size=False))
    assert m.supports(Codec("lzma", 6)) is not None


def test_clickhouse_block_cutting():
    assert clickhouse_block_sizes(3 * 1048576 + 5) == [1048576] * 3 + [5]
    # granules of 40 KiB: a block closes once it holds >= 64 KiB, i.e. every 2 granules
    sizes = clickhouse_block_sizes(0, [40960] * 5)
    assert sizes == [81920, 81920, 40960]
    big = clickhouse_block_sizes(0, [3 * 1048576])
    assert big == [1048576] * 3


def test_zfs_rules():
    z = ZFSRecords()
    assert z.project(Codec("lz4"), bytes(131072)) == 0                      # zero record: hole
    rnd = os.urandom(131072)
    assert z.project(Codec("lz4"), rnd) == 131072                          # no 12.5% saving
    text = b"zfs record " * 11916 + b"x" * 4
    assert z.project(Codec("zstd", 3), text[:131072]) == 4096
    assert z.supports(Codec("snappy")) is not None


def test_btrfs_rules():
    b = BtrfsExtents()
    assert b.project(Codec("zlib", 3), os.urandom(131072)) == 131072
    # all-zero blocks read from holes: not stored, and they split the data into runs
    assert b.project(Codec("zlib", 3), bytes(131072)) == 0
    half = os.urandom(8192) + bytes(8192)
    assert [len(r) for r in b.runs(half * 8)] == [8192] * 8
    assert b.project(Codec("zlib", 3), half * 8) == 8 * 8192          # incompressible runs stored raw
    assert b.project(Codec("zlib", 3), (b"a" * 8192 + bytes(8192)) * 8) == 8 * 4096   # each run compressed
    # a fallocated file is never compressed: its records stay whole
    assert BtrfsExtents(fallocated=True).project(Codec("zlib", 3), b"a" * 131072) == 131072
    assert b.supports(Codec("zstd", 19)) is not None and b.supports(Codec("lz4")) is not None

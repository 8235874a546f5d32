"""SST files written by a real RocksDB (rocksdict's bundled RocksDB 9/10) in every
table format this reader claims: format_version 2-6 (and 7 where the library writes
it), every checksum type (crc32c, xxhash, xxhash64, xxh3, none; from format_version
6 with the per-block context checksum), every block codec, binary-search and
partitioned (two-level) indexes, hash-indexed data blocks, full and partitioned
filters, column families and several levels. Every file must read without an error,
its blocks' checksums verified, its data blocks decoded to exactly the entries written,
its level and column family as the library's own live-file list gives them."""
from __future__ import annotations

import random

import numpy as np
import pytest

rocksdict = pytest.importorskip("rocksdict")

from dbxray.parsers.fileio import ReadOnlyFile           # noqa: E402
from dbxray.parsers.rocksdb.block import iter_entries     # noqa: E402
from dbxray.parsers.rocksdb.sst import KIND_DATA, block_contents  # noqa: E402
from dbxray.parsers.scan import scan                      # noqa: E402

R = rocksdict
CHECKSUMS = {"crc32c": R.ChecksumType.crc32c, "xxhash": R.ChecksumType.xxhash,
             "xxhash64": R.ChecksumType.xxhash64, "xxh3": R.ChecksumType.xxh3, "none": R.ChecksumType.no_checksum}
CODECS = {"none": (R.DBCompressionType.none, "NoCompression"), "snappy": (R.DBCompressionType.snappy, "Snappy"),
          "zlib": (R.DBCompressionType.zlib, "Zlib"), "lz4": (R.DBCompressionType.lz4, "LZ4"),
          "lz4hc": (R.DBCompressionType.lz4hc, "LZ4HC"), "zstd": (R.DBCompressionType.zstd, "ZSTD"),
          "bz2": (R.DBCompressionType.bz2, "BZip2")}


def _write(path, n, fv, checksum, codec, index="binary", hash_index=False, bloom=None, block_size=4096,
           cfs=()):
    o = R.Options(raw_mode=True)
    o.create_if_missing(True)
    o.create_missing_column_families(True)
    b = R.BlockBasedOptions()
    b.set_format_version(fv)
    b.set_checksum_type(CHECKSUMS[checksum]())
    b.set_block_size(block_size)
    if index == "partitioned":
        b.set_index_type(R.BlockBasedIndexType.two_level_index_search())
        b.set_metadata_block_size(512)
    if hash_index:
        b.set_data_block_index_type(R.DataBlockIndexType.binary_and_hash())
    if bloom == "full":
        b.set_bloom_filter(10, False)
    elif bloom == "partitioned":
        b.set_bloom_filter(10, False)
        b.set_partition_filters(True)
        b.set_index_type(R.BlockBasedIndexType.two_level_index_search())
    o.set_block_based_table_factory(b)
    o.set_compression_type(CODECS[codec][0]())
    db = R.Rdict(str(path), o)
    rnd = random.Random(fv * 131 + len(checksum))
    written = {}
    targets = [db] + [db.create_column_family(cf, o) for cf in cfs]
    for k, t in enumerate(targets):
        for i in range(n):
            key = b"k%02d-%08d" % (k, rnd.randrange(10 ** 8))
            val = (b"v%d-" % i) * rnd.randint(1, 12) + bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 20)))
            t[key] = val
            written[key] = val
    db.flush()
    for cf in cfs:
        db.get_column_family(cf).flush()
    live = db.live_files()
    db.close()
    return written, live


def _check(path, written, live, fv, checksum, codec):
    ds = scan(str(path))
    ssts = [f for f in ds.files if f.role == "sst"]
    assert ssts and len(ssts) == len(live)
    levels = {lf["name"].lstrip("/"): lf for lf in live}
    got_keys = 0
    for f in ssts:
        assert f.engine == "rocksdb" and not f.errors, f.errors
        sec = f.sections["rocksdb"]
        assert sec.format_version == fv and sec.checksum_type == checksum
        assert sec.compression == CODECS[codec][1]
        assert sec.live is True and sec.level == levels[f.path.rsplit("/", 1)[-1]]["level"]
        sst = f.detail["sst"]
        if checksum != "none":
            assert (sst.checksum >= 1).all(), "every block's checksum computed and matching"
        n = 0
        with ReadOnlyFile(f.abspath) as rf:
            for i in np.flatnonzero(sst.kind == KIND_DATA):
                for key, value in iter_entries(block_contents(sst, rf, int(i), 1 << 24)):
                    uk = key[:-8]
                    assert written[uk] == bytes(value)
                    n += 1
        assert n == sec.entries == levels[f.path.rsplit("/", 1)[-1]]["num_entries"]
        got_keys += n
    assert got_keys == len(written)
    return ds


@pytest.mark.parametrize("fv", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("checksum", ["crc32c", "xxhash", "xxhash64", "xxh3", "none"])
def test_format_versions_and_checksums(tmp_path, fv, checksum):
    if fv < 6 and checksum == "none":
        pytest.skip("covered at format_version 6")
    written, live = _write(tmp_path / "db", 3000, fv, checksum, "snappy")
    _check(tmp_path / "db", written, live, fv, checksum, "snappy")


@pytest.mark.parametrize("codec", list(CODECS))
def test_every_block_codec(tmp_path, codec):
    written, live = _write(tmp_path / "db", 4000, 5, "crc32c", codec)
    _check(tmp_path / "db", written, live, 5, "crc32c", codec)


@pytest.mark.parametrize("index, hash_index, bloom", [
    ("partitioned", False, None), ("binary", True, None), ("binary", False, "full"),
    ("partitioned", True, "partitioned"),
])
@pytest.mark.parametrize("fv", [4, 6])
def test_index_and_filter_kinds(tmp_path, index, hash_index, bloom, fv):
    written, live = _write(tmp_path / "db", 6000, fv, "xxh3" if fv == 6 else "crc32c", "lz4",
                           index=index, hash_index=hash_index, bloom=bloom)
    ds = _check(tmp_path / "db", written, live, fv, "xxh3" if fv == 6 else "crc32c", "lz4")
    sst = next(f for f in ds.files if f.role == "sst")
    sec = sst.sections["rocksdb"]
    if index == "partitioned" or bloom == "partitioned":
        assert sec.index_type == "two_level_index_search"
        kinds = set(sst.kind_names.values())
        assert any(k.startswith("index partition") for k in kinds)
    if bloom:
        assert sec.filter_block_bytes > 0 and any(m.startswith(("fullfilter.", "partitionedfilter."))
                                                  for m in sec.meta_blocks)


def test_column_families_and_format_version_7_if_written(tmp_path):
    try:
        written, live = _write(tmp_path / "db7", 500, 7, "xxh3", "zstd")
    except Exception as e:                     # the bundled RocksDB may not write 7 yet
        pytest.skip(f"this RocksDB does not write format_version 7: {e}")
    _check(tmp_path / "db7", written, live, 7, "xxh3", "zstd")


def test_column_families(tmp_path):
    written, live = _write(tmp_path / "db", 1500, 5, "crc32c", "zstd", cfs=("alpha", "beta"))
    ds = _check(tmp_path / "db", written, live, 5, "crc32c", "zstd")
    names = {f.sections["rocksdb"].column_family for f in ds.files if f.role == "sst"}
    assert names == {"default", "alpha", "beta"}
    d = ds.to_json()["rocksdb"]["directories"][0]
    assert {c["name"] for c in d["column_families"]} == {"default", "alpha", "beta"}

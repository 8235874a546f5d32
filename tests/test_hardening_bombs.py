"""Decompression bombs (issue 8, reliability), per engine: a page, block or
partition claiming gigabytes, or a stream that expands without end, is
stopped at a cap and reported (a named error), and the decoder's peak memory
stays near the cap, never near what the bomb claims.

Memory is measured with tracemalloc (Python allocations, where every decoded
bytes object lives) around the decode only, so what the test itself builds
does not count.
"""
from __future__ import annotations

import os
import shutil
import struct
import tracemalloc
import zlib

import pytest
import zstandard

import hardening_util as hu
from dbxray.parsers.codecs import ch_block, general, quicklz
from dbxray.parsers.codecs import ch_methods as M
from dbxray.parsers.codecs.ch_encode import compress_block, encode_chain
from dbxray.parsers.codecs.general import DecodeError
from dbxray.parsers.innodb import pagecomp
from dbxray.parsers.scan import scan
from dbxray.parsers.tokudb import methods as toku_methods

MiB = 1 << 20
GiB = 1 << 30
#: liblzma allocates the stream's dictionary (8 MiB at preset 6) through Python's allocator
LZMA_DICT = 9 * MiB


def _peak(fn, *a, **kw):
    """(result or exception, peak traced bytes) of one call."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        try:
            out = fn(*a, **kw)
        except Exception as e:  # noqa: BLE001
            out = e
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return out, peak


def _zstd_zeros(n: int) -> bytes:
    """A zstd frame of n zero bytes, built in 1 MiB steps (never n bytes at once)."""
    c = zstandard.ZstdCompressor(level=1).compressobj()
    zero = bytes(MiB)
    parts = [c.compress(zero) for _ in range(n // MiB)]
    parts.append(c.flush())
    return b"".join(parts)


def _zlib_zeros(n: int) -> bytes:
    c = zlib.compressobj(9)
    zero = bytes(MiB)
    return b"".join([c.compress(zero) for _ in range(n // MiB)] + [c.flush()])


# -- ClickHouse ----------------------------------------------------------------
@pytest.mark.parametrize("claim", [900 * MiB, 3 * GiB])
@pytest.mark.parametrize("chain", ["NONE", "LZ4", "ZSTD(1)", "Delta(4),ZSTD(1)", "T64,LZ4"])
def test_clickhouse_block_claiming_gigabytes(chain, claim):
    block = bytearray(compress_block(bytes(range(256)) * 64, chain, type_size=4))
    struct.pack_into("<I", block, 16 + 5, claim)             # decompressed size
    out, peak = _peak(ch_block.decompress_block, bytes(block))
    assert isinstance(out, DecodeError), out
    assert "cap" in str(out) or "DBMS_MAX_COMPRESSED_SIZE" in str(out), out
    assert peak < 4 * MiB


def test_clickhouse_block_expanding_past_its_claim():
    """A ZSTD block whose header says 1 MiB but whose frame expands to 512 MiB."""
    frame = _zstd_zeros(512 * MiB)
    body = struct.pack("<BII", M.ZSTD, 9 + len(frame), MiB) + frame
    out, peak = _peak(ch_block.decompress_block, bytes(16) + body)
    assert isinstance(out, DecodeError) or len(out) == MiB
    assert peak < 16 * MiB, peak


def test_clickhouse_multiple_chain_bomb():
    """Multiple(ZSTD, ZSTD) over 64 MiB of zeros, relabelled as 64 KiB: every layer stays capped."""
    body = bytearray(encode_chain(bytes(64 * MiB), "ZSTD(1),ZSTD(1)"))
    assert body[0] == M.Multiple
    struct.pack_into("<I", body, 5, 65536)
    out, peak = _peak(ch_block.decompress_block, bytes(16) + bytes(body))
    assert isinstance(out, DecodeError), out
    assert peak < 32 * MiB, peak


def test_clickhouse_stream_total_capped():
    blocks = b"".join(compress_block(bytes(MiB), "ZSTD(1)") for _ in range(8))
    out, peak = _peak(ch_block.decompress_stream, blocks, max_output=2 * MiB)
    assert isinstance(out, DecodeError) and "cap" in str(out)
    assert peak < 8 * MiB


def test_clickhouse_bin_file_claiming_gigabytes(sparse_fixtures, tmp_path):
    """Through the scan and the payload decoder of a real part."""
    from dbxray.parsers.clickhouse import payloads
    t = next(t for t in hu.find_targets(sparse_fixtures)
             if t.engine == "clickhouse" and t.abspath.endswith(".bin") and os.path.getsize(t.abspath) > 64)
    part = tmp_path / os.path.basename(t.context)
    shutil.copytree(t.context, part)
    name = os.path.basename(t.abspath)
    with open(part / name, "r+b") as f:
        f.seek(16 + 5)
        f.write(struct.pack("<I", 0x7FFFFFFF))
    ds = scan(str(part))
    assert not [e for e in ds.errors if "parser failed" in e], ds.errors
    entry = next(f for f in ds.files if f.path.endswith(name))
    if entry.units is not None and len(entry.units):
        out, peak = _peak(payloads.unit_payload, entry, 0)
        assert isinstance(out, payloads.PayloadError), out
        assert name in str(out) and ("cap" in str(out) or "header" in str(out)), out
        assert peak < 8 * MiB


# -- InnoDB ----------------------------------------------------------------------
def _legacy_page(payload: bytes, page_size: int = 16384, algo: int = 1) -> bytes:
    page = bytearray(page_size)
    struct.pack_into(">I", page, 0, 0xDEADBEEF)
    struct.pack_into(">H", page, 24, 34354)               # FIL_PAGE_PAGE_COMPRESSED
    struct.pack_into(">H", page, 26 + 6, algo)
    struct.pack_into(">H", page, 38, len(payload))
    page[40:40 + len(payload)] = payload
    return bytes(page)


@pytest.mark.parametrize("algo,make", [(1, lambda: _zlib_zeros(15 * MiB)),
                                       (4, lambda: __import__("lzma").compress(bytes(8 * MiB)))])
def test_innodb_page_compressed_stream_expanding_without_end(algo, make):
    payload = make()
    assert len(payload) < 16384 - 40
    out, peak = _peak(pagecomp.decode_legacy_page, _legacy_page(payload, algo=algo), 16384)
    assert isinstance(out, pagecomp.PageDecodeError), out
    assert peak < 2 * MiB + (LZMA_DICT if algo == 4 else 0), peak


def test_innodb_mysql_compressed_page_bomb():
    payload = _zlib_zeros(15 * MiB)
    page = bytearray(16384)
    struct.pack_into(">H", page, 24, 14)                   # FIL_PAGE_COMPRESSED
    page[26] = 1                                           # version
    page[27] = 1                                           # zlib
    struct.pack_into(">HHH", page, 28, 17855, 16384 - 38, len(payload))
    page[38:38 + len(payload)] = payload
    out, peak = _peak(pagecomp.decode_mysql_page, bytes(page), 16384)
    assert isinstance(out, pagecomp.PageDecodeError), out
    assert peak < 2 * MiB, peak


def test_innodb_lz4_page_claiming_more_than_the_page():
    out, _ = _peak(pagecomp.decode_payload, "lz4", b"\x1f\x00\x01\x00" * 100, 16384, None)
    assert isinstance(out, pagecomp.PageDecodeError)


def test_innodb_unit_payload_of_a_bombed_page(sparse_fixtures, tmp_path):
    """A legacy page_compressed tablespace whose page now holds a zlib bomb."""
    from dbxray.parsers.innodb import payloads
    for t in hu.find_targets(sparse_fixtures):
        if t.engine != "innodb" or t.role != "tablespace":
            continue
        ds = scan(t.abspath)
        e = ds.files[0]
        pm = (e.detail.get("innodb") or {}).get("page_map")
        if pm is None or pm.flags.full_crc32 or not pm.compressed.any() or pm.physical != 16384:
            continue
        i = int(pm.compressed.nonzero()[0][0])
        if int(pm.type[i]) != 34354:
            continue
        dst = tmp_path / os.path.basename(t.abspath)
        hu.sparse_copyfile(t.abspath, str(dst))
        with open(dst, "r+b") as f:
            f.seek(i * 16384)
            old = f.read(16384)
            f.seek(i * 16384)
            f.write(old[:38] + _legacy_page(_zlib_zeros(15 * MiB))[38:])
        ds = scan(str(dst))
        assert not [x for x in ds.errors if "parser failed" in x], ds.errors
        out, peak = _peak(payloads.unit_payload, ds.files[0], i)
        assert isinstance(out, payloads.PayloadError), out
        assert dst.name in str(out) and f"page {i}" in str(out)
        assert peak < 2 * MiB
        return
    pytest.skip("no legacy page_compressed 16k fixture")


# -- TokuDB ----------------------------------------------------------------------
def test_tokudb_partition_claiming_gigabytes():
    out, peak = _peak(toku_methods.decompress, b"\x78" + bytes(100), 3 * GiB)
    assert isinstance(out, DecodeError) and "cap" in str(out)
    assert peak < MiB


@pytest.mark.parametrize("make", [lambda: _zlib_zeros(64 * MiB),
                                  lambda: b"\x5b\xf1" + zlib.compress(bytes(64 * MiB), 9)[2:-4],
                                  lambda: b"\x2a" + __import__("lzma").compress(bytes(64 * MiB))])
def test_tokudb_stream_expanding_past_its_claim(make):
    payload = make()
    out, peak = _peak(toku_methods.decompress, payload, 65536)
    assert isinstance(out, DecodeError), out
    assert peak < 4 * MiB + (LZMA_DICT if payload[0] == 0x2A else 0), peak


def test_quicklz_header_claiming_gigabytes():
    src = bytes([0x4F]) + struct.pack("<II", 64, 0xFFFFFFF0) + bytes(55)
    out, peak = _peak(quicklz.decompress, src)
    assert isinstance(out, DecodeError)
    assert peak < MiB


def test_tokudb_file_partition_claiming_gigabytes(sparse_fixtures, tmp_path):
    from dbxray.parsers.tokudb import payloads
    t = next(t for t in hu.find_targets(sparse_fixtures)
             if t.engine == "tokudb" and t.abspath.endswith(".tokudb"))
    dst = tmp_path / os.path.basename(t.abspath)
    hu.sparse_copyfile(t.abspath, str(dst))
    e0 = scan(str(dst)).files[0]
    assert e0.units is not None and len(e0.units)
    off = int(e0.units["offset"][0])
    with open(dst, "r+b") as f:
        f.seek(off + 4)
        f.write(struct.pack("<I", 0xC0000000))           # uncompressed: 3 GiB
    ds = scan(str(dst))
    assert not [x for x in ds.errors if "parser failed" in x], ds.errors
    e = ds.files[0]
    assert e.errors or e.warnings or (e.units is not None and (e.units["flags"] & 0x22).any())
    if e.units is not None and len(e.units):
        out, peak = _peak(payloads.unit_payload, e, 0)
        assert isinstance(out, payloads.PayloadError), out
        assert dst.name in str(out)
        assert peak < 4 * MiB


# -- the shared codec layer ------------------------------------------------------
@pytest.mark.parametrize("fn,make", [
    (general.zlib_decompress, lambda: _zlib_zeros(64 * MiB)),
    (general.zstd_decompress, lambda: _zstd_zeros(64 * MiB)),
    (general.lzma_decompress, lambda: __import__("lzma").compress(bytes(64 * MiB))),
    (general.bzip2_decompress, lambda: __import__("bz2").compress(bytes(64 * MiB))),
])
def test_general_codecs_stop_at_the_cap(fn, make):
    payload = make()
    out, peak = _peak(fn, payload, max_output=MiB)
    assert isinstance(out, DecodeError) and "cap" in str(out), out
    assert peak < 4 * MiB + (LZMA_DICT if fn is general.lzma_decompress else 0), peak


def _xz_huge_dictionary() -> bytes:
    import lzma
    return lzma.compress(b"hello" * 10, format=lzma.FORMAT_XZ,
                         filters=[{"id": lzma.FILTER_LZMA2, "dict_size": 1536 * MiB}])


def test_tokudb_lzma_header_claiming_a_huge_dictionary():
    """An xz stream declaring a 1.5 GiB dictionary: liblzma would allocate it
    before decoding a byte; the TokuDB decoder's memlimit refuses it."""
    payload = b"\x2a" + _xz_huge_dictionary()
    out, peak = _peak(toku_methods.decompress, payload, 50)
    assert isinstance(out, DecodeError), out
    assert peak < 16 * MiB, peak
    out, peak = _peak(toku_methods.decompress_prefix, payload, 50, 8)
    assert isinstance(out, DecodeError), out
    assert peak < 16 * MiB, peak


def test_tokudb_lzma_still_decodes():
    import lzma
    raw = bytes(range(256)) * 300
    payload = b"\x2a" + lzma.compress(raw, format=lzma.FORMAT_XZ, preset=2)
    assert toku_methods.decompress(payload, len(raw)) == raw
    assert toku_methods.decompress_prefix(payload, len(raw), 10) == raw[:10]
    with pytest.raises(DecodeError):
        toku_methods.decompress(payload, len(raw) - 1)


def test_tokudb_snappy_prefix_truncated_copy_is_a_decode_error():
    """Fuzz finding: a snappy copy tag as the last byte made decompress_prefix
    index past the payload (IndexError in methods._snappy_prefix)."""
    payload = bytes.fromhex("f7fcef0f89")       # method 7 (snappy), varint length, then a cut copy tag
    with pytest.raises(DecodeError):
        toku_methods.decompress_prefix(payload, 2651226317, 16)
    for cut in (b"\x07\x08\x01", b"\x07\x08\x02\x00", b"\x07\x08\x03\x00\x00\x00"):
        with pytest.raises(DecodeError):
            toku_methods.decompress_prefix(cut, 8, 8)


LZMA_DICT_BUG = (
    "no liblzma memlimit: an xz stream whose header declares a 1.5 GiB dictionary makes "
    "lzma.LZMADecompressor allocate 1.5 GiB before decoding a byte (MemoryError under an address-space "
    "limit, escaping as MemoryError instead of a decode error). Fix: "
    "LZMADecompressor(format=..., memlimit=128 << 20) and catch LZMAError as the decode error "
    "(done for TokuDB in parsers/tokudb/methods.py)")


def test_innodb_lzma_page_declaring_a_huge_dictionary():
    """(Found here; fixed in parsers/innodb/pagecomp.py by commit 4b80c14: liblzma memlimit.)"""
    out, peak = _peak(pagecomp.decode_legacy_page, _legacy_page(_xz_huge_dictionary(), algo=4), 16384)
    assert isinstance(out, pagecomp.PageDecodeError), out
    assert peak < 64 * MiB, f"{peak >> 20} MiB allocated for one 16 KiB page"


def test_general_lzma_declaring_a_huge_dictionary():
    out, peak = _peak(general.lzma_decompress, _xz_huge_dictionary(), max_output=MiB)
    assert peak < 64 * MiB, f"{peak >> 20} MiB allocated for 250 bytes of output"


@pytest.mark.parametrize("hint", [None, 4096, MiB])
def test_general_brotli_stops_at_the_cap(hint):
    """(Was an expected failure: brotli_decompress decoded the whole stream, then checked the cap.
    It now decodes into a buffer of at most cap + 1 bytes, with or without a size hint.)"""
    bomb = general.brotli_compress(bytes(64 * MiB), level=5)
    out, peak = _peak(general.brotli_decompress, bomb, max_output=MiB, size_hint=hint)
    assert isinstance(out, DecodeError), out
    assert "cap" in str(out)
    assert peak < 4 * MiB, f"{peak >> 20} MiB allocated for a 1 MiB cap"

"""Fuzz the block header walker, checksums.txt and marks readers: only their
own named errors, never a crash, a hang or a huge allocation."""
from __future__ import annotations

import glob
import struct

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbxray.parsers.clickhouse.blocks import BLOCK_HEADER_SIZE, BlockError, read_block_header, read_stream, walk_blocks
from dbxray.parsers.clickhouse.checksums import ChecksumsError, parse_checksums
from dbxray.parsers.clickhouse.columns import ColumnsError, parse_columns_substreams, parse_columns_txt
from dbxray.parsers.clickhouse.ddl import DDLError, parse_table_sql
from dbxray.parsers.clickhouse.marks import MarksError, marks_flavour, read_marks
from dbxray.parsers.clickhouse.packed import PackedError, read_packed_directory

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _fixture_bytes(fixtures_root, pattern: str) -> bytes:
    paths = sorted(glob.glob(str(fixtures_root / "clickhouse" / "datadir" / "store" / "*" / "*" / "*" / pattern)))
    return open(paths[0], "rb").read()


@FAST
@given(st.binary(max_size=400))
def test_walk_blocks_random(data):
    t = walk_blocks(data)
    assert int(t.stored.sum()) <= len(data)
    assert len(t) == len(t.methods) == len(t.decompressed)
    if not t.errors:
        assert int(t.stored.sum()) == len(data)


@FAST
@given(st.lists(st.tuples(st.integers(0, 255), st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1)),
                max_size=6), st.binary(max_size=64))
def test_walk_blocks_header_fields(headers, tail):
    buf = b"".join(b"\0" * 16 + struct.pack("<BII", m, c, u) for m, c, u in headers) + tail
    t = walk_blocks(buf)
    assert int(t.stored.sum()) <= len(buf)
    for msg, off in t.errors:
        assert 0 <= off <= len(buf) and msg


@FAST
@given(st.binary(min_size=0, max_size=60), st.integers(0, 80))
def test_read_block_header(data, off):
    try:
        h = read_block_header(data, off)
    except BlockError as e:
        assert e.offset == off
    else:
        assert off + BLOCK_HEADER_SIZE <= len(data) and h.offset == off


@FAST
@given(st.binary(max_size=300))
def test_read_stream_random(data):
    try:
        read_stream(data, max_output=1 << 16)
    except BlockError:
        pass


@FAST
@given(st.binary(max_size=300))
def test_checksums_random(data):
    for blob in (data, b"checksums format version: 4\n" + data, b"checksums format version: 3\n" + data,
                 b"checksums format version: 2\n" + data):
        try:
            parse_checksums(blob)
        except ChecksumsError:
            pass


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_checksums_mutated(fixtures_root, data):
    real = bytearray(_fixture_bytes(fixtures_root, "checksums.txt"))
    n = data.draw(st.integers(1, 4))
    for _ in range(n):
        i = data.draw(st.integers(0, len(real) - 1))
        real[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(real)))
    try:
        c = parse_checksums(bytes(real[:cut]))
    except ChecksumsError:
        return
    assert all(e.file_size >= 0 for e in c.files.values())


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=4000), st.sampled_from([".mrk", ".mrk2", ".mrk3", ".mrk4", ".cmrk2", ".cmrk4"]),
       st.integers(1, 12))
def test_marks_random(data, ext, streams):
    try:
        m = read_marks(data, marks_flavour("x" + ext), streams, max_bytes=1 << 20)
    except MarksError:
        return
    assert m.offsets.shape[1] == (streams if marks_flavour("x" + ext).compact else 1)
    assert m.offsets.dtype == np.uint64


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_compressed_marks_mutated(fixtures_root, data):
    real = bytearray(_fixture_bytes(fixtures_root, "*.cmrk2"))
    i = data.draw(st.integers(0, len(real) - 1))
    real[i] = data.draw(st.integers(0, 255))
    try:
        read_marks(bytes(real), marks_flavour("a.cmrk2"))
    except MarksError as e:
        assert "checksum" in str(e) or "compressed marks" in str(e) or "marks" in str(e)


@FAST
@given(st.text(max_size=200))
def test_text_readers_random(text):
    for fn, err in ((parse_columns_txt, ColumnsError), (parse_columns_substreams, ColumnsError)):
        for blob in (text, "columns format version: 1\n" + text, "columns substreams version: 1\n" + text):
            try:
                fn(blob.encode())
            except err:
                pass
    try:
        parse_table_sql("ATTACH TABLE _ " + text)
    except DDLError:
        pass


@FAST
@given(st.binary(max_size=200))
def test_packed_random(data):
    try:
        read_packed_directory(b"\x01" + data)
    except PackedError:
        pass


@FAST
@given(st.binary(max_size=400))
def test_walk_blocks_fd_equals_buffer(tmp_path_factory, data):
    """The pread walk (one header read per block) gives the same table as the buffer walk."""
    import os
    p = tmp_path_factory.mktemp("w") / "x.bin"
    p.write_bytes(data)
    fd = os.open(p, os.O_RDONLY)
    try:
        a = walk_blocks(None, fd=fd)
    finally:
        os.close(fd)
    b = walk_blocks(data)
    assert a.offsets.tolist() == b.offsets.tolist() and a.errors == b.errors
    assert a.chains == b.chains and a.decompressed.tolist() == b.decompressed.tolist()

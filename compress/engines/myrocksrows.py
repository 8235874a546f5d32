"""Another engine's rows as MyRocks would store them: an **estimate** of the SST bytes
``ALTER TABLE ... ENGINE=ROCKSDB`` (or ``CREATE TABLE ... AS SELECT``) ends with once the
column family is compacted, built from the rows as that engine packed them.

What it assumes (checked against a real MariaDB 10.11 with MyRocks,
tests/test_archive_cross_engine.py):

* a table without a primary key gets MyRocks's hidden one (ha_rocksdb.cc: an 8-byte counter
  from 1); each row is one key-value pair: the key is the index number (4 bytes, big-endian)
  and the hidden key (8 bytes, big-endian: Rdb_key_def's memcmp form), the value is the row's
  packed image (the NULL bytes and every non-NULL field, strings behind their lengths, as
  ``Rdb_converter::encode_value_slice`` writes them; MyRocks stores CHAR columns at their full
  width, which the packed image trims: on the fixture 2 bytes a row, 0.9% of the raw values);
* the internal key adds 8 bytes of sequence number and type, zero sequence after the
  compaction to the bottommost level (db/dbformat.h ``PackSequenceAndType``: type kTypeValue);
* data blocks are built as table/block_based/block_builder.cc builds them (keys
  prefix-compressed against the previous key, a restart point every 16 keys with its 4-byte
  offset, the restart count) and cut as ``FlushBlockBySizePolicy`` cuts them at MyRocks's
  ``rocksdb_block_size`` (4 KiB) with block_size_deviation 10; each block is compressed on
  its own and framed as :class:`~.rocksdb.RocksDBBlocks` frames it (kept raw unless it saves
  1/8, a 5-byte trailer);
* the index block has one entry per data block (the block's last internal key and its
  handle, a restart per entry: index_block_restart_interval 1), compressed like a data block;
  each SST file (at most target_file_size_base, 64 MiB) adds its properties, metaindex and
  footer (:data:`SST_FIXED_BYTES`); no bloom filter (MyRocks sets none by default).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from dbxray.parsers.rocksdb.coding import encode_varint32, encode_varint64

from ..models import Model
from ..registry import Codec
from .innodbrows import split_rows_cut, weighted_by_fill, with_cut_row
from .rocksdb import BLOCK_TRAILER, RocksDBBlocks

#: MyRocks's rocksdb_block_size default (ha_rocksdb.cc, the server's @@rocksdb_block_size)
BLOCK_SIZE = 4096
#: BlockBasedTableOptions defaults: block_restart_interval, block_size_deviation
BLOCK_RESTART_INTERVAL = 16
BLOCK_SIZE_DEVIATION = 10
#: an index number of a user table (the first ones MyRocks hands out are above 256)
INDEX_NUMBER = 0x00000101
HIDDEN_PK_LEN = 8
#: db/dbformat.h: (sequence 0 << 8) | kTypeValue, as a fixed64 little-endian
ZERO_SEQ_VALUE = struct.pack("<Q", 1)
#: the blocks of an SST besides its data and index blocks (properties with MyRocks's index
#: statistics, metaindex, footer): a one-block MyRocks SST of this server is 1,560 bytes, 225
#: of them its data and index blocks
SST_FIXED_BYTES = 1335
#: MyRocks's target_file_size_base (64 MiB): an SST is cut there
TARGET_FILE_SIZE = 64 << 20
#: what the server's default compression options give (util/compression.h: zstd's level 3)
MYROCKS_CODECS = (Codec("zstd", 3), Codec("lz4"))


def _shared(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def data_blocks(rows: list[bytes], first_pk: int = 1, block_size: int = BLOCK_SIZE) -> tuple[list[bytes], list[bytes], float]:
    """The data blocks the rows fill (bytes), each block's last internal key, and how full the
    last block is (0..1]."""
    limit = (block_size * (100 - BLOCK_SIZE_DEVIATION) + 99) // 100
    blocks: list[bytes] = []
    last_keys: list[bytes] = []
    buf = bytearray()
    restarts: list[int] = []
    counter = 0
    last = b""
    prefix = INDEX_NUMBER.to_bytes(4, "big")

    def finish():
        out = bytes(buf) + b"".join(struct.pack("<I", r) for r in restarts) + struct.pack("<I", len(restarts))
        blocks.append(out)
        last_keys.append(last)

    for i, value in enumerate(rows):
        key = prefix + (first_pk + i).to_bytes(HIDDEN_PK_LEN, "big") + ZERO_SEQ_VALUE
        if buf:
            size = len(buf) + 4 * len(restarts) + 4
            after = size + len(key) + len(value) + (4 if counter >= BLOCK_RESTART_INTERVAL else 0) + 4 \
                + len(encode_varint32(len(key))) + len(encode_varint32(len(value)))
            if size >= block_size or (after > block_size and size > limit):
                finish()
                buf, restarts, counter = bytearray(), [], 0
        if not buf or counter >= BLOCK_RESTART_INTERVAL:
            restarts.append(len(buf))
            counter, shared = 0, 0
        else:
            shared = _shared(last, key)
        buf += encode_varint32(shared) + encode_varint32(len(key) - shared) + encode_varint32(len(value))
        buf += key[shared:] + value
        counter += 1
        last = key
    fill = 1.0
    if buf:
        fill = min(1.0, (len(buf) + 4 * len(restarts) + 4) / block_size)
        finish()
    return blocks, last_keys, fill


def index_block(last_keys: list[bytes], sizes: list[int]) -> bytes:
    """The index block of these data blocks: one entry per block, every entry a restart."""
    buf, restarts, offset = bytearray(), [], 0
    for key, size in zip(last_keys, sizes):
        handle = encode_varint64(offset) + encode_varint64(size - BLOCK_TRAILER)
        restarts.append(len(buf))
        buf += encode_varint32(0) + encode_varint32(len(key)) + encode_varint32(len(handle)) + key + handle
        offset += size
    return bytes(buf) + b"".join(struct.pack("<I", r) for r in restarts) + struct.pack("<I", len(restarts))


@dataclass
class MyRocksFromRowsEstimate(Model):
    """MyRocks SST bytes of another engine's rows after a full compaction (module doc). A
    unit is a run of rows (``starts``: where its first whole row begins)."""

    block_size: int = BLOCK_SIZE
    starts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    rebuilds = True

    def __post_init__(self):
        self.name = "myrocks_from_rows_estimate"
        self.blocks = RocksDBBlocks()

    def supports(self, codec: Codec) -> str | None:
        return self.blocks.supports(codec)

    def max_bytes(self, logical: np.ndarray, codec: Codec | None = None, units=None) -> np.ndarray:
        """Every block at most raw with its trailer: the rows, their keys and entry headers
        (at most 20 + 15 bytes a row of at least 1 byte), restarts and the index."""
        logical = np.asarray(logical, dtype=np.float64)
        raw = logical * (1 + 20 + 15 + 4)
        blocks = np.ceil(raw / (self.block_size * 0.9)) + 1
        return (raw + blocks * (BLOCK_TRAILER + 40) + 2 * BLOCK_TRAILER).astype(np.int64)

    def project(self, codec: Codec, payload: bytes, unit: int | None = None) -> int:
        start = int(self.starts[unit]) if unit is not None and unit < len(self.starts) else 0
        rows, cut = split_rows_cut(payload, start)
        blocks, last_keys, fill = data_blocks(rows, block_size=self.block_size)
        if not blocks:
            return 0
        sizes = [self.blocks.project(codec, b) for b in blocks]
        index = self.blocks.project(codec, index_block(last_keys, sizes))
        return with_cut_row(weighted_by_fill(sizes, fill) + index, rows, cut)

    def file_bytes(self, raw_bytes: int) -> int:
        """The SST files' own blocks (properties, metaindex, footer), one set per file."""
        return SST_FIXED_BYTES * max(1, -(-int(raw_bytes) // TARGET_FILE_SIZE))

"""Another engine's rows as TokuDB would store them: an **estimate** of the fractal-tree file
``ALTER TABLE ... ENGINE=TokuDB`` (or ``CREATE TABLE ... AS SELECT``, which the bulk loader
writes) gets, built from the rows as that engine packed them.

What it assumes (no TokuDB server runs here: tests/test_archive_cross_engine.py checks the
estimate against this module's own encoder over the whole table, and the basements it
builds against dbxray's TokuDB reader, parsers/tokudb/leaf.py):

* a table without a primary key gets TokuDB's hidden one (ha_tokudb.cc
  ``hpk_num_to_char``: 8 bytes, ``int8store``, counting from 1); each row is a committed leaf
  entry (ft/leafentry.h LE_CLEAN: the type byte, the value's 4-byte length, the value), its
  value the row's packed image (ha_tokudb packs NULL bytes, fixed fields, variable-length
  offsets and data, blobs: about the same bytes; the packed image is what is used);
* leaves are cut at the table's node size (tokudb_block_size, 4 MiB, of leaf entries and
  keys: ft/loader/loader.cc) and split into basement nodes of tokudb_read_block_size (64 KiB:
  ``toku_ftnode_leaf_rebalance``), each serialized as ft/serialize/ft_node-serialize.cc
  ``serialize_ftnode_partition`` and ft/bndata.cc write it (0xAA, the entry count, the
  14-byte header, keys and values kept apart: fixed-length key records of the leaf-entry
  offset and the key, then the leaf entries, the x1764 checksum) and compressed on its own
  with the row format's method, framed as :class:`~.tokudb.TokuDBPartitions` frames a
  partition (the method byte, 12 bytes of sizes and checksum);
* the default row format, tokudb_zlib, is the zlib method without checksum (method 11,
  TOKU_DEFAULT_COMPRESSION_METHOD); other codecs are what the other row formats would give;
* each leaf node adds its header (28 bytes + 8 a basement), its node-info sub-block (the
  pivot keys, kept uncompressed here: an upper end of a few hundred bytes) and its
  placement on a 4096-byte boundary (BLOCK_ALLOCATOR_ALIGNMENT: half a block on average);
  the file adds its two 4096-byte header slots, the block translation table and the root;
  the table's status dictionary and the directory are not counted.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from dbxray.parsers.tokudb.node import FTNODE_PARTITION_DMT_LEAVES, NODE_HEADER_FIXED, SUB_BLOCK_OVERHEAD
from dbxray.parsers.tokudb.x1764 import x1764

from ..models import Model
from ..registry import Codec
from .innodbrows import split_rows_cut, weighted_by_fill, with_cut_row
from .tokudb import TokuDBPartitions

#: tokudb_block_size and tokudb_read_block_size defaults (ha_tokudb: 4 MiB nodes, 64 KiB basements)
NODE_SIZE = 4 << 20
BASEMENT_SIZE = 64 << 10
#: ha_tokudb.h TOKUDB_HIDDEN_PRIMARY_KEY_LENGTH
HIDDEN_PK_LEN = 8
#: ft/leafentry.h LE_CLEAN: type byte + u32 value length
LE_CLEAN = 0
LE_CLEAN_HEADER = 1 + 4
#: bndata.h klpair_struct: u32 le_offset before the key
KLPAIR_OFFSET_LEN = 4
#: 0xAA, u32 entries, then bndata.h HEADER_LENGTH (u32 key, val and fixed klpair sizes, two flags)
BASEMENT_HEADER = 1 + 4 + 4 + 4 + 4 + 1 + 1
X1764_LEN = 4
#: the node-info sub-block: max_msn_applied (8), flags (4), height (4), then the pivots (u32 + key)
NODE_INFO_FIXED = 8 + 4 + 4
#: ft/serialize/block_allocator.h BLOCK_ALLOCATOR_ALIGNMENT; the two header slots
BLOCK_ALIGNMENT = 4096
FILE_HEADER_SLOTS = 2 * 4096
#: the translation table: offset and size (8 + 8) per block number, its checksum
BTT_ENTRY = 16
#: tokudb_zlib (TOKU_ZLIB_WITHOUT_CHECKSUM_METHOD at PerconaFT's zlib level 5)
TOKUDB_DEFAULT_CODEC = Codec("zlib", 5)


def entry_bytes(row: bytes) -> int:
    """A row's bytes in a basement: its key record and its leaf entry."""
    return KLPAIR_OFFSET_LEN + HIDDEN_PK_LEN + LE_CLEAN_HEADER + len(row)


def basements(rows: list[bytes], first_pk: int = 1,
              basement_size: int = BASEMENT_SIZE) -> tuple[list[bytes], float]:
    """The serialized (uncompressed) basement nodes the rows fill, and how full the last one is."""
    out: list[bytes] = []
    keys: list[bytes] = []
    vals: list[bytes] = []
    size = 0

    def finish():
        val_area = b"".join(vals)
        klen = KLPAIR_OFFSET_LEN + HIDDEN_PK_LEN
        body = struct.pack("<BIIIIBB", FTNODE_PARTITION_DMT_LEAVES, len(keys), klen * len(keys), len(val_area),
                           klen, 1, 1) + b"".join(keys) + val_area
        out.append(body + struct.pack("<I", x1764(body)))

    offset = 0
    for i, row in enumerate(rows):
        n = entry_bytes(row)
        if keys and size + n > basement_size:
            finish()
            keys, vals, size, offset = [], [], 0, 0
        keys.append(struct.pack("<I", offset) + (first_pk + i).to_bytes(HIDDEN_PK_LEN, "little"))
        le = struct.pack("<BI", LE_CLEAN, len(row)) + row
        vals.append(le)
        offset += len(le)
        size += n
    fill = 1.0
    if keys:
        fill = min(1.0, size / basement_size)
        finish()
    return out, fill


@dataclass
class TokuDBFromRowsEstimate(Model):
    """TokuDB leaf partitions of another engine's rows (module doc). A unit is a run of rows
    (``starts``: where its first whole row begins)."""

    basement_size: int = BASEMENT_SIZE
    node_size: int = NODE_SIZE
    starts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    rebuilds = True

    def __post_init__(self):
        self.name = "tokudb_from_rows_estimate"
        self.partitions = TokuDBPartitions(zlib_without_checksum=True)

    def supports(self, codec: Codec) -> str | None:
        if codec.family not in ("none", "zlib", "lzma", "snappy", "zstd", "quicklz"):
            return f"TokuDB has no {codec.family} row format"
        return self.partitions.supports(codec)

    def max_bytes(self, logical: np.ndarray, codec: Codec | None = None, units=None) -> np.ndarray:
        """Every basement at most its partition's worst case (TokuDBPartitions.max_bytes) with
        entries of at least 1 byte, and its share of a node's overhead."""
        logical = np.asarray(logical, dtype=np.float64)
        raw = logical * (1 + KLPAIR_OFFSET_LEN + HIDDEN_PK_LEN + LE_CLEAN_HEADER)
        n = np.ceil(raw / self.basement_size) + 1
        worst = self.partitions.max_bytes(np.array([self.basement_size + BASEMENT_HEADER + X1764_LEN]),
                                          codec or TOKUDB_DEFAULT_CODEC)
        per = int(worst[0]) if worst is not None else 2 * self.basement_size
        return (n * (per + 8 + 4 + HIDDEN_PK_LEN)).astype(np.int64)

    def project(self, codec: Codec, payload: bytes, unit: int | None = None) -> int:
        start = int(self.starts[unit]) if unit is not None and unit < len(self.starts) else 0
        rows, cut = split_rows_cut(payload, start)
        parts, fill = basements(rows, basement_size=self.basement_size)
        # each partition, its start and size in the node header, its pivot in the node info
        per_part = 8 + 4 + HIDDEN_PK_LEN
        return with_cut_row(weighted_by_fill([self.partitions.project(codec, p) + per_part for p in parts], fill),
                            rows, cut)

    def file_bytes(self, rows: int, avg_row: float) -> int:
        """The nodes' own bytes, the root above several leaves, the header slots and the
        translation table."""
        raw = rows * (KLPAIR_OFFSET_LEN + HIDDEN_PK_LEN + LE_CLEAN_HEADER + avg_row)
        leaves = max(1, int(np.ceil(raw / self.node_size)))
        nodes = leaves * (NODE_HEADER_FIXED + SUB_BLOCK_OVERHEAD + 1 + NODE_INFO_FIXED + BLOCK_ALIGNMENT // 2)
        root = 0 if leaves == 1 else BLOCK_ALIGNMENT * int(np.ceil(leaves * (HIDDEN_PK_LEN + 16) / BLOCK_ALIGNMENT))
        btt = BLOCK_ALIGNMENT * int(np.ceil((leaves + 4) * BTT_ENTRY / BLOCK_ALIGNMENT))
        return FILE_HEADER_SLOTS + nodes + root + btt

"""The unit records (parsers/model.py UNIT_DTYPE) of a compressed ClickHouse file:
one per block of its header walk (:class:`.blocks.BlockTable`; the block framing of
src/Compression/CompressionInfo.h: 16-byte checksum + 9-byte header + payload)."""
from __future__ import annotations

import numpy as np

from ..model import UNIT_BAD_CHECKSUM, UNIT_COMPRESSED, UNIT_CORRUPT, empty_units
from .blocks import NONE, BlockTable


def block_units(blocks: BlockTable, owners: np.ndarray) -> np.ndarray:
    """One unit per compressed block: offset, stored bytes (checksum included),
    decompressed bytes, method byte as kind, ``owners`` (column ids), and the
    compressed / corrupt / bad-checksum flags."""
    n = len(blocks)
    u = empty_units(n)
    if not n:
        return u
    u["offset"] = blocks.offsets
    u["stored"] = blocks.compressed.astype(np.uint64) + 16
    u["logical"] = blocks.decompressed
    u["kind"] = blocks.methods
    u["owner"] = owners
    flags = np.where(blocks.methods != NONE, UNIT_COMPRESSED, 0).astype(np.uint16)
    if blocks.bad is not None and len(blocks.bad) == n:
        flags |= np.where(blocks.bad, UNIT_CORRUPT, 0).astype(np.uint16)
    if blocks.checksum_ok is not None and len(blocks.checksum_ok) == n:
        flags |= np.where(blocks.checksum_ok, 0, UNIT_BAD_CHECKSUM).astype(np.uint16)
    u["flags"] = flags
    return u

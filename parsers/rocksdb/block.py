"""Block contents: prefix-compressed entries and the restart array (RocksDB
table/block_based/block.cc ``Block``, ``DecodeEntry``, ``DecodeKeyV4``;
table/block_based/data_block_footer.cc ``UnPackIndexTypeAndNumRestarts``;
table/block_based/data_block_hash_index.cc; table/format.cc ``IndexValue``).

A block is ``entry* restart* [hash buckets, NUM_BUCK] packed_num_restarts``: each
entry is ``shared varint32, non_shared varint32, value_length varint32, key delta,
value``; the last fixed32 holds the restart count, its top bit the data block index
type (binary search, or binary search + hash map when the block is at most 64 KiB).
Index blocks of format_version >= 4 may delta-encode their values (no value length;
a block handle whose offset follows the previous one)."""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Iterator

from .coding import CodingError, signed_varint, varint, varint32
from .footer import BlockHandle, decode_handle, kBlockTrailerSize

#: data_block_footer.h kDataBlockIndexTypeBitShift / kNumRestartsMask
kDataBlockIndexTypeBitShift = 31
kNumRestartsMask = (1 << kDataBlockIndexTypeBitShift) - 1
#: block.h kMaxBlockSizeSupportedByHashIndex
kMaxBlockSizeSupportedByHashIndex = 1 << 16
#: BlockBasedTableOptions::DataBlockIndexType
kDataBlockBinarySearch = 0
kDataBlockBinaryAndHash = 1


class BlockError(Exception):
    def __init__(self, message: str, offset: int):
        self.offset = offset          # offset inside the block contents
        super().__init__(message)


@dataclass(frozen=True)
class BlockLayout:
    """Where a block's entries end: the restart array and the index type."""

    restarts_offset: int
    num_restarts: int
    index_type: int
    size: int

    def restart_points(self, data) -> list[int]:
        return list(struct.unpack_from(f"<{self.num_restarts}I", data, self.restarts_offset))


def block_layout(data) -> BlockLayout:
    """Block::Block: the restart array of a block's (decompressed) contents."""
    size = len(data)
    if size < 4:
        raise BlockError(f"block of {size} bytes has no restart count", 0)
    packed = struct.unpack_from("<I", data, size - 4)[0]
    index_type = kDataBlockBinarySearch
    num = packed
    end = size - 4
    if size <= kMaxBlockSizeSupportedByHashIndex:
        index_type = packed >> kDataBlockIndexTypeBitShift
        num = packed & kNumRestartsMask
        if index_type == kDataBlockBinaryAndHash:
            if end < 2:
                raise BlockError("hash-indexed block too short for its bucket count", 0)
            buckets = struct.unpack_from("<H", data, end - 2)[0]
            end = end - 2 - buckets
    restarts_offset = end - 4 * num
    if num == 0 and size > 4:
        raise BlockError("block with no restart points", size - 4)
    if restarts_offset < 0:
        raise BlockError(f"{num} restart points do not fit in a block of {size} bytes", size - 4)
    return BlockLayout(restarts_offset, num, index_type, size)


def iter_entries(data, layout: BlockLayout | None = None) -> Iterator[tuple[bytes, memoryview]]:
    """(full key, value) of every entry of a block with value lengths (data, meta,
    properties, and index blocks without delta-encoded values)."""
    lay = layout or block_layout(data)
    mv = memoryview(data)
    pos = 0
    end = lay.restarts_offset
    key = b""
    while pos < end:
        start = pos
        try:
            a = data[pos]
            if pos + 3 <= end and a < 128 and data[pos + 1] < 128 and data[pos + 2] < 128:
                shared, non_shared, vlen = a, data[pos + 1], data[pos + 2]
                pos += 3
            else:
                shared, pos = varint32(data, pos, end)
                non_shared, pos = varint32(data, pos, end)
                vlen, pos = varint32(data, pos, end)
        except CodingError as e:
            raise BlockError(f"entry header: {e}", e.offset) from None
        if shared > len(key) or pos + non_shared + vlen > end:
            raise BlockError(f"entry (shared {shared}, non-shared {non_shared}, value {vlen}) does not fit",
                             start)
        key = key[:shared] + bytes(mv[pos:pos + non_shared])
        pos += non_shared
        yield key, mv[pos:pos + vlen]
        pos += vlen


def iter_index(data, value_delta_encoded: bool, have_first_key: bool = False) -> Iterator[tuple[bytes, BlockHandle]]:
    """(separator key, block handle) of every entry of an index block (IndexBlockIter)."""
    lay = block_layout(data)
    if not value_delta_encoded:
        for key, value in iter_entries(data, lay):
            try:
                h, _ = decode_handle(value, 0)
            except CodingError as e:
                raise BlockError(f"index entry's block handle: {e}", 0) from None
            yield key, h
        return
    restarts = set(lay.restart_points(data))
    pos = 0
    end = lay.restarts_offset
    key = b""
    prev: BlockHandle | None = None
    while pos < end:
        start = pos
        try:
            shared, pos = varint32(data, pos, end)
            non_shared, pos = varint32(data, pos, end)
        except CodingError as e:
            raise BlockError(f"index entry header: {e}", e.offset) from None
        if shared > len(key) or pos + non_shared > end:
            raise BlockError(f"index entry (shared {shared}, non-shared {non_shared}) does not fit", start)
        key = key[:shared] + bytes(data[pos:pos + non_shared])
        pos += non_shared
        try:
            if start in restarts or prev is None:
                h, pos = decode_handle(data, pos, end)
            else:
                delta, pos = signed_varint(data, pos, end)
                h = BlockHandle(prev.offset + prev.size + kBlockTrailerSize, prev.size + delta)
            if have_first_key:
                n, pos = varint32(data, pos, end)
                pos += n
        except CodingError as e:
            raise BlockError(f"index entry's block handle: {e}", e.offset) from None
        prev = h
        yield key, h


def _rv(b, p: int) -> tuple[int, int]:
    """A varint at ``p`` (no bounds check: an IndexError means it ran past the end)."""
    x = b[p]
    if x < 128:
        return x, p + 1
    r = x & 127
    shift = 7
    p += 1
    while True:
        x = b[p]
        p += 1
        r |= (x & 127) << shift
        if x < 128:
            return r, p
        shift += 7
        if shift > 63:
            raise BlockError("varint longer than 10 bytes", p)


def _plain_index_handles(b: bytes, end: int, key_prefix: int) -> tuple[list[bytes], list[int], list[int]] | None:
    """:func:`index_handles` of an index block whose values are whole handles with value
    lengths, in a loop specialised for one-byte entry headers (None at the first longer
    one, or anything that does not fit: the general loop then reads it and names the fault)."""
    keys: list[bytes] = []
    offs: list[int] = []
    sizes: list[int] = []
    key = b""
    pos = 0
    try:
        while pos < end:
            shared, non_shared, vlen = b[pos], b[pos + 1], b[pos + 2]
            if (shared | non_shared | vlen) >= 128:
                return None
            pos += 3
            vpos = pos + non_shared
            if shared < key_prefix:
                key = (key[:shared] + b[pos:vpos])[:key_prefix] if shared else b[pos:min(vpos, pos + key_prefix)]
            pos = vpos + vlen
            if pos > end:
                return None
            x = b[vpos]
            if x < 128:
                off = x
                vpos += 1
            elif b[vpos + 1] < 128:
                off = (x & 127) | (b[vpos + 1] << 7)
                vpos += 2
            elif b[vpos + 2] < 128:
                off = (x & 127) | ((b[vpos + 1] & 127) << 7) | (b[vpos + 2] << 14)
                vpos += 3
            else:
                off, vpos = _rv(b, vpos)
            x = b[vpos]
            if x < 128:
                size = x
                vpos += 1
            elif b[vpos + 1] < 128:
                size = (x & 127) | (b[vpos + 1] << 7)
                vpos += 2
            else:
                size, vpos = _rv(b, vpos)
            if vpos > pos:
                return None
            keys.append(key)
            offs.append(off)
            sizes.append(size)
    except (IndexError, BlockError):
        return None
    return keys, offs, sizes


def index_handles(data, value_delta_encoded: bool, have_first_key: bool = False,
                  key_prefix: int = 8) -> tuple[list[bytes], list[int], list[int]]:
    """Every entry of an index block as three lists (the first ``key_prefix`` bytes of each
    separator key, block offsets, block sizes): :func:`iter_index` without an object per
    entry, for the hot path of listing a file's blocks (a 64 MiB SST has ~8,000)."""
    lay = block_layout(data)
    end = lay.restarts_offset
    b = bytes(data[:end])
    if not value_delta_encoded and not have_first_key:
        got = _plain_index_handles(b, end, key_prefix)
        if got is not None:
            return got
    restarts = set(lay.restart_points(data)) if value_delta_encoded else ()
    keys: list[bytes] = []
    offs: list[int] = []
    sizes: list[int] = []
    key = b""
    pos = 0
    prev_off = prev_size = -1
    rv = _rv
    try:
        while pos < end:
            start = pos
            shared = b[pos]
            if shared < 128:
                pos += 1
            else:
                shared, pos = rv(b, pos)
            non_shared = b[pos]
            if non_shared < 128:
                pos += 1
            else:
                non_shared, pos = rv(b, pos)
            if not value_delta_encoded:
                vlen = b[pos]
                if vlen < 128:
                    pos += 1
                else:
                    vlen, pos = rv(b, pos)
            if pos + non_shared > end:
                raise BlockError(f"index entry (shared {shared}, non-shared {non_shared}) does not fit", start)
            if shared < key_prefix:
                key = (key[:shared] + b[pos:pos + non_shared])[:key_prefix]
            pos += non_shared
            vstart = pos
            if value_delta_encoded and prev_off >= 0 and start not in restarts:
                delta, pos = rv(b, pos)
                size = prev_size + ((delta >> 1) ^ -(delta & 1))
                off = prev_off + prev_size + kBlockTrailerSize
            else:
                off, pos = rv(b, pos)
                size, pos = rv(b, pos)
            if have_first_key:
                n, pos = rv(b, pos)
                pos += n
            if not value_delta_encoded:
                pos = vstart + vlen
            if pos > end:
                raise BlockError("index entry's value runs past the entries", start)
            prev_off, prev_size = off, size
            keys.append(key)
            offs.append(off)
            sizes.append(size)
    except IndexError:
        raise BlockError("index entry runs past the end of the block", pos) from None
    return keys, offs, sizes

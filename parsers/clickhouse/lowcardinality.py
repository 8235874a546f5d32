"""LowCardinality and Array columns' streams decoded into values (issue 20: the type advisor).

LowCardinality(T), as src/DataTypes/Serializations/SerializationLowCardinality.cpp writes it
(serializeBinaryBulkStatePrefix / serializeBinaryBulkWithMultipleStreams /
serializeBinaryBulkStateSuffix; read back by deserializeBinaryBulkWithMultipleStreams):

* the dictionary stream (``<col>.dict.bin`` in a Wide part or a Log table) starts with the keys
  version, UInt64 1 (SharedDictionariesWithAdditionalKeys); then each shared dictionary as UInt64
  key count + the keys in bulk (String: varint length + bytes; FixedString(N): N bytes; a number:
  its little-endian bytes).  A dictionary of LowCardinality(Nullable(T)) is written through the
  not-Nullable type: position 0 is the NULL placeholder (the type's default), 1 the default;
* the keys stream (``<col>.bin``) is one index block per write call (a granule in a Wide part, an
  INSERT block in a Log table): UInt64 index type (bits 0-7 the positions' width, UInt8 / UInt16 /
  UInt32 / UInt64 = 0..3; NeedGlobalDictionaryBit 1<<8, HasAdditionalKeysBit 1<<9,
  NeedUpdateDictionary 1<<10), then with HasAdditionalKeysBit UInt64 count + the additional keys,
  then UInt64 rows and each row's position (1, 2, 4 or 8 bytes).  With the global dictionary a
  position under its size is a key of it, a larger one an additional key (position - its size);
  without (Log tables, Compact granules, Native blocks) the positions index the additional keys;
  NeedUpdateDictionary makes the reader take the next dictionary of the dictionary stream.

Array(T) (src/DataTypes/Serializations/SerializationArray.cpp, serializeArraySizesPositionIndependent):
the sizes stream ``<col>.size0.bin`` holds each row's element count as UInt64 (position
independent: not the cumulative offsets ColumnArray keeps in memory; ``offsets`` below makes them),
and the elements follow in the nested type's streams (``<col>.bin`` for numbers).  The Native format
(a StripeLog table's data.bin) writes the cumulative offsets instead (``read_array_offsets``).

Pure Python + numpy: bytes and an offset in, arrays out.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .varint import VarintError, read_varuint

KEYS_VERSION = 1                       # SharedDictionariesWithAdditionalKeys
NEED_GLOBAL_DICTIONARY_BIT = 1 << 8
HAS_ADDITIONAL_KEYS_BIT = 1 << 9
NEED_UPDATE_DICTIONARY = 1 << 10
_INDEX_DTYPES = ("<u1", "<u2", "<u4", "<u8")
#: most keys or rows one count may claim (a damaged count is refused, not allocated)
MAX_COUNT = 1 << 31


class LowCardinalityError(Exception):
    """A LowCardinality or Array stream that does not decode (says where)."""


@dataclass
class Keys:
    """Keys in bulk: each key's bytes (String: without its length; a number: its little-endian bytes)."""

    sizes: np.ndarray                       # uint64 a key
    chars: bytes

    def __len__(self) -> int:
        return len(self.sizes)

    def as_list(self) -> list[bytes]:
        ends = np.cumsum(self.sizes, dtype=np.int64)
        starts = ends - self.sizes.astype(np.int64)
        c = self.chars
        return [c[int(a):int(b)] for a, b in zip(starts.tolist(), ends.tolist())]


def read_keys(buf, offset: int, count: int, width: int = 0) -> tuple[Keys, int]:
    """``count`` keys from ``offset``: String keys (``width`` 0: varint length + bytes,
    SerializationString::serializeBinaryBulk) or ``width`` bytes each (FixedString(N) or a number);
    (keys, next offset)."""
    if count < 0 or count > MAX_COUNT:
        raise LowCardinalityError(f"a key count of {count} at offset {offset}")
    if width:
        end = offset + count * width
        if end > len(buf):
            raise LowCardinalityError(f"{count} keys of {width} bytes run past the end at offset {offset}")
        return Keys(np.full(count, width, dtype=np.uint64), bytes(buf[offset:end])), end
    sizes = np.empty(count, dtype=np.uint64)
    chars = []
    pos = offset
    n = len(buf)
    mv = memoryview(buf)
    for k in range(count):
        try:
            ln, pos = read_varuint(buf, pos)
        except VarintError as e:
            raise LowCardinalityError(f"key {k} of {count}: {e}") from None
        if pos + ln > n:
            raise LowCardinalityError(f"key {k} of {count} ({ln} bytes) runs past the end at offset {pos}")
        sizes[k] = ln
        chars.append(mv[pos:pos + ln])
        pos += ln
    return Keys(sizes, b"".join(chars)), pos


def _u64(buf, pos: int, what: str) -> int:
    if pos + 8 > len(buf):
        raise LowCardinalityError(f"{what} runs past the end at offset {pos}")
    return int.from_bytes(buf[pos:pos + 8], "little")


def read_keys_version(buf, offset: int = 0) -> int:
    """The keys version a dictionary stream starts with (serializeBinaryBulkStatePrefix)."""
    version = _u64(buf, offset, "the keys version")
    if version != KEYS_VERSION:
        raise LowCardinalityError(f"keys version {version} at offset {offset} (only {KEYS_VERSION} is known)")
    return version


def read_dictionary(buf, offset: int, width: int = 0) -> tuple[Keys, int]:
    """One shared dictionary (UInt64 key count + the keys in bulk): (keys, next offset)."""
    count = _u64(buf, offset, "a dictionary's key count")
    return read_keys(buf, offset + 8, count, width)


def read_dictionaries(buf, offset: int = 0, width: int = 0) -> tuple[int, list[Keys]]:
    """A Wide part's dictionary stream: (keys version, each shared dictionary's keys in order)."""
    version = read_keys_version(buf, offset)
    pos = offset + 8
    out = []
    while pos < len(buf):
        keys, pos = read_dictionary(buf, pos, width)
        out.append(keys)
    return version, out


@dataclass
class IndexBlock:
    """One index block of a keys stream."""

    index_type: int                         # 0..3: UInt8/16/32/64 positions
    need_global_dictionary: bool
    has_additional_keys: bool
    need_update_dictionary: bool
    additional: Keys | None
    positions: np.ndarray                   # uint64 a row
    offset: int = 0                         # where it starts in the stream
    end: int = 0


def read_index_block(buf, offset: int, width: int = 0) -> IndexBlock:
    """One index block from ``offset`` (its ``end`` is where the next one starts)."""
    flags = _u64(buf, offset, "an index type")
    t = flags & 0xFF
    if t > 3 or flags >> 11:
        raise LowCardinalityError(f"index type 0x{flags:x} at offset {offset} is not a LowCardinality one")
    pos = offset + 8
    additional = None
    if flags & HAS_ADDITIONAL_KEYS_BIT:
        count = _u64(buf, pos, "the additional keys' count")
        additional, pos = read_keys(buf, pos + 8, count, width)
    rows = _u64(buf, pos, "the row count")
    pos += 8
    w = 1 << t
    if rows > MAX_COUNT or pos + rows * w > len(buf):
        raise LowCardinalityError(f"{rows} positions of {w} bytes run past the end at offset {pos}")
    positions = np.frombuffer(bytes(buf[pos:pos + rows * w]), dtype=_INDEX_DTYPES[t]).astype(np.uint64)
    return IndexBlock(t, bool(flags & NEED_GLOBAL_DICTIONARY_BIT), bool(flags & HAS_ADDITIONAL_KEYS_BIT),
                      bool(flags & NEED_UPDATE_DICTIONARY), additional, positions, offset, pos + rows * w)


@dataclass
class LowCardinalityValues:
    """A LowCardinality column's rows: ``codes`` index ``keys`` (NULL rows of a Nullable one
    index ``null_code``), and the rows of each index block."""

    keys: list                              # bytes a key (duplicates across dictionaries kept)
    codes: np.ndarray                       # int64 a row
    block_rows: list[int] = field(default_factory=list)
    blocks: list[IndexBlock] = field(default_factory=list)
    null_code: int = -1                     # the code of NULL rows (-1: not Nullable)

    def nulls(self) -> np.ndarray:
        return self.codes == self.null_code if self.null_code >= 0 else np.zeros(len(self.codes), dtype=bool)

    def sizes_chars(self) -> tuple[np.ndarray, bytes]:
        """Each row's value as (sizes, bytes); a NULL row as the empty value (its nested default)."""
        lens = np.array([len(k or b"") for k in self.keys] or [0], dtype=np.uint64)
        sizes = lens[self.codes] if len(self.keys) else np.zeros(len(self.codes), dtype=np.uint64)
        keys = self.keys
        return sizes, b"".join([keys[c] or b"" for c in self.codes.tolist()])


def decode_lowcardinality(keys_stream, dict_stream=b"", width: int = 0, nullable: bool = False,
                          dict_offset: int = 0) -> LowCardinalityValues:
    """Every row of a keys stream (and its dictionary stream: a Wide part's ``.dict.bin``, read
    from ``dict_offset``; empty or only the keys version when no block needs a shared dictionary).
    ``nullable``: LowCardinality(Nullable(T)), position 0 of a dictionary is NULL."""
    # the dictionaries are read as the blocks ask for them: a Log table's dictionary stream holds the
    # keys version once per INSERT (each LogSink writes the state prefix) and no dictionary
    dpos = -1
    if len(dict_stream) > dict_offset:
        read_keys_version(dict_stream, dict_offset)
        dpos = dict_offset + 8
    keys: list = []
    codes: list[np.ndarray] = []
    block_rows: list[int] = []
    blocks: list[IndexBlock] = []
    null_code = -1
    if nullable:
        keys.append(None)
        null_code = 0
    pos, n = 0, len(keys_stream)
    gbase = glen = -1                  # the current global dictionary: where its keys start in ``keys``
    next_dict = 0
    while pos < n:
        b = read_index_block(keys_stream, pos, width)
        if b.need_global_dictionary and (b.need_update_dictionary or gbase < 0):
            if dpos < 0 or dpos >= len(dict_stream):
                raise LowCardinalityError(f"the index block at offset {pos} needs dictionary {next_dict + 1}; "
                                          f"the dictionary stream holds {next_dict}")
            d, dpos = read_dictionary(dict_stream, dpos, width)
            gbase, glen = len(keys), len(d)
            keys.extend(d.as_list())
            next_dict += 1
        abase, alen = len(keys), 0
        if b.additional is not None:
            alen = len(b.additional)
            keys.extend(b.additional.as_list())
        p = b.positions.astype(np.int64)
        if b.need_global_dictionary:
            out = np.where(p < glen, gbase + p, abase + p - glen)
            hi = glen + alen
        else:
            out = abase + p
            hi = alen
        if len(p) and (int(p.max()) >= hi):
            raise LowCardinalityError(f"the index block at offset {pos}: position {int(p.max())} past the "
                                      f"{hi} keys it may index")
        if nullable:     # the dictionary's (without one, the block's own keys') position 0 is NULL
            out = np.where(p == 0, 0, out)
        codes.append(out)
        block_rows.append(len(p))
        blocks.append(b)
        pos = b.end
    all_codes = np.concatenate(codes) if codes else np.zeros(0, dtype=np.int64)
    return LowCardinalityValues(keys, all_codes, block_rows, blocks, null_code)


def read_array_sizes(buf, offset: int = 0, rows: int | None = None) -> np.ndarray:
    """An Array's sizes stream (``.size<level>``): each row's element count, UInt64."""
    n = (len(buf) - offset) // 8 if rows is None else rows
    if (len(buf) - offset) % 8 and rows is None or offset + n * 8 > len(buf):
        raise LowCardinalityError(f"an Array sizes stream of {len(buf) - offset} bytes is not UInt64 a row")
    return np.frombuffer(bytes(buf[offset:offset + n * 8]), dtype="<u8")


def read_array_offsets(buf, offset: int, rows: int) -> np.ndarray:
    """An Array's sizes as the Native format writes them (a StripeLog table's data.bin: not position
    independent, SerializationArray's serializeArrayOffsets): each row's cumulative end offset, UInt64;
    returned as per-row sizes."""
    if rows < 0 or rows > MAX_COUNT or offset + rows * 8 > len(buf):
        raise LowCardinalityError(f"{rows} Array offsets run past the end at offset {offset}")
    ends = np.frombuffer(bytes(buf[offset:offset + rows * 8]), dtype="<u8").astype(np.int64)
    sizes = np.diff(np.concatenate([[0], ends]))
    if len(sizes) and int(sizes.min()) < 0:
        raise LowCardinalityError(f"Array offsets at offset {offset} go down")
    return sizes.astype(np.uint64)


def offsets(sizes: np.ndarray) -> np.ndarray:
    """The cumulative offsets (ColumnArray's) of per-row sizes: row i's elements are
    ``offsets[i - 1] .. offsets[i]``."""
    return np.cumsum(sizes, dtype=np.uint64)

"""Column statistics of a part: the ``statistics_<column>.stats`` entries of
``statistics.packed`` (or loose ``statistics_<column>.stats`` files).

Each entry is a compressed stream (the ``.bin`` block framing) whose bytes are
one ``ColumnStatistics`` (src/Storages/Statistics/Statistics.cpp,
``ColumnStatistics::serialize``).  Version 4, as ClickHouse 26.9 writes it:

* UInt16 version, UInt64 ``stat_types_mask`` (bit = StatisticsType),
* the column's data type name (varint length + bytes; seen in every 26.9
  file of the fixtures, between the mask and the row count),
* UInt64 rows,
* per set bit in ascending order: UInt64 size, then that many bytes of the
  statistic (so kinds this module does not decode are skipped by size).

Kinds (src/Storages/StatisticsDescription.h ``StatisticsType``) decoded here,
the ones the fixtures hold (``auto_statistics_types = 'basic, uniq_v2'``):

* **Basic** (StatisticsBasic.cpp): UInt64 row_count, UInt8 feature mask
  (``NumericMinMax`` 1, ``StringLengthSum`` 2, ``DefaultCount`` 4), then min
  and max as binary Fields (src/Core/Field.cpp ``writeFieldBinary``: UInt8
  Field type + value), UInt64 string_total_bytes, UInt64 default_count.
* **UniqV2** (StatisticsUniqV2.cpp): bool ``is_null`` (the collector is wrapped
  for a Nullable column; then one more bool, the wrapper's has-value flag),
  then the ``uniqCombined64`` state with K = 12
  (src/Common/CombinedCardinalityEstimator.h): UInt8 container type
  (``SMALL`` 1: up to 16 exact hashes, ``MEDIUM`` 2: hash set, ``LARGE`` 3:
  HyperLogLog); SMALL/MEDIUM: varint count + count UInt64 hashes; LARGE
  (src/Common/HyperLogLogCounter.h): 2^K registers of 6 bits packed
  little-endian, the denominator's rank histogram (UInt32 per rank
  0..max_rank) and UInt16 zeros.  The estimate follows
  HyperLogLogCounter::size (FullFeatured mode, trivial bias estimator: the
  raw harmonic-mean estimate, linear counting at or below 2.5 * 2^K).

TDigest, Uniq (v1), CountMinSketch and MinMax statistics are recognised by
kind and size only: no fixture holds one to check a decoder against.
"""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field

import numpy as np

from .varint import VarintError, read_string_binary, read_varuint

# StatisticsFileVersion
V4 = 4
# StatisticsType
STATISTICS_TYPES = {0: "TDigest", 1: "Uniq", 2: "CountMinSketch", 3: "MinMax", 4: "Basic", 5: "UniqV2",
                    6: "UniqAssumedAllDistinct", 7: "UniqV2AssumedAllDistinct"}
BASIC = 4
UNIQ_V2 = 5
# BasicFeatureMask
NumericMinMax = 1 << 0
StringLengthSum = 1 << 1
DefaultCount = 1 << 2
# CombinedCardinalityEstimator ContainerType
SMALL, MEDIUM, LARGE = 1, 2, 3
# StatisticsUniqV2: uniqCombined64 precision
UNIQ_COMBINED_PRECISION = 12
#: HyperLogLogCounter: bits per register and max rank for a 64-bit hash
HLL_RANK_BITS = 6
HLL_MAX_RANK = 64 - UNIQ_COMBINED_PRECISION + 1

# Field::Types::Which (src/Core/Field.h)
FIELD_NULL, FIELD_UINT64, FIELD_INT64, FIELD_FLOAT64, FIELD_UINT128, FIELD_INT128 = 0, 1, 2, 3, 4, 5
FIELD_STRING, FIELD_ARRAY, FIELD_TUPLE = 16, 17, 18
FIELD_DECIMAL32, FIELD_DECIMAL64, FIELD_DECIMAL128 = 19, 20, 21
FIELD_DECIMAL256, FIELD_UINT256, FIELD_INT256 = 23, 24, 25
FIELD_UUID, FIELD_BOOL, FIELD_IPV4, FIELD_IPV6 = 27, 28, 30, 31
_FIELD_INTS = {FIELD_UINT128: (16, False), FIELD_INT128: (16, True), FIELD_UINT256: (32, False),
               FIELD_INT256: (32, True)}
_FIELD_DECIMALS = {FIELD_DECIMAL32: 4, FIELD_DECIMAL64: 8, FIELD_DECIMAL128: 16, FIELD_DECIMAL256: 32}

MAX_STATS_BYTES = 64 << 20


class StatisticsError(Exception):
    def __init__(self, message: str, offset: int | None = None):
        self.offset = offset
        super().__init__(message)


def _need(buf, pos: int, n: int, what: str) -> None:
    if pos + n > len(buf):
        raise StatisticsError(f"{what} runs past the end ({len(buf)} bytes)", pos)


def _u64(buf, pos: int, what: str) -> tuple[int, int]:
    _need(buf, pos, 8, what)
    return struct.unpack_from("<Q", buf, pos)[0], pos + 8


def _zigzag(v: int) -> int:
    return (v >> 1) ^ -(v & 1)


def read_field_binary(buf, pos: int, depth: int = 0):
    """One Field as writeFieldBinary writes it: (JSON-able value, next offset).
    Decimals come back as {"value", "scale"}; IPv4 as the UInt32."""
    if depth > 16:
        raise StatisticsError("Field nested too deeply", pos)
    _need(buf, pos, 1, "Field type")
    t = buf[pos]
    pos += 1
    try:
        if t == FIELD_NULL:
            return None, pos
        if t in (FIELD_UINT64, FIELD_BOOL):
            v, pos = read_varuint(buf, pos)
            return (bool(v) if t == FIELD_BOOL else v), pos
        if t == FIELD_INT64:
            v, pos = read_varuint(buf, pos)
            return _zigzag(v), pos
        if t == FIELD_FLOAT64:
            _need(buf, pos, 8, "Float64")
            v = struct.unpack_from("<d", buf, pos)[0]
            return (v if math.isfinite(v) else repr(v)), pos + 8
        if t in _FIELD_INTS:
            n, signed = _FIELD_INTS[t]
            _need(buf, pos, n, "wide integer")
            return int.from_bytes(buf[pos:pos + n], "little", signed=signed), pos + n
        if t in _FIELD_DECIMALS:
            n = _FIELD_DECIMALS[t]
            _need(buf, pos, n + 4, "Decimal")
            v = int.from_bytes(buf[pos:pos + n], "little", signed=True)
            (scale,) = struct.unpack_from("<I", buf, pos + n)
            return {"value": v, "scale": scale}, pos + n + 4
        if t == FIELD_STRING:
            raw, pos = read_string_binary(buf, pos, max_len=MAX_STATS_BYTES)
            return raw.decode("utf-8", "replace"), pos
        if t == FIELD_UUID:
            _need(buf, pos, 16, "UUID")
            return bytes(buf[pos:pos + 16]).hex(), pos + 16
        if t == FIELD_IPV4:
            _need(buf, pos, 4, "IPv4")
            return struct.unpack_from("<I", buf, pos)[0], pos + 4
        if t == FIELD_IPV6:
            _need(buf, pos, 16, "IPv6")
            return bytes(buf[pos:pos + 16]).hex(), pos + 16
        if t in (FIELD_ARRAY, FIELD_TUPLE):
            n, pos = read_varuint(buf, pos)
            if n > len(buf):
                raise StatisticsError(f"Field array of {n} items", pos)
            out = []
            for _ in range(n):
                v, pos = read_field_binary(buf, pos, depth + 1)
                out.append(v)
            return out, pos
    except VarintError as e:
        raise StatisticsError(str(e), e.offset) from None
    raise StatisticsError(f"Field type {t} is not decoded", pos - 1)


@dataclass
class BasicStatistics:
    """StatisticsBasic."""

    row_count: int
    mask: int
    min: object = None
    max: object = None
    string_total_bytes: int | None = None
    default_count: int | None = None


def read_basic(buf, pos: int, end: int) -> BasicStatistics:
    """StatisticsBasic::deserialize."""
    rows, pos = _u64(buf, pos, "basic row_count")
    _need(buf, pos, 1, "basic feature mask")
    st = BasicStatistics(rows, buf[pos])
    pos += 1
    if st.mask & NumericMinMax:
        st.min, pos = read_field_binary(buf, pos)
        st.max, pos = read_field_binary(buf, pos)
    if st.mask & StringLengthSum:
        st.string_total_bytes, pos = _u64(buf, pos, "string_total_bytes")
    if st.mask & DefaultCount:
        st.default_count, pos = _u64(buf, pos, "default_count")
    if pos != end:
        raise StatisticsError(f"basic statistics end at {pos}, their size says {end}", pos)
    return st


@dataclass
class UniqStatistics:
    """StatisticsUniqV2: a uniqCombined64 state."""

    nullable: bool
    container: int | None                  # SMALL / MEDIUM / LARGE, None when no value was seen
    hashes: np.ndarray | None = None       # SMALL / MEDIUM
    registers: np.ndarray | None = None    # LARGE: 2^K ranks
    rank_counts: np.ndarray | None = None  # LARGE: the stored rank histogram
    zeros: int | None = None               # LARGE: registers still 0

    @property
    def container_name(self) -> str | None:
        return {SMALL: "small", MEDIUM: "medium", LARGE: "large"}.get(self.container)

    def estimate(self) -> int:
        """The estimated number of distinct non-NULL values (uniqCombined64's result)."""
        if self.container is None:
            return 0
        if self.container in (SMALL, MEDIUM):
            return len(self.hashes)
        m = 1 << UNIQ_COMBINED_PRECISION
        alpha = 0.7213 / (1 + 1.079 / m)
        denominator = float(np.sum(np.ldexp(1.0, -self.registers.astype(np.int64))))
        raw = alpha * m * m / denominator
        if raw <= 2.5 * m and self.zeros:
            raw = m * (math.log(m) - math.log(self.zeros))
        return int(raw + 0.5)


def read_hyperloglog(buf, pos: int) -> tuple[np.ndarray, np.ndarray, int, int]:
    """HyperLogLogCounter state: (registers, rank histogram, zeros, next offset)."""
    m = 1 << UNIQ_COMBINED_PRECISION
    nbytes = m * HLL_RANK_BITS // 8
    _need(buf, pos, nbytes + 4 * (HLL_MAX_RANK + 1) + 2, "HyperLogLog state")
    bits = np.unpackbits(np.frombuffer(bytes(buf[pos:pos + nbytes]), dtype=np.uint8), bitorder="little")
    registers = (bits.reshape(m, HLL_RANK_BITS).astype(np.uint8) << np.arange(HLL_RANK_BITS, dtype=np.uint8)).sum(
        axis=1, dtype=np.uint8)
    pos += nbytes
    counts = np.frombuffer(bytes(buf[pos:pos + 4 * (HLL_MAX_RANK + 1)]), dtype="<u4").copy()
    pos += 4 * (HLL_MAX_RANK + 1)
    (zeros,) = struct.unpack_from("<H", buf, pos)
    return registers, counts, zeros, pos + 2


def read_uniq_v2(buf, pos: int, end: int) -> UniqStatistics:
    """StatisticsUniqV2::deserialize (uniqCombined64, K = 12)."""
    _need(buf, pos, 1, "uniq_v2 is_null")
    nullable = bool(buf[pos])
    pos += 1
    if nullable:
        _need(buf, pos, 1, "uniq_v2 has-value flag")
        has_value = buf[pos]
        pos += 1
        if not has_value:
            if pos != end:
                raise StatisticsError(f"uniq_v2 statistics end at {pos}, their size says {end}", pos)
            return UniqStatistics(True, None, np.zeros(0, dtype=np.uint64))
    _need(buf, pos, 1, "uniq_v2 container type")
    container = buf[pos]
    pos += 1
    st = UniqStatistics(nullable, container)
    if container in (SMALL, MEDIUM):
        try:
            n, pos = read_varuint(buf, pos)
        except VarintError as e:
            raise StatisticsError(str(e), e.offset) from None
        _need(buf, pos, 8 * n, f"{n} hashes")
        st.hashes = np.frombuffer(bytes(buf[pos:pos + 8 * n]), dtype="<u8").copy()
        pos += 8 * n
    elif container == LARGE:
        st.registers, st.rank_counts, st.zeros, pos = read_hyperloglog(buf, pos)
        hist = np.bincount(st.registers, minlength=HLL_MAX_RANK + 1)
        if len(hist) != len(st.rank_counts) or not np.array_equal(hist, st.rank_counts) or \
                st.zeros != int(hist[0]):
            raise StatisticsError("HyperLogLog rank histogram does not match its registers", pos)
    else:
        raise StatisticsError(f"unknown uniqCombined container type {container}", pos - 1)
    if pos != end:
        raise StatisticsError(f"uniq_v2 statistics end at {pos}, their size says {end}", pos)
    return st


@dataclass
class StatisticEntry:
    """One statistic of a column: kind, serialized size, and the decoded object."""

    kind: str
    type_id: int
    offset: int
    size: int
    value: BasicStatistics | UniqStatistics | None = None


@dataclass
class ColumnStatisticsFile:
    """One ``.stats`` stream (decompressed)."""

    version: int
    mask: int
    data_type: str | None
    rows: int
    stats: list[StatisticEntry] = field(default_factory=list)


def read_column_statistics(buf, offset: int = 0) -> ColumnStatisticsFile:
    """ColumnStatistics::deserialize (version 4 layout, see the module doc)."""
    _need(buf, offset, 10, "statistics header")
    version, mask = struct.unpack_from("<HQ", buf, offset)
    if version != V4:
        raise StatisticsError(f"statistics file version {version} is not decoded (only {V4})", offset)
    try:
        raw, pos = read_string_binary(buf, offset + 10, max_len=1 << 16)
    except VarintError as e:
        raise StatisticsError(str(e), e.offset) from None
    rows, pos = _u64(buf, pos, "rows")
    out = ColumnStatisticsFile(version, mask, raw.decode("utf-8", "replace"), rows)
    for bit in range(64):
        if not mask >> bit & 1:
            continue
        size, pos = _u64(buf, pos, "statistic size")
        _need(buf, pos, size, f"statistic {STATISTICS_TYPES.get(bit, bit)}")
        ent = StatisticEntry(STATISTICS_TYPES.get(bit, f"type {bit}"), bit, pos, size)
        if bit == BASIC:
            ent.value = read_basic(buf, pos, pos + size)
        elif bit == UNIQ_V2:
            ent.value = read_uniq_v2(buf, pos, pos + size)
        out.stats.append(ent)
        pos += size
    if pos != len(buf):
        raise StatisticsError(f"{len(buf) - pos} bytes after the last statistic", pos)
    return out


def column_of_entry(name: str) -> str | None:
    """``statistics_<column>.stats`` -> column (escaped for file names), else None."""
    if name.startswith("statistics_") and name.endswith(".stats"):
        return name[len("statistics_"):-len(".stats")]
    return None


def summary(st: ColumnStatisticsFile, stored_bytes: int) -> dict:
    """JSON-able summary of one column's statistics."""
    kinds = []
    for e in st.stats:
        d: dict = {"kind": e.kind, "serialized_bytes": e.size}
        v = e.value
        if isinstance(v, BasicStatistics):
            d["row_count"] = v.row_count
            if v.mask & NumericMinMax:
                d["min"], d["max"] = v.min, v.max
            if v.string_total_bytes is not None:
                d["string_total_bytes"] = v.string_total_bytes
            if v.default_count is not None:
                d["default_count"] = v.default_count
        elif isinstance(v, UniqStatistics):
            d["container"] = v.container_name
            d["estimated_cardinality"] = v.estimate()
        else:
            d["decoded"] = False
        kinds.append(d)
    return {"version": st.version, "data_type": st.data_type, "rows": st.rows, "stored_bytes": stored_bytes,
            "statistics": kinds}

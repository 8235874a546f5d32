"""String values of a ClickHouse column, and the streams the MergeTree writer
writes for them as String, FixedString(N) or LowCardinality(String) (issue 20).

A String column of a Wide part is two streams (SerializationString with the
separate sizes stream): ``<col>.size.bin`` (UInt64 length per row) and
``<col>.bin`` (the bytes).  A run of granules is read from its sizes blocks and,
from the bytes stream's mark of its first granule (compressed block offset,
offset in the decompressed block), the bytes that follow.

LowCardinality(String) as written by SerializationLowCardinality.cpp
(serializeBinaryBulkStatePrefix / serializeBinaryBulkWithMultipleStreams /
serializeBinaryBulkStateSuffix) with the default settings
``low_cardinality_max_dictionary_size`` = 8192 and
``low_cardinality_use_single_dictionary_for_part`` = false:

* ``<col>.dict.bin`` starts with the keys version (UInt64 1,
  SharedDictionariesWithAdditionalKeys); a dictionary is written there as
  UInt64 count + the keys (String bulk: varint length + bytes) when it reaches
  8192 keys (then a new one is started) and at the end of the part;
* ``<col>.bin`` per granule: UInt64 index type (UInt8/16/32/64 = 0..3, with
  NeedGlobalDictionaryBit 1<<8, HasAdditionalKeysBit 1<<9 when keys overflowed the
  full dictionary, NeedUpdateDictionary 1<<10 on the first granule of a
  dictionary), [UInt64 count + the additional keys], UInt64 rows, the rows'
  positions in the dictionary;
* the dictionary (ColumnUnique) holds the default value '' at position 0, then
  keys in the order first seen; a granule's positions are as wide as the
  dictionary's size before the granule and its largest position need
  (ColumnUnique::uniqueInsertRangeWithOverflow);
* positions take only the generic codecs of the column's chain
  (ISerialization::isSpecialCompressionAllowed: DictionaryIndexes).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from dbxray.parsers.clickhouse import payloads
from dbxray.parsers.clickhouse.marks import marks_flavour, read_marks
from dbxray.parsers.codecs import ch_encode

from .encodememo import encoded_size
from .engines.clickhouse import CH_CHECKSUM, CH_MAX_COMPRESS_BLOCK, CH_MIN_COMPRESS_BLOCK, clickhouse_block_sizes

#: SerializationLowCardinality.cpp / Settings: low_cardinality_max_dictionary_size
LC_MAX_DICTIONARY_SIZE = 8192
LC_KEYS_VERSION = 1                       # SharedDictionariesWithAdditionalKeys
NEED_GLOBAL_DICTIONARY_BIT = 1 << 8
HAS_ADDITIONAL_KEYS_BIT = 1 << 9
NEED_UPDATE_DICTIONARY = 1 << 10
#: codecs that keep their place on a stream that takes generic codecs only
GENERIC_CODECS = ("NONE", "LZ4", "LZ4HC", "ZSTD", "ZSTD_QAT", "DEFLATE_QPL", "AES_128_GCM_SIV", "AES_256_GCM_SIV")
#: longest value factorized with numpy (longer ones go through a dict)
PAD_MAX = 48


class StringReadError(Exception):
    """A run of a String column could not be read (names the file)."""


def generic_chain(chain: str) -> str:
    """The chain a stream that takes only generic codecs (a null map, LowCardinality positions:
    ISerialization::isSpecialCompressionAllowed) is written with: the chain's generic codecs,
    NONE when it has none (CompressionCodecFactory::get with only_generic, CompressionFactory.cpp:
    an empty list gives CompressionCodecNone; chdb 4.4.0 writes a Nullable(UInt32)
    CODEC(DoubleDelta) column's null map uncompressed)."""
    import re
    items = [i.strip() for i in re.split(r",(?![^(]*\))", chain) if i.strip()]
    kept = [i for i in items if i.split("(", 1)[0].strip().upper() in GENERIC_CODECS]
    return ", ".join(kept) or "NONE"


def project_blocks(chunks: list[bytes], chain: str, type_size: int | None = None,
                   value_type: str | None = None) -> int:
    """Stored bytes of one stream written granule by granule (``chunks``: the bytes of
    each granule), cut into blocks as the MergeTree writer cuts them and framed."""
    raw = b"".join(chunks)
    out = pos = 0
    for size in clickhouse_block_sizes(len(raw), [len(c) for c in chunks], CH_MIN_COMPRESS_BLOCK,
                                       CH_MAX_COMPRESS_BLOCK):
        out += CH_CHECKSUM + encoded_size(raw[pos:pos + size], chain, type_size=type_size, value_type=value_type)
        pos += size
    return out


def granule_slices(rows: int, granule_rows: int) -> list[tuple[int, int]]:
    return [(a, min(a + granule_rows, rows)) for a in range(0, rows, granule_rows)]


def project_string(sizes: np.ndarray, chars: bytes, chain: str, granule_rows: int) -> int:
    """A String column (bytes stream + UInt64 sizes stream), each cut at granule ends."""
    ends = np.cumsum(sizes, dtype=np.int64)
    starts = ends - sizes.astype(np.int64)
    sl = granule_slices(len(sizes), granule_rows)
    body = [chars[int(starts[a]):int(ends[b - 1])] for a, b in sl]
    sz = sizes.astype("<u8")
    size_chunks = [sz[a:b].tobytes() for a, b in sl]
    return project_blocks(body, chain) + project_blocks(size_chunks, chain, 8, "UInt64")


def project_string_inline(sizes: np.ndarray, chars: bytes, chain: str, granule_rows: int) -> int:
    """A String column with its sizes inline in the bytes stream (parts without the ``.size``
    stream), cut at granule ends."""
    ends = np.cumsum(sizes, dtype=np.int64)
    starts = ends - sizes.astype(np.int64)
    return project_blocks([inline_bytes(sizes[a:b], chars[int(starts[a]):int(ends[b - 1])])
                           for a, b in granule_slices(len(sizes), granule_rows)], chain)


def project_fixed(raw: bytes, width: int, chain: str, granule_rows: int) -> int:
    """A FixedString(width) column: ``width`` bytes a row."""
    n = len(raw) // width
    return project_blocks([raw[a * width:b * width] for a, b in granule_slices(n, granule_rows)], chain)


def pad_fixed(sizes: np.ndarray, chars: bytes, width: int) -> bytes:
    """String values as FixedString(width): each value's bytes, zero bytes after them up to
    ``width`` (the conversion String -> FixedString pads, FunctionsConversion:
    ConvertImpl of DataTypeString to DataTypeFixedString; every value at most ``width`` long)."""
    if len(chars) == len(sizes) * width:
        return chars
    buf = np.zeros((len(sizes), width), dtype=np.uint8)
    buf[np.arange(width)[None, :] < sizes[:, None].astype(np.int64)] = np.frombuffer(chars, dtype=np.uint8)
    return buf.tobytes()


def fixed_to_string(raw: bytes, width: int) -> tuple[np.ndarray, bytes]:
    """FixedString values as String: the trailing zero bytes cut off, as the engine's
    conversion FixedString -> String does (FunctionsConversion: ConvertImpl of
    DataTypeFixedString to DataTypeString)."""
    arr = np.frombuffer(raw, dtype=np.uint8).reshape(-1, width)
    nz = arr != 0
    last = np.where(nz.any(axis=1), width - np.argmax(nz[:, ::-1], axis=1), 0)
    keep = np.arange(width)[None, :] < last[:, None]
    return last.astype(np.uint64), arr[keep].tobytes()


def factorize(sizes: np.ndarray, chars: bytes, most: int | None = None) -> tuple[np.ndarray, list[bytes] | None]:
    """(codes, keys): each row's key number in first-seen order, and the keys (None when
    there are more than ``most``: not built).  Values of up to PAD_MAX bytes are compared by
    a 64-bit hash of their zero-padded bytes and length (numpy); longer ones through a dict."""
    n = len(sizes)
    if n == 0:
        return np.zeros(0, dtype=np.int64), []
    ends = np.cumsum(sizes, dtype=np.int64)
    starts = ends - sizes.astype(np.int64)
    longest = int(sizes.max())
    if longest <= PAD_MAX:
        width = max(8, -(-longest // 8) * 8)
        buf = np.frombuffer(chars, dtype=np.uint8)
        if longest and int(sizes.min()) == longest:
            arr = np.zeros((n, width), dtype=np.uint8)
            arr[:, :longest] = buf.reshape(n, longest)
        else:
            arr = np.zeros((n, width), dtype=np.uint8)
            arr[np.arange(width)[None, :] < sizes[:, None].astype(np.int64)] = buf
        words = arr.view("<u8")
        h = sizes.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        with np.errstate(over="ignore"):
            for k in range(words.shape[1]):
                h = (h ^ words[:, k]) * np.uint64(0xFF51AFD7ED558CCD)
                h ^= h >> np.uint64(29)
        first, inv = _unique_first(h)
        perm = np.argsort(first, kind="stable")
        rank = np.empty(len(perm), dtype=np.int64)
        rank[perm] = np.arange(len(perm))
        if most is not None and len(perm) > most:
            return rank[inv], None
        keys = [chars[int(starts[first[p]]):int(ends[first[p]])] for p in perm]
        return rank[inv], keys
    seen: dict[bytes, int] = {}
    codes = np.empty(n, dtype=np.int64)
    for i in range(n):
        k = chars[int(starts[i]):int(ends[i])]
        codes[i] = seen.setdefault(k, len(seen))
    return codes, (None if most is not None and len(seen) > most else list(seen))


def _unique_first(h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first row of each distinct value in sorted-value order, each row's value number):
    np.unique(return_index, return_inverse) without its stable sort (twice as fast)."""
    order = np.argsort(h)
    hs = h[order]
    flag = np.empty(len(h), dtype=bool)
    flag[0] = True
    np.not_equal(hs[1:], hs[:-1], out=flag[1:])
    first = np.minimum.reduceat(order, np.flatnonzero(flag))
    inv = np.empty(len(h), dtype=np.int64)
    inv[order] = np.cumsum(flag) - 1
    return first, inv


def _first_seen_order(codes: np.ndarray) -> np.ndarray:
    """The distinct small non-negative ``codes`` in the order first seen (a first-row table
    per code: 4x faster than np.unique with return_index on a granule)."""
    n = len(codes)
    if not n:
        return codes[:0]
    first = np.full(int(codes.max()) + 1, n, dtype=np.int64)
    np.minimum.at(first, codes, np.arange(n))
    u = np.flatnonzero(first < n)
    return u[np.argsort(first[u])]


def new_keys_second_half(codes: np.ndarray) -> int:
    """Keys of a run's second half that its first half does not hold: how fast the
    column's contiguous rows bring new keys (what a part's unread rows add to its
    dictionary, compress/typeadvice._dictionary_estimate)."""
    half = len(codes) // 2
    if not half:
        return 0
    first = np.zeros(int(codes.max()) + 1, dtype=bool)
    first[codes[:half]] = True
    second = np.unique(codes[half:])
    return int(np.count_nonzero(~first[second]))


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _string_bulk(keys: list, fixed: int = 0) -> bytes:
    """Keys as the dictionary's inner type writes them in bulk: String (varint length +
    bytes, SerializationString::serializeBinaryBulk) or FixedString(``fixed``) (the bytes,
    zero-padded, SerializationFixedString); the NULL placeholder (None) as the type's default."""
    if fixed:
        return b"".join((k or b"").ljust(fixed, b"\0") for k in keys)
    return b"".join(_varint(len(k or b"")) + (k or b"") for k in keys)


def _index_dtype(largest: int) -> tuple[int, str]:
    for t, (top, dt) in enumerate(((0xFF, "<u1"), (0xFFFF, "<u2"), (0xFFFFFFFF, "<u4"))):
        if largest <= top:
            return t, dt
    return 3, "<u8"


@dataclass
class LowCardinalityWriter:
    """One part's LowCardinality(String) writer state (the shared dictionary).  ``nullable``:
    LowCardinality(Nullable(...)), whose dictionary (ColumnUnique of a Nullable type) holds the
    NULL placeholder at position 0 and the default ('') at 1 (ColumnUnique::numSpecialValues,
    getNullValueIndex, getNestedTypeDefaultValueIndex), both written with the keys (its
    getNestedNotNullableColumn), NULL rows taking position 0 and no null map stream;
    ``fixed``: the keys are FixedString(fixed), written without a length."""

    keys: dict | None = None               # key -> position (None: no dictionary yet)
    dict_chunks: list | None = None        # bytes written to .dict.bin per granule
    prefix_written: bool = False           # the keys version counted with a run's dictionary
    phantom: int = 0                       # keys the real dictionary holds from rows not read
    nullable: bool = False
    fixed: int = 0

    def __post_init__(self):
        self.dict_chunks = [LC_KEYS_VERSION.to_bytes(8, "little")]   # serializeBinaryBulkStatePrefix

    def _special(self) -> dict:
        return {None: 0, b"": 1} if self.nullable else {b"": 0}

    def granule(self, codes: np.ndarray, run_keys: list[bytes]) -> bytes:
        """The keys-stream bytes of one granule (``codes`` index ``run_keys``); a dictionary
        that fills up is appended to ``dict_chunks``."""
        need_update = self.keys is None
        if need_update:
            self.keys = self._special()
        gdict = self.keys
        size_before = len(gdict) + self.phantom
        order = _first_seen_order(codes)
        pos_of = np.zeros(len(run_keys) if run_keys else 1, dtype=np.int64)
        overflow: list[bytes] = []
        for c in order.tolist():
            k = run_keys[c]
            p = gdict.get(k)
            if p is None:
                if len(gdict) < LC_MAX_DICTIONARY_SIZE:
                    p = gdict[k] = len(gdict) + self.phantom
                else:
                    p = LC_MAX_DICTIONARY_SIZE + len(overflow)
                    overflow.append(k)
            pos_of[c] = p
        positions = pos_of[codes]
        largest = max(size_before, int(positions.max()) if len(positions) else 0)
        t, dt = _index_dtype(largest)
        flags = t | NEED_GLOBAL_DICTIONARY_BIT | (HAS_ADDITIONAL_KEYS_BIT if overflow else 0) | (
            NEED_UPDATE_DICTIONARY if need_update else 0)
        out = [flags.to_bytes(8, "little")]
        if len(gdict) >= LC_MAX_DICTIONARY_SIZE:          # need_write_dictionary
            self.dict_chunks.append(self._dictionary())
            self.keys = None
            self.phantom = 0
        else:
            self.dict_chunks.append(b"")
        if overflow:
            out.append(len(overflow).to_bytes(8, "little") + _string_bulk(overflow, self.fixed))
        out.append(len(codes).to_bytes(8, "little") + positions.astype(dt).tobytes())
        return b"".join(out)

    def _dictionary(self) -> bytes:
        keys = list(self.keys)
        return len(keys).to_bytes(8, "little") + _string_bulk(keys, self.fixed)

    def finish(self) -> bytes:
        """serializeBinaryBulkStateSuffix: the dictionary still open."""
        return self._dictionary() if self.keys is not None else b""


def serialize_lowcardinality_run(writer: LowCardinalityWriter, codes: np.ndarray, keys: list[bytes],
                                 granule_rows: int) -> tuple[list[bytes], list[bytes]]:
    """(keys-stream chunks, dictionary chunks written) of one run of a part as
    LowCardinality(String), a chunk a granule, the part's dictionary carried in ``writer``."""
    start = len(writer.dict_chunks)
    chunks = [writer.granule(codes[a:b], keys) for a, b in granule_slices(len(codes), granule_rows)]
    dict_chunks = writer.dict_chunks[start:]
    if any(dict_chunks) and not writer.prefix_written:     # the keys version goes in the first block
        dict_chunks[0] = writer.dict_chunks[0] + dict_chunks[0]
        writer.prefix_written = True
    return chunks, dict_chunks


def project_serialized_run(chunks: list[bytes], dict_chunks: list[bytes], chain: str) -> tuple[int, int]:
    """(keys-stream bytes, dictionary bytes) of a serialized run with ``chain`` (its positions
    with the chain's generic codecs)."""
    dict_bytes = project_blocks(dict_chunks, chain) if any(dict_chunks) else 0
    return project_blocks(chunks, generic_chain(chain)), dict_bytes


def project_lowcardinality_run(writer: LowCardinalityWriter, codes: np.ndarray, keys: list[bytes], chain: str,
                               granule_rows: int) -> tuple[int, int]:
    """(keys-stream bytes, dictionary bytes written) of one run of a part as
    LowCardinality(String), the part's dictionary carried in ``writer``."""
    return project_serialized_run(*serialize_lowcardinality_run(writer, codes, keys, granule_rows), chain)


def project_dictionary_tail(writer: LowCardinalityWriter, chain: str) -> int:
    """The part's last dictionary (and the keys version when nothing else was written)."""
    tail = writer.finish()
    head = b"" if writer.prefix_written else writer.dict_chunks[0]
    return project_blocks([head + tail], chain) if head or tail else 0


def parse_inline(buf: bytes, count: int | None = None, start: int = 0) -> tuple[np.ndarray, bytes]:
    """(sizes, bytes) of Strings written with their sizes inline (SerializationString::
    serializeBinaryBulk: a varint length before each value's bytes), as Log and TinyLog tables
    and Wide parts without a ``.size`` stream (ClickHouse before 25.10) write them: every value
    from ``start``, or ``count`` values.  A Python loop over the rows (about 1 us a row)."""
    sizes = []
    chars = []
    pos, n = start, len(buf)
    mv = memoryview(buf)
    while pos < n and (count is None or len(sizes) < count):
        b = buf[pos]
        if b < 0x80:
            ln, pos = b, pos + 1
        else:
            ln = shift = 0
            while True:
                if pos >= n:
                    raise StringReadError("a String length runs past the end of its stream")
                b = buf[pos]
                pos += 1
                ln |= (b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    break
        if pos + ln > n:
            raise StringReadError(f"a String of {ln} bytes runs past the end of its stream")
        sizes.append(ln)
        chars.append(mv[pos:pos + ln])
        pos += ln
    if count is not None and len(sizes) < count:
        raise StringReadError(f"the stream ends after {len(sizes)} of {count} String values")
    return np.array(sizes, dtype=np.uint64), b"".join(chars)


def inline_bytes(sizes: np.ndarray, chars: bytes) -> bytes:
    """Strings with their sizes inline (the inverse of ``parse_inline``)."""
    ends = np.cumsum(sizes, dtype=np.int64)
    starts = ends - sizes.astype(np.int64)
    return b"".join(_varint(int(ln)) + chars[int(a):int(e)] for ln, a, e in zip(sizes.tolist(), starts, ends))


# --- reading ---------------------------------------------------------------------------------------------------

def _stream_entry(files, part_dir: str, stream: str):
    for f in files:
        if f.role == "part_column_data" and os.path.dirname(f.abspath) == part_dir and \
                f.sections.get("clickhouse", {}).get("stream") == stream:
            return f
    return None


class StringRunReader:
    """Reads the values of runs of one String column (sizes runs from the caller)."""

    def __init__(self, dataset, stem: str, files=None):
        self.dataset = dataset
        self.files = dataset.files if files is None else files     # where to find the bytes stream
        self.stem = stem
        self._parts: dict[str, tuple] = {}

    def _part(self, part_dir: str):
        got = self._parts.get(part_dir)
        if got is None:
            entry = _stream_entry(self.files, part_dir, self.stem)
            if entry is None or entry.units is None:
                raise StringReadError(f"{part_dir}: no {self.stem}.bin beside {self.stem}.size.bin")
            mfile = entry.sections["clickhouse"].get("marks_file")
            fl = marks_flavour(mfile or "")
            if fl is None:
                raise StringReadError(f"{entry.path}: no marks file")
            with open(os.path.join(part_dir, mfile), "rb") as f:
                marks = read_marks(f.read(), fl)
            cum = None if marks.rows is None else np.concatenate([[0], np.cumsum(marks.rows.astype(np.int64))])
            block_at = {int(o): i for i, o in enumerate(entry.units["offset"].tolist())}
            got = self._parts[part_dir] = (entry, marks, cum, block_at)
        return got

    def _mark_at(self, marks, cum, row: int, granule_rows: int) -> int:
        if cum is None:
            return row // granule_rows if row % granule_rows == 0 else -1
        hit = np.nonzero(cum[:-1] == row)[0]
        return int(hit[0]) if len(hit) else -1

    def stored(self, size_entry, row0: int, rows: int, granule_rows: int) -> int:
        """Stored bytes of the bytes stream from the block holding row ``row0``'s mark to
        the block holding the next run's (the stream's end for a part's last run): the
        runs of a part share the stream's bytes out exactly (a block two runs share counts
        in the first)."""
        entry, marks, cum, _ = self._part(os.path.dirname(size_entry.abspath))
        m0 = self._mark_at(marks, cum, row0, granule_rows)
        last = cum is not None and row0 + rows >= int(cum[-1])   # the final mark points into the last block
        m1 = -1 if last else self._mark_at(marks, cum, row0 + rows, granule_rows)
        if not 0 <= m0 < len(marks):
            raise StringReadError(f"{entry.path}: no mark at row {row0}")
        end = int(entry.units["offset"][-1] + entry.units["stored"][-1]) if len(entry.units) else 0
        c0 = 0 if row0 == 0 else int(marks.offsets[m0, 0][0])
        c1 = int(marks.offsets[m1, 0][0]) if 0 <= m1 < len(marks) else end
        return max(0, min(c1, end) - c0)

    def read(self, size_entry, row0: int, sizes: np.ndarray, granule_rows: int) -> bytes:
        """The bytes of the rows ``row0 ..`` of the part whose sizes are ``sizes``."""
        entry, marks, cum, block_at = self._part(os.path.dirname(size_entry.abspath))
        if cum is None:
            m = row0 // granule_rows if row0 % granule_rows == 0 else -1
        else:
            hit = np.nonzero(cum[:-1] == row0)[0]
            m = int(hit[0]) if len(hit) else -1
        if not 0 <= m < len(marks):
            raise StringReadError(f"{entry.path}: no mark at row {row0}")
        coff, doff = (int(x) for x in marks.offsets[m, 0])
        i = block_at.get(coff)
        if i is None:
            raise StringReadError(f"{entry.path}: mark {m} points at {coff}, not a block start")
        need = doff + int(sizes.sum())
        parts = []
        got = 0
        while got < need:
            if i >= len(entry.units):
                raise StringReadError(f"{entry.path}: the bytes stream ends before row {row0 + len(sizes)}")
            b = payloads.unit_payload(entry, i, max_output=int(entry.units["logical"][i]))
            parts.append(b)
            got += len(b)
            i += 1
        return b"".join(parts)[doff:need]

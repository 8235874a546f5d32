"""The ClickHouse type advisor: for every integer and float column of every
MergeTree table, the narrower types its values fit, each projected on disk
with the column's codec and the engine's block framing (issue 20).

Values come from the column's decoded blocks (``parsers/clickhouse/payloads``:
every codec decodes), read in *runs* of consecutive blocks of one part's main
stream; a run starts and ends at granule ends (a Wide part's blocks are cut at
granule ends), so it can be re-cut as the engine would cut the new type:

* the values are converted (``astype``) to the candidate type;
* the stream is cut into blocks as MergeTreeDataPartWriterWide /
  CompressedWriteBuffer cut it: a block is closed at the end of a granule
  (``index_granularity`` rows) once it holds ``min_compress_block_size``
  (65,536) bytes, and at ``max_compress_block_size`` (1 MiB)
  (``compress/engines/clickhouse.clickhouse_block_sizes``);
* each block is encoded with the column's codec chain (the DDL's CODEC, else
  the part's default codec) through the codec layer (``parsers/codecs/ch_encode``:
  Delta/T64/Gorilla... take the new value width) and framed: 16-byte
  CityHash128 + 9-byte header + payload (src/Compression/CompressionInfo.h).

The projected bytes of the column are a ratio estimate over the sampled runs
(bytes per row x rows), with a 95% interval from the runs' spread (finite
population corrected; exact when every run is read).

Ranges: an integer column's min/max come from the parts' Basic statistics
(``statistics.packed``, exact) when every active part has them, else from the
sampled values (said so).  Floats: "integral" when every sampled value is a
whole number; Float64 -> Float32 "lossless" when every sampled value converts
back unchanged, else "loses precision" with the largest error seen.
"""
from __future__ import annotations

import math
import os
import re
import time
from dataclasses import dataclass, field

import numpy as np

from dbxray.parsers.clickhouse import payloads
from dbxray.parsers.clickhouse.streams import escape_for_file_name
from dbxray.parsers.codecs import ch_encode

from .encodememo import encoded_size, remembering
from .engines.clickhouse import CH_CHECKSUM, CH_MAX_COMPRESS_BLOCK, CH_MIN_COMPRESS_BLOCK, clickhouse_block_sizes

#: the integer types, narrowest first: name, width, min, max (src/DataTypes/DataTypesNumber.h)
INT_TYPES = (
    ("UInt8", 1, 0, 2**8 - 1), ("Int8", 1, -2**7, 2**7 - 1),
    ("UInt16", 2, 0, 2**16 - 1), ("Int16", 2, -2**15, 2**15 - 1),
    ("UInt32", 4, 0, 2**32 - 1), ("Int32", 4, -2**31, 2**31 - 1),
    ("UInt64", 8, 0, 2**64 - 1), ("Int64", 8, -2**63, 2**63 - 1),
)
NUMPY_TYPE = {"UInt8": "<u1", "Int8": "<i1", "UInt16": "<u2", "Int16": "<i2", "UInt32": "<u4", "Int32": "<i4",
              "UInt64": "<u8", "Int64": "<i8", "Float32": "<f4", "Float64": "<f8"}
WIDTH = {n: w for n, w, _, _ in INT_TYPES} | {"Float32": 4, "Float64": 8}
#: types without a fixed value layout (src/DataTypes/DataTypeVariant.h, DataTypeDynamic.h, DataTypeObject.h)
NO_LAYOUT = ("Variant", "Dynamic", "JSON", "Object")
#: bytes of old values per sampled run (whole blocks, at least one): 256 KiB, so a small column is
#: not read whole by MIN_RUNS runs (1 MiB runs made the 1.17 GB set's 5% advice 12.6 s, these 7.4 s)
RUN_BYTES = 256 << 10
MIN_RUNS = 4
#: a run holds a multiple of this many granules: the most a 64 KiB block of a 1-byte type
#: takes at 8192 rows (min_compress_block_size / index_granularity)
ALIGN_GRANULES = 8
MODIFY_WARNING = ("ALTER TABLE ... MODIFY COLUMN rewrites the column in every part (a mutation that reads "
                  "and writes the whole column, and needs room for the new files until it ends); a codec "
                  "change alone rewrites nothing until the parts merge, hence the OPTIMIZE ... FINAL after it "
                  "(which rewrites every part of the table)")
_FLOAT_ONLY = ("FPC",)
_INT_ONLY = ("T64", "GCD")
#: codecs whose argument is the value width (CompressionCodecDelta.cpp, DoubleDelta, Gorilla)
_WIDTH_ARG = ("DELTA", "DOUBLEDELTA", "GORILLA")
#: LowCardinality(String) is projected when the distinct values read are at most this share of the rows
LC_MOST_DISTINCT = 0.75
#: the values whose distinct count decides the LowCardinality note of a fixed-width column
LC_NOTE_ROWS = 8192
#: Log-family engines (src/Storages/StorageLog.cpp, StorageStripeLog.cpp)
LOG_ENGINES = ("Log", "TinyLog", "StripeLog")
#: Settings.cpp: INSERT ... SELECT squashes the rows read into blocks of at least this many rows
MIN_INSERT_BLOCK_SIZE_ROWS = 1048449
#: Settings.cpp max_block_size (DEFAULT_BLOCK_SIZE): the rows a Log / TinyLog table is read in
MAX_BLOCK_SIZE = 65409
#: columns a worker process advises per round trip when the columns are advised on several cores
COLUMNS_PER_TASK = 2


@dataclass
class Candidate:
    """One type the column could have, projected."""

    type: str
    codec: str                              # chain the projection encodes with
    reason: str
    lossless: bool = True
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    projected_bytes: int = 0
    ci95: tuple[int, int] = (0, 0)
    saving_bytes: int = 0
    ddl: str = ""
    warning: str = ""                       # e.g. parts that would be written Compact
    compress_mb_s: float | None = None      # a codec chain: its general codec's speed on the column's bytes

    def to_json(self) -> dict:
        return {"type": self.type, "codec": self.codec, "reason": self.reason, "lossless": self.lossless,
                "max_abs_error": self.max_abs_error, "max_rel_error": self.max_rel_error,
                "projected_bytes": self.projected_bytes, "projected_bytes_ci95": list(self.ci95),
                "saving_bytes": self.saving_bytes, "ddl": self.ddl, "warning": self.warning,
                "compress_mb_s": None if self.compress_mb_s is None else round(self.compress_mb_s, 1)}


@dataclass
class ColumnAdvice:
    """The advice for one column."""

    database: str
    table: str
    column: str
    type: str
    current_bytes: int = 0                  # its streams' bytes in active Wide parts (+ Compact: compact_rows)
    current_codec: str = ""
    rows: int = 0
    sampled_rows: int = 0
    runs: int = 0
    sampled_runs: int = 0
    value_min: float | int | None = None
    value_max: float | int | None = None
    range_source: str = ""
    integral: bool | None = None
    current_projected_bytes: int = 0        # the current type re-encoded the same way (the model's own error)
    compact_rows: int = 0                   # rows in active Compact parts, read whole and counted
    candidates: list[Candidate] = field(default_factory=list)
    codec_candidates: list[Candidate] = field(default_factory=list)   # chains on each suggested type
    not_advised: str | None = None
    nulls: int | None = None                # Nullable: NULL rows (the whole null map read)
    distinct_sampled: int | None = None     # String: distinct values in the rows read
    length_min: int | None = None
    length_max: int | None = None
    length_mean: float | None = None
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"database": self.database, "table": self.table, "column": self.column, "type": self.type,
                "current_bytes": self.current_bytes, "current_codec": self.current_codec, "rows": self.rows,
                "sampled_rows": self.sampled_rows, "runs": self.runs, "sampled_runs": self.sampled_runs,
                "min": self.value_min, "max": self.value_max, "range_source": self.range_source,
                "integral": self.integral, "current_projected_bytes": self.current_projected_bytes,
                "compact_rows": self.compact_rows,
                "candidates": [c.to_json() for c in self.candidates],
                "codec_candidates": [c.to_json() for c in self.codec_candidates], "not_advised": self.not_advised,
                "nulls": self.nulls, "distinct_sampled": self.distinct_sampled, "length_min": self.length_min,
                "length_max": self.length_max, "length_mean": self.length_mean,
                "notes": self.notes}


@dataclass
class _Run:
    entry: object
    blocks: list[int]
    rows: int
    stored: int
    row0: int = 0               # the run's first row in its part
    start: int = -1             # Strings with sizes inline: the run's offset in its first block (its mark's)


#: the last dataset's ClickHouse .bin files by table (one pass over its files, not one a column)
_FILES_BY_TABLE: list = [None, {}]


def table_files(dataset, db: str, table: str) -> list:
    """The dataset's ClickHouse files of one table (indexed once per dataset)."""
    if _FILES_BY_TABLE[0] is not dataset:
        index: dict = {}
        for f in dataset.files:
            if f.engine == "clickhouse" and f.units is not None:
                index.setdefault((f.database, f.table), []).append(f)
        _FILES_BY_TABLE[:] = [dataset, index]
    return _FILES_BY_TABLE[1].get((db, table), [])


def column_blocks(dataset, db: str, table: str, column: str) -> list:
    """payloads.column_blocks over the table's files only."""
    return payloads.column_blocks(dataset, db, table, column, files=table_files(dataset, db, table))


def _base_type(type_text: str) -> str:
    return type_text.strip().split("(", 1)[0].strip()


def _ddl_chain(col: dict, default: str) -> str:
    codec = (col.get("codec") or "").strip()
    m = re.fullmatch(r"(?is)CODEC\s*\((.*)\)", codec)
    return (m.group(1).strip() if m else codec) or default


def _chain_for(chain: str, new_type: str, default: str) -> str:
    """The chain a candidate is encoded with: the column's, less the codecs the new
    type does not take (FPC/Gorilla on integers, T64/GCD on floats: the engine refuses
    them, src/Compression/CompressionCodecFPC.cpp, CompressionCodecT64.cpp)."""
    items = [i.strip() for i in re.split(r",(?![^(]*\))", chain) if i.strip()]
    is_float = new_type.startswith("Float")
    bad = _INT_ONLY if is_float else _FLOAT_ONLY
    kept = []
    for i in items:
        head = i.split("(", 1)[0].strip()
        if head.upper() in bad:
            continue
        if head.upper() in _WIDTH_ARG:
            i = head          # the width the DDL spelled out was the old type's: the engine fills the new one
        kept.append(i)
    return ", ".join(kept) or default


def _default_codec(table: dict) -> str:
    for p in table.get("parts") or []:
        if p.get("default_compression_codec"):
            return str(p["default_compression_codec"])
    return "LZ4"


def _main_stream_runs(dataset, table: dict, column: str, width: int, granule: int,
                      substream: str = "") -> tuple[list[_Run], int, int]:
    """Runs of consecutive blocks of the column's main stream in the active Wide
    parts: (runs, rows, stored bytes).  A run ends at a block end once it holds
    RUN_BYTES and a multiple of ALIGN_GRANULES granules (or at the part's end), so
    the blocks of any narrower type start at a run's start as the writer would
    start them (a block holds 1, 2, 4 or 8 granules of a 1..8-byte type)."""
    stem = escape_for_file_name(column) + substream
    by_entry: dict[int, tuple[object, list[int]]] = {}
    for e, i in column_blocks(dataset, table["database"], table["table"], column):
        sec = e.sections.get("clickhouse", {})
        if e.role != "part_column_data" or sec.get("stream") != stem or sec.get("substream", "") != substream:
            continue
        by_entry.setdefault(id(e), (e, []))[1].append(i)
    runs: list[_Run] = []
    rows = stored = 0
    for e, idx in by_entry.values():
        idx.sort()
        logical = e.units["logical"]
        cur: list[int] = []
        acc = 0
        row0 = 0
        for i in idx:
            cur.append(i)
            acc += int(logical[i])
            if acc >= RUN_BYTES and (acc // width) % (ALIGN_GRANULES * granule) == 0:
                runs.append(_mkrun(e, cur, width, row0))
                row0 += runs[-1].rows
                cur, acc = [], 0
        if cur:
            runs.append(_mkrun(e, cur, width, row0))
    for r in runs:
        rows += r.rows
        stored += r.stored
    return runs, rows, stored


def _inline_string_runs(dataset, table: dict, column: str, granule: int) -> tuple[list[_Run], int, int]:
    """Runs of a String column whose sizes are inline in ``<column>.bin`` (Wide parts without
    the ``.size`` stream: ClickHouse before 25.10), cut at granule starts by the column's marks
    (compressed block offset, offset in the decompressed block: a granule may start inside a
    block), a run ending once it holds RUN_BYTES and a multiple of ALIGN_GRANULES granules:
    (runs, rows, stored bytes)."""
    from dbxray.parsers.clickhouse.marks import marks_flavour, read_marks
    stem = escape_for_file_name(column)
    runs: list[_Run] = []
    rows = stored = 0
    active = {p.get("name") for p in table.get("parts") or [] if p.get("state") == "active"}
    for e in table_files(dataset, table["database"], table["table"]):
        sec = e.sections.get("clickhouse", {})
        if e.role != "part_column_data" or sec.get("stream") != stem or sec.get("substream", "") or \
                sec.get("part_type") == "Compact" or sec.get("part") not in active or not len(e.units):
            continue
        mfile = sec.get("marks_file")
        fl = marks_flavour(mfile or "")
        if fl is None:
            raise _NotAdvised(f"{e.path}: no marks file to cut its inline Strings at granule ends")
        with open(os.path.join(os.path.dirname(e.abspath), mfile), "rb") as f:
            marks = read_marks(f.read(), fl)
        offs = e.units["offset"].astype(np.int64)
        at = {int(o): i for i, o in enumerate(offs.tolist())}
        end = int(offs[-1] + int(e.units["stored"][-1]))
        n = len(marks)
        if marks.rows is not None:
            g_rows = [int(r) for r in marks.rows]
        else:                   # no rows in the marks (.mrk): index_granularity each, the part's last the rest
            total = int(next((p.get("rows") or 0 for p in table.get("parts") or [] if p.get("name") == sec.get("part")),
                             0))
            g_rows = [max(0, min(granule, total - g * granule)) for g in range(n)]
        live = [g for g in range(n) if g_rows[g] > 0]
        coff = [int(marks.offsets[g, 0][0]) for g in range(n)]
        doff = [int(marks.offsets[g, 0][1]) for g in range(n)]
        row0 = 0
        k = 0
        while k < len(live):
            g0 = live[k]
            j = k
            acc = 0
            while j < len(live):
                nxt = coff[live[j + 1]] if j + 1 < len(live) else end
                acc += nxt - coff[live[j]]
                j += 1
                if acc >= RUN_BYTES and (j - k) % ALIGN_GRANULES == 0:
                    break
            c0 = coff[g0]
            c1 = coff[live[j]] if j < len(live) else end
            if c0 not in at:
                raise _NotAdvised(f"{e.path}: mark {g0} points at {c0}, not a block start")
            last = at.get(c1, len(offs)) + (1 if j < len(live) and doff[live[j]] > 0 else 0)
            r = int(sum(g_rows[live[x]] for x in range(k, j)))
            runs.append(_Run(e, list(range(at[c0], min(max(last, at[c0] + 1), len(offs)))), r, c1 - c0, row0,
                             doff[g0]))
            row0 += r
            rows += r
            stored += c1 - c0
            k = j
    return runs, rows, stored


def _mkrun(e, blocks: list[int], width: int, row0: int = 0) -> _Run:
    logical = int(sum(int(e.units["logical"][i]) for i in blocks))
    st = int(sum(int(e.units["stored"][i]) for i in blocks))
    return _Run(e, list(blocks), logical // width, st, row0)


def _raw(run: _Run) -> bytes:
    return b"".join(payloads.unit_payload(run.entry, i, max_output=int(run.entry.units["logical"][i]))
                    for i in run.blocks)


def _values(run: _Run, dtype: str) -> np.ndarray:
    return np.frombuffer(_raw(run), dtype=dtype)


def _stream_stored(dataset, table: dict, column: str, substreams: tuple[str, ...]) -> int:
    """Stored bytes of the column's streams with these substream suffixes in active Wide parts."""
    stem = escape_for_file_name(column)
    out = 0
    for e, i in column_blocks(dataset, table["database"], table["table"], column):
        sec = e.sections.get("clickhouse", {})
        sub = sec.get("substream", "") if e.role == "part_column_data" else \
            str(sec.get("stream", ""))[len(stem):] if str(sec.get("stream", "")).startswith(stem) else None
        if e.role in ("part_column_data", "table_data") and sub in substreams and sec.get("stream") == stem + sub:
            out += int(e.units["stored"][i])
    return out


def project_stream(values: np.ndarray, new_type: str, chain: str, granule_rows: int) -> int:
    """Stored bytes of ``values`` written as ``new_type`` with ``chain``: cut into
    blocks at granule ends as the MergeTree writer cuts them, each block encoded and
    framed (checksum + header)."""
    return project_raw(values.astype(NUMPY_TYPE[new_type], copy=False).tobytes(), new_type, chain, granule_rows)


def _estimate(per_run: list[tuple[int, int]], total_rows: int, n_runs: int,
              floor_rel_var: float = 0.0) -> tuple[int, tuple[int, int]]:
    """Ratio estimate of the column's bytes from (rows, projected bytes) of the sampled
    runs, with a 95% interval (finite population corrected; 0 width when all runs read).
    ``floor_rel_var``: the relative residual variance between runs that is known to be there
    (``_population_rel_var`` of the column's stored bytes, known for every run): the
    interval is not narrower than it gives when the few runs read happen to agree."""
    x = np.array([r for r, _ in per_run], dtype=float)
    y = np.array([b for _, b in per_run], dtype=float)
    if not len(x) or x.sum() == 0:
        return 0, (0, 0)
    ratio = y.sum() / x.sum()
    est = ratio * total_rows
    n = len(x)
    if n >= n_runs or n < 2:
        return int(round(est)), (int(round(est)), int(round(est)))
    resid = y - ratio * x
    f = n / n_runs
    rel = resid.var(ddof=1) / y.mean() ** 2 if y.mean() else 0.0
    se = math.sqrt(max((1 - f) * max(rel, floor_rel_var) / n, 0.0)) * est
    t = 1.96 if n >= 30 else float(_T95.get(n - 1, 2.0))
    half = t * se
    return int(round(est)), (int(round(est - half)), int(round(est + half)))


def _population_rel_var(xy: list[tuple[int, int]]) -> float:
    """Relative residual variance of y about the ratio line through every unit (x, y): how
    much the units' bytes a row differ (the population's own, every unit known)."""
    if len(xy) < 2:
        return 0.0
    x = np.array([a for a, _ in xy], dtype=float)
    y = np.array([b for _, b in xy], dtype=float)
    if not x.sum() or not y.mean():
        return 0.0
    return float((y - y.sum() / x.sum() * x).var(ddof=1) / y.mean() ** 2)


#: two-sided 95% Student t quantiles for small samples
_T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26, 10: 2.23, 12: 2.18,
        15: 2.13, 20: 2.09, 25: 2.06, 29: 2.05}
for _k in range(1, 30):
    _T95.setdefault(_k, _T95[max(k for k in _T95 if k <= _k)])


def _stats_range(table: dict, column: str) -> tuple[float, float] | None:
    """min/max over the active parts' Basic statistics, when every one has them."""
    lo = hi = None
    parts = [p for p in table.get("parts") or [] if p.get("state") == "active"]
    if not parts:
        return None
    for p in parts:
        st = (p.get("statistics_contents") or {}).get(column)
        basic = next((s for s in (st or {}).get("statistics", []) if s.get("kind") == "Basic"
                      and s.get("min") is not None and s.get("max") is not None), None)
        if basic is None:
            return None
        lo = basic["min"] if lo is None else min(lo, basic["min"])
        hi = basic["max"] if hi is None else max(hi, basic["max"])
    return lo, hi


def key_columns(table: dict) -> set[str]:
    """Columns named in the sorting, primary or partition key: the engine refuses
    to change their type in place (MergeTreeData::checkAlterIsPossible:
    ALTER_OF_COLUMN_IS_FORBIDDEN, "ALTER of key column ... is not safe")."""
    text = " ".join(str(table.get(k) or "") for k in ("sorting_key", "primary_key", "partition_key"))
    names = set(re.findall(r"`([^`]+)`|([A-Za-z_][A-Za-z0-9_.]*)", text))
    return {a or b for a, b in names}


def _fitting_ints(lo, hi, below_width: int) -> list[str]:
    """Integer types holding [lo, hi], narrower than ``below_width`` bytes (the
    narrowest of each width; unsigned first)."""
    out = []
    widths_done = set()
    for name, w, tmin, tmax in INT_TYPES:
        if w < below_width and w not in widths_done and tmin <= lo and hi <= tmax:
            out.append(name)
            widths_done.add(w)
    return out


def _layout(t: str) -> tuple[str | None, int, str] | None:
    """(numpy dtype or None for 16/32-byte values, width, the type T64 records) of a fixed-width type."""
    b = _base_type(t)
    if b in NUMPY_TYPE and "(" not in t:
        return NUMPY_TYPE[b], WIDTH[b], b
    if b == "DateTime":
        return "<u4", 4, "DateTime"
    if b == "Date" and "(" not in t:
        return "<u2", 2, "Date"
    if b == "Date32" and "(" not in t:
        return "<i4", 4, "Date32"
    if b == "DateTime64":
        return "<i8", 8, "DateTime64"
    dec = _decimal_ps(t)
    if dec:
        w = _decimal_width(dec[0])
        return {4: "<i4", 8: "<i8"}.get(w), w, f"Decimal{w * 8}"
    return None


def _args(t: str) -> list[str]:
    m = re.fullmatch(r"\s*\w+\s*\((.*)\)\s*", t)
    return [a.strip() for a in re.split(r",(?![^(]*\))", m.group(1))] if m else []


def _decimal_ps(t: str) -> tuple[int, int] | None:
    """(precision, scale) of Decimal(P, S) / Decimal32..256(S) (src/DataTypes/DataTypesDecimal.cpp)."""
    b = _base_type(t)
    a = _args(t)
    try:
        if b == "Decimal" and len(a) == 2:
            return int(a[0]), int(a[1])
        if b in ("Decimal32", "Decimal64", "Decimal128", "Decimal256") and len(a) == 1:
            return {"Decimal32": 9, "Decimal64": 18, "Decimal128": 38, "Decimal256": 76}[b], int(a[0])
    except ValueError:
        return None
    return None


def _decimal_width(p: int) -> int:
    return 4 if p <= 9 else 8 if p <= 18 else 16 if p <= 38 else 32


def _wide_to_int64(raw: bytes, width: int) -> np.ndarray | None:
    """16/32-byte little-endian integers as Int64 when every one fits, else None."""
    words = np.frombuffer(raw, dtype="<i8").reshape(-1, width // 8)
    if not len(words):
        return words[:, 0].copy()
    if not (words[:, 1:] == (words[:, :1] >> 63)).all():
        return None
    return words[:, 0].copy()


def _int64_to_wide(v: np.ndarray, width: int) -> bytes:
    v = v.astype("<i8")
    return np.column_stack([v] + [v >> 63] * (width // 8 - 1)).astype("<i8").tobytes()


def _as_bytes(v: np.ndarray, t: str) -> bytes:
    """Values (Int64 for decimals, the column's own dtype else) written as type ``t``."""
    dt, w, _ = _layout(t)
    if dt is None:
        return _int64_to_wide(v, w)
    return v.astype(dt, copy=False).tobytes()


def project_raw(raw: bytes, t: str, chain: str, granule_rows: int) -> int:
    """Stored bytes of fixed-width values ``raw`` of type ``t`` written with ``chain``."""
    _, w, vt = _layout(t)
    n = len(raw) // w
    full, last = divmod(n, granule_rows)
    granules = [granule_rows * w] * full + ([last * w] if last else [])
    out = pos = 0
    vt_arg = None if vt.startswith("Float") else vt
    for size in clickhouse_block_sizes(len(raw), granules, CH_MIN_COMPRESS_BLOCK, CH_MAX_COMPRESS_BLOCK):
        out += CH_CHECKSUM + encoded_size(raw[pos:pos + size], chain, type_size=w, value_type=vt_arg)
        pos += size
    return out


def _pick(n_runs: int, fraction: float | None, seed: int) -> np.ndarray:
    if fraction is None or fraction >= 1:
        return np.arange(n_runs)
    rng = np.random.default_rng(seed)
    k = min(n_runs, max(MIN_RUNS, int(math.ceil(fraction * n_runs))))
    return np.sort(rng.choice(n_runs, size=k, replace=False))


def _granule(table: dict) -> int:
    try:
        return int((table.get("settings") or {}).get("index_granularity", 8192))
    except ValueError:
        return 8192


def _null_map(dataset, table: dict, column: str, keep: bool = False,
              by_dir: dict | None = None) -> tuple[int, int, list[bytes]] | None:
    """(NULL rows, rows, each part's null map bytes when ``keep``) from every block of the
    column's null map (``.null``), or None; ``by_dir`` (with ``keep``) is filled with each
    part folder's null map."""
    stem = escape_for_file_name(column)
    nulls = rows = 0
    seen = False
    by_part: dict[int, list[tuple[int, bytes]]] = {}
    dirs: dict[int, str] = {}
    for e, i in column_blocks(dataset, table["database"], table["table"], column):
        sec = e.sections.get("clickhouse", {})
        if e.role not in ("part_column_data", "table_data") or sec.get("stream") != stem + ".null":
            continue
        seen = True
        raw = payloads.unit_payload(e, i, max_output=int(e.units["logical"][i]))
        b = np.frombuffer(raw, dtype=np.uint8)
        nulls += int(np.count_nonzero(b))
        rows += len(b)
        if keep:
            by_part.setdefault(id(e), []).append((i, raw))
            dirs[id(e)] = os.path.dirname(e.abspath)
    parts = [b"".join(r for _, r in sorted(blocks)) for blocks in by_part.values()]
    if by_dir is not None:
        by_dir.update({d: p for d, p in zip(dirs.values(), parts)})
    return (nulls, rows, parts) if seen else None


def null_map_projector(parts: list[bytes], granule_rows: int):
    """Stored bytes of the parts' null maps written with a column chain: the null map takes
    the chain's generic codecs only, NONE when it has none (ISerialization::isSpecialCompressionAllowed:
    NullMap; CompressionCodecFactory::get with only_generic), one byte a row, cut into blocks at
    granule ends as any stream (SerializationNullable.cpp writes it as a UInt8 column)."""
    from .chstrings import generic_chain, project_blocks
    cache: dict[str, int] = {}

    def project(chain: str) -> int:
        g = generic_chain(chain)
        if g not in cache:
            cache[g] = sum(project_blocks([p[a:a + granule_rows] for a in range(0, len(p), granule_rows)], g)
                           for p in parts)
        return cache[g]
    return project


def _kind(t: str) -> str | None:
    b = _base_type(t)
    if b in NUMPY_TYPE and "(" not in t:
        return "float" if b.startswith("Float") else "int"
    if b == "DateTime64":
        return "datetime64"
    if b == "DateTime":
        return "datetime"
    if b in ("Date", "Date32") and "(" not in t:
        return "date"
    if _decimal_ps(t):
        return "decimal"
    if t.strip() == "String":
        return "string"
    if b == "FixedString":
        return "fixedstring"
    return None


def advise_column(dataset, table: dict, col: dict, fraction: float | None, seed: int = 0,
                  codecs: bool = False) -> ColumnAdvice:
    """The advice for one column (``fraction`` None: every run; ``codecs``: codec chains too);
    each block encoded once per codec however many projections ask for it (compress/encodememo.py)."""
    with remembering():
        return _advise_column(dataset, table, col, fraction, seed, codecs)


def _advise_column(dataset, table: dict, col: dict, fraction: float | None, seed: int = 0,
                   codecs: bool = False) -> ColumnAdvice:
    db, name = table["database"], table["table"]
    ctype = col.get("type", "")
    adv = ColumnAdvice(db, name, col["name"], ctype)
    base = _base_type(ctype)
    if table.get("engine") == "StripeLog":
        try:
            _advise_stripe(adv, dataset, table, col)
        except _NotAdvised as e:
            adv.not_advised = str(e)
        return adv
    inner = ctype
    nullable = base == "Nullable"
    if nullable:
        inner = ctype[ctype.index("(") + 1:ctype.rindex(")")].strip()
    if _base_type(inner) in NO_LAYOUT or base in NO_LAYOUT:
        adv.not_advised = f"{_base_type(inner)} columns are not advised: their values have no fixed layout to narrow"
        return adv
    kind = _kind(inner)
    if kind is None and base not in ("LowCardinality", "Array"):
        adv.not_advised = (f"{ctype}: not advised (the advisor takes integer, Float32/Float64, Date, Date32, DateTime, "
                           f"DateTime64, Decimal, String and FixedString columns, and Nullable of them)")
        return adv
    sparse = [p["name"] for p in table.get("parts") or [] if p.get("state") == "active"
              for c in p.get("columns") or [] if c.get("name") == col["name"] and c.get("serialization_kind") == "Sparse"]
    if sparse:
        adv.not_advised = (f"Sparse serialization in part {sparse[0]}: its stream holds only the non-default "
                           f"values (not advised)")
        return adv
    log_engine = str(table.get("engine", "")) in LOG_ENGINES
    default = _default_codec(table)
    if log_engine and len(col.get("codecs") or {}) == 1 and not (col.get("codec") or "").strip():
        default = next(iter(col["codecs"]))         # the server's default codec, as its blocks name it
        if default.startswith("ZSTD"):
            default = _zstd_level_of(dataset, table, col["name"], default)
    chain = _ddl_chain(col, default)
    adv.current_codec = chain
    if base in ("LowCardinality", "Array"):
        try:
            _advise_composite(adv, dataset, table, col, chain, _granule(table), codecs, fraction, seed)
        except _NotAdvised as e:
            adv.not_advised = str(e)
            return adv
        _set_ddls(adv, table, col, chain, adv.candidates + adv.codec_candidates, log_engine, "")
        for c in adv.candidates + adv.codec_candidates:
            inner_lc = c.type[len("LowCardinality("):-1] if c.type.startswith("LowCardinality(") else ""
            if _kind(inner_lc.removeprefix("Nullable(").removesuffix(")") if inner_lc.startswith("Nullable(")
                     else inner_lc) in ("int", "float"):
                # the engine refuses LowCardinality of a number without it (SUSPICIOUS_TYPE_FOR_LOW_CARDINALITY)
                c.ddl = ("SET allow_suspicious_low_cardinality_types = 1; " + c.ddl if not c.ddl.startswith("--")
                         else c.ddl + " (with SET allow_suspicious_low_cardinality_types = 1 first)")
        adv.candidates.sort(key=lambda c: c.projected_bytes)
        adv.codec_candidates.sort(key=lambda c: c.projected_bytes)
        return adv
    if log_engine and nullable and _generic(chain) != chain:
        # LogSink codes every file of a column with the chain made for the column's type (StorageLog.cpp:
        # getCodecOrDefault): on Nullable(T) Delta takes 1-byte values and T64 is refused at INSERT
        # (ILLEGAL_SYNTAX_FOR_CODEC_TYPE), both found by running it through chdb 4.4.0
        adv.not_advised = (f"{table.get('engine')} table: CODEC({chain}) on a Nullable column codes its null map "
                           f"and values with the chain made for {ctype} (Delta on 1-byte values; T64 is refused "
                           f"at INSERT): not modelled, not advised")
        return adv
    granule = _granule(table)
    pre: list[Candidate] = []
    null_bytes = 0
    null_dirs: dict = {}
    if nullable:
        try:
            # a String's null map is kept whatever ``codecs``: LowCardinality(Nullable) positions need it
            nm = _null_map(dataset, table, col["name"], keep=codecs or log_engine or kind in ("string", "fixedstring"),
                           by_dir=null_dirs)
            # the Compact parts' null maps too (each granule's first bytes): a NULL there keeps Nullable
            c_nulls, c_rows, c_parts = (0, 0, 0) if log_engine else _compact_null_count(dataset, table, col["name"])
        except Exception as e:      # noqa: BLE001 -- a null map block that does not decode
            adv.not_advised = f"its null map could not be decoded: {e}"
            return adv
        if nm is None and not c_parts:
            adv.not_advised = "no null map stream in active Wide or Compact parts: not advised"
            return adv
        nm = nm or (0, 0, [])
        nm = (nm[0] + c_nulls, nm[1] + c_rows, nm[2])
        adv.nulls = nm[0]
        null_bytes = _stream_stored(dataset, table, col["name"], (".null",))
        nested = _stream_stored(dataset, table, col["name"], ("", ".size"))
    keep_nulls = nullable and bool(adv.nulls)
    null_proj = None
    if keep_nulls:
        # the nested stream holds the type's default (0) at NULL rows, which every narrower type
        # holds: Nullable(narrower) is the nested stream re-encoded plus the null map as it is.
        # A codec chain applies to the null map too, with its generic codecs only: every null
        # map block (read above) is projected with them beside the nested stream.
        null_proj = (null_map_projector(nm[2], granule), null_bytes) if codecs else None
        if log_engine:      # made anew: the null map is written again, a block per new INSERT block
            null_proj = (_log_null_projector(nm[2]), null_bytes)
    elif nullable and log_engine:
        # a String's values re-laid by _advise_log_strings
        nested = 0 if kind in ("string", "fixedstring") else _log_relaid(dataset, table, col["name"], chain,
                                                                          _layout(inner)[1])
        pre.append(Candidate(inner, chain, f"no NULL in any of the {nm[1]:,} rows (every null map block read): "
                                           f"without Nullable the null map file ({null_bytes:,} bytes) is gone",
                             projected_bytes=nested, ci95=(nested, nested)))
    elif nullable:
        pre.append(Candidate(inner, chain, f"no NULL in any of the {nm[1]:,} rows (every null map block read): "
                                           f"without Nullable the null map stream ({null_bytes:,} bytes) is gone",
                             projected_bytes=nested, ci95=(nested, nested)))
    try:
        if kind in ("string", "fixedstring") and log_engine:
            cands = _advise_log_strings(adv, dataset, table, col["name"], inner, chain, codecs,
                                        b"".join(nm[2]) if nullable else None, keep_nulls, pre, null_proj,
                                        null_bytes if nullable else 0)
        elif kind in ("string", "fixedstring"):
            cands = _advise_strings(adv, dataset, table, col["name"], inner, chain, default, granule, fraction, seed,
                                    codecs, null_dirs if keep_nulls else None, null_proj,
                                    null_bytes if keep_nulls else 0, nullable, pre)
        else:
            cands = _advise_fixed(adv, dataset, table, col["name"], inner, kind, chain, default, granule, fraction,
                                  seed, codecs, null_proj if codecs else None, compact_ok=True,
                                  generic_only=log_engine and nullable, nullable=nullable, compact_nulls=keep_nulls,
                                  pre=pre)
    except _NotAdvised as e:
        adv.not_advised = str(e)
        return adv
    if adv.not_advised:
        return adv
    adv.current_bytes += null_bytes
    if adv.current_projected_bytes:
        adv.current_projected_bytes += null_bytes
    cands = pre + cands
    if keep_nulls:
        for c in cands:
            if c.type.startswith("LowCardinality("):        # its dictionary holds NULL: no null map
                continue
            c.type = f"Nullable({c.type})"
            nb = null_proj[0](c.codec) if log_engine else null_bytes
            c.projected_bytes += nb
            c.ci95 = (c.ci95[0] + nb, c.ci95[1] + nb)
            c.reason += (f"; {adv.nulls:,} of {nm[1]:,} rows are NULL: Nullable kept, its null map stream "
                         f"({null_bytes:,} bytes) as it is")
        for c in adv.codec_candidates:        # their bytes hold the null map with the chain's generic codecs
            if c.type.startswith("LowCardinality("):
                continue
            c.type = f"Nullable({c.type})"
            c.reason += (f"; {adv.nulls:,} of {nm[1]:,} rows are NULL: Nullable kept, its null map stream "
                         f"({null_bytes:,} bytes now) written with {_generic(c.codec)} (a null map takes the "
                         f"chain's generic codecs only), projected from every block")
    if adv.codec_candidates and pre:          # chains found on the nested type: they drop Nullable too
        for c in adv.codec_candidates:
            c.reason += f"; {pre[0].reason}"
    _compact_warnings(adv, table, col["name"], nullable, cands + adv.codec_candidates)
    # Nullable -> a type without NULL: ClickHouse 25.11+ refuses it without a DEFAULT (BAD_ARGUMENTS
    # "Cannot convert column ... from nullable type ... Please specify `DEFAULT` expression", found by
    # running the advice through chdb 4.4.0 / 26.9), even when the column holds no NULL
    dflt = ("" if not nullable or keep_nulls else " DEFAULT ''" if kind in ("string", "fixedstring")
            else " DEFAULT 0")
    _set_ddls(adv, table, col, chain, cands + adv.codec_candidates, log_engine, dflt)
    adv.candidates = sorted(cands, key=lambda c: c.projected_bytes)
    adv.codec_candidates.sort(key=lambda c: c.projected_bytes)
    return adv


def _set_ddls(adv: ColumnAdvice, table: dict, col: dict, chain: str, cands: list, log_engine: bool,
              dflt: str) -> None:
    """Each candidate's saving and DDL (MODIFY COLUMN; a key column or a Log table: made anew)."""
    db, name, ctype = table["database"], table["table"], adv.type
    key_column = col["name"] in key_columns(table)
    for c in cands:
        c.saving_bytes = adv.current_bytes - c.projected_bytes
        codec_sql = f" {col['codec']}" if (col.get("codec") or "").strip() else ""
        if c.codec != chain:
            codec_sql = f" CODEC({c.codec})"
        codec_sql = dflt + codec_sql
        if log_engine:
            c.ddl = (f"-- {table.get('engine')} takes no MODIFY COLUMN (NOT_IMPLEMENTED): create the table anew "
                     f"with `{col['name']}` {c.type}{codec_sql} and INSERT ... SELECT * FROM the table SETTINGS "
                     f"max_threads = 1 (the rows kept in their order, read in blocks of max_block_size and "
                     f"written again squashed into blocks of min_insert_block_size_rows or more, as projected; "
                     f"parallel reads of a Log table's marks may reorder them)")
        elif key_column:
            c.ddl = (f"-- `{col['name']}` is in the table's key: the engine refuses MODIFY COLUMN on it "
                     f"(ALTER_OF_COLUMN_IS_FORBIDDEN); create the table anew with `{col['name']}` "
                     f"{c.type}{codec_sql} and INSERT ... SELECT")
        else:
            c.ddl = f"ALTER TABLE `{db}`.`{name}` MODIFY COLUMN `{col['name']}` {c.type}{codec_sql};"
            if c.type == ctype:
                # the same type with another codec is a metadata change: parts keep their codec until
                # merged (found by running the advice through chdb 4.4.0: the column's bytes unchanged)
                c.ddl += f" OPTIMIZE TABLE `{db}`.`{name}` FINAL;"


class _NotAdvised(Exception):
    pass


#: MergeTreeSettings.cpp: a part whose uncompressed bytes are fewer is written Compact
MIN_BYTES_FOR_WIDE_PART = 10485760


def _setting(table: dict, name: str, default: int) -> int:
    try:
        return int((table.get("settings") or {}).get(name, default))
    except (TypeError, ValueError):
        return default


def _new_bytes_per_row(adv: ColumnAdvice, c: Candidate, nullable: bool) -> float | None:
    """Uncompressed bytes a row of the column takes as ``c.type`` (what the engine sums to
    choose a part's format), or None when not known."""
    t = c.type
    if t.startswith("Nullable("):
        inner = Candidate(t[len("Nullable("):-1], c.codec, "")
        got = _new_bytes_per_row(adv, inner, nullable)
        return None if got is None else got + 1.0          # the null map's byte a row
    lay = _layout(t) if _kind(t) not in (None, "string", "fixedstring") or _base_type(t) == "DateTime" else None
    if lay is not None:
        return float(lay[1])
    if _base_type(t) == "FixedString":
        return float(_args(t)[0])
    if t == "String" and adv.length_mean is not None:
        return adv.length_mean + 8.0
    if t.startswith("LowCardinality") and adv.length_mean is not None and adv.rows:
        d = adv.distinct_sampled or 1
        return (1 if d < 256 else 2 if d < 65536 else 4) + d * (adv.length_mean + 1) / adv.rows
    return None


def _compact_warnings(adv: ColumnAdvice, table: dict, column: str, nullable: bool, cands: list) -> None:
    """A narrower column can take a part under ``min_bytes_for_wide_part``: the engine then
    writes it Compact (MergeTreeData::choosePartFormat: bytes_uncompressed < min_bytes_for_wide_part),
    one data.bin for every column, when it is next written (a merge, or INSERT ... SELECT into
    a table made anew).  Said per candidate, with the parts; and the table's Compact parts,
    whose columns are not advised."""
    limit = _setting(table, "min_bytes_for_wide_part", MIN_BYTES_FOR_WIDE_PART)
    parts = [p for p in table.get("parts") or [] if p.get("state") == "active"]
    compact = [p["name"] for p in parts if p.get("part_type") == "Compact"]
    if compact and adv.compact_rows:
        adv.notes.append(f"{len(compact):,} of the table's {len(parts):,} active parts are Compact "
                         f"({', '.join(compact[:3])}{', ...' if len(compact) > 3 else ''}): this column's "
                         f"blocks in their data.bin ({adv.compact_rows:,} rows, one block a granule) are counted "
                         f"and projected from every value")
    elif compact:
        adv.notes.append(f"{len(compact):,} of the table's {len(parts):,} active parts are Compact "
                         f"({', '.join(compact[:3])}{', ...' if len(compact) > 3 else ''}): their columns "
                         f"are in one data.bin and not counted or projected here (only fixed-width columns "
                         f"that are not Nullable are)")
    for c in cands:
        per_row = _new_bytes_per_row(adv, c, nullable)
        if per_row is None:
            continue
        hit = []
        for p in parts:
            total = int(p.get("data_uncompressed_bytes") or 0)
            if p.get("part_type") != "Wide" or total < limit:
                continue
            old = sum(int(x.get("uncompressed_bytes") or 0) for x in p.get("columns") or [] if x.get("name") == column)
            new = total - old + per_row * int(p.get("rows") or 0)
            if new < limit:
                hit.append((p["name"], int(new)))
        if hit:
            c.warning = (f"{len(hit)} part{'s' if len(hit) > 1 else ''} would fall under min_bytes_for_wide_part "
                         f"({limit:,} bytes uncompressed) and be written Compact when next merged or made anew: "
                         + ", ".join(f"{n} ({b:,} bytes)" for n, b in hit[:3]) + (", ..." if len(hit) > 3 else "")
                         + " (set min_bytes_for_wide_part lower to keep them Wide)")


def _sampled_runs(adv: ColumnAdvice, runs: list[_Run], fraction, seed) -> np.ndarray:
    adv.runs = len(runs)
    pick = _pick(len(runs), fraction, seed)
    adv.sampled_runs = len(pick)
    return pick


def _generic(chain: str) -> str:
    from .chstrings import generic_chain
    return generic_chain(chain)


@dataclass
class _CompactPiece:
    """One Compact part's blocks of a fixed-width column: one block per granule
    (MergeTreeDataPartWriterCompact::writeDataBlock flushes the column's stream after each
    granule: ``prev_stream->hashing_buf.next()``), read whole."""
    entry: object
    blocks: list[int]
    granule_rows: list[int]
    stored: int
    raw: bytes = b""
    new_rows: list[int] | None = None      # a Log table made anew: its INSERT ... SELECT blocks
    nullable: bool = False                 # a Nullable column: each granule's null map before its values
    nulls: bytes = b""                     # (then) the null maps of every granule, one byte a row


def _compact_pieces(dataset, table: dict, column: str, width: int,
                    nullable: bool = False) -> tuple[list[_CompactPiece], list[str]]:
    """The column's blocks in the table's active Compact parts (data.bin), each part's
    granule rows from its marks; (pieces, notes on parts whose blocks are not one a granule).
    ``nullable``: a granule is its null map then its values, in one block when the null map's
    chain (the generic codecs only) is the column's (the Compact writer shares a stream between
    substreams of one codec), else in two blocks (null map, values)."""
    by_entry: dict[int, tuple[object, list[int]]] = {}
    for e, i in column_blocks(dataset, table["database"], table["table"], column):
        sec = e.sections.get("clickhouse", {})
        if e.role == "part_column_data" and sec.get("part_type") == "Compact":
            by_entry.setdefault(id(e), (e, []))[1].append(i)
    out, notes = [], []
    for e, idx in by_entry.values():
        idx.sort()
        cd = (e.detail.get("clickhouse") or {}).get("compact")
        rows = [int(r) for r in cd.marks.rows if int(r)] if cd is not None and cd.marks is not None and \
            cd.marks.rows is not None else None
        logical = [int(e.units["logical"][i]) for i in idx]
        if nullable and rows is not None:
            one = len(rows) == len(idx) and all(lg == r * (1 + width) for lg, r in zip(logical, rows))
            two = len(idx) == 2 * len(rows) and all(logical[2 * k] == r and logical[2 * k + 1] == r * width
                                                    for k, r in enumerate(rows))
            if one or two:
                out.append(_CompactPiece(e, idx, rows, int(sum(int(e.units["stored"][i]) for i in idx)),
                                         nullable=True))
                continue
            rows = None
        if rows is None or len(rows) != len(idx) or any(lg != r * width for lg, r in zip(logical, rows)):
            notes.append(f"Compact part {e.sections['clickhouse'].get('part')}: its blocks of this column are not "
                         f"one a granule (not counted)")
            continue
        out.append(_CompactPiece(e, idx, rows, int(sum(int(e.units["stored"][i]) for i in idx))))
    return out, notes


#: how many files' largest blocks are re-encoded to find the ZSTD level a Log table was written with
ZSTD_LEVEL_BLOCKS = 4


def _zstd_level_of(dataset, table: dict, column: str, named: str, entry=None) -> str:
    """A ZSTD block's header does not hold its level (CompressionCodecZSTD writes none): the
    level that re-encodes the column's largest block to its stored size (1..9), else ``named``.
    A Log table without CODEC takes the server's default compression (chdb 4.4.0 writes level 3
    there while its MergeTree parts name LZ4)."""
    # the server's default is the same for every column without CODEC: the table's largest block of
    # such a column decides (a small block may take the same size at several levels)
    plain = {escape_for_file_name(c["name"]) for c in table.get("columns") or [] if not (c.get("codec") or "").strip()}
    plain.add(escape_for_file_name(column))
    blocks = [(e, int(i)) for e in table_files(dataset, table["database"], table["table"]) if e.role == "table_data"
              and str(e.sections.get("clickhouse", {}).get("stream", "")).split(".")[0] in plain
              and "ZSTD" in str(e.sections.get("clickhouse", {}).get("codecs", "ZSTD"))
              for i in range(len(e.units))] if entry is None else [(entry, i) for i in range(len(entry.units))]
    if not blocks:
        return named
    # the largest block of each file, largest first: a block may take the same size at several
    # levels (random bytes), so the levels that fit each of them are intersected
    best: dict = {}
    for e, i in blocks:
        if id(e) not in best or int(e.units["logical"][i]) > int(e.units["logical"][best[id(e)][1]]):
            best[id(e)] = (e, i)
    levels = [1, 3, 2, 4, 5, 6, 7, 8, 9]
    for e, i in sorted(best.values(), key=lambda b: -int(b[0].units["logical"][b[1]]))[:ZSTD_LEVEL_BLOCKS]:
        try:
            raw = payloads.unit_payload(e, i, max_output=int(e.units["logical"][i]))
        except payloads.PayloadError:
            continue
        want = int(e.units["stored"][i])
        fit = [lv for lv in levels if CH_CHECKSUM + encoded_size(raw, f"ZSTD({lv})") == want]
        if fit:
            levels = fit
        if len(levels) == 1:
            break
    return f"ZSTD({levels[0]})" if len(levels) < 9 else named


def _log_pieces(dataset, table: dict, column: str, width: int) -> tuple[list[_CompactPiece], list[str]]:
    """A Log / TinyLog column's main stream ``<column>.bin``, read whole: LogSink::writeData writes
    each inserted block through a CompressedWriteBuffer of max_compress_block_size and calls
    ``next()`` after it (StorageLog.cpp), so a block under 1 MiB ends an insert; the inserts'
    rows are the 'granules' it is re-cut by (1 MiB blocks within each).  Made anew (the advice:
    MODIFY COLUMN is NOT_IMPLEMENTED for Log engines) the rows come back in the blocks
    _new_insert_rows gives."""
    stem = escape_for_file_name(column)
    idx, entry = [], None
    for e, i in column_blocks(dataset, table["database"], table["table"], column):
        if e.role == "table_data" and e.sections.get("clickhouse", {}).get("stream") == stem:
            entry = e
            idx.append(i)
    if entry is None:
        return [], []
    idx.sort()
    chunks, acc = [], 0
    for i in idx:
        lg = int(entry.units["logical"][i])
        acc += lg
        if lg != CH_MAX_COMPRESS_BLOCK:
            chunks.append(acc // width)
            acc = 0
    if acc:
        chunks.append(acc // width)
    new = _new_insert_rows(sum(chunks))
    return [_CompactPiece(entry, idx, chunks, int(sum(int(entry.units["stored"][i]) for i in idx)),
                          new_rows=new)], []


def _squashed(read: list[int]) -> list[int]:
    """The blocks an INSERT ... SELECT writes from blocks of ``read`` rows: the squashing of the
    insert pipeline (Squashing::add, src/Interpreters/Squashing.cpp) adds whole read blocks until
    they hold min_insert_block_size_rows, then emits them; the rest at the end.  (Its other
    threshold, min_insert_block_size_bytes = 256 MiB of the rows in memory, is not modelled: a
    table of over ~240 bytes a row would be squashed sooner.)"""
    out, acc = [], 0
    for r in read:
        acc += r
        if acc >= MIN_INSERT_BLOCK_SIZE_ROWS:
            out.append(acc)
            acc = 0
    return out + ([acc] if acc else [])


def _new_insert_rows(total: int) -> list[int]:
    """The blocks a Log / TinyLog table made anew with INSERT ... SELECT (max_threads = 1) holds: its
    rows are read in blocks of max_block_size, across the inserts' marks (one source), and
    squashed, so blocks of 17 * 65,409 = 1,111,953 rows and the rest (found with chdb 4.4.0: a
    1.3-million-row table written in one block or in five came back so; a table under
    min_insert_block_size_rows in one block)."""
    full, last = divmod(total, MAX_BLOCK_SIZE)
    return _squashed([MAX_BLOCK_SIZE] * full + ([last] if last else []))


def _log_inserts(dataset, table: dict, column: str, substream: str = "") -> tuple[list[bytes], int]:
    """A Log / TinyLog column's ``<column><substream>.bin`` decoded, one piece per INSERT (a block
    under max_compress_block_size ends an insert: LogSink::writeData calls ``next()`` after each
    block, StorageLog.cpp), and its stored bytes."""
    stem = escape_for_file_name(column) + substream
    got = [(e, i) for e, i in column_blocks(dataset, table["database"], table["table"], column)
           if e.role == "table_data" and e.sections.get("clickhouse", {}).get("stream") == stem]
    got.sort(key=lambda x: x[1])
    pieces, cur, stored = [], [], 0
    for e, i in got:
        lg = int(e.units["logical"][i])
        stored += int(e.units["stored"][i])
        cur.append(payloads.unit_payload(e, i, max_output=lg))
        if lg != CH_MAX_COMPRESS_BLOCK:
            pieces.append(b"".join(cur))
            cur = []
    if cur:
        pieces.append(b"".join(cur))
    return pieces, stored


def project_log(pieces: list[bytes], chain: str, type_size: int | None = None, value_type: str | None = None) -> int:
    """Stored bytes of a Log stream written one piece per INSERT block: each through a
    CompressedWriteBuffer of max_compress_block_size (1 MiB blocks) flushed at its end, framed."""
    out = 0
    for g in pieces:
        for a in range(0, len(g), CH_MAX_COMPRESS_BLOCK):
            out += CH_CHECKSUM + encoded_size(g[a:a + CH_MAX_COMPRESS_BLOCK], chain, type_size=type_size,
                                              value_type=value_type)
    return out


def _stripe_column(dataset, table: dict, column: str):
    """A StripeLog column's pieces of data.bin, one per Native block (index.mrk: each column's mark
    starts a compressed block, NativeWriter::write calls ``next()`` before each column; a block's
    own header, its column and row counts, is written before that: the first block of an INSERT's
    alone in the compressed block before its first mark, a later block's after the previous block's
    last column, in its last compressed block): (data.bin entry, [(rows, stored bytes, decoded
    bytes: the column's name, type and values, and for the last column the next header)], the
    column is the blocks' last, their column count), or a reason."""
    from dbxray.parsers.clickhouse.blocks import read_stream
    from dbxray.parsers.clickhouse.nativeindex import NativeIndexError, read_native_index
    files = table_files(dataset, table["database"], table["table"])
    data = next((e for e in files if e.role == "table_data" and os.path.basename(e.abspath) == "data.bin"), None)
    index = next((e for e in files if os.path.basename(e.abspath) == "index.mrk"), None)
    if data is None or index is None or data.units is None:
        raise _NotAdvised("StripeLog table without data.bin and index.mrk blocks: not advised")
    try:
        with open(index.abspath, "rb") as f:
            blocks = read_native_index(read_stream(f.read(), 256 << 20, verify=False))
    except (OSError, NativeIndexError, Exception) as e:      # noqa: BLE001 -- a damaged index
        raise _NotAdvised(f"its index.mrk could not be read ({e}): not advised") from None
    offs = data.units["offset"].astype(np.int64)
    at = {int(o): i for i, o in enumerate(offs.tolist())}
    firsts = [b.columns[0].offset_in_compressed_file for b in blocks if b.columns]
    # the next blocks' headers alone in a compressed block (an INSERT's first block): its logical
    # size is the header's (varint columns, varint rows); else the header ends the last column's
    headers = {at[f] - 1 for f, b in zip(firsts[1:], [b for b in blocks if b.columns][1:])
               if f in at and at[f] > 0 and int(data.units["logical"][at[f] - 1]) == len(_block_header(b))}
    out = []
    last = False
    ncols = 0
    for k, b in enumerate(blocks):
        names = [c.name for c in b.columns]
        if column not in names:
            continue
        j = names.index(column)
        last, ncols = j == len(names) - 1, len(names)
        start = b.columns[j].offset_in_compressed_file
        end = b.columns[j + 1].offset_in_compressed_file if j + 1 < len(b.columns) else \
            firsts[k + 1] if k + 1 < len(firsts) else 1 << 62
        idx = [i for i in range(at.get(start, len(offs)), len(offs)) if offs[i] < end and i not in headers]
        if start not in at or not idx:
            raise _NotAdvised(f"index.mrk marks {column} at {start}, not a block of data.bin: not advised")
        raw = b"".join(payloads.unit_payload(data, i, max_output=int(data.units["logical"][i])) for i in idx)
        out.append((b.num_rows, int(sum(int(data.units["stored"][i]) for i in idx)), raw))
    return data, out, last, ncols


def _block_header(b=None, columns: int = 0, rows: int = 0) -> bytes:
    """A Native block's header as NativeWriter::write writes it: varint columns, varint rows."""
    from . import chstrings as S
    if b is not None:
        columns, rows = len(b.columns), b.num_rows
    return S._varint(columns) + S._varint(rows)


def _native_header(name: str, type_name: str) -> bytes:
    """A column's name and type as NativeWriter writes them before its values (writeStringBinary)."""
    from . import chstrings as S
    return b"".join(S._varint(len(x)) + x for x in (name.encode(), type_name.encode()))


def _stripe_current(adv: ColumnAdvice, dataset, table: dict, col: dict, data, pieces) -> str:
    """A StripeLog column as it is: its codec (data.bin's, a ZSTD level read from its blocks), the
    stored bytes, rows and blocks of its ``pieces`` ((rows, stored, raw) per Native block, every
    block read) and their re-encoding with that codec; returns the codec."""
    chain = next(iter(data.sections.get("clickhouse", {}).get("codecs") or {"LZ4": 1}))
    if chain.startswith("ZSTD"):
        chain = _zstd_level_of(dataset, table, col["name"], chain, data)
    adv.current_codec = chain
    adv.current_bytes = sum(st for _, st, _ in pieces)
    adv.rows = adv.sampled_rows = sum(r for r, _, _ in pieces)
    adv.runs = adv.sampled_runs = len(pieces)
    adv.current_projected_bytes = project_log([raw for _, _, raw in pieces], chain)
    return chain


def _advise_stripe(adv: ColumnAdvice, dataset, table: dict, col: dict) -> None:
    """A StripeLog table's fixed-width (and Nullable fixed-width), String and FixedString columns:
    every Native block of the column read (its name and type, then a Nullable's null map, then its
    values: fixed width, or a String's varint length + bytes), the narrower types projected as the
    table made anew writes them (INSERT ... SELECT: one Native block per min_insert_block_size_rows
    rows, the column's name, new type, null map and values after a ``next()``, cut at
    max_compress_block_size) with the data.bin's codec: StripeLogSink writes every column with the
    server's default codec and takes no CODEC (StorageStripeLog.cpp: getDefaultCodec; chdb 4.4.0
    wrote CODEC(LZ4) and CODEC(Delta, ZSTD(1)) columns as ZSTD), so no codec chain is advised."""
    from . import chstrings as S
    ctype = adv.type
    nullable = _base_type(ctype) == "Nullable"
    inner = ctype[ctype.index("(") + 1:ctype.rindex(")")].strip() if nullable else ctype
    kind = _kind(inner)
    if _base_type(ctype) in ("LowCardinality", "Array"):
        return _advise_stripe_composite(adv, dataset, table, col)
    if kind is None:
        raise _NotAdvised(f"StripeLog table: its fixed-width, String and FixedString columns and Nullable of them "
                          f"are advised ({ctype}: not advised)")
    data, pieces, last_col, ncols = _stripe_column(dataset, table, col["name"])
    if not pieces:
        raise _NotAdvised("no block of this column in data.bin: not advised")
    head = _native_header(col["name"], ctype)
    n = int(_args(inner)[0]) if kind == "fixedstring" else 0
    width = n or (8 if kind == "string" else _layout(inner)[1])
    nulls, vals, sizes, chars = [], [], [], []
    try:
        for rows, _, raw in pieces:
            if not raw.startswith(head):
                raise _NotAdvised("a Native block of this column does not start with its name and type: not advised")
            pos = len(head)
            if nullable:
                nulls.append(raw[pos:pos + rows])
                pos += rows
            if kind == "string":
                sz, ch = S.parse_inline(raw, count=rows, start=pos)
                sizes.append(sz)
                chars.append(ch)
            else:
                if len(raw) < pos + rows * width:
                    raise _NotAdvised("a Native block of this column holds fewer values than its rows: not advised")
                vals.append(raw[pos:pos + rows * width])
    except S.StringReadError as e:
        raise _NotAdvised(f"its Strings could not be read ({e}): not advised") from None
    chain = _stripe_current(adv, dataset, table, col, data, pieces)
    nm_all = b"".join(nulls)
    if nullable:
        adv.nulls = int(np.count_nonzero(np.frombuffer(nm_all, dtype=np.uint8)))
    keep = nullable and bool(adv.nulls)
    # made anew: the stored Native blocks read as they are and squashed (found with chdb 4.4.0: a
    # table of five 300,000-row blocks came back in blocks of 1,200,000 and 300,000 rows)
    new = _squashed([r for r, _, _ in pieces])
    cands: list = []          # (candidate, rows -> the column's values as the new type, keeps the null map)
    lcs: set = set()          # LowCardinality candidates: NULL in their dictionary, no null map
    if kind in ("string", "fixedstring"):
        if kind == "fixedstring":
            sz, ch = S.fixed_to_string(b"".join(vals), n)
        else:
            sz, ch = np.concatenate(sizes), b"".join(chars)
        ends = np.cumsum(sz, dtype=np.int64)
        starts = ends - sz.astype(np.int64)
        vsz = sz[np.frombuffer(nm_all, dtype=np.uint8) == 0] if keep else sz      # the values, not NULL rows'
        if len(vsz):
            adv.length_min, adv.length_max, adv.length_mean = int(vsz.min()), int(vsz.max()), float(vsz.mean())

        def part(a: int, b: int) -> bytes:
            return ch[int(starts[a]):int(ends[b - 1])] if b > a else b""
        if nullable and not keep:     # no NULL: the type without Nullable, its values as they are
            cands.append((Candidate(inner, chain, f"no NULL in any of the {adv.rows:,} rows: without Nullable the "
                                                  f"null map is gone"),
                          (lambda a, b: S.pad_fixed(sz[a:b], part(a, b), n)) if n else
                          (lambda a, b: S.inline_bytes(sz[a:b], part(a, b)) if b > a else b"")))
        if (kind == "string" and adv.length_min == adv.length_max and 0 < (adv.length_min or 0) <= 1024
                and int(sz.max()) <= adv.length_min):
            w = adv.length_min
            cands.append((Candidate(f"FixedString({w})", chain, f"every value is {w} bytes long (lossless: no length "
                                                                 f"per row)"
                                    + (f"; a NULL row's nested value is {w} zero bytes" if keep else "")),
                          lambda a, b, w=w: S.pad_fixed(sz[a:b], part(a, b), w)))
        if kind == "fixedstring" and adv.length_min is not None and adv.length_min < n:
            cands.append((Candidate("String", chain, f"the values' trailing zero bytes are padding: String keeps "
                                                     f"{adv.length_min}..{adv.length_max} bytes a value and its length"),
                          lambda a, b: S.inline_bytes(sz[a:b], part(a, b)) if b > a else b""))
        _, keys = S.factorize(sz, ch, max(1, int(LC_MOST_DISTINCT * len(sz))))
        if keys is not None and len(sz):
            adv.distinct_sampled = len(keys)
            t = f"Nullable({inner})" if keep else inner
            c = Candidate(f"LowCardinality({t})", chain,
                          f"{len(keys):,} distinct values in {len(sz):,} rows: each Native block of the table made anew "
                          f"writes its own keys and a 1-8 byte position per row (NativeWriter: "
                          f"low_cardinality_max_dictionary_size = 0; lossless)"
                          + ("; NULL is the dictionary's position 0: no null map" if keep else ""))
            lcs.add(id(c))
            cands.append((c, lambda a, b: S.LC_KEYS_VERSION.to_bytes(8, "little")
                          + lc_block(sz[a:b], part(a, b), nm_all[a:b] if keep else None, n)))
    else:
        dt = _layout(inner)[0]
        allb = b"".join(vals)
        allv = _wide_to_int64(allb, width) if dt is None else np.frombuffer(allb, dtype=dt)
        if allv is None:
            raise _NotAdvised(f"{inner} values past Int64: not advised")
        got: list = []
        src = "every value"
        _type_candidates(adv, table, col["name"], kind, inner, allv, src, True, chain, chain, width, got)
        _lowcardinality_note(adv, kind, inner, allv)
        if nullable and not keep:
            got.insert(0, (Candidate(inner, chain, f"no NULL in any of the {adv.rows:,} rows: without Nullable the "
                                                   f"null map is gone"), lambda v: _as_bytes(v, inner)))
        cands = [(c, lambda a, b, conv=conv: conv(allv[a:b])) for c, conv in got]
    out = []
    for c, lay in cands:
        c.codec = chain                       # StripeLog writes every column with data.bin's codec
        with_nulls = keep and id(c) not in lcs
        if with_nulls:
            c.type = f"Nullable({c.type})"
        pos, blocks = 0, []
        for r in new:
            blocks.append(_native_header(col["name"], c.type) + (nm_all[pos:pos + r] if with_nulls else b"")
                          + lay(pos, pos + r))
            if last_col and len(blocks) < len(new):     # the next block's header after the last column
                blocks[-1] += _block_header(columns=ncols, rows=new[len(blocks)])
            pos += r
        c.projected_bytes = project_log(blocks, chain)
        c.ci95 = (c.projected_bytes, c.projected_bytes)
        c.saving_bytes = adv.current_bytes - c.projected_bytes
        dflt = " DEFAULT ''" if nullable and not keep and kind in ("string", "fixedstring") else \
            " DEFAULT 0" if nullable and not keep else ""
        c.ddl = (f"-- StripeLog takes no MODIFY COLUMN: create the table anew with `{col['name']}` {c.type}{dflt} "
                 f"and INSERT ... SELECT * FROM the table SETTINGS max_threads = 1 (its Native blocks read as "
                 f"they are and written again squashed into blocks of min_insert_block_size_rows or more, as "
                 f"projected)")
        if kind in ("string", "fixedstring") and c.projected_bytes >= adv.current_bytes:
            adv.notes.append(f"{c.type} projected {c.projected_bytes:,} bytes, not smaller than now "
                             f"({adv.current_bytes:,})")
            continue
        out.append(c)
    adv.candidates = sorted(out, key=lambda c: c.projected_bytes)
    adv.notes.append("StripeLog writes every column with the server's default codec (its CODEC is not applied): "
                     "no codec chain is advised")


def _split_rows(raw: bytes, rows: list[int], width: int) -> list[bytes]:
    out, pos = [], 0
    for r in rows:
        out.append(raw[pos:pos + r * width])
        pos += r * width
    return out


def _log_null_projector(parts: list[bytes]):
    """A Log / TinyLog null map file as the table made anew writes it: one byte a row, a block per
    new INSERT block (cut at 1 MiB), with the column's chain (LogSink codes every file of a column
    with it; only generic chains are advised on Log Nullable columns)."""
    raw = b"".join(parts)
    new = _new_insert_rows(len(raw))
    return lambda ch: project_log(_split_rows(raw, new, 1), ch)


def _log_relaid(dataset, table: dict, column: str, chain: str, width: int) -> int:
    """A Log / TinyLog column's ``<column>.bin`` of ``width``-byte values as the table made anew
    writes it (a block per new INSERT block), with ``chain`` (a generic one)."""
    pieces, _ = _log_inserts(dataset, table, column)
    raw = b"".join(pieces)
    return project_log(_split_rows(raw, _new_insert_rows(len(raw) // width), width), chain)


def _advise_log_strings(adv: ColumnAdvice, dataset, table: dict, column: str, ctype: str, chain: str,
                        codecs: bool, nulls: bytes | None = None, keep: bool = False, pre: list | None = None,
                        null_proj=None, null_bytes: int = 0) -> list[Candidate]:
    """String and FixedString(N) columns of Log and TinyLog tables, every block read: a String's
    sizes are inline in ``<column>.bin`` (varint length + bytes a value), a FixedString's values N
    bytes each.  Candidates (FixedString(N) for Strings all N long, String for padded
    FixedStrings, LowCardinality for few distinct values) and codec chains are projected as the
    table made anew writes them (the DDL: INSERT ... SELECT, the rows in blocks of
    min_insert_block_size_rows, each cut at 1 MiB).  LowCardinality: LogSink::writeData
    (StorageLog.cpp) serializes with default SerializeBinaryBulkSettings,
    low_cardinality_max_dictionary_size = 0, so ``<column>.dict.bin`` holds only the keys version
    (serializeBinaryBulkStatePrefix, flushed with the first block) and each block in ``<column>.bin``
    its own keys (lc_block; NeedUpdateDictionary on the INSERT's first block only), both files with
    the column's chain.  A Nullable column (``nulls``: its null map file's bytes): ``keep`` (it holds
    NULLs) -> Nullable(FixedString(N)) when its values are N bytes long (a NULL row's nested value
    padded), LowCardinality(Nullable(...)) (NULL at position 0, no null map file), chains with the
    null map written again (``null_proj``); without NULLs ``pre`` (the type without Nullable) is its
    values re-laid, and every candidate drops the null map file (``null_bytes``)."""
    from . import chstrings as S
    fixed = _base_type(ctype) == "FixedString"
    n = int(_args(ctype)[0]) if fixed else 0
    try:
        inserts, adv.current_bytes = _log_inserts(dataset, table, column)
        if not inserts:
            raise _NotAdvised(f"no blocks of this column's file in the {table.get('engine')} table")
        parsed = [S.fixed_to_string(b, n) if fixed else S.parse_inline(b) for b in inserts]
    except (S.StringReadError, payloads.PayloadError) as e:
        raise _NotAdvised(f"its blocks could not be decoded: {e}") from None
    sizes = np.concatenate([p[0] for p in parsed])
    chars = b"".join(p[1] for p in parsed)
    if nulls is not None and len(nulls) != len(sizes):
        raise _NotAdvised(f"its null map file holds {len(nulls):,} rows, its values {len(sizes):,}: not advised")
    adv.rows = adv.sampled_rows = len(sizes)
    adv.runs = adv.sampled_runs = len(inserts)
    vals = sizes[np.frombuffer(nulls, dtype=np.uint8) == 0] if keep else sizes     # the values, not NULL rows'
    if len(vals):
        adv.length_min, adv.length_max, adv.length_mean = int(vals.min()), int(vals.max()), float(vals.mean())
    adv.current_projected_bytes = project_log(inserts, chain)
    ends = np.cumsum(sizes, dtype=np.int64)
    starts = ends - sizes.astype(np.int64)
    blocks = []
    r0 = 0
    for r in _new_insert_rows(len(sizes)):
        blocks.append((r0, r0 + r))
        r0 += r

    def lay(as_fixed: int) -> list[bytes]:          # the table made anew: one piece a new block
        out = []
        for a, b in blocks:
            v = chars[int(starts[a]):int(ends[b - 1])] if b > a else b""
            if as_fixed:
                out.append(S.pad_fixed(sizes[a:b], v, as_fixed))        # padded: trailing zero bytes back
            elif b > a:
                out.append(S.inline_bytes(sizes[a:b], v))
        return out

    def log_proj(pieces: list[bytes]):
        return lambda ch: project_log(pieces, ch)

    def lc_proj(ch: str, pieces=[]) -> int:         # noqa: B006 -- the blocks, made once
        if not pieces:
            pieces.extend(lc_block(sizes[a:b], chars[int(starts[a]):int(ends[b - 1])] if b > a else b"",
                                   nulls[a:b] if keep else None, n, update=k == 0) for k, (a, b) in enumerate(blocks))
        return project_log(pieces, ch) + project_log([S.LC_KEYS_VERSION.to_bytes(8, "little")], ch)
    for c in pre or []:         # Nullable without NULL -> its type: the values re-laid, no null map file
        c.projected_bytes = project_log(lay(n), chain)
        c.ci95 = (c.projected_bytes, c.projected_bytes)
    cands: list[tuple[Candidate, object]] = []
    which = "every"
    if (not fixed and adv.length_min == adv.length_max and 0 < (adv.length_min or 0) <= 1024
            and int(sizes.max()) <= adv.length_min):
        cands.append((Candidate(f"FixedString({adv.length_min})", chain,
                                f"{which} value is {adv.length_min} bytes long (lossless: no length per row)"
                                + (f"; a NULL row's nested value is {adv.length_min} zero bytes" if keep else "")),
                      log_proj(lay(adv.length_min))))
    if fixed and adv.length_min is not None and adv.length_min < n:
        cands.append((Candidate("String", chain, f"the values' trailing zero bytes are padding: String keeps "
                                                 f"{adv.length_min}..{adv.length_max} bytes a value and its length "
                                                 f"(the conversion drops trailing zero bytes)"), log_proj(lay(0))))
    codes, keys = S.factorize(sizes, chars, max(1, int(LC_MOST_DISTINCT * len(sizes))))
    if keys is not None and len(sizes):
        adv.distinct_sampled = len(keys)
        t = f"Nullable({ctype})" if keep else ctype
        cands.append((Candidate(f"LowCardinality({t})", chain,
                                f"{len(keys):,} distinct values in {len(sizes):,} rows: each block of the table made "
                                f"anew writes its own keys and a 1-8 byte position per row ({table.get('engine')} "
                                f"writes LowCardinality without a shared dictionary; lossless)"
                                + ("; NULL is the dictionary's position 0: no null map file" if keep else "")),
                      lc_proj))
    out = []
    for c, proj in cands:
        c.projected_bytes = proj(c.codec)
        c.ci95 = (c.projected_bytes, c.projected_bytes)
        # a candidate that drops the null map file is compared with the column's bytes with it
        now = adv.current_bytes + (null_bytes if nulls is not None and (not keep or proj is lc_proj) else 0)
        if c.projected_bytes < now:
            out.append((c, proj))
        else:
            adv.notes.append(f"{c.type} projected {c.projected_bytes:,} bytes, not smaller than now ({now:,})")
    if codecs:
        # the chains on the best type and on the column's own (every value is read: both are
        # cheap, and a chain on the own type can beat a LowCardinality one, as on the release
        # data dir's log_log.s: String CODEC(ZSTD(1)) 183 bytes, LowCardinality(String) 375)
        from . import codecadvice as K
        best = min(out, key=lambda cp: cp[0].projected_bytes, default=None)
        tries = [(best[0].type, best[1], best[0].projected_bytes, f" (the {best[0].type} suggestion with this codec)")
                 ] if best is not None else []
        tries.append((ctype, log_proj(lay(n)), adv.current_bytes, ""))
        # every other suggested type: its best chain (below)
        tries += [(c.type, p, c.projected_bytes, f" (the {c.type} suggestion with this codec)")
                  for c, p in out if best is not None and c is not best[0]]
        found_all = []
        for t, proj, beat, why in tries:
            lc = proj is lc_proj
            nm = null_proj[0] if keep and null_proj is not None and not lc else (lambda ch: 0)
            if nulls is not None and (not lc or not keep) and t == ctype:
                beat += null_bytes          # the column's bytes with its null map file
            elif keep and not lc:
                beat += nm(best[0].codec)
            for codec, est, ci in K.search_totals(lambda ch: (lambda b: (b, (b, b)))(proj(ch) + nm(ch)),
                                                  K.chains_for("lowcardinality" if lc else "string", t, None)):
                if est < beat:
                    found_all.append((est, codec, ci, t, why))
        others = {c.type for c, _ in out if best is not None and c is not best[0]}
        for est, codec, ci, t, why in sorted(found_all, key=lambda x: x[0]):
            if t in others:                 # its best chain only, whatever the KEEP below
                others.discard(t)
                _keep_chains(adv, [(codec, est, ci)], t, ctype, chain, True, est + 1, why)
            elif sum(1 for c in adv.codec_candidates if c.type not in {o.type for o, _ in out}
                     or c.type == (best[0].type if best else None)) < K.KEEP:
                _keep_chains(adv, [(codec, est, ci)], t, ctype, chain, True, est + 1, why)
    return [c for c, _ in out]


def project_granules_nullable(nulls: bytes, raw: bytes, t: str, chain: str, granule_rows: list[int]) -> int:
    """A Nullable column's granules in a Compact part: each granule's null map then its values,
    in one block when the chain is generic (the null map's chain is then the same stream's),
    else the null map with the chain's generic codecs in a block before the values'."""
    from .chstrings import generic_chain
    _, w, vt = _layout(t)
    vt_arg = None if vt.startswith("Float") else vt
    g = generic_chain(chain)
    out = pos = npos = 0
    for r in granule_rows:
        nm, vals = nulls[npos:npos + r], raw[pos:pos + r * w]
        npos += r
        pos += r * w
        if g == chain:
            out += project_log([nm + vals], chain)
        else:
            out += project_log([nm], g)
            for a in range(0, len(vals), CH_MAX_COMPRESS_BLOCK):
                out += CH_CHECKSUM + encoded_size(vals[a:a + CH_MAX_COMPRESS_BLOCK], chain, type_size=w,
                                                  value_type=vt_arg)
    return out


def project_granules(raw: bytes, t: str, chain: str, granule_rows: list[int]) -> int:
    """Stored bytes of fixed-width values of type ``t`` as a Compact part writes them: a block
    per granule (cut at max_compress_block_size, the stream's buffer), each framed."""
    _, w, vt = _layout(t)
    vt_arg = None if vt.startswith("Float") else vt
    out = pos = 0
    for r in granule_rows:
        g = raw[pos:pos + r * w]
        pos += r * w
        for a in range(0, len(g), CH_MAX_COMPRESS_BLOCK):
            out += CH_CHECKSUM + encoded_size(g[a:a + CH_MAX_COMPRESS_BLOCK], chain, type_size=w,
                                              value_type=vt_arg)
    return out


def _advise_fixed(adv: ColumnAdvice, dataset, table: dict, column: str, ctype: str, kind: str, chain: str,
                  default: str, granule: int, fraction, seed, codecs: bool = False,
                  null_proj=None, compact_ok: bool = True, generic_only: bool = False,
                  nullable: bool = False, compact_nulls: bool = False, pre: list | None = None) -> list[Candidate]:
    """Integers, floats, DateTime64 and Decimal: fixed-width values (``null_proj``: a Nullable
    column with NULLs, (the null map's bytes with a chain, its bytes now) for the codec chains).
    The Wide parts' runs are sampled; the Compact parts' blocks (``compact_ok``: not for
    Nullable, whose null map shares them) are read whole and projected exactly, added."""
    dt, width, _ = _layout(ctype)
    log_engine = str(table.get("engine", "")) in LOG_ENGINES
    if log_engine:
        runs, wide_rows, adv.current_bytes = [], 0, 0
        compact, cnotes = _log_pieces(dataset, table, column, width)
    else:
        runs, wide_rows, adv.current_bytes = _main_stream_runs(dataset, table, column, width, granule)
        compact, cnotes = _compact_pieces(dataset, table, column, width, nullable) if compact_ok else ([], [])
    adv.notes.extend(cnotes)
    if not runs and not compact:
        raise _NotAdvised("no blocks of this column in active Wide or Compact parts")
    pick = _sampled_runs(adv, runs, fraction, seed)
    every = len(pick) == len(runs)
    raws = []
    try:
        for j in pick:
            raws.append(_raw(runs[int(j)]))
        for cp in compact:
            cp.raw = b"".join(payloads.unit_payload(cp.entry, i, max_output=int(cp.entry.units["logical"][i]))
                              for i in cp.blocks)
            if cp.nullable:         # each granule: its null map, then its values
                nm, vals, pos = [], [], 0
                for r in cp.granule_rows:
                    nm.append(cp.raw[pos:pos + r])
                    vals.append(cp.raw[pos + r:pos + r + r * width])
                    pos += r + r * width
                cp.nulls, cp.raw = b"".join(nm), b"".join(vals)
    except Exception as e:      # noqa: BLE001 -- a block that does not decode: this column only
        raise _NotAdvised(f"its blocks could not be decoded: {e}") from None
    adv.rows = wide_rows + sum(sum(cp.granule_rows) for cp in compact)
    adv.current_bytes += sum(cp.stored for cp in compact)
    adv.compact_rows = 0 if log_engine else sum(sum(cp.granule_rows) for cp in compact)
    if dt is None:              # Decimal128/256: as Int64 when every value fits
        values = [_wide_to_int64(r, width) for r in raws]
        cvalues = [_wide_to_int64(cp.raw, width) for cp in compact]
        fits64 = all(v is not None for v in values + cvalues)
    else:
        values = [np.frombuffer(r, dtype=dt) for r in raws]
        cvalues = [np.frombuffer(cp.raw, dtype=dt) for cp in compact]
        fits64 = True
    adv.sampled_rows = int(sum(len(r) // width for r in raws)) + sum(sum(cp.granule_rows) for cp in compact)
    src = "every value" if every else "sampled values"
    cands: list[tuple[Candidate, object]] = []     # (candidate, values -> bytes of the new type)
    allv = np.concatenate(values + cvalues) if fits64 and (values or cvalues) else None
    if allv is not None and len(allv):
        _type_candidates(adv, table, column, kind, ctype, allv, src, every, chain, default, width, cands)
    per_cur = []
    per = {id(c): [] for c, _ in cands}
    for r, v, j in zip(raws, values, pick):
        run = runs[int(j)]
        if cands or pre:
            per_cur.append((run.rows, project_raw(r, ctype, chain, granule)))
        for c, conv in cands:
            per[id(c)].append((run.rows, project_raw(conv(v), c.type, c.codec, granule)))
    def exact(t: str, ch: str, conv, now: bool = False) -> int:      # Compact parts / Log files, every value
        return sum(project_granules_nullable(cp.nulls, conv(v) if conv else cp.raw, t, ch, cp.granule_rows)
                   if cp.nullable and (now or compact_nulls) else
                   project_granules(conv(v) if conv else cp.raw, t, ch,
                                    cp.granule_rows if now or cp.new_rows is None else cp.new_rows)
                   for cp, v in zip(compact, cvalues))

    for c in [] if log_engine else pre or []:   # Nullable without NULL -> its type: Compact granules' values alone
        x = exact(ctype, chain, None)
        c.projected_bytes, c.ci95 = c.projected_bytes + x, (c.ci95[0] + x, c.ci95[1] + x)

    adv.current_projected_bytes, _ = _estimate(per_cur, wide_rows, len(runs))
    if compact and (cands or pre or log_engine):
        adv.current_projected_bytes += exact(ctype, chain, None, now=True)
    for c, conv in cands:
        c.projected_bytes, c.ci95 = _estimate(per[id(c)], wide_rows, len(runs))
        if compact:
            x = exact(c.type, c.codec, conv)
            c.projected_bytes, c.ci95 = c.projected_bytes + x, (c.ci95[0] + x, c.ci95[1] + x)
    first = values[0] if values else cvalues[0] if cvalues else None
    if first is not None and len(first):
        _lowcardinality_note(adv, kind, ctype, first)
    if codecs and (raws or compact) and fits64:
        _codec_search_fixed(adv, kind, ctype, chain, granule, runs, pick, raws, values, cands, every, seed,
                            null_proj, wide_rows, exact, generic_only)
    return [c for c, _ in cands]


def _lowcardinality_note(adv: ColumnAdvice, kind: str, ctype: str, first: np.ndarray) -> None:
    """Why a fixed-width column of few distinct values gets no LowCardinality suggestion (the
    first LC_NOTE_ROWS values read decide: a sort of 8,192 values, about 1 ms a column).  Numbers:
    the engine refuses LowCardinality of any type but String, FixedString (and UUID since 24.x)
    unless ``allow_suspicious_low_cardinality_types`` is set (validateDataType,
    src/Interpreters/parseColumnsListForTableFunction.cpp: SUSPICIOUS_TYPE_FOR_LOW_CARDINALITY);
    DateTime64 and Decimal are no LowCardinality type at all (DataTypeLowCardinality.cpp: "supported
    only for numbers, strings, Date or DateTime", ILLEGAL_TYPE_OF_ARGUMENT)."""
    if kind in ("date", "datetime"):
        return
    first = first[:LC_NOTE_ROWS]
    d = len(np.unique(first))
    if d > LC_MOST_DISTINCT * len(first):
        return
    t = adv.type                    # LowCardinality(Nullable(T)) for a Nullable column
    head = f"{d:,} distinct values in the first {len(first):,} rows read, but "
    if kind in ("int", "float"):
        adv.notes.append(head + f"LowCardinality({t}) is not suggested: ClickHouse refuses LowCardinality of numbers "
                                f"(SUSPICIOUS_TYPE_FOR_LOW_CARDINALITY) unless allow_suspicious_low_cardinality_types "
                                f"= 1, as its positions and dictionary rarely beat a narrower type with a codec")
    else:
        adv.notes.append(head + f"LowCardinality({t}) does not exist: ClickHouse takes LowCardinality of numbers, "
                                f"strings, Date and DateTime only (ILLEGAL_TYPE_OF_ARGUMENT)")


def _same_chain(a: str, b: str) -> bool:
    norm = [re.sub(r"\s+", "", x).upper() for x in (a, b)]
    norm = [re.sub(r"\((\d+)\)", "", x) if x.startswith(("DELTA", "DOUBLEDELTA", "GORILLA")) else x for x in norm]
    return norm[0] == norm[1]


def _keep_chains(adv: ColumnAdvice, found: list[tuple], t: str, current_type: str, chain: str, lossless: bool,
                 beat: int, why: str, limit: int | None = None, speed=None) -> None:
    """The smallest chains of ``found`` on type ``t`` that beat ``beat`` bytes, at most ``limit``
    (KEEP); ``speed(codec)``: the MB/s its general codec compresses the column's bytes at (the
    cost of a higher ZSTD level, said in the reason)."""
    from .codecadvice import KEEP
    limit = KEEP if limit is None else limit
    kept = 0
    for codec, est, ci in found:
        if kept >= limit or est >= beat:
            break
        if t == current_type and _same_chain(codec, chain):
            continue
        c = Candidate(t, codec, f"CODEC({codec}) on {t}{why}", lossless=lossless, projected_bytes=est, ci95=ci)
        g = _generic(codec)
        if speed is not None and g not in ("LZ4", "ZSTD(1)", "NONE"):
            # a level's cost: its speed beside the default level's, on the same bytes of the column
            c.compress_mb_s = speed(codec)
            if c.compress_mb_s is not None:
                c.reason += (f"; its general codec {g} compressed {SPEED_BYTES >> 10} KiB of this column's bytes "
                             f"at {c.compress_mb_s:,.1f} MB/s here, ZSTD(1) at {speed('ZSTD(1)'):,.0f} MB/s "
                             f"(zstd / lz4, the libraries the engine links)")
        adv.codec_candidates.append(c)
        kept += 1


#: bytes of a column a general codec's speed is measured on (the cost of a level, said with it)
SPEED_BYTES = 32 << 10
#: sampled, a slow chain (ZSTD(12), ZSTD(19)) on a fixed-width column is projected on this many bytes
#: of one piece (whole granules) and scaled from its fast base (codecadvice.SLOW)
SLOW_BYTES = 64 << 10


def _speed_of(sample: bytes):
    """``speed(codec)``: MB/s at which the chain's general codec (LZ4, LZ4HC, ZSTD(level): the
    libraries the engine links, lz4 and zstd) compresses ``sample`` (its first SPEED_BYTES, in
    1 MiB blocks at most, best of 2 runs), cached per general codec; None without a sample."""
    from .chstrings import generic_chain
    sample = bytes(sample[:SPEED_BYTES])
    cache: dict[str, float | None] = {}

    def speed(codec: str) -> float | None:
        g = generic_chain(codec)
        if g not in cache:
            if len(sample) < 4096 or g == "NONE":
                cache[g] = None
            else:
                best = float("inf")
                for _ in range(2):
                    t0 = time.perf_counter()
                    ch_encode.encode_chain(sample, g)
                    best = min(best, time.perf_counter() - t0)
                    if best > 0.005:        # a slow level: one run is timed well enough
                        break
                cache[g] = len(sample) / 1e6 / max(best, 1e-9)
        return cache[g]
    return speed


def _codec_search_fixed(adv, kind, ctype, chain, granule, runs, pick, raws, values, cands, every, seed,
                        null_proj=None, wide_rows=None, exact=None, generic_only: bool = False) -> None:
    """Codec chains on the column's best lossless type (its current type when none is smaller),
    KEEP of them, and the best chain on each other suggested type (the chains tried there: those
    that won on the best type, the general codecs and, for a type whose values read share a
    divisor, GCD's); ``null_proj``: (null map bytes with a chain, now) of a Nullable column with
    NULLs, added to each chain's projection and to what it must beat."""
    from . import codecadvice as K
    best = min(((c, conv) for c, conv in cands if c.lossless), key=lambda cc: cc[0].projected_bytes, default=None)
    if best is None or best[0].projected_bytes >= adv.current_projected_bytes:
        best = None
    sel = K.pick_runs(len(raws), every, seed)
    rows = [runs[int(pick[i])].rows for i in sel]
    numeric = [values[i] for i in sel] if values and values[0] is not None else None
    wide_rows = adv.rows if wide_rows is None else wide_rows
    speed = _speed_of(raws[sel[0]] if len(sel) else b"")
    top: list[str] = []

    def search(t: str, conv, cand, only: list[str] | None, limit: int) -> None:
        width = _layout(t)[1]
        # another type than the best, sampled: its few chains on OTHER_RUNS of the codec runs
        k = len(sel) if only is None or every else min(len(sel), K.OTHER_RUNS)
        pieces = [conv(values[i]) if conv else raws[i] for i in sel[:k]]
        rows_k = rows[:k]
        is_float = _base_type(t) in ("Float32", "Float64")
        gcd = K.common_divisor(pieces, width) if not is_float else 0
        dgcd = K.delta_divisor(pieces, width) if not is_float else 0
        chains = K.chains_for(kind if cand is None else _kind(t) or kind, t, numeric, gcd, dgcd)
        if only is not None:       # another type: its own chains, and the best type's winners it takes
            if not K.OTHER_FULL:
                chains = [c for c in chains if c in only or c.startswith("GCD")]
            chains += [c for c in only if c not in chains and _chain_for(c, t, c) == c]
        chains = [c for c in chains
                  if not ("T64" in c and (width > 8 or _base_type(t) in ("DateTime64", "Float32", "Float64")))
                  and not (c.startswith("GCD") and width > 8)
                  and not (generic_only and _generic(c) != c)]

        heads: dict[str, int] = {}
        xs: dict[str, int] = {}

        def totals(kk: int):
            """(bytes, interval) of a chain on the first ``kk`` pieces."""
            done: dict[str, tuple[int, tuple[int, int]]] = {}

            def total(c: str) -> tuple[int, tuple[int, int]]:
                if c in done:
                    return done[c]
                base = K.slow_base(c)
                if base is not None and not every and pieces:
                    # sampled: a slow chain (ZSTD(12), ZSTD(19)) on the first SLOW_BYTES of one piece
                    # only (whole granules, its first blocks), scaled from its fast base by its ratio there
                    cut = max(granule * width, SLOW_BYTES // (granule * width) * granule * width)
                    head = pieces[0][:cut]
                    for h in (c, base):
                        if h not in heads:
                            heads[h] = project_raw(head, t, h, granule)
                    r = heads[c] / max(1, heads[base])
                    est, (lo, hi) = total(base)
                    done[c] = round(est * r), (round(lo * r), round(hi * r))
                    return done[c]
                est, (lo, hi) = _estimate([(r, project_raw(pieces[i], t, c, granule))
                                           for i, r in enumerate(rows_k[:kk])], wide_rows, len(runs))
                if c not in xs:
                    xs[c] = exact(t, c, conv) if exact is not None else 0        # the Compact parts, every value
                done[c] = est + xs[c], (lo + xs[c], hi + xs[c])
                return done[c]
            return total
        total = totals(k)
        if only is not None and K.OTHER_FULL and not every and k > 1:
            # another type, sampled: its chains ranked on one piece, the RANKED best of them
            # projected on its k pieces (half the cost of its full search)
            ranked = K.search_totals(totals(1), chains)
            found = sorted([(c, *total(c)) for c, _, _ in ranked[:K.RANKED]], key=lambda x: x[1])
        elif only is None or K.OTHER_FULL:
            found = K.search_totals(total, chains)
        else:
            found = sorted([(c, *total(c)) for c in chains], key=lambda x: x[1])
        beat = cand.projected_bytes if cand is not None else adv.current_bytes
        if null_proj is not None:
            nm, now = null_proj
            found = sorted(((c, e + nm(c), (lo + nm(c), hi + nm(c))) for c, e, (lo, hi) in found),
                           key=lambda x: x[1])
            # a Log table made anew writes its null map again (generic_only): the candidate carries
            # the null map re-laid with its chain
            beat += nm(cand.codec) if generic_only and cand is not None else now
        if only is None:        # what the other types try: the winners here and the best general codec
            top.extend(K.winners(found))
        why = f" (the {t} suggestion with this codec)" if cand is not None else ""
        _keep_chains(adv, found, t, ctype, chain, True if cand is None else cand.lossless, beat, why,
                     limit=limit, speed=speed)
    if best is not None:
        search(best[0].type, best[1], best[0], None, K.KEEP)
    else:
        search(ctype, None, None, None, K.KEEP)
    for c, conv in cands:          # every other suggested type: its best chain
        if best is not None and c is best[0]:
            continue
        search(c.type, conv, c, top, 1)


def _type_candidates(adv, table, column, kind, ctype, allv, src, every, chain, default, width, cands) -> None:
    """The narrower types of a fixed-width column of ``kind`` from its values read ``allv``."""
    if kind == "int":
        _int_candidates(adv, table, column, ctype, allv, src, chain, default, width, cands)
    elif kind == "float":
        _float_candidates(adv, ctype, allv, src, every, chain, default, width, cands)
    elif kind == "datetime64":
        _datetime64_candidates(adv, ctype, allv, src, chain, default, cands)
    elif kind == "datetime":
        _datetime_candidates(adv, ctype, allv, src, chain, default, cands)
    elif kind == "date":
        _date_candidates(adv, ctype, allv, src, chain, default, cands)
    else:
        _decimal_candidates(adv, ctype, allv, src, chain, default, width, cands)


def _int_candidates(adv, table, column, ctype, allv, src, chain, default, width, cands):
    exact = _stats_range(table, column)
    if exact is not None:
        adv.value_min, adv.value_max = exact
        adv.range_source = "statistics (exact, every active part)"
    else:
        adv.value_min, adv.value_max = int(allv.min()), int(allv.max())
        adv.range_source = src
    for t in _fitting_ints(adv.value_min, adv.value_max, width):
        cands.append((Candidate(t, _chain_for(chain, t, default),
                                f"values {adv.value_min}..{adv.value_max} ({adv.range_source}) fit {t}"),
                      lambda v, t=t: v.astype(NUMPY_TYPE[t]).tobytes()))


def _float_candidates(adv, ctype, allv, src, every, chain, default, width, cands):
    base = _base_type(ctype)
    finite = np.isfinite(allv).all()
    adv.integral = bool(finite and len(allv) and np.all(np.floor(allv) == allv))
    adv.value_min, adv.value_max = float(allv.min()), float(allv.max())
    adv.range_source = src
    if adv.integral and -2**63 <= adv.value_min and adv.value_max < 2**64:
        for t in _fitting_ints(int(adv.value_min), int(adv.value_max), width + 1):
            cands.append((Candidate(t, _chain_for(chain, t, default),
                                    f"every value is a whole number in {int(adv.value_min)}.."
                                    f"{int(adv.value_max)} ({src}): {t} holds them exactly"),
                          lambda v, t=t: v.astype(NUMPY_TYPE[t]).tobytes()))
    if base == "Float64":
        back = allv.astype("<f4").astype("<f8")
        with np.errstate(invalid="ignore", over="ignore"):
            err = np.abs(back - allv)
            rel = np.where(allv != 0, err / np.abs(allv), err)
        lossless = bool(np.array_equal(back, allv, equal_nan=True))
        c = Candidate("Float32", _chain_for(chain, "Float32", default), "", lossless=lossless)
        if lossless:
            c.reason = f"every {'' if every else 'sampled '}value converts to Float32 and back unchanged (lossless)"
        else:
            c.max_abs_error = float(np.nanmax(err))
            c.max_rel_error = float(np.nanmax(rel))
            c.reason = f"largest error seen {c.max_abs_error:.3g} (relative {c.max_rel_error:.3g})"
        cands.append((c, lambda v: v.astype("<f4").tobytes()))


def _trailing_zero_digits(v: np.ndarray, upto: int) -> int:
    for k in range(upto, 0, -1):
        if not np.any(v % (10 ** k)):
            return k
    return 0


def _datetime64_candidates(adv, ctype, allv, src, chain, default, cands):
    """DateTime64(p[, tz]) -> DateTime when whole seconds (else it loses the sub-second
    parts: said, with the largest), -> DateTime64(p') when the last digits are zero."""
    a = _args(ctype)
    p = int(a[0]) if a else 3
    tz = f", {a[1]}" if len(a) > 1 else ""
    adv.value_min, adv.value_max = int(allv.min()), int(allv.max())
    adv.range_source = src
    scale = 10 ** p
    k = _trailing_zero_digits(allv, p)
    secs_lo, secs_hi = adv.value_min // scale, adv.value_max // scale
    if p and 0 <= secs_lo and secs_hi <= 2**32 - 1:
        t = f"DateTime({tz[2:]})" if tz else "DateTime"
        c = Candidate(t, _chain_for(chain, "UInt32", default), "")
        if k == p:
            c.reason = f"every {'sampled ' if 'sampled' in src else ''}value is a whole second (lossless)"
        else:
            frac = allv % scale
            c.lossless = False
            c.max_abs_error = float(frac.max()) / scale
            c.max_rel_error = None
            c.reason = (f"drops the sub-second parts: largest seen {c.max_abs_error:g} s "
                        f"({int(np.count_nonzero(frac)):,} of {len(allv):,} values read have one)")
        cands.append((c, lambda v, s=scale: (v // s).astype("<u4").tobytes()))
    tzname = _tz_of(ctype)
    days = _whole_days(allv // scale, tzname) if k == p else None
    dtype = _date_type_for(days) if days is not None else None
    if days is None:
        _lossy_date(ctype, allv, scale, tzname, src, chain, default, cands)
    if dtype is not None:
        every_word = "every sampled" if "sampled" in src else "every"
        cands.append((Candidate(dtype, _chain_for(chain, "UInt16", default), _midnight_reason(tzname, every_word)),
                      lambda v, s=scale, t=dtype: _whole_days(v // s, tzname).astype(_layout(t)[0]).tobytes()))
    if 0 < k < p:
        t = f"DateTime64({p - k}{tz})"
        cands.append((Candidate(t, _chain_for(chain, "Int64", default),
                                f"the last {k} of {p} sub-second digits are zero in every "
                                f"{'sampled ' if 'sampled' in src else ''}value (lossless)"),
                      lambda v, s=10 ** k: (v // s).astype("<i8").tobytes()))


#: Date: UInt16 days since 1970-01-01, up to 2149-06-06 (src/DataTypes/DataTypeDate.h); Date32: Int32
#: days from 1900-01-01 to 2299-12-31 (DataTypeDate32.h, DATE_LUT_MIN_YEAR / DATE_LUT_MAX_YEAR)
DATE_MAX = 65535
DATE32_MIN, DATE32_MAX = -25567, 120529
#: the time zones whose offset is 0 at every instant (no table look-up needed)
_UTC_NAMES = ("UTC", "Etc/UTC", "GMT", "Etc/GMT", "UCT", "Etc/UCT", "Universal", "Etc/Universal", "Zulu", "Etc/Zulu")


def _tz_of(t: str) -> str | None:
    """The time zone a DateTime('tz') / DateTime64(p, 'tz') names, or None."""
    a = _args(t)
    k = 1 if _base_type(t) == "DateTime64" else 0
    return a[k].strip("'\"") if len(a) > k else None


def _local_days(secs: np.ndarray, tz: str | None) -> tuple[np.ndarray, np.ndarray] | None:
    """(days since 1970-01-01, seconds into the day) of Unix seconds in time zone ``tz`` (None:
    UTC, as the conversion takes the server's time zone and chdb's is the machine's, UTC here),
    the offsets looked up per distinct value (zoneinfo); None when the zone is unknown."""
    secs = secs.astype(np.int64)
    if tz is None or tz in _UTC_NAMES:
        off = 0
    else:
        try:
            from datetime import datetime
            from zoneinfo import ZoneInfo
            z = ZoneInfo(tz)
        except Exception:       # noqa: BLE001 -- a zone this machine's tz database lacks
            return None
        u, inv = np.unique(secs, return_inverse=True)
        offs = np.array([int(datetime.fromtimestamp(int(x), z).utcoffset().total_seconds()) for x in u.tolist()],
                        dtype=np.int64)
        off = offs[inv]
    local = secs + off
    return local // 86400, local % 86400


def _whole_days(secs: np.ndarray, tz: str | None) -> np.ndarray | None:
    """The local days of ``secs`` when every one is a midnight in ``tz``, else None (a time zone's
    offset is a multiple of 15 minutes, so a value that is not is no midnight: rejected first)."""
    if not len(secs) or np.any(secs.astype(np.int64) % 900):
        return None
    got = _local_days(secs, tz)
    if got is None or np.any(got[1]):
        return None
    return got[0]


def _date_type_for(days: np.ndarray) -> str | None:
    lo, hi = int(days.min()), int(days.max())
    if 0 <= lo and hi <= DATE_MAX:
        return "Date"
    if DATE32_MIN <= lo and hi <= DATE32_MAX:
        return "Date32"
    return None


def _midnight_reason(tz: str | None, every_word: str) -> str:
    return (f"{every_word} value is a midnight in {tz or 'UTC'} (lossless: the conversion keeps the day"
            + ("" if tz else "; the column names no time zone, so MODIFY COLUMN converts in the server's, "
                             "taken as UTC here: chdb's and this machine's") + ")")


def _datetime_candidates(adv, ctype, allv, src, chain, default, cands):
    """DateTime[('tz')] -> Date (2 bytes) when every value is a midnight in its time zone."""
    adv.value_min, adv.value_max = int(allv.min()), int(allv.max())
    adv.range_source = src
    tz = _tz_of(ctype)
    days = _whole_days(allv, tz)
    if days is None:
        _lossy_date(ctype, allv, 1, tz, src, chain, default, cands)
        return
    t = _date_type_for(days)
    if t is None:
        return
    every_word = "every sampled" if "sampled" in src else "every"
    cands.append((Candidate(t, _chain_for(chain, "UInt16", default), _midnight_reason(tz, every_word)),
                  lambda v, t=t: _whole_days(v, tz).astype(_layout(t)[0]).tobytes()))


def _lossy_date(ctype, allv, scale, tz, src, chain, default, cands) -> None:
    """DateTime / DateTime64 values that are not all midnights -> Date (Date32 outside Date's
    range): MODIFY COLUMN keeps the day in the column's time zone (toDate / toDate32: the local
    day, the time of day dropped), so it is lossy; said with the largest time of day seen."""
    got = _local_days_any(allv, scale, tz)
    if got is None:
        return
    days, tod = got
    t = _date_type_for(days)
    if t is None:
        return
    c = Candidate(t, _chain_for(chain, "UInt16", default), "", lossless=False)
    c.max_abs_error = float(tod.max())
    c.max_rel_error = None
    n = int(np.count_nonzero(tod))
    top = float(tod.max())
    hms = f"{int(top) // 3600:02d}:{int(top) // 60 % 60:02d}:{int(top) % 60:02d}"
    if top != int(top):
        hms += f"{top - int(top):.6f}".rstrip("0")[1:]
    zone = tz or "UTC (the column names no time zone: the server's, taken as UTC here)"
    c.reason = (f"loses the time of day: {n:,} of {len(allv):,} values read are not a midnight in {zone}; "
                f"the latest time of day seen {hms}, so up to {top:,g} s dropped (MODIFY COLUMN keeps the day only)")
    cands.append((c, lambda v, t=t: _local_days_any(v, scale, tz)[0].astype(_layout(t)[0]).tobytes()))


def _local_days_any(v: np.ndarray, scale: int, tz: str | None) -> tuple[np.ndarray, np.ndarray] | None:
    """(local day, seconds into the day with the sub-second part) of DateTime (``scale`` 1) or
    DateTime64 (``scale`` 10**p) values in ``tz``; the zone's offsets looked up once per
    15 minutes of time that the values touch (a zone's offset changes at such instants)."""
    v = v.astype(np.int64)
    secs = v // scale
    frac = (v - secs * scale) / scale
    if tz is None or tz in _UTC_NAMES:
        local = secs
    else:
        q = secs // 900
        u, inv = np.unique(q, return_inverse=True)
        if len(u) > LOSSY_TZ_LOOKUPS:
            return None
        try:
            from datetime import datetime
            from zoneinfo import ZoneInfo
            z = ZoneInfo(tz)
        except Exception:       # noqa: BLE001 -- a zone this machine's tz database lacks
            return None
        offs = np.array([int(datetime.fromtimestamp(int(x) * 900, z).utcoffset().total_seconds())
                         for x in u.tolist()], dtype=np.int64)
        local = secs + offs[inv.reshape(-1)]
    return local // 86400, (local % 86400) + frac


#: at most this many 15-minute spans of a time zone's offsets are looked up for a lossy Date
LOSSY_TZ_LOOKUPS = 200_000


def _date_candidates(adv, ctype, allv, src, chain, default, cands):
    """Date32 -> Date (2 bytes) when every day is in 1970-01-01..2149-06-06."""
    adv.value_min, adv.value_max = int(allv.min()), int(allv.max())
    adv.range_source = src
    if _base_type(ctype) == "Date32" and 0 <= adv.value_min and adv.value_max <= DATE_MAX:
        cands.append((Candidate("Date", _chain_for(chain, "UInt16", default),
                                f"days {adv.value_min}..{adv.value_max} ({src}) are in Date's range, "
                                f"1970-01-01..2149-06-06 (lossless)"),
                      lambda v: v.astype("<u2").tobytes()))


def _decimal_candidates(adv, ctype, allv, src, chain, default, width, cands):
    """Decimal(P, S): the narrowest precision the values need at their scale, and at the
    smallest scale that keeps every value (trailing zero digits dropped)."""
    p, s = _decimal_ps(ctype)
    adv.value_min, adv.value_max = int(allv.min()), int(allv.max())
    adv.range_source = src
    top = max(abs(adv.value_min), abs(adv.value_max))
    k = _trailing_zero_digits(allv, s)
    seen = set()
    for scale in (s, s - k):
        digits = max(len(str(top // 10 ** (s - scale))), scale, 1)
        t = f"Decimal({digits}, {scale})"
        w = _decimal_width(digits)
        if t in seen or (w >= width and scale == s):
            continue
        seen.add(t)
        why = (f"values {adv.value_min / 10 ** s:.{s}f}..{adv.value_max / 10 ** s:.{s}f} ({src}) need "
               f"{digits} digits" + (f", their last {k} decimal digits are zero" if scale < s else "")
               + f": {w}-byte Decimal{w * 8} (lossless)")
        cands.append((Candidate(t, _chain_for(chain, f"Int{w * 8}", default), why),
                      lambda v, d=10 ** (s - scale), t=t: _as_bytes(v // d, t)))


@dataclass
class _CompactStrings:
    """One Compact part's granules of a String or FixedString column: each granule's bytes of
    the column (MergeTreeDataPartWriterCompact::writeColumnSingleGranule: all its substreams
    through one stream when they share a codec, flushed after the granule), as values."""
    entry: object
    payloads: list[bytes]                 # each granule's bytes as stored (decompressed)
    sizes: list[np.ndarray]
    chars: list[bytes]
    stored: int
    with_size_stream: bool                # the part writes Strings with a separate sizes substream
    nulls: list[bytes] | None = None      # a Nullable column: each granule's null map (its first bytes)


def _compact_granules(dataset, table: dict, column: str) -> tuple[list[tuple], list[str]]:
    """The column's blocks in each active Compact part grouped by granule (by the marks of its
    first substream): ([(entry, part, granule rows, each granule's decoded bytes, stored bytes)],
    notes on parts not read)."""
    stem = escape_for_file_name(column)
    by_entry: dict[int, tuple[object, list[int]]] = {}
    for e, i in column_blocks(dataset, table["database"], table["table"], column):
        sec = e.sections.get("clickhouse", {})
        if e.role == "part_column_data" and sec.get("part_type") == "Compact":
            by_entry.setdefault(id(e), (e, []))[1].append(i)
    out, notes = [], []
    for e, idx in by_entry.values():
        det = e.detail.get("clickhouse") or {}
        cd, part = det.get("compact"), det.get("part")
        name = e.sections["clickhouse"].get("part")
        pairs = [k for k, st in enumerate(getattr(cd, "pair_streams", None) or [])
                 if st == stem or st.startswith(stem + ".")]
        if cd is None or cd.marks is None or cd.marks.rows is None or not pairs:
            notes.append(f"Compact part {name}: no marks of this column (not counted)")
            continue
        rows = cd.marks.rows.astype(np.int64)
        starts = cd.marks.offsets[:, pairs[0], 0].astype(np.int64)
        live = np.flatnonzero(rows > 0)
        idx.sort()
        offs = e.units["offset"][idx].astype(np.int64)
        gran = np.searchsorted(starts[live], offs, side="right") - 1
        try:
            pays = [b"".join(payloads.unit_payload(e, i, max_output=int(e.units["logical"][i]))
                             for i, g in zip(idx, gran) if g == k) for k in range(len(live))]
        except payloads.PayloadError as ex:
            notes.append(f"Compact part {name}: its blocks of this column could not be read ({ex}; not counted)")
            continue
        out.append((e, part, rows[live].tolist(), pays, int(sum(int(e.units["stored"][i]) for i in idx))))
    return out, notes


def _compact_null_count(dataset, table: dict, column: str) -> tuple[int, int, int]:
    """(NULL rows, rows, parts) of a Nullable column's Compact parts: each granule's bytes start
    with its null map (its first substream), one byte a row."""
    nulls = rows = 0
    got, _ = _compact_granules(dataset, table, column)
    for _, _, g_rows, pays, _ in got:
        for r, pay in zip(g_rows, pays):
            nulls += int(np.count_nonzero(np.frombuffer(pay[:r], dtype=np.uint8)))
            rows += r
    return nulls, rows, len(got)


def _compact_string_parts(dataset, table: dict, column: str, fixed: int,
                          nullable: bool = False) -> tuple[list[_CompactStrings], list[str]]:
    """The column's granules in the table's active Compact parts, read whole: a String granule is
    its UInt64 sizes then its bytes (serialization.json ``string`` version 1, with_size_stream:
    both substreams in one block) or its values with inline varint sizes (older parts); a
    FixedString(N) granule N bytes a value; a Nullable one's null map before them, one byte a row.
    (parts, notes on parts not read)."""
    from . import chstrings as S
    got, notes = _compact_granules(dataset, table, column)
    out = []
    for e, part, g_rows, pays, stored in got:
        name = e.sections["clickhouse"].get("part")
        nulls = [pay[:r] for pay, r in zip(pays, g_rows)] if nullable else None
        try:
            ssv = bool(getattr(getattr(part, "serialization", None), "string_with_size_stream", False))
            sizes, chars = [], []
            for pay, r in zip([p[r:] for p, r in zip(pays, g_rows)] if nullable else pays, g_rows):
                if fixed:
                    if len(pay) != r * fixed:
                        raise S.StringReadError(f"a granule of {len(pay)} bytes for {r} rows of {fixed} bytes")
                    sz, ch = S.fixed_to_string(pay, fixed)
                elif ssv:
                    sz = np.frombuffer(pay[:8 * r], dtype="<u8")
                    ch = pay[8 * r:]
                    if len(sz) != r or int(sz.sum()) != len(ch):
                        raise S.StringReadError("a granule's sizes do not add up to its bytes")
                else:
                    sz, ch = S.parse_inline(pay)
                    if len(sz) != r:
                        raise S.StringReadError(f"a granule of {len(sz)} values where its mark says {r}")
                sizes.append(sz)
                chars.append(ch)
        except S.StringReadError as ex:
            notes.append(f"Compact part {name}: its blocks of this column could not be read ({ex}; not counted)")
            continue
        out.append(_CompactStrings(e, pays, sizes, chars, stored, ssv, nulls))
    return out, notes


def project_compact(granules: list[bytes], chain: str) -> int:
    """Stored bytes of a column's granules in a Compact part: each granule's bytes through the
    part's stream, flushed after it (cut at max_compress_block_size), framed."""
    return project_log(granules, chain)


def _compact_layouts(cp: _CompactStrings, as_type: str, fixed: int = 0, lc_fixed: int = 0,
                     keep_nulls: bool = False) -> list[bytes]:
    """A Compact part's granules of the column written as ``as_type`` ("now": as stored;
    "fixed": FixedString(``fixed``); "string": String as the part writes Strings; "lc":
    LowCardinality: writeColumnSingleGranule gives each granule a fresh state with
    low_cardinality_max_dictionary_size = 0, so SerializationLowCardinality writes the keys
    version, then the index type with HasAdditionalKeysBit and NeedUpdateDictionary, the
    granule's keys (the default first, then in first-seen order) and its positions, no shared
    dictionary; checked byte for byte against the granules chdb 4.4.0 wrote).  A Nullable
    column's granule: "values" is it without its null map; ``keep_nulls`` puts the null map
    before the new type's values, and makes LowCardinality(Nullable): NULL rows at position 0,
    no null map)."""
    from . import chstrings as S
    out = []
    for k, (pay, sz, ch) in enumerate(zip(cp.payloads, cp.sizes, cp.chars)):
        nm = cp.nulls[k] if cp.nulls is not None else b""
        head = nm if keep_nulls and as_type in ("fixed", "string") else b""
        if as_type == "now":
            out.append(pay)
        elif as_type == "values":
            out.append(pay[len(nm):])
        elif as_type == "fixed":
            if lc_fixed or len(ch) == len(sz) * fixed:
                out.append(head + ch)
            else:
                buf = np.zeros((len(sz), fixed), dtype=np.uint8)
                buf[np.arange(fixed)[None, :] < sz[:, None].astype(np.int64)] = np.frombuffer(ch, dtype=np.uint8)
                out.append(head + buf.tobytes())
        elif as_type == "string":
            out.append(head + (sz.astype("<u8").tobytes() + ch if cp.with_size_stream else S.inline_bytes(sz, ch)))
        else:           # a fresh state per granule: the keys version, then the granule's own keys
            out.append(S.LC_KEYS_VERSION.to_bytes(8, "little")
                       + lc_block(sz, ch, nm if keep_nulls and nm else None, lc_fixed))
    return out


def lc_block(sz: np.ndarray, ch: bytes, nulls: bytes | None = None, lc_fixed: int = 0, update: bool = True) -> bytes:
    """One block of a LowCardinality column written with low_cardinality_max_dictionary_size = 0
    (SerializationLowCardinality::serializeBinaryBulkWithMultipleStreams: no shared dictionary, the
    block's keys as additional keys; a Compact granule, a Log table's block, a Native block): the
    index type with HasAdditionalKeysBit (and NeedUpdateDictionary on a state's first block), the
    block's keys (cutAndCompact: ColumnUnique's special values first, the default '' and for
    ``nulls`` the NULL placeholder before it, then the keys in first-seen order), the row count and
    each row's 1-8-byte position.  ``nulls``: LowCardinality(Nullable), NULL rows at position 0."""
    from . import chstrings as S
    codes, keys = S.factorize(sz, ch)
    w = S.LowCardinalityWriter(fixed=lc_fixed, nullable=nulls is not None)
    if w.nullable:          # NULL rows: a key of their own (None), position 0
        codes = np.where(np.frombuffer(nulls, dtype=np.uint8) != 0, len(keys), codes)
        keys = list(keys) + [None]
    w.keys = w._special()
    order = S._first_seen_order(codes)
    pos_of = np.zeros(max(len(keys), 1), dtype=np.int64)
    for c in order.tolist():
        k = keys[c]
        p = w.keys.get(k)
        if p is None:
            p = w.keys[k] = len(w.keys)
        pos_of[c] = p
    t, dt = S._index_dtype(len(w.keys) - 1)
    flags = t | S.HAS_ADDITIONAL_KEYS_BIT | (S.NEED_UPDATE_DICTIONARY if update else 0)
    return (flags.to_bytes(8, "little") + len(w.keys).to_bytes(8, "little") + S._string_bulk(list(w.keys), lc_fixed)
            + len(sz).to_bytes(8, "little") + pos_of[codes].astype(dt).tobytes())


def _advise_strings(adv: ColumnAdvice, dataset, table: dict, column: str, ctype: str, chain: str, default: str,
                    granule: int, fraction, seed, codecs: bool = False, nulls_by_dir: dict | None = None,
                    null_proj=None, null_bytes: int = 0, nullable: bool = False,
                    pre: list | None = None) -> list[Candidate]:
    """String and FixedString(N) columns: FixedString(N) for Strings all N bytes long,
    String for padded FixedStrings, LowCardinality(String) / LowCardinality(FixedString(N))
    for few distinct values.  ``nulls_by_dir``: a Nullable column that holds NULLs (each part
    folder's null map): LowCardinality(Nullable(...)), whose dictionary holds NULL (no null
    map stream: it is compared with the column's bytes with its null map, ``null_bytes``), and the
    codec chains with the null map (``null_proj``).  The granules of Compact parts (not of a
    Nullable column: its null map shares their blocks) are read whole and projected exactly,
    added to the Wide parts' sampled projection.  Strings with sizes inline (Wide parts without
    the ``.size`` stream) are read in runs cut by their marks and re-laid inline."""
    from . import chstrings as S
    fixed = _base_type(ctype) == "FixedString"
    n = int(_args(ctype)[0]) if fixed else 0
    inline = False
    if fixed:
        n = int(_args(ctype)[0])
        runs, adv.rows, _ = _main_stream_runs(dataset, table, column, n, granule)
        adv.current_bytes = _stream_stored(dataset, table, column, ("",))
    else:
        runs, adv.rows, _ = _main_stream_runs(dataset, table, column, 8, granule, ".size")
        adv.current_bytes = _stream_stored(dataset, table, column, ("", ".size"))
        if not runs and adv.current_bytes:
            # sizes inline in the .bin stream (parts written without the .size stream)
            runs, adv.rows, adv.current_bytes = _inline_string_runs(dataset, table, column, granule)
            inline = True
    cparts, cnotes = _compact_string_parts(dataset, table, column, n, nullable)
    keep = nulls_by_dir is not None
    if cparts and _generic(chain) != chain:
        cnotes.append(f"CODEC({chain}) holds a transform: the Compact parts' granules are not counted")
        cparts = []
    if not runs and cparts:
        adv.notes.extend(cnotes)
        return _advise_strings_compact_only(adv, S, cparts, ctype, chain, n, codecs, keep, pre)
    if not runs:
        raise _NotAdvised("no blocks of this column in active Wide or Compact parts" + (f" ({cnotes[0]})" if cnotes
                                                                                         else ""))
    adv.notes.extend(cnotes)
    wide_rows, wide_bytes = adv.rows, adv.current_bytes
    adv.compact_rows = int(sum(len(z) for cp in cparts for z in cp.sizes))
    adv.rows += adv.compact_rows
    adv.current_bytes += sum(cp.stored for cp in cparts)

    def cx(as_type: str, ch: str, width: int = 0, lc_fixed: int = 0) -> int:   # the Compact parts, exactly
        return sum(project_compact(_compact_layouts(cp, as_type, width, lc_fixed, keep), ch) for cp in cparts)
    for c in pre or []:         # Nullable without NULL -> its type: the Compact granules without their null map
        x = cx("values", chain)
        c.projected_bytes, c.ci95 = c.projected_bytes + x, (c.ci95[0] + x, c.ci95[1] + x)
    now_lay = "values" if nullable and not keep else "now"      # the chains on the type without Nullable
    pick = _sampled_runs(adv, runs, fraction, seed)
    every = len(pick) == len(runs)
    reader = S.StringRunReader(dataset, escape_for_file_name(column),
                               table_files(dataset, table["database"], table["table"]))
    got = []

    def load_chars(k: int) -> None:       # a String run's bytes, read when needed
        run, sizes, chars, raw = got[k]
        if chars is None:
            got[k] = (run, sizes, reader.read(run.entry, run.row0, sizes, granule), raw)

    try:
        for j in pick:
            run = runs[int(j)]
            raw = _raw(run)
            if fixed:
                sizes, chars = S.fixed_to_string(raw, n)
                got.append((run, sizes, chars, raw))
            elif inline:
                got.append((run, *S.parse_inline(raw, count=run.rows, start=run.start), None))
            else:
                got.append((run, np.frombuffer(raw, dtype="<u8"), None, None))
        adv.sampled_rows = int(sum(len(g[1]) for g in got))
        lens = np.concatenate([g[1] for g in got]) if got else np.zeros(0, dtype=np.uint64)
        longest = int(lens.max()) if len(lens) else 0
        if nulls_by_dir is not None and not fixed and got:
            # a Nullable(String) with NULLs: the lengths of its values (not of the nested '' at NULL rows)
            lens = np.concatenate([g[1][~_run_nulls(nulls_by_dir, g[0])] for g in got])
        if len(lens):
            adv.length_min, adv.length_max = int(lens.min()), int(lens.max())
            adv.length_mean = float(lens.mean())
        if got:
            load_chars(0)
        # LowCardinality only for few distinct values: the first run read decides whether to count them all
        most = max(1, int(LC_MOST_DISTINCT * len(got[0][1]))) if got else 0
        first = S.factorize(got[0][1], got[0][2], most) if got else (None, [])
        few = first[1] is not None if got else False
        # every value N bytes long, and every nested value (a NULL row's) at most N: FixedString(N)
        one_length = (not fixed and adv.length_min == adv.length_max and 0 < (adv.length_min or 0) <= 1024
                      and longest <= adv.length_min
                      and _compact_one_length(cparts, adv.length_min, nulls_by_dir is not None))
        if few or one_length:
            for k in range(1, len(got)):
                load_chars(k)
    except (S.StringReadError, payloads.PayloadError) as e:
        raise _NotAdvised(f"its blocks could not be decoded: {e}") from None
    facts = [first] + [S.factorize(g[1], g[2]) for g in got[1:]] if few else []
    distinct: set = set()
    for _, keys in facts:
        distinct.update(keys)
    first_distinct = int(first[0].max()) + 1 if got and len(first[0]) else 0
    adv.distinct_sampled = len(distinct) if few else first_distinct
    if not few:
        adv.notes.append(f"{first_distinct:,} distinct values in the first {len(got[0][1]) if got else 0:,} rows read: "
                         f"too many for LowCardinality (not projected)")
    which = "every" if every else "every sampled"
    per_cur, per = [], {}
    cands: list[Candidate] = []
    fs_c = str_c = lc_c = None
    if one_length:
        fs_c = Candidate(f"FixedString({adv.length_min})", chain,
                         f"{which} value is {adv.length_min} bytes long (lossless: no length per row)"
                         + (f"; a NULL row's nested value is {adv.length_min} zero bytes" if nulls_by_dir is not None
                            else ""))
    if fixed and adv.length_min is not None and adv.length_min < n:
        str_c = Candidate("String", chain, f"the values' trailing zero bytes are padding: String keeps "
                                           f"{adv.length_min}..{adv.length_max} bytes a value and its length "
                                           f"(the conversion drops trailing zero bytes)")
    keyed = f"FixedString({n})" if fixed else "String"
    if nulls_by_dir is not None:
        keyed = f"Nullable({keyed})"
    if few and adv.distinct_sampled <= max(1, LC_MOST_DISTINCT * adv.sampled_rows):
        lc_c = Candidate(f"LowCardinality({keyed})", chain,
                         f"{adv.distinct_sampled:,} distinct values in the {adv.sampled_rows:,} rows read: one "
                         f"dictionary per part (a new one every {S.LC_MAX_DICTIONARY_SIZE:,} keys) and a "
                         f"1-4 byte position per row (lossless)"
                         + (f"; NULL is the dictionary's position 0 (ColumnUnique): no null map stream"
                            if nulls_by_dir is not None else ""))
    if not (fs_c or str_c or lc_c):
        if fixed and adv.length_min == n:
            adv.notes.append(f"every value read fills its {n} bytes: String would add a length to each")
        if codecs:
            _codec_search_strings(adv, S, ctype, fixed, n if fixed else 0, chain, granule, runs, got, None, cands,
                                  every, seed, load_chars, null_proj, wide_rows, cx, inline, now_lay)
        return cands
    try:
        # the column's stored bytes in each run read: the String and FixedString candidates
        # re-lay the same bytes, so they are ratio-estimated on these (known for every run)
        cur = [run.stored if fixed or inline else run.stored + reader.stored(run.entry, run.row0, run.rows, granule)
               for run, *_ in got]
    except S.StringReadError as e:
        raise _NotAdvised(f"its blocks could not be decoded: {e}") from None
    # a run read after unread rows of its part: the real dictionary already holds the keys those
    # rows brought, which makes its positions wider and the new keys' larger (at the rate measured
    # inside the runs read, as the part's last dictionary is grown)
    halves = [(len(codes) - len(codes) // 2, S.new_keys_second_half(codes)) for codes, _ in facts] if lc_c else []
    rate = sum(y for _, y in halves) / max(1, sum(x for x, _ in halves)) if halves else 0.0
    for (run, sizes, chars, raw), x in zip(got, cur):
        if fixed:
            per_cur.append((x, S.project_fixed(raw, n, chain, granule)))
        else:
            per_cur.append((x, (S.project_string_inline if inline else S.project_string)(sizes, chars, chain,
                                                                                          granule)))
        if fs_c:
            per.setdefault(id(fs_c), []).append((x, S.project_fixed(S.pad_fixed(sizes, chars, adv.length_min),
                                                                    adv.length_min, chain, granule)))
        if str_c:
            per.setdefault(id(str_c), []).append((x, S.project_string(sizes, chars, chain, granule)))
    adv.current_projected_bytes, _ = _estimate(per_cur, wide_bytes, len(runs))
    adv.current_projected_bytes += cx("now", chain)
    floor = 0.0
    if lc_c and len(got) < len(runs):
        # the positions stream is estimated per row: how much the column's stored bytes a row
        # differ between its runs (every run's known) is the least its runs' differ
        try:
            floor = _population_rel_var([(r.rows, r.stored if fixed or inline else r.stored + reader.stored(
                r.entry, r.row0, r.rows, granule)) for r in runs])
        except S.StringReadError:
            floor = 0.0

    lc_made: list = []        # the runs serialized (the same for every chain): (writers, [(run, chunks)])

    def lc_project(ch: str) -> tuple[int, tuple[int, int]]:
        """LowCardinality(String) with chain ``ch``: every run read written through a fresh
        writer per part (serialized once, compressed with each chain), the parts' last
        dictionaries estimated."""
        if not lc_made:
            lc_made.append(lc_serialize())
        writers, made = lc_made[0]
        per_lc, lc_runs = [], []
        for run, new, chunks, dict_chunks in made:
            kb, db = S.project_serialized_run(chunks, dict_chunks, ch)
            per_lc.append((run.rows, kb + db))
            lc_runs.append((run, new))
        est, ci = _estimate(per_lc, wide_rows, len(runs), floor)
        x = cx("lc", ch, 0, n) if cparts else 0
        est, ci = est + x, (ci[0] + x, ci[1] + x)
        d_est, d_half = _dictionary_estimate(S, writers, lc_runs, runs, ch)
        return _add_independent(est, ci, d_est, d_half)

    def lc_serialize():
        writers: dict[str, S.LowCardinalityWriter] = {}
        made, read_before = [], {}
        for (run, *_), (codes, keys), (_, new) in zip(got, facts, halves):
            w = writers.setdefault(run.entry.abspath, S.LowCardinalityWriter(nullable=nulls_by_dir is not None,
                                                                              fixed=n if fixed else 0))
            if nulls_by_dir is not None:    # NULL rows: a key of their own (None), position 0 in the dictionary
                codes = np.where(_run_nulls(nulls_by_dir, run), len(keys), codes)
                keys = list(keys) + [None]
            # a run read after unread rows of its part: the real dictionary already holds the keys
            # those rows brought (at the rate measured inside the runs read)
            unread = run.row0 - read_before.get(run.entry.abspath, 0)
            read_before[run.entry.abspath] = read_before.get(run.entry.abspath, 0) + run.rows
            w.phantom = max(w.phantom, min(int(round(rate * unread)),
                                           S.LC_MAX_DICTIONARY_SIZE - 1 - len(w.keys or {b"": 0}) - len(keys)))
            made.append((run, new, *S.serialize_lowcardinality_run(w, codes, keys, granule)))
        return writers, made

    for c in (fs_c, str_c, lc_c):
        if c is None:
            continue
        if c is lc_c:
            c.projected_bytes, c.ci95 = lc_project(chain)
        else:
            c.projected_bytes, c.ci95 = _estimate(per[id(c)], wide_bytes, len(runs))
            x = cx("fixed", chain, adv.length_min) if c is fs_c else cx("string", chain)
            c.projected_bytes, c.ci95 = c.projected_bytes + x, (c.ci95[0] + x, c.ci95[1] + x)
        now = adv.current_bytes + (null_bytes if c is lc_c else 0)
        if c.projected_bytes < now:
            cands.append(c)
        else:
            adv.notes.append(f"{c.type} projected {c.projected_bytes:,} bytes, not smaller than now ({now:,})")
    if codecs:
        # chains on every suggested type: KEEP on the best one (searched first), then on each other
        # its best among the best type's winners (codecadvice.winners: all generic, as a String's)
        from . import codecadvice as K
        best = min(cands, key=lambda c: c.projected_bytes, default=None)
        speed = _speed_of(got[0][2] if got and got[0][2] is not None else b"")
        top: list[str] | None = None

        def lc_total(ch: str) -> tuple[int, tuple[int, int]]:
            # sampled: a slow chain (LZ4HC, high ZSTD levels) on the first runs only, as a ratio
            # to its fast base there
            made = lc_made[0][1] if lc_made else []
            base = K.slow_base(ch)
            if every or base is None or len(made) <= K.SLOW_RUNS:
                return lc_project(ch)
            # the first SLOW_BYTES of the first run's serialized granules (and its dictionary)
            chunks, dchunks = made[0][2], made[0][3]
            k = max(1, int(np.searchsorted(np.cumsum([len(c) for c in chunks]), SLOW_BYTES)) + 1)
            pair = [sum(S.project_serialized_run(chunks[:k], dchunks, x)) for x in (ch, base)]
            est, (lo, hi) = lc_project(base)
            r = pair[0] / max(1, pair[1])
            return round(est * r), (round(lo * r), round(hi * r))
        for c in sorted((c for c in (lc_c, fs_c, str_c) if c is not None and c in cands),
                        key=lambda c: c is not best):
            limit = K.KEEP if c is best else 1
            if c is lc_c:
                # LowCardinality's streams take generic codecs only (its positions:
                # ISerialization::isSpecialCompressionAllowed), every run read
                if top is None or K.OTHER_FULL:
                    found = K.search_totals(lc_total, K.chains_for("lowcardinality", lc_c.type, None))
                else:
                    found = sorted(((x, *lc_total(x)) for x in top if x == _generic(x)), key=lambda x: x[1])
                _keep_chains(adv, found, lc_c.type, ctype, chain, True, lc_c.projected_bytes,
                             f" (the {lc_c.type} suggestion with this codec)", limit=limit, speed=speed)
            else:                                   # the FixedString(N) / String suggestion
                found = _codec_search_strings(adv, S, ctype, fixed, n if fixed else 0, chain, granule, runs, got, c,
                                              cands, every, seed, load_chars, null_proj, wide_rows, cx, inline,
                                              now_lay, limit=limit, only=top, speed=speed)
            if top is None:
                top = K.winners(found)
        if best is None:                            # no type suggested: the chains on the column's own type
            _codec_search_strings(adv, S, ctype, fixed, n if fixed else 0, chain, granule, runs, got, None, cands,
                                  every, seed, load_chars, null_proj, wide_rows, cx, inline, now_lay, speed=speed)
    return cands


def _run_nulls(nulls_by_dir: dict, run: _Run) -> np.ndarray:
    """The NULL rows of a run of a Nullable column (its part folder's null map), as booleans."""
    nm = nulls_by_dir.get(os.path.dirname(run.entry.abspath), b"")[run.row0:run.row0 + run.rows]
    if len(nm) != run.rows:
        raise _NotAdvised(f"{run.entry.path}: its null map holds fewer rows than its sizes")
    return np.frombuffer(nm, dtype=np.uint8) != 0


def _compact_one_length(cparts: list, n: int, nullable: bool) -> bool:
    """Every value of the Compact parts' granules ``n`` bytes long (a Nullable column's non-NULL
    ones; its NULL rows' nested values at most ``n``)."""
    for cp in cparts:
        for k, sz in enumerate(cp.sizes):
            if not len(sz):
                continue
            if nullable and cp.nulls is not None:
                vals = sz[np.frombuffer(cp.nulls[k], dtype=np.uint8) == 0]
                if int(sz.max()) > n or (len(vals) and (int(vals.min()) != n or int(vals.max()) != n)):
                    return False
            elif int(sz.min()) != n or int(sz.max()) != n:
                return False
    return True


def _advise_strings_compact_only(adv: ColumnAdvice, S, cparts: list, ctype: str, chain: str, n: int,
                                 codecs: bool, keep: bool = False, pre: list | None = None) -> list[Candidate]:
    """A String or FixedString column whose parts are all Compact (a small table's): every granule
    read whole, each candidate (FixedString(N), String, LowCardinality) and codec chain projected
    exactly as the Compact writer writes it.  A Nullable column's granule is its null map then
    its values in one block (the chains are generic): ``keep`` (it holds NULLs) writes the null map
    before the new type's values and makes LowCardinality(Nullable(...)) (NULL at position 0, no
    null map); without NULLs the candidates (``pre``: the type without Nullable) are the values alone."""
    fixed = bool(n)
    sizes = np.concatenate([z for cp in cparts for z in cp.sizes])
    chars = b"".join(c for cp in cparts for c in cp.chars)
    adv.rows = adv.sampled_rows = adv.compact_rows = len(sizes)
    adv.runs = adv.sampled_runs = sum(len(cp.sizes) for cp in cparts)
    adv.current_bytes = sum(cp.stored for cp in cparts)
    vals = sizes
    if keep:        # the lengths of the values, not of the nested '' (or zero bytes) at NULL rows
        vals = sizes[np.concatenate([np.frombuffer(nm, dtype=np.uint8) for cp in cparts for nm in cp.nulls]) == 0]
    if len(vals):
        adv.length_min, adv.length_max, adv.length_mean = int(vals.min()), int(vals.max()), float(vals.mean())

    def cx(as_type: str, ch: str, width: int = 0, lc_fixed: int = 0) -> int:
        return sum(project_compact(_compact_layouts(cp, as_type, width, lc_fixed, keep), ch) for cp in cparts)
    adv.current_projected_bytes = cx("now", chain)
    for c in pre or []:         # Nullable without NULL -> its type: the granules without their null map
        c.projected_bytes = cx("values", chain)
        c.ci95 = (c.projected_bytes, c.projected_bytes)
    cands: list[tuple[Candidate, tuple]] = []
    if (not fixed and adv.length_min == adv.length_max and 0 < (adv.length_min or 0) <= 1024
            and int(sizes.max()) <= adv.length_min):
        cands.append((Candidate(f"FixedString({adv.length_min})", chain, f"every value is {adv.length_min} bytes long "
                                                                          f"(lossless: no length per row)"
                                + (f"; a NULL row's nested value is {adv.length_min} zero bytes" if keep else "")),
                      ("fixed", adv.length_min, 0)))
    if fixed and adv.length_min is not None and adv.length_min < n:
        cands.append((Candidate("String", chain, f"the values' trailing zero bytes are padding: String keeps "
                                                 f"{adv.length_min}..{adv.length_max} bytes a value and its length "
                                                 f"(the conversion drops trailing zero bytes)"), ("string", 0, 0)))
    _, keys = S.factorize(sizes, chars, max(1, int(LC_MOST_DISTINCT * len(sizes))))
    adv.distinct_sampled = len(keys) if keys is not None else None
    if keys is not None and len(sizes):
        t = f"FixedString({n})" if fixed else "String"
        t = f"LowCardinality(Nullable({t}))" if keep else f"LowCardinality({t})"
        cands.append((Candidate(t, chain, f"{len(keys):,} distinct values in {len(sizes):,} rows: in a Compact part "
                                          f"a dictionary per granule and a 1-4 byte position per row (lossless)"
                                + ("; NULL is the dictionary's position 0 (ColumnUnique): no null map" if keep
                                   else "")),
                      ("lc", 0, n)))
    out = []
    for c, lay in cands:
        c.projected_bytes = cx(lay[0], chain, lay[1], lay[2])
        c.ci95 = (c.projected_bytes, c.projected_bytes)
        if c.projected_bytes < adv.current_bytes:
            out.append((c, lay))
        else:
            adv.notes.append(f"{c.type} projected {c.projected_bytes:,} bytes, not smaller than now "
                             f"({adv.current_bytes:,})")
    if codecs:
        from . import codecadvice as K
        best = min(out, key=lambda cl: cl[0].projected_bytes, default=None)
        now_lay = ("values" if pre else "now", 0, 0)    # Nullable without NULL: chains on its type alone
        t, lay, beat = (best[0].type, best[1], best[0].projected_bytes) if best else (ctype, now_lay,
                                                                                      adv.current_bytes)
        kind = "lowcardinality" if t.startswith("LowCardinality") else "string"
        found = K.search_totals(lambda ch: (lambda b: (b, (b, b)))(cx(lay[0], ch, lay[1], lay[2])),
                                K.chains_for(kind, t, None))
        _keep_chains(adv, found, t, ctype, chain, True, beat, f" (the {t} suggestion with this codec)" if best else "")
        top = K.winners(found)
        for c, lay in out:          # every other suggested type: its best chain among the best type's winners
            if best is None or c is best[0]:
                continue
            if K.OTHER_FULL:        # its own full search
                k2 = "lowcardinality" if c.type.startswith("LowCardinality") else "string"
                got = K.search_totals(lambda ch, lay=lay: (lambda b: (b, (b, b)))(cx(lay[0], ch, lay[1], lay[2])),
                                      K.chains_for(k2, c.type, None) + [x for x in top
                                                                        if x not in K.chains_for(k2, c.type, None)])
            else:
                got = sorted(((ch, *(lambda b: (b, (b, b)))(cx(lay[0], ch, lay[1], lay[2]))) for ch in top),
                             key=lambda x: x[1])
            _keep_chains(adv, got, c.type, ctype, chain, True, c.projected_bytes,
                         f" (the {c.type} suggestion with this codec)", limit=1)
    return [c for c, _ in out]


def _codec_search_strings(adv, S, ctype, fixed, n, chain, granule, runs, got, fs_c, cands, every, seed,
                          load_chars, null_proj=None, wide_rows=None, cx=None, inline: bool = False,
                          now_lay: str = "now", limit: int | None = None, only: list[str] | None = None,
                          speed=None) -> list[tuple]:
    """General codecs and levels on the String or FixedString(N) the column is or would be
    (``fs_c``: the FixedString(N) or String suggestion they go on, None: the column's own type);
    ``null_proj``: (null map bytes with a chain, now) of a Nullable column with NULLs, added
    to each chain's projection and to what it must beat; ``limit``: chains kept (KEEP); ``only``:
    these chains and no level search (another type than the best); returns the chains found."""
    from . import codecadvice as K
    sel = K.pick_runs(len(got), every, seed)
    try:
        for i in sel:
            load_chars(int(i))
    except (S.StringReadError, payloads.PayloadError) as e:
        adv.notes.append(f"codec chains not projected: {e}")
        return []
    rows = [got[i][0].rows for i in sel]
    if fs_c is not None and fs_c in cands and fs_c.type == "String":
        t, why = "String", " (the String suggestion with this codec)"
        proj = lambda i, c: S.project_string(got[sel[i]][1], got[sel[i]][2], c, granule)   # noqa: E731
    elif fs_c is not None and fs_c in cands:
        t, w = fs_c.type, adv.length_min
        proj = lambda i, c: S.project_fixed(S.pad_fixed(got[sel[i]][1], got[sel[i]][2], w), w, c,  # noqa: E731
                                            granule)
        why = f" (the {t} suggestion with this codec)"
    elif fixed:
        t, why = ctype, ""
        proj = lambda i, c: S.project_fixed(got[sel[i]][3], n, c, granule)        # noqa: E731
    else:
        t, why = ctype, ""
        ps = S.project_string_inline if inline else S.project_string
        proj = lambda i, c: ps(got[sel[i]][1], got[sel[i]][2], c, granule)   # noqa: E731
    def head(c: str) -> int:        # a slow chain, sampled: the first SLOW_BYTES of the first piece read
        sizes, chars = got[sel[0]][1], got[sel[0]][2]
        k = int(np.searchsorted(np.cumsum(sizes, dtype=np.int64), SLOW_BYTES)) + 1
        k = max(granule, -(-k // granule) * granule)
        ends = int(np.sum(sizes[:k], dtype=np.int64))
        if t == "String" or t == ctype and not fixed:
            return (S.project_string_inline if inline and t == ctype else S.project_string)(sizes[:k], chars[:ends],
                                                                                               c, granule)
        w = adv.length_min if t != ctype else n
        return S.project_fixed(S.pad_fixed(sizes[:k], chars[:ends], w), w, c, granule)
    if only is not None and not every:      # another type than the best, sampled: OTHER_RUNS of the runs
        rows = rows[:K.OTHER_RUNS]
    chains = K.chains_for("string", t, None)
    if only is not None:        # another type than the best: its own chains too (OTHER_FULL) or only those
        chains = (chains + [c for c in only if c not in chains]) if K.OTHER_FULL else list(only)
    found = K.search(rows, proj, chains, adv.rows if wide_rows is None else wide_rows, len(runs), _estimate,
                     sampled=not every, escalate=only is None or K.OTHER_FULL, head=head)
    if cx is not None:          # the Compact parts' granules, every value, with each chain
        lay = ("string", 0) if t == "String" and t != ctype else ("fixed", adv.length_min) if t != ctype \
            else (now_lay, 0)
        xs = {c: cx(lay[0], c, lay[1]) for c, _, _ in found}
        found = sorted(((c, e + xs[c], (lo + xs[c], hi + xs[c])) for c, e, (lo, hi) in found), key=lambda x: x[1])
    beat = fs_c.projected_bytes if t != ctype else adv.current_bytes
    if null_proj is not None:
        nm, now = null_proj
        found = sorted(((c, e + nm(c), (lo + nm(c), hi + nm(c))) for c, e, (lo, hi) in found), key=lambda x: x[1])
        beat += now
    if speed is None:
        g = got[sel[0]] if len(sel) else None
        speed = _speed_of(b"" if g is None or g[2] is None else g[2])
    _keep_chains(adv, found, t, ctype, chain, True, beat, why, limit=limit, speed=speed)
    return found


def advise(dataset, fraction: float | None = 0.05, seed: int = 0, check=None, progress=None,
           is_cancelled=None, codecs: bool = False, workers: int = 1) -> dict:
    """Type advice for every column of every MergeTree table of the scan.  ``progress(done,
    total, message)`` is called after each column; ``is_cancelled()`` true stops between
    columns (the result then says ``"cancelled": true`` and holds the columns done).

    ``workers`` > 1 (the command line: its cores): the columns are advised in that many
    forked processes (parsers/parallel.map_calls: a column's advice depends on its own
    blocks and the seed only, so the result is the one process's, measured speeds aside),
    when this process may fork (not the window's: parallel.fork_safe)."""
    from dbxray.parsers import parallel
    from dbxray.parsers.model import ScanContext
    t0 = time.perf_counter()
    out = []
    todo = [(table, col) for table in (dataset.sections.get("clickhouse") or {}).get("tables", [])
            if "MergeTree" in str(table.get("engine", "")) or str(table.get("engine", "")) in LOG_ENGINES
            for col in table.get("columns") or []]
    if todo:
        table_files(dataset, todo[0][0]["database"], todo[0][0]["table"])     # indexed once, before a fork
    cancelled = False
    # a task is COLUMNS_PER_TASK columns: their costs differ up to 50x, so the cores take small ones
    calls = parallel.map_calls(advise_column, [(dataset, table, col, fraction, seed, codecs) for table, col in todo],
                               ScanContext(workers=max(1, workers)), task_calls=COLUMNS_PER_TASK)
    try:
        for k, (table, col) in enumerate(todo):
            if check is not None:
                check()
            if is_cancelled is not None and is_cancelled():
                cancelled = True
                break
            out.append(next(calls))
            if progress is not None:
                progress(k + 1, len(todo), f"{table['table']}.{col['name']}")
    finally:
        calls.close()           # cancelled (or an error): the workers are stopped
    return {"sample": "all" if fraction is None else fraction, "seed": seed, "warning": MODIFY_WARNING,
            "codecs": codecs, "seconds": round(time.perf_counter() - t0, 3), "cancelled": cancelled,
            "columns": [a.to_json() for a in out]}


def _ratio_half(pairs: list[tuple[int, int]]) -> tuple[float, float]:
    """sum(y) / sum(x) of (x, y) pairs and its 95% half-width (Student t; the pairs a sample
    of a population much larger)."""
    x = np.array([a for a, _ in pairs], dtype=float)
    y = np.array([b for _, b in pairs], dtype=float)
    if not len(x) or not x.sum():
        return 0.0, 0.0
    r = float(y.sum() / x.sum())
    n = len(x)
    if n < 2:
        return r, 0.0
    t = 1.96 if n >= 30 else float(_T95.get(n - 1, 2.0))
    return r, t * math.sqrt((y - r * x).var(ddof=1) / n) / x.mean()


def _add_independent(est: int, ci: tuple[int, int], est2: float, half2: float) -> tuple[int, tuple[int, int]]:
    """Sum of two independent estimates: the 95% half-widths add in quadrature."""
    lo_h, hi_h = est - ci[0], ci[1] - est
    total = est + est2
    return int(round(total)), (int(round(total - math.hypot(lo_h, half2))), int(round(total + math.hypot(hi_h, half2))))


def _dictionary_estimate(S, writers: dict, lc_runs: list, runs: list[_Run], chain: str) -> tuple[float, float]:
    """The parts' last LowCardinality dictionaries (the keys the writer still holds at the
    end of each part, SerializationLowCardinality::serializeBinaryBulkStateSuffix): (bytes,
    95% half-width).

    A dictionary does not grow with the rows read: a part's keys are those seen in its read
    runs plus the keys its unread rows bring.  That rate is measured inside the runs read:
    the keys of each run's second half absent from its first half, per row (0 for a column
    whose few values recur everywhere; the run's own distinct rate for a column sorted by
    it, whose runs hold different keys; in between for the rest), ratio-estimated over the
    runs read with its own interval, and applied to each part's unread rows.  A part none
    of whose runs was read gets the average read run's dictionary, grown the same way.
    Each key costs what the part's seen keys cost compressed; a dictionary holds at most
    ``low_cardinality_max_dictionary_size`` keys (the fuller ones are written with the runs)."""
    if not writers:
        return 0.0, 0.0
    rows_in: dict[str, int] = {}
    for r in runs:
        rows_in[r.entry.abspath] = rows_in.get(r.entry.abspath, 0) + r.rows
    read_in: dict[str, int] = {}
    for run, _ in lc_runs:
        read_in[run.entry.abspath] = read_in.get(run.entry.abspath, 0) + run.rows
    rate, rhalf = _ratio_half([(run.rows - run.rows // 2, new) for run, new in lc_runs])
    per_part = []
    for part, w in writers.items():
        n_keys = len(w.keys) if w.keys else 0
        b = S.project_dictionary_tail(w, chain)
        per_part.append((n_keys, b, rows_in.get(part, 0) - read_in.get(part, 0)))
    est = var = 0.0
    for n_keys, b, unread in per_part:
        per_key = b / n_keys if n_keys else 0.0
        k = min(n_keys + rate * unread, S.LC_MAX_DICTIONARY_SIZE)
        est += max(b, per_key * k)
        var += (per_key * rhalf * unread) ** 2 if k < S.LC_MAX_DICTIONARY_SIZE else 0.0
    for part, rows in rows_in.items():
        if part in writers:
            continue
        # not read: the average read part's keys and bytes a row, grown to this part's rows
        n_avg = sum(p[0] for p in per_part) / len(per_part)
        b_avg = sum(p[1] for p in per_part) / len(per_part)
        rows_avg = sum(read_in.values()) / len(read_in)
        per_key = b_avg / n_avg if n_avg else 0.0
        unread = max(rows - rows_avg, 0)
        k = min(n_avg + rate * unread, S.LC_MAX_DICTIONARY_SIZE)
        est += max(per_key * k, 0.0)
        var += (per_key * rhalf * unread) ** 2
    return est, math.sqrt(var)


# --- existing LowCardinality and Array columns: their streams decoded -----------------------------------

#: codecs not tried on an Array's elements: the engine gives Delta / T64 the element type (an Array(UInt32)
#: CODEC(Delta, LZ4) column chdb 4.4.0 wrote re-encodes to the byte with Delta(4)), FPC and GCD not checked
_ARRAY_SKIP = ("FPC", "GCD")


def _lc_parts(ctype: str) -> tuple[bool, str, str, int]:
    """(Nullable, the dictionary's type, its kind: string / fixedstring / int / float, its key width:
    0 for String) of a LowCardinality type, or _NotAdvised."""
    inner = ctype[ctype.index("(") + 1:ctype.rindex(")")].strip()
    nullable = _base_type(inner) == "Nullable"
    if nullable:
        inner = inner[inner.index("(") + 1:inner.rindex(")")].strip()
    kind = _kind(inner)
    if kind == "string":
        return nullable, inner, kind, 0
    if kind == "fixedstring":
        return nullable, inner, kind, int(_args(inner)[0])
    if kind in ("int", "float"):
        return nullable, inner, kind, WIDTH[inner]
    raise _NotAdvised(f"{ctype}: not advised (a LowCardinality column is decoded when it holds String, "
                      f"FixedString(N) or a number, Nullable or not)")


def _array_element(ctype: str) -> str:
    inner = ctype[ctype.index("(") + 1:ctype.rindex(")")].strip()
    if _kind(inner) not in ("int", "float"):
        raise _NotAdvised(f"{ctype}: not advised (an Array column is decoded when its elements are integers, "
                          f"Float32/Float64 or String; {inner} elements are not)")
    return inner


def _array_streams_there(p: dict, col: dict) -> None:
    """An Array column's part holds its elements and its own ``.size0`` stream, or _NotAdvised."""
    if "" not in p["raw"] or ".size0" not in p["raw"]:
        if "." in col["name"] and "" in p["raw"]:
            raise _NotAdvised(f"a Nested column's sizes are the shared `{col['name'].split('.')[0]}.size0` "
                              f"stream (not read here): not advised")
        raise _NotAdvised(f"part {p['part']}: its elements or sizes stream (.size0) is missing")


def _stream_bytes(e, idx: list[int]) -> tuple[bytes, int]:
    idx = sorted(idx)
    raw = b"".join(payloads.unit_payload(e, i, max_output=int(e.units["logical"][i])) for i in idx)
    return raw, int(sum(int(e.units["stored"][i]) for i in idx))


def _column_streams(dataset, table: dict, column: str) -> tuple[list[dict], list[str]]:
    """The column's streams in each active Wide part (or a Log table's files: one 'part'):
    [{"part", "entry", "raw": {substream: bytes}, "stored": {substream: bytes}}], and the names of
    the active Compact parts that hold it."""
    stem = escape_for_file_name(column)
    by_dir: dict[str, dict] = {}
    compact: set[str] = set()
    for e, i in column_blocks(dataset, table["database"], table["table"], column):
        sec = e.sections.get("clickhouse", {})
        stream = str(sec.get("stream", ""))
        if e.role == "part_column_data" and sec.get("part_type") == "Compact":
            if sec.get("part_state", "active") == "active":
                compact.add(str(sec.get("part")))
            continue
        if e.role not in ("part_column_data", "table_data") or not stream.startswith(stem) or \
                sec.get("part_state", "active") != "active":
            continue
        sub = stream[len(stem):]
        if sub and not sub.startswith("."):
            continue
        d = by_dir.setdefault(os.path.dirname(e.abspath), {"part": sec.get("part", table["table"]), "idx": {}})
        d["idx"].setdefault(sub, (e, []))[1].append(i)
    out = []
    for d in by_dir.values():
        raw, stored = {}, {}
        for sub, (e, idx) in d["idx"].items():
            raw[sub], stored[sub] = _stream_bytes(e, idx)
        main = d["idx"].get("", (None, []))[0]
        out.append({"part": d["part"], "entry": main, "raw": raw, "stored": stored})
    return out, sorted(compact)


def _part_granule_rows(entry, rows: int, granule: int) -> list[int]:
    """The rows of each granule of a Wide part, from the column's marks (``rows``: the part's rows
    the streams hold; marks without rows: index_granularity each)."""
    from dbxray.parsers.clickhouse.marks import marks_flavour, read_marks
    mfile = entry.sections.get("clickhouse", {}).get("marks_file")
    fl = marks_flavour(mfile or "")
    got = None
    if fl is not None:
        try:
            with open(os.path.join(os.path.dirname(entry.abspath), mfile), "rb") as f:
                marks = read_marks(f.read(), fl)
            if marks.rows is not None:
                got = [int(r) for r in marks.rows if int(r)]
        except Exception:       # noqa: BLE001 -- a marks file that does not read: index_granularity
            got = None
    if got is None or sum(got) != rows:
        full, last = divmod(rows, granule)
        got = [granule] * full + ([last] if last else [])
    return got


def _slices(rows: list[int]) -> list[tuple[int, int]]:
    out, a = [], 0
    for r in rows:
        out.append((a, a + r))
        a += r
    return out


def _lc_granules(codes: np.ndarray, keys: list, rows: list[int], nullable: bool, fixed: int) -> tuple[list, list]:
    """(keys-stream chunks, dictionary-stream chunks) of one Wide part's LowCardinality column written
    granule by granule (compress/chstrings.LowCardinalityWriter: the shared dictionary, its overflow
    into additional keys, the keys version first in the dictionary stream, the last dictionary at the
    part's end)."""
    from . import chstrings as S
    w = S.LowCardinalityWriter(nullable=nullable, fixed=fixed)
    chunks = [w.granule(codes[a:b], keys) for a, b in _slices(rows)]
    dchunks = list(w.dict_chunks)
    dchunks[-1] = dchunks[-1] + w.finish()
    if len(dchunks) > 1:
        dchunks = [dchunks[0] + dchunks[1]] + dchunks[2:]
    return chunks, dchunks


def _value_bytes(sizes: np.ndarray, chars: bytes, rows: list[int]) -> list[tuple[np.ndarray, bytes]]:
    """Each granule's values as (sizes, bytes)."""
    ends = np.cumsum(sizes, dtype=np.int64)
    starts = ends - sizes.astype(np.int64)
    out = []
    for a, b in _slices(rows):
        ch = chars[int(starts[a]):int(ends[b - 1])] if b > a else b""
        out.append((sizes[a:b], ch))
    return out


def _advise_composite(adv: ColumnAdvice, dataset, table: dict, col: dict, chain: str, granule: int,
                      codecs: bool, fraction=None, seed: int = 0) -> None:
    """An existing LowCardinality or Array column of a MergeTree table's Wide parts or of a Log /
    TinyLog table: every block of its streams decoded (parsers/clickhouse/lowcardinality.py), the
    current type re-encoded (the model's own error), the other types and the codec chains projected
    as the engine writes them (Wide: granule by granule, the part's shared dictionary; Log: the table
    made anew, a block per INSERT block; Compact parts: each granule read whole, written again as the
    Compact writer writes it, a fresh LowCardinality state a granule: _compact_layouts).  ``fraction``:
    the Wide parts' projections are estimated from runs of granules (_RunSampler); every block is
    decoded whatever it is (the ranges and distinct counts are every value's)."""
    from dbxray.parsers.clickhouse import lowcardinality as L
    ctype = adv.type
    base = _base_type(ctype)
    log_engine = str(table.get("engine", "")) in LOG_ENGINES
    try:
        pieces, compact = _column_streams(dataset, table, col["name"])
    except payloads.PayloadError as e:
        raise _NotAdvised(f"its streams could not be decoded: {e}") from None
    pieces = [p for p in pieces if p["entry"] is not None]
    cparts = []
    if compact:
        got, cnotes = _compact_granules(dataset, table, col["name"])
        adv.notes.extend(cnotes)
        cparts = [(e.sections["clickhouse"].get("part"), part, g_rows, pays, stored)
                  for e, part, g_rows, pays, stored in got]
    if not pieces and not cparts:
        raise _NotAdvised(f"no blocks of this column's streams in active Wide or Compact parts: not advised")
    try:
        if base == "LowCardinality":
            _advise_lc(adv, dataset, table, col, chain, granule, codecs, pieces, log_engine, L, cparts, fraction, seed)
        elif ctype.replace(" ", "") == "Array(String)":
            _advise_array_strings(adv, dataset, table, col, chain, granule, codecs, pieces, log_engine, L, cparts,
                                  fraction)
        else:
            _advise_array(adv, dataset, table, col, chain, granule, codecs, pieces, log_engine, L, cparts, fraction,
                          seed)
    except (L.LowCardinalityError, payloads.PayloadError, ValueError) as e:
        # ValueError: a stream whose bytes are not whole values of its type (numpy.frombuffer)
        where = [p["entry"].path for p in pieces][:3] + [name for name, *_ in cparts][:3]
        more = len(pieces) + len(cparts) - len(where)
        raise _NotAdvised(f"its streams could not be decoded ({', '.join(map(str, where))}"
                          f"{f' and {more} more' if more > 0 else ''}): {e}") from None


def _compact_split(pays: list[bytes], g_rows: list[int], chain: str, first: int, rest_type: str | None = None) -> int:
    """A Compact part's granules written with ``chain``: each granule's first ``first(r)`` bytes (the
    substream that takes the generic codecs only: an Array's sizes) and the rest, in one block when the
    chain is generic (the Compact writer shares a stream between substreams of one codec), else each
    in its own block, the first with the chain's generic codecs (as a Nullable's null map)."""
    g = _generic(chain)
    if g == chain:
        return project_log(pays, chain)
    w, vt = (WIDTH[rest_type], None if rest_type.startswith("Float") else rest_type) if rest_type else (None, None)
    out = 0
    for pay, r in zip(pays, g_rows):
        out += project_log([pay[:first * r]], g) + project_log([pay[first * r:]], chain, w, vt)
    return out


def _log_split(rows_total: int) -> list[tuple[int, int]]:
    return _slices(_new_insert_rows(rows_total))


def _search_chains(adv: ColumnAdvice, total, kind: str, t: str, ctype: str, chain: str, beat: int, why: str,
                   skip=()) -> None:
    """Every chain of ``kind`` on type ``t`` (``total(chain)``: its bytes and interval), KEEP of them
    that beat ``beat`` kept."""
    from . import codecadvice as K
    chains = [c for c in K.chains_for(kind, t, None)
              if not any(x.split("(")[0].strip().upper() in skip for x in c.split(","))]
    found = K.search_totals(total, chains)
    _keep_chains(adv, found, t, ctype, chain, True, beat, why)


def _granule_runs(g_bytes: list[int]) -> list[tuple[int, int]]:
    """A part's granules cut into runs (first granule, end): a run ends once it holds RUN_BYTES and
    a multiple of ALIGN_GRANULES granules (or at the part's end), as _main_stream_runs cuts them."""
    out, a, acc = [], 0, 0
    for k, b in enumerate(g_bytes):
        acc += b
        if acc >= RUN_BYTES and (k + 1 - a) % ALIGN_GRANULES == 0:
            out.append((a, k + 1))
            a, acc = k + 1, 0
    if a < len(g_bytes):
        out.append((a, len(g_bytes)))
    return out


class _RunSampler:
    """The Wide parts' granule runs of a decoded column, sampled (``fraction``): a projection is the
    ratio estimate over the runs picked (each projected on its own: its blocks cut from its start),
    with its 95% interval; every run picked (or ``fraction`` None): each part projected whole, exact."""

    def __init__(self, adv: ColumnAdvice, parts_g: list[list[int]], parts_bytes: list[list[int]], fraction, seed):
        self.parts_g = parts_g
        self.parts_bytes = parts_bytes
        self._heads: dict = {}
        self._whole: dict = {}
        self.runs = [(k, a, b, sum(g[a:b])) for k, (g, gb) in enumerate(zip(parts_g, parts_bytes))
                     for a, b in _granule_runs(gb)]
        self.pick = _pick(len(self.runs), fraction, seed) if self.runs else np.zeros(0, dtype=int)
        self.sampled = len(self.pick) < len(self.runs)
        self.rows = sum(r[3] for r in self.runs)
        adv.runs = len(self.runs)
        adv.sampled_runs = len(self.pick)
        adv.sampled_rows = sum(self.runs[i][3] for i in self.pick)

    def total(self, proj, ch: str, extra: int = 0, key: str = "") -> tuple[int, tuple[int, int]]:
        """``proj(part, first granule, end granule, chain)``: (bytes, interval) over the Wide parts,
        plus ``extra`` (the Compact parts', every granule).  Sampled, a chain's bytes are its ratio to
        ZSTD(1) on the runs picked times ZSTD(1)'s bytes on every part (exact, as LZ4's: the fast
        codecs are projected on every value), so a run's own block cuts at its ends largely cancel;
        ``key`` names ``proj`` (its type) for those every-value projections."""
        from . import codecadvice as K
        if not self.sampled or ch in _EXACT_CHAINS:
            if (key, ch) not in self._whole:
                self._whole[(key, ch)] = sum(proj(k, 0, len(g), ch) for k, g in enumerate(self.parts_g))
            b = self._whole[(key, ch)] + extra
            return b, (b, b)
        base = K.slow_base(ch)
        if base is not None:
            # a slow chain (ZSTD(12), ZSTD(19), LZ4HC(9)), sampled: projected on the first granules
            # (SLOW_BYTES) of each run picked, ratio-estimated to its fast base there (the base's
            # bytes on the whole), the interval from the heads' spread and the base's
            pairs, picked = [], []
            for i in self.pick:
                k, g0, g1, _ = self.runs[int(i)]
                g_end, acc = g0, 0
                while g_end < g1 and acc < SLOW_BYTES:
                    acc += self.parts_bytes[k][g_end]
                    g_end += 1
                heads = self._heads.setdefault((key, k, g0, g_end), {})
                for h in (ch, base):
                    if h not in heads:
                        heads[h] = proj(k, g0, g_end, h)
                pairs.append((heads[base], heads[ch]))
                picked.append((k, g0, g_end, heads))
            est_b, (lo_b, hi_b) = self.total(proj, base, 0, key)
            est, (lo, hi) = _estimate(pairs, est_b, len(self.runs))
            r = est / max(1, est_b)
            lo, hi = min(lo, round(lo_b * r)), max(hi, round(hi_b * r))
            # the heads stand for their runs as far as the other every-value chain, projected on
            # the same heads and known on the whole, gives the same estimate
            other = next((c for c in _EXACT_CHAINS if c != base), None)
            if other is not None:
                for k, g0, g_end, heads in picked:
                    if other not in heads:
                        heads[other] = proj(k, g0, g_end, other)
                lo, hi = self._widened(est, lo, hi, sum(y for _, y in pairs),
                                       sum(h[other] for *_, h in picked), self.total(proj, other, 0, key)[0])
            return est + extra, (lo + extra, hi + extra)
        whole = self.total(proj, _SAMPLE_BASE, 0, key)[0]
        per = [(proj(*self.runs[i][:3], _SAMPLE_BASE), proj(*self.runs[i][:3], ch)) for i in self.pick]
        est, (lo, hi) = _estimate(per, whole, len(self.runs))
        lo, hi = self._second_base(proj, ch, key, est, lo, hi, [y for _, y in per])
        return est + extra, (lo + extra, hi + extra)

    def _second_base(self, proj, ch: str, key: str, est: int, lo: int, hi: int, ys: list[int]) -> tuple[int, int]:
        """The interval of a ratio estimate to ZSTD(1) widened to the estimate LZ4, the other
        chain known on every value, gives as the base (``ys``: the chain's bytes on the runs read)."""
        other = next(c for c in _EXACT_CHAINS if c != _SAMPLE_BASE)
        if ch == other:
            return lo, hi
        xs = [proj(*self.runs[i][:3], other) for i in self.pick]
        return self._widened(est, lo, hi, sum(ys), sum(xs), self.total(proj, other, 0, key)[0])

    @staticmethod
    def _widened(est: int, lo: int, hi: int, y: int, x: int, x_whole: int) -> tuple[int, int]:
        """(lo, hi) widened to reach the ratio estimate ``y / x * x_whole`` of a second base
        mirrored about ``est``: both bases are exact on every value, so where their estimates
        disagree the runs read do not stand for the others as the ratio assumes (a run's own
        block cuts, a shorter last run), which runs that happen to agree give no width for."""
        if not x:
            return lo, hi
        d = abs(y / x * x_whole - est)
        return min(lo, int(round(est - d))), max(hi, int(round(est + d)))


#: chains projected on every value of a sampled LowCardinality / Array column (fast), and the one the
#: others are ratio-estimated to
_EXACT_CHAINS = ("LZ4", "ZSTD(1)")
_SAMPLE_BASE = "ZSTD(1)"


def _lc_default_keys(v, fixed: int):
    """A FixedString(N) / number dictionary's default value (N zero bytes) as the writer's default key
    (b"": LowCardinalityWriter holds it at position 0), so the column re-encodes as it was written."""
    if fixed:
        zero = bytes(fixed)
        v.keys = [b"" if k == zero else k for k in v.keys]
    return v


def _advise_lc(adv, dataset, table, col, chain, granule, codecs, pieces, log_engine, L, cparts=(), fraction=None,
               seed: int = 0) -> None:
    """LowCardinality(String / FixedString(N) / a number, Nullable or not): see _advise_composite."""
    from . import chstrings as S
    ctype = adv.type
    nullable, inner, kind, width = _lc_parts(ctype)
    fixed = width if kind != "string" else 0
    dec = []
    for p in pieces:
        if "" not in p["raw"]:
            raise _NotAdvised(f"part {p['part']}: no keys stream {escape_for_file_name(col['name'])}.bin")
        v = _lc_default_keys(L.decode_lowcardinality(p["raw"][""], p["raw"].get(".dict", b""), fixed, nullable), fixed)
        rows = len(v.codes)
        g = v.block_rows if log_engine else _part_granule_rows(p["entry"], rows, granule)
        sizes, chars = v.sizes_chars()
        dec.append((p, v, g, sizes, chars, v.nulls()))
    # Compact parts: each granule a fresh state (the keys version, then one index block with its own keys)
    cdec = []
    for name, part, g_rows, pays, stored in cparts:
        grans = []
        for pay, r in zip(pays, g_rows):
            v = _lc_default_keys(L.decode_lowcardinality(pay[8:], pay[:8], fixed, nullable), fixed)
            if len(v.codes) != r:
                raise L.LowCardinalityError(f"Compact part {name}: a granule of {r} rows decodes to {len(v.codes)}")
            sz, ch = v.sizes_chars()
            grans.append((v, sz, ch, v.nulls()))
        cdec.append((name, part, g_rows, grans, stored))
    adv.current_bytes = sum(sum(p["stored"].get(s, 0) for s in ("", ".dict")) for p in pieces) + \
        sum(c[4] for c in cdec)
    adv.compact_rows = sum(sum(c[2]) for c in cdec)
    adv.rows = adv.sampled_rows = sum(len(d[1].codes) for d in dec) + adv.compact_rows
    adv.runs = adv.sampled_runs = len(dec) + len(cdec)
    adv.range_source = "every block of the column's streams read"
    allv = [(d[1], d[3], d[5]) for d in dec] + [(v, sz, nl) for c in cdec for v, sz, _, nl in c[3]]
    if nullable:
        adv.nulls = int(sum(int(nl.sum()) for _, _, nl in allv))
    used = set()
    for v, _, nl in allv:
        used.update(v.keys[c] for c in np.unique(v.codes[~nl]).tolist())
    adv.distinct_sampled = len(used)
    allsz = np.concatenate([sz for _, sz, _ in allv]) if allv else np.zeros(0, dtype=np.uint64)
    if len(allsz) and kind in ("string", "fixedstring"):
        live = allsz[~np.concatenate([nl for _, _, nl in allv])] if nullable else allsz
        if len(live):
            adv.length_min, adv.length_max, adv.length_mean = int(live.min()), int(live.max()), float(live.mean())
    if kind in ("int", "float") and len(used):
        vals = np.frombuffer(b"".join(sorted(k.ljust(width, b"\0") for k in used if k is not None)),
                             dtype=NUMPY_TYPE[inner])
        adv.value_min, adv.value_max = vals.min().item(), vals.max().item()
    vt = None if kind != "int" else inner

    if log_engine:
        sizes = np.concatenate([d[3] for d in dec])
        chars = b"".join(d[4] for d in dec)
        nulls = np.concatenate([d[5] for d in dec])
        blocks = _log_split(len(sizes))
        ends = np.cumsum(sizes, dtype=np.int64)
        starts = ends - sizes.astype(np.int64)

        def part(a, b):
            return chars[int(starts[a]):int(ends[b - 1])] if b > a else b""
        cur_pieces = {}
        for sub in ("", ".dict"):
            cur_pieces[sub], _ = _log_inserts(dataset, table, col["name"], sub)
        adv.current_projected_bytes = project_log(cur_pieces[""], chain) + project_log(cur_pieces[".dict"], chain)

        def lc_proj(ch: str, memo=[]) -> int:       # noqa: B006 -- the blocks, made once
            if not memo:
                memo.extend(lc_block(sizes[a:b], part(a, b), nulls[a:b].astype(np.uint8).tobytes() if nullable
                                     else None, fixed, update=k == 0) for k, (a, b) in enumerate(blocks))
            return project_log(memo, ch) + project_log([S.LC_KEYS_VERSION.to_bytes(8, "little")], ch)

        def plain_proj(ch: str) -> int:
            if kind == "string":
                out = project_log([S.inline_bytes(sizes[a:b], part(a, b)) for a, b in blocks if b > a], ch)
            else:
                out = project_log([S.pad_fixed(sizes[a:b], part(a, b), width) for a, b in blocks], ch,
                                  type_size=width if kind != "fixedstring" else None, value_type=vt)
            if nullable:
                out += project_log([nulls[a:b].astype(np.uint8).tobytes() for a, b in blocks], ch)
            return out

        def lc_tot(ch: str):
            b = lc_proj(ch)
            return b, (b, b)

        def plain_tot(ch: str):
            b = plain_proj(ch)
            return b, (b, b)
    else:
        def compact_lc(ch: str, memo={}) -> int:    # noqa: B006 -- the granules, made once
            if "g" not in memo:
                memo["g"] = [[S.LC_KEYS_VERSION.to_bytes(8, "little") + lc_block(
                    sz, chs, nl.astype(np.uint8).tobytes() if nullable else None, fixed) for _, sz, chs, nl in grans]
                    for _, _, _, grans, _ in cdec]
            return sum(project_compact(g, ch) for g in memo["g"])

        def compact_plain(ch: str) -> int:
            out = 0
            for name, part, g_rows, grans, _ in cdec:
                ssv = bool(getattr(getattr(part, "serialization", None), "string_with_size_stream", True))
                pays = []
                for _, sz, chs, nl in grans:
                    head = nl.astype(np.uint8).tobytes() if nullable else b""
                    if kind == "string":
                        body = sz.astype("<u8").tobytes() + chs if ssv else S.inline_bytes(sz, chs)
                    else:
                        body = S.pad_fixed(sz, chs, width)
                    pays.append(head + body)
                out += _compact_split(pays, g_rows, ch, 1 if nullable else 0,
                                      inner if kind in ("int", "float") else None)
            return out
        ssv = []
        for p, *_ in dec:
            part = (p["entry"].detail.get("clickhouse") or {}).get("part")
            ssv.append(bool(getattr(getattr(part, "serialization", None), "string_with_size_stream", True)))
        starts = [np.concatenate([[0], np.cumsum(d[2], dtype=np.int64)]) for d in dec]
        lc_memo: dict = {}

        def lc_chunks(k: int) -> tuple[list, list]:
            """Part ``k`` written as LowCardinality granule by granule: (keys-stream chunks, dictionary chunks)."""
            if k not in lc_memo:
                v, g = dec[k][1], dec[k][2]
                lc_memo[k] = _lc_granules(v.codes, v.keys, g, nullable, fixed)
            return lc_memo[k]

        def keys_range(k: int, g0: int, g1: int, ch: str) -> int:
            """Part ``k``'s granules g0..g1 of the keys stream (positions and additional keys, as the
            part's writer writes them), with the chain's generic codecs."""
            return S.project_blocks(lc_chunks(k)[0][g0:g1], _generic(ch))

        dict_memo: dict = {}

        def dict_total(ch: str) -> int:
            """Every part's dictionary stream (every key: its bytes are the part's distinct values); a slow
            chain, sampled, scaled from its fast base by its ratio on the first SLOW_BYTES of it."""
            from . import codecadvice as K
            if ch not in dict_memo:
                base = K.slow_base(ch)
                raw = b"".join(b"".join(lc_chunks(k)[1]) for k in range(len(dec)))
                if sampler.sampled and base is not None and len(raw) > 4 * SLOW_BYTES:
                    head = [raw[:SLOW_BYTES]]
                    dict_memo[ch] = round(dict_total(base) * S.project_blocks(head, ch)
                                          / max(1, S.project_blocks(head, base)))
                else:
                    dict_memo[ch] = sum(S.project_blocks(lc_chunks(k)[1], ch) for k in range(len(dec)))
            return dict_memo[ch]

        def plain_range(k: int, g0: int, g1: int, ch: str) -> int:
            p, v, g, sizes, chars, nl = dec[k]
            r0, r1 = int(starts[k][g0]), int(starts[k][g1])
            ends = np.cumsum(sizes[:r1], dtype=np.int64)
            c0 = int(ends[r0 - 1]) if r0 else 0
            gr = _value_bytes(sizes[r0:r1], chars[c0:int(ends[-1]) if r1 else 0], g[g0:g1])
            out = 0
            if kind == "string":
                if ssv[k]:
                    out += S.project_blocks([c for _, c in gr], ch) + S.project_blocks(
                        [x.astype("<u8").tobytes() for x, _ in gr], ch, 8, "UInt64")
                else:
                    out += S.project_blocks([S.inline_bytes(x, c) for x, c in gr], ch)
            else:
                out += S.project_blocks([S.pad_fixed(x, c, width) for x, c in gr], ch,
                                        width if kind != "fixedstring" else None, vt)
            if nullable:
                nb = nl[r0:r1].astype(np.uint8)
                out += S.project_blocks([nb[a:b].tobytes() for a, b in _slices(g[g0:g1])], _generic(ch))
            return out
        sampler = _RunSampler(adv, [d[2] for d in dec],
                              [[int(x) for x in np.add.reduceat(d[3], starts[k][:-1]).tolist()] if len(d[3]) else []
                               for k, d in enumerate(dec)], fraction, seed)
        adv.sampled_rows += adv.compact_rows
        adv.runs += len(cdec)
        adv.sampled_runs += len(cdec)
        # the current type re-encoded: its own index blocks when every value is projected (exact: the
        # part's write calls), else the sampled runs' ratio estimate
        if not sampler.sampled:
            adv.current_projected_bytes = compact_lc(chain)
            for p, v, g, *_ in dec:
                ck, cd = _lc_granules(v.codes, v.keys, v.block_rows, nullable, fixed)
                adv.current_projected_bytes += S.project_blocks(ck, _generic(chain)) + S.project_blocks(cd, chain)
        else:
            adv.current_projected_bytes = sampler.total(keys_range, chain, key="keys")[0] + dict_total(chain) + \
                compact_lc(chain)

        def lc_tot(ch: str):
            """The keys stream's sampled runs (each part written whole as the writer writes it: its
            positions and overflow keys in place), every dictionary, the Compact parts' granules."""
            est, (lo, hi) = sampler.total(keys_range, ch, key="keys")
            x = compact_lc(ch) + dict_total(ch)
            return est + x, (lo + x, hi + x)

        def plain_tot(ch: str):
            return sampler.total(plain_range, ch, compact_plain(ch), key="plain")
    plain = f"Nullable({inner})" if nullable else inner
    cands = []
    c = Candidate(plain, chain, f"{adv.distinct_sampled:,} distinct values in {adv.rows:,} rows (every value "
                                f"read): without LowCardinality each row holds its value"
                                + (f"; {adv.nulls:,} NULL rows: Nullable, a null map stream" if nullable else ""))
    c.projected_bytes, c.ci95 = plain_tot(chain)
    if c.projected_bytes < adv.current_bytes:
        cands.append(c)
    else:
        adv.notes.append(f"{plain} projected {c.projected_bytes:,} bytes, not smaller than now "
                         f"({adv.current_bytes:,}): LowCardinality pays at {adv.distinct_sampled:,} distinct values")
    if codecs:
        # the generic codecs only on a LowCardinality column (its positions take no other)
        _search_chains(adv, lc_tot, "lowcardinality", ctype, ctype, chain, adv.current_bytes, "")
        for c in cands:
            _search_chains(adv, plain_tot, "string" if kind in ("string", "fixedstring") else kind, c.type, ctype,
                           chain, c.projected_bytes, f" (the {c.type} suggestion with this codec)",
                           skip=_ARRAY_SKIP if kind in ("int", "float") else ())
    adv.candidates = cands


def _advise_array(adv, dataset, table, col, chain, granule, codecs, pieces, log_engine, L, cparts=(),
                  fraction=None, seed: int = 0) -> None:
    """Array(integer / Float32 / Float64): see _advise_composite.  Its sizes stream (``.size0``,
    UInt64 a row, src/DataTypes/Serializations/SerializationArray.cpp) takes the chain's generic codecs
    only in a Wide part (mergeTreeCodecBlockCounts of an Array(UInt32) CODEC(Delta, ZSTD(1)) column:
    ZSTD(1) on ``.size0``), the whole chain in a Log table (LogSink codes each file of a column with
    it, Delta / T64 taking the element type on both files); the elements the chain with the element
    type's width (FPC and GCD not tried: _ARRAY_SKIP)."""
    ctype = adv.type
    et = _array_element(ctype)
    w = WIDTH[et]
    vt = None if et.startswith("Float") else et
    dec = []
    for p in pieces:
        _array_streams_there(p, col)
        sizes = L.read_array_sizes(p["raw"][".size0"])
        elems = np.frombuffer(p["raw"][""], dtype=NUMPY_TYPE[et])
        if int(sizes.sum()) != len(elems):
            raise L.LowCardinalityError(f"part {p['part']}: the sizes add up to {int(sizes.sum()):,} elements, "
                                        f"the elements stream holds {len(elems):,}")
        g = None if log_engine else _part_granule_rows(p["entry"], len(sizes), granule)
        dec.append((p, sizes, elems, g))
    # Compact parts: a granule is its sizes (UInt64 a row) then its elements
    cdec = []
    for name, part, g_rows, pays, stored in cparts:
        grans = []
        for pay, r in zip(pays, g_rows):
            sz = L.read_array_sizes(pay, 0, r)
            el = np.frombuffer(pay[8 * r:], dtype=NUMPY_TYPE[et])
            if int(sz.sum()) != len(el):
                raise L.LowCardinalityError(f"Compact part {name}: a granule's sizes add up to {int(sz.sum()):,} "
                                            f"elements, it holds {len(el):,}")
            grans.append((sz, el))
        cdec.append((name, g_rows, grans, stored))
    adv.current_bytes = sum(sum(p["stored"].get(s, 0) for s in ("", ".size0")) for p in pieces) + \
        sum(c[3] for c in cdec)
    adv.compact_rows = sum(sum(c[1]) for c in cdec)
    adv.rows = adv.sampled_rows = sum(len(d[1]) for d in dec) + adv.compact_rows
    adv.runs = adv.sampled_runs = len(dec) + len(cdec)
    allv = np.concatenate([d[2] for d in dec] + [el for c in cdec for _, el in c[2]]) if dec or cdec else np.zeros(0)
    adv.range_source = "every element read"
    if len(allv):
        adv.value_min, adv.value_max = allv.min().item(), allv.max().item()
    if et.startswith("Float") and len(allv):
        adv.integral = bool(np.all(np.mod(allv, 1) == 0))
    if log_engine:
        sizes = np.concatenate([d[1] for d in dec])
        blocks = _log_split(len(sizes))
        off = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])
        cur = {}
        for sub in ("", ".size0"):
            cur[sub], _ = _log_inserts(dataset, table, col["name"], sub)
        # LogSink codes both files with the codec made for the column: Delta / T64 take the element
        # type on the sizes file too (chdb 4.4.0: Array(UInt16) CODEC(Delta, ZSTD(1)) made anew equals
        # the projection with Delta(2) on both files, to the byte)
        adv.current_projected_bytes = project_log(cur[""], chain, w, vt) + project_log(cur[".size0"], chain, w, vt)

        def proj(t: str, ch: str) -> int:
            tw, tv = WIDTH[t], (None if t.startswith("Float") else t)
            vals = allv.astype(NUMPY_TYPE[t])
            return (project_log([sizes[a:b].astype("<u8").tobytes() for a, b in blocks], ch, tw, tv)
                    + project_log([vals[off[a]:off[b]].tobytes() for a, b in blocks], ch, tw, tv))

        def tot(t: str, ch: str):
            b = proj(t, ch)
            return b, (b, b)
    else:
        from . import chstrings as S
        row_at = [np.concatenate([[0], np.cumsum(g, dtype=np.int64)]) for _, _, _, g in dec]
        el_at = [np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)]) for _, sizes, _, _ in dec]
        conv: dict = {}

        def values_as(k: int, t: str) -> np.ndarray:
            if (k, t) not in conv:
                conv[(k, t)] = dec[k][2].astype(NUMPY_TYPE[t])
            return conv[(k, t)]

        def arr_range(t: str):
            tw, tv = WIDTH[t], (None if t.startswith("Float") else t)

            def project(k: int, g0: int, g1: int, ch: str) -> int:
                _, sizes, _, g = dec[k]
                vals, off, rows0 = values_as(k, t), el_at[k], int(row_at[k][g0])
                sl = [(a + rows0, b + rows0) for a, b in _slices(g[g0:g1])]
                return (S.project_blocks([sizes[a:b].astype("<u8").tobytes() for a, b in sl], _generic(ch), 8,
                                         "UInt64")
                        + S.project_blocks([vals[off[a]:off[b]].tobytes() for a, b in sl], ch, tw, tv))
            return project

        def compact(t: str, ch: str) -> int:
            out = 0
            for name, g_rows, grans, _ in cdec:
                pays = [sz.astype("<u8").tobytes() + el.astype(NUMPY_TYPE[t]).tobytes() for sz, el in grans]
                out += _compact_split(pays, g_rows, ch, 8, t)
            return out
        gbytes = []
        for k, (_, sizes, _, g) in enumerate(dec):
            ra = row_at[k]
            gbytes.append([int(8 * (ra[i + 1] - ra[i]) + w * (el_at[k][ra[i + 1]] - el_at[k][ra[i]]))
                           for i in range(len(g))])
        sampler = _RunSampler(adv, [d[3] for d in dec], gbytes, fraction, seed)
        adv.sampled_rows += adv.compact_rows
        adv.runs += len(cdec)
        adv.sampled_runs += len(cdec)

        def tot(t: str, ch: str):
            return sampler.total(arr_range(t), ch, compact(t, ch), key=t)

        def proj(t: str, ch: str) -> int:
            return tot(t, ch)[0]
        adv.current_projected_bytes = proj(et, chain)
    cands = []
    if vt is not None and len(allv):
        for t in _fitting_ints(int(allv.min()), int(allv.max()), w):
            c = Candidate(f"Array({t})", _chain_for(chain, t, chain),
                          f"every element is in {int(allv.min()):,}..{int(allv.max()):,} (all {len(allv):,} read): "
                          f"{t} holds them")
            c.projected_bytes, c.ci95 = tot(t, c.codec)
            if c.projected_bytes < adv.current_bytes:
                cands.append(c)
            break                   # the narrowest that fits
    elif et == "Float64" and len(allv) and np.array_equal(allv.astype("<f4").astype("<f8"), allv):
        c = Candidate("Array(Float32)", chain, f"every element of the {len(allv):,} converts to Float32 and back "
                                               f"unchanged")
        c.projected_bytes, c.ci95 = tot("Float32", chain)
        if c.projected_bytes < adv.current_bytes:
            cands.append(c)
    if codecs:
        best = min(cands, key=lambda c: c.projected_bytes, default=None)
        for t, beat, why in ([(best.type, best.projected_bytes, f" (the {best.type} suggestion with this codec)")]
                             if best else []) + [(ctype, adv.current_bytes, "")]:
            e = _array_element(t)
            _search_chains(adv, lambda ch, e=e: tot(e, ch), "float" if e.startswith("Float") else "int", t, ctype,
                           chain, beat, why, skip=_ARRAY_SKIP)
    adv.candidates = cands


#: an Array(String) column is projected on every value; sampled (``--sample``), one of more element bytes
#: than this gets the general codecs only (no level search: ZSTD(19) on all of it would take seconds)
ARRAY_STRINGS_FULL_BYTES = 4 << 20


def _advise_array_strings(adv, dataset, table, col, chain, granule, codecs, pieces, log_engine, L, cparts,
                          fraction=None) -> None:
    """Array(String), every value read (not sampled): its ``.size0`` (UInt64 elements a row), then the
    elements as a String column (``.size`` UInt64 sizes and the bytes in a Wide part written with the
    sizes stream, else the sizes inline; a Compact granule its row sizes, element sizes and bytes; a
    Log table's file inline).  Suggestion: Array(LowCardinality(String)) when the distinct elements are
    few (the elements through the LowCardinality writer, a granule's elements an index block), and the
    general codecs on each."""
    from . import chstrings as S
    ctype = adv.type
    dec = []            # (part entry or None, row sizes, element sizes, element bytes, granule rows, size stream)
    for p in pieces:
        _array_streams_there(p, col)
        rs = L.read_array_sizes(p["raw"][".size0"])
        n_el = int(rs.sum())
        if ".size" in p["raw"]:
            es = L.read_array_sizes(p["raw"][".size"], 0, n_el)
            ch = p["raw"][""]
            ssv = True
        else:
            es, ch = S.parse_inline(p["raw"][""], count=n_el)
            ssv = False
        if int(es.sum()) != len(ch):
            raise L.LowCardinalityError(f"part {p['part']}: the element sizes add up to {int(es.sum()):,} bytes, "
                                        f"the stream holds {len(ch):,}")
        g = None if log_engine else _part_granule_rows(p["entry"], len(rs), granule)
        dec.append((p, rs, es, ch, g, ssv))
    cdec = []
    for name, part, g_rows, pays, stored in cparts:
        ssv = bool(getattr(getattr(part, "serialization", None), "string_with_size_stream", True))
        grans = []
        for pay, r in zip(pays, g_rows):
            rs = L.read_array_sizes(pay, 0, r)
            n_el = int(rs.sum())
            if ssv:
                es = L.read_array_sizes(pay, 8 * r, n_el)
                ch = pay[8 * r + 8 * n_el:]
            else:
                es, ch = S.parse_inline(pay, count=n_el, start=8 * r)
            if int(es.sum()) != len(ch):
                raise L.LowCardinalityError(f"Compact part {name}: a granule's element sizes add up to "
                                            f"{int(es.sum()):,} bytes, it holds {len(ch):,}")
            grans.append((rs, es, ch))
        cdec.append((name, g_rows, grans, ssv, stored))
    adv.current_bytes = sum(sum(p["stored"].get(x, 0) for x in ("", ".size0", ".size")) for p in pieces) + \
        sum(c[4] for c in cdec)
    adv.compact_rows = sum(sum(c[1]) for c in cdec)
    adv.rows = adv.sampled_rows = sum(len(d[1]) for d in dec) + adv.compact_rows
    adv.runs = adv.sampled_runs = len(dec) + len(cdec)
    adv.range_source = "every element read"
    all_es = [d[2] for d in dec] + [es for c in cdec for _, es, _ in c[2]]
    all_ch = [d[3] for d in dec] + [ch for c in cdec for _, _, ch in c[2]]
    sizes = np.concatenate(all_es) if all_es else np.zeros(0, dtype=np.uint64)
    chars = b"".join(all_ch)
    codes, keys = S.factorize(sizes, chars, max(1, int(LC_MOST_DISTINCT * len(sizes))))
    if len(sizes):
        adv.length_min, adv.length_max, adv.length_mean = int(sizes.min()), int(sizes.max()), float(sizes.mean())
    adv.distinct_sampled = len(keys) if keys is not None else None

    def el_slices(rs, g):
        """Each granule's element range."""
        off = np.concatenate([[0], np.cumsum(rs, dtype=np.int64)])
        return [(int(off[a]), int(off[b])) for a, b in _slices(g)]

    def str_chunks(es, ch, sl, ssv):
        ends = np.concatenate([[0], np.cumsum(es, dtype=np.int64)])
        if ssv:
            return ([ch[int(ends[a]):int(ends[b])] for a, b in sl], [es[a:b].astype("<u8").tobytes() for a, b in sl])
        return [S.inline_bytes(es[a:b], ch[int(ends[a]):int(ends[b])]) for a, b in sl], None
    code_at = np.concatenate([[0], np.cumsum([len(x) for x in all_es], dtype=np.int64)])

    if log_engine:
        rs = np.concatenate([d[1] for d in dec])
        blocks = _log_split(len(rs))
        sl = el_slices(rs, [b - a for a, b in blocks])
        cur = {}
        for sub in ("", ".size0"):
            cur[sub], _ = _log_inserts(dataset, table, col["name"], sub)
        adv.current_projected_bytes = project_log(cur[""], chain) + project_log(cur[".size0"], chain)
        size0 = [rs[a:b].astype("<u8").tobytes() for a, b in blocks]

        def plain(ch_: str) -> int:
            body, _ = str_chunks(sizes, chars, sl, False)
            return project_log(size0, ch_) + project_log([b for b in body if b], ch_)

        def lc(ch_: str) -> int:
            ends = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])
            pieces_ = [lc_block(sizes[a:b], chars[int(ends[a]):int(ends[b])], None, 0, update=k == 0)
                       for k, (a, b) in enumerate(sl)]
            return (project_log(size0, ch_) + project_log(pieces_, ch_)
                    + project_log([S.LC_KEYS_VERSION.to_bytes(8, "little")], ch_))
    else:
        def plain(ch_: str) -> int:
            out = 0
            for p, rs, es, ch, g, ssv in dec:
                sl = el_slices(rs, g)
                body, szs = str_chunks(es, ch, sl, ssv)
                out += S.project_blocks([rs[a:b].astype("<u8").tobytes() for a, b in _slices(g)], _generic(ch_), 8,
                                        "UInt64")
                out += S.project_blocks(body, ch_) + (S.project_blocks(szs, ch_, 8, "UInt64") if szs else 0)
            for name, g_rows, grans, ssv, _ in cdec:
                out += project_compact([rs.astype("<u8").tobytes() + (es.astype("<u8").tobytes() + ch if ssv else
                                                                      S.inline_bytes(es, ch)) for rs, es, ch in grans],
                                       ch_)
            return out

        def lc(ch_: str, memo={}) -> int:        # noqa: B006 -- the chunks, made once
            if not memo:
                # ``codes`` run over the Wide parts' elements, then the Compact parts' (code_at: each piece's first)
                for k, (p, rs, es, ch, g, ssv) in enumerate(dec):
                    sl = el_slices(rs, g)
                    cs = codes[int(code_at[k]):int(code_at[k + 1])]
                    ck, cd = _lc_granules(cs, keys, [b - a for a, b in sl], False, 0)
                    memo[("w", k)] = ([rs[a:b].astype("<u8").tobytes() for a, b in _slices(g)], ck, cd)
                for j, (name, g_rows, grans, ssv, _) in enumerate(cdec):
                    # a Compact granule: the keys version (the state prefix), its row sizes, its index block
                    memo[("c", j)] = [S.LC_KEYS_VERSION.to_bytes(8, "little") + rs.astype("<u8").tobytes()
                                      + lc_block(es, ch, None, 0) for rs, es, ch in grans]
            out = 0
            for key, val in memo.items():
                if key[0] == "w":
                    s0, ck, cd = val
                    out += (S.project_blocks(s0, _generic(ch_), 8, "UInt64") + S.project_blocks(ck, _generic(ch_))
                            + S.project_blocks(cd, ch_))
                else:
                    out += project_compact(val, ch_)
            return out
        adv.current_projected_bytes = plain(chain)
    cands = []
    if keys is not None and len(sizes):
        c = Candidate("Array(LowCardinality(String))", chain,
                      f"{len(keys):,} distinct elements in {len(sizes):,} (every element read): a dictionary per part "
                      f"and a 1-8 byte position an element (lossless)")
        c.projected_bytes = lc(chain)
        c.ci95 = (c.projected_bytes, c.projected_bytes)
        if c.projected_bytes < adv.current_bytes:
            cands.append(c)
        else:
            adv.notes.append(f"{c.type} projected {c.projected_bytes:,} bytes, not smaller than now "
                             f"({adv.current_bytes:,})")
    if codecs:
        from . import codecadvice as K
        exact = (lambda f: (lambda ch_: (lambda b: (b, (b, b)))(f(ch_))))
        if fraction is not None and len(chars) > ARRAY_STRINGS_FULL_BYTES:
            adv.notes.append(f"{len(chars):,} bytes of elements, sampled: the general codecs only "
                             f"({', '.join(K.GENERAL)}; --sample all searches the levels)")
            for t, f, beat, why in [(ctype, plain, adv.current_bytes, "")] + [
                    (c.type, lc, c.projected_bytes, f" (the {c.type} suggestion with this codec)") for c in cands]:
                found = sorted(((ch_, *exact(f)(ch_)) for ch_ in K.GENERAL), key=lambda x: x[1])
                _keep_chains(adv, found, t, ctype, chain, True, beat, why)
        else:
            _search_chains(adv, exact(plain), "string", ctype, ctype, chain, adv.current_bytes, "")
            for c in cands:
                _search_chains(adv, exact(lc), "lowcardinality", c.type, ctype, chain, c.projected_bytes,
                               f" (the {c.type} suggestion with this codec)")
    adv.candidates = cands


def _advise_stripe_composite(adv: ColumnAdvice, dataset, table: dict, col: dict) -> None:
    """A StripeLog table's LowCardinality and Array(number / String) columns: each Native block of the
    column decoded (NativeWriter: a LowCardinality block is the keys version then one index block with
    its own keys; an Array block its cumulative offsets, then for Array(LowCardinality) the keys version,
    then the elements), the suggestions projected as the table made anew writes them (as _advise_stripe:
    Native blocks of the squashed rows, the data.bin's codec, no codec chains)."""
    from dbxray.parsers.clickhouse import lowcardinality as L

    from . import chstrings as S
    ctype = adv.type
    base = _base_type(ctype)
    data, pieces, last_col, ncols = _stripe_column(dataset, table, col["name"])
    if not pieces:
        raise _NotAdvised("no block of this column in data.bin: not advised")
    head = _native_header(col["name"], ctype)
    chain = _stripe_current(adv, dataset, table, col, data, pieces)
    adv.range_source = "every block of data.bin read"
    new = _squashed([r for r, _, _ in pieces])
    cands: list = []            # (candidate, lay(first row, end row) -> the column's bytes after its header)
    try:
        for rows, _, raw in pieces:
            if not raw.startswith(head):
                raise _NotAdvised("a Native block of this column does not start with its name and type: not advised")
        if base == "LowCardinality":
            nullable, inner, kind, width = _lc_parts(ctype)
            fixed = width if kind != "string" else 0
            szs, chs, nls, used = [], [], [], set()
            for rows, _, raw in pieces:
                pos = len(head)
                ib = L.read_index_block(raw, pos + 8, fixed)
                v = _lc_default_keys(L.decode_lowcardinality(raw[pos + 8:ib.end], raw[pos:pos + 8], fixed, nullable),
                                     fixed)
                if len(v.codes) != rows:
                    raise L.LowCardinalityError(f"a Native block of {rows} rows decodes to {len(v.codes)}")
                sz, ch = v.sizes_chars()
                nl = v.nulls()
                used.update(v.keys[c] for c in np.unique(v.codes[~nl]).tolist())
                szs.append(sz)
                chs.append(ch)
                nls.append(nl)
            sz, ch, nl = np.concatenate(szs), b"".join(chs), np.concatenate(nls)
            adv.distinct_sampled = len(used)
            if nullable:
                adv.nulls = int(nl.sum())
            ends = np.cumsum(sz, dtype=np.int64)
            starts = ends - sz.astype(np.int64)
            nm = nl.astype(np.uint8).tobytes()

            def part(a: int, b: int) -> bytes:
                return ch[int(starts[a]):int(ends[b - 1])] if b > a else b""
            plain = f"Nullable({inner})" if nullable else inner

            def lay(a: int, b: int) -> bytes:
                body = S.inline_bytes(sz[a:b], part(a, b)) if kind == "string" else S.pad_fixed(sz[a:b], part(a, b),
                                                                                                  width)
                return (nm[a:b] if nullable else b"") + body
            cands.append((Candidate(plain, chain, f"{adv.distinct_sampled:,} distinct values in {adv.rows:,} rows "
                                                  f"(every value read): without LowCardinality each row holds its "
                                                  f"value" + ("; Nullable: a null map" if nullable else "")), lay))
        else:
            inner = ctype[ctype.index("(") + 1:ctype.rindex(")")].strip()
            is_str = inner == "String"
            et = inner if is_str else _array_element(ctype)
            all_rs, all_es, all_ch, all_v = [], [], [], []
            for rows, _, raw in pieces:
                pos = len(head)
                rs = L.read_array_offsets(raw, pos, rows)
                pos += 8 * rows
                n_el = int(rs.sum())
                if is_str:
                    es, chs = S.parse_inline(raw, count=n_el, start=pos)
                    all_es.append(es)
                    all_ch.append(chs)
                else:
                    w = WIDTH[et]
                    if len(raw) < pos + n_el * w:
                        raise L.LowCardinalityError(f"a Native block holds fewer than its {n_el:,} elements")
                    all_v.append(np.frombuffer(raw[pos:pos + n_el * w], dtype=NUMPY_TYPE[et]))
                all_rs.append(rs)
            rs = np.concatenate(all_rs)
            off = np.concatenate([[0], np.cumsum(rs, dtype=np.int64)])

            def offs(a: int, b: int) -> bytes:
                return np.cumsum(rs[a:b], dtype=np.int64).astype("<u8").tobytes()
            if is_str:
                es, ch = np.concatenate(all_es), b"".join(all_ch)
                eends = np.concatenate([[0], np.cumsum(es, dtype=np.int64)])
                _, keys = S.factorize(es, ch, max(1, int(LC_MOST_DISTINCT * len(es))))
                adv.distinct_sampled = len(keys) if keys is not None else None
                if keys is not None and len(es):
                    def lay(a: int, b: int) -> bytes:
                        e0, e1 = int(off[a]), int(off[b])
                        return (S.LC_KEYS_VERSION.to_bytes(8, "little") + offs(a, b)
                                + lc_block(es[e0:e1], ch[int(eends[e0]):int(eends[e1])], None, 0))
                    cands.append((Candidate("Array(LowCardinality(String))", chain,
                                            f"{len(keys):,} distinct elements in {len(es):,} (every element read): "
                                            f"each Native block of the table made anew writes its own keys and a "
                                            f"1-8 byte position an element (lossless)"), lay))
            else:
                allv = np.concatenate(all_v) if all_v else np.zeros(0, dtype=NUMPY_TYPE[et])
                if len(allv):
                    adv.value_min, adv.value_max = allv.min().item(), allv.max().item()
                nt = None
                if not et.startswith("Float") and len(allv):
                    nt = next(iter(_fitting_ints(int(allv.min()), int(allv.max()), WIDTH[et])), None)
                elif et == "Float64" and len(allv) and np.array_equal(allv.astype("<f4").astype("<f8"), allv):
                    nt = "Float32"
                if nt is not None:
                    def lay(a: int, b: int, nt=nt) -> bytes:
                        return offs(a, b) + allv[int(off[a]):int(off[b])].astype(NUMPY_TYPE[nt]).tobytes()
                    cands.append((Candidate(f"Array({nt})", chain, f"every element is in {adv.value_min:,}.."
                                                                   f"{adv.value_max:,} (all {len(allv):,} read): "
                                                                   f"{nt} holds them"), lay))
    except (L.LowCardinalityError, S.StringReadError, ValueError) as e:
        raise _NotAdvised(f"its Native blocks could not be decoded: {e}") from None
    out = []
    for c, lay in cands:
        pos, blocks = 0, []
        for r in new:
            blocks.append(_native_header(col["name"], c.type) + lay(pos, pos + r))
            if last_col and len(blocks) < len(new):     # the next block's header after the last column
                blocks[-1] += _block_header(columns=ncols, rows=new[len(blocks)])
            pos += r
        c.projected_bytes = project_log(blocks, chain)
        c.ci95 = (c.projected_bytes, c.projected_bytes)
        c.saving_bytes = adv.current_bytes - c.projected_bytes
        c.ddl = (f"-- StripeLog takes no MODIFY COLUMN: create the table anew with `{col['name']}` {c.type} "
                 f"and INSERT ... SELECT * FROM the table SETTINGS max_threads = 1 (its Native blocks read as "
                 f"they are and written again squashed into blocks of min_insert_block_size_rows or more, as "
                 f"projected)")
        if c.projected_bytes >= adv.current_bytes:
            adv.notes.append(f"{c.type} projected {c.projected_bytes:,} bytes, not smaller than now "
                             f"({adv.current_bytes:,})")
            continue
        out.append(c)
    adv.candidates = sorted(out, key=lambda c: c.projected_bytes)
    adv.notes.append("StripeLog writes every column with the server's default codec (its CODEC is not applied): "
                     "no codec chain is advised")

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
import re
import time
from dataclasses import dataclass, field

import numpy as np

from dbxray.parsers.clickhouse import payloads
from dbxray.parsers.clickhouse.streams import escape_for_file_name
from dbxray.parsers.codecs import ch_encode

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
#: bytes of old values per sampled run (whole blocks, at least one)
RUN_BYTES = 1 << 20
MIN_RUNS = 4
#: a run holds a multiple of this many granules: the most a 64 KiB block of a 1-byte type
#: takes at 8192 rows (min_compress_block_size / index_granularity)
ALIGN_GRANULES = 8
MODIFY_WARNING = ("ALTER TABLE ... MODIFY COLUMN rewrites the column in every part (a mutation that reads "
                  "and writes the whole column, and needs room for the new files until it ends)")
_FLOAT_ONLY = ("FPC",)
_INT_ONLY = ("T64", "GCD")
#: codecs whose argument is the value width (CompressionCodecDelta.cpp, DoubleDelta, Gorilla)
_WIDTH_ARG = ("DELTA", "DOUBLEDELTA", "GORILLA")


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

    def to_json(self) -> dict:
        return {"type": self.type, "codec": self.codec, "reason": self.reason, "lossless": self.lossless,
                "max_abs_error": self.max_abs_error, "max_rel_error": self.max_rel_error,
                "projected_bytes": self.projected_bytes, "projected_bytes_ci95": list(self.ci95),
                "saving_bytes": self.saving_bytes, "ddl": self.ddl}


@dataclass
class ColumnAdvice:
    """The advice for one column."""

    database: str
    table: str
    column: str
    type: str
    current_bytes: int = 0                  # stored bytes of the main stream in the active Wide parts
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
    candidates: list[Candidate] = field(default_factory=list)
    not_advised: str | None = None

    def to_json(self) -> dict:
        return {"database": self.database, "table": self.table, "column": self.column, "type": self.type,
                "current_bytes": self.current_bytes, "current_codec": self.current_codec, "rows": self.rows,
                "sampled_rows": self.sampled_rows, "runs": self.runs, "sampled_runs": self.sampled_runs,
                "min": self.value_min, "max": self.value_max, "range_source": self.range_source,
                "integral": self.integral, "current_projected_bytes": self.current_projected_bytes,
                "candidates": [c.to_json() for c in self.candidates], "not_advised": self.not_advised}


@dataclass
class _Run:
    entry: object
    blocks: list[int]
    rows: int
    stored: int


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


def _main_stream_runs(dataset, table: dict, column: str, width: int, granule: int) -> tuple[list[_Run], int, int]:
    """Runs of consecutive blocks of the column's main stream in the active Wide
    parts: (runs, rows, stored bytes).  A run ends at a block end once it holds
    RUN_BYTES and a multiple of ALIGN_GRANULES granules (or at the part's end), so
    the blocks of any narrower type start at a run's start as the writer would
    start them (a block holds 1, 2, 4 or 8 granules of a 1..8-byte type)."""
    stem = escape_for_file_name(column)
    by_entry: dict[int, tuple[object, list[int]]] = {}
    for e, i in payloads.column_blocks(dataset, table["database"], table["table"], column):
        sec = e.sections.get("clickhouse", {})
        if e.role != "part_column_data" or sec.get("stream") != stem or sec.get("substream"):
            continue
        by_entry.setdefault(id(e), (e, []))[1].append(i)
    runs: list[_Run] = []
    rows = stored = 0
    for e, idx in by_entry.values():
        idx.sort()
        logical = e.units["logical"]
        cur: list[int] = []
        acc = 0
        for i in idx:
            cur.append(i)
            acc += int(logical[i])
            if acc >= RUN_BYTES and (acc // width) % (ALIGN_GRANULES * granule) == 0:
                runs.append(_mkrun(e, cur, width))
                cur, acc = [], 0
        if cur:
            runs.append(_mkrun(e, cur, width))
    for r in runs:
        rows += r.rows
        stored += r.stored
    return runs, rows, stored


def _mkrun(e, blocks: list[int], width: int) -> _Run:
    logical = int(sum(int(e.units["logical"][i]) for i in blocks))
    st = int(sum(int(e.units["stored"][i]) for i in blocks))
    return _Run(e, list(blocks), logical // width, st)


def _values(run: _Run, dtype: str) -> np.ndarray:
    parts = [payloads.unit_payload(run.entry, i, max_output=int(run.entry.units["logical"][i])) for i in run.blocks]
    return np.frombuffer(b"".join(parts), dtype=dtype)


def project_stream(values: np.ndarray, new_type: str, chain: str, granule_rows: int) -> int:
    """Stored bytes of ``values`` written as ``new_type`` with ``chain``: cut into
    blocks at granule ends as the MergeTree writer cuts them, each block encoded and
    framed (checksum + header)."""
    raw = values.astype(NUMPY_TYPE[new_type], copy=False).tobytes()
    w = WIDTH[new_type]
    n = len(values)
    full, last = divmod(n, granule_rows)
    granules = [granule_rows * w] * full + ([last * w] if last else [])
    out = 0
    pos = 0
    vt = new_type if new_type in NUMPY_TYPE and not new_type.startswith("Float") else None
    for size in clickhouse_block_sizes(len(raw), granules, CH_MIN_COMPRESS_BLOCK, CH_MAX_COMPRESS_BLOCK):
        out += CH_CHECKSUM + len(ch_encode.encode_chain(raw[pos:pos + size], chain, type_size=w, value_type=vt))
        pos += size
    return out


def _estimate(per_run: list[tuple[int, int]], total_rows: int, n_runs: int) -> tuple[int, tuple[int, int]]:
    """Ratio estimate of the column's bytes from (rows, projected bytes) of the sampled
    runs, with a 95% interval (finite population corrected; 0 width when all runs read)."""
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
    se_ratio = math.sqrt(max((1 - f) * resid.var(ddof=1) / n, 0.0)) / x.mean()
    t = 1.96 if n >= 30 else float(_T95.get(n - 1, 2.0))
    half = t * se_ratio * total_rows
    return int(round(est)), (int(round(est - half)), int(round(est + half)))


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


def advise_column(dataset, table: dict, col: dict, fraction: float | None, seed: int = 0) -> ColumnAdvice:
    """The advice for one column (``fraction`` None: every run)."""
    db, name = table["database"], table["table"]
    ctype = col.get("type", "")
    adv = ColumnAdvice(db, name, col["name"], ctype)
    base = _base_type(ctype)
    if base in NO_LAYOUT:
        adv.not_advised = f"{base} columns are not advised: their values have no fixed layout to narrow"
        return adv
    if base not in NUMPY_TYPE or "(" in ctype:
        adv.not_advised = (f"{ctype}: not advised (the advisor narrows plain integer and Float32/Float64 "
                           f"columns only)")
        return adv
    sparse = [p["name"] for p in table.get("parts") or [] if p.get("state") == "active"
              for c in p.get("columns") or [] if c.get("name") == col["name"] and c.get("serialization_kind") == "Sparse"]
    if sparse:
        adv.not_advised = (f"Sparse serialization in part {sparse[0]}: its stream holds only the non-default "
                           f"values (not advised)")
        return adv
    default = _default_codec(table)
    chain = _ddl_chain(col, default)
    adv.current_codec = chain
    width = WIDTH[base]
    try:
        granule = int((table.get("settings") or {}).get("index_granularity", 8192))
    except ValueError:
        granule = 8192
    runs, adv.rows, adv.current_bytes = _main_stream_runs(dataset, table, col["name"], width, granule)
    adv.runs = len(runs)
    if not runs:
        adv.not_advised = "no blocks of this column in active Wide parts (Compact parts are not advised)"
        return adv
    rng = np.random.default_rng(seed)
    if fraction is None or fraction >= 1:
        pick = np.arange(len(runs))
    else:
        k = min(len(runs), max(MIN_RUNS, int(math.ceil(fraction * len(runs)))))
        pick = np.sort(rng.choice(len(runs), size=k, replace=False))
    adv.sampled_runs = len(pick)
    values = []
    try:
        for j in pick:
            values.append(_values(runs[int(j)], NUMPY_TYPE[base]))
    except Exception as e:      # noqa: BLE001 -- a block that does not decode: this column only
        adv.not_advised = f"its blocks could not be decoded: {e}"
        return adv
    adv.sampled_rows = int(sum(len(v) for v in values))
    allv = np.concatenate(values) if values else np.zeros(0)
    is_float = base.startswith("Float")
    if is_float:
        finite = np.isfinite(allv).all()
        integral = bool(finite and len(allv) and np.all(np.floor(allv) == allv))
        adv.integral = integral
        adv.value_min = float(allv.min()) if len(allv) else None
        adv.value_max = float(allv.max()) if len(allv) else None
        adv.range_source = "sampled values" if len(pick) < len(runs) else "every value"
    else:
        exact = _stats_range(table, col["name"])
        if exact is not None:
            adv.value_min, adv.value_max = exact
            adv.range_source = "statistics (exact, every active part)"
        else:
            adv.value_min, adv.value_max = (int(allv.min()), int(allv.max())) if len(allv) else (None, None)
            adv.range_source = "sampled values" if len(pick) < len(runs) else "every value"
    cands: list[Candidate] = []
    if adv.value_min is not None:
        if not is_float:
            for t in _fitting_ints(adv.value_min, adv.value_max, width):
                cands.append(Candidate(t, _chain_for(chain, t, default),
                                       f"values {adv.value_min}..{adv.value_max} ({adv.range_source}) fit {t}"))
        else:
            if adv.integral and -2**63 <= adv.value_min and adv.value_max < 2**64:
                for t in _fitting_ints(int(adv.value_min), int(adv.value_max), width + 1):
                    cands.append(Candidate(t, _chain_for(chain, t, default),
                                           f"every value is a whole number in {int(adv.value_min)}.."
                                           f"{int(adv.value_max)} ({adv.range_source}): {t} holds them exactly"))
            if base == "Float64":
                back = allv.astype("<f4").astype("<f8")
                with np.errstate(invalid="ignore", over="ignore"):
                    err = np.abs(back - allv)
                    rel = np.where(allv != 0, err / np.abs(allv), err)
                lossless = bool(np.array_equal(back, allv, equal_nan=True))
                c = Candidate("Float32", _chain_for(chain, "Float32", default), "", lossless=lossless)
                if lossless:
                    c.reason = f"every {'sampled ' if len(pick) < len(runs) else ''}value converts to Float32 and back unchanged (lossless)"
                else:
                    c.max_abs_error = float(np.nanmax(err))
                    c.max_rel_error = float(np.nanmax(rel))
                    c.reason = (f"largest error seen {c.max_abs_error:.3g} "
                                f"(relative {c.max_rel_error:.3g})")
                cands.append(c)
    key_column = col["name"] in key_columns(table)
    # project the current type too (the model's own error against the real bytes)
    per_cur = []
    per = {id(c): [] for c in cands}
    for v, j in zip(values, pick):
        r = runs[int(j)]
        if cands:       # the current type re-encoded: the model's check beside the candidates
            per_cur.append((r.rows, project_stream(v, base, chain, granule)))
        for c in cands:
            per[id(c)].append((r.rows, project_stream(v, c.type, c.codec, granule)))
    adv.current_projected_bytes, _ = _estimate(per_cur, adv.rows, len(runs))
    for c in cands:
        c.projected_bytes, c.ci95 = _estimate(per[id(c)], adv.rows, len(runs))
        c.saving_bytes = adv.current_bytes - c.projected_bytes
        codec_sql = f" {col['codec']}" if (col.get("codec") or "").strip() else ""
        if codec_sql and c.codec != chain:
            codec_sql = f" CODEC({c.codec})"
        if key_column:
            c.ddl = (f"-- `{col['name']}` is in the table's key: the engine refuses MODIFY COLUMN on it "
                     f"(ALTER_OF_COLUMN_IS_FORBIDDEN); create the table anew with `{col['name']}` "
                     f"{c.type}{codec_sql} and INSERT ... SELECT")
        else:
            c.ddl = f"ALTER TABLE `{db}`.`{name}` MODIFY COLUMN `{col['name']}` {c.type}{codec_sql};"
    adv.candidates = sorted(cands, key=lambda c: c.projected_bytes)
    return adv


def advise(dataset, fraction: float | None = 0.05, seed: int = 0, check=None) -> dict:
    """Type advice for every column of every MergeTree table of the scan."""
    t0 = time.perf_counter()
    out = []
    for table in (dataset.sections.get("clickhouse") or {}).get("tables", []):
        if "MergeTree" not in str(table.get("engine", "")):
            continue
        for col in table.get("columns") or []:
            if check is not None:
                check()
            out.append(advise_column(dataset, table, col, fraction, seed))
    return {"sample": "all" if fraction is None else fraction, "seed": seed, "warning": MODIFY_WARNING,
            "seconds": round(time.perf_counter() - t0, 3), "columns": [a.to_json() for a in out]}

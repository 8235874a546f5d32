"""ClickHouse what-if: one target per column and one per table.

Units are the column's compressed blocks in every active part (all its
streams: values, ``.size``, ``.null``...), listed by the parser's
``parsers/clickhouse/payloads.column_blocks`` and decoded by its
``unit_payload``.  Each block is re-encoded with the target codec as its own
block: block boundaries and marks stay as they are (:class:`ClickHouseBlocks`).
The codec a column is written with now is re-encoded with the parameters its
blocks record (Delta width, T64 type...) and the levels of its DDL, which the
blocks do not record.  Tables also get the filesystem comparisons of their
active parts' files.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from dbxray.parsers.clickhouse import payloads
from dbxray.parsers.codecs import ch_block
from dbxray.parsers.model import Dataset

from ..bounds import ch_block_bound
from ..estimate import Estimate
from ..fsmodels import BtrfsExtents, ZFSRecords
from ..models import Model
from ..registry import Codec, UnknownCodec, ch_block_body, parse_codec
from ..sources import UnitSet, raw_records_many
from ..targets import Result, Run, Target, add_results, combine, measure_speeds, model_pairs
from .base import WhatIfEngine


# ---------------------------------------------------------------------------
# storage model
#: ClickHouse compressed block framing (src/Compression/CompressionInfo.h,
#: CompressedWriteBuffer.cpp): 16-byte CityHash128 checksum, then a 9-byte
#: header (method byte, compressed size u32, decompressed size u32).
CH_CHECKSUM = 16
CH_HEADER = 9
CH_FRAMING = CH_CHECKSUM + CH_HEADER
CH_MIN_COMPRESS_BLOCK = 65536      # MergeTree min_compress_block_size default
CH_MAX_COMPRESS_BLOCK = 1048576    # MergeTree max_compress_block_size default


@dataclass
class StreamParams:
    """How one ClickHouse stream's blocks are encoded: value size and type for
    the type-dependent codecs, and the chain it is written with now."""

    type_size: int | None = None
    value_type: str | None = None
    current_chain: str | None = None
    fixed_width: bool = False       # plain fixed-width values (Delta, T64, Gorilla... apply)
    is_float: bool = False          # Float32/Float64 values


#: CompressionCodecT64.cpp / CompressionCodecGCD.cpp reject floating point;
#: CompressionCodecFPC.cpp accepts only Float32/Float64
_CH_INTEGER_ONLY = ("T64", "GCD")
_CH_FLOAT_ONLY = ("FPC",)
#: Delta / DoubleDelta / Gorilla / T64 / GCD take 1, 2, 4 or 8-byte values only
_CH_WIDTH_1248 = ("Delta", "DoubleDelta", "Gorilla", "T64", "GCD")


@dataclass
class ClickHouseBlocks(Model):
    """A ClickHouse column re-encoded block by block.

    Block boundaries depend on the uncompressed stream only (the writer cuts
    a block at a granule end once min_compress_block_size is reached, or at
    max_compress_block_size), so a codec change keeps them and the marks
    unchanged: each existing block is re-encoded with the codec and framed
    with the 9-byte header and 16-byte checksum.  General codecs are encoded
    here with ClickHouse's calls (LZ4_compress_default, LZ4_compress_HC,
    ZSTD_compress with the level); chains (Delta, T64, Gorilla...) go through
    parsers/codecs/ch_block.py.
    """

    streams: list = field(default_factory=list)              # StreamParams per stream
    unit_stream: object = None                                # np.ndarray: stream index per unit
    current: str | None = None                                # name of the current codec

    def __post_init__(self):
        self.name = "clickhouse_blocks"

    def _params(self, unit) -> StreamParams:
        if unit is None or self.unit_stream is None or not self.streams:
            return StreamParams()
        return self.streams[int(self.unit_stream[unit])]

    def supports(self, codec: Codec) -> str | None:
        if codec.ch_chain is None:
            return f"ClickHouse has no {codec.family} codec"
        if codec.is_chain and codec.name != self.current and self.streams:
            if not all(s.fixed_width for s in self.streams):
                return f"{codec.name}: needs plain fixed-width values"
            names = [i.split("(")[0] for i in codec.name.split(",")]
            widths = {s.type_size for s in self.streams}
            if any(n in _CH_WIDTH_1248 for n in names) and not widths <= {1, 2, 4, 8}:
                return f"{codec.name}: values of {sorted(w for w in widths if w)} bytes (needs 1, 2, 4 or 8)"
            floats = any(s.is_float for s in self.streams)
            if floats and any(n in _CH_INTEGER_ONLY for n in names):
                return f"{codec.name}: not for floating point columns"
            if not floats and any(n in _CH_FLOAT_ONLY for n in names):
                return f"{codec.name}: only for Float32/Float64 columns"
        return None

    def speed_coders(self, codec: Codec):
        """Whole blocks encoded and decoded as the engine does (the chain the blocks
        record for the current codec), timed once per codec and value type in a run."""
        p = self.streams[0] if self.streams else None
        chain_codec = codec
        if codec.name == self.current and p is not None and p.current_chain:
            chain_codec = parse_codec(p.current_chain)
        ts, vt = (p.type_size, p.value_type) if p else (None, None)
        enc, dec = clickhouse_coders(chain_codec, ts, vt)
        return ("clickhouse", chain_codec.name, ts, vt), enc, dec

    def max_bytes(self, logical: np.ndarray, codec: Codec | None = None, units=None) -> np.ndarray | None:
        """ClickHouse writes every block with the codec, never raw: at most the 16-byte
        checksum + the codec's ``getCompressedReserveSize`` (compress/bounds.py, from
        src/Compression/ICompressionCodec.h and each codec's getMaxCompressedDataSize)."""
        if codec is None:
            return None
        logical = np.asarray(logical, dtype=np.int64)
        out = np.empty(len(logical), dtype=np.int64)
        stream = (np.zeros(len(logical), dtype=np.int64) if units is None or self.unit_stream is None
                  else np.asarray(self.unit_stream)[np.asarray(units, dtype=np.int64)])
        for k in np.unique(stream).tolist():
            sel = stream == k
            p = self.streams[k] if self.streams and k < len(self.streams) else StreamParams()
            chain = p.current_chain if codec.name == self.current and p.current_chain else codec.ch_chain
            out[sel] = ch_block_bound(chain or "NONE", logical[sel], p.type_size)
        return out

    def project(self, codec: Codec, payload: bytes, unit: int | None = None) -> int:
        p = self._params(unit)
        if codec.name == self.current and p.current_chain:
            return len(ch_block_body(payload, p.current_chain, p.type_size, p.value_type)) + CH_CHECKSUM
        if not codec.is_chain:
            if codec.family == "none":
                return CH_FRAMING + len(payload)
            return CH_FRAMING + len(codec.compress(payload))
        return codec.ch_block_size(payload, p.type_size, p.value_type)


def clickhouse_block_sizes(stream_bytes: int, granule_bytes: list[int] | None = None,
                           min_block: int = CH_MIN_COMPRESS_BLOCK,
                           max_block: int = CH_MAX_COMPRESS_BLOCK) -> list[int]:
    """Uncompressed block sizes the MergeTree writer makes for one stream.

    With granule sizes: a block is closed after a granule once it holds at
    least ``min_block`` bytes, and whenever it reaches ``max_block``
    (MergeTreeDataPartWriterWide / CompressedWriteBuffer).  Without them the
    stream is cut at ``max_block``.
    """
    sizes: list[int] = []
    if not granule_bytes:
        full, rest = divmod(stream_bytes, max_block)
        sizes = [max_block] * full + ([rest] if rest else [])
        return sizes
    cur = 0
    for gb in granule_bytes:
        while cur + gb >= max_block:
            take = max_block - cur
            sizes.append(max_block)
            gb -= take
            cur = 0
        cur += gb
        if cur >= min_block:
            sizes.append(cur)
            cur = 0
    if cur:
        sizes.append(cur)
    return sizes


def clickhouse_coders(codec: Codec, type_size: int | None = None, value_type: str | None = None):
    """(encode, decode) of whole ClickHouse blocks with ``codec`` (checksum left out)."""
    chain = codec.ch_chain or codec.name

    def encode(p: bytes) -> bytes:
        return ch_block_body(p, chain, type_size, value_type)

    def decode(body: bytes, size: int) -> bytes:
        return ch_block.decompress_block(bytes(16) + body, max_output=size + 64)
    return encode, decode


# ---------------------------------------------------------------------------
# targets
#: value size of ClickHouse fixed-width types (DataTypes/*.h)
TYPE_SIZES = {
    "UInt8": 1, "Int8": 1, "Bool": 1, "Enum8": 1,
    "UInt16": 2, "Int16": 2, "Date": 2, "Enum16": 2,
    "UInt32": 4, "Int32": 4, "Float32": 4, "DateTime": 4, "Date32": 4, "IPv4": 4, "Decimal32": 4,
    "UInt64": 8, "Int64": 8, "Float64": 8, "DateTime64": 8, "Decimal64": 8,
    "UInt128": 16, "Int128": 16, "UUID": 16, "IPv6": 16, "Decimal128": 16,
    "UInt256": 32, "Int256": 32, "Decimal256": 32,
}


def type_size(type_text: str) -> int | None:
    """Value size of a plain fixed-width type (``DateTime64(3)`` -> 8), None otherwise."""
    t = type_text.strip()
    base = t.split("(", 1)[0].strip()
    if base == "Decimal":
        m = re.match(r"Decimal\s*\(\s*(\d+)", t)
        if m:
            p = int(m.group(1))
            return 4 if p <= 9 else 8 if p <= 18 else 16 if p <= 38 else 32
    if base in ("DateTime", "DateTime64") or base.startswith("Enum"):
        return TYPE_SIZES.get(base)
    return TYPE_SIZES.get(base) if "(" not in t or base in ("DateTime64", "Decimal32", "Decimal64",
                                                             "Decimal128", "Decimal256") else None


def _with_levels(block_chain: str, ddl_chain: str) -> str:
    """The block's chain (parameters from its payloads) with the DDL's general-codec levels."""
    ddl_items = [i.strip() for i in re.split(r",(?![^(]*\))", ddl_chain) if i.strip()]
    levels = {}
    for item in ddl_items:
        name = item.split("(", 1)[0].strip().upper()
        if name in ("ZSTD", "LZ4HC"):
            levels["LZ4" if name == "LZ4HC" else "ZSTD"] = item
    out = []
    for item in [i.strip() for i in re.split(r",(?![^(]*\))", block_chain) if i.strip()]:
        name = item.split("(", 1)[0].strip().upper()
        out.append(levels.get(name, item) if name in ("ZSTD", "LZ4") else item)
    return ",".join(out)


def _ddl_chain(col: dict, default: str) -> str:
    codec = (col.get("codec") or "").strip()
    m = re.fullmatch(r"(?i)CODEC\s*\((.*)\)", codec)
    if m:
        codec = m.group(1)
    return codec or default


def _part_defaults(table: dict) -> str:
    for p in table.get("parts", []):
        if p.get("default_compression_codec"):
            return str(p["default_compression_codec"])
    return "LZ4"


def column_unitset(dataset, mod, ch, db: str, table: str, col: dict, default_chain: str):
    """The UnitSet of one column's blocks and its ClickHouseBlocks model (None when no blocks)."""
    blocks = mod.column_blocks(dataset, db, table, col["name"])
    if not blocks:
        return None
    entries: list = []
    index: dict[int, int] = {}
    unit_entry = np.empty(len(blocks), dtype=np.int64)
    unit_idx = np.empty(len(blocks), dtype=np.int64)
    for k, (e, i) in enumerate(blocks):
        j = index.get(id(e))
        if j is None:
            j = index[id(e)] = len(entries)
            entries.append(e)
        unit_entry[k] = j
        unit_idx[k] = i
    logical = np.array([int(e.units["logical"][i]) for e, i in blocks], dtype=np.int64)
    stored = int(sum(int(e.units["stored"][i]) for e, i in blocks))
    ddl = _ddl_chain(col, default_chain)
    tsize = type_size(col.get("type", ""))
    streams = []
    for e in entries:
        sec = e.sections.get("clickhouse", {})
        first = int(np.flatnonzero(unit_entry == index[id(e)])[0])
        raw = mod.read_unit_bytes(e, int(unit_idx[first]))
        try:
            params = ch.reencode_params(raw)
        except Exception:       # noqa: BLE001 -- an odd block only loses the exact current re-encode
            params = {"chain": None, "type_size": None, "value_type": None}
        main = not sec.get("substream") and sec.get("stream") == col["name"]
        streams.append(StreamParams(type_size=params.get("type_size") or (tsize if main else None),
                                    value_type=params.get("value_type"),
                                    current_chain=_with_levels(params["chain"], ddl) if params.get("chain") else None,
                                    fixed_width=bool(main and tsize),
                                    is_float=col.get("type", "").strip() in ("Float32", "Float64")))

    def payload(k: int) -> bytes:
        e = entries[int(unit_entry[k])]
        i = int(unit_idx[k])
        return mod.unit_payload(e, i, max_output=int(e.units["logical"][i]))

    try:
        current = parse_codec(ddl)
    except UnknownCodec:
        current = None
    model = ClickHouseBlocks(streams=streams, unit_stream=unit_entry,
                             current=current.name if current else None)
    # strata: one per stream (values, .size, .null...) across all parts: parts of a
    # column are alike, streams are not
    stream_names = [e.sections.get("clickhouse", {}).get("stream") or e.path.rsplit("/", 1)[-1] for e in entries]
    codes = {n: k for k, n in enumerate(dict.fromkeys(stream_names))}
    strata = np.array([codes[stream_names[j]] for j in unit_entry], dtype=np.int64)
    us = UnitSet(label=f"{db}.{table}.{col['name']}", logical=logical, strata=strata,
                 payload=payload, meta={"stored": stored, "entries": entries})
    return us, model, current


def table_files(dataset, tb: dict) -> list:
    """The file entries of a table's active parts (projections included), or of a
    Log-family table's folder."""
    prefixes = tuple(p["path"].rstrip("/") + "/" for p in tb.get("parts", [])
                     if p.get("active") and p.get("state", "active") == "active" and p.get("path"))
    if tb.get("log_files") is not None and tb.get("path") is not None:
        prefixes += ("" if tb["path"] in ("", ".") else tb["path"].rstrip("/") + "/",)
    if not prefixes:
        return []
    return [f for f in dataset.files if f.engine == "clickhouse" and f.path.startswith(prefixes)]


def _raw_table_results(run, dataset, tb: dict, tt, codecs: list[Codec]) -> None:
    """ZFS / btrfs compression of the table's files as they are (already
    ClickHouse-compressed), as the comparison the issue asks for: what the
    filesystem would still save under the engine's own compression."""
    files = table_files(dataset, tb)
    if not files:
        return
    raw = raw_records_many(files, 131072, f"{tt.target} (raw files of the active parts, 128 KiB records)")
    pairs = model_pairs(list(codecs), [ZFSRecords(), BtrfsExtents()], tt.notes)
    if not pairs or not len(raw):
        return
    tt.info["raw_files"] = len(files)
    tt.info["raw_file_bytes"] = int(raw.logical_bytes)
    tt.info["raw_allocated_bytes"] = int(sum(int(f.allocated_bytes or 0) for f in files))
    proj = run.project(raw, pairs, count=False)
    speeds = measure_speeds(run, proj, sorted({c for c, _ in pairs}, key=lambda c: c.name))
    add_results(tt, proj, speeds)


def targets(run, dataset, codecs: list[Codec]) -> list:
    """Column targets (``db.table.column``) and table targets (``db.table``)."""
    mod = payloads
    ch = ch_block
    out = []
    for tb in (dataset.sections.get("clickhouse") or {}).get("tables", []):
        db, name = tb.get("database"), tb.get("table")
        default_chain = _part_defaults(tb)
        col_targets = []
        for col in tb.get("columns", []):
            run.check()
            try:
                got = column_unitset(dataset, mod, ch, db, name, col, default_chain)
            except Exception as e:      # noqa: BLE001 -- one column must not lose the table
                run.errors.append(f"{db}.{name}.{col.get('name')}: {type(e).__name__}: {e}")
                continue
            if got is None:
                continue
            us, model, current = got
            t = Target(f"{db}.{name}.{col['name']}", "clickhouse", us.meta["stored"], us.logical_bytes,
                       current_codec=current.name if current else None, primary_model=model.name,
                       info={"database": db, "table": name, "column": col["name"], "type": col.get("type")})
            cods = list(codecs)
            # With --sample all the column's own chain is re-encoded too (the check against the
            # engine's bytes); on a sample its size is what the blocks hold now, known exactly
            # and cheaper than re-running its (possibly slow) encoders.
            reencode_current = run.spec.is_all or run.target_error is not None
            if current is not None:
                cods = [c for c in cods if c.name != current.name]
                if reencode_current:
                    cods.append(current)
            pairs = model_pairs(cods, [model], t.notes)
            try:
                proj = run.project(us, pairs)
            except Exception as e:      # noqa: BLE001
                run.errors.append(f"{t.target}: {type(e).__name__}: {e}")
                continue
            speed_codecs = [c for c, _ in pairs]
            if current is not None and current.name not in {c.name for c in speed_codecs}:
                speed_codecs.append(current)
            speeds = measure_speeds(run, proj, speed_codecs, model=model)
            for (cname, mname), pr in proj.pairs.items():
                cs, ds = speeds.get(cname, (None, None))
                t.results.append(Result(cname, mname, pr.estimate, cs, ds))
            if current is not None and not any(r.codec == current.name for r in t.results):
                n = len(us)
                cs, ds = speeds.get(current.name, (None, None))
                stored = float(us.meta["stored"])
                t.results.append(Result(current.name, model.name,
                                        Estimate(stored, stored, stored, 0.0, math.inf, n, n), cs, ds))
            col_targets.append(t)
        if not col_targets:
            continue
        out.extend(col_targets)
        tt = Target(f"{db}.{name}", "clickhouse", sum(t.current_bytes for t in col_targets),
                    sum(t.logical_bytes for t in col_targets), current_codec="current",
                    primary_model="clickhouse_blocks", info={"database": db, "table": name})
        names = [c.name for c in codecs]
        for cname in names + ["current"]:
            ests, cs_w, ds_w, total, measured = [], 0.0, 0.0, 0, True
            for t in col_targets:
                r = next((r for r in t.results if r.codec == (t.current_codec if cname == "current" else cname)),
                         None)
                if r is None:
                    break
                ests.append(r.estimate)
                w = t.logical_bytes
                total += w
                # the table's speed: bytes over the columns' summed times, known only when every
                # column's speed is (one reference-decoder column makes it unknown)
                measured = measured and bool(r.compress_mb_s) and bool(r.decompress_mb_s)
                cs_w += w / r.compress_mb_s if r.compress_mb_s else 0.0
                ds_w += w / r.decompress_mb_s if r.decompress_mb_s else 0.0
            else:
                tt.results.append(Result(cname, "clickhouse_blocks", combine(ests),
                                         total / cs_w if measured and cs_w else None,
                                         total / ds_w if measured and ds_w else None))
        if run.raw_models:
            _raw_table_results(run, dataset, tb, tt, codecs)
        out.append(tt)
    return out


# ---------------------------------------------------------------------------
# the engine's what-if
class ClickHouseWhatIf(WhatIfEngine):
    name = "clickhouse"

    def wants_dataset(self, dataset: Dataset) -> bool:
        return self.name in dataset.engines

    def dataset_targets(self, run: Run, dataset: Dataset, codecs: list[Codec]) -> list[Target]:
        return targets(run, dataset, codecs)

    def available(self, codec: Codec, layout: str | None = None) -> bool:
        return codec.ch_chain is not None

    def advisable(self, target: Target) -> bool:
        """Columns only (issue 17 item 2): ClickHouse sets a codec per column (``MODIFY COLUMN
        ... CODEC``), so a table's advice is its columns' entries; the table's own figure (every
        column under one codec) would be those columns' bytes advised again, with a DDL that is
        no statement ("per column: ...") and a codec that contradicts the columns' own picks."""
        return (target.info or {}).get("column") is not None

    def ddl(self, target: Target, codec: Codec, model: str) -> str:
        info = target.info or {}
        chain = codec.ch_chain or codec.name
        db, table, col = info.get("database"), info.get("table"), info.get("column")
        if col is None:
            return (f"-- per column: ALTER TABLE {db}.{table} MODIFY COLUMN <column> <type> CODEC({chain}); "
                    f"then OPTIMIZE TABLE {db}.{table} FINAL")
        typ = f" {info['type']}" if info.get("type") else ""
        return f"ALTER TABLE {db}.{table} MODIFY COLUMN {col}{typ} CODEC({chain});"


WHATIF = ClickHouseWhatIf()

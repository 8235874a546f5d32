"""ClickHouse targets for ``whatif``: one per column and one per table.

Units are the column's compressed blocks in every active part (all its
streams: values, ``.size``, ``.null``...), listed by the parser's
``parsers/clickhouse/payloads.column_blocks`` and decoded by its
``unit_payload``.  Each block is re-encoded with the target codec as its own
block: block boundaries and marks stay as they are (see
:class:`compress.models.ClickHouseBlocks`).  The codec a column is written
with now is re-encoded with the parameters its blocks record (Delta width,
T64 type...) and the levels of its DDL, which the blocks do not record.
"""
from __future__ import annotations

import math
import re

import numpy as np

from .estimate import Estimate
from .models import ClickHouseBlocks, StreamParams
from .registry import Codec, CodecUnavailable, UnknownCodec, ch_block_module, parse_codec
from .sources import UnitSet, payload_module

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
    """The file entries of a table's active parts (projections included)."""
    prefixes = tuple(p["path"].rstrip("/") + "/" for p in tb.get("parts", [])
                     if p.get("active") and p.get("state", "active") == "active" and p.get("path"))
    if not prefixes:
        return []
    return [f for f in dataset.files if f.engine == "clickhouse" and f.path.startswith(prefixes)]


def _raw_table_results(run, dataset, tb: dict, tt, codecs: list[Codec]) -> None:
    """ZFS / btrfs compression of the table's files as they are (already
    ClickHouse-compressed), as the comparison the issue asks for: what the
    filesystem would still save under the engine's own compression."""
    from .models import BtrfsExtents, ZFSRecords
    from .sources import raw_records_many
    from .whatif import _add_results, _pairs, _speeds
    files = table_files(dataset, tb)
    if not files:
        return
    raw = raw_records_many(files, 131072, f"{tt.target} (raw files of the active parts, 128 KiB records)")
    pairs = _pairs(list(codecs), [ZFSRecords(), BtrfsExtents()], tt.notes)
    if not pairs or not len(raw):
        return
    tt.info["raw_files"] = len(files)
    tt.info["raw_file_bytes"] = int(raw.logical_bytes)
    tt.info["raw_allocated_bytes"] = int(sum(int(f.allocated_bytes or 0) for f in files))
    proj = run.project(raw, pairs, count=False)
    speeds = _speeds(run, proj, sorted({c for c, _ in pairs}, key=lambda c: c.name))
    _add_results(tt, proj, speeds)


def targets(run, dataset, codecs: list[Codec]) -> list:
    """Column targets (``db.table.column``) and table targets (``db.table``)."""
    from .whatif import Result, Target, _pairs, _speeds, combine
    mod = payload_module("clickhouse")
    if not hasattr(mod, "column_blocks"):
        raise CodecUnavailable("clickhouse: parsers/clickhouse/payloads.py has no column_blocks")
    ch = ch_block_module()
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
            pairs = _pairs(cods, [model], t.notes)
            try:
                proj = run.project(us, pairs)
            except Exception as e:      # noqa: BLE001
                run.errors.append(f"{t.target}: {type(e).__name__}: {e}")
                continue
            speed_codecs = [c for c, _ in pairs]
            if current is not None and current.name not in {c.name for c in speed_codecs}:
                speed_codecs.append(current)
            speeds = _speeds(run, proj, speed_codecs, model=model)
            for (cname, mname), pr in proj.pairs.items():
                cs, ds = speeds.get(cname, (0.0, 0.0))
                t.results.append(Result(cname, mname, pr.estimate, cs, ds))
            if current is not None and not any(r.codec == current.name for r in t.results):
                n = len(us)
                cs, ds = speeds.get(current.name, (0.0, 0.0))
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
            ests, cs_w, ds_w, total = [], 0.0, 0.0, 0
            for t in col_targets:
                r = next((r for r in t.results if r.codec == (t.current_codec if cname == "current" else cname)),
                         None)
                if r is None:
                    break
                ests.append(r.estimate)
                w = t.logical_bytes
                total += w
                cs_w += w / r.compress_mb_s if r.compress_mb_s else 0.0
                ds_w += w / r.decompress_mb_s if r.decompress_mb_s else 0.0
            else:
                tt.results.append(Result(cname, "clickhouse_blocks", combine(ests),
                                         total / cs_w if cs_w else 0.0, total / ds_w if ds_w else 0.0))
        if run.raw_models:
            _raw_table_results(run, dataset, tb, tt, codecs)
        out.append(tt)
    return out

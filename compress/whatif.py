"""``run_whatif``: projected bytes per target and codec, with 95% intervals,
speeds and advice, as the JSON of ``dbxray whatif --json``.

Targets: for InnoDB one per tablespace file, for ClickHouse one per column
and one per table, for TokuDB one per dictionary file.  The models each
target gets are in :mod:`compress.models`; the estimator in
:mod:`compress.estimate`; sampling in :mod:`compress.sampling`.
"""
from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from dbxray.parsers.model import Cancelled, Dataset, FileEntry

from . import advisor
from .estimate import Estimate, t975
from .models import (BtrfsExtents, ClickHouseBlocks, InnoDBLargerPagesApprox, InnoDBPageCompressed,
                     InnoDBRowCompressedEstimate, Model, TokuDBPartitions, ZFSRecords, check_codec_for,
                     ext4_extent_tree_bytes, filesystem_type)
from .projector import Projection, project
from .registry import DEFAULT_CODECS, Codec, CodecUnavailable, parse_codec
from .sampling import parse_sample
from .sources import SourceUnavailable, UnitSet, engine_units, grouped_units, raw_records
from .speed import clickhouse_coders, measure, workers

#: decompression speed measurement budget per (target, codec); compression
#: speed comes from the projection pass itself
SPEED_BYTES = 128 * 1024
SPEED_SECONDS = 0.01
SPEED_PIECE = 32 * 1024

INNODB_TABLESPACE_ROLES = ("tablespace", "system_tablespace")


@dataclass
class Result:
    codec: str
    model: str
    estimate: Estimate
    compress_mb_s: float = 0.0
    decompress_mb_s: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"codec": self.codec, "model": self.model,
                "projected_bytes": int(round(self.estimate.projected)),
                "ci95": self.estimate.ci95(),
                "compress_mb_s": round(float(self.compress_mb_s), 1),
                "decompress_mb_s": round(float(self.decompress_mb_s), 1)}


@dataclass
class Target:
    target: str
    engine: str
    current_bytes: int
    logical_bytes: int
    results: list[Result] = field(default_factory=list)
    current_codec: str | None = None
    primary_model: str | None = None
    notes: list[str] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)   # names for the DDL

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target, "engine": self.engine,
                "current_bytes": int(self.current_bytes), "logical_bytes": int(self.logical_bytes),
                "current_codec": self.current_codec,
                "results": [r.to_json() for r in self.results]}


@dataclass
class _Run:
    """State shared by the engine handlers during one run."""

    spec: Any
    seed: int
    target_error: float | None
    fs_block: int | None
    filesystem: str | None
    progress: Callable[[int, int, str], None] | None
    is_cancelled: Callable[[], bool] | None
    pool: ThreadPoolExecutor
    raw_models: bool
    larger_pages: bool
    units_sampled: int = 0
    units_total: int = 0
    errors: list[str] = field(default_factory=list)
    speed_cache: dict = field(default_factory=dict)

    def check(self) -> None:
        if self.is_cancelled is not None and self.is_cancelled():
            raise Cancelled()

    def project(self, unitset: UnitSet, pairs, count: bool = True) -> Projection:
        proj = project(unitset, pairs, self.spec, seed=self.seed, target_error=self.target_error,
                       progress=self.progress, is_cancelled=self.is_cancelled, pool=self.pool)
        self.errors.extend(proj.errors)
        if count:
            self.units_sampled += proj.units_sampled
            self.units_total += proj.units_total
        return proj


def _speeds(run: _Run, proj: Projection, codecs: list[Codec], model=None) -> dict[str, tuple[float, float]]:
    """(compress, decompress) MB/s per codec on this target's sampled bytes.

    Compression speed comes from the projection pass (all threads busy).
    Decompression is measured on a bounded piece of the sampled bytes; for
    ClickHouse columns it is measured once per codec and value type in a run
    (it depends on the codec and the type far more than on the column).
    """
    out = {}
    for c in codecs:
        try:
            enc = dec = None
            key = None
            if isinstance(model, ClickHouseBlocks):
                p = model.streams[0] if model.streams else None
                chain_codec = c
                if c.name == model.current and p is not None and p.current_chain:
                    chain_codec = parse_codec(p.current_chain)
                ts, vt = (p.type_size, p.value_type) if p else (None, None)
                key = ("clickhouse", chain_codec.name, ts, vt)
                enc, dec = clickhouse_coders(chain_codec, ts, vt)
            comp = proj.compress_mb_s(c.name)
            if key is not None and key in run.speed_cache:
                d = run.speed_cache[key]
            else:
                s = measure(c, proj.speed_payloads, max_bytes=SPEED_BYTES, max_seconds=SPEED_SECONDS,
                            pool=run.pool, encode=enc, decode=dec, piece=SPEED_PIECE)
                d = s.decompress_mb_s
                comp = comp or s.compress_mb_s
                if key is not None and d > 0:
                    run.speed_cache[key] = d
            out[c.name] = (comp, d)
        except Exception as e:     # a speed failure must not lose the projection
            run.errors.append(f"speed of {c.name}: {type(e).__name__}: {e}")
            out[c.name] = (0.0, 0.0)
    return out


def _pairs(codecs: list[Codec], models: list[Model], notes: list[str]) -> list[tuple[Codec, Model]]:
    pairs = []
    for m in models:
        for c in codecs:
            why = check_codec_for(m, c)
            if why is None:
                pairs.append((c, m))
    return pairs


def _add_results(target: Target, proj: Projection, speeds, adjust: Callable | None = None) -> None:
    for (cname, mname), pr in proj.pairs.items():
        est = pr.estimate
        if adjust is not None:
            est = adjust(pr, est)
        cs, ds = speeds.get(cname, (0.0, 0.0))
        target.results.append(Result(cname, mname, est, cs, ds))


def _shift(est: Estimate, delta: float) -> Estimate:
    return Estimate(est.projected + delta, est.lo + delta, est.hi + delta, est.variance, est.df,
                    est.units_sampled, est.units_total)


# ---------------------------------------------------------------------------
# InnoDB
def innodb_current_codec(entry: FileEntry) -> tuple[Codec | None, str]:
    """The codec a tablespace is written with now, and the layout of its pages."""
    sec = entry.sections.get("innodb", {}) or {}
    algo = sec.get("compression_algorithm")
    layout = "full_crc32"
    cs = (sec.get("checksum") or {}).get("algorithm") if isinstance(sec.get("checksum"), dict) else None
    if sec.get("fsp_flags") is not None and isinstance(sec.get("fsp_flags"), int) and not sec["fsp_flags"] & 0x10:
        layout = "legacy"
    if cs and "full_crc32" not in str(cs) and sec.get("page_compressed"):
        layout = "legacy"
    if "FIL_PAGE_SDI" in (entry.kind_names or {}).values() or sec.get("sdi"):
        layout = "mysql"         # MySQL 8 (SDI pages): MySQL's transparent page compression
    if not sec.get("page_compressed") or not algo:
        return None, layout
    algo = str(algo).lower()
    level = sec.get("page_compression_level") or 6
    if algo == "zlib":
        return Codec("zlib", int(level)), layout
    if algo == "lzma":
        return Codec("lzma", int(level)), layout
    if algo == "bzip2":
        return Codec("bzip2", 1), layout
    if algo in ("lz4", "snappy"):
        return Codec(algo), layout
    return None, layout


def _db_from_path(path: str) -> str | None:
    parts = path.split("/")
    return parts[-2] if len(parts) >= 2 else None


def _table_from_path(path: str) -> str | None:
    name = path.split("/")[-1]
    name = name.rsplit(".", 1)[0]
    return name.split("#P#")[0].split("#p#")[0] or None


#: page kinds that stay pages of their own in the larger-pages approximation
_INNODB_SYSTEM_KINDS = (None, "FIL_PAGE_TYPE_FSP_HDR", "FIL_PAGE_TYPE_XDES", "FIL_PAGE_INODE",
                        "FIL_PAGE_IBUF_BITMAP", "FIL_PAGE_TYPE_ALLOCATED")


def _innodb_zip_target(run: _Run, entry: FileEntry, codecs: list[Codec], sec: dict) -> Target:
    """ROW_FORMAT=COMPRESSED tablespace: its pages are zlib streams the parser does not
    inflate, so only the raw-file comparisons are projected (re-compressing them would
    measure compressed data)."""
    t = Target(entry.path, "innodb", int(entry.allocated_bytes), int(entry.apparent_bytes),
               current_codec="zlib:6", primary_model="innodb_row_compressed",
               info={"database": entry.database or _db_from_path(entry.path),
                     "table": entry.table or _table_from_path(entry.path)})
    run.errors.append(f"{entry.path}: ROW_FORMAT=COMPRESSED (KEY_BLOCK_SIZE="
                      f"{int(sec.get('physical_page_size') or 0) // 1024}): pages are not decompressed, "
                      f"only the filesystem comparisons are projected")
    if run.raw_models:
        _raw_results(run, t, entry, codecs)
    return t


def _innodb_target(run: _Run, entry: FileEntry, codecs: list[Codec]) -> Target:
    sec = entry.sections.get("innodb", {}) or {}
    phys, logical = sec.get("physical_page_size"), sec.get("page_size")
    if phys and logical and int(phys) < int(logical):
        return _innodb_zip_target(run, entry, codecs, sec)
    base = engine_units(entry)
    page_size = int(sec.get("page_size") or (base.logical.max() if len(base) else 16384))
    fs_block = int(run.fs_block or entry.fs_block or 4096)
    current, layout = innodb_current_codec(entry)
    t = Target(entry.path, "innodb", int(entry.allocated_bytes), base.logical_bytes,
               current_codec=current.name if current else "none", primary_model="innodb_page_compressed",
               info={"database": entry.database or _db_from_path(entry.path),
                     "table": entry.table or _table_from_path(entry.path), "page_size": page_size,
                     "layout": layout})
    all_codecs = list(codecs)
    if current is not None and current.name not in {c.name for c in all_codecs}:
        all_codecs.append(current)
    pc = InnoDBPageCompressed(page_size=page_size, fs_block=fs_block, layout=layout)
    models: list[Model] = [pc]
    if 4096 <= page_size <= 16384:      # ROW_FORMAT=COMPRESSED exists for pages up to 16 KiB only
        models.append(InnoDBRowCompressedEstimate(page_size=page_size, key_block_size=page_size // 2))
    pairs = _pairs(all_codecs, models, t.notes)
    fs = run.filesystem or filesystem_type(entry.abspath)

    def adjust(pr, est):
        if pr.model is pc and fs == "ext4":
            return _shift(est, ext4_extent_tree_bytes(pr.partial_units + 1, fs_block))
        return est

    proj = run.project(base, pairs)
    speeds = _speeds(run, proj, all_codecs)
    _add_results(t, proj, speeds, adjust)
    run.check()
    if run.larger_pages and page_size == 16384:
        keep = np.array([k not in _INNODB_SYSTEM_KINDS for k in (base.kinds or [])], dtype=bool) \
            if base.kinds else None
        if keep is not None and keep.any():
            big = InnoDBLargerPagesApprox(page_size=page_size, fs_block=fs_block, layout=layout, factor=4)
            groups = grouped_units(base, 4, keep)
            gp = run.project(groups, _pairs(all_codecs, [big], t.notes), count=False)
            # system pages (FSP header, inodes, bitmaps, free pages) each become one large page
            rest = grouped_units(base, 1, ~keep, pad_to=big.page_size)
            rp = run.project(rest, _pairs(all_codecs, [big], t.notes), count=False) if len(rest) else None
            for (cname, mname), pr in gp.pairs.items():
                est = pr.estimate
                other = rp.pairs.get((cname, mname)) if rp is not None else None
                if other is not None:
                    est = combine([est, other.estimate])
                cs, ds = speeds.get(cname, (0.0, 0.0))
                t.results.append(Result(cname, mname, est, cs, ds))
    if run.raw_models:
        _raw_results(run, t, entry, codecs)
    return t


def _raw_results(run: _Run, t: Target, entry: FileEntry, codecs: list[Codec]) -> None:
    models: list[Model] = [ZFSRecords(), BtrfsExtents()]
    raw = raw_records(entry, 131072)
    pairs = _pairs(codecs, models, t.notes)
    if not pairs or not len(raw):
        return
    proj = run.project(raw, pairs, count=False)
    speeds = _speeds(run, proj, sorted({c for c, _ in pairs}, key=lambda c: c.name))
    _add_results(t, proj, speeds)


# ---------------------------------------------------------------------------
# TokuDB
TOKU_CODEC = {"zlib": Codec("zlib", 5), "zlib_without_checksum": Codec("zlib", 5),
              "lzma": Codec("lzma", 2), "snappy": Codec("snappy"), "none": Codec("none"),
              "zstd": Codec("zstd", 1), "quicklz": Codec("quicklz")}


def tokudb_partition_filter(entry: FileEntry, units: np.ndarray) -> np.ndarray:
    """Units that are partitions (sub-blocks the engine compresses), not node headers."""
    names = entry.kind_names or {}
    kinds = units["kind"]
    keep = np.ones(len(units), dtype=bool)
    for code, name in names.items():
        low = str(name).lower()
        if "partition" in low or "basement" in low or "buffer" in low:
            continue
        if "header" in low or "info" in low or "translation" in low or "descriptor" in low:
            keep &= kinds != code
    return keep


def _tokudb_target(run: _Run, entry: FileEntry, codecs: list[Codec]) -> Target:
    sec = entry.sections.get("tokudb", {}) or {}
    base = engine_units(entry, tokudb_partition_filter)
    idx = base.meta["index"]
    stored = int(entry.units["stored"][idx].astype(np.int64).sum())
    methods = sec.get("node_methods") or {}
    current_name = max(methods, key=lambda k: methods[k]) if methods else None
    current = TOKU_CODEC.get(current_name) if current_name else None
    t = Target(entry.path, "tokudb", int(entry.allocated_bytes), base.logical_bytes,
               current_codec=current.name if current else current_name, primary_model="tokudb_partitions",
               info={"table": sec.get("table") or entry.table, "database": entry.database,
                     "method": current_name, "stored_partition_bytes": stored})
    all_codecs = list(codecs)
    models: list[Model] = [TokuDBPartitions()]
    pairs = _pairs(all_codecs, models, t.notes)
    if current is not None:
        cur_model = TokuDBPartitions(zlib_without_checksum=current_name == "zlib_without_checksum")
        cur_model.name = "tokudb_partitions"
        if current.name in {c.name for c in all_codecs}:
            pairs = [(c, m) for c, m in pairs if c.name != current.name]
        pairs.append((current, cur_model))
    proj = run.project(base, pairs)
    speeds = _speeds(run, proj, sorted({c for c, _ in pairs}, key=lambda c: c.name))
    other = int(entry.allocated_bytes) - stored     # headers, block table, node headers, free space

    def adjust(pr, est):
        return _shift(est, other)

    _add_results(t, proj, speeds, adjust)
    if run.raw_models:
        _raw_results(run, t, entry, codecs)
    return t


# ---------------------------------------------------------------------------
# ClickHouse
def _clickhouse_targets(run: _Run, dataset: Dataset, codecs: list[Codec]) -> list[Target]:
    from . import clickhouse_source
    return clickhouse_source.targets(run, dataset, codecs)


# ---------------------------------------------------------------------------
def combine(estimates: list[Estimate]) -> Estimate:
    """Sum of independent estimates: variances add, df by Satterthwaite."""
    proj = sum(e.projected for e in estimates)
    var = sum(e.variance for e in estimates)
    den = sum((e.variance ** 2) / e.df for e in estimates if e.variance > 0 and math.isfinite(e.df))
    df = (var ** 2 / den) if den > 0 else math.inf
    half = t975(df) * math.sqrt(var) if var > 0 else 0.0
    lo_floor = sum(e.lo for e in estimates) if var == 0 else 0.0
    return Estimate(proj, max(proj - half, lo_floor), proj + half, var, df,
                    sum(e.units_sampled for e in estimates), sum(e.units_total for e in estimates))


def resolve_codecs(codecs) -> list[Codec]:
    names = list(codecs) if codecs else list(DEFAULT_CODECS)
    out, seen = [], set()
    for n in names:
        c = n if isinstance(n, Codec) else parse_codec(n)
        if c.name not in seen:
            seen.add(c.name)
            out.append(c)
    return out


def run_whatif(dataset: Dataset, codecs, sample="0.05", seed: int = 0, target_error: float | None = None,
               fs_block: int | None = None, progress=None, is_cancelled=None, *,
               filesystem: str | None = None, raw_models: bool = True, larger_pages: bool = True,
               engines: tuple[str, ...] | None = None) -> dict:
    """The what-if projection of a scanned dataset (see the module doc and the issue's JSON).

    ``codecs``: names (``zstd:3``, ``Delta(4),ZSTD(1)``...), None for the
    defaults.  ``sample``: a fraction or ``"all"``.  ``target_error``: stop
    growing the sample once every 95% interval is narrower than this relative
    half-width (0.01 = 1%).  ``filesystem`` overrides the detected filesystem
    type (``ext4`` adds its extent-tree blocks to page-compressed files).
    """
    spec = parse_sample(sample)
    cods = resolve_codecs(codecs)
    n_workers = workers()
    targets: list[Target] = []
    with ThreadPoolExecutor(max_workers=n_workers) as pool:
        run = _Run(spec, seed, target_error, fs_block, filesystem, progress, is_cancelled, pool,
                   raw_models, larger_pages)
        work: list[tuple[str, Any]] = []
        for e in dataset.files:
            if e.engine == "innodb" and e.role in INNODB_TABLESPACE_ROLES and e.units is not None \
                    and len(e.units) and (engines is None or "innodb" in engines):
                work.append(("innodb", e))
            elif e.engine == "tokudb" and e.role == "dictionary" and e.units is not None and len(e.units) \
                    and (engines is None or "tokudb" in engines):
                work.append(("tokudb", e))
        if "clickhouse" in dataset.engines and (engines is None or "clickhouse" in engines):
            work.append(("clickhouse", None))
        steps = 1000

        def sub_progress(k: int):
            last = [k * steps]

            def cb(done: int, total: int, msg: str) -> None:     # never goes back within a target
                frac = min(1.0, done / total) if total else 1.0
                last[0] = max(last[0], k * steps + int(frac * (steps - 1)))
                progress(last[0], len(work) * steps, msg)
            return cb

        for k, (eng, e) in enumerate(work):
            run.check()
            if progress is not None:
                run.progress = sub_progress(k)
                progress(k * steps, len(work) * steps, f"what-if: {e.path if e is not None else 'clickhouse'}")
            try:
                if eng == "innodb":
                    targets.append(_innodb_target(run, e, cods))
                elif eng == "tokudb":
                    targets.append(_tokudb_target(run, e, cods))
                else:
                    targets.extend(_clickhouse_targets(run, dataset, cods))
            except (SourceUnavailable, CodecUnavailable) as err:
                run.errors.append(str(err))
            except Cancelled:
                raise
            except Exception as err:    # one bad target must not lose the others
                where = e.path if e is not None else "clickhouse"
                run.errors.append(f"{where}: {type(err).__name__}: {err}")
        if progress is not None:
            progress(len(work) * steps, len(work) * steps, "what-if: done")
    out: dict[str, Any] = {
        "tool": "dbxray", "schema_version": 1, "kind": "whatif", "root": dataset.root,
        "sample": {"mode": spec.mode, "fraction": spec.fraction, "seed": int(seed),
                   "units_sampled": int(run.units_sampled), "units_total": int(run.units_total)},
        "fs_block": int(fs_block or _first_fs_block(dataset)),
        "targets": [t.to_json() for t in targets],
        "advice": advisor.advise(targets),
    }
    if run.errors:
        out["errors"] = run.errors
    return out


def _first_fs_block(dataset: Dataset) -> int:
    for f in dataset.files:
        if f.fs_block:
            return int(f.fs_block)
    return 4096


def targets_by_name(result: dict) -> dict[str, dict]:
    """The targets of a ``run_whatif`` result keyed by their name (tests, views)."""
    return {t["target"]: t for t in result["targets"]}


def result_for(target: dict, codec: str, model: str | None = None) -> dict | None:
    """The result of one codec (and model) in a target of the JSON, or None."""
    for r in target["results"]:
        if r["codec"] == codec and (model is None or r["model"] == model):
            return r
    return None


__all__ = ["run_whatif", "combine", "resolve_codecs", "Target", "Result", "targets_by_name", "result_for"]

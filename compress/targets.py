"""What-if targets and the steps every engine's targets share: a target's
results, the run state, codec/model pairs, speeds, the filesystem comparisons
of a file, and the sum of independent estimates.
"""
from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

from dbxray.parsers.model import Cancelled, FileEntry

from .estimate import Estimate, t975
from .fsmodels import BTRFS_HEURISTIC_MODEL, BtrfsExtents, ZFSRecords, btrfs_compress_walk
from .models import Model, check_codec_for, roundup
from .projector import Projection, project
from .registry import Codec
from .sources import UnitSet, raw_records
from .speed import measure

#: decompression speed measurement budget per (target, codec): whole sampled units (at
#: least one) up to this many bytes, the fastest of up to SPEED_ROUNDS passes on one
#: thread within the time (compression and decompression)
SPEED_BYTES = 128 * 1024
SPEED_SECONDS = 0.02
SPEED_ROUNDS = 5
#: how speeds are measured (the JSON's ``speed_method``, the CLI's and the report's footnote)
SPEED_METHOD = ("one thread; the C library the engine links, through its Python binding; on this "
                "target's sampled units at the engine's unit size, the fastest of up to 5 passes each way; "
                "MB = 10^6 bytes of uncompressed data a second. Not measured (null): 'none', and chains "
                "with a ClickHouse transform (Delta, DoubleDelta, Gorilla, T64, FPC, GCD), whose "
                "implementations here are reference decoders, not the engine's")


@dataclass
class Result:
    codec: str
    model: str
    estimate: Estimate
    #: MB/s on one thread; None: not measured (see SPEED_METHOD)
    compress_mb_s: float | None = None
    decompress_mb_s: float | None = None
    #: the model's DDL rebuilds the table (:attr:`Model.rebuilds`): free space is not carried over
    rebuilds: bool = False

    def to_json(self, split: "Split | None" = None, current: bool = False) -> dict[str, Any]:
        """``current``: the target's own codec under its primary model, whose difference from the
        target (pages written whole that are sparse now, what a rebuild changes) is no
        compression saving: none is given."""
        out = {"codec": self.codec, "model": self.model,
               "projected_bytes": int(round(self.estimate.projected)),
               "ci95": self.estimate.ci95(),
               **({"max_bytes": int(math.ceil(self.estimate.bound))} if self.estimate.bound is not None else {}),
               "compress_mb_s": _mb_s(self.compress_mb_s),
               "decompress_mb_s": _mb_s(self.decompress_mb_s)}
        if split is not None and self.rebuilds and not current:
            lo, hi = self.estimate.ci95()
            base = split.rebuilt_bytes
            out["compression_saving_bytes"] = base - int(round(self.estimate.projected))
            out["compression_saving_ci95"] = [base - hi, base - lo]
        return out


@dataclass
class Split:
    """What a target's bytes on disk now are made of (issue 17 item 1): the units a codec
    acts on, the engine's fixed bookkeeping (written whole whatever the codec), and the free
    and never-written space a rebuild reclaims (``OPTIMIZE TABLE``).  Allocated bytes, summing
    to the target's current bytes.  A codec's saving is counted against
    :attr:`rebuilt_bytes`, never against the free space."""

    compressible_bytes: int
    overhead_bytes: int
    reclaimable_bytes: int
    #: the statement that reclaims the free space alone (None: the engine has none / no advice)
    rebuild_ddl: str | None = None
    #: what the reclaimable bytes are (free pages, unwritten extents...)
    detail: dict[str, int] = field(default_factory=dict)
    #: False: no statement gives the free space back to the filesystem (InnoDB's system
    #: tablespace: the server reuses its free pages, OPTIMIZE / ALTER ... FORCE never shrink it);
    #: its reclaimable bytes are then free inside the file, not a rebuild's, and there is no
    #: rebuilt size (``rebuilt_bytes`` stays what the codecs' savings are counted against: the
    #: pages in use)
    shrinks: bool = True
    #: why it does not shrink, in words (with ``shrinks`` False)
    shrink_note: str | None = None

    @property
    def rebuilt_bytes(self) -> int:
        """The target rebuilt with its codec unchanged, at most (free space dropped)."""
        return int(self.compressible_bytes + self.overhead_bytes)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"compressible_bytes": int(self.compressible_bytes),
                               "overhead_bytes": int(self.overhead_bytes),
                               "reclaimable_bytes": int(self.reclaimable_bytes),
                               "rebuilt_bytes": self.rebuilt_bytes}
        if self.detail:
            out["reclaimable"] = {k: int(v) for k, v in self.detail.items()}
        if self.rebuild_ddl:
            out["rebuild_ddl"] = self.rebuild_ddl
        if not self.shrinks:
            out["shrinks"] = False
            if self.shrink_note:
                out["shrink_note"] = self.shrink_note
        return out


def _mb_s(v: float | None) -> float | None:
    return None if v is None or v <= 0 else round(float(v), 1)


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
    #: engine-specific figures beside the results, in the JSON as they are (empty: left out)
    facts: dict[str, Any] = field(default_factory=dict)
    #: compressible / overhead / reclaimable bytes (None: the engine does not split its bytes)
    split: Split | None = None

    def to_json(self) -> dict[str, Any]:
        out = {"target": self.target, "engine": self.engine,
               "current_bytes": int(self.current_bytes), "logical_bytes": int(self.logical_bytes),
               "current_codec": self.current_codec, "primary_model": self.primary_model,
               "results": [r.to_json(self.split, current=r.codec == self.current_codec
                                     and r.model == self.primary_model) for r in self.results]}
        if self.split is not None:
            out["split"] = self.split.to_json()
        if self.notes:
            out["notes"] = list(dict.fromkeys(self.notes))
        if self.facts:
            out["facts"] = dict(self.facts)
        return out


@dataclass
class Run:
    """State shared by the engines' target builders during one run."""

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
    units_encoded: int = 0
    errors: list[str] = field(default_factory=list)
    speed_cache: dict = field(default_factory=dict)
    #: estimate other engines' storage of the same rows (ARCHIVE's cross-engine figures)
    cross_engine: bool = True
    #: the first of a sampled run's two passes (run_whatif): every target sampled and encoded,
    #: its strata's spreads pooled; nothing measured that only the results need (speeds, the
    #: btrfs heuristic walk)
    pooling: bool = False
    #: (model, codec, granularity) -> (u, df) of each comparable stratum (compress/estimate.py)
    spread_pool: dict = field(default_factory=dict)
    #: (model, codec, granularity) -> SpreadPrior, fitted after the first pass
    priors: dict | None = None
    #: per run.project call, in order: what the first pass encoded (ProjectionMemory)
    memory: list = field(default_factory=list)
    #: per measure_speeds call, in order: the speeds the first pass measured
    speed_memory: list = field(default_factory=list)
    _calls: int = 0
    _speed_calls: int = 0

    #: share of a target's progress step that re-encoding takes; the speed measurements the rest
    ENCODE_SHARE = 0.9

    def _encode_progress(self):
        """The projector's progress, scaled into the encode share of the target's step."""
        if self.progress is None:
            return None
        cb, share = self.progress, self.ENCODE_SHARE

        def scaled(done: int, total: int, msg: str) -> None:
            frac = min(1.0, done / total) if total else 1.0
            cb(int(frac * share * 1000), 1000, msg)
        return scaled

    def speed_progress(self, i: int, n: int, codec: str) -> None:
        """Progress through a target's speed measurements (after its units are re-encoded)."""
        if self.progress is not None and n:
            share = self.ENCODE_SHARE
            self.progress(int((share + (1 - share) * i / n) * 1000), 1000, f"speed of {codec}")

    def check(self) -> None:
        if self.is_cancelled is not None and self.is_cancelled():
            raise Cancelled()

    def project(self, unitset: UnitSet, pairs, count: bool = True) -> Projection:
        k = self._calls
        self._calls += 1
        memory = self.memory[k] if k < len(self.memory) else None
        proj = project(unitset, pairs, self.spec, seed=self.seed, target_error=self.target_error,
                       progress=self._encode_progress(), is_cancelled=self.is_cancelled, pool=self.pool,
                       spread_pool=self.spread_pool if self.pooling else None, priors=self.priors,
                       memory=memory)
        if self.pooling:
            self.memory.append(proj.memory)
        proj.memory = None
        self.errors.extend(proj.errors)
        if count:
            self.units_sampled += proj.units_sampled
            self.units_total += proj.units_total
            self.units_encoded += proj.units_encoded
        return proj


def measure_speeds(run: Run, proj: Projection, codecs: list[Codec],
                   model=None) -> dict[str, tuple[float | None, float | None]]:
    """(compress, decompress) MB/s per codec on this target's sampled units, one thread
    (SPEED_METHOD); (None, None) for a codec whose speed here means nothing
    (:attr:`Codec.speed_measured`).

    Both are measured on whole sampled units (``measure``: the fastest of a few passes on
    one thread; the projection pass's CPU time is the fallback), with the model's own coders where
    it has them (``Model.speed_coders``); a model that gives a cache key (ClickHouse:
    codec and value type) is measured once per key in a run (it depends on the codec
    and the type far more than on the column).
    """
    k = run._speed_calls
    run._speed_calls += 1
    if not run.pooling and k < len(run.speed_memory):      # measured in the first pass
        return dict(run.speed_memory[k])
    out: dict[str, tuple[float | None, float | None]] = {}
    for i, c in enumerate(codecs):
        run.speed_progress(i, len(codecs), c.name)
        run.check()
        if not c.speed_measured:
            out[c.name] = (None, None)
            continue
        try:
            key, enc, dec = model.speed_coders(c) if model is not None else (None, None, None)
            if key is not None and key in run.speed_cache:
                comp, d = run.speed_cache[key]
            else:
                s = measure(c, proj.speed_payloads, max_bytes=SPEED_BYTES, max_seconds=SPEED_SECONDS,
                            threads=1, encode=enc, decode=dec, rounds=SPEED_ROUNDS)
                comp, d = s.compress_mb_s or proj.compress_mb_s(c.name), s.decompress_mb_s
                if key is not None and d > 0:
                    run.speed_cache[key] = (comp, d)
            out[c.name] = (comp or None, d or None)
        except Exception as e:     # a speed failure must not lose the projection
            run.errors.append(f"speed of {c.name}: {type(e).__name__}: {e}")
            out[c.name] = (None, None)
    if run.pooling:
        run.speed_memory.append(dict(out))
    return out


def model_pairs(codecs: list[Codec], models: list[Model], notes: list[str]) -> list[tuple[Codec, Model]]:
    """(codec, model) for every model and every codec it can project."""
    out = []
    for m in models:
        for c in codecs:
            why = check_codec_for(m, c)
            if why is None:
                out.append((c, m))
    return out


def add_results(target: Target, proj: Projection, speeds, adjust: Callable | None = None) -> None:
    for (cname, mname), pr in proj.pairs.items():
        est = pr.estimate
        if adjust is not None:
            est = adjust(pr, est)
        cs, ds = speeds.get(cname, (None, None))
        target.results.append(Result(cname, mname, est, cs, ds, rebuilds=bool(pr.model.rebuilds)))


def shift(est: Estimate, delta: float) -> Estimate:
    return Estimate(est.projected + delta, est.lo + delta, est.hi + delta, est.variance, est.df,
                    est.units_sampled, est.units_total, None if est.bound is None else est.bound + delta)


def raw_results(run: Run, t: Target, entry: FileEntry, codecs: list[Codec], fallocated: bool = False) -> None:
    """The filesystem comparisons of one file: ZFS and btrfs compressing its bytes
    as they are (128 KiB records).  ``fallocated``: the engine extends the file with
    fallocate (or it holds unwritten extents now): btrfs then never compresses it and
    keeps its preallocated extents whole, so its btrfs size is known without sampling."""
    fallocated = fallocated or entry.unwritten_bytes > 0
    raw = raw_records(entry, 131072)
    btrfs = BtrfsExtents(fallocated=fallocated, data_ranges=record_data_ranges(entry.holes, raw))
    models: list[Model] = [ZFSRecords()] + ([] if fallocated else [btrfs])
    pairs = model_pairs(codecs, models, t.notes)
    speeds: dict = {}
    if pairs and len(raw):
        proj = run.project(raw, pairs, count=False)
        speeds = measure_speeds(run, proj, sorted({c for c, _ in pairs}, key=lambda c: c.name))
        add_results(t, proj, speeds)
    if not fallocated and entry.apparent_bytes and not run.pooling:
        heuristic_results(t, entry, codecs, btrfs, speeds, run)
    if fallocated and entry.apparent_bytes:
        t.notes.append("btrfs: the file is extended with fallocate, and btrfs never compresses an inode "
                       "that was fallocated (BTRFS_INODE_PREALLOC, fs/btrfs/inode.c should_nocow): "
                       "its preallocated extents stay whole and uncompressed")
        n = float(roundup(int(entry.apparent_bytes), btrfs.sector))
        units = len(raw)
        for codec, _m in model_pairs(codecs, [btrfs], t.notes):
            cs, ds = speeds.get(codec.name, (None, None))     # the codec's speeds, measured for ZFS above
            t.results.append(Result(codec.name, btrfs.name, Estimate(n, n, n, 0.0, math.inf, units, units), cs, ds))


def record_data_ranges(holes: list[tuple[int, int]], raw: UnitSet):
    """unit index -> [(start, end)] of its written ranges, relative to the record."""
    hs = sorted((int(o), int(o) + int(n)) for o, n in holes)
    starts = [a for a, _b in hs]
    import bisect

    def ranges(k: int) -> list[tuple[int, int]]:
        s0 = int(raw.order_key[k])
        e0 = s0 + int(raw.logical[k])
        out, pos = [], s0
        i = max(0, bisect.bisect_right(starts, s0) - 1)
        while i < len(hs) and hs[i][0] < e0:
            a, b = hs[i]
            if b > pos:
                if a > pos:
                    out.append((pos - s0, min(a, e0) - s0))
                pos = max(pos, b)
            i += 1
        if pos < e0:
            out.append((pos - s0, e0 - s0))
        return out
    return ranges


def written_runs(holes: list[tuple[int, int]], size: int) -> list[tuple[int, int]]:
    """[start, end) of the ranges outside ``holes``, in file order."""
    out, pos = [], 0
    for o, n in sorted(holes):
        if o > pos:
            out.append((pos, min(o, size)))
        pos = max(pos, o + n)
    if pos < size:
        out.append((pos, size))
    return [(a, b) for a, b in out if b > a]


def heuristic_results(t: Target, entry: FileEntry, codecs: list[Codec], btrfs: BtrfsExtents, speeds: dict,
                      run: Run) -> None:
    """btrfs mounted with ``compress`` (not -force): its heuristic and the NOCOMPRESS flag
    depend on the order of writes, so the file is walked from its start as written in file
    order (fsmodels.btrfs_compress_walk), up to HEURISTIC_BUDGET bytes read."""
    from dbxray.parsers.fileio import ReadOnlyFile
    runs = written_runs(entry.holes, int(entry.apparent_bytes))
    pairs = model_pairs(codecs, [btrfs], [])
    if not runs or not pairs:
        return
    with ReadOnlyFile(entry.abspath) as f:
        for codec, _m in pairs:
            w = btrfs_compress_walk(lambda a, b: f.pread(a, b - a), runs, codec, budget=HEURISTIC_BUDGET)
            run.check()
            var = 0.0 if w.exact else ((w.hi - w.lo) / 3.92) ** 2
            n = len(runs)
            cs, ds = speeds.get(codec.name, (None, None))
            t.results.append(Result(codec.name, BTRFS_HEURISTIC_MODEL,
                                    Estimate(float(w.projected), float(w.lo), float(w.hi), var, math.inf,
                                             n if w.exact else 0, n), cs, ds))
    note = ("btrfs compress (not -force): walked in file order as btrfs writes a file from its start: one "
            "heuristic verdict per written range, then per 512 KiB chunk, NOCOMPRESS after the first 128 KiB "
            "that does not free a sector (fs/btrfs/inode.c, compression.c)")
    if note not in t.notes:
        t.notes.append(note)


#: bytes a btrfs ``compress`` walk reads per file before it gives the rest as a range
HEURISTIC_BUDGET = 8 << 20


def combine(estimates: list[Estimate]) -> Estimate:
    """Sum of independent estimates: variances add, df by Satterthwaite."""
    proj = sum(e.projected for e in estimates)
    var = sum(e.variance for e in estimates)
    den = sum((e.variance ** 2) / e.df for e in estimates if e.variance > 0 and math.isfinite(e.df))
    df = (var ** 2 / den) if den > 0 else math.inf
    half = t975(df) * math.sqrt(var) if var > 0 else 0.0
    lo_floor = sum(e.lo for e in estimates) if var == 0 else 0.0
    hi = proj + half
    # the sum of what each part can physically take bounds the whole (every part's hi is
    # inside its own bound); an exact part without a bound counts its own size
    parts = [e.bound if e.bound is not None else (e.hi if e.variance == 0 else None) for e in estimates]
    bound = None if any(b is None for b in parts) else float(sum(parts))
    if bound is not None:
        hi = min(hi, bound)
    return Estimate(proj, max(proj - half, lo_floor), hi, var, df,
                    sum(e.units_sampled for e in estimates), sum(e.units_total for e in estimates), bound)

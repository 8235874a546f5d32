"""Project one population of units under several (codec, model) pairs.

This is the loop behind ``whatif``: classify the units whose projection is
known without encoding (never-compressed pages, holes), draw a seeded
stratified sample of the others, encode the sampled units with every codec
on both cores, and turn the (logical, projected) pairs into an
:class:`~compress.estimate.Estimate` per pair.  With a target error the
sample grows (doubling) until every pair's 95% interval is narrower than the
target or the sample is whole.
"""
from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from dbxray.parsers.model import Cancelled

from .estimate import Estimate, StratumSample, aux_spread, pool_spreads, ratio_estimate
from .models import Model
from .registry import Codec, same_input_sizes
from .sampling import SampleSpec, Strata, stratify
from .sources import UnitSet
from .speed import workers

#: bytes of sampled payloads kept per unit set for the speed measurement
SPEED_KEEP_BYTES = 16 * 1024 * 1024


@dataclass
class PairResult:
    codec: Codec
    model: Model
    estimate: Estimate
    fixed_bytes: int
    partial_units: float = 0.0     # estimated units stored partly (0 < bytes < unit): extents


@dataclass
class Projection:
    """What one unit set gave: per (codec name, model name) an estimate."""

    unitset: UnitSet
    pairs: dict[tuple[str, str], PairResult] = field(default_factory=dict)
    units_sampled: int = 0          # re-encoded, or known without encoding
    units_total: int = 0
    units_encoded: int = 0          # re-encoded (sampled) only
    fraction: float = 0.0
    speed_payloads: list[bytes] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    #: (codec name, model name) -> [logical bytes encoded, seconds spent in the encoder]
    timing: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    threads: int = 1
    #: what was encoded, for a second pass over the same unit set (None once taken)
    memory: "ProjectionMemory | None" = None

    def compress_mb_s(self, codec_name: str) -> float:
        """Encoder throughput of a codec seen while projecting, on one thread: the bytes
        encoded over the CPU time of the encoding calls (the thread's own time, so other
        work on the machine does not slow it), MB/s."""
        best = 0.0
        for (c, _m), (nbytes, secs) in self.timing.items():
            if c == codec_name and secs > 0:
                best = max(best, nbytes / secs / 1e6)
        return best


@dataclass
class ProjectionMemory:
    """The first pass's encodings of one unit set (run_whatif samples every target before it
    estimates any): per (codec, model) the projected bytes of each encoded unit, and the
    encoder's CPU time, so the second pass estimates from the same units without encoding them
    again."""

    label: str
    units: int
    y: dict[tuple[str, str], dict[int, int]]
    timing: dict[tuple[str, str], list[float]]
    #: per model (in the order of the pairs) the projections known without encoding
    fixed: list[np.ndarray]


def _fraction_schedule(spec: SampleSpec, target_error: float | None) -> list[float]:
    cap = 1.0 if spec.is_all else spec.fraction
    if target_error is None:
        return [cap]
    fracs, f = [], min(0.01, cap)
    while f < cap:
        fracs.append(f)
        f *= 2
    fracs.append(cap)
    return fracs


def project(unitset: UnitSet, pairs: list[tuple[Codec, Model]], spec: SampleSpec, seed: int = 0,
            target_error: float | None = None,
            progress: Callable[[int, int, str], None] | None = None,
            is_cancelled: Callable[[], bool] | None = None,
            pool: ThreadPoolExecutor | None = None, spread_pool: dict | None = None,
            priors: dict | None = None, memory: ProjectionMemory | None = None) -> Projection:
    """Estimate the projected bytes of ``unitset`` under every (codec, model) pair.

    ``spread_pool``: where the final sample's strata add their spreads (the first pass of a
    run); ``priors``: the pooled spreads the estimates use (the second); ``memory``: the first
    pass's encodings of this unit set (used when its label, size and models match; its payloads
    are then not read again: the speeds are measured in the first pass)."""
    out = Projection(unitset, units_total=len(unitset))
    n = len(unitset)
    models = list({id(m): m for _, m in pairs}.values())
    if memory is not None and (memory.label != unitset.label or memory.units != n
                               or len(memory.fixed) != len(models)):
        memory = None
    # -- units known without encoding, per model --------------------------
    fixed: dict[int, np.ndarray] = {}
    probe_idx = np.flatnonzero(unitset.probe) if unitset.probe is not None else np.array([], dtype=np.int64)
    if memory is not None:
        fixed = {id(m): v.copy() for m, v in zip(models, memory.fixed)}
        probe_idx = probe_idx[:0]
    for m in (models if memory is None else []):
        vals = np.full(n, -1, dtype=np.int64)
        if unitset.kinds is not None and n:
            # one call per distinct kind (-1: not fixed by its kind), then a look-up per unit
            memo = {k: -1 if (v := m.fixed_by_kind(k)) is None else int(v) for k in set(unitset.kinds)}
            by_kind = np.fromiter(map(memo.__getitem__, unitset.kinds), dtype=np.int64, count=n)
            vals = np.where(by_kind >= 0, by_kind, vals)
        if m.rebuilds and unitset.free is not None:     # the rebuild does not carry free units over
            vals[unitset.free & (vals < 0)] = 0
        if unitset.zero is not None:      # wholly in a hole: all zeros, never written
            for i in np.flatnonzero(unitset.zero & (vals < 0)):
                v = m.fixed_by_payload(bytes(int(unitset.logical[i])))
                vals[i] = 0 if v is None else v
        fixed[id(m)] = vals
    if len(probe_idx):
        for i in probe_idx:
            if all(fixed[id(m)][i] >= 0 for m in models):
                continue
            if is_cancelled is not None and is_cancelled():
                raise Cancelled()
            data = unitset.payload(int(i))
            for m in models:
                if fixed[id(m)][i] < 0:
                    v = m.fixed_by_payload(data)
                    if v is not None:
                        fixed[id(m)][i] = v
    strata_by_model: dict[int, Strata] = {
        id(m): stratify(unitset.strata, seed=seed, eligible=fixed[id(m)] < 0) for m in models}
    # -- sample rounds -------------------------------------------------------
    y: dict[tuple[str, str], dict[int, int]] = {(c.name, m.name): {} for c, m in pairs}
    remembered = memory.y if memory is not None else {}
    keep_limit = 0 if memory is not None else SPEED_KEEP_BYTES
    if memory is not None:
        for key, tm in memory.timing.items():
            out.timing[key] = list(tm)
    done_units: set[int] = set()
    lock = threading.Lock()
    kept_bytes = [0]
    failed: dict[tuple[str, str], str] = {}
    n_workers = workers()
    out.threads = n_workers
    own = pool is None
    ex = pool or ThreadPoolExecutor(max_workers=n_workers)
    schedule = _fraction_schedule(spec, target_error)
    try:
        for f in schedule:
            need: set[int] = set()
            for m in models:
                for idx in strata_by_model[id(m)].take(f):
                    need.update(int(i) for i in idx)
            todo = sorted(need - done_units)
            total_todo = len(todo)
            counter = [0]

            def work(i: int) -> tuple[int, dict]:
                if is_cancelled is not None and is_cancelled():
                    raise Cancelled()
                res = {}
                times = {}
                for c, m in pairs:       # the first pass's encodings of this unit
                    key = (c.name, m.name)
                    v = remembered.get(key, {}).get(i)
                    if v is not None and fixed[id(m)][i] < 0:
                        res[key] = v
                todo_pairs = [(c, m) for c, m in pairs if (c.name, m.name) not in res]
                if todo_pairs or kept_bytes[0] < keep_limit:
                    data = unitset.payload(i)
                else:
                    data = b""
                # two models compressing the unit's same bytes with one codec encode them once
                with same_input_sizes() as sizes:
                    for c, m in todo_pairs:
                        key = (c.name, m.name)
                        if fixed[id(m)][i] >= 0 or key in failed:
                            continue
                        known = m.known_size(c, data, i)
                        if known is not None:       # the stored size: nothing to encode, nothing timed
                            res[key] = known
                            continue
                        hits = sizes.hits
                        t0 = time.thread_time()
                        try:
                            res[key] = m.project(c, data, i)
                        except Exception as e:      # noqa: BLE001 -- one codec failing drops that pair only
                            with lock:
                                failed[key] = f"{unitset.label}: {c.name} ({m.name}): {type(e).__name__}: {e}"
                            continue
                        if sizes.hits == hits:      # a size taken from the memo is no encoder's time
                            times[key] = time.thread_time() - t0
                with lock:
                    for key, dt in times.items():
                        tm = out.timing.setdefault(key, [0.0, 0.0])
                        tm[0] += len(data)
                        tm[1] += dt
                    counter[0] += 1
                    if kept_bytes[0] < keep_limit and data:
                        out.speed_payloads.append(data)
                        kept_bytes[0] += len(data)
                    if progress is not None and (counter[0] % 16 == 0 or counter[0] == total_todo):
                        progress(counter[0], total_todo, f"{unitset.label}: encoding units")
                return i, res

            # the second pass of a run looks its units' encodings up (memory): on this thread, no
            # task per unit handed to the pool (a unit the first pass did not encode is encoded here)
            for i, res in (map if memory is not None else ex.map)(work, todo):
                done_units.add(i)
                for key, v in res.items():
                    y[key][i] = v
            out.fraction = f
            live = [(c, m) for c, m in pairs if (c.name, m.name) not in failed]
            spreads = _estimate_all(out, unitset, live, fixed, strata_by_model, y, f, priors)
            if target_error is not None and all(
                    r.estimate.relative_half_width <= target_error for r in out.pairs.values()):
                break
    finally:
        if own:
            ex.shutdown()
    if spread_pool is not None:
        for gkey, vals in spreads.items():
            spread_pool.setdefault(gkey, []).extend(vals)
        out.memory = ProjectionMemory(unitset.label, n, y, {k: list(v) for k, v in out.timing.items()},
                                      [fixed[id(m)] for m in models])
    out.errors.extend(failed.values())
    for key in failed:
        out.pairs.pop(key, None)
    fixed_any = np.zeros(n, dtype=bool)
    for v in fixed.values():
        fixed_any |= v >= 0
    known = set(np.flatnonzero(fixed_any).tolist())
    out.units_sampled = len(done_units | known)
    out.units_encoded = len(done_units - known)
    return out


def pool_key(model: Model, codec_name: str) -> tuple[str, str, int]:
    """Strata pool their spreads with strata of the same storage model (name and rounding
    step) under the same codec, across the run's targets."""
    return (model.name, codec_name, int(model.granularity))


def _estimate_all(out: Projection, unitset: UnitSet, pairs, fixed, strata_by_model, y, f: float,
                  priors: dict | None = None) -> dict:
    """Every pair's estimate; returns each pair's strata spreads by pool key."""
    spreads: dict = {}
    for c, m in pairs:
        vals = fixed[id(m)]
        fmask = vals >= 0
        fixed_bytes = int(vals[fmask].sum())
        st = strata_by_model[id(m)]
        samples = []
        ys = y[(c.name, m.name)]
        partial_est = 0.0
        full = unitset.logical
        for order, idx in zip(st.order, st.take(f)):
            xs = unitset.logical[idx].astype(np.float64)
            yv = np.array([ys[int(i)] for i in idx], dtype=np.float64)
            group = int(unitset.group[order[0]]) if unitset.group is not None and len(order) else None
            aux = (aux_spread(unitset.logical[order], unitset.aux[order], len(idx))
                   if unitset.aux is not None else None)
            samples.append(StratumSample(len(order), float(unitset.logical[order].sum()), xs, yv, group, aux))
            if len(idx):
                part = np.mean((yv > 0) & (yv < full[idx]))
                partial_est += part * len(order)
        partial_est += float(np.sum((vals > 0) & (vals < full) & fmask))
        rest = np.flatnonzero(~fmask)
        most = m.max_bytes(unitset.logical[rest], codec=c, units=rest)
        vals_pool = pool_spreads(samples, m.granularity)
        if vals_pool:
            spreads.setdefault(pool_key(m, c.name), []).extend(vals_pool)
        est = ratio_estimate(samples, fixed_bytes=fixed_bytes, fixed_units=int(fmask.sum()),
                             granularity=m.granularity,
                             upper_bound=None if most is None else fixed_bytes + float(most.sum()),
                             prior=(priors or {}).get(pool_key(m, c.name)))
        out.pairs[(c.name, m.name)] = PairResult(c, m, est, fixed_bytes, partial_est)
    return spreads

"""``run_whatif``: projected bytes per target and codec, with 95% intervals,
speeds and advice, as the JSON of ``dbxray whatif --json``.

Targets are the engines' (``compress/engines/``): for InnoDB one per
tablespace file, for ClickHouse one per column and one per table, for TokuDB
one per dictionary file.  What a target is made of is in
:mod:`compress.targets`; the estimator in :mod:`compress.estimate`; sampling in
:mod:`compress.sampling`.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from dbxray.parsers import parallel
from dbxray.parsers.model import Cancelled, Dataset, FileEntry, ScanContext

from . import advisor
from . import engines as whatif_engines
from .engines import WhatIfEngine
from .registry import DEFAULT_CODECS, Codec, CodecUnavailable, parse_codec
from .estimate import fit_spread_prior
from .sampling import parse_sample
from .sources import SourceUnavailable
from .targets import SPEED_METHOD
from .speed import workers
from .targets import Run, Target


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
               engines: tuple[str, ...] | None = None, cross_engine: bool = True) -> dict:
    """The what-if projection of a scanned dataset (see the module doc and the issue's JSON).

    ``codecs``: names (``zstd:3``, ``Delta(4),ZSTD(1)``...), None for the
    defaults.  ``sample``: a fraction or ``"all"``.  ``target_error``: stop
    growing the sample once every 95% interval is narrower than this relative
    half-width (0.01 = 1%).  ``filesystem`` overrides the detected filesystem
    type (``ext4`` adds its extent-tree blocks to page-compressed files).
    ``cross_engine``: also estimate another engine's storage of the same rows where an engine
    offers it (ARCHIVE: InnoDB, ROW_FORMAT=COMPRESSED, MyRocks, TokuDB).
    """
    spec = parse_sample(sample)
    cods = resolve_codecs(codecs)
    n_workers = workers()
    with ThreadPoolExecutor(max_workers=n_workers) as pool:
        def new_run(**kw) -> Run:
            return Run(spec, seed, target_error, fs_block, filesystem, progress, is_cancelled, pool,
                       raw_models, larger_pages, cross_engine=cross_engine, **kw)

        # file targets in the dataset's file order, then dataset-level targets per engine
        work: list[tuple[WhatIfEngine, FileEntry | None]] = []
        not_projected: list[dict[str, str]] = []
        for e in dataset.files:
            w = whatif_engines.get(e.engine)
            if w is not None and (engines is None or w.name in engines):
                if w.wants_file(e):
                    work.append((w, e))
                elif (why := w.declined(e)) is not None:
                    not_projected.append({"target": e.path, "why": why})
        for w in whatif_engines.present(dataset.engines):    # dataset-level targets need files of theirs
            if (engines is None or w.name in engines) and w.wants_dataset(dataset):
                work.append((w, None))
        total = len(work) * 1000 * (POOLING_SHARE + 1)
        if spec.is_all:     # every unit encoded, the projections exact: one pass, no spread to pool
            run = new_run()
            targets = _build(run, work, dataset, cods, progress, 0, 1000 * (POOLING_SHARE + 1), total, "")
        else:
            # the first pass samples and encodes every target and pools its strata's spreads;
            # the second estimates each target with them, from the same units (not encoded again)
            first = new_run(pooling=True)
            offsets = None
            if forked_first_pass(work, n_workers, is_cancelled):
                offsets = _build_forked(first, work, dataset, cods, progress, 0, 1000 * POOLING_SHARE, total,
                                        lambda: Run(spec, seed, target_error, fs_block, filesystem, None, None,
                                                    _HERE, raw_models, larger_pages, cross_engine=cross_engine,
                                                    pooling=True))
            else:
                _build(first, work, dataset, cods, progress, 0, 1000 * POOLING_SHARE, total, "")
            priors = fit_priors(first.spread_pool)
            run = new_run(priors=priors, memory=first.memory,
                          speed_memory=first.speed_memory, speed_cache=first.speed_cache)
            run.errors.extend(e for e in first.errors if e.startswith("speed of "))
            if offsets is not None and parallel.fork_safe():
                targets = _estimate_forked(run, work, dataset, cods, progress, len(work) * 1000 * POOLING_SHARE,
                                           1000, total, offsets,
                                           lambda: Run(spec, seed, target_error, fs_block, filesystem, None,
                                                       None, _HERE, raw_models, larger_pages,
                                                       cross_engine=cross_engine, priors=priors,
                                                       memory=first.memory, speed_memory=first.speed_memory,
                                                       speed_cache=first.speed_cache))
            else:
                targets = _build(run, work, dataset, cods, progress, len(work) * 1000 * POOLING_SHARE, 1000,
                                 total, " (estimating)")
        if progress is not None:
            progress(total, total, "what-if: units re-encoded; writing the advice")
    out: dict[str, Any] = {
        "tool": "dbxray", "schema_version": 1, "kind": "whatif", "root": dataset.root,
        "sample": {"mode": spec.mode, "fraction": spec.fraction, "seed": int(seed),
                   "units_sampled": int(run.units_sampled), "units_total": int(run.units_total),
                   "units_encoded": int(run.units_encoded),
                   "description": sample_description(spec, int(seed), int(run.units_encoded),
                                                     int(run.units_sampled) - int(run.units_encoded),
                                                     int(run.units_total))},
        "fs_block": int(fs_block or _first_fs_block(dataset)),
        "codecs": [c.name for c in cods],
        "speed_method": SPEED_METHOD,
        "targets": [t.to_json() for t in targets],
        "advice": advisor.advise(targets),
    }
    if not_projected:
        out["not_projected"] = not_projected
    if run.errors:
        out["errors"] = run.errors
    return out


#: the first pass (encoding) takes this many times the second's share of the progress
POOLING_SHARE = 9


def fit_priors(spread_pool: dict) -> dict:
    """The pooled spread per (model, codec, granularity) (compress/estimate.py)."""
    out: dict = {}
    for key, vals in spread_pool.items():
        prior = fit_spread_prior(vals)
        if prior is not None:
            out[key] = prior
    return out


def _build(run: Run, work, dataset: Dataset, cods: list[Codec], progress, base: int, width: int, total: int,
           suffix: str) -> list[Target]:
    """Every target of ``work``; the progress from ``base``, ``width`` a target, out of ``total``."""
    targets: list[Target] = []

    def sub_progress(k: int):
        last = [base + k * width]

        def cb(done: int, n: int, msg: str) -> None:     # never goes back within a target
            frac = min(1.0, done / n) if n else 1.0
            last[0] = max(last[0], base + k * width + int(frac * (width - 1)))
            progress(last[0], total, msg)
        return cb

    for k, (w, e) in enumerate(work):
        run.check()
        if progress is not None:
            run.progress = sub_progress(k)
            progress(base + k * width, total, f"what-if: {e.path if e is not None else w.name}{suffix}")
        try:
            if e is not None:
                targets.append(w.file_target(run, e, cods))
            else:
                targets.extend(w.dataset_targets(run, dataset, cods))
        except (SourceUnavailable, CodecUnavailable) as err:
            run.errors.append(str(err))
        except Cancelled:
            raise
        except Exception as err:    # one bad target must not lose the others
            where = e.path if e is not None else w.name
            run.errors.append(f"{where}: {type(err).__name__}: {err}")
    return targets


#: the first pass of a sampled run reads its file targets in forked processes (one target at a
#: time each, on one thread: :func:`_build_forked`) from this many bytes of files on
FORK_MIN_BYTES = 64 << 20


def forked_first_pass(work, n_workers: int, is_cancelled) -> bool:
    """Whether the first pass's file targets are built in forked worker processes: more than one
    core, two file targets at least, :data:`FORK_MIN_BYTES` of them and no file over a core's
    share of the bytes (a lone big file keeps the threads of one process: all the cores on its
    units), no cancel hook to poll (the window), and a process that may fork (one thread: the
    command line; ``parsers.parallel.fork_safe``)."""
    sizes = [int(e.apparent_bytes or 0) for _w, e in work if e is not None]
    if n_workers < 2 or is_cancelled is not None or len(sizes) < 2:
        return False
    total = sum(sizes)
    return total >= FORK_MIN_BYTES and max(sizes) * n_workers <= total and parallel.fork_safe()


class _Here:
    """An executor that runs every call on the calling thread, in order: a forked worker of the
    first pass encodes its target's units on its one thread (the processes share the cores)."""

    def map(self, fn, *iterables):
        return map(fn, *iterables)

    def shutdown(self, wait: bool = True) -> None:
        pass


_HERE = _Here()


def _build_forked(first: Run, work, dataset: Dataset, cods: list[Codec], progress, base: int, width: int,
                  total: int, fresh_run) -> dict[int, tuple[int, int]]:
    """:func:`_build` of the first pass with its file targets built in forked processes, one task
    a target (``parsers.parallel.map_calls``: the workers take the next target as they finish one),
    each in a fresh :class:`Run` of its own; what each leaves in its run (the encodings per
    ``Run.project`` call, the speeds per ``measure_speeds`` call, its strata's spreads, errors and
    counts) is added to ``first`` in target order, as one process building them in order leaves
    it.  The dataset-level targets (after the files in ``work``) are built here after them.

    Returns where each target's calls start in ``first.memory`` / ``first.speed_memory``
    (``work`` index -> (project calls, speed calls) before it; ``None`` for the rest after the
    files), for :func:`_estimate_forked`."""
    files = [k for k, (_w, e) in enumerate(work) if e is not None]
    offsets: dict = {}

    def one(k: int) -> tuple:
        run = fresh_run()
        w, e = work[k]
        try:
            w.file_target(run, e, cods)
        except (SourceUnavailable, CodecUnavailable) as err:
            run.errors.append(str(err))
        except Exception as err:    # one bad target must not lose the others
            run.errors.append(f"{e.path}: {type(err).__name__}: {err}")
        return (run.memory, run.speed_memory, run.spread_pool, run.errors, run.units_sampled,
                run.units_total, run.units_encoded, run._calls, run._speed_calls)

    # the sampling's numpy.random (imported by numpy on first use, 20-50 ms) once here, not in every worker
    import numpy.random  # noqa: F401
    for n, k, got in _forked_in_order(work, files, one, lambda k: work[k][0].file_cost(work[k][1])):
        memory, speed_memory, spreads, errors, sampled, units, encoded, calls, speed_calls = got
        offsets[k] = (first._calls, first._speed_calls)
        first.memory.extend(memory)
        first.speed_memory.extend(speed_memory)
        for key, vals in spreads.items():
            first.spread_pool.setdefault(key, []).extend(vals)
        first.errors.extend(errors)
        first.units_sampled += sampled
        first.units_total += units
        first.units_encoded += encoded
        first._calls += calls
        first._speed_calls += speed_calls
        if progress is not None:
            progress(base + (n + 1) * width, total, f"what-if: {work[k][1].path}")
    offsets[None] = (first._calls, first._speed_calls)
    rest = [x for x in work if x[1] is None]
    if rest:
        _build(first, rest, dataset, cods, progress, base + len(files) * width, width, total, "")
    return offsets


def _estimate_forked(run: Run, work, dataset: Dataset, cods: list[Codec], progress, base: int, width: int,
                     total: int, offsets: dict, fresh_run) -> list[Target]:
    """The second pass of a run whose first was forked (:func:`_build_forked`): each file target
    estimated in a forked process (it encodes nothing: its units' sizes come from the first
    pass's memory, from where ``offsets`` says its calls start, its speeds likewise), the
    largest first; the targets, errors and counts are added to ``run`` in target order, as one
    process estimating them in order leaves them.  The dataset-level targets are estimated
    here after them, from the memory after the files'."""
    files = [k for k, (_w, e) in enumerate(work) if e is not None]

    def one(k: int) -> tuple:
        r = fresh_run()
        r._calls, r._speed_calls = offsets[k]
        w, e = work[k]
        t = None
        try:
            t = w.file_target(r, e, cods)
        except (SourceUnavailable, CodecUnavailable) as err:
            r.errors.append(str(err))
        except Exception as err:    # one bad target must not lose the others
            r.errors.append(f"{e.path}: {type(err).__name__}: {err}")
        return t, r.errors, r.units_sampled, r.units_total, r.units_encoded

    targets: list[Target] = []
    for n, k, got in _forked_in_order(work, files, one, lambda k: int(work[k][1].apparent_bytes or 0)):
        t, errors, sampled, units, encoded = got
        if t is not None:
            targets.append(t)
        run.errors.extend(errors)
        run.units_sampled += sampled
        run.units_total += units
        run.units_encoded += encoded
        if progress is not None:
            progress(base + (n + 1) * width, total, f"what-if: {work[k][1].path} (estimating)")
    rest = [x for x in work if x[1] is None]
    if rest:
        run._calls, run._speed_calls = offsets[None]
        targets.extend(_build(run, rest, dataset, cods, progress, base + len(files) * width, width, total,
                              " (estimating)"))
    return targets


def _forked_in_order(work, files: list[int], one, cost):
    """``(n, k, one(k))`` for the file targets ``files`` of ``work``, ``one`` run in forked
    processes (``parsers.parallel.map_calls``), handed out the costliest first (the workers take
    the next as they finish one: a long target last would run alone), given back in target
    order as the results come."""
    order = sorted(files, key=lambda k: -cost(k))
    weights = [max(1, int(work[k][1].apparent_bytes or 0)) for k in order]
    ctx = ScanContext(workers=workers())
    results = zip(order, parallel.map_calls(one, [(k,) for k in order], ctx, weights, task_calls=1))
    for n, (k, got) in enumerate(_in_order(results, files)):
        yield n, k, got


def _in_order(results, keys: list):
    """``(key, value)`` pairs coming in any order, given back in the order of ``keys`` as soon as
    each one's predecessors have come."""
    waiting: dict = {}
    pos = 0
    for key, value in results:
        waiting[key] = value
        while pos < len(keys) and keys[pos] in waiting:
            yield keys[pos], waiting.pop(keys[pos])
            pos += 1
    for key in keys[pos:]:
        yield key, waiting.pop(key)


def sample_description(spec, seed: int, encoded: int, known: int, total: int) -> str:
    """The sample in words (the GUI, the CLI and the report show it)."""
    exact = (f"{known:,} more are known without encoding (free, all-zero or never-compressed pages) and "
             f"counted exactly") if known else "none is known without encoding"
    if spec.is_all:
        return (f"every unit: {encoded:,} of {total:,} units (pages, blocks, nodes) re-encoded, {exact}; the "
                f"projections are exact for each model")
    pct = f"{spec.fraction:.0%}" if spec.fraction >= 0.01 else f"{spec.fraction:.2%}"
    return (f"{encoded:,} of {total:,} units (pages, blocks, nodes) re-encoded, {exact}. Each owner (index, "
            f"column, dictionary, level) is a stratum: {pct} of its units are drawn at random (seed {seed}), "
            f"at least 2 (all of a smaller one), so small owners and small files are sampled above {pct}; "
            f"the 95% intervals come from the spread within each stratum, moderated towards the spread pooled over "
            f"the run's strata of the same storage model and codec where at least 10 of them were sampled "
            f"(strata whose sampled units differ in size over 8 times left out of it; never less than half the "
            f"model's rounding step, a filesystem block for page compression, per unit); a TokuDB dictionary's "
            f"nodes of one height share their spread, and no node's interval is narrower than its partitions' "
            f"stored bytes vary")


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


__all__ = ["run_whatif", "resolve_codecs", "targets_by_name", "result_for"]

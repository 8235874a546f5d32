"""Independent files read on every core: an engine's per-file step run in forked
worker processes (parsers/forkpool.py), the results (each file's JSON facts, not its per-page arrays)
sent back and put on the parent's :class:`FileEntry` objects in file order.

Processes, not threads: an engine's per-file work is mostly small numpy calls and
Python between them, which hold the GIL.  Workers are forked, so they start from the
parent's state (the engine's cross-file facts, e.g. InnoDB's dictionary names) without
sending it; they get file indexes and send back only what :data:`RESULT_FIELDS` names
(and, when ``ScanContext.keep_units``, the units and the parser's own objects too).
Reads past a file's end that a worker survived (parsers/mapguard.py) are sent back
with it, so the scan's warning about them is the same as in one process.

Used when ``ScanContext.workers`` > 1 (the command line: ``os.cpu_count()``) and the
files are worth it (:func:`use_pool`); elsewhere each file is read here, in order.

A process that must not fork (the window: Qt's threads) reads a data dir of thousands
of files in workers of a fork server instead (:func:`use_served_pool`): a fresh
interpreter started once, with the parsers imported, that forks the workers; the
per-file function and the files go to them pickled (the function must pickle: InnoDB's
is a ``functools.partial`` of a module-level function, its dictionary names and the
scan's settings), and the workers send back no per-file parser objects (InnoDB page
maps are read again on demand, as past the scan's ``detail_budget``).
"""
from __future__ import annotations

import functools
import os
import pickle
import sys
import threading
from dataclasses import replace
from typing import Any, Callable, Iterator

import numpy as np

from . import mapguard
from .model import Cancelled, FileEntry, ScanContext
from .packing import SectionPacker

#: what a worker sends back of each file (the JSON's facts and what the engines'
#: cross-file steps read: sections, names, errors)
RESULT_FIELDS = ("apparent_bytes", "allocated_bytes", "holes", "unwritten", "errors", "warnings", "database",
                 "table", "kind_names", "owner_names", "sections", "facts", "fs", "fs_block", "seen",
                 "facts_pending")
#: the per-unit fields, sent back only when the scan keeps them
UNIT_FIELDS = ("units", "unit_facts")

#: a pool pays for itself above this many files, or this many bytes
MIN_FILES = 8
MIN_BYTES = 64 << 20
#: files per task at most, and bytes per task (a task is one round trip)
CHUNK_FILES = 64
CHUNK_BYTES = 32 << 20
#: a fork server's pool pays for its start (a fresh interpreter importing the parsers,
#: ~0.3 s, then sending every file and its result through pipes) from this many files on
MIN_FILES_SERVED = 1000
#: what the fork server imports before it forks a worker
SERVED_PRELOAD = ["dbxray.parsers.scan", "dbxray.parsers.engines"]

_job: tuple[Callable[[FileEntry], None], list[FileEntry], tuple[str, ...], bool] | None = None


def cpu_workers() -> int:
    """Cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def fork_safe() -> bool:
    """Whether forking copies nothing another thread holds: this process runs one
    Python thread and no Qt application (whose threads a child would lose mid-lock).
    The command line's scan is such a process; the window reads files here."""
    # os.fork, not multiprocessing's start methods: its import brings socket & co (~7 ms)
    if not hasattr(os, "fork") or threading.active_count() > 1:
        return False
    qt = sys.modules.get("PySide6.QtCore")
    return qt is None or qt.QCoreApplication.instance() is None


def use_pool(entries: list[FileEntry], ctx: ScanContext) -> bool:
    if ctx.workers <= 1 or len(entries) < 2 or not fork_safe():
        return False
    return len(entries) >= MIN_FILES or sum(int(e.apparent_bytes) for e in entries) >= MIN_BYTES


def use_served_pool(entries: list[FileEntry], ctx: ScanContext, func: Callable) -> bool:
    """Whether ``entries`` are read in a fork server's workers: more than one worker asked,
    forking this process is not safe (:func:`fork_safe`), thousands of files, not a frozen
    bundle (whose executable is not a Python a fork server can start), and ``func`` pickles."""
    if ctx.workers <= 1 or len(entries) < MIN_FILES_SERVED or fork_safe() or getattr(sys, "frozen", False):
        return False
    import multiprocessing
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return False
    try:
        pickle.dumps(func)
    except Exception:        # a lambda or a closure: read here
        return False
    return True


def lighten(entry: FileEntry, keep_detail: tuple[str, ...]) -> None:
    """Drop a file's per-unit arrays and parser objects (all but ``keep_detail``)."""
    entry.units = None
    entry.unit_facts = None
    entry.detail = {k: v for k, v in entry.detail.items() if k in keep_detail}


def _state(entry: FileEntry, keep_detail: tuple[str, ...], keep_units: bool) -> dict[str, Any]:
    out = {name: getattr(entry, name) for name in RESULT_FIELDS}
    if keep_units:
        for name in UNIT_FIELDS:
            out[name] = getattr(entry, name)
        out["detail"] = entry.detail
    else:
        out["detail"] = {k: v for k, v in entry.detail.items() if k in keep_detail}
    events = mapguard.shrink_events(entry.abspath)
    if events:
        out["_shrunk"] = events
    return out


def _apply(entry: FileEntry, state: dict[str, Any]) -> None:
    events = state.pop("_shrunk", None)
    if events:
        mapguard.add_events(entry.abspath, events)
    for name, value in state.items():
        setattr(entry, name, value)


def _run(chunk: list[int]) -> list[tuple[int, dict[str, Any]]]:
    """In a worker: the job's function on files ``chunk``, their states."""
    assert _job is not None
    func, entries, keep_detail, keep_units = _job
    out = []
    for i in chunk:
        entry = entries[i]
        func(entry)
        out.append((i, _state(entry, keep_detail, keep_units)))
        if not keep_units:
            lighten(entry, keep_detail)
    return out


def _chunks(entries: list[FileEntry], workers: int, costs: list[float] | None = None) -> list[list[int]]:
    """File indexes cut so that every worker gets several tasks: in file order, except that a
    file whose ``costs`` (its expected work, in the unit of bytes read) alone fill a task goes
    first, alone, the costliest first; otherwise the pool would start it when it meets it in
    file order, maybe last, and end with one worker busy and the others idle."""
    weights = costs if costs is not None else [float(e.apparent_bytes) for e in entries]
    weights = [max(float(w), 1.0) for w in weights]
    total = sum(weights)
    per_task = max(1.0, min(float(CHUNK_BYTES), total / (workers * 4)))
    per_files = max(1, min(CHUNK_FILES, len(entries) // (workers * 4) or 1))
    out: list[list[int]] = []
    if costs is not None:
        heavy = sorted((i for i, w in enumerate(weights) if w >= per_task), key=lambda i: -weights[i])
        out.extend([i] for i in heavy)
        rest = [i for i, w in enumerate(weights) if w < per_task]
    else:
        rest = list(range(len(entries)))
    cur: list[int] = []
    size = 0.0
    for i in rest:
        cur.append(i)
        size += weights[i]
        if len(cur) >= per_files or size >= per_task:
            out.append(cur)
            cur, size = [], 0.0
    if cur:
        out.append(cur)
    return out


def _pack(entry: FileEntry, packer: SectionPacker, ctx: ScanContext) -> None:
    """Pack what a file keeps: its sections, and its units and unit facts when the scan keeps
    them (the window)."""
    entry.pack(packer, units=ctx.keep_units)


def each_file(entries: list[FileEntry], func: Callable[[FileEntry], None], ctx: ScanContext,
              keep_detail: tuple[str, ...] = (),
              cost: Callable[[FileEntry], float] | None = None) -> Iterator[tuple[int, FileEntry]]:
    """Run ``func`` on every entry (it fills the entry and catches its own file's
    errors), yielding ``(index, entry)`` in file order once the entry holds the result.
    With more than one worker the work runs in forked processes (``func`` then sees a
    copy of the entry; only :data:`RESULT_FIELDS`, ``detail[keep_detail]`` and, when
    ``ctx.keep_units``, the units come back).  ``ctx.check()`` is polled between files
    here (between a worker's results in a pool, which is then ended).  With more
    than ``ctx.pack_sections_over`` entries, each file's sections (and kept units) are
    packed once the caller is done with it (when the loop asks for the next).

    ``cost`` (a file's expected work, in bytes read: e.g. a compressed file's bytes times
    what decoding a byte costs) lets a pool start the costliest files first; the results
    are still yielded in file order (:func:`_chunks`)."""
    packer = SectionPacker() if ctx.pack_sections_over is not None and len(entries) > ctx.pack_sections_over \
        else None
    if use_served_pool(entries, ctx, func):
        for i, entry in _each_file_served(entries, func, ctx, keep_detail, cost):
            yield i, entry
            if packer is not None:
                _pack(entry, packer, ctx)
        return
    if not use_pool(entries, ctx):
        for i, entry in enumerate(entries):
            ctx.check()
            func(entry)
            if not ctx.keep_units:
                lighten(entry, keep_detail)
            yield i, entry
            if packer is not None:
                _pack(entry, packer, ctx)
        return
    global _job
    workers = min(ctx.workers, len(entries))
    _job = (func, entries, keep_detail, ctx.keep_units)
    from .forkpool import ForkPool
    try:
        # the tasks cut before forking (scan_cost opens files: once, here); no
        # preload_lazy_numpy(): the parsers' workers reach no np.unique (parsers/arrays.py)
        costs = [cost(e) for e in entries] if cost is not None else None
        tasks = _chunks(entries, workers, costs)
        pool = ForkPool(workers, _run)
        for i, entry in _results(pool, tasks, entries, ctx):
            yield i, entry
            if packer is not None:
                _pack(entry, packer, ctx)
    finally:
        _job = None


def preload_lazy_numpy() -> None:
    """Import here, before forking, what numpy 2 imports on first use and the workers' calls
    reach: ``numpy.ma`` (``np.unique`` asks ``np.ma.is_masked`` of its input: 10-60 ms), once in
    this process instead of once in every worker and again here.  For the what-if's calls
    (compress/ uses np.unique); the parsers use ``parsers.arrays.distinct`` instead, so that
    a scan's workers start 10-13 ms sooner."""
    import numpy.ma  # noqa: F401


def _results(pool, tasks, entries: list[FileEntry], ctx: ScanContext) -> Iterator[tuple[int, FileEntry]]:
    """The pool's (parsers/forkpool.py) results of its tasks put on ``entries`` as they come,
    yielded in file order, ``ctx.check()`` between tasks; the pool is closed at the end,
    ended at once on an exception (Cancel)."""
    pending: dict[int, FileEntry] = {}
    expected = 0
    try:
        for results in pool.imap_unordered(tasks):
            ctx.check()
            for i, state in results:
                _apply(entries[i], state)
                pending[i] = entries[i]
            while expected in pending:
                yield expected, pending.pop(expected)
                expected += 1
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    # every index came back (a worker that died raises in imap): nothing is left pending
    assert not pending, sorted(pending)[:5]


_served: tuple[Callable[[FileEntry], None], tuple[str, ...], bool] | None = None
_keep_objects = True


def _rebuild_array(data: bytes, dtype_token: bytes, shape: tuple) -> np.ndarray:
    """An array sent by :func:`_reduce_array` (writable, as an unpickled array is)."""
    return np.frombuffer(bytearray(data), dtype=_dtype_of(dtype_token)).reshape(shape)


@functools.lru_cache(maxsize=256)
def _dtype_of(token: bytes) -> np.dtype:
    return pickle.loads(token)


_dtype_tokens: dict[np.dtype, bytes] = {}


def _reduce_array(a: np.ndarray):
    """An array's bytes, shape and pickled dtype (made once per dtype): numpy's own
    reduction costs 15-30 µs an array, mostly in Python, and a small tablespace's
    results hold dozens of them (units, unit facts, the page map).  Object arrays and
    arrays that are not C-contiguous go numpy's way."""
    if a.dtype.hasobject or not a.flags.c_contiguous:
        return a.__reduce_ex__(pickle.HIGHEST_PROTOCOL)
    token = _dtype_tokens.get(a.dtype)
    if token is None:
        token = _dtype_tokens[a.dtype] = pickle.dumps(a.dtype)
    return _rebuild_array, (a.tobytes(), token, a.shape)


def _init_served(func: Callable[[FileEntry], None], keep_detail: tuple[str, ...], keep_units: bool) -> None:
    """In a fork server's worker: the job, sent once."""
    global _served, _keep_objects
    _served = (func, keep_detail, keep_units)
    _keep_objects = False
    from multiprocessing.reduction import ForkingPickler
    ForkingPickler.register(np.ndarray, _reduce_array)     # the results go back the fast way


def _run_served(chunk: list[tuple[int, FileEntry]]) -> list[tuple[int, dict[str, Any]]]:
    """In a fork server's worker: the job's function on the files sent, their states."""
    assert _served is not None
    func, keep_detail, keep_units = _served
    out = []
    for i, entry in chunk:
        func(entry)
        out.append((i, _state(entry, keep_detail, keep_units)))
    return out


def _each_file_served(entries: list[FileEntry], func: Callable[[FileEntry], None], ctx: ScanContext,
                      keep_detail: tuple[str, ...],
                      cost: Callable[[FileEntry], float] | None = None) -> Iterator[tuple[int, FileEntry]]:
    """:func:`each_file` in a fork server's workers (the files and results pickled)."""
    workers = min(ctx.workers, len(entries))
    import multiprocessing
    from multiprocessing.reduction import ForkingPickler
    mp = multiprocessing.get_context("forkserver")
    mp.set_forkserver_preload(SERVED_PRELOAD)
    ForkingPickler.register(np.ndarray, _reduce_array)     # the files go out the fast way
    pool = mp.Pool(workers, initializer=_init_served, initargs=(func, keep_detail, ctx.keep_units))
    costs = [cost(e) for e in entries] if cost is not None else None
    tasks = ([(i, entries[i]) for i in chunk] for chunk in _chunks(entries, workers, costs))
    yield from _results(_MultiprocessingPool(pool, _run_served), tasks, entries, ctx)


class _MultiprocessingPool:
    """A ``multiprocessing`` pool (the fork server's) as :func:`_results` drives a
    parsers/forkpool.py one: ``imap_unordered(tasks)``, ``close()`` and ``terminate()``,
    each of the last two waiting for the workers."""

    def __init__(self, pool, run: Callable) -> None:
        self._pool, self._run = pool, run

    def imap_unordered(self, tasks):
        return self._pool.imap_unordered(self._run, tasks)

    def close(self) -> None:
        self._pool.close()
        self._pool.join()

    def terminate(self) -> None:
        self._pool.terminate()
        self._pool.join()


def _call(chunk: list[int]) -> list[tuple[int, Any, dict]]:
    """In a worker: the job's function on argument tuples ``chunk``, with the reads past
    a file's end it survived."""
    assert _calls is not None
    func, args = _calls
    return [(i, func(*args[i]), mapguard.take_events()) for i in chunk]


_calls: tuple[Callable[..., Any], list[tuple]] | None = None


def map_calls(func: Callable[..., Any], args: list[tuple], ctx: ScanContext,
              weights: list[int] | None = None, task_calls: int = CHUNK_FILES) -> Iterator[Any]:
    """``func(*a)`` for every ``a`` of ``args``, yielded in order: in forked worker
    processes when ``ctx.workers`` > 1 and there are at least two calls whose
    ``weights`` (bytes each reads) sum to :data:`MIN_BYTES` or that number
    :data:`MIN_FILES` (the results are pickled back), else here; a task (one round
    trip) holds at most ``task_calls`` calls.  An exception in a call is raised here,
    as it would be in one process."""
    global _calls
    weights = weights if weights is not None else [1] * len(args)
    if (ctx.workers <= 1 or len(args) < 2 or (len(args) < MIN_FILES and sum(weights) < MIN_BYTES)
            or not fork_safe()):
        for a in args:
            yield func(*a)
        return
    workers = min(ctx.workers, len(args))
    total = sum(max(w, 1) for w in weights)
    per_task = max(1, total // (workers * 4))
    chunks: list[list[int]] = []
    cur: list[int] = []
    size = 0
    for i, w in enumerate(weights):
        cur.append(i)
        size += max(w, 1)
        if size >= per_task or len(cur) >= task_calls:
            chunks.append(cur)
            cur, size = [], 0
    if cur:
        chunks.append(cur)
    _calls = (func, args)
    import multiprocessing
    preload_lazy_numpy()
    pool = multiprocessing.get_context("fork").Pool(workers)
    try:
        for results in pool.imap(_call, chunks):
            for _i, value, events in results:
                for path, ev in events.items():
                    mapguard.add_events(path, ev)
                yield value
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()
        _calls = None


def worker_context(ctx: ScanContext) -> ScanContext:
    """``ctx`` as a worker process may use it: no progress callback (the parent reports),
    no cancel hook (the parent polls it between results)."""
    return replace(ctx, progress=None, is_cancelled=None) if ctx.workers > 1 else ctx


def keeps_parser_objects() -> bool:
    """False in a fork server's worker: engines drop their per-file parser objects (InnoDB
    page maps) as a scan over ``detail_budget`` does, to be read again on demand; sending
    them back costs more than making them (0.5 ms a small tablespace, numpy's pickling)."""
    return _keep_objects


__all__ = ["Cancelled", "cpu_workers", "each_file", "lighten", "map_calls", "use_pool", "worker_context"]

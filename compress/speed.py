"""Compress and decompress throughput of a codec on sampled bytes, on all cores.

The codecs (zlib, lzma, bz2, lz4, zstandard, cramjam) release the GIL while
they work (checked: a pure-Python thread keeps running during one long call
of each), so a thread pool with one worker per core measures what the
machine really does.  Throughput is logical (uncompressed) MB per second of
wall time, MB = 10^6 bytes, as ``zstd -b`` and ``lz4 -b`` print it, and like
them the fastest of a few passes.  Threads only add speed when the kernel
gives the process more than one core: with ``sched_autogroup`` (Debian's
default) a busy process in another session halves what this session gets,
whatever its thread count; :attr:`Speed.parallelism` shows what was had.
"""
from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable

from .registry import Codec

#: how much data and time one measurement may take at most
MAX_BYTES = 16 * 1024 * 1024
MAX_SECONDS = 1.0


def workers() -> int:
    """Threads to use: one per core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


@dataclass
class Speed:
    compress_mb_s: float
    decompress_mb_s: float
    bytes_measured: int
    threads: int
    #: timed passes over the bytes (compress; decompress), the fastest of which is reported
    rounds: tuple[int, int] = (1, 1)
    #: CPU seconds of the worker threads / wall seconds in the fastest compress pass:
    #: how many threads really ran at once (the codecs release the GIL; below
    #: ``threads`` means the scheduler gave this process fewer cores)
    parallelism: float = 0.0
    #: threads of the fastest compress and decompress pass (``threads`` or 1, see :func:`measure`)
    best_threads: tuple[int, int] = (1, 1)


def _chunks(payloads: list[bytes], n: int) -> list[list[bytes]]:
    out: list[list[bytes]] = [[] for _ in range(n)]
    for i, p in enumerate(payloads):
        out[i % n].append(p)
    return [c for c in out if c]


def _bounded(payloads: list[bytes], max_bytes: int, piece: int | None = None) -> list[bytes]:
    """The first ``max_bytes`` of the payloads, each cut to at most ``piece`` bytes
    (a multiple of 32, so fixed-width values stay whole)."""
    out, total = [], 0
    for p in payloads:
        if total >= max_bytes:
            break
        if piece is not None and len(p) > piece:
            p = p[:piece]
        out.append(p)
        total += len(p)
    return out


def _passes(run: Callable[[], float], rounds: int, max_seconds: float) -> tuple[float, int, float]:
    """``run()`` (one pass over every unit, returning the threads' CPU seconds)
    ``rounds`` times at most and while the budget lasts: (fastest wall seconds,
    passes run, thread CPU / wall of that pass)."""
    best, cpu_best, done = float("inf"), 0.0, 0
    t_start = time.perf_counter()
    while done < rounds and max_seconds > 0:
        t0 = time.perf_counter()
        cpu = run()
        dt = time.perf_counter() - t0
        done += 1
        if dt < best:
            best, cpu_best = dt, cpu
        if time.perf_counter() - t_start + dt > max_seconds:
            break
    return best, done, cpu_best / max(best, 1e-9)


def measure(codec: Codec, payloads: list[bytes], max_bytes: int = MAX_BYTES,
            max_seconds: float = MAX_SECONDS, threads: int | None = None,
            pool: ThreadPoolExecutor | None = None,
            encode: Callable[[bytes], bytes] | None = None,
            decode: Callable[[bytes, int], bytes] | None = None, piece: int | None = None,
            rounds: int = 3) -> Speed:
    """Throughput of ``codec`` over ``payloads`` (first ``max_bytes``), all threads busy.

    As ``zstd -b`` / ``lz4 -b`` do, the bytes are compressed and then
    decompressed several times and the fastest pass is reported: a first
    pass makes the compressed blobs (kept for decompression; it stops once
    ``max_seconds`` have elapsed, and the later passes cover the same units),
    then up to ``rounds - 1`` more compress passes that only count the
    output (:meth:`Codec.compressed_size`, what a projection needs: lz4 and
    snappy write into a reused buffer, as the CLI compresses into the same
    buffers again; the others build and drop their bytes), then up to
    ``rounds`` decompress passes; a pass is not started when it would end
    past ``max_seconds``.  With more than one thread the repeat passes run
    both spread over the threads and on one thread, and the faster counts
    (:attr:`Speed.best_threads` says which): the codecs release the GIL but
    take it back after every call, and for calls of a few microseconds (lz4
    decoding 16 KiB pages: ~4 us) two threads handing the GIL over are
    slower than one thread alone (measured 2600-3000 against 3900-4700 MB/s).  The first pass alone writes every output to fresh
    memory, which at 16 KiB units costs a quarter of the speed: measuring
    only that pass compared a cold pass with the CLI's best warm loop.
    ``encode`` / ``decode(blob, size)`` replace the codec's own calls
    (ClickHouse blocks: the whole chain).
    """
    enc = encode or codec.compress
    again_enc = encode or codec.compressed_size
    dec = decode or (lambda blob, size: codec.decompress(blob, size, max_output=size + 64))
    data = _bounded(payloads, max_bytes, piece)
    n = threads or workers()
    if not data:
        return Speed(0.0, 0.0, 0, n, (0, 0), 0.0, (n, n))
    shares = _chunks(data, n)
    blobs: list[list[tuple[bytes, int]]] = [[] for _ in shares]

    def first(i: int) -> float:
        c0 = time.thread_time()
        deadline = time.perf_counter() + max_seconds
        outs = blobs[i]
        for p in shares[i]:
            outs.append((enc(p), len(p)))
            if time.perf_counter() > deadline:
                break
        return time.thread_time() - c0

    def again(i: int) -> float:
        c0 = time.thread_time()
        for p in shares[i][:len(blobs[i])]:
            again_enc(p)
        return time.thread_time() - c0

    def decomp(i: int) -> float:
        c0 = time.thread_time()
        for blob, size in blobs[i]:
            dec(blob, size)
        return time.thread_time() - c0

    # one thread without a pool: this one (no thread started and handed every pass)
    own = pool is None and n > 1
    ex = pool or (ThreadPoolExecutor(max_workers=n) if own else None)
    idx = list(range(len(shares)))

    def spread(fn):            # every share on its own thread
        if ex is None:
            return lambda: sum(fn(i) for i in idx)
        return lambda: sum(ex.map(fn, idx))

    def serial(fn):            # every share one after the other, on this thread
        return lambda: sum(fn(i) for i in idx)

    try:
        t_start = time.perf_counter()
        cpu = spread(first)()
        t_comp = time.perf_counter() - t_start
        par, comp_rounds, dec_rounds, best_threads = cpu / max(t_comp, 1e-9), 1, 0, [n, n]
        t_dec = float("inf")
        for nt, runner in ((n, spread), (1, serial)) if n > 1 else ((n, spread),):
            if rounds > 1:
                left = max_seconds - (time.perf_counter() - t_start)
                t, done, p = _passes(runner(again), rounds - 1, left)
                comp_rounds += done
                if t < t_comp:
                    t_comp, par, best_threads[0] = t, p, nt
        t_start = time.perf_counter()
        for nt, runner in ((n, spread), (1, serial)) if n > 1 else ((n, spread),):
            left = max_seconds - (time.perf_counter() - t_start) if dec_rounds else max(max_seconds, 1e-9)
            t, done, _ = _passes(runner(decomp), max(1, rounds), left)
            dec_rounds += done
            if t < t_dec:
                t_dec, best_threads[1] = t, nt
    finally:
        if own:
            ex.shutdown()
    nbytes = sum(len(p) for i, share in enumerate(shares) for p in share[:len(blobs[i])])
    return Speed(nbytes / max(t_comp, 1e-9) / 1e6, nbytes / max(t_dec, 1e-9) / 1e6, nbytes, n,
                 (comp_rounds, dec_rounds), par, tuple(best_threads))

"""Compress and decompress throughput of a codec on sampled bytes, on all cores.

The codecs (zlib, lzma, bz2, lz4, zstandard, cramjam) release the GIL while
they work, so a thread pool with one worker per core measures what the
machine really does.  Throughput is logical (uncompressed) MB per second of
wall time, MB = 10^6 bytes, as ``zstd -b`` and ``lz4 -b`` print it.
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


def measure(codec: Codec, payloads: list[bytes], max_bytes: int = MAX_BYTES,
            max_seconds: float = MAX_SECONDS, threads: int | None = None,
            pool: ThreadPoolExecutor | None = None,
            encode: Callable[[bytes], bytes] | None = None,
            decode: Callable[[bytes, int], bytes] | None = None, piece: int | None = None) -> Speed:
    """Throughput of ``codec`` over ``payloads`` (first ``max_bytes``), all threads busy.

    Each thread compresses its share; then the outputs are decompressed the
    same way.  A pass stops early once ``max_seconds`` have elapsed (the MB/s
    is then over the bytes done).  ``encode`` / ``decode(blob, size)``
    replace the codec's own calls (ClickHouse blocks: the whole chain).
    """
    enc = encode or codec.compress
    dec = decode or (lambda blob, size: codec.decompress(blob, size, max_output=size + 64))
    data = _bounded(payloads, max_bytes, piece)
    n = threads or workers()
    if not data:
        return Speed(0.0, 0.0, 0, n)
    shares = _chunks(data, n)

    def comp(share):
        deadline = time.perf_counter() + max_seconds
        done, outs = 0, []
        for p in share:
            outs.append((enc(p), len(p)))
            done += len(p)
            if time.perf_counter() > deadline:
                break
        return done, outs

    def decomp(share):
        deadline = time.perf_counter() + max_seconds
        done = 0
        for blob, size in share:
            dec(blob, size)
            done += size
            if time.perf_counter() > deadline:
                break
        return done

    own = pool is None
    ex = pool or ThreadPoolExecutor(max_workers=n)
    try:
        t0 = time.perf_counter()
        results = list(ex.map(comp, shares))
        t_comp = time.perf_counter() - t0
        comp_bytes = sum(r[0] for r in results)
        t0 = time.perf_counter()
        dec_bytes = sum(ex.map(decomp, [r[1] for r in results]))
        t_dec = time.perf_counter() - t0
    finally:
        if own:
            ex.shutdown()
    return Speed(comp_bytes / max(t_comp, 1e-9) / 1e6, dec_bytes / max(t_dec, 1e-9) / 1e6, comp_bytes, n)


def clickhouse_coders(codec: Codec, type_size: int | None = None, value_type: str | None = None):
    """(encode, decode) of whole ClickHouse blocks with ``codec`` (checksum left out)."""
    from .registry import ch_block_body, ch_block_module
    ch = ch_block_module()
    chain = codec.ch_chain or codec.name

    def encode(p: bytes) -> bytes:
        return ch_block_body(p, chain, type_size, value_type)

    def decode(body: bytes, size: int) -> bytes:
        return ch.decompress_block(bytes(16) + body, max_output=size + 64)
    return encode, decode

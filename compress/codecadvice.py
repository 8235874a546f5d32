"""Codec chains per ClickHouse column (issue 20): which CODEC(...) the column's values,
as its best type, would take least room with.

ZSTD levels above 3 (6 and 9) are tried where levels pay (ZSTD(3) at least 2% under
ZSTD(1) on the column) and kept when at least 1% under ZSTD(3), as they compress slower.

The chains tried follow what each codec is for (src/Compression/CompressionCodec*.cpp
and the ClickHouse docs' advice): Delta / DoubleDelta for monotonic and time columns,
T64 for integers of a small range, Gorilla / FPC for slowly changing floats, each
followed by a general codec, and the general codecs alone at a few levels.  Each chain
is projected as the type advisor projects a type (compress/typeadvice.py: the engine's
block framing, encoded by parsers/codecs), on at most ``CODEC_RUNS`` of the sampled
runs (every run with ``--sample all``), ratio-estimated with a 95% interval.

Codecs the engine refuses on a type are never tried: T64 / Delta / DoubleDelta on
floats are allowed but pointless, Gorilla / FPC only on Float32/Float64, T64 only on
integers, DateTime and Decimal32/64 (CompressionCodecT64.cpp: getTypeIdx).
"""
from __future__ import annotations

import numpy as np

#: general codecs, tried on every column
GENERAL = ("LZ4", "ZSTD(1)", "ZSTD(3)")
#: integers, DateTime, DateTime64, Decimal: the time and range codecs
INTEGER = ("Delta, LZ4", "Delta, ZSTD(1)", "T64, LZ4", "T64, ZSTD(1)")
MONOTONIC = ("DoubleDelta", "DoubleDelta, ZSTD(1)")
FLOAT = ("Gorilla", "Gorilla, ZSTD(1)", "FPC", "FPC, ZSTD(1)")
STRING = ("LZ4HC(9)",)
#: ZSTD levels above 3, tried where levels pay: when ZSTD(3) is at least LEVELS_PAY under ZSTD(1)
HIGH_ZSTD = ("ZSTD(6)", "ZSTD(9)")
LEVELS_PAY = 0.02
#: a higher level is kept only when it is at least this much under ZSTD(3) (it compresses slower)
HIGH_GAIN = 0.01
#: runs a chain is projected on when sampling (the pure-Python codecs are slow)
CODEC_RUNS = 3
#: at most this many chains are suggested per column
KEEP = 3
#: T64 takes these types (CompressionCodecT64.cpp: getTypeIdx)
_T64_TYPES = ("UInt8", "Int8", "UInt16", "Int16", "UInt32", "Int32", "UInt64", "Int64", "DateTime", "Decimal(")


def monotonic(values: list[np.ndarray]) -> bool:
    """Every run read is non-decreasing or every one non-increasing."""
    if not values or not any(len(v) > 1 for v in values):
        return False
    up = all(np.all(np.diff(v.astype(np.float64)) >= 0) for v in values if len(v) > 1)
    down = all(np.all(np.diff(v.astype(np.float64)) <= 0) for v in values if len(v) > 1)
    return up or down


def slowly_changing(values: list[np.ndarray]) -> bool:
    """Floats whose neighbours are close: at least 10% of them equal their predecessor, or
    the median step is under 1% of the values' range (Gorilla's and FPC's case)."""
    steps = [np.abs(np.diff(v.astype(np.float64))) for v in values if len(v) > 1]
    if not steps:
        return False
    d = np.concatenate(steps)
    d = d[np.isfinite(d)]
    if not len(d):
        return False
    lo = min(float(np.nanmin(v)) for v in values if len(v))
    hi = max(float(np.nanmax(v)) for v in values if len(v))
    return bool(np.mean(d == 0) >= 0.1 or (hi > lo and np.median(d) <= 0.01 * (hi - lo)))


def chains_for(kind: str, type_text: str, values: list[np.ndarray] | None) -> list[str]:
    """The chains worth trying for a column of ``kind`` as ``type_text``."""
    if kind in ("string", "fixedstring"):
        return list(GENERAL + STRING)
    out = list(GENERAL)
    if type_text.startswith("Float"):
        if values is not None and slowly_changing(values):
            out += FLOAT
        return out
    out += [c for c in INTEGER if not c.startswith("T64") or type_text.startswith(_T64_TYPES)]
    if kind == "datetime64" or type_text.startswith(("DateTime", "Date")) or (
            values is not None and monotonic(values)):
        out += MONOTONIC
    return out


def pick_runs(n_sampled: int, every: bool, seed: int) -> np.ndarray:
    """Which of the sampled runs the chains are projected on."""
    if every or n_sampled <= CODEC_RUNS:
        return np.arange(n_sampled)
    return np.sort(np.random.default_rng(seed + 1).choice(n_sampled, size=CODEC_RUNS, replace=False))


def search(rows: list[int], project, chains: list[str], total_rows: int, n_runs: int, estimate) -> list[tuple]:
    """(chain, projected bytes, 95% interval) of every chain, smallest first: ``project(i,
    chain)`` gives piece ``i``'s bytes (``rows[i]`` rows), ``estimate`` the ratio estimate
    (compress/typeadvice._estimate)."""
    out = []
    for chain in chains:
        per = [(r, project(i, chain)) for i, r in enumerate(rows)]
        est, ci = estimate(per, total_rows, n_runs)
        out.append((chain, est, ci))
    got = {c: e for c, e, _ in out}
    z1, z3 = got.get("ZSTD(1)"), got.get("ZSTD(3)")
    if z1 and z3 and z3 <= (1 - LEVELS_PAY) * z1:       # levels pay on this column: try higher ones
        for chain in HIGH_ZSTD:
            per = [(r, project(i, chain)) for i, r in enumerate(rows)]
            est, ci = estimate(per, total_rows, n_runs)
            if est <= (1 - HIGH_GAIN) * z3:
                out.append((chain, est, ci))
    return sorted(out, key=lambda x: x[1])

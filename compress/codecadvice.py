"""Codec chains per ClickHouse column (issue 20): which CODEC(...) the column's values,
as its best type, would take least room with.

ZSTD levels above 3 (6 and 9) are tried where levels pay (ZSTD(3) at least 2% under
ZSTD(1) on the column) and kept when at least 1% under ZSTD(3), as they compress slower.
Chains longer than one transform and one general codec are searched too: Delta then T64
(T64 packs the deltas' used bits: CompressionCodecT64.cpp takes the unaligned 9-byte
header Delta leaves in front as its tail), DoubleDelta then LZ4, and, where levels pay,
the two smallest transform chains again with the best ZSTD level in place of their
general codec (``Delta, T64, ZSTD(6)``...).  The engine refuses a transform after a
general codec and Gorilla/FPC after Delta (CompressionFactoryAdditions.cpp,
validateCodecsAndGetPreprocessedAST: "meaningless"), so those are never formed.

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

import re

import numpy as np

from ..parsers.codecs.ch_encode import split_chain

#: general codecs, tried on every column
GENERAL = ("LZ4", "ZSTD(1)", "ZSTD(3)")
#: integers, DateTime, DateTime64, Decimal: the time and range codecs
INTEGER = ("Delta, LZ4", "Delta, ZSTD(1)", "T64, LZ4", "T64, ZSTD(1)", "Delta, T64, LZ4", "Delta, T64, ZSTD(1)")
MONOTONIC = ("DoubleDelta", "DoubleDelta, LZ4", "DoubleDelta, ZSTD(1)")
FLOAT = ("Gorilla", "Gorilla, ZSTD(1)", "FPC", "FPC, ZSTD(1)")
STRING = ("LZ4HC(9)",)
#: a LowCardinality column's streams take its chain's generic codecs only (the positions:
#: ISerialization::isSpecialCompressionAllowed, DictionaryIndexes) and its keys are Strings
LOWCARDINALITY = GENERAL + STRING
#: the general codecs a transform chain can end with (a level is put in their place)
_GENERAL_TAIL = ("LZ4", "ZSTD(1)", "ZSTD(3)")
#: ZSTD levels above 3, tried where levels pay: when ZSTD(3) is at least LEVELS_PAY under ZSTD(1)
#: (the levels a DBA types: 6 and 9, 12, and 19, zstd's highest before the "ultra" levels 20-22,
#: which gave 19's very bytes on the blocks tried, 64-436 KiB: zstd caps their larger windows at
#: the block's size)
HIGH_ZSTD = ("ZSTD(6)", "ZSTD(9)", "ZSTD(12)", "ZSTD(19)")
#: ZSTD(2), between the default level 1 and 3, tried where levels pay (nearly as fast as 1), kept
#: when 1% under ZSTD(1)
LOW_ZSTD = ("ZSTD(2)",)
LEVELS_PAY = 0.02
#: a higher level is kept only when it is at least this much under ZSTD(3) (it compresses slower)
HIGH_GAIN = 0.01
#: runs a chain is projected on when sampling (the pure-Python codecs are slow)
CODEC_RUNS = 3
#: at most this many chains are suggested per column on its best type (and one on each other type)
KEEP = 3
#: sampled, the chains on a suggested type other than the best are projected on this many of the
#: CODEC_RUNS runs (they are few and only the smallest is kept)
OTHER_RUNS = 2
#: a suggested type other than the best gets its own full search (its chains, the levels where they
#: pay, as the best type) beside the best type's winners; False: those winners and GCD's only
OTHER_FULL = True
#: sampled, another type's chains are ranked on one of its OTHER_RUNS runs, and this many of the
#: smallest projected on all of them (one is kept)
RANKED = 2
#: T64 takes these types (CompressionCodecT64.cpp: getTypeIdx; Date, Date32 and DateTime among them)
_T64_TYPES = ("UInt8", "Int8", "UInt16", "Int16", "UInt32", "Int32", "UInt64", "Int64", "Date", "Decimal(")
#: GCD (CompressionCodecGCD.cpp, ClickHouse 23.9+): every value of a block divided by their greatest
#: common divisor; for Int*, UInt*, Decimal*, Date* and DateTime* (getGCDBytesSize), tried when the
#: values read share a divisor > 1.  Its quotients are then packed by T64 or Delta, or compressed
#: by the general codec.
GCD = ("GCD, LZ4", "GCD, ZSTD(1)")
GCD_T64 = ("GCD, T64, ZSTD(1)",)
GCD_DELTA = ("GCD, Delta, ZSTD(1)",)
#: GCD after Delta (the engine takes it: no rule of validateCodecAndGetPreprocessedAST forbids it),
#: tried when the divisor GCD would find in Delta's output is over 1 (delta_divisor).  That output
#: begins with Delta's own 9-byte block header and its 2-byte prefix, which GCD reads as values too
#: (CompressionCodecMultiple::doCompressData passes each codec's whole compress() output on), so the
#: divisor is rarely the deltas' own: ``GCD, Delta`` is the order that pays
DELTA_GCD = ("Delta, GCD, ZSTD(1)",)


def monotonic(values: list[np.ndarray]) -> bool:
    """Every run read is non-decreasing or every one non-increasing."""
    if not values or not any(len(v) > 1 for v in values):
        return False
    up = all(np.all(np.diff(v.astype(np.float64)) >= 0) for v in values if len(v) > 1)
    down = all(np.all(np.diff(v.astype(np.float64)) <= 0) for v in values if len(v) > 1)
    return up or down


#: a Date / DateTime column takes the DoubleDelta chains when at least this share of its steps go
#: one way (a time column nearly in order: DoubleDelta's case; one sorted under other key columns
#: is not, and DoubleDelta is a pure-Python encoder here, the costliest chain to project)
NEARLY_ORDERED = 0.9


def nearly_ordered(values: list[np.ndarray] | None) -> bool:
    """At least NEARLY_ORDERED of the steps of the runs read are >= 0, or of them <= 0."""
    if not values:
        return False
    d = [np.diff(v.astype(np.float64)) for v in values if len(v) > 1]
    if not d:
        return False
    d = np.concatenate(d)
    return bool(np.mean(d >= 0) >= NEARLY_ORDERED or np.mean(d <= 0) >= NEARLY_ORDERED)


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


def common_divisor(pieces: list[bytes], width: int) -> int:
    """The greatest common divisor of the values in ``pieces`` (``width``-byte little-endian
    words read unsigned, as the GCD codec reads them; 0 when every value is 0 or the width is
    over 8 bytes, whose values the advisor does not try GCD on)."""
    if width not in (1, 2, 4, 8):
        return 0
    g = 0
    for p in pieces:
        v = np.frombuffer(p[:len(p) - len(p) % width], dtype=f"<u{width}").astype(np.uint64)
        if len(v):
            g = int(np.gcd.reduce(np.append(v, np.uint64(g))))
        if g == 1:
            break
    return g


def delta_divisor(pieces: list[bytes], width: int) -> int:
    """The divisor the GCD codec finds after Delta on the first DELTA_GCD_BYTES of each of
    ``pieces`` (``width``-byte values): Delta's compress() output, its 9-byte header and
    ``[width][bytes_to_skip]`` prefix included, read as GCD reads it (CompressionCodecGCD.cpp:
    the first ``size % width`` bytes kept, the rest unsigned words); 0 when not found."""
    from ..parsers.codecs.ch_encode import encode_chain
    if width not in (1, 2, 4, 8):
        return 0
    g = 0
    for p in pieces:
        head = bytes(p[:DELTA_GCD_BYTES - DELTA_GCD_BYTES % width])
        if not head:
            continue
        d = encode_chain(head, "Delta", type_size=width)
        v = np.frombuffer(d[len(d) % width:], dtype=f"<u{width}").astype(np.uint64)
        g = int(np.gcd.reduce(np.append(v, np.uint64(g))))
        if g <= 1:
            return g
    return g


#: bytes of a piece delta_divisor looks at (a block's worth)
DELTA_GCD_BYTES = 64 << 10


def chains_for(kind: str, type_text: str, values: list[np.ndarray] | None, gcd: int = 0,
               delta_gcd: int = 0) -> list[str]:
    """The chains worth trying for a column of ``kind`` as ``type_text`` (``gcd``: the common
    divisor of the values read as that type, common_divisor: GCD chains are tried when over 1;
    ``delta_gcd``: the one GCD would find after Delta, delta_divisor: ``Delta, GCD`` when over 1)."""
    if kind in ("string", "fixedstring"):
        return list(GENERAL + STRING)
    if kind == "lowcardinality":
        return list(LOWCARDINALITY)
    out = list(GENERAL)
    if type_text.startswith("Float"):
        if values is not None and slowly_changing(values):
            out += FLOAT
        return out
    t64 = type_text.startswith(_T64_TYPES) and not type_text.startswith("DateTime64")
    out += [c for c in INTEGER if "T64" not in c or t64]
    timeish = kind in ("datetime64", "datetime", "date") or type_text.startswith(("DateTime", "Date"))
    if kind in ("datetime", "date") or (type_text.startswith(("DateTime", "Date"))
                                        and not type_text.startswith("DateTime64") and kind != "datetime64"):
        mono = values is None or nearly_ordered(values)       # Date / DateTime: nearly in order
    else:
        mono = kind == "datetime64" or type_text.startswith("DateTime64") or (values is not None and monotonic(values))
    if mono:
        out += MONOTONIC
    if gcd > 1:
        out += list(GCD) + (list(GCD_T64) if t64 else []) + (list(GCD_DELTA) if mono or timeish else [])
    if delta_gcd > 1 and (mono or timeish):
        out += list(DELTA_GCD)
    return out


def pick_runs(n_sampled: int, every: bool, seed: int) -> np.ndarray:
    """Which of the sampled runs the chains are projected on."""
    if every or n_sampled <= CODEC_RUNS:
        return np.arange(n_sampled)
    return np.sort(np.random.default_rng(seed + 1).choice(n_sampled, size=CODEC_RUNS, replace=False))


#: chains that compress far slower than the others (LZ4HC at level 9: 10-200 ms a MiB where LZ4
#: takes 3; ZSTD from level SLOW_LEVEL up, e.g. 12 and 19: 30-400 ms a MiB where ZSTD(3) takes 5):
#: when sampling they are projected on SLOW_RUNS of the pieces only, as a ratio there to the fast
#: chain named beside them
SLOW = {"LZ4HC(9)": "LZ4"}
#: ZSTD levels from this one up (and any level with a window_log) are slow chains, scaled from ZSTD(3);
#: so are the levels between the grid's below it (4, 5, 7, 8: tried only to refine the best, on a
#: head of one run when sampling, as 12 and 19 are: the refinement costs a fifth of the full projections)
SLOW_LEVEL = 10
#: the ZSTD levels of the first search (LOW_ZSTD, GENERAL, HIGH_ZSTD)
GRID_LEVELS = (1, 2, 3, 6, 9, 12, 19)
SLOW_RUNS = 1


def zstd_level(codec: str) -> tuple[int, int] | None:
    """(level, window_log) of ``ZSTD(level[, window_log])`` (window_log 0 when not given), else None."""
    m = re.fullmatch(r"\s*ZSTD\((\d+)(?:\s*,\s*(\d+))?\)\s*", codec)
    return (int(m.group(1)), int(m.group(2) or 0)) if m else None


def slow_base(chain: str) -> str | None:
    """The fast chain a slow one is scaled from (the same transforms with LZ4 / ZSTD(3)), or None."""
    parts = split_chain(chain)
    tail = parts[-1]
    z = zstd_level(tail)
    if z is not None and (z[0] >= SLOW_LEVEL or z[1] or z[0] not in GRID_LEVELS):
        fast = "ZSTD(3)"
    elif tail in SLOW:
        fast = SLOW[tail]
    else:
        return None
    return ", ".join(parts[:-1] + [fast])


def search(rows: list[int], project, chains: list[str], total_rows: int, n_runs: int, estimate,
           sampled: bool = False, escalate: bool = True, head=None) -> list[tuple]:
    """(chain, projected bytes, 95% interval) of every chain, smallest first: ``project(i,
    chain)`` gives piece ``i``'s bytes (``rows[i]`` rows), ``estimate`` the ratio estimate
    (compress/typeadvice._estimate).  ``sampled`` (the pieces are a sample of the column's
    runs): a SLOW chain is projected on the first SLOW_RUNS pieces only and scaled from LZ4's
    projection by its ratio to LZ4 on them (LZ4's interval scaled alike)."""
    done: dict[tuple[int, str], int] = {}

    def piece(i: int, chain: str) -> int:
        if (i, chain) not in done:
            done[(i, chain)] = project(i, chain)
        return done[(i, chain)]

    def total(chain: str):
        base = slow_base(chain)
        if sampled and base is not None and len(rows) > SLOW_RUNS:
            if head is not None:        # the first SLOW_BYTES of a piece: ``head(chain)`` its bytes
                ratio = head(chain) / max(1, head(base))
            else:
                ratio = sum(project(i, chain) for i in range(SLOW_RUNS)) / max(1, sum(piece(i, base)
                                                                                   for i in range(SLOW_RUNS)))
            est, (lo, hi) = total(base)
            return round(est * ratio), (round(lo * ratio), round(hi * ratio))
        return estimate([(r, piece(i, chain)) for i, r in enumerate(rows)], total_rows, n_runs)
    if not escalate:        # these chains only (another suggested type: the best type's winners)
        return sorted(((c, *total(c)) for c in chains), key=lambda x: x[1])
    return search_totals(total, chains)


def winners(found: list[tuple]) -> list[str]:
    """What another suggested type of the column tries (its best chain among them): the smallest
    chain found on the best type and the smallest general codec alone, each in its fast form
    (fast_form)."""
    out: list[str] = []
    for c in [c for c, _, _ in found[:1]] + [next((c for c, _, _ in found if "," not in c), "")]:
        c = fast_form(c)
        if c and c not in out:
            out.append(c)
    return out


def fast_form(chain: str) -> str:
    """A chain with its slow general codec (SLOW) put back to its fast base: what another type
    than the best tries, so the slow levels are projected on the best type only."""
    return slow_base(chain) or chain


def search_totals(total, chains: list[str]) -> list[tuple]:
    """(chain, projected bytes, 95% interval) of every chain, smallest first, ``total(chain)``
    giving (bytes, interval); higher ZSTD levels and level-ended transform chains where
    levels pay."""
    out = []
    for chain in chains:
        est, ci = total(chain)
        out.append((chain, est, ci))
    got = {c: e for c, e, _ in out}
    z1, z3 = got.get("ZSTD(1)"), got.get("ZSTD(3)")
    if z1 and z3 and z3 <= (1 - LEVELS_PAY) * z1:       # levels pay on this column: try others
        tried = {1: (z1, None), 3: (z3, None)}          # level: (bytes, interval) of the levels projected
        for chain in LOW_ZSTD:
            est, ci = total(chain)
            tried[zstd_level(chain)[0]] = (est, ci)
            if est <= (1 - HIGH_GAIN) * z1:
                out.append((chain, est, ci))
        best_level, best = "ZSTD(3)", z3
        for chain in HIGH_ZSTD:
            if chain in ("ZSTD(12)", "ZSTD(19)") and best_level == "ZSTD(3)":
                continue        # 6 and 9 not 1% under 3: the slow levels are not tried
            est, ci = total(chain)
            tried[zstd_level(chain)[0]] = (est, ci)
            # 6 and 9 kept when 1% under ZSTD(3); 12 and 19 when 1% under the smallest level before
            # them: each level named earns its slower compression
            if est <= (1 - HIGH_GAIN) * (z3 if chain in ("ZSTD(6)", "ZSTD(9)") else best):
                out.append((chain, est, ci))
                if est < best:
                    best_level, best = chain, est
        if best_level != "ZSTD(3)":
            # the levels between: where the curve still fell at the best level (it was kept, 1%
            # under the level before it), halve the gaps on either side of it
            level = refine_level(total, tried, zstd_level(best_level)[0])
            if level != zstd_level(best_level)[0]:
                est, ci = tried[level]
                out.append((f"ZSTD({level})", est, ci))
                best_level, best = f"ZSTD({level})", est
            # ZSTD(level, window_log): long-distance matching (CompressionCodecZSTD.cpp: a second
            # argument turns ZSTD_c_enableLongDistanceMatching on with that ZSTD_c_windowLog);
            # kept when 1% under the level alone
            if TRY_WINDOW_LOG:
                wl = f"ZSTD({zstd_level(best_level)[0]}, {WINDOW_LOG})"
                est, ci = total(wl)
                if est <= (1 - HIGH_GAIN) * best:
                    out.append((wl, est, ci))
        out = _undominated(out)
        # the two smallest transform chains with that level as their general codec
        tried_chains = {c for c, _, _ in out}
        for chain, est0, _ in sorted([x for x in out if _transform_chain(x[0])], key=lambda x: x[1])[:2]:
            head = chain.rsplit(",", 1)[0] if chain.rsplit(",", 1)[-1].strip() in _GENERAL_TAIL else chain
            longer = f"{head}, {best_level}"
            if longer in tried_chains:
                continue
            tried_chains.add(longer)
            est, ci = total(longer)
            if est <= (1 - HIGH_GAIN) * est0:
                out.append((longer, est, ci))
    return sorted(out, key=lambda x: x[1])


#: ZSTD's window_log tried with the best level (long-distance matching on): zstd's own default
#: for it (ZSTD_LDM_DEFAULT_WINDOW_LOG, 128 MiB); the library shrinks any window to the block's
#: size (ZSTD_adjustCParams: a block is at most a few MiB), so every larger value writes the same
#: off: of 24 tries on the fixture and datadir_dates (2026-11-25) none was 1% under the level alone
#: (9 smaller by at most 0.25%, none larger) while each cost a slow level's projection (~1 s of the
#: fixture's 17 s with every value): on blocks of at most ~1 MiB long-distance matching finds little
WINDOW_LOG = 27
TRY_WINDOW_LOG = False
#: the highest ZSTD level (ZSTD_maxCLevel(): the engine refuses more, CompressionCodecZSTD.cpp)
ZSTD_MAX_LEVEL = 22


#: a level between those of the grid that is higher than the best one wins when at least this much
#: under it (it compresses slower); a lower one when it is no larger
REFINE_GAIN = 0.002


def refine_level(total, tried: dict, level: int) -> int:
    """The best ZSTD level near ``level`` (the best of the grid 1, 2, 3, 6, 9, 12, 19): the gap
    to the nearest level tried on each side (up to ZSTD_MAX_LEVEL above) halved while the level
    in the middle is not beaten (2-3 projections a side); a lower level giving no more bytes wins
    (it compresses faster), a higher one REFINE_GAIN under.  ``tried``: level -> (bytes, interval), filled in."""
    def get(lv: int) -> int:
        if lv not in tried:
            est, ci = total(f"ZSTD({lv})")
            tried[lv] = (est, ci)
        return tried[lv][0]

    found = [level]
    for side in (-1, 1):        # each side from the grid's best on its own
        best = level
        others = [lv for lv in tried if (lv - level) * side > 0]
        far = (min(others) if side > 0 else max(others)) if others else (ZSTD_MAX_LEVEL + 1 if side > 0 else 0)
        while abs(far - best) > 1:
            mid = (best + far) // 2
            if _better(mid, get(mid), best, get(best)):
                best = mid          # the middle wins: the gap on its far side is halved next
            else:
                far = mid
        found.append(best)
    best = min(found)
    for lv in sorted(set(found)):
        if _better(lv, get(lv), best, get(best)):
            best = lv
    return best


def _better(lv: int, e: int, than: int, e_than: int) -> bool:
    """ZSTD(lv) giving ``e`` bytes beats ZSTD(than) giving ``e_than``: a lower level when no
    larger, a higher one when REFINE_GAIN under."""
    return e <= e_than if lv < than else e <= (1 - REFINE_GAIN) * e_than if lv > than else False


def _undominated(out: list[tuple]) -> list[tuple]:
    """``out`` without a ZSTD level alone that a lower level alone matches or beats (same
    bytes or fewer, faster)."""
    levels = sorted((zstd_level(c)[0], e, c) for c, e, _ in out
                    if zstd_level(c) is not None and not zstd_level(c)[1])
    drop = set()
    best = None
    for lv, e, c in levels:
        if best is not None and e >= best:
            drop.add(c)
        best = e if best is None else min(best, e)
    return [x for x in out if x[0] not in drop]


def _transform_chain(chain: str) -> bool:
    """A chain that starts with a transform (Delta, DoubleDelta, T64, Gorilla, FPC, GCD)."""
    return chain.split(",", 1)[0].split("(", 1)[0].strip() not in ("LZ4", "LZ4HC", "ZSTD", "NONE")

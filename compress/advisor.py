"""The codec advisor: per table, the smallest codec the engine can write and the
fastest to decode within 5% of it, with the DDL a DBA would run (the engines'
own: ``compress/engines/``).

Advice is given only where it is right to act on (issue 17): for tables, not the
engines' own files (each engine's ``advisable``: no system tablespace, server
schema, FULLTEXT auxiliary table or engine-internal dictionary); one entry per
table (the files of a partitioned table, or a TokuDB table's dictionaries, summed
into one projection with one DDL); one line per distinct recommendation (the
smallest and the fastest within 5% are one line when they are the same codec);
never the codec the table already has (its "saving" would be free or unwritten
space, not compression); and only where the saving is positive beyond the 95%
interval (``saving_bytes_ci95`` [low, high] > 0).  A table whose engine estimates the same rows
in another engine (ARCHIVE's cross-engine figures) also gets at most one
``ALTER TABLE ... ENGINE=...`` entry (kind ``engine``): the smallest such estimate whose
saving stays positive beyond its interval widened by the model's own checked error.  A MyISAM or
Aria table gets at most one packer entry (kind ``pack``): myisampack / aria_pack (a command,
not SQL; the table becomes read-only) where the packer model's figure (compress/engines/
packmodel.py) saves beyond its interval widened by PACKER_ERROR.  When the second-smallest codec's
interval overlaps the smallest's, the entry says it is a tie within error.  Last, each engine
may combine its entries where only it knows they set one option of one object together
(``combine_advice``): MyRocks gives a column family advised on several LSM levels one entry with
one option string, in place of one line per level that would undo the others.

Savings are compression only (issue 17 item 1): where the engine splits a target's bytes
(``Target.split``), a codec's saving is counted against the table rebuilt as it is (its
free pages and unwritten space dropped), and the free space is an entry of its own, the
rebuild (``OPTIMIZE TABLE``), when it is worth one (REBUILD_MIN_BYTES and
REBUILD_MIN_FRACTION of the table).
"""
from __future__ import annotations

from typing import Any

from . import engines
from .registry import parse_codec

#: "within 5% of the smallest"
WITHIN = 0.05
#: a rebuild is advised when it reclaims at least this much and this share of the table (a
#: rebuilt InnoDB file reserves free pages of its own: smaller gains are not reliably had)
REBUILD_MIN_BYTES = 1 << 20
REBUILD_MIN_FRACTION = 0.10
#: the packer model's error allowed for besides its interval: checked against what myisampack /
#: aria_pack write, it is exact on the tables read whole and 0.07% off on a sampled one
#: (tests/test_myisampack_real_size.py, tests/test_myisampack_model.py); a point of margin for
#: tables unlike those
PACKER_ERROR = 0.01
#: the packer models (compress/engines/myisam.py PACKER_MODEL)
PACKER_MODELS = ("myisampack", "aria_pack")


def ddl_for(target, codec_name: str, model: str) -> str:
    """The statement that would store ``target`` with ``codec_name`` under ``model``."""
    try:
        codec = parse_codec(codec_name)
    except ValueError:
        return f"-- {codec_name}: unknown codec"
    engine = engines.get(target.engine)
    return engine.ddl(target, codec, model) if engine is not None else ""


def _decode_speed(r) -> float:
    """A result's measured decode speed, 0 when not measured (never ranks a codec)."""
    return float(r.decompress_mb_s or 0.0)


def available(engine: str, codec_name: str, layout: str | None = None) -> bool:
    """Whether the engine itself can write ``codec_name`` (advice is limited to those)."""
    try:
        codec = parse_codec(codec_name)
    except ValueError:
        return False
    w = engines.get(engine)
    return w.available(codec, layout) if w is not None else True


def _table_key(t) -> tuple:
    info = t.info or {}
    if info.get("table"):
        return (t.engine, info.get("database"), info.get("table"), info.get("column"))
    return (t.engine, t.target)


class _Summed:
    """One codec's projection summed over a table's targets (independent estimates)."""

    def __init__(self, codec: str, model: str, parts: list):
        from .targets import combine
        self.codec, self.model = codec, model
        self.estimate = parts[0].estimate if len(parts) == 1 else combine([r.estimate for r in parts])
        speeds = [_decode_speed(r) for r in parts]
        self.decompress_mb_s = min(speeds) if speeds and all(speeds) else None


def _table_results(group: list) -> list[_Summed]:
    """Per codec, the projection of the whole table (a codec missing for one of its
    files is left out: the table's figure would be incomplete)."""
    t0 = group[0]
    layout = (t0.info or {}).get("layout")
    by_codec: dict[str, list] = {}
    for t in group:
        for r in t.results:
            if r.model == t.primary_model and available(t.engine, r.codec, layout):
                by_codec.setdefault(r.codec, []).append(r)
    return [_Summed(c, rs[0].model, rs) for c, rs in by_codec.items() if len(rs) == len(group)]


def advise(targets: list) -> list[dict[str, Any]]:
    """Advice entries for the JSON (see the module doc)."""
    groups: dict[tuple, list] = {}
    for t in targets:
        w = engines.get(t.engine)
        if w is not None and not w.advisable(t):
            continue
        groups.setdefault(_table_key(t), []).append(t)
    out: list[dict[str, Any]] = []
    for group in groups.values():
        t0 = group[0]
        current_bytes = sum(int(t.current_bytes) for t in group)
        reclaimable = sum(int(t.split.reclaimable_bytes) for t in group if t.split is not None)
        names = sorted({t.target for t in group})
        name = t0.target if len(group) == 1 else _group_name(t0, names)
        rebuild = _rebuild_entry(group, name, names, current_bytes, reclaimable)
        if rebuild is not None:
            out.append(rebuild)
        engine_entry = _engine_entry(group, name, names, current_bytes)
        pack = _packer_entry(group, name, names, current_bytes)
        if pack is not None:
            out.append(pack)
        if engine_entry is not None:
            out.append(engine_entry)
        currents = {t.current_codec for t in group}
        rs = [r for r in _table_results(group) if r.codec not in currents]
        if not rs:
            continue
        rs.sort(key=lambda r: (r.estimate.projected, -_decode_speed(r)))
        smallest = rs[0]
        bound = smallest.estimate.projected * (1 + WITHIN)
        # size first; then, among codecs within 5% of the smallest, the fastest decode, only
        # where speeds are real measurements (a reference decoder's speed never ranks)
        near = [r for r in rs if r.estimate.projected <= bound and _decode_speed(r) > 0]
        fastest = max(near, key=lambda r: (_decode_speed(r), -r.estimate.projected)) if near else None
        picks: list[tuple[list[str], Any]] = [(["smallest"], smallest)]
        if fastest is not None and fastest is not smallest:
            picks.append((["fastest_decode_within_5pct"], fastest))
        elif fastest is smallest:
            picks[0][0].append("fastest_decode_within_5pct")
        tie = None
        if len(rs) > 1 and rs[1].estimate.lo <= smallest.estimate.hi:
            tie = rs[1]
        # the codec's DDL rebuilds the table: its saving is counted against the table rebuilt
        # as it is, never against the free space the rebuild drops (that is the entry above)
        for choices, r in picks:
            base = current_bytes - reclaimable if r_rebuilds(r, group) else current_bytes
            proj = int(round(r.estimate.projected))
            lo_save = base - int(round(r.estimate.hi))
            hi_save = base - int(round(r.estimate.lo))
            if lo_save <= 0:
                continue            # not a saving beyond the interval: no advice
            entry = {"target": name, "kind": "codec",
                     "codec": r.codec, "projected_bytes": proj, "current_bytes": current_bytes,
                     "saving_bytes": base - proj, "saving_bytes_ci95": [lo_save, hi_save],
                     "compared_with": "rebuilt" if base != current_bytes else "current",
                     "ddl": ddl_for(t0, r.codec, r.model), "choice": ", ".join(choices), "model": r.model,
                     "ci95": r.estimate.ci95(), "decompress_mb_s": round(r.decompress_mb_s, 1) if r.decompress_mb_s else None,
                     "files": names}
            if tie is not None and "smallest" in choices:
                need = separating_sample(smallest.estimate, tie.estimate)
                entry["verdict"] = f"tie within error with {tie.codec}: their 95% intervals overlap; " + (
                    "they project the same size" if need is None else
                    "only every unit (--sample all) would separate them" if need >= tie.estimate.units_total
                    else f"a sample of about {need:,} of {tie.estimate.units_total:,} units "
                         f"({need / max(tie.estimate.units_total, 1):.0%}) would separate them")
                entry["separating_units"] = need
            out.append(entry)
    by_engine: dict[str, list] = {}
    for group in groups.values():
        by_engine.setdefault(group[0].engine, []).extend(group)
    for name, ts in by_engine.items():
        w = engines.get(name)
        if w is None:
            continue
        names = {t.target for t in ts}
        mine = [a for a in out if a["target"] in names]
        if not mine:
            continue
        combined = iter(w.combine_advice(mine, ts))
        at = next(i for i, a in enumerate(out) if a["target"] in names)
        rest = [a for a in out if a["target"] not in names]
        out = rest[:at] + list(combined) + rest[at:]
    return out


def separating_sample(a, b) -> int | None:
    """Units to sample so that two estimates' 95% intervals no longer overlap, assuming each
    half-width shrinks as the sampling error of a mean does, sqrt(1/n - 1/N) (with the finite
    population correction: every unit sampled is exact); None when they project the same size."""
    d = abs(float(b.projected) - float(a.projected))
    h = (float(a.hi) - float(a.lo) + float(b.hi) - float(b.lo)) / 2
    n, total = max(int(b.units_sampled), 1), max(int(b.units_total), 1)
    if d <= 0:
        return None
    if h <= 0 or n >= total:
        return n
    r = d / h
    inv = r * r * (1 / n - 1 / total) + 1 / total
    return min(total, max(n, int(-(-1 // inv))))


def r_rebuilds(r, group: list) -> bool:
    """Whether a summed result's model rebuilds the table (its DDL drops the free space)."""
    for t in group:
        for x in t.results:
            if x.model == r.model:
                return bool(x.rebuilds)
    return False


def _rebuild_entry(group: list, name: str, names: list[str], current_bytes: int,
                   reclaimable: int) -> dict[str, Any] | None:
    """The rebuild advice of a table whose free pages and unwritten space are worth it."""
    if reclaimable < REBUILD_MIN_BYTES or reclaimable < REBUILD_MIN_FRACTION * current_bytes:
        return None
    t0 = group[0]
    engine = engines.get(t0.engine)
    ddl = engine.rebuild_ddl(t0) if engine is not None else None
    if not ddl:
        return None
    return {"target": name, "kind": "rebuild", "codec": t0.current_codec or "none",
            "projected_bytes": current_bytes - reclaimable, "current_bytes": current_bytes,
            "saving_bytes": reclaimable, "saving_bytes_ci95": [0, reclaimable],
            "ddl": ddl, "choice": "rebuild", "model": "rebuild",
            "verdict": engine.rebuild_verdict(group, reclaimable),
            "files": names}


def _engine_entry(group: list, name: str, names: list[str], current_bytes: int) -> dict[str, Any] | None:
    """``ALTER TABLE ... ENGINE=...``: the smallest of the table's cross-engine estimates (the
    engine's ``engine_change``) whose saving stays positive beyond its 95% interval and the
    model's own checked error; one entry per table (a single-file table only: the estimates
    are of that file's rows)."""
    if len(group) != 1:
        return None
    t = group[0]
    engine = engines.get(t.engine)
    if engine is None:
        return None
    best = None
    for r in t.results:
        try:
            codec = parse_codec(r.codec)
        except ValueError:
            continue
        change = engine.engine_change(t, codec, r.model)
        if change is None:
            continue
        clause, ddl, frac, extra = change
        hi = float(r.estimate.hi) * (1 + frac) + extra
        lo = max(0.0, float(r.estimate.lo) * (1 - frac))
        if current_bytes - hi <= 0:
            continue            # not a saving beyond the interval and the model's error
        if best is None or r.estimate.projected < best[0].estimate.projected:
            best = (r, clause, ddl, frac, extra, lo, hi)
    if best is None:
        return None
    r, clause, ddl, frac, extra, lo, hi = best
    proj = int(round(r.estimate.projected))
    return {"target": name, "kind": "engine", "engine_clause": clause, "codec": r.codec,
            "projected_bytes": proj, "current_bytes": current_bytes, "saving_bytes": current_bytes - proj,
            "saving_bytes_ci95": [current_bytes - int(round(hi)), current_bytes - int(round(lo))],
            "compared_with": "current", "ddl": ddl, "choice": "smallest_engine", "model": r.model,
            "ci95": r.estimate.ci95(),
            "verdict": (f"an estimate of the same rows in another engine ({r.model}); the saving's interval "
                        f"includes the model's checked error ({frac:.0%}"
                        + (f" and {extra:,} bytes the figure leaves out" if extra else "") + ")"),
            "files": names}


def _packer_entry(group: list, name: str, names: list[str], current_bytes: int) -> dict[str, Any] | None:
    """myisampack / aria_pack (kind ``pack``): the packer model's figure where it saves beyond its
    95% interval widened by PACKER_ERROR; the command, run in the data directory, and that the
    table becomes read-only (one data file a table: MyISAM and Aria)."""
    if len(group) != 1:
        return None
    t = group[0]
    r = next((r for r in t.results if r.model in PACKER_MODELS), None)
    facts = (t.facts or {}).get("packer") or {}
    if r is None or not facts:
        return None
    # the packer drops deleted rows and free space too: its saving is against the file as it is
    hi = float(r.estimate.hi) * (1 + PACKER_ERROR)
    lo = max(0.0, float(r.estimate.lo) * (1 - PACKER_ERROR))
    if current_bytes - hi <= 0:
        return None
    proj = int(round(r.estimate.projected))
    return {"target": name, "kind": "pack", "codec": f"{r.codec} ({r.model})", "tool": r.model,
            "projected_bytes": proj, "current_bytes": current_bytes, "saving_bytes": current_bytes - proj,
            "saving_bytes_ci95": [current_bytes - int(round(hi)), current_bytes - int(round(lo))],
            "compared_with": "current", "command": facts.get("command"), "read_only": True,
            "ddl": engines.get(t.engine).ddl(t, None, r.model),
            "choice": "packer", "model": r.model, "ci95": r.estimate.ci95(),
            "verdict": (f"{r.model}'s own coding worked out from the rows (compress/engines/packmodel.py); the "
                        f"table becomes read-only (INSERT, UPDATE and DELETE refused) until it is unpacked "
                        f"({'myisamchk' if r.model == 'myisampack' else 'aria_chk'} --unpack); the data file only, "
                        f"the index is rebuilt by -rq"),
            "files": names}


def _group_name(t0, names: list[str]) -> str:
    info = t0.info or {}
    table = info.get("table") or t0.target
    db = info.get("database")
    return f"{db}.{table}" if db and not str(table).startswith(f"{db}.") else str(table)


__all__ = ["advise", "ddl_for", "available"]

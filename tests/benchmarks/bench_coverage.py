"""Coverage of the what-if's 95% intervals (issue 17, "Intervals"): for each fixture family,
the what-if at 5% over many seeds against ``--sample all`` (computed once per family).

    .venv/bin/python tests/benchmarks/bench_coverage.py [--seeds 200] [--only innodb,clickhouse,...]
                                                        [--per-target] [--no-pool]

A case is one (seed, target, codec, model) result of a 5% run whose sample did not take every
unit (a result known exactly, a target sampled whole, counts in ``exact`` and is left out of
the coverage); it is covered when the ``--sample all`` figure lies inside its interval. Printed
per family: cases, coverage (target 93-97%), the median interval width relative to the
``all`` figure, how many intervals reach their physical bound (``max_bytes``), the time;
``--per-target`` the same per target; ``--no-pool`` measures each stratum's own spread alone
(no spread pooled across the run's targets), on the same samples.

It runs the in-process API (``compress.whatif.run_whatif``: the engines' targets, the
stratified sampling, the estimator) with two things changed to keep 200 seeds per family in
minutes: each unit's encoding is cached across runs (the same payload, codec and model
parameters give the same bytes, so this changes no figure), and the speed measurement is
off (speeds are not what this measures). Engine storage models only (no filesystem
comparisons, no larger-pages approximation); two codecs per family (named below).
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import math
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import dbxray.compress.engines  # noqa: E402,F401  -- every model class defined
import dbxray.compress.targets as targets_mod  # noqa: E402
from dbxray.compress.models import Model  # noqa: E402
from dbxray.compress.whatif import run_whatif  # noqa: E402
from dbxray.parsers.scan import scan  # noqa: E402

FIXTURES = Path(os.environ.get("DBXRAY_FIXTURES") or REPO.parent / "shared" / "fixtures")

#: family -> (folder under the fixtures, two codecs the family's engines write)
FAMILIES = {
    "innodb": ("innodb", ["zlib:6", "lz4"]),
    "clickhouse": ("clickhouse/datadir", ["ZSTD(1)", "LZ4"]),
    "tokudb": ("tokudb/datadir", ["zlib:6", "zstd:1"]),
    "mariadb": ("mariadb/datadir", ["zlib:6", "lz4"]),
}


# ---------------------------------------------------------------------------
# the encode cache (no figure changes: the same inputs give the same bytes)
_CACHE: dict = {}


def _scalars(model) -> tuple:
    out = []
    for f in dataclasses.fields(model):
        v = getattr(model, f.name)
        if v is None or isinstance(v, (int, float, str, bool)):
            out.append((f.name, v))
    return tuple(out)


def _unit_key(model, unit):
    params = getattr(model, "_params", None)
    if params is not None and unit is not None:            # ClickHouse: the unit's stream parameters
        return dataclasses.astuple(params(unit))
    pick = getattr(model, "_dictionary", None)
    if pick is not None and unit is not None:              # RocksDB: the unit's file dictionary
        d = pick(unit)
        return hashlib.blake2b(d, digest_size=8).digest() if d else None
    return None


def _cached(fn):
    def project(self, codec, payload, unit=None):
        key = (type(self).__name__, _scalars(self), codec.name, _unit_key(self, unit),
               hashlib.blake2b(payload, digest_size=16).digest(), len(payload))
        v = _CACHE.get(key)
        if v is None:
            v = _CACHE[key] = fn(self, codec, payload, unit)
        return v
    project._cached = True
    return project


def install_cache() -> None:
    todo = [Model]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        own = cls.__dict__.get("project")
        if own is not None and not getattr(own, "_cached", False) and cls is not Model:
            cls.project = _cached(own)


class _NoSpeed:
    compress_mb_s = 0.0
    decompress_mb_s = 0.0


def no_speeds() -> None:
    targets_mod.measure = lambda *a, **k: _NoSpeed()


# ---------------------------------------------------------------------------
#: targets of at least this many logical bytes are "large" in the breakdown
LARGE = 1 << 20


def figures(result: dict) -> dict:
    out = {}
    for t in result["targets"]:
        for r in t["results"]:
            out[(t["target"], r["codec"], r["model"])] = dict(r, large=t["logical_bytes"] >= LARGE)
    return out


def family(name: str, seeds: int, fraction: str, per_target: bool = False) -> dict:
    folder, codecs = FAMILIES[name]
    path = FIXTURES / folder
    t0 = time.perf_counter()
    ds = scan(str(path))
    kw = dict(raw_models=False, larger_pages=False)
    full = figures(run_whatif(ds, codecs, sample="all", seed=0, **kw))
    t_all = time.perf_counter() - t0
    cases = inside = exact = at_bound = 0
    big = [0, 0]           # cases, covered: targets of >= LARGE logical bytes
    widths: list[float] = []
    misses: dict = {}
    per: dict = {}         # target -> [cases, covered, widths, at bound]
    per_key: dict = {}     # (target, codec, model) -> [cases, covered]
    t1 = time.perf_counter()
    for seed in range(seeds):
        res = run_whatif(ds, codecs, sample=fraction, seed=seed, **kw)
        for key, r in figures(res).items():
            f = full.get(key)
            if f is None:
                continue
            lo, hi = r["ci95"]
            if lo == hi:
                exact += 1
                continue
            cases += 1
            ok = lo <= f["projected_bytes"] <= hi
            inside += ok
            if r["large"]:
                big[0] += 1
                big[1] += ok
            if not ok:
                misses[key] = misses.get(key, 0) + 1
            pk = per_key.setdefault(key, [0, 0])
            pk[0] += 1
            pk[1] += ok
            p = per.setdefault(key[0], [0, 0, [], 0])
            p[0] += 1
            p[1] += ok
            if f["projected_bytes"] > 0:
                widths.append((hi - lo) / f["projected_bytes"])
                p[2].append((hi - lo) / f["projected_bytes"])
            if r.get("max_bytes") is not None and hi >= r["max_bytes"]:
                at_bound += 1
                p[3] += 1
    t_runs = time.perf_counter() - t1
    cov = inside / cases if cases else math.nan
    print(f"== {name}: {path} ({', '.join(codecs)}; {seeds} seeds at {fraction})")
    print(f"   cases {cases} (+{exact} exact), coverage of the 95% interval {cov:.1%}, median width "
          f"{statistics.median(widths) if widths else math.nan:.1%} of the all-figure, at the physical bound "
          f"{at_bound}, time {t_all:.1f} s (all) + {t_runs:.1f} s ({t_runs / seeds:.2f} s a seed)")
    if big[0]:
        print(f"   targets of >= {LARGE >> 20} MiB: {big[0]} cases, coverage {big[1] / big[0]:.1%}; smaller: "
              f"{cases - big[0]} cases, coverage {(inside - big[1]) / max(1, cases - big[0]):.1%}")
    for key, n in sorted(misses.items(), key=lambda kv: -kv[1])[:5]:
        print(f"   most missed: {key} {n} of {seeds}")
    if per_target:
        print("   per target: cases, coverage, median width / figure, at the physical bound")
        for t, (c, ok, w, b) in sorted(per.items(), key=lambda kv: -kv[1][0]):
            print(f"     {c:>6} {ok / c:7.1%} {statistics.median(w) if w else math.nan:8.1%} {b:>6}  {t}")
            if ok / c < 0.93:      # under the target: which codec and model
                for (tt, codec, model), (kc, kok) in sorted(per_key.items()):
                    if tt == t:
                        print(f"            {kc:>6} {kok / kc:7.1%}  {codec} {model}")
    return {"family": name, "cases": cases, "exact": exact, "coverage": cov,
            "large": big[1] / big[0] if big[0] else None, "large_cases": big[0],
            "median_width": statistics.median(widths) if widths else None, "seconds": t_all + t_runs}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--sample", default="0.05")
    ap.add_argument("--only", default=",".join(FAMILIES))
    ap.add_argument("--per-target", action="store_true", help="coverage and width per target")
    ap.add_argument("--no-pool", action="store_true",
                    help="each stratum's own spread only (no spread pooled across the run): the estimator before "
                         "issue 17's pooling, on the same sample")
    a = ap.parse_args(argv)
    install_cache()
    no_speeds()
    if a.no_pool:
        import dbxray.compress.whatif as whatif
        whatif.fit_priors = lambda pool: {}
    rows = [family(n.strip(), a.seeds, a.sample, a.per_target) for n in a.only.split(",") if n.strip()]
    print("\nfamily       cases   coverage  median width  time      targets >= 1 MiB")
    for r in rows:
        large = f"{r['large_cases']} cases, {r['large']:.1%}" if r["large"] is not None else "none"
        print(f"{r['family']:<12} {r['cases']:>6}   {r['coverage']:7.1%}   {r['median_width'] or 0:10.1%}  "
              f"{r['seconds']:6.1f} s  {large}   (target 93-97%)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

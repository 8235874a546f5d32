"""Benchmark of the ClickHouse type and codec advisor (issue 20, "Speed"): ``dbxray advise``
on a 5% sample against ``--sample all``, fresh processes, same data dir, same run.

    .venv/bin/python tests/benchmarks/bench_advise.py [--datadir DIR] [--rounds N] [--jobs J]
                                                      [--no-all] [--codecs-only]

The issue's set is made by ``../shared/fixtures/clickhouse/make_fixtures.py --scale 50``
(chdb, about 1.2 GB: build it under /tmp); without it the fixture data dir is used.  Each
round runs ``dbxray advise DIR --sample 0.05 --codecs -j J --json`` (and the same without
``--codecs`` unless ``--codecs-only``) in a fresh interpreter; ``--sample all`` is run once
per mode (it reads every block).  Printed: min / median wall time and CPU (user + sys of the
process and its workers), the advisor's own ``seconds`` (after the scan), the load average
before each run, the 10 s target, the ratio of ``--sample all`` to the 5% median, and how many
of the every-value projections fall inside the 5% run's 95% intervals.  Nothing is written
outside a temporary folder; speed is never asserted in unit tests.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(os.environ.get("DBXRAY_FIXTURES") or REPO.parent / "shared" / "fixtures")
#: the issue's budget for the 5% advice, types and codecs, on the 1.17 GB set
TARGET_S = 10.0


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_once(datadir: Path, sample: str, codecs: bool, jobs: int | None, out: Path) -> dict:
    """One fresh ``dbxray advise`` process: wall, CPU, load average before, its JSON."""
    cmd = [sys.executable, "-m", "dbxray.app", "advise", str(datadir), "--sample", sample, "--json", "-o", str(out)]
    if codecs:
        cmd.append("--codecs")
    if jobs is not None:
        cmd += ["-j", str(jobs)]
    load = os.getloadavg()[0]
    cpu0 = _children_cpu()
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    cpu = _children_cpu() - cpu0
    if p.returncode:
        raise SystemExit(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[-500:]}")
    result = json.loads(out.read_text())
    return {"wall": wall, "cpu": cpu, "load": load, "advise": result["seconds"], "result": result}


def inside(sampled: dict, full: dict) -> tuple[int, int]:
    """(every-value projections inside the sampled run's 95% interval, projections compared)."""
    def items(res):
        out = {}
        for a in res["columns"]:
            for c in a["candidates"]:
                out[(a["database"], a["table"], a["column"], "type", c["type"], c["codec"])] = c
            for c in a.get("codec_candidates") or []:
                out[(a["database"], a["table"], a["column"], "codec", c["type"], c["codec"])] = c
        return out
    s, f = items(sampled), items(full)
    n = k = 0
    for key, c in f.items():
        if key not in s:
            continue
        lo, hi = s[key]["projected_bytes_ci95"]
        n += 1
        k += lo <= c["projected_bytes"] <= hi
    return k, n


def _fmt(xs: list[float]) -> str:
    return f"min {min(xs):.2f} s, median {statistics.median(xs):.2f} s"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datadir", help="ClickHouse data dir (default /tmp/ch_bench50/datadir, else the fixture's)")
    ap.add_argument("--rounds", type=int, default=3, help="fresh-process runs of the 5%% advice per mode")
    ap.add_argument("--repeat", type=int, dest="rounds", help=argparse.SUPPRESS)
    ap.add_argument("--jobs", type=int, default=None, help="-j for dbxray advise (default: its own, every core)")
    ap.add_argument("--no-all", action="store_true", help="skip the --sample all runs")
    ap.add_argument("--codecs-only", action="store_true", help="only the --codecs mode (types and codecs)")
    args = ap.parse_args(argv)
    datadir = Path(args.datadir) if args.datadir else next(
        (p for p in (Path("/tmp/ch_bench50/datadir"), FIXTURES / "clickhouse" / "datadir") if p.exists()), None)
    if datadir is None or not datadir.exists():
        print("skipped: no ClickHouse data dir (--datadir; make_fixtures.py --scale 50 builds the issue's)")
        return 0
    size = sum(f.stat().st_size for f in datadir.rglob("*") if f.is_file() and not f.is_symlink())
    print(f"data dir {datadir} ({size / 1e9:.2f} GB), {os.cpu_count()} cores, -j {args.jobs or 'default'}, "
          f"{args.rounds} rounds; PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!s} "
          f"(set: every start compiles the imports, ~0.3 s)")
    modes = [("types and codecs", True)] + ([] if args.codecs_only else [("types only", False)])
    status = 0
    with tempfile.TemporaryDirectory(prefix="bench_advise_") as tmp:
        for label, codecs in modes:
            runs = []
            for r in range(args.rounds):
                x = run_once(datadir, "0.05", codecs, args.jobs, Path(tmp) / f"s{r}.json")
                runs.append(x)
                print(f"  {label}, 5%: {x['wall']:.2f} s wall, {x['cpu']:.2f} s CPU, advising {x['advise']:.2f} s "
                      f"(load average {x['load']:.1f})", flush=True)
            walls = [x["wall"] for x in runs]
            cpus = [x["cpu"] for x in runs]
            med = statistics.median(walls)
            met = "met" if med <= TARGET_S else "not met"
            n_sugg = sum(len(a["candidates"]) + len(a.get("codec_candidates") or []) for a in runs[0]["result"]["columns"])
            print(f"== advise --sample 0.05{' --codecs' if codecs else ''}: {_fmt(walls)} wall; CPU {_fmt(cpus)}; "
                  f"{n_sugg} suggestions; target <= {TARGET_S:.0f} s (median): {met}")
            if args.no_all:
                continue
            full = run_once(datadir, "all", codecs, args.jobs, Path(tmp) / "all.json")
            k, n = inside(runs[0]["result"], full["result"])
            print(f"  {label}, every value: {full['wall']:.2f} s wall, {full['cpu']:.2f} s CPU, advising "
                  f"{full['advise']:.2f} s (load average {full['load']:.1f})")
            print(f"== advise --sample all{' --codecs' if codecs else ''} / --sample 0.05: {full['wall'] / med:.1f}x "
                  f"wall ({full['cpu'] / statistics.median(cpus):.1f}x CPU); every-value projections inside the 5% "
                  f"run's 95% interval: {k} of {n}")
    return status


if __name__ == "__main__":
    sys.exit(main())

"""Run every dbxray benchmark in one command and print a table of their ratios.

    .venv/bin/python tests/benchmarks/run_all.py [--innodb DIR] [--clickhouse DIR] [--ibd PATH]
                                                 [--only innodb,clickhouse,...] [--repeat N]

Each ``bench_*.py`` here measures dbxray against a peer in the same run on the
same warm files (innochecksum -S / inno parse, chdb, tokuftdump's recorded
figure and a full decode pass, zstd -b / lz4 -b, full re-encode vs sample,
GUI first paint and pan rate) and prints its own report; this script gives
each its data set, shows the reports, and ends with a summary of every line
that states a ratio, a speed-up, a rate or a target.  A script whose data
set or peer is missing says so and the others go on.  Speed is never
asserted in unit tests.

Data sets (never in the repository):
  --innodb      a set made by ../shared/fixtures/innodb/make_fixtures.sh 200 DIR
                (default /tmp/innodb-bench when it exists)
  --clickhouse  a data dir made by ../shared/fixtures/clickhouse/make_fixtures.py --scale 50
                (default /tmp/ch_bench50/datadir when it exists, else the fixture data dir)
  --ibd         a large tablespace for the extent map's first paint (see bench_extentmap.py)
"""
from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
FIXTURES = Path(os.environ.get("DBXRAY_FIXTURES") or REPO.parent / "shared" / "fixtures")

#: a line of a report that belongs in the summary
SUMMARY = re.compile(r"(^== |\d\.?\d*\s*x\b|\d+(\.\d+)?x\b|speed-up|target|fps|first paint|RSS|= \d+\.\d+x|"
                     r"within|inside)", re.IGNORECASE)
#: report lines that are listings, not results
NOISE = re.compile(r"^\s*(usage:|warm |cold |\S+\.ibd\b)")


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(next(l for l in open("/proc/meminfo") if l.startswith("MemTotal")).split()[1])
        mem = f", {kb / 1024 / 1024:.0f} GiB RAM"
    except (OSError, StopIteration, ValueError):
        pass
    return f"{cpu}, {os.cpu_count()} cores{mem}, Python {platform.python_version()}, {platform.system()}"


def _first_dir(*cands) -> Path | None:
    return next((Path(c) for c in cands if c and Path(c).exists()), None)


def plan(args) -> list[tuple[str, list[str] | None, str]]:
    """(script, its arguments or None when its data set is missing, why)."""
    inno = _first_dir(args.innodb, "/tmp/innodb-bench")
    ch = _first_dir(args.clickhouse, "/tmp/ch_bench50/datadir", FIXTURES / "clickhouse" / "datadir")
    rep = ["--repeat", str(args.repeat)]
    out = [
        ("bench_innodb", [str(inno)] + rep if inno else None,
         "no InnoDB set (--innodb DIR; make_fixtures.sh 200 DIR builds one)"),
        ("bench_clickhouse", ["--datadir", str(ch)] + rep if ch else None, "no ClickHouse data dir"),
        ("bench_tokudb", rep, ""),
        ("bench_myisam_aria", rep, ""),
        ("bench_extentmap", (["--ibd", args.ibd] if args.ibd else []) + rep + ["1000000", "10000000"], ""),
        ("bench_whatif", (["--innodb", str(inno)] if inno else []) + (["--clickhouse", str(ch)] if ch else []), ""),
        ("bench_advise", ["--datadir", str(ch)] + rep if ch else None, "no ClickHouse data dir"),
    ]
    if args.only:
        want = {x.strip() for x in args.only.split(",")}
        out = [o for o in out if o[0].removeprefix("bench_") in want]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--innodb", help="InnoDB benchmark set")
    ap.add_argument("--clickhouse", help="ClickHouse data dir")
    ap.add_argument("--ibd", help="large tablespace for the extent map's first paint")
    ap.add_argument("--only", help="comma list of script names without bench_ (e.g. innodb,tokudb)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    print(f"# dbxray benchmarks on {machine()}")
    print(f"# started {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"load average {os.getloadavg()[0]:.1f}")
    env = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    summary: list[tuple[str, str]] = []
    failed = 0
    for name, script_args, why in plan(args):
        print(f"\n## {name}\n", flush=True)
        if script_args is None:
            print(f"skipped: {why}")
            summary.append((name, f"skipped: {why}"))
            continue
        t = time.perf_counter()
        p = subprocess.run([sys.executable, str(HERE / f"{name}.py")] + script_args, cwd=REPO, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines = [ln for ln in p.stdout.splitlines() if "propagateSizeHints" not in ln]
        print("\n".join(lines))
        print(f"({name}.py: exit {p.returncode}, {time.perf_counter() - t:.1f} s)", flush=True)
        failed += p.returncode != 0
        picked = [ln.strip() for ln in lines if SUMMARY.search(ln) and not NOISE.match(ln)]
        summary += [(name, ln) for ln in picked] or [(name, f"exit {p.returncode}, no ratio printed")]
    print("\n## Summary (every ratio, rate and target line above)\n")
    width = max((len(n) for n, _ in summary), default=10)
    for name, line in summary:
        print(f"{name:<{width}}  {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

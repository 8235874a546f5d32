"""Run every dbxray benchmark script in one go and print their ratio tables.

    .venv/bin/python tests/benchmarks/run_all.py [--only innodb,clickhouse,...] [-- extra args]

Each ``bench_*.py`` here measures dbxray against a peer in the same run on the
same warm files (innochecksum -S / inno parse, chdb, tokuftdump's recorded
figure and a full decode pass, zstd -b / lz4 -b, full re-encode vs sample,
GUI first paint and pan rate) and prints its own table; a script whose peer is
missing says so and goes on.  Speed is never asserted in unit tests.
"""
from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="comma list of script names without bench_ (e.g. innodb,tokudb)")
    args, extra = ap.parse_known_args()
    scripts = sorted(HERE.glob("bench_*.py"))
    if args.only:
        want = {f"bench_{x.strip()}.py" for x in args.only.split(",")}
        scripts = [s for s in scripts if s.name in want]
    print(f"# dbxray benchmarks on {machine()}")
    failed = 0
    for s in scripts:
        print(f"\n## {s.stem}\n", flush=True)
        t = time.perf_counter()
        r = subprocess.run([sys.executable, str(s)] + extra, cwd=HERE.parent.parent)
        print(f"({s.name}: exit {r.returncode}, {time.perf_counter() - t:.1f} s)", flush=True)
        failed += r.returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

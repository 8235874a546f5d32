"""The window at the scale of real servers, as a user opens it (a benchmark that prints
numbers, not a timed unit test; issue 22 items 5 and 7).

Each round starts ``dbxray PATH`` as a fresh process (the offscreen Qt platform unless
``--platform xcb`` with a DISPLAY) with ``DBXRAY_TIMING`` (app/timing.py) and reads when
the window first painted (``window``), first painted the tree with rows (``tree``) and
painted the first scan's tree (``scanned``), painted the tree of the finished scan (``complete``: after
ClickHouse's deferred block walk), counted from the moment the process
was started; the peak RSS is the process's VmHWM at ``complete``.  Rounds of the sizes are
interleaved; min and median are printed with the load average.

The data dirs are N small InnoDB tablespaces, 50 a database: real copies (not hard links:
a hard-linked inode is rightly counted once) of three small fixture files
(``../shared/fixtures/innodb``), made under ``--dir`` when missing.  No PATH size: the
embedded demo (start-up).  A size that is a folder is opened as it is (e.g. the ClickHouse
set of ``make_fixtures.py --scale 50``).  As in bench_e2e.py, the children may write Python bytecode
(PYTHONDONTWRITEBYTECODE is unset for them) and one untimed start comes first.

    .venv/bin/python tests/benchmarks/bench_window.py [--rounds 5] [--dir /tmp/dbxray-bench-window] \
        [--sizes demo 200 2000 20000]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
FIXTURES = REPO.parent / "shared" / "fixtures" / "innodb"
SOURCES = ("16k/fx/t_part#P#pmax.ibd", "datadir16k/fx/t_zip8.ibd", "datadir16k/mysql/gtid_slave_pos.ibd")
PER_DB = 50
EVENTS = ("window", "tree", "scanned", "complete")
#: the children write and read Python bytecode, as an installed dbxray does (pip and the
#: bundle ship it compiled): with PYTHONDONTWRITEBYTECODE set, every start would compile
#: dbxray's modules from source again (+0.07 s to a shown window on the demo, 2026-11-24)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def make_set(folder: Path, n: int) -> Path:
    """``n`` tablespaces under ``folder`` (made once; a complete set is reused)."""
    done = folder / ".complete"
    if done.exists():
        return folder
    datas = [(FIXTURES / s).read_bytes() for s in SOURCES]
    for i in range(n):
        d = folder / f"db{i // PER_DB:05d}"
        if i % PER_DB == 0:
            d.mkdir(parents=True, exist_ok=True)
        (d / f"t{i:06d}.ibd").write_bytes(datas[i % len(datas)])
    done.write_text(str(n))
    return folder


def dbxray_cmd() -> list[str]:
    exe = Path(sys.executable).with_name("dbxray")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "dbxray.app"]


def vm_hwm_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def one_round(path: str | None, platform: str, timeout: float) -> dict:
    """Times (s from process start) of the window's first paints, and its peak RSS."""
    with tempfile.TemporaryDirectory() as tmp:
        marks = Path(tmp) / "timing"
        env = dict(ENV, DBXRAY_TIMING=str(marks), QT_QPA_PLATFORM=platform,
                   XDG_CONFIG_HOME=str(Path(tmp) / "config"))
        cmd = dbxray_cmd() + ([path] if path else [])
        t0 = time.time()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out: dict = {}
        try:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and proc.poll() is None:
                text = marks.read_text() if marks.exists() else ""
                if "complete" in text:
                    out["rss_mb"] = vm_hwm_mb(proc.pid)
                    break
                time.sleep(0.02)
            text = marks.read_text() if marks.exists() else ""
            for line in text.splitlines():
                event, when = line.split()
                out.setdefault(event, float(when) - t0)
        finally:
            proc.kill()
            proc.wait()
    return out


def fmt(values: list[float], unit: str = "s") -> str:
    vals = [v for v in values if v == v]
    if not vals:
        return "-"
    if unit == "MB":
        return f"{min(vals):.0f}/{statistics.median(vals):.0f} MB"
    return f"{min(vals):.2f}/{statistics.median(vals):.2f} s"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "dbxray-bench-window"))
    ap.add_argument("--sizes", nargs="*", default=["demo", "200", "2000", "20000"])
    ap.add_argument("--platform", default="offscreen", help="Qt platform (offscreen, or xcb with a DISPLAY)")
    ap.add_argument("--timeout", type=float, default=600.0)
    args = ap.parse_args()
    paths = {}
    for s in args.sizes:
        paths[s] = None if s == "demo" else s if os.path.isdir(s) else str(make_set(Path(args.dir) / f"n{s}", int(s)))
    results: dict[str, list[dict]] = {s: [] for s in args.sizes}
    loads = []
    one_round(None, args.platform, args.timeout)      # untimed: writes the bytecode, warms the cache
    for r in range(args.rounds):
        for s in args.sizes:            # interleaved: each round runs every size once
            loads.append(os.getloadavg()[0])
            results[s].append(one_round(paths[s], args.platform, args.timeout))
    print(f"window benchmark, Qt platform {args.platform}, {args.rounds} rounds (min/median), "
          f"load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs")
    for s in args.sizes:
        rs = results[s]
        name = "demo" if s == "demo" else os.path.basename(s.rstrip("/")) if os.path.isdir(s) else f"{int(s):,} tablespaces"
        cols = [f"{e} {fmt([x.get(e, float('nan')) for x in rs])}" for e in EVENTS]
        missing = sum(1 for x in rs if "complete" not in x)
        print(f"{name:>22}: " + " | ".join(cols) + f" | peak RSS {fmt([x.get('rss_mb', float('nan')) for x in rs], 'MB')}"
              + (f" | {missing} round(s) did not complete" if missing else ""))


if __name__ == "__main__":
    main()

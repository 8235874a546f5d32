#!/usr/bin/env python3
"""Benchmark: per-column sizes of a large ClickHouse data directory, read
offline by dbxray (checksums.txt + block headers, no payloads) vs the same
figures from the engine (chdb: open a session on a copy, query
system.parts_columns), in one run, with the ratio.

    .venv/bin/python tests/benchmarks/bench_clickhouse.py --datadir /tmp/ch_bench/datadir
    .venv/bin/python tests/benchmarks/bench_clickhouse.py --make 50 --out /tmp/ch_bench   # build it first

``--make`` runs ../shared/fixtures/clickhouse/make_fixtures.py (needs chdb);
never put the large set in the repository.  Without chdb the script still
times dbxray and says that the ratio was not measured.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from dbxray.parsers.model import ScanContext  # noqa: E402
from dbxray.parsers.scan import scan  # noqa: E402

MAKE_FIXTURES = REPO.parent / "shared" / "fixtures" / "clickhouse" / "make_fixtures.py"
SQL = ("SELECT database, table, part_name, column, column_data_compressed_bytes AS c, "
       "column_data_uncompressed_bytes AS u, column_marks_bytes AS m FROM system.parts_columns "
       "WHERE active AND database NOT IN ('system', 'INFORMATION_SCHEMA', 'information_schema') "
       "SETTINGS output_format_json_quote_64bit_integers = 0")


def dbxray_sizes(datadir: str) -> tuple[float, dict]:
    """(seconds, {(db, table, part, column): (c, u, m)}) from a full dbxray scan, checksums not verified."""
    t0 = time.perf_counter()
    ds = scan(datadir, ScanContext(verify_checksums=False))
    secs = time.perf_counter() - t0
    out = {}
    for t in ds.sections.get("clickhouse", {}).get("tables", []):
        for p in t["parts"]:
            if p["active"] != 1 or p.get("state") != "active":
                continue
            for c in p["columns"]:
                out[(t["database"], t["table"], p["name"], c["name"])] = (
                    c["compressed_bytes"], c["uncompressed_bytes"], c["marks_bytes"])
    return secs, out


def quick_sizes(datadir: str, walk: bool = True) -> tuple[float, dict]:
    """(seconds, sizes) from dbxray.parsers.clickhouse.quick: checksums.txt + block headers only."""
    from dbxray.parsers.clickhouse.quick import column_sizes
    t0 = time.perf_counter()
    out = column_sizes(datadir, walk)
    return time.perf_counter() - t0, out


def header_read_floor(datadir: str, repeat: int = 3) -> tuple[float, int]:
    """(seconds, headers): one bare 64-byte pread per block header of every
    stream the sizes path walks, offsets known in advance, nothing parsed:
    the floor of any walker that reads each header with its own system call
    from Python."""
    import dbxray.parsers.clickhouse.quick as q
    from dbxray.parsers.clickhouse.blocks import walk_blocks
    walked: list[str] = []
    real = q.header_walk

    def spy(path):
        walked.append(path)
        return real(path)
    q.header_walk = spy
    try:
        q.column_sizes(datadir)
    finally:
        q.header_walk = real
    offsets = {}
    for p in walked:
        fd = os.open(p, os.O_RDONLY)
        try:
            offsets[p] = walk_blocks(None, fd=fd).offsets.tolist()
        finally:
            os.close(fd)
    best = float("inf")
    pread = os.pread
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        for p, offs in offsets.items():
            fd = os.open(p, os.O_RDONLY)
            for o in offs:
                pread(fd, 64, o)
            os.close(fd)
        best = min(best, time.perf_counter() - t0)
    return best, sum(len(v) for v in offsets.values())


def chdb_sizes(datadir: str) -> tuple[float, dict] | None:
    """(seconds, sizes) through chdb on a copy of ``datadir``; None without chdb."""
    try:
        import chdb.session  # noqa: F401
    except ImportError:
        return None
    import chdb.session
    tmp = tempfile.mkdtemp(prefix="dbxray_chdb_")
    copy = os.path.join(tmp, "datadir")
    try:
        shutil.copytree(datadir, copy, symlinks=True)     # never open the original with the engine
        t0 = time.perf_counter()
        sess = chdb.session.Session(copy)
        res = sess.query(SQL, "JSONEachRow")
        secs = time.perf_counter() - t0
        txt = res.bytes().decode() if hasattr(res, "bytes") else str(res)
        sess.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    out = {}
    for line in txt.splitlines():
        if line.strip():
            r = json.loads(line)
            out[(r["database"], r["table"], r["part_name"], r["column"])] = (int(r["c"]), int(r["u"]), int(r["m"]))
    return secs, out


_CHDB_PROCESS = """
import sys, chdb.session
s = chdb.session.Session(sys.argv[1])
r = s.query(sys.argv[2], "JSONEachRow")
print(len(r.bytes().decode().splitlines()))
"""
_DBXRAY_PROCESS = """
import sys
sys.path.insert(0, sys.argv[2])
from dbxray.parsers.clickhouse.quick import column_sizes
print(len(column_sizes(sys.argv[1])))
"""


def process_seconds(code: str, *args: str, repeat: int = 3) -> tuple[float, str]:
    """Best wall time of a fresh Python process running ``code`` (start-up included)."""
    best, out = float("inf"), ""
    for _ in range(repeat):
        t0 = time.perf_counter()
        p = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True)
        best = min(best, time.perf_counter() - t0)
        out = p.stdout.strip()
    return best, out


def chdb_process_seconds(datadir: str, repeat: int = 3) -> tuple[float, str] | None:
    """chdb from a fresh process (import, engine start, session, query) on a copy."""
    try:
        import chdb  # noqa: F401
    except ImportError:
        return None
    tmp = tempfile.mkdtemp(prefix="dbxray_chdb_")
    try:
        copy = os.path.join(tmp, "datadir")
        shutil.copytree(datadir, copy, symlinks=True)
        return process_seconds(_CHDB_PROCESS, copy, SQL, repeat=repeat)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datadir", help="an existing ClickHouse data directory")
    ap.add_argument("--make", type=float, metavar="SCALE", help="build a set with make_fixtures.py --scale SCALE")
    ap.add_argument("--out", default="/tmp/dbxray_ch_bench", help="where --make writes (outside the repo)")
    ap.add_argument("--repeat", type=int, default=3, help="dbxray runs (best is reported)")
    args = ap.parse_args(argv)

    datadir = args.datadir
    if args.make:
        out = Path(args.out).resolve()
        if str(out).startswith(str(REPO)):
            print("refusing to build the benchmark set inside the repository", file=sys.stderr)
            return 2
        if not (out / "datadir").is_dir():
            t0 = time.perf_counter()
            subprocess.run([sys.executable, str(MAKE_FIXTURES), "--out", str(out), "--scale", str(args.make),
                            "--workdir", str(out) + ".build"], check=True)
            print(f"built {out} in {time.perf_counter() - t0:.0f} s")
        datadir = str(out / "datadir")
    if not datadir or not os.path.isdir(datadir):
        ap.error("give --datadir or --make")

    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(datadir) for f in fs
               if not os.path.islink(os.path.join(d, f)))
    print(f"data directory: {datadir} ({size / 1e9:.2f} GB)")

    runs = [dbxray_sizes(datadir) for _ in range(max(1, args.repeat))]
    ours = min(r[0] for r in runs)
    mine = runs[0][1]
    print(f"dbxray (checksums.txt + block headers, full scan incl. detection): best {ours:.3f} s "
          f"of {len(runs)}, {len(mine)} part columns")

    qruns = [quick_sizes(datadir) for _ in range(max(1, args.repeat))]
    quick = min(r[0] for r in qruns)
    qmine = qruns[0][1]
    print(f"dbxray sizes path (checksums.txt + block headers only, no detection/marks/JSON): best {quick:.3f} s, "
          f"{len(qmine)} part columns")

    nowalk = min(quick_sizes(datadir, walk=False)[0] for _ in range(max(1, args.repeat)))
    print(f"for reference, checksums.txt alone (no block walk): best {nowalk:.3f} s")
    floor, headers = header_read_floor(datadir, args.repeat)
    print(f"for reference, bare reads of the {headers} block headers (one pread each, offsets known, "
          f"nothing parsed): best {floor:.3f} s")

    ch = chdb_sizes(datadir)
    if ch is None:
        print("chdb is not installed: engine time not measured, no ratio (pip install chdb)")
        return 0
    secs, theirs = ch
    print(f"chdb (open session on a copy + query system.parts_columns): {secs:.3f} s, {len(theirs)} part columns")
    wide = {k: v for k, v in theirs.items() if v != (0, 0, 0)}
    mismatch = [k for k, v in wide.items() if mine.get(k) != v or qmine.get(k) != v]
    missing = [k for k in theirs if k not in mine]
    print(f"figures compared: {len(wide)} non-zero part columns, {len(mismatch)} differ, "
          f"{len(missing)} missing in dbxray")
    for k in mismatch[:5]:
        print("  differs:", k, "dbxray", mine.get(k), "engine", theirs[k])
    print(f"ratio, full scan: dbxray is {secs / ours:.1f}x as fast as chdb")
    print(f"ratio, sizes path: dbxray is {secs / quick:.1f}x as fast as chdb (target >= 20x)")
    print(f"ceiling: checksums.txt alone + bare header reads = {nowalk + floor:.3f} s, "
          f"{secs / (nowalk + floor):.1f}x chdb: the most a walker that reads each header with its own "
          f"system call from Python can reach here")
    cold = chdb_process_seconds(datadir, args.repeat)
    mine_p, n_mine = process_seconds(_DBXRAY_PROCESS, datadir, str(REPO), repeat=args.repeat)
    if cold is not None:
        print(f"fresh processes (interpreter, imports and engine start-up included): chdb {cold[0]:.3f} s "
              f"({cold[1]} rows), dbxray sizes path {mine_p:.3f} s ({n_mine} part columns): "
              f"{cold[0] / mine_p:.1f}x")
    print(f"load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    return 0 if not mismatch and not missing else 1


if __name__ == "__main__":
    sys.exit(main())

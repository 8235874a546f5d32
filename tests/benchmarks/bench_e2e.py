#!/usr/bin/env python3
"""End to end: each user command as a fresh process against its peer, in the same
run, interleaved (a script printing ratios, not a timed test; issue 22).

    .venv/bin/python tests/benchmarks/bench_e2e.py [--work /tmp/dbxray-e2e] [--rounds 5]
        [--sizes 200,2000,20000] [--innodb /tmp/innodb-bench] [--clickhouse /tmp/ch_bench50/datadir]
        [--cold] [--dbxray CMD] [--also LABEL=CMD ...]

What runs, each as its own process, every contender once per round, rounds
interleaved (so a noisy moment costs every contender alike); min and median of the
rounds, and the load average before and after:

* ``dbxray scan DIR --json -o /dev/null`` (the full JSON contract), ``dbxray scan DIR
  --summary -o /dev/null``, against ``innochecksum -S`` (MariaDB's) run on each of the
  same files in one shell loop: on N small tablespaces (N copies of the fixture's
  80 KiB ``t_part#P#pmax.ibd``, 50 to a database folder, made under ``--work``:
  copies, not hard links, since a hard-linked inode is rightly counted once), and
  on the plain 16 KiB files of the InnoDB benchmark set (``make_fixtures.sh 200``,
  ``--innodb``; the 13 files whose pages are neither page-compressed nor
  ROW_FORMAT=COMPRESSED) and on the whole set;
* with ``--cold`` (root: ``echo 3 > /proc/sys/vm/drop_caches`` before every run), the
  same on the plain set with the page cache dropped;
* ``dbxray scan DATADIR --json -o /dev/null``, ``--summary``, the table and ``--json --full`` on the ClickHouse set
  (``make_fixtures.py --scale 50``) against a fresh Python process that opens a chdb
  session on a copy of it and reads ``system.parts_columns`` (bench_clickhouse.py's
  query), when chdb is installed (``--chdb-python``: a Python of a venv that has it);
* ``dbxray whatif`` of the whole InnoDB set with zstd:3 and lz4, a 5% sample against
  ``--sample all`` (issue 22 item 6: ≥ 15x).

``--also wheel=/tmp/wvenv/bin/dbxray`` (``python3 -m venv /tmp/wvenv && /tmp/wvenv/bin/pip
install .``: installed as a user installs it, without the editable install's import finder,
which imports pathlib & co. at every start, ~20 ms) or ``--also bundle=dist/dbxray/dbxray``
(packaging/build.sh) adds that command's ``scan --json`` to the InnoDB sets.

The per-file time of each size shows whether the scan grows faster than the files.
Peak RSS of every dbxray run is printed too (``ru_maxrss`` of the child).  Python
bytecode is written (PYTHONDONTWRITEBYTECODE is unset for the children, as on a
user's machine) and one untimed run of each command comes first.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO.parent / "shared" / "fixtures" / "innodb" / "16k" / "fx" / "t_part#P#pmax.ibd"
DBXRAY = str(Path(sys.executable).with_name("dbxray"))
PER_DB = 50
CH_SQL = ("SELECT database, table, part_name, column, column_data_compressed_bytes AS c, "
          "column_data_uncompressed_bytes AS u, column_marks_bytes AS m FROM system.parts_columns "
          "WHERE active AND database NOT IN ('system', 'INFORMATION_SCHEMA', 'information_schema') "
          "SETTINGS output_format_json_quote_64bit_integers = 0")
CHDB_CODE = ("import sys, chdb.session\ns = chdb.session.Session(sys.argv[1])\n"
             "r = s.query(sys.argv[2], 'JSONEachRow')\nprint(len(r.bytes().decode().splitlines()))\n")

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def make_small_set(root: Path, n: int) -> Path:
    """``n`` copies of the fixture file, 50 to a folder (kept between runs)."""
    out = root / f"small_{n}"
    done = out / ".complete"
    if done.exists():
        return out
    data = FIXTURE.read_bytes()
    for i in range(n):
        d = out / f"db{i // PER_DB:05d}"
        if i % PER_DB == 0:
            d.mkdir(parents=True, exist_ok=True)
        (d / f"t{i:06d}.ibd").write_bytes(data)
    done.write_text(str(n))
    return out


def plain_files(root: Path) -> list[Path]:
    """The set's 16 KiB files that are neither page-compressed nor ROW_FORMAT=COMPRESSED."""
    sys.path.insert(0, str(REPO / "tests" / "benchmarks"))
    from bench_innodb import find_files, is_page_compressed
    return [p for p in find_files(root, 16384) if not is_page_compressed(p)]


def linked_dir(files: list[Path], root: Path, name: str) -> Path:
    """A folder of symbolic links to ``files`` (dbxray scans a folder; the loop reads the files)."""
    out = root / name
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for p in files:
        (out / p.name).symlink_to(p)
    return out


def loop_script(files: list[Path], root: Path, name: str) -> list[str]:
    lst = root / f"{name}.list"
    lst.write_text("".join(f"{p}\n" for p in files))
    return ["bash", "-c", 'while IFS= read -r f; do innochecksum -S "$f"; done < "$1" > /dev/null', "loop", str(lst)]


def drop_caches() -> bool:
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as fh:
            fh.write("3\n")
        return True
    except OSError:
        return False


def run_once(cmd: list[str], cold: bool) -> tuple[float, float]:
    """(seconds, peak RSS MB of the child)."""
    if cold:
        drop_caches()
    with tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=ENV)
        _, status, usage = os.wait4(p.pid, 0)
        secs = time.perf_counter() - t
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            err.seek(0)
            sys.stderr.write(f"  {' '.join(cmd[:3])}...: exit {p.returncode}: "
                             f"{err.read().decode(errors='replace')[-300:]}\n")
    _CPU[tuple(cmd)] = usage.ru_utime + usage.ru_stime
    return secs, usage.ru_maxrss / 1024


#: CPU seconds (user + system, every thread) of each command's last run: on a loaded machine
#: the wall times measure the other work too
_CPU: dict[tuple, float] = {}


def measure(name: str, contenders: dict[str, list[str]], rounds: int, cold: bool = False,
            files: int | None = None) -> dict[str, list[float]]:
    """Every contender once per round, interleaved; prints min / median."""
    for cmd in contenders.values():          # warm-up (and bytecode), untimed
        if not cold:
            run_once(cmd, False)
    times: dict[str, list[float]] = {k: [] for k in contenders}
    rss: dict[str, float] = {}
    cpu: dict[str, list[float]] = {k: [] for k in contenders}
    load0 = os.getloadavg()[0]
    for _ in range(rounds):
        for k, cmd in contenders.items():
            secs, r = run_once(cmd, cold)
            cpu[k].append(_CPU[tuple(cmd)])
            times[k].append(secs)
            rss[k] = max(rss.get(k, 0.0), r)
    load1 = os.getloadavg()[0]
    print(f"\n{name}{' (cold)' if cold else ''}: {rounds} rounds, load average {load0:.2f} -> {load1:.2f}")
    for k, v in times.items():
        per = f", {min(v) / files * 1e3:.3f} ms/file" if files else ""
        mem = f", peak RSS {rss[k]:.0f} MB" if k.startswith("dbxray") and rss.get(k) else ""
        print(f"  {k:28s} min {min(v):7.3f} s  median {statistics.median(v):7.3f} s{per}{mem}; "
              f"CPU min {min(cpu[k]):.3f} s median {statistics.median(cpu[k]):.3f} s")
    peers = [k for k in times if not k.startswith("dbxray")]
    for k in times:
        if k.startswith("dbxray"):
            for peer in peers:
                print(f"  ratio {peer} / {k}: min {min(times[peer]) / min(times[k]):.2f}x, "
                      f"median {statistics.median(times[peer]) / statistics.median(times[k]):.2f}x; "
                      f"CPU min {min(cpu[peer]) / max(min(cpu[k]), 1e-9):.2f}x")
    return times


#: more dbxray commands whose ``scan --json`` runs beside the default one (``--also``)
ALSO: dict[str, str] = {}


def innodb_contenders(target: Path, files: list[Path], work: Path, name: str) -> dict[str, list[str]]:
    also = {f"dbxray scan --json ({label})": [cmd, "scan", str(target), "--json", "-o", "/dev/null", "--no-progress"]
            for label, cmd in ALSO.items()}
    return {**also,
        "dbxray scan --json": [DBXRAY, "scan", str(target), "--json", "-o", "/dev/null", "--no-progress"],
        "dbxray scan --json --full": [DBXRAY, "scan", str(target), "--json", "--full", "-o", "/dev/null",
                                      "--no-progress"],
        "dbxray scan --summary": [DBXRAY, "scan", str(target), "--summary", "-o", "/dev/null", "--no-progress"],
        "innochecksum -S loop": loop_script(files, work, name),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "dbxray-e2e"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--sizes", default="200,2000,20000")
    ap.add_argument("--innodb", default="/tmp/innodb-bench", help="make_fixtures.sh 200 set")
    ap.add_argument("--clickhouse", default="/tmp/ch_bench50/datadir", help="make_fixtures.py --scale 50 data dir")
    ap.add_argument("--cold", action="store_true", help="also cold runs (root: drops the page cache)")
    ap.add_argument("--dbxray", default=None, help="the dbxray command measured (default: the one beside "
                    "this Python)")
    ap.add_argument("--also", action="append", default=[], metavar="LABEL=CMD",
                    help="another dbxray command whose `scan --json` runs beside it on the InnoDB sets: "
                    "a wheel installed in a venv as a user has it (no editable finder), the bundle "
                    "dist/dbxray/dbxray")
    ap.add_argument("--only", default="", help="comma list of parts: small,plain,whole,clickhouse,whatif")
    ap.add_argument("--chdb-python", default=None,
                    help="a Python that has chdb (e.g. a venv of its own); default: this one")
    ap.add_argument("--whatif-rounds", type=int, default=None,
                    help="rounds of the what-if part (default --rounds; --sample all takes minutes)")
    a = ap.parse_args(argv)
    global DBXRAY
    if a.dbxray:
        DBXRAY = a.dbxray
    for item in a.also:
        label, _, cmd = item.partition("=")
        if not cmd:
            ap.error(f"--also {item}: LABEL=CMD")
        ALSO[label] = cmd
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    only = set(filter(None, a.only.split(",")))
    have_ic = shutil.which("innochecksum") is not None
    print(f"dbxray: {DBXRAY}; cores {os.cpu_count()}; innochecksum {'found' if have_ic else 'missing'}")

    if not only or "small" in only:
        for n in [int(x) for x in a.sizes.split(",") if x]:
            d = make_small_set(work, n)
            files = sorted(d.rglob("*.ibd"))
            c = innodb_contenders(d, files, work, f"small_{n}")
            if not have_ic:
                c.pop("innochecksum -S loop")
            measure(f"{n} small tablespaces (80 KiB each)", c, a.rounds, files=n)

    bench = Path(a.innodb)
    if bench.is_dir() and (not only or "plain" in only or "whole" in only):
        plain = plain_files(bench)
        if not only or "plain" in only:
            d = linked_dir(plain, work, "plain16k")
            c = innodb_contenders(d, plain, work, "plain16k")
            if not have_ic:
                c.pop("innochecksum -S loop")
            measure(f"plain 16k set: {len(plain)} files, {sum(p.stat().st_size for p in plain) / 1e9:.2f} GB",
                    c, a.rounds, files=len(plain))
            if a.cold:
                if drop_caches():
                    measure("plain 16k set", c, a.rounds, cold=True, files=len(plain))
                else:
                    print("\ncold runs need root (/proc/sys/vm/drop_caches): skipped")
        if not only or "whole" in only:
            whole = sorted(bench.rglob("*.ibd"))
            c = innodb_contenders(bench, whole, work, "whole")
            if not have_ic:
                c.pop("innochecksum -S loop")
            measure(f"whole InnoDB set: {len(whole)} files, {sum(p.stat().st_size for p in whole) / 1e9:.2f} GB",
                    c, a.rounds, files=len(whole))
    elif not only or "plain" in only:
        print(f"\n{bench}: not found (make it: ../shared/fixtures/innodb/make_fixtures.sh 200 {bench})")

    ch = Path(a.clickhouse)
    if ch.is_dir() and (not only or "clickhouse" in only):
        c = {
            "dbxray scan --json": [DBXRAY, "scan", str(ch), "--json", "-o", "/dev/null", "--no-progress"],
            "dbxray scan --summary": [DBXRAY, "scan", str(ch), "--summary", "-o", "/dev/null", "--no-progress"],
            "dbxray scan (table)": [DBXRAY, "scan", str(ch), "--no-progress"],
            # every block header walked and every block checksum verified (the default before issue 22 item 8)
            "dbxray scan --json --full": [DBXRAY, "scan", str(ch), "--json", "--full", "-o", "/dev/null",
                                          "--no-progress"],
        }
        tmp = None
        chdb_python = a.chdb_python or sys.executable
        if subprocess.run([chdb_python, "-c", "import chdb"], capture_output=True).returncode != 0:
            print(f"\nchdb is not installed for {chdb_python}: ClickHouse peer not run (pip install chdb, "
                  f"or --chdb-python a venv's python that has it)")
        else:
            tmp = tempfile.mkdtemp(prefix="dbxray_chdb_")
            copy = os.path.join(tmp, "datadir")
            shutil.copytree(ch, copy, symlinks=True)        # never open the original with the engine
            c["chdb system.parts_columns"] = [chdb_python, "-c", CHDB_CODE, copy, CH_SQL]
        try:
            n = sum(1 for _ in ch.rglob("*") if _.is_file())
            measure(f"ClickHouse data dir: {n} files", c, a.rounds)
        finally:
            if tmp:
                shutil.rmtree(tmp, ignore_errors=True)

    if bench.is_dir() and (not only or "whatif" in only):
        # issue 22 item 6: a 5% sample against every unit, the same codecs, each a fresh process
        # (detection and the scan included, as the user runs it)
        codecs = ["--codec", "zstd:3", "--codec", "lz4"]
        c = {
            "dbxray whatif 5%": [DBXRAY, "whatif", str(bench), *codecs, "--sample", "0.05", "--json", "-o",
                                 "/dev/null", "--no-progress", "--no-raw"],
            "whatif --sample all": [DBXRAY, "whatif", str(bench), *codecs, "--sample", "all", "--json", "-o",
                                    "/dev/null", "--no-progress", "--no-raw"],
        }
        whole = sorted(bench.rglob("*.ibd"))
        measure(f"what-if zstd:3 + lz4 on the whole InnoDB set ({len(whole)} files, "
                f"{sum(p.stat().st_size for p in whole) / 1e9:.2f} GB): 5% sample vs every unit", c,
                a.whatif_rounds or a.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Header facts of 10,000 MyISAM / Aria tables (issue 19, Speed): TABLE_ROWS,
DATA_LENGTH, INDEX_LENGTH, DATA_FREE of each table from its index file's state, and the
whole scan of the same folder.

    .venv/bin/python tests/benchmarks/bench_myisam_aria.py [--tables 10000] [--myisam-share 0.2]
                                                          [--dir DIR] [--repeat N] [--keep]

The set is made of copies (not hard links: a hard-linked inode is rightly counted once)
of the MariaDB fixture's small table files: Aria tables cycled over ``mysql.*`` and
``misc.aria_*``, MyISAM tables copies of ``misc.myisam_fixed``, 100 tables a database
folder.  Timed warm (one untimed pass first), best of ``--repeat``:

* header facts: open each ``.MYI`` / ``.MAI``, read its header, parse the state and base
  (parsers/myisam/state.py, parsers/aria/state.py) and run the engines' own sanity
  checks (check_header): what SHOW TABLE STATUS would say for every table;
* full scan: ``dbxray.parsers.scan.scan`` of the folder: every file's holes and
  filesystem facts, every key block, every data page with its CRC, every row counted.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO))
FIXTURES = Path(os.environ.get("DBXRAY_FIXTURES") or REPO.parent / "shared" / "fixtures")

from dbxray.parsers.aria import state as aria_state  # noqa: E402
from dbxray.parsers.myisam import state as myisam_state  # noqa: E402
from dbxray.parsers.scan import scan  # noqa: E402

HEAD_READ = 1 << 16         # header_length is a 2-byte field: the whole header is in the first 64 KiB


def make_set(root: Path, tables: int, myisam_share: float) -> tuple[int, int, int]:
    src = FIXTURES / "mariadb" / "datadir"
    aria = sorted(p.with_suffix("") for p in list((src / "mysql").glob("*.MAI")) + list((src / "misc").glob("aria_*.MAI")))
    my = src / "misc" / "myisam_fixed"
    n_my = int(round(tables * myisam_share))
    total = 0
    for i in range(tables):
        d = root / f"db{i // 100:03d}"
        if i % 100 == 0:
            d.mkdir(parents=True, exist_ok=True)
        if i < n_my:
            base, exts = my, (".MYI", ".MYD")
        else:
            base, exts = aria[i % len(aria)], (".MAI", ".MAD")
        for ext in exts:
            dst = d / f"t{i:05d}{ext}"
            shutil.copyfile(str(base) + ext, dst)          # a real copy: its own inode and blocks
            total += dst.stat().st_size
    return n_my, tables - n_my, total


def header_facts(root: Path) -> list[tuple]:
    out = []
    for dirpath, _dirs, names in os.walk(root):
        for n in names:
            if n.endswith(".MYI"):
                mod = myisam_state
            elif n.endswith(".MAI"):
                mod = aria_state
            else:
                continue
            p = os.path.join(dirpath, n)
            fd = os.open(p, os.O_RDONLY)
            try:
                buf = os.pread(fd, HEAD_READ, 0)
                size = os.fstat(fd).st_size
            finally:
                os.close(fd)
            h = mod.read_header(buf)
            problems = mod.check_header(h, size)
            out.append((p, h.records, h.data_file_length, h.key_file_length, h.empty, len(problems)))
    return out


def best(fn, repeat: int):
    fn()                                                      # warm: page cache and imports
    times = []
    res = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        res = fn()
        times.append(time.perf_counter() - t0)
    return min(times), res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tables", type=int, default=10_000)
    ap.add_argument("--myisam-share", type=float, default=0.2)
    ap.add_argument("--dir", help="where to make the set (default: a temp dir, removed after)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args(argv)
    if not (FIXTURES / "mariadb" / "datadir").is_dir():
        print(f"no MariaDB fixture under {FIXTURES}: skipped")
        return 0
    root = Path(args.dir or tempfile.mkdtemp(prefix="myi_bench_"))
    try:
        t0 = time.perf_counter()
        n_my, n_aria, total = make_set(root, args.tables, args.myisam_share)
        print(f"== MyISAM/Aria header facts: {args.tables:,} tables ({n_my:,} MyISAM, {n_aria:,} Aria), "
              f"{2 * args.tables:,} files, {total / 1e6:.0f} MB, copies made in {time.perf_counter() - t0:.1f} s")
        th, facts = best(lambda: header_facts(root), args.repeat)
        bad = sum(1 for f in facts if f[5])
        assert len(facts) == args.tables, len(facts)
        print(f"header facts (TABLE_ROWS, DATA_LENGTH, INDEX_LENGTH, DATA_FREE + sanity checks): {th:.3f} s "
              f"for {len(facts):,} tables = {th / len(facts) * 1e6:.0f} us a table; {bad} with problems "
              f"(target: a few seconds)")
        ts, ds = best(lambda: scan(str(root)), max(1, min(args.repeat, 2)))
        tables = [t for t in ds.tables if t.engine in ("myisam", "aria")]
        errs = sum(len(f.errors) for f in ds.files)
        print(f"full scan (fs facts, key blocks, pages with CRCs, rows): {ts:.2f} s for {len(tables):,} tables, "
              f"{len(ds.files):,} files, {errs} errors = {ts / th:.1f}x the header facts")
    finally:
        if not args.keep and not args.dir:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

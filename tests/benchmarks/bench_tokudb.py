#!/usr/bin/env python3
"""Benchmark: per-height disk and uncompressed sizes of the TokuDB fixture
dictionaries (what ``tokuftdump --summary`` prints), read by dbxray from the
header, the translation table and the node / sub-block headers only.

    .venv/bin/python tests/benchmarks/bench_tokudb.py [--datadir DIR] [--repeat N]

It prints, for the same files:

* dbxray's time (best of N) for the per-height figures, with and without
  sub-block checksum verification, and for a whole ``dbxray scan`` of the dir;
* the engine's reference: ``tokuftdump --summary``, which decompresses every
  node, took 1.24 s for the 9 fixture dictionaries (22 MB) on a 2-core machine
  of this kind (issue 5; tokuftdump is not installed here, so it is not rerun);
* a full decompress-everything pass in this same process (every node-info and
  partition sub-block decoded with its codec, QuickLZ in pure Python), i.e.
  what reading the payloads would cost dbxray;
* the ratios, and whether dbxray's figures equal the manifest's.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from dbxray.parsers.fileio import ReadOnlyFile  # noqa: E402
from dbxray.parsers.model import ScanContext  # noqa: E402
from dbxray.parsers.scan import scan  # noqa: E402
from dbxray.parsers.tokudb.content import read_partition  # noqa: E402
from dbxray.parsers.tokudb.ftfile import read_ft_file  # noqa: E402
from dbxray.parsers.tokudb.scan import per_height  # noqa: E402

TOKUFTDUMP_SUMMARY_SECONDS = 1.24       # issue 5: tokuftdump --summary, 9 dictionaries, 2 cores
TARGET = 20.0
FIXTURES = REPO.parent / "shared" / "fixtures" / "tokudb"


def dictionaries(datadir: Path) -> list[Path]:
    return sorted(p for p in datadir.glob("*.tokudb"))


def per_height_pass(files: list[Path], verify: bool) -> dict[str, dict]:
    out = {}
    for p in files:
        with ReadOnlyFile(str(p)) as f:
            f.advise_random()
            ft = read_ft_file(f.mmap(), f.size, verify=verify, entries=True)
            out[p.name] = {h: (v["nodes"], v["disk_bytes"], v["uncompressed_bytes"])
                           for h, v in per_height(ft).items()}
    return out


def full_decompress_pass(files: list[Path]) -> int:
    total = 0
    for p in files:
        with ReadOnlyFile(str(p)) as f:
            mm = f.mmap()
            ft = read_ft_file(mm, f.size, verify=True, entries=False)
            for n in ft.nodes.values():
                for sb in [n.node_info] + [q.sub_block for q in n.partitions]:
                    total += len(read_partition(mm, sb))
    return total


def best(fn, repeat: int) -> tuple[float, object]:
    t_best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        t_best = min(t_best, time.perf_counter() - t0)
    return t_best, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datadir", default=str(FIXTURES / "datadir"))
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    datadir = Path(args.datadir)
    files = dictionaries(datadir)
    mb = sum(p.stat().st_size for p in files) / 1e6
    print(f"{len(files)} dictionaries, {mb:.1f} MB in {datadir}")

    t_fast, sizes = best(lambda: per_height_pass(files, verify=False), args.repeat)
    t_verify, _ = best(lambda: per_height_pass(files, verify=True), args.repeat)
    t_scan, _ = best(lambda: scan(str(datadir), ScanContext(verify_checksums=False)), args.repeat)
    t_full, nbytes = best(lambda: full_decompress_pass(files), max(1, args.repeat // 2))

    ok = None
    man = FIXTURES / "manifest.json"
    if man.is_file() and datadir.resolve() == (FIXTURES / "datadir").resolve():
        m = json.loads(man.read_text())
        want = {f["path"].rsplit("/", 1)[-1]: {int(h): (v["nodes"], v["disksize"], v["uncompressed_size"])
                                               for h, v in f["tokuftdump_summary"]["per_height"].items()}
                for f in m["files"] if "final_logical_content" in f}
        ok = sizes == want

    print(f"dbxray per-height sizes (headers only)        : {t_fast * 1000:8.1f} ms")
    print(f"dbxray per-height sizes + sub-block checksums : {t_verify * 1000:8.1f} ms")
    print(f"dbxray scan of the whole data dir             : {t_scan * 1000:8.1f} ms")
    print(f"tokuftdump --summary (recorded, issue 5)      : {TOKUFTDUMP_SUMMARY_SECONDS * 1000:8.1f} ms")
    print(f"full decompress pass, same process            : {t_full * 1000:8.1f} ms "
          f"({nbytes / 1e6:.1f} MB decoded)")
    r_dump = TOKUFTDUMP_SUMMARY_SECONDS / t_fast
    r_full = t_full / t_fast
    print(f"ratio vs tokuftdump --summary : {r_dump:6.1f}x  (with checksums {TOKUFTDUMP_SUMMARY_SECONDS / t_verify:.1f}x)"
          f"  target >= {TARGET:.0f}x: {'met' if r_dump >= TARGET else 'NOT met'}")
    print(f"ratio vs full decompress pass : {r_full:6.1f}x")
    if ok is not None:
        print(f"per-height figures equal the manifest's tokuftdump --summary: {ok}")
    return 0 if ok in (None, True) else 1


if __name__ == "__main__":
    sys.exit(main())

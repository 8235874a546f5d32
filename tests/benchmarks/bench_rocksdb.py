#!/usr/bin/env python3
"""Benchmark (issue 18): per-file facts of every SST in a RocksDB directory (footer,
properties, index: no data block read) against ``sst_dump --show_properties`` over the
same files, and the what-if on a 5% sample against ``--sample all``.  A script, not a
timed test; it prints ratios against the peer run in the same command on the same files.

With no ``--dir``, a set is written first by a real RocksDB (rocksdict, bundled RocksDB
9/10) with format_version 5 (which the stock ``sst_dump`` 7.8 reads): ``--mb`` MiB of
key/value text in ``--files``-sized SSTs over several levels (compression_per_level
none, none, lz4, lz4, zstd...).  For MyRocks files pass ``--sst-dump`` the fixture's
``tools/myrocks_sst_dump`` (stock sst_dump aborts on the MyRocks comparators).

    .venv/bin/python tests/benchmarks/bench_rocksdb.py [--dir D] [--mb 256] [--repeat 5]

The issue's MyRocks set is the fixture's make script at a larger scale (a private mariadbd; never
committed): ``python3 ../shared/fixtures/mariadb/make.py --variant B --seed 20261207 --scale 30
--out /tmp/mdb30 --scratch /tmp/mdb30s gen init start load stop copy``, then ``--dir
'/tmp/mdb30/datadir/#rocksdb' --sst-dump ../shared/fixtures/mariadb/tools/myrocks_sst_dump`` (build
that helper from its .cc as the fixture README says).
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from dbxray.parsers.fileio import ReadOnlyFile        # noqa: E402
from dbxray.parsers.rocksdb.sst import read_sst       # noqa: E402

WORDS = [w.strip() for w in "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi "
         "rho sigma tau upsilon phi chi psi omega order customer status shipped pending returned".split()]


def make_set(path: Path, mb: int, file_mb: int) -> None:
    import rocksdict as R
    if path.exists():
        shutil.rmtree(path)
    o = R.Options(raw_mode=True)
    o.create_if_missing(True)
    b = R.BlockBasedOptions()
    b.set_format_version(5)
    b.set_block_size(8192)
    o.set_block_based_table_factory(b)
    o.set_target_file_size_base(file_mb << 20)
    o.set_max_bytes_for_level_base(4 * file_mb << 20)
    o.set_write_buffer_size(file_mb << 20)
    t = R.DBCompressionType
    o.set_compression_per_level([t.none(), t.none(), t.lz4(), t.lz4(), t.zstd(), t.zstd(), t.zstd()])
    db = R.Rdict(str(path), o)
    rnd = random.Random(7)
    written = 0
    i = 0
    while written < mb << 20:
        key = b"%012d" % rnd.randrange(10 ** 12)
        val = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(4, 40))).encode() + b"%d" % i
        db[key] = val
        written += len(key) + len(val)
        i += 1
    db.flush()
    db.close()


def time_ours(ssts: list[str]) -> float:
    t0 = time.perf_counter()
    for p in ssts:
        with ReadOnlyFile(p) as f:
            s = read_sst(f, p, f.size, verify_checksums=False)
            assert s.props is not None and not s.errors, (p, s.errors)
    return time.perf_counter() - t0


def time_peer(sst_dump: str, d: str) -> float:
    t0 = time.perf_counter()
    r = subprocess.run([sst_dump, f"--file={d}", "--show_properties"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"{sst_dump} failed: {r.stderr.decode()[-500:]}")
    return dt


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", help="a RocksDB directory (default: write one under /tmp)")
    ap.add_argument("--mb", type=int, default=256, help="MiB of keys and values to write (no --dir)")
    ap.add_argument("--file-mb", type=int, default=4, help="target SST size in MiB (no --dir)")
    ap.add_argument("--sst-dump", default=shutil.which("sst_dump") or "sst_dump")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-whatif", action="store_true")
    a = ap.parse_args()
    d = Path(a.dir) if a.dir else Path("/tmp/dbxray-bench-rocksdb")
    if not a.dir and not (d / "CURRENT").exists():
        print(f"writing {a.mb} MiB through RocksDB into {d} ...", flush=True)
        make_set(d, a.mb, a.file_mb)
    ssts = sorted(str(p) for p in d.glob("*.sst"))
    size = sum(os.path.getsize(p) for p in ssts)
    print(f"{len(ssts)} SST files, {size / 2**20:.1f} MiB in {d}")
    for p in ssts:                                   # warm the page cache for both
        with open(p, "rb") as fh:
            while fh.read(1 << 20):
                pass
    ours, peer = [], []
    for _ in range(a.repeat):                        # interleaved runs
        peer.append(time_peer(a.sst_dump, str(d)))
        ours.append(time_ours(ssts))
    mo, mp = statistics.median(ours), statistics.median(peer)
    print(f"per-file facts (footer, properties, index; every SST): dbxray {mo:.3f} s, "
          f"{a.sst_dump} --show_properties {mp:.3f} s: dbxray {mp / mo:.2f}x faster (target >= 2x)")
    if not a.no_whatif:
        from dbxray.compress.whatif import run_whatif
        from dbxray.parsers.model import ScanContext
        from dbxray.parsers.scan import scan
        ds = scan(str(d), ScanContext(verify_checksums=False))
        codecs = ["none", "snappy", "lz4", "zstd:3", "zlib:6"]
        t0 = time.perf_counter()
        s5 = run_whatif(ds, codecs, sample="0.05", seed=1, raw_models=False)
        t5 = time.perf_counter() - t0
        t0 = time.perf_counter()
        sa = run_whatif(ds, codecs, sample="all", raw_models=False)
        ta = time.perf_counter() - t0
        inside = total = 0
        for t in sa["targets"]:
            if t["engine"] != "rocksdb":
                continue
            t5r = next(x for x in s5["targets"] if x["target"] == t["target"])
            for r in t["results"]:
                r5 = next(x for x in t5r["results"] if x["codec"] == r["codec"] and x["model"] == r["model"])
                total += 1
                inside += r5["ci95"][0] <= r["projected_bytes"] <= r5["ci95"][1]
        print(f"what-if ({len(codecs)} codecs): 5% sample {t5:.2f} s, --sample all {ta:.2f} s: "
              f"{ta / t5:.1f}x faster (target >= 10x); the full result inside the 5% interval in "
              f"{inside} of {total} (level, codec) results")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

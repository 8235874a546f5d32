"""Benchmark and validation of the what-if layer (issue 6, "Speed" and "Checked against reality").

    .venv/bin/python tests/benchmarks/bench_whatif.py                     # generated sets under /tmp
    .venv/bin/python tests/benchmarks/bench_whatif.py --innodb DIR --clickhouse DIR
    .venv/bin/python tests/benchmarks/bench_whatif.py --validate-only

Speed: for each data set, the time of ``whatif --sample 0.05`` against
``--sample all`` (target: >= 15x faster, with every full result inside the
sampled 95% interval), and the full re-encode throughput against Debian's
``zstd -b`` / ``lz4 -b`` on the same decoded units, same levels, same block
size (target: within 1.2x).  The issue's sets are made with
``../shared/fixtures/innodb/make_fixtures.sh 200 DIR`` (1.7 GB, needs
MariaDB) and ``../shared/fixtures/clickhouse/make_fixtures.py --scale 50``
(needs chdb); without them this script makes an InnoDB set by copying the
fixture tablespaces N times under /tmp (real MariaDB pages) and uses the
ClickHouse fixture data directory.  Nothing is written outside /tmp.

Validation: prints the comparisons the tests check (InnoDB twins vs
ALLOCATED_SIZE, ClickHouse columns vs column_data_compressed_bytes, the
seed_nq codec table, TokuDB dictionaries vs their own sizes).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from dbxray.compress.registry import parse_codec  # noqa: E402
from dbxray.compress.speed import measure, workers  # noqa: E402
from dbxray.compress.whatif import result_for, run_whatif, targets_by_name  # noqa: E402
from dbxray.parsers.scan import scan  # noqa: E402

FIXTURES = REPO.parent / "shared" / "fixtures"
WORK = Path("/tmp/dbxray_bench")


def make_innodb_set(copies: int) -> Path:
    """Real MariaDB tablespaces (the 16k plain fixtures) copied ``copies`` times under /tmp."""
    out = WORK / f"innodb_x{copies}"
    if out.exists():
        return out
    src = sorted(p for p in (FIXTURES / "innodb" / "16k" / "fx").glob("t_*.ibd")
                 if "t_pc" not in p.name and "zip" not in p.name)
    for k in range(copies):
        d = out / f"db{k:03d}"
        d.mkdir(parents=True, exist_ok=True)
        for p in src:
            shutil.copyfile(p, d / p.name)
    return out


def clickhouse_set() -> Path:
    out = WORK / "clickhouse"
    if not out.exists():
        shutil.copytree(FIXTURES / "clickhouse" / "datadir", out, symlinks=True)
    return out


def _full_inside(sampled: dict, full: dict) -> tuple[int, int]:
    st = targets_by_name(sampled)
    inside = total = 0
    for t in full["targets"]:
        s = st.get(t["target"])
        if s is None:
            continue
        for r in t["results"]:
            q = result_for(s, r["codec"], r["model"])
            if q is None:
                continue
            total += 1
            inside += q["ci95"][0] <= r["projected_bytes"] <= q["ci95"][1]
    return inside, total


def _cli_speed(tool: str, level: int, path: Path, block: int) -> tuple[float, float] | None:
    """(compress, decompress) MB/s of ``tool -b<level> -i1 -B<block> path``, None without the CLI."""
    exe = shutil.which(tool)
    if exe is None:
        return None
    cmd = [exe, f"-b{level}", "-i1", f"-B{block}", str(path)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout + out.stderr).replace("\r", "\n")
    hits = re.findall(r"\),\s*([\d.]+) MB/s\s*,\s*([\d.]+) MB/s", text)
    if not hits:
        return None
    c, d = hits[-1]
    return float(c), float(d)


def _payloads(ds, limit: int) -> tuple[list[bytes], int]:
    """Decoded units of the data set (up to ``limit`` bytes) and their usual size (the size
    that holds the most bytes: the CLI's ``-B``; on the small fixture set most ClickHouse
    blocks are a few dozen bytes, but the bytes are in 64 KiB ones)."""
    import importlib
    out, total, sizes = [], 0, Counter()
    for e in ds.files:
        if e.units is None or e.engine is None:
            continue
        try:
            mod = importlib.import_module(f"parsers.{e.engine}.payloads")
        except ModuleNotFoundError:
            continue
        for i in range(len(e.units)):
            try:
                p = mod.unit_payload(e, i)
            except Exception:       # noqa: BLE001 -- a bad unit is skipped in a benchmark
                continue
            out.append(p)
            sizes[len(p)] += len(p)
            total += len(p)
            if total >= limit:
                return out, sizes.most_common(1)[0][0]
    return out, (sizes.most_common(1)[0][0] if sizes else 0)


def bench_set(name: str, path: Path, codecs: list[str], fraction: str, throughput_limit: int) -> dict:
    print(f"\n== {name}: {path}")
    t0 = time.perf_counter()
    ds = scan(str(path))
    t_scan = time.perf_counter() - t0
    print(f"scan: {t_scan:.2f} s, {len(ds.files)} files, {ds.apparent_bytes / 1e6:.1f} MB")
    kw = dict(raw_models=False, larger_pages=False)
    t0 = time.perf_counter()
    sampled = run_whatif(ds, codecs, sample=fraction, **kw)
    t_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    full = run_whatif(ds, codecs, sample="all", **kw)
    t_a = time.perf_counter() - t0
    inside, total = _full_inside(sampled, full)
    ratio = t_a / t_s if t_s else float("inf")
    print(f"whatif --sample {fraction}: {t_s:.2f} s ({sampled['sample']['units_sampled']} of "
          f"{sampled['sample']['units_total']} units); --sample all: {t_a:.2f} s")
    print(f"  speed-up {ratio:.1f}x (target >= 15x): {'OK' if ratio >= 15 else 'BELOW TARGET'}")
    print(f"  full result inside the sampled 95% CI: {inside} of {total} "
          f"({'OK' if inside == total else 'some outside'})")
    # throughput of the codecs on the decoded units, against the Debian CLI on the same bytes
    payloads, unit = _payloads(ds, throughput_limit)
    if payloads:
        throughput(name, payloads, unit)
    return {"speedup": ratio}


#: (registry codec, CLI, CLI level): the CLI's level 1 of lz4 is LZ4_compress_default, as ours
THROUGHPUT_CODECS = (("zstd:1", "zstd", 1), ("zstd:3", "zstd", 3), ("lz4", "lz4", 1))


def _load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def throughput(name: str, payloads: list[bytes], unit: int, repeats: int = 3, max_seconds: float = 5.0,
               codecs=THROUGHPUT_CODECS) -> list[dict]:
    """Our codecs against ``zstd -b`` / ``lz4 -b`` on the same bytes, level and block size.

    The decoded units are written to one file; the CLI cuts it into ``-B<unit>``
    blocks and we measure the very same blocks (and, for information, the
    units as the what-if re-encodes them).  Each side is run ``repeats``
    times, interleaved, and the best figure of each is kept (the machine is
    shared: the CLI's ``-i1`` is itself the best of its loops over one
    second, and ``measure`` the best of its passes).  Ratios are CLI / ours:
    at most 1.2 is the target, below 1 means we are faster.
    """
    blob = WORK / f"{name}_units.bin"
    with open(blob, "wb") as fh:
        for p in payloads:
            fh.write(p)
    data = blob.read_bytes()
    blocks = [data[i:i + unit] for i in range(0, len(data), unit)]
    n = workers()
    print(f"throughput on {len(data) / 1e6:.1f} MB of decoded units, cut in the CLI's {unit} B blocks "
          f"({len(blocks)} blocks; the units themselves: {len(payloads)}), best of {repeats} interleaved runs, "
          f"compress / decompress MB/s (MB = 1e6 B); ours: passes on {n} threads and on 1, the faster:")
    rows = []
    try:
        for cname, tool, level in codecs:
            c = parse_codec(cname)
            best = {"ours": [0.0, 0.0], "one": [0.0, 0.0], "units": [0.0, 0.0], "cli": [0.0, 0.0]}
            par, used, loads = 0.0, [n, n], [_load()]
            for _ in range(repeats):
                cli = _cli_speed(tool, level, blob, unit)
                runs = {"ours": measure(c, blocks, max_bytes=len(data), max_seconds=max_seconds),
                        "one": measure(c, blocks, max_bytes=len(data), max_seconds=max_seconds, threads=1),
                        "units": measure(c, payloads, max_bytes=len(data), max_seconds=max_seconds)}
                for k, s in runs.items():
                    if k == "ours" and s.compress_mb_s > best[k][0]:
                        par, used[0] = s.parallelism, s.best_threads[0]
                    if k == "ours" and s.decompress_mb_s > best[k][1]:
                        used[1] = s.best_threads[1]
                    best[k] = [max(best[k][0], s.compress_mb_s), max(best[k][1], s.decompress_mb_s)]
                if cli is not None:
                    best["cli"] = [max(best["cli"][0], cli[0]), max(best["cli"][1], cli[1])]
                loads.append(_load())
            o, one, u, k = best["ours"], best["one"], best["units"], best["cli"]
            row = {"codec": cname, "cli": f"{tool} -b{level} -B{unit}", "ours": o, "one_thread": one,
                   "units": u, "peer": k, "parallelism": par, "threads_used": tuple(used),
                   "load": (min(loads), max(loads))}
            rows.append(row)
            if not k[0]:
                print(f"  {cname}: ours {o[0]:.0f} / {o[1]:.0f} MB/s; {tool} -b not available")
                continue
            rc, rd, r1 = k[0] / o[0], k[1] / o[1], k[0] / one[0]
            print(f"  {cname:7s} {tool} -b{level} -B{unit}: {k[0]:6.0f} / {k[1]:6.0f} MB/s | ours "
                  f"{o[0]:6.0f} / {o[1]:6.0f} (fastest on {used[0]} / {used[1]} threads; threads busy at once "
                  f"in it: {par:.2f}) | 1 thread only {one[0]:6.0f} / {one[1]:6.0f} | units {u[0]:6.0f} / {u[1]:6.0f}")
            print(f"          {tool}/ours compress {rc:.2f} (1 thread {r1:.2f}), decompress {rd:.2f}; "
                  f"target <= 1.2: {'OK' if rc <= 1.2 else 'ABOVE'}; load average {min(loads):.2f}-{max(loads):.2f}")
    finally:
        blob.unlink(missing_ok=True)
    return rows


TWINS = {"t_pc_zlib": "zlib:6", "t_pc_lz4": "lz4", "t_pc_lzma": "lzma:6", "t_pc_bzip2": "bzip2:1",
         "t_pc_snappy": "snappy", "t_pc_zlib_l9": "zlib:9"}


def validate_innodb_set(root: Path, fraction: str) -> None:
    """On a make_fixtures.sh set: t_dynamic projected (sampled and whole) vs its twins' ALLOCATED_SIZE."""
    man_path = root / "manifest.json"
    src = root / "16k" / "fx" / "t_dynamic.ibd"
    if not man_path.exists() or not src.exists():
        return
    man = json.loads(man_path.read_text())
    alloc = {f["path"]: f["information_schema"]["INNODB_SYS_TABLESPACES"]["ALLOCATED_SIZE"]
             for f in man["files"] if (f.get("information_schema") or {}).get("INNODB_SYS_TABLESPACES")}
    ds = scan(str(src))
    print(f"\n== {src}: projection vs the twins' ALLOCATED_SIZE (target: within 3%)")
    for sample in (fraction, "all"):
        t0 = time.perf_counter()
        res = run_whatif(ds, list(TWINS.values()), sample=sample, filesystem="ext4", raw_models=False,
                         larger_pages=False)
        dt = time.perf_counter() - t0
        t = res["targets"][0]
        print(f"  --sample {sample}: {dt:.2f} s, {res['sample']['units_sampled']} of {res['sample']['units_total']} pages")
        for twin, codec in TWINS.items():
            real = alloc.get(f"16k/fx/{twin}.ibd")
            r = result_for(t, codec, "innodb_page_compressed")
            if real is None or r is None:
                continue
            lo, hi = r["ci95"]
            print(f"    {codec:8s} {r['projected_bytes']:>11d} [{lo}..{hi}] vs {real:>11d} "
                  f"{(r['projected_bytes'] - real) / real:+.2%}  real inside CI: {lo <= real <= hi}")


# ---------------------------------------------------------------------------
def validate(tmp: Path) -> None:
    print("\n== validation against the engines' own numbers")
    if not FIXTURES.exists():
        print("fixtures not found")
        return
    work = tmp / "validate"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    sys.path.insert(0, str(REPO / "tests"))
    from fixtures_util import make_sparse_copy
    fx = make_sparse_copy(work)
    # InnoDB twins
    man = json.loads((FIXTURES / "innodb" / "manifest.json").read_text())
    alloc = {f["path"]: f["information_schema"]["INNODB_SYS_TABLESPACES"]["ALLOCATED_SIZE"]
             for f in man["files"] if (f.get("information_schema") or {}).get("INNODB_SYS_TABLESPACES")}
    twins = {"t_pc_zlib": "zlib:6", "t_pc_lz4": "lz4", "t_pc_lzma": "lzma:6", "t_pc_bzip2": "bzip2:1",
             "t_pc_snappy": "snappy", "t_pc_zlib_l9": "zlib:9"}
    ds = scan(str(fx / "innodb" / "16k" / "fx" / "t_dynamic.ibd"))
    res = run_whatif(ds, list(twins.values()), sample="all", filesystem="ext4", raw_models=False, larger_pages=False)
    t = res["targets"][0]
    print("InnoDB t_dynamic.ibd projected vs the page-compressed twin's ALLOCATED_SIZE (target: within 3%)")
    for twin, codec in twins.items():
        real = alloc[f"16k/fx/{twin}.ibd"]
        p = result_for(t, codec, "innodb_page_compressed")["projected_bytes"]
        print(f"  {codec:8s} {p:>9d} vs {real:>9d}  {(p - real) / real:+.2%}")
    res = run_whatif(ds, ["zlib:6", "lz4"], sample="all", filesystem="ext4", raw_models=False)
    t = res["targets"][0]
    zip8 = next(f["apparent_size"] for f in man["files"] if f["path"] == "16k/fx/t_zip8.ibd")
    r = result_for(t, "zlib:6", "innodb_row_compressed_kbs8k_estimate")
    print(f"  ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8 estimate {r['projected_bytes']} vs t_zip8 {zip8} "
          f"({(r['projected_bytes'] - zip8) / zip8:+.1%})")
    for codec in ("zlib:6", "lz4"):
        r = result_for(t, codec, "innodb_page_compressed_64k_pages_approximation")
        print(f"  64 KiB pages approximation, {codec}: {r['projected_bytes']} (16 KiB: "
              f"{result_for(t, codec, 'innodb_page_compressed')['projected_bytes']})")
    # ClickHouse
    ds = scan(str(fx / "clickhouse" / "datadir"))
    res = run_whatif(ds, ["LZ4", "ZSTD(1)", "Delta,ZSTD(1)", "T64,ZSTD(1)", "Gorilla"], sample="all",
                     raw_models=False, engines=("clickhouse",))
    cman = json.loads((FIXTURES / "clickhouse" / "manifest.json").read_text())
    exp: Counter = Counter()
    for tname, tb in cman["tables"].items():
        types = {p["name"]: p["part_type"] for p in tb["system_parts"]}
        for pc in tb["system_parts_columns"]:
            if types.get(pc["part_name"]) == "Wide":
                exp[f"fx.{tname}.{pc['column']}"] += pc["column_data_compressed_bytes"]
    for f in ds.files:        # Compact parts: the engine reports 0 per column; the blocks are the reference
        sec = f.sections.get("clickhouse", {})
        if f.units is None or sec.get("part_type") != "Compact" or sec.get("part_state") != "active" \
                or "parent_part" in sec:
            continue
        for oid, cname in f.owner_names.items():
            exp[f"{f.database}.{f.table}.{cname}"] += int(f.units["stored"][f.units["owner"] == oid].sum())
    targets = targets_by_name(res)
    n = exact = 0
    worst = 0.0
    for name, want in exp.items():
        tt = targets.get(name)
        if tt is None or not want:
            continue
        r = result_for(tt, tt["current_codec"])
        if r is None:
            continue
        n += 1
        exact += r["projected_bytes"] == want
        worst = max(worst, abs(r["projected_bytes"] - want) / want)
    print(f"ClickHouse columns re-encoded with their own chain: {exact} of {n} exact, worst error {worst:.3%} "
          f"(target 0.5%; reference: column_data_compressed_bytes for Wide parts, the blocks for Compact parts)")
    print("ClickHouse seed tables (bytes per column, all parts):")
    codecs = ["lz4", "zstd:1", "Delta,ZSTD(1)", "T64,ZSTD(1)", "Gorilla"]
    print("  " + "column".ljust(34) + "".join(c.rjust(15) for c in codecs))
    for table in ("seed_nq_mostly1", "seed_nq_u1000", "seed_nq_u1m"):
        for col in ("nq_UInt32", "nq_UInt64", "nq_Float32", "nq_Float64"):
            tt = targets[f"fx.{table}.{col}"]
            cells = []
            for c in codecs:
                r = result_for(tt, c)
                cells.append(f"{r['projected_bytes']:>15d}" if r else "n/a".rjust(15))
            print("  " + f"{table}.{col}".ljust(34) + "".join(cells))
    # TokuDB
    ds = scan(str(fx / "tokudb" / "datadir"))
    res = run_whatif(ds, ["lzma:2"], sample="all", raw_models=False, engines=("tokudb",))
    print("TokuDB dictionaries re-encoded with their own method (partition bytes; target: within 1%)")
    for tt in res["targets"]:
        e = ds.file(tt["target"])
        stored = int(e.units["stored"].astype("int64").sum())
        other = tt["current_bytes"] - stored
        r = result_for(tt, tt["current_codec"]) if tt["current_codec"] else None
        if r is None:
            print(f"  {tt['target']:48s} {tt['current_codec']}: not re-encodable (no QuickLZ encoder)")
            continue
        got = r["projected_bytes"] - other
        print(f"  {tt['target']:48s} {tt['current_codec']:8s} {got:>9d} vs {stored:>9d}  {(got - stored) / stored:+.2%}")
        if "orders_main" in tt["target"]:
            lz = result_for(tt, "lzma:2")["projected_bytes"] - other
            print(f"  {'  fx.orders main with lzma (PerconaFT level 2)':48s} {lz:>18d}  vs zlib {stored}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--innodb", type=Path, help="InnoDB data set (default: fixture tablespaces copied under /tmp)")
    ap.add_argument("--clickhouse", type=Path, help="ClickHouse data dir (default: the fixture data dir)")
    ap.add_argument("--copies", type=int, default=12, help="copies of the InnoDB fixtures for the default set")
    ap.add_argument("--codec", action="append", dest="codecs", help="codecs (default zstd:1, lz4)")
    ap.add_argument("--fraction", default="0.05")
    ap.add_argument("--throughput-mb", type=int, default=64, help="MB of decoded units for the throughput test")
    ap.add_argument("--only", choices=("innodb", "clickhouse"), help="benchmark one engine only")
    ap.add_argument("--throughput-only", action="store_true",
                    help="only the codec throughput against zstd -b / lz4 -b (no what-if timing, no validation)")
    ap.add_argument("--repeats", type=int, default=3, help="interleaved runs of each throughput measurement")
    ap.add_argument("--validate-only", action="store_true")
    ap.add_argument("--no-validate", action="store_true")
    args = ap.parse_args(argv)
    WORK.mkdir(parents=True, exist_ok=True)
    codecs = args.codecs or ["zstd:1", "lz4"]
    if args.throughput_only:
        for eng, path in (("innodb", args.innodb or make_innodb_set(args.copies)),
                          ("clickhouse", args.clickhouse or clickhouse_set())):
            if args.only in (None, eng):
                print(f"\n== {eng}: {path}")
                payloads, unit = _payloads(scan(str(path)), args.throughput_mb << 20)
                throughput(eng, payloads, unit, repeats=args.repeats)
        return 0
    if not args.validate_only:
        if args.only in (None, "innodb"):
            bench_set("innodb", args.innodb or make_innodb_set(args.copies), codecs, args.fraction,
                      args.throughput_mb << 20)
            if args.innodb:
                validate_innodb_set(args.innodb, args.fraction)
        if args.only in (None, "clickhouse"):
            bench_set("clickhouse", args.clickhouse or clickhouse_set(), codecs, args.fraction,
                      args.throughput_mb << 20)
    if not args.no_validate:
        validate(WORK)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

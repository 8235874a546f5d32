#!/usr/bin/env python3
"""The floors under issue 22's two InnoDB scan targets, measured in the same run as the peer
(a script printing figures, not a timed test).

    .venv/bin/python tests/benchmarks/bench_floors.py [--innodb /tmp/innodb-bench] [--rounds 7]

Issue 22 asks ``dbxray scan --json`` to be 1.5x faster than an ``innochecksum -S`` loop on the
13 plain 16 KiB files of ``make_fixtures.sh 200`` and not slower on the whole set.  This prints
what no scan written in Python with numpy can go below, each figure the minimum of
``--rounds`` fresh processes (bytecode written, as on a user's machine), interleaved with
the peer:

* the start: ``python -S -c pass``, ``python -c pass``, ``python -c "import numpy"``, and the
  imports a ``dbxray scan`` of InnoDB files makes (``dbxray.app.cli``, ``dbxray.parsers.scan``,
  ``dbxray.parsers.innodb.scan``), against the ``innochecksum -S`` loop over the plain files
  and the budget 1.5x leaves (loop / 1.5);
* the page codecs of the whole set: every page-compressed page of the set decoded, in this
  process, by the C libraries themselves (zlib, bz2, lzma, lz4, cramjam's snappy), only as
  far as the default scan must (its type, index, level, records and fill are in the page's
  first 128 bytes; its exact payload length is stated in the page for lz4, lzo, snappy and
  the older layout, and is the stream's end for full_crc32 zlib, so that stream decodes
  whole; a bzip2 block decodes whole before its first byte comes out; an .xz stream's end is
  its footer).  The pure-Python LZO pages count as 0 here (no C decoder is installed): the
  floor is lower than the truth.  CPU seconds over the cores (``os.sched_getaffinity``),
  plus the start, against the loop over the whole set.
"""
from __future__ import annotations

import argparse
import bz2
import lzma
import os
import statistics
import subprocess
import sys
import time
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "benchmarks"))
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
PREFIX = 128
SCAN_IMPORTS = "import dbxray.app.cli, dbxray.parsers.scan, dbxray.parsers.innodb.scan"


def fresh(cmd: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t


def loop(files: list[Path]) -> list[str]:
    return ["bash", "-c", 'for f in "$@"; do innochecksum -S "$f"; done > /dev/null', "loop", *map(str, files)]


def interleaved(contenders: dict[str, list[str]], rounds: int) -> dict[str, list[float]]:
    for cmd in contenders.values():
        fresh(cmd)                                   # bytecode and page cache, untimed
    out: dict[str, list[float]] = {k: [] for k in contenders}
    for _ in range(rounds):
        for k, cmd in contenders.items():
            out[k].append(fresh(cmd))
    return out


def compressed_payloads(path: Path) -> tuple[str, list[tuple[bytes, bool]]]:
    """(algorithm, [(payload, length stated in the page)]) of the file's page-compressed pages."""
    from dbxray.parsers.innodb.fsp import decode_fsp_flags
    from dbxray.parsers.innodb.pagecomp import (PageDecodeError, parse_fcrc32_comp_header,
                                                 parse_legacy_comp_header)
    data = path.read_bytes()
    flags = decode_fsp_flags(int.from_bytes(data[54:58], "big"))
    ps = flags.physical_page_size
    out: list[tuple[bytes, bool]] = []
    algo = flags.compression_algorithm if flags.full_crc32 else None
    for i in range(len(data) // ps):
        raw = data[i * ps:(i + 1) * ps]
        t = int.from_bytes(raw[24:26], "big")
        try:
            if flags.full_crc32 and t & 0x8000:
                h = parse_fcrc32_comp_header(raw, 0, ps, algo)
                body = raw[h.header_len:h.stored_bytes - 4]
                out.append((body[:h.payload_len] if h.payload_len else body, h.payload_len is not None))
            elif not flags.full_crc32 and t == 34354:
                h = parse_legacy_comp_header(raw, 0, ps)
                algo = h.algorithm
                out.append((raw[h.header_len:h.header_len + h.payload_len], True))
        except PageDecodeError:
            continue
    return algo or "?", out


def decode_floor(algo: str, pages: list[tuple[bytes, bool]], page_size: int) -> float | None:
    """CPU seconds of the C libraries' least decode of ``pages`` (None: no C decoder here)."""
    import lz4.block
    import cramjam

    def zlib_one(d: bytes, stated: bool):
        if stated:
            zlib.decompressobj().decompress(d, PREFIX)
        else:
            zlib.decompressobj().decompress(d, page_size + 1)
    one = {
        "zlib": zlib_one,
        "bzip2": lambda d, s: bz2.BZ2Decompressor().decompress(d, max_length=PREFIX),
        "lzma": lambda d, s: lzma.LZMADecompressor().decompress(d, max_length=PREFIX),
        "lz4": lambda d, s: lz4.block.decompress(d, uncompressed_size=page_size),
        "snappy": lambda d, s: cramjam.snappy.decompress_raw(d),
    }.get(algo)
    if one is None:
        return None
    t = time.process_time()
    for d, stated in pages:
        try:
            one(d, stated)
        except Exception:          # a page the C library refuses costs what it cost
            pass
    return time.process_time() - t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--innodb", default="/tmp/innodb-bench")
    ap.add_argument("--rounds", type=int, default=7)
    a = ap.parse_args(argv)
    from bench_innodb import find_files, is_page_compressed
    root = Path(a.innodb)
    whole = sorted(root.rglob("*.ibd"))
    plain = [p for p in find_files(root, 16384) if not is_page_compressed(p)]
    if not whole or not plain:
        print(f"no InnoDB benchmark set under {root} (make_fixtures.sh 200)")
        return 1
    py = sys.executable
    cores = len(os.sched_getaffinity(0))
    load0 = os.getloadavg()[0]
    t = interleaved({
        "python -S -c pass": [py, "-S", "-c", "pass"],
        "python -c pass": [py, "-c", "pass"],
        "python -c 'import numpy'": [py, "-c", "import numpy"],
        "the scan's imports": [py, "-c", SCAN_IMPORTS],
        f"innochecksum -S loop, plain set ({len(plain)} files)": loop(plain),
        f"innochecksum -S loop, whole set ({len(whole)} files)": loop(whole),
    }, a.rounds)
    print(f"fresh processes, {a.rounds} rounds interleaved, load average {load0:.2f} -> {os.getloadavg()[0]:.2f}")
    for k, v in t.items():
        print(f"  {k:44s} min {min(v):.3f} s  median {statistics.median(v):.3f} s")
    vals = list(t.values())
    numpy_start, imports, loop_plain, loop_whole = min(vals[2]), min(vals[3]), min(vals[4]), min(vals[5])
    print(f"plain set: 1.5x the loop leaves {loop_plain / 1.5:.3f} s; the start alone: Python + numpy "
          f"{numpy_start:.3f} s, + the scan's imports {imports:.3f} s, before a byte is read")

    total = 0.0
    print(f"\npage codecs of the whole set, C libraries, only as far as the default scan must (CPU, one core):")
    for p in whole:
        if not is_page_compressed(p):
            continue
        algo, pages = compressed_payloads(p)
        with open(p, "rb") as f:
            from dbxray.parsers.innodb.fsp import decode_fsp_flags
            ps = decode_fsp_flags(int.from_bytes(f.read(58)[54:58], "big")).physical_page_size
        cpu = decode_floor(algo, pages, ps)
        shown = "no C decoder here: counted 0" if cpu is None else f"{cpu:.3f} s ({cpu / max(len(pages), 1) * 1e6:.0f} us a page)"
        print(f"  {p.name:24s} {algo:7s} {len(pages):6d} pages  {shown}")
        total += cpu or 0.0
    floor = imports + total / cores
    print(f"  sum {total:.3f} s of CPU; on {cores} cores {total / cores:.3f} s; with the start {floor:.3f} s "
          f"against the loop's {loop_whole:.3f} s: 'not slower' is "
          f"{'within reach' if floor < loop_whole else 'below the floor'} ({loop_whole / floor:.2f}x at best)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

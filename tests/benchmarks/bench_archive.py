"""ARCHIVE row stream walk (issue 19, Speed): the row count and uncompressed size of an
``.ARZ`` streamed (parsers/archive/stream.py: every span inflated, every member's crc32 and
length checked, every row's length header followed), against the peer: a plain zlib inflate
of the same deflate members with their crc32 (what ``zcat`` does), in the same run.

    .venv/bin/python tests/benchmarks/bench_archive.py [FILE.ARZ ...] [--repeat N]

Without files, the MariaDB fixture's two ``arc/*.ARZ``. Timed warm (the file is read once
untimed), best of ``--repeat``; prints each file's MB/s of compressed input and the ratio of
the walk's time to the peer's (1.0: as fast as zlib alone).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO))
FIXTURES = Path(os.environ.get("DBXRAY_FIXTURES") or REPO.parent / "shared" / "fixtures")

from dbxray.parsers.archive import stream  # noqa: E402
from dbxray.parsers.archive.header import read_header  # noqa: E402
from dbxray.parsers.fileio import ReadOnlyFile  # noqa: E402

GZIP_TRAILER = 8


def peer(data: bytes) -> int:
    """Inflate every raw deflate member of ``data`` with its crc32 (the trailer skipped)."""
    buf, out = memoryview(data), 0
    while len(buf) > GZIP_TRAILER:
        d = zlib.decompressobj(-zlib.MAX_WBITS)
        o = d.decompress(buf) + d.flush()
        zlib.crc32(o)
        out += len(o)
        buf = buf[len(buf) - len(d.unused_data) + GZIP_TRAILER:]
    return out


def bench(path: str, repeat: int) -> None:
    with ReadOnlyFile(path) as f:
        h = read_header(f.pread(0, 1 << 16), f.size)
        data = f.pread(h.start, f.size - h.start)
        walk_s = peer_s = float("inf")
        for _ in range(repeat):
            t = time.perf_counter()
            w = stream.walk(f, h)
            walk_s = min(walk_s, time.perf_counter() - t)
            t = time.perf_counter()
            inflated = peer(data)
            peer_s = min(peer_s, time.perf_counter() - t)
    assert inflated == w.uncompressed_bytes, (inflated, w.uncompressed_bytes)
    mb = len(data) / 1e6
    print(f"{os.path.basename(path)}: {len(data):,} compressed -> {w.uncompressed_bytes:,} bytes, {w.rows:,} rows; "
          f"walk {walk_s * 1e3:.1f} ms ({mb / walk_s:.0f} MB/s compressed, {w.uncompressed_bytes / 1e6 / walk_s:.0f} "
          f"MB/s inflated), zlib inflate + crc32 {peer_s * 1e3:.1f} ms ({mb / peer_s:.0f} MB/s); "
          f"walk / peer time {walk_s / peer_s:.2f}x")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    files = args.files or sorted(str(p) for p in (FIXTURES / "mariadb" / "datadir" / "arc").glob("*.ARZ"))
    if not files:
        print("no .ARZ files (give paths, or ../shared/fixtures)")
        return 1
    for p in files:
        bench(p, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())

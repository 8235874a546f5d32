"""ARCHIVE row stream walk (issue 19, Speed): the row count and uncompressed size of an
``.ARZ`` streamed (parsers/archive/stream.py: every span inflated, every member's crc32 and
length checked, every row's length header followed), against the peer: a plain zlib inflate
of the same deflate members with their crc32 (what ``zcat`` does), in the same run.

    .venv/bin/python tests/benchmarks/bench_archive.py [FILE.ARZ ...] [--repeat N] [--copies K]

Without files, the MariaDB fixture's two ``arc/*.ARZ``. Timed warm (the file is read once
untimed), best of ``--repeat``; prints each file's MB/s of compressed input and the ratio of
the walk's time to the peer's (1.0: as fast as zlib alone). Where ``zcat`` is on the PATH,
a second peer: ``zcat`` of the same members written as a gzip file (each member a gzip
member: the 10-byte gzip header before the deflate data and its crc32 + length trailer,
which azio writes as gzip does), run as a process with its output piped back, as a user
would run it. ``--copies K`` times the members K times in a temp copy (header kept) for
a longer stream; keep K x the table's inflated bytes under 256 MiB (the bomb cap of a
file whose header says fewer rows).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
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
#: RFC 1952: magic, CM=8 (deflate), no flags, no mtime, no extra flags, OS=3 (Unix)
GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03"


def members(data: bytes) -> list[bytes]:
    """The raw deflate members of a data region, each with its 8-byte trailer."""
    buf, out = memoryview(data), []
    while len(buf) > GZIP_TRAILER:
        d = zlib.decompressobj(-zlib.MAX_WBITS)
        d.decompress(buf)
        used = len(buf) - len(d.unused_data) + GZIP_TRAILER
        out.append(bytes(buf[:used]))
        buf = buf[used:]
    return out


def zcat_peer(data: bytes, tmp: str, repeat: int) -> tuple[float, int] | None:
    """Best time of ``zcat`` over the members as a gzip file, and the bytes it wrote."""
    exe = shutil.which("zcat")
    if exe is None:
        return None
    gz = os.path.join(tmp, "members.gz")
    with open(gz, "wb") as f:
        for m in members(data):
            f.write(GZIP_HEADER + m)
    best, out = float("inf"), 0
    for _ in range(repeat + 1):
        t = time.perf_counter()
        out = len(subprocess.run([exe, gz], stdout=subprocess.PIPE, check=True).stdout)
        best = min(best, time.perf_counter() - t)
    return best, out


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


def copy_with(path: str, copies: int, tmp: str) -> str:
    """A temp ``.ARZ``: the header of ``path``, then its members ``copies`` times."""
    with ReadOnlyFile(path) as f:
        h = read_header(f.pread(0, 1 << 16), f.size)
        head, data = f.pread(0, h.start), f.pread(h.start, f.size - h.start)
    out = os.path.join(tmp, f"x{copies}_{os.path.basename(path)}")
    with open(out, "wb") as f:
        f.write(head)
        for _ in range(copies):
            f.write(data)
    return out


def bench(path: str, repeat: int, tmp: str) -> None:
    with ReadOnlyFile(path) as f:
        h = read_header(f.pread(0, 1 << 16), f.size)
        data = f.pread(h.start, f.size - h.start)
        walk_s = peer_s = float("inf")
        stream.walk(f, h)                                   # warm
        for _ in range(repeat):
            t = time.perf_counter()
            w = stream.walk(f, h)
            walk_s = min(walk_s, time.perf_counter() - t)
            t = time.perf_counter()
            inflated = peer(data)
            peer_s = min(peer_s, time.perf_counter() - t)
    assert inflated == w.uncompressed_bytes, (inflated, w.uncompressed_bytes)
    assert w.error is None and w.row_error is None, (w.error, w.row_error)   # a cap or damage: no figure
    mb = len(data) / 1e6
    print(f"{os.path.basename(path)}: {len(data):,} compressed -> {w.uncompressed_bytes:,} bytes, {w.rows:,} rows; "
          f"walk {walk_s * 1e3:.1f} ms ({mb / walk_s:.0f} MB/s compressed, {w.uncompressed_bytes / 1e6 / walk_s:.0f} "
          f"MB/s inflated), zlib inflate + crc32 {peer_s * 1e3:.1f} ms ({mb / peer_s:.0f} MB/s); "
          f"walk / peer time {walk_s / peer_s:.2f}x")
    z = zcat_peer(data, tmp, repeat)
    if z is not None:
        zs, zout = z
        assert zout == w.uncompressed_bytes, (zout, w.uncompressed_bytes)
        print(f"  zcat of the same members (gzip-wrapped): {zs * 1e3:.1f} ms ({mb / zs:.0f} MB/s); "
              f"walk / zcat time {walk_s / zs:.2f}x")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--copies", type=int, default=1, help="the members this many times over (a longer stream)")
    args = ap.parse_args(argv)
    files = args.files or sorted(str(p) for p in (FIXTURES / "mariadb" / "datadir" / "arc").glob("*.ARZ"))
    if not files:
        print("no .ARZ files (give paths, or ../shared/fixtures)")
        return 1
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="arz_bench_") as tmp:
        for p in files:
            bench(copy_with(p, args.copies, tmp) if args.copies > 1 else p, args.repeat, tmp)
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

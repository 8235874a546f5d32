#!/usr/bin/env python3
"""Benchmark: the page map of a MariaDB encrypted tablespace decrypted with its key
file, against the page map of the same rows written unencrypted (issue 15: target
at most 3x slower).  A script, not a timed test.

Make the pair with a private server (never the system service; own datadir and
socket, --skip-networking), e.g. AES_CTR keys 1/2 in KEYS:

    mariadb-install-db --no-defaults --datadir=D --user=root
    mariadbd --no-defaults --datadir=D --socket=S --skip-networking --user=root \\
        --plugin-load-add=file_key_management.so --file-key-management-filename=KEYS \\
        --file-key-management-encryption-algorithm=AES_CTR &
    CREATE TABLE enc_t (...) ENCRYPTED=YES ENCRYPTION_KEY_ID=1; fill it (~1 GB);
    CREATE TABLE plain_t LIKE enc_t; ALTER TABLE plain_t ENCRYPTED=NO;
    INSERT INTO plain_t SELECT * FROM enc_t; then a slow shutdown

then

    .venv/bin/python tests/benchmarks/bench_crypt.py --enc D/bench/enc_t.ibd --plain D/bench/plain_t.ibd \\
        --keyfile KEYS [--repeat 3]

Both files are read once before timing (warm page cache); each timed run builds the
full page map with checksums off, the encrypted one decrypting every encrypted page
(AES over batches of pages).  Prints seconds, MB/s, the ratio, and whether both maps
found the same page types and index shapes.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from dbxray.parsers.fileio import ReadOnlyFile  # noqa: E402
from dbxray.parsers.innodb.pagemap import build_page_map  # noqa: E402
from dbxray.parsers.keyfile import load_key_file  # noqa: E402


def warm(path: str) -> None:
    with open(path, "rb") as fh:
        while fh.read(1 << 20):
            pass


def page_map(path: str, keys=None):
    with ReadOnlyFile(path) as f:
        t = time.perf_counter()
        pm = build_page_map(f, path, verify_checksums=False, keys=keys)
        return pm, time.perf_counter() - t


def shape(pm) -> tuple:
    types = dict(zip(*[a.tolist() for a in np.unique(pm.kind, return_counts=True)]))
    live = pm.is_index_kind(pm.kind) & ~pm.free & ~pm.encrypted
    idx = sorted(np.unique(pm.level[live]).tolist())
    return types, len(pm.roots), idx


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--enc", required=True)
    ap.add_argument("--plain", required=True)
    ap.add_argument("--keyfile", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)
    keys = load_key_file(a.keyfile)
    for p in (a.enc, a.plain):
        warm(p)
    best = {"enc": 1e9, "plain": 1e9}
    pms = {}
    for _ in range(a.repeat):            # interleaved: a noisy moment costs both alike
        pm, t = page_map(a.plain)
        best["plain"], pms["plain"] = min(best["plain"], t), pm
        pm, t = page_map(a.enc, keys)
        best["enc"], pms["enc"] = min(best["enc"], t), pm
    enc, plain = pms["enc"], pms["plain"]
    size_enc, size_plain = os.path.getsize(a.enc), os.path.getsize(a.plain)
    c = enc.crypt
    print(f"encrypted: {a.enc}: {size_enc / 1e6:.0f} MB, {enc.n_pages} pages, "
          f"{int(c.candidates.sum()) if c else 0} encrypted, {int(c.decrypted.sum()) if c else 0} decrypted "
          f"({c.algorithm if c else None}); errors {enc.errors[:3]}")
    print(f"plain:     {a.plain}: {size_plain / 1e6:.0f} MB, {plain.n_pages} pages")
    print(f"page map with key   {best['enc']:.3f} s  {size_enc / 1e6 / best['enc']:.0f} MB/s")
    print(f"page map unencrypted {best['plain']:.3f} s  {size_plain / 1e6 / best['plain']:.0f} MB/s")
    ratio = (best["enc"] / size_enc) / (best["plain"] / size_plain)
    print(f"ratio (per byte, encrypted with key / unencrypted): {ratio:.2f}x  (target <= 3x: "
          f"{'met' if ratio <= 3 else 'NOT met'})")
    se, sp = shape(enc), shape(plain)
    print(f"index roots {se[1]} / {sp[1]}, levels {se[2]} / {sp[2]}; page types equal: {se[0] == sp[0]}")
    if se[0] != sp[0]:
        print(f"  encrypted {se[0]}\n  plain     {sp[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

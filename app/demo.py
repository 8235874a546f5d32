"""The embedded demo data dir: small real files from the fixtures, shipped in
``resources/demo/`` with the holes they had on the engine's disk listed in
``resources/demo/holes.json``.  Git and wheels lose holes, so at first start
the demo is copied to the user's cache folder and the holes are re-punched
there (never in the shipped copy)."""
from __future__ import annotations

import ctypes
import hashlib
import json
import os
import shutil
from pathlib import Path

from dbxray.parsers.libc import libc as load_libc

FALLOC_FL_KEEP_SIZE = 0x01
FALLOC_FL_PUNCH_HOLE = 0x02


def demo_source() -> Path:
    return Path(__file__).resolve().parent.parent / "resources" / "demo"


def demo_cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "dbxray" / "demo"


def _punch(path: Path, offset: int, length: int) -> bool:
    libc = load_libc()
    if libc is None:
        return False
    libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
    fd = os.open(path, os.O_RDWR)
    try:
        ok = libc.fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, offset, length) == 0
        os.fsync(fd)     # settle delayed allocation so st_blocks is final
        return ok
    finally:
        os.close(fd)


def prepare_demo(dest: Path | None = None) -> tuple[Path, bool]:
    """A sparse working copy of the demo; returns (path, holes_restored).

    When the filesystem cannot punch holes the copy is still usable and the
    app shows the files as having lost their sparseness, which is the truth.
    """
    src = demo_source()
    manifest = json.loads((src / "holes.json").read_text())
    # the copy is keyed by the demo's files (names and sizes) and its holes: a demo that gained
    # files (the MyRocks data dir) is copied afresh, not served from an older copy
    files = sorted((str(p.relative_to(src)), p.stat().st_size) for p in (src / "data").rglob("*") if p.is_file())
    stamp = hashlib.sha256(json.dumps([manifest, files], sort_keys=True).encode()).hexdigest()[:16]
    dest = Path(dest) if dest else demo_cache_root()
    target = dest / stamp
    marker = target / ".dbxray-demo-ready"
    if marker.exists():
        return target / "data", marker.read_text().strip() == "sparse"
    if target.exists():
        shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src / "data", target / "data", symlinks=True)
    ok = True
    for rel, ranges in manifest["holes"].items():
        p = target / "data" / rel
        for off, ln, kind in ranges:
            try:
                ok = _punch(p, off, ln) and ok
                if kind == "unwritten":      # allocated, never written: as the engine's fallocate left it
                    fd = os.open(p, os.O_RDWR)
                    try:
                        os.posix_fallocate(fd, off, ln)
                    finally:
                        os.close(fd)
            except OSError:
                ok = False
    marker.write_text("sparse" if ok else "dense")
    return target / "data", ok

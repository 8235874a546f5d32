"""Finding the shared fixtures and making sparse working copies of them.

Git does not keep holes, so after copying a fixture folder the holes (and
unwritten extents) recorded in its manifest are re-created in the copy with
``fallocate(2)``.  The fixtures themselves are never written.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

FALLOC_FL_KEEP_SIZE = 0x01
FALLOC_FL_PUNCH_HOLE = 0x02

_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
_libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]


MISSING = ("dbxray tests need the shared fixtures at ../shared/fixtures (or DBXRAY_FIXTURES); "
           "they are missing")


def fixtures_dir() -> Path | None:
    env = os.environ.get("DBXRAY_FIXTURES")
    cand = Path(env) if env else REPO.parent / "shared" / "fixtures"
    return cand if cand.is_dir() else None


def require_fixtures() -> Path:
    """The fixtures folder, or an error saying they are missing (for modules that
    read a manifest while they are collected: they fail, the others still run)."""
    root = fixtures_dir()
    if root is None:
        raise RuntimeError(MISSING)
    return root


def punch_hole(path: str | os.PathLike, offset: int, length: int) -> None:
    """Deallocate [offset, offset+length) of a file in our temp copy."""
    fd = os.open(path, os.O_RDWR)
    try:
        if _libc.fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, offset, length) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"punch hole failed on {path}: {os.strerror(err)}")
    finally:
        os.close(fd)


def restore_ranges(path: str | os.PathLike, ranges) -> None:
    """Re-create hole and unwritten ranges ([offset, length, kind]) in a copy."""
    fd = os.open(path, os.O_RDWR)
    try:
        for off, ln, kind in ranges:
            if kind in ("hole", "unwritten"):
                if _libc.fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, ln) != 0:
                    err = ctypes.get_errno()
                    raise OSError(err, f"punch hole failed on {path}")
            if kind == "unwritten":
                os.posix_fallocate(fd, off, ln)
        os.fsync(fd)
    finally:
        os.close(fd)


def repunch_innodb(root: Path) -> int:
    """Re-create the holes of ``root/innodb`` from its manifest; returns files touched."""
    man = json.loads((root / "innodb" / "manifest.json").read_text())
    n = 0
    for e in man["files"]:
        p = root / "innodb" / e["path"]
        ranges = e.get("fiemap_ranges") or [[o, ln, "hole"] for o, ln in e.get("holes", [])]
        if p.exists() and any(k != "data" for _, _, k in ranges):
            restore_ranges(p, ranges)
            n += 1
    return n


def repunch_tokudb(root: Path) -> int:
    man = json.loads((root / "tokudb" / "manifest.json").read_text())
    n = 0
    for e in man["files"]:
        p = root / "tokudb" / e["path"]
        if p.exists() and e.get("holes"):
            for off, ln in e["holes"]:
                punch_hole(p, off, ln)
            n += 1
    return n


def repunch_mariadb(root: Path) -> int:
    """Re-create the holes of ``root/mariadb/datadir`` from its manifest (files[].holes)."""
    man = json.loads((root / "mariadb" / "manifest.json").read_text())
    n = 0
    for e in man["files"]:
        p = root / "mariadb" / "datadir" / e["path"]
        if p.exists() and not p.is_symlink() and e.get("holes"):
            for off, ln in e["holes"]:
                punch_hole(p, off, ln)
            n += 1
    return n


def make_sparse_copy(dest: Path) -> Path:
    """Copy the whole fixture tree to ``dest`` and re-punch its holes."""
    src = fixtures_dir()
    if src is None:
        raise RuntimeError("fixtures not found: set DBXRAY_FIXTURES or put them at ../shared/fixtures")
    out = dest / "fixtures"
    shutil.copytree(src, out, symlinks=True)
    for dirpath, dirnames, filenames in os.walk(out):
        for name in filenames:
            p = os.path.join(dirpath, name)
            if not os.path.islink(p):
                os.chmod(p, 0o644)
    repunch_innodb(out)
    repunch_tokudb(out)
    if (out / "mariadb" / "manifest.json").exists():
        repunch_mariadb(out)
    return out

"""The btrfs what-if against btrfs itself: a fixture file written onto a btrfs
``compress-force=zstd`` (and ``compress=zstd``) filesystem the way its engine writes it, then measured
with ``compsize`` ("Disk Usage"), must be within 5% of what dbxray projected
for ``zstd:3`` on btrfs from a scan of the original (root needed, as in CI).

How each file is written here:
- an InnoDB tablespace that is not page_compressed, as MariaDB writes it: the file
  extended with ``posix_fallocate`` (os0file.cc os_file_set_size), then every page
  written with pwrite: btrfs never compresses it (the inode is PREALLOC);
- a page_compressed tablespace, as MariaDB writes it: extended sparse (ftruncate),
  then each page written with the length the server wrote (what the source holds
  outside its holes: its compressed bytes rounded to the 4 KiB punch block; freed
  pages, which the server punches whole, stay holes);
- a TokuDB dictionary and a ClickHouse column file, as those engines write them:
  appended sequentially (no fallocate), so compress-force compresses them in
  128 KiB extents.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from fixtures_util import MISSING, fixtures_dir
from fsmount import MountUnavailable, mounted


def compsize_disk(path) -> int:
    out = subprocess.run(["compsize", "-b", str(path)], capture_output=True, text=True).stdout
    m = re.search(r"^TOTAL\s+\d+%\s+(\d+)", out, re.M)
    assert m, out
    return int(m.group(1))


def projected(path: str) -> int:
    from dbxray.compress.whatif import run_whatif
    from dbxray.parsers.scan import scan
    ds = scan(path)
    res = run_whatif(ds, ["zstd:3"], sample="all", seed=1, larger_pages=False)
    for t in res["targets"]:
        for r in t["results"]:
            if r["codec"] == "zstd:3" and r["model"] in ("btrfs_128k_extents", "btrfs_128k_extents_fallocated"):
                return int(r["projected_bytes"])
    raise AssertionError(f"no btrfs projection for {path}: {res['targets']}")


def write_fallocated(src, dst, page=16384):
    data = src.read_bytes()
    fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.posix_fallocate(fd, 0, len(data))
        for off in range(0, len(data), page):
            os.pwrite(fd, data[off:off + page], off)
        os.fsync(fd)
    finally:
        os.close(fd)


def write_page_compressed(src, dst, page=16384):
    """As MariaDB writes a page_compressed tablespace: extended sparse (ftruncate), each page
    written at the length the server wrote it (what the source holds outside its holes:
    the compressed bytes rounded to the punch block; freed pages punched whole stay holes)."""
    from dbxray.parsers.fileio import ReadOnlyFile
    with ReadOnlyFile(str(src)) as f:
        holes = f.holes()
    data = src.read_bytes()
    fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.ftruncate(fd, len(data))
        pos = 0
        for o, n in sorted(holes) + [(len(data), 0)]:
            for a in range(pos, o, page):             # page by page, as the server writes
                b = min(o, (a // page + 1) * page)
                os.pwrite(fd, data[a:b], a)
            pos = max(pos, o + n)
        os.fsync(fd)
    finally:
        os.close(fd)


def write_sequential(src, dst):
    with open(src, "rb") as a, open(dst, "wb") as b:
        while chunk := a.read(1 << 20):
            b.write(chunk)
        b.flush()
        os.fsync(b.fileno())


def _btrfs(tmp_path_factory, kind: str):
    """A btrfs of ``kind`` (tests/fsmount.py) mounted for the module, compsize at hand."""
    if fixtures_dir() is None:
        pytest.fail(MISSING, pytrace=False)
    if shutil.which("compsize") is None:
        pytest.fail("compsize is not installed (apt-get install btrfs-compsize)", pytrace=False)
    try:
        with mounted(kind, tmp_path_factory.mktemp(kind)) as mp:
            yield mp
    except MountUnavailable as e:
        pytest.fail(f"cannot test on btrfs: {e}", pytrace=False)


@pytest.fixture(scope="module")
def btrfs_mount(tmp_path_factory):
    yield from _btrfs(tmp_path_factory, "btrfs-zstd")


def _check(proj: int, disk: int, what: str) -> None:
    print(f"{what}: projected {proj}, compsize {disk} ({(proj - disk) / disk:+.2%})")
    assert abs(proj - disk) <= 0.05 * disk, f"{what}: projected {proj}, compsize {disk}"


@pytest.mark.parametrize("name", ["t_dynamic.ibd", "t_blob.ibd", "t_redundant.ibd"])
def test_fallocated_tablespace_is_not_compressed(btrfs_mount, sparse_fixtures, name):
    src = sparse_fixtures / "innodb" / "16k" / "fx" / name
    dst = btrfs_mount / f"falloc-{name}"
    write_fallocated(src, dst)
    _check(projected(str(src)), compsize_disk(dst), name)


@pytest.mark.parametrize("name", ["t_pc_zlib.ibd", "t_pc_lz4.ibd", "t_pc_lzma.ibd"])
def test_page_compressed_tablespace(btrfs_mount, sparse_fixtures, name):
    src = sparse_fixtures / "innodb" / "16k" / "fx" / name
    dst = btrfs_mount / f"pc-{name}"
    write_page_compressed(src, dst)
    _check(projected(str(src)), compsize_disk(dst), name)


@pytest.mark.parametrize("rel", ["tokudb", "clickhouse"])
def test_sequentially_written_files(btrfs_mount, sparse_fixtures, rel):
    from dbxray.parsers.scan import scan
    root = sparse_fixtures / rel
    ds = scan(str(root))
    eng = "tokudb" if rel == "tokudb" else "clickhouse"
    cands = sorted((f for f in ds.files if f.engine == eng and f.apparent_bytes >= 256 << 10
                    and (f.role in ("tablespace", "part_column_data") or f.path.endswith(".tokudb"))),
                   key=lambda f: -f.apparent_bytes)
    assert cands, f"no {rel} file of 256 KiB or more"
    f = cands[0]
    dst = btrfs_mount / f"seq-{rel}-{os.path.basename(f.path)}"
    write_sequential(f.abspath, dst)
    if rel == "tokudb":
        _check(projected(f.abspath), compsize_disk(dst), f.path)
    else:
        # a ClickHouse column file is a target of its table, not of its own: its raw
        # bytes are already compressed, so btrfs keeps them nearly whole
        from dbxray.compress.fsmodels import BtrfsExtents
        from dbxray.compress.registry import parse_codec
        data = open(f.abspath, "rb").read()
        m, c = BtrfsExtents(), parse_codec("zstd:3")
        proj = sum(m.project(c, data[o:o + m.extent]) for o in range(0, len(data), m.extent))
        _check(proj, compsize_disk(dst), f.path)



@pytest.fixture(scope="module")
def btrfs_compress_mount(tmp_path_factory):
    yield from _btrfs(tmp_path_factory, "btrfs-zstd-heuristic")


def projected_heuristic(path: str) -> int:
    from dbxray.compress.fsmodels import BTRFS_HEURISTIC_MODEL
    from dbxray.compress.whatif import run_whatif
    from dbxray.parsers.scan import scan
    res = run_whatif(scan(path), ["zstd:3"], sample="0.05", seed=1, larger_pages=False)
    for t in res["targets"]:
        for r in t["results"]:
            if r["codec"] == "zstd:3" and r["model"] in (BTRFS_HEURISTIC_MODEL, "btrfs_128k_extents_fallocated"):
                return int(r["projected_bytes"])
    raise AssertionError(f"no btrfs compress projection for {path}")


@pytest.mark.parametrize("name", ["t_pc_zlib.ibd", "t_pc_lz4.ibd"])
def test_compress_heuristic_page_compressed(btrfs_compress_mount, sparse_fixtures, name):
    """``compress`` (not -force): btrfs compresses a page_compressed tablespace's first
    range (page 0 and the next page's few KiB), then its heuristic passes a compressed
    page that does not shrink by a sector, the file gets NOCOMPRESS, the rest is raw."""
    src = sparse_fixtures / "innodb" / "16k" / "fx" / name
    dst = btrfs_compress_mount / f"pc-{name}"
    write_page_compressed(src, dst)
    _check(projected_heuristic(str(src)), compsize_disk(dst), name)


@pytest.mark.parametrize("rel", ["tokudb", "clickhouse"])
def test_compress_heuristic_sequential(btrfs_compress_mount, sparse_fixtures, rel):
    """Appended files: one delalloc range, one heuristic verdict on its first 128 KiB (a
    TokuDB dictionary starting with incompressible nodes is stored raw whole, zeros at
    its end included)."""
    from dbxray.parsers.scan import scan
    ds = scan(str(sparse_fixtures / rel))
    eng = "tokudb" if rel == "tokudb" else "clickhouse"
    files = sorted((f for f in ds.files if f.engine == eng and f.apparent_bytes >= 256 << 10
                    and (f.path.endswith(".tokudb") or f.path.endswith(".bin"))), key=lambda f: -f.apparent_bytes)[:3]
    assert files
    from dbxray.compress.fsmodels import btrfs_compress_walk
    from dbxray.compress.registry import parse_codec
    for f in files:
        dst = btrfs_compress_mount / f"seq-{rel}-{os.path.basename(f.path)}"
        write_sequential(f.abspath, dst)
        data = open(f.abspath, "rb").read()
        w = btrfs_compress_walk(lambda a, b: data[a:b], [(0, len(data))], parse_codec("zstd:3"))
        _check(w.projected, compsize_disk(dst), f.path)
        if rel == "tokudb":
            _check(projected_heuristic(f.abspath), compsize_disk(dst), f.path)

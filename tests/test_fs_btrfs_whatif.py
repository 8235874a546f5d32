"""The btrfs what-if against btrfs itself: a fixture file written onto a btrfs
``compress-force=zstd`` filesystem the way its engine writes it, then measured
with ``compsize`` ("Disk Usage"), must be within 5% of what dbxray projected
for ``zstd:3`` on btrfs from a scan of the original (root needed, as in CI).

How each file is written here:
- an InnoDB tablespace that is not page_compressed, as MariaDB writes it: the file
  extended with ``posix_fallocate`` (os0file.cc os_file_set_size), then every page
  written with pwrite: btrfs never compresses it (the inode is PREALLOC);
- a page_compressed tablespace, as MariaDB writes it: extended sparse (ftruncate),
  then each page written with the length the server writes (its compressed bytes
  rounded to the 4 KiB punch block; the rest of the page stays a hole);
- a TokuDB dictionary and a ClickHouse column file, as those engines write them:
  appended sequentially (no fallocate), so compress-force compresses them in
  128 KiB extents.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import numpy as np
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


def write_page_compressed(src, dst, lengths, page=16384):
    data = src.read_bytes()
    fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.ftruncate(fd, len(data))
        for i, ln in enumerate(lengths):
            os.pwrite(fd, data[i * page:i * page + int(ln)], i * page)
        os.fsync(fd)
    finally:
        os.close(fd)


def write_sequential(src, dst):
    with open(src, "rb") as a, open(dst, "wb") as b:
        while chunk := a.read(1 << 20):
            b.write(chunk)
        b.flush()
        os.fsync(b.fileno())


@pytest.fixture(scope="module")
def btrfs_mount(tmp_path_factory):
    if fixtures_dir() is None:
        pytest.fail(MISSING, pytrace=False)
    if shutil.which("compsize") is None:
        pytest.fail("compsize is not installed (apt-get install btrfs-compsize)", pytrace=False)
    work = tmp_path_factory.mktemp("btrfs-whatif")
    try:
        with mounted("btrfs-zstd", work) as mp:
            yield mp
    except MountUnavailable as e:
        pytest.fail(f"cannot test on btrfs: {e}", pytrace=False)


def _check(proj: int, disk: int, what: str) -> None:
    assert abs(proj - disk) <= 0.05 * disk, f"{what}: projected {proj}, compsize {disk}"


@pytest.mark.parametrize("name", ["t_dynamic.ibd", "t_blob.ibd", "t_redundant.ibd"])
def test_fallocated_tablespace_is_not_compressed(btrfs_mount, sparse_fixtures, name):
    src = sparse_fixtures / "innodb" / "16k" / "fx" / name
    dst = btrfs_mount / f"falloc-{name}"
    write_fallocated(src, dst)
    _check(projected(str(src)), compsize_disk(dst), name)


@pytest.mark.parametrize("name", ["t_pc_zlib.ibd", "t_pc_lz4.ibd", "t_pc_lzma.ibd"])
def test_page_compressed_tablespace(btrfs_mount, sparse_fixtures, name):
    from dbxray.parsers.scan import scan
    src = sparse_fixtures / "innodb" / "16k" / "fx" / name
    f = scan(str(src)).files[0]
    stored = f.units["stored"].astype(np.int64)
    lengths = np.minimum(-(-stored // 4096) * 4096, 16384)   # the server's write: stored rounded to 4 KiB
    dst = btrfs_mount / f"pc-{name}"
    write_page_compressed(src, dst, lengths)
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


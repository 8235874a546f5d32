"""The filesystem facts of every file against the filesystems' own tools, on
filesystems made for the test (root needed, as in CI): XFS with 4 KiB and
1 KiB blocks against ``xfs_bmap -vp``, btrfs ``compress-force=zstd`` against
``compsize`` and ``filefrag -v``, tmpfs against st_blocks; the engine's punch
block (no false lost-sparseness warning on XFS 1k, a true one on a copy that
lost its holes); XFS speculative preallocation past EOF and reflinked copies
shown apart and not counted as usage to save."""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from fixtures_util import MISSING, fixtures_dir, repunch_innodb
from fsmount import MountUnavailable, mounted


def _innodb_copy(kind: str, workdir):
    """A context: ``kind`` mounted, the innodb fixture folder copied in with its holes."""
    if fixtures_dir() is None:
        pytest.fail(MISSING, pytrace=False)
    cm = mounted(kind, workdir)
    try:
        mp = cm.__enter__()
    except MountUnavailable as e:
        pytest.fail(f"cannot test on {kind}: {e}", pytrace=False)
    shutil.copytree(fixtures_dir() / "innodb", mp / "innodb")
    repunch_innodb(mp)
    os.sync()
    return cm, mp


@pytest.fixture(scope="module")
def xfs1k(tmp_path_factory):
    cm, mp = _innodb_copy("xfs1k", tmp_path_factory.mktemp("xfs1k"))
    yield mp
    cm.__exit__(None, None, None)


@pytest.fixture(scope="module")
def xfs4k(tmp_path_factory):
    cm, mp = _innodb_copy("xfs4k", tmp_path_factory.mktemp("xfs4k"))
    yield mp
    cm.__exit__(None, None, None)


@pytest.fixture(scope="module")
def btrfs(tmp_path_factory):
    cm, mp = _innodb_copy("btrfs-zstd", tmp_path_factory.mktemp("btrfs"))
    yield mp
    cm.__exit__(None, None, None)


def xfs_bmap_split(path) -> dict[str, int]:
    """data / unwritten / hole bytes inside the file size from ``xfs_bmap -vp`` (512-byte units)."""
    size = os.stat(path).st_size
    out = {"data": 0, "unwritten": 0, "hole": 0, "shared": 0}
    text = subprocess.run(["xfs_bmap", "-vp", str(path)], capture_output=True, text=True, check=True).stdout
    for line in text.splitlines():
        m = re.match(r"\s*\d+: \[(\d+)\.\.(\d+)\]:\s+(hole|\S+)(.*)$", line)
        if not m:
            continue
        a, b = int(m.group(1)) * 512, (int(m.group(2)) + 1) * 512
        a, b = min(a, size), min(b, size)
        if b <= a:
            continue
        if m.group(3) == "hole":
            out["hole"] += b - a
            continue
        flags = int(m.group(4).split()[-1], 8)
        if flags & 0o10000:            # BMV_OF_PREALLOC: unwritten
            out["unwritten"] += b - a
        else:
            out["data"] += b - a
            if flags & 0o100000:       # BMV_OF_SHARED
                out["shared"] += b - a
    out["hole"] += size - sum(out[k] for k in ("data", "unwritten", "hole"))
    return out


def scan_files(root):
    from dbxray.parsers.scan import scan
    ds = scan(str(root))
    return ds, {f.path: f for f in ds.files}


@pytest.mark.parametrize("fs_name", ["xfs1k", "xfs4k"])
def test_xfs_split_equals_xfs_bmap(fs_name, request):
    mp = request.getfixturevalue(fs_name)
    ds, files = scan_files(mp / "innodb" / "16k")
    checked = 0
    for f in ds.files:
        if not f.apparent_bytes:
            continue
        fs = f.fs
        assert fs.type == "xfs" and fs.extent_source == "fiemap"
        assert fs.block_size == (1024 if fs_name == "xfs1k" else 4096) and fs.st_blksize == 4096
        want = xfs_bmap_split(f.abspath)
        assert (fs.data, fs.unwritten, fs.hole) == (want["data"], want["unwritten"], want["hole"]), f.path
        assert fs.past_eof == 0 and fs.shared == 0
        # every allocated byte once: the split adds up to st_blocks, to the block that holds EOF
        assert 0 <= f.allocated_bytes - (fs.data + fs.unwritten + fs.past_eof + fs.metadata) < fs.block_size, f.path
        assert fs.metadata <= 4 * fs.block_size, f.path
        checked += 1
    assert checked >= 20
    assert any(f.fs.unwritten for f in ds.files) and any(f.fs.hole for f in ds.files)


def test_xfs1k_no_false_lost_sparseness(xfs1k, tmp_path):
    """MariaDB punches in st_blksize (4096) steps although the filesystem block is
    1 KiB: the re-punched copy has every hole the server made, and is not flagged."""
    ds, files = scan_files(xfs1k / "innodb" / "16k")
    pc = [f for f in ds.files if f.path.startswith("fx/t_pc_") and f.path.endswith(".ibd")]
    assert len(pc) >= 8
    for f in pc:
        assert f.fs.engine_block == 4096 and "fil_space_get_block_size" in f.fs.engine_block_rule
        sec = f.sections["innodb"]
        assert sec["expected_hole_bytes"] == sec["hole_bytes"] > 0, f.path
        assert not any("sparseness lost" in w for w in f.warnings), f.warnings
    # a copy that lost its holes (cp --sparse=never) is flagged, with the figures explained
    lost = xfs1k / "lost"
    lost.mkdir(exist_ok=True)
    # every byte written, as a plain copy or backup does (cp --sparse=never alone may reflink on XFS)
    (lost / "t_pc_zlib.ibd").write_bytes((xfs1k / "innodb/16k/fx/t_pc_zlib.ibd").read_bytes())
    os.sync()
    ds2, files2 = scan_files(lost)
    w = [w for w in files2["t_pc_zlib.ibd"].warnings if "sparseness lost" in w]
    assert w and "4096-byte blocks" in w[0] and "xfs" in w[0]


def test_btrfs_disk_bytes_equal_compsize(btrfs):
    if shutil.which("compsize") is None:
        pytest.fail("compsize is not installed (apt-get install btrfs-compsize)", pytrace=False)
    ds, files = scan_files(btrfs / "innodb" / "16k")
    checked = 0
    for f in ds.files:
        if f.allocated_bytes < 16384:
            continue
        out = subprocess.run(["compsize", "-b", f.abspath], capture_output=True, text=True).stdout
        m = re.search(r"^TOTAL\s+\d+%\s+(\d+)\s+(\d+)\s+(\d+)", out, re.M)
        assert m, out
        disk = int(m.group(1))
        assert f.fs.type == "btrfs" and f.fs.disk is not None, f.path
        assert abs(f.fs.disk - disk) <= 0.01 * disk, (f.path, f.fs.disk, disk)
        checked += 1
    assert checked >= 20
    # st_blocks counts compressed extents uncompressed: the real figure is smaller
    total_disk = sum(f.fs.disk for f in ds.files if f.fs.disk is not None)
    assert total_disk < sum(f.allocated_bytes for f in ds.files)
    assert ds.to_json()["filesystem"]["disk_known_files"] == sum(1 for f in ds.files if f.fs.disk is not None)
    # FIEMAP's ENCODED extents are the compressed ones filefrag shows
    f = files["fx/t_dynamic.ibd"]
    ff = subprocess.run(["filefrag", "-v", f.abspath], capture_output=True, text=True).stdout
    assert ("encoded" in ff) == (f.fs.encoded > 0)


def test_xfs_reflinked_copy_is_shared(xfs4k):
    src = xfs4k / "innodb/16k/fx/t_dynamic.ibd"
    dst = xfs4k / "reflink" / "t_dynamic.ibd"
    dst.parent.mkdir(exist_ok=True)
    r = subprocess.run(["cp", "--reflink=always", str(src), str(dst)], capture_output=True, text=True)
    assert r.returncode == 0, f"XFS made without reflink support? {r.stderr}"
    os.sync()
    ds, files = scan_files(dst.parent)
    fs = files["t_dynamic.ibd"].fs
    want = xfs_bmap_split(dst)
    assert fs.shared == want["shared"] == fs.data > 0


def test_xfs_preallocation_past_eof(xfs4k):
    """A file being appended (held open) has blocks allocated past EOF: shown as
    their own state, equal to filefrag's eof extents, never counted as usage to save."""
    p = xfs4k / "growing.bin"
    with open(p, "wb") as fh:
        for _ in range(3000):
            fh.write(b"x" * 16384)
        fh.flush()
        os.fsync(fh.fileno())
        st = os.stat(p)
        ds, files = scan_files(p)
        f = files[p.name] if p.name in files else ds.files[0]
        past = st.st_blocks * 512 - st.st_size
        if past <= 0:
            pytest.fail("XFS made no speculative preallocation for an appended file", pytrace=False)
        assert f.fs.past_eof == past and f.past_eof_bytes == past
        assert f.lasting_allocated_bytes == st.st_size
        assert f.to_json()["fs"]["past_eof_bytes"] == past


def test_tmpfs_fallocated_split(tmp_path):
    try:
        with mounted("tmpfs", tmp_path) as mp:
            p = mp / "fa.ibd"
            fd = os.open(p, os.O_RDWR | os.O_CREAT)
            try:
                os.write(fd, b"x" * 8192)
                os.posix_fallocate(fd, 8192, 65536)
            finally:
                os.close(fd)
            from dbxray.parsers.scan import scan
            f = scan(str(p)).files[0]
            fs = f.fs
            assert fs.type == "tmpfs" and fs.extent_source == "seek_hole"
            assert (fs.data, fs.unwritten, fs.hole, fs.past_eof) == (8192, 65536, 0, 0)
            assert f.unwritten_bytes == 65536 and f.hole_bytes == 65536
    except MountUnavailable as e:
        pytest.fail(f"cannot test on tmpfs: {e}", pytrace=False)


def test_saved_scan_keeps_fs_facts(xfs1k, tmp_path):
    import json
    from dbxray.parsers.savedscan import load_saved_scan
    ds, _ = scan_files(xfs1k / "innodb" / "16k" / "fx")
    p = tmp_path / "s.dbxray.json"
    p.write_text(json.dumps(ds.to_json()))
    back = load_saved_scan(str(p))
    for a, b in zip(ds.files, back.files):
        assert a.fs == b.fs and b.fs_block == a.fs.block_size


def test_views_draw_each_byte_once(xfs4k, qapp):
    """Sizes and Holes bars: written + unwritten + holes stay inside the apparent size."""
    from dbxray.parsers.tree import build_tree
    from dbxray.viz.holes import file_holes
    ds, files = scan_files(xfs4k / "innodb" / "16k")
    root = build_tree(ds)
    for n in root.walk():
        if n.kind != "file":
            continue
        blk = n.ref.fs.block_size
        assert n.data + n.unwritten + n.unallocated <= n.apparent + blk, n.name
        fh = file_holes(n.ref)
        assert fh.written + fh.unwritten_bytes + (fh.hole_bytes - fh.unwritten_bytes) <= fh.apparent + blk

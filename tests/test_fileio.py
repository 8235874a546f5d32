"""The read-only file layer: holes, allocation, mmap/pread, files changing."""
import json
import os
import time

import numpy as np
import pytest

from dbxray.parsers.fileio import FileReadError, ReadOnlyFile, fiemap, file_facts, fs_block_size, list_holes, merge_ranges
from dbxray.parsers.model import UNIT_DTYPE, empty_units


def _manifest(root, name):
    return json.loads((root / name / "manifest.json").read_text())


def test_innodb_holes_and_allocation_equal_manifest(sparse_fixtures):
    man = _manifest(sparse_fixtures, "innodb")
    checked = 0
    for f in man["files"]:
        size, alloc, holes = file_facts(str(sparse_fixtures / "innodb" / f["path"]))
        assert size == f["apparent_size"], f["path"]
        assert [list(h) for h in holes] == f["holes"], f["path"]
        # a copy has no ext4 extent-tree block beyond the extents: the manifest records that figure
        assert alloc == f.get("copy_allocated_bytes", f["allocated_bytes"]), f["path"]
        checked += 1
    assert checked == len(man["files"]) > 200


def test_page_compressed_file_is_sparse(sparse_fixtures):
    f = next(x for x in _manifest(sparse_fixtures, "innodb")["files"] if x["path"] == "16k/fx/t_pc_zlib.ibd")
    size, alloc, holes = file_facts(str(sparse_fixtures / "innodb" / f["path"]))
    assert alloc == f["allocated_bytes"] == 151552 and size == 327680
    assert sum(n for _, n in holes) == f["hole_bytes"]


def test_tokudb_holes_and_allocation_equal_manifest(sparse_fixtures):
    man = _manifest(sparse_fixtures, "tokudb")
    for f in man["files"]:
        p = sparse_fixtures / "tokudb" / f["path"]
        size, alloc, holes = file_facts(str(p))
        assert size == f["apparent_size"]
        assert alloc == f["allocated_size"], f["path"]
        assert [list(h) for h in holes] == f["holes"], f["path"]


def test_unwritten_extents_reported(sparse_fixtures):
    f = next(x for x in _manifest(sparse_fixtures, "innodb")["files"] if x["path"] == "datadir16k/ibdata1")
    with ReadOnlyFile(str(sparse_fixtures / "innodb" / f["path"])) as fh:
        unwritten = fh.unwritten()
        extents = fh.fiemap()
    assert [[o, n, "unwritten"] for o, n in unwritten] == [r for r in f["fiemap_ranges"] if r[2] == "unwritten"]
    assert [[e.offset, e.length, e.kind] for e in extents] == f["fiemap_ranges"]


def test_terabyte_sparse_file_lists_without_reading(tmp_path):
    p = tmp_path / "huge.ibd"
    with open(p, "wb") as fh:
        fh.truncate(1 << 40)
        fh.seek((1 << 40) - 4096)
        fh.write(b"x" * 4096)
    with ReadOnlyFile(str(p)) as f:
        holes = f.holes()
        assert f.size == 1 << 40
        assert f.allocated_bytes <= 64 * 1024
    assert holes == [(0, (1 << 40) - 4096)]
    fd = os.open(p, os.O_RDONLY)
    try:
        assert list_holes(fd, 1 << 40) == [(0, (1 << 40) - 4096)]
    finally:
        os.close(fd)


def test_pread_and_mmap_agree_and_truncation_is_named(tmp_path):
    p = tmp_path / "f.bin"
    data = bytes(range(256)) * 64
    p.write_bytes(data)
    with ReadOnlyFile(str(p)) as f:
        assert f.pread(100, 50) == data[100:150]
        assert f.array(np.uint8, 0, 10).tolist() == list(data[:10])
        with pytest.raises(FileReadError) as e:
            f.read_exact(len(data) - 10, 100)
        assert str(p) in str(e.value) and f"offset {len(data) - 10}" in str(e.value)


def test_pread_fallback_when_mmap_impossible(tmp_path):
    p = tmp_path / "empty.bin"
    p.write_bytes(b"")
    with ReadOnlyFile(str(p)) as f:
        assert f.mmap() is None
        assert f.pread(0, 10) == b""


def test_file_shrinking_during_read_is_reported(tmp_path):
    p = tmp_path / "shrink.bin"
    p.write_bytes(b"a" * 65536)
    with ReadOnlyFile(str(p)) as f:
        os.truncate(p, 4096)
        msg = f.changed()
        assert msg is not None and "size changed" in msg and str(p) in msg
        # reading past the new end must not crash the process (SIGBUS): we read via pread then
        assert len(f.pread(0, 100)) == 100


def test_missing_file_error_names_path(tmp_path):
    with pytest.raises(FileReadError) as e:
        ReadOnlyFile(str(tmp_path / "nope.ibd"))
    assert "nope.ibd" in str(e.value)


def test_opened_read_only(tmp_path, monkeypatch):
    p = tmp_path / "x.bin"
    p.write_bytes(b"abc")
    flags_seen = []
    real_open = os.open

    def spy(path, flags, *a, **k):
        flags_seen.append(flags)
        return real_open(path, flags, *a, **k)

    monkeypatch.setattr(os, "open", spy)
    with ReadOnlyFile(str(p)) as f:
        f.pread(0, 3)
    assert flags_seen and all(fl & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC) == 0 for fl in flags_seen)


def test_fs_block_size_and_merge():
    assert fs_block_size("/") >= 512
    assert merge_ranges([(10, 5), (0, 10), (30, 1)]) == [(0, 15), (30, 1)]


def test_ten_million_units_fit_in_500_mb():
    assert UNIT_DTYPE.itemsize * 10_000_000 < 500 * 1024 * 1024
    u = empty_units(1000)
    assert u.nbytes == 1000 * UNIT_DTYPE.itemsize and (u["owner"] == -1).all() and np.isnan(u["fill"]).all()


def _mixed_file(path, ops, size):
    fd = os.open(path, os.O_CREAT | os.O_RDWR | os.O_TRUNC, 0o644)
    try:
        os.ftruncate(fd, size)
        for kind, off, ln in ops:
            if kind == "w":
                os.pwrite(fd, b"x" * ln, off)
            else:
                os.posix_fallocate(fd, off, ln)
        os.fsync(fd)
    finally:
        os.close(fd)


@pytest.mark.parametrize("ops,size", [
    ([("f", 0, 1 << 20), ("w", 4096, 8192), ("w", 2 << 20, 4096)], 4 << 20),
    ([("w", 0, 4096), ("f", 8192, 65536), ("w", 1 << 20, 1 << 20)], 3 << 20),
    ([("w", i * 8192, 4096) for i in range(1500)], 1500 * 8192 + 5000),     # thousands of extents
    ([], 1 << 20),
])
def test_fiemap_batches_agree_and_tile_the_file(tmp_path, ops, size):
    """The extent map read in one ioctl, in batches of 3 and one extent at a
    time is the same; its ranges tile the file, neighbours differ in kind,
    and its holes agree with SEEK_HOLE wherever no extent is unwritten."""
    p = tmp_path / "mixed.bin"
    _mixed_file(p, ops, size)
    fd = os.open(p, os.O_RDONLY)
    try:
        maps = [fiemap(fd, size, batch) for batch in (512, 3, 1)]
        if maps[0] is None:
            pytest.skip("no FIEMAP on this filesystem")
        assert maps[0] == maps[1] == maps[2]
        ext = maps[0]
        assert ext[0].offset == 0 and sum(e.length for e in ext) == size
        assert all(a.offset + a.length == b.offset and a.kind != b.kind for a, b in zip(ext, ext[1:]))
        if not any(e.kind == "unwritten" for e in ext):
            assert [(e.offset, e.length) for e in ext if e.kind == "hole"] == list_holes(fd, size)
        if ops and ops[0][0] == "f":
            assert any(e.kind == "unwritten" for e in ext)
    finally:
        os.close(fd)


def test_holes_fall_back_when_cached_data_sits_on_unwritten_extents(tmp_path, monkeypatch):
    """New data in the page cache over extents FIEMAP still calls unwritten (a
    file rewritten a moment ago; seen in CI): non-zero cached bytes there can
    only be new data, so the holes come from SEEK_DATA / SEEK_HOLE. A truly
    unwritten (fallocated) range, even cached as zeros after a read, stays a hole."""
    import dbxray.parsers.fileio as fio
    p = tmp_path / "rewritten.tokudb"
    p.write_bytes(bytes(range(256)) * 128)          # 32 KiB, cached
    p.read_bytes()
    real = fio.fiemap_array
    monkeypatch.setattr(fio, "fiemap_array", lambda fd, start=0, length=None, batch=512:
                        np.array([(0, os.fstat(fd).st_size, fio.FIEMAP_EXTENT_UNWRITTEN)], dtype=np.int64))
    with ReadOnlyFile(str(p)) as f:
        assert f.holes() == []
        assert f.unwritten() == []
    # only some pages cached and non-zero: still found
    q = tmp_path / "partly.bin"
    q.write_bytes(bytes(64 << 10) + b"z" * 4096 + bytes(60 << 10))
    with ReadOnlyFile(str(q)) as f:
        assert f.holes() == []
    # a file changed longer ago than writeback takes is not read for this: FIEMAP is trusted
    monkeypatch.setattr(fio, "_FRESH_SECONDS", 0)
    with ReadOnlyFile(str(q)) as f:
        assert f.holes() == [(0, 128 << 10)]
    monkeypatch.setattr(fio, "_FRESH_SECONDS", 900)
    monkeypatch.setattr(fio, "fiemap_array", real)
    u = tmp_path / "fallocated.bin"
    with open(u, "wb") as fh:
        try:
            os.posix_fallocate(fh.fileno(), 0, 1 << 20)
        except OSError:
            pytest.skip("no fallocate here")
    u.read_bytes()                                   # zero pages now cached over the unwritten extent
    with ReadOnlyFile(str(u)) as f:
        ext = f.fiemap()
        if not ext or ext[0].kind != "unwritten":
            pytest.skip("this filesystem does not report unwritten extents")
        assert f.holes() == [(0, 1 << 20)]
        assert f.unwritten() == [(0, 1 << 20)]


def test_holes_fall_back_when_fiemap_misses_data(tmp_path, monkeypatch):
    """A range FIEMAP maps to nothing but SEEK_DATA finds data in (extents of a
    file written a moment ago, not yet listed): the holes come from SEEK_DATA /
    SEEK_HOLE, and the extent map is dropped rather than trusted."""
    import dbxray.parsers.fileio as fio
    p = tmp_path / "fresh.frm"
    p.write_bytes(b"x" * 3616)
    monkeypatch.setattr(fio, "fiemap_array", lambda fd, start=0, length=None, batch=512:
                        np.zeros((0, 3), dtype=np.int64))   # all hole
    with ReadOnlyFile(str(p)) as f:
        assert f.holes() == []
        assert f.fiemap() is None and f.unwritten() == []
    monkeypatch.undo()
    # a true hole FIEMAP reports is kept
    q = tmp_path / "sparse.bin"
    with open(q, "wb") as fh:
        fh.truncate(1 << 20)
        fh.write(b"y" * 4096)
    with ReadOnlyFile(str(q)) as f:
        holes = f.holes()
    assert holes == [(4096, (1 << 20) - 4096)]


def test_extents_within_against_a_byte_by_byte_reading():
    """extents_within: [0, size) covered once, in order, no two neighbours of one kind, and
    every byte of the kind the raw FIEMAP list gives it (unwritten flag, data, or no extent:
    hole), on random lists with gaps, touching extents and extents past the end."""
    import random
    from dbxray.parsers.fileio import FIEMAP_EXTENT_UNWRITTEN, extents_within
    rng = random.Random(11)
    for _ in range(3000):
        raw, pos = [], 0
        for _ in range(rng.randint(0, 8)):
            pos += rng.choice([0, 0, rng.randint(1, 40)])
            ln = rng.randint(1, 50)
            raw.append((pos, ln, rng.choice([0, 1, FIEMAP_EXTENT_UNWRITTEN])))
            pos += ln
        size = rng.randint(0, pos + 50)
        want = ["hole"] * size
        for logical, ln, flags in raw:
            for b in range(logical, min(logical + ln, size)):
                want[b] = "unwritten" if flags & FIEMAP_EXTENT_UNWRITTEN else "data"
        got = extents_within(raw, size)
        at = 0
        for i, e in enumerate(got):
            assert e.offset == at and e.length > 0
            assert i == 0 or got[i - 1].kind != e.kind
            assert want[e.offset:e.offset + e.length] == [e.kind] * e.length
            at += e.length
        assert at == size


def test_adopt_holes_only_from_the_same_file(tmp_path, sparse_fixtures):
    """A second open of a file takes the holes a first one listed (the scan's, FileEntry.seen)
    only while size, mtime, device and inode are those the first saw; otherwise it lists them."""
    import shutil
    src = sparse_fixtures / "innodb" / "16k" / "fx" / "t_pc_zlib.ibd"
    with ReadOnlyFile(str(src)) as f:
        holes, st = f.holes(), f.stat
        stamp = (st.st_size, st.st_mtime_ns, st.st_dev, st.st_ino)
    assert holes
    with ReadOnlyFile(str(src)) as g:
        assert g.adopt_holes(holes, stamp) and g.holes() == holes
        assert not g.adopt_holes(holes, stamp)        # already listed: kept
    with ReadOnlyFile(str(src)) as g:
        assert not g.adopt_holes([(0, 1)], (st.st_size, st.st_mtime_ns + 1, st.st_dev, st.st_ino))
        assert not g.adopt_holes([(0, 1)], (st.st_size, st.st_mtime_ns))     # an old two-field stamp
        assert g.holes() == holes
    other = tmp_path / "copy.ibd"
    shutil.copy2(src, other)                           # same size and mtime, another inode
    with ReadOnlyFile(str(other)) as g:
        assert not g.adopt_holes([(0, 1)], stamp) and g.holes() != [(0, 1)]


def test_pread_many_nomap_equals_pread_nomap_and_reads_no_hole(tmp_path):
    """The batched read of a page-compressed file's stored pages gives what one read after
    another gives, on reads inside data, across holes and unwritten extents, past the end
    and empty, and it reads no hole: the file's holes and allocation are unchanged."""
    p = tmp_path / "pc.bin"
    _mixed_file(p, [("w", i * 16384, 4096 * (1 + i % 3)) for i in range(200)] + [("f", 200 * 16384, 65536)],
                210 * 16384)
    rng = np.random.default_rng(7)
    offsets = np.concatenate([np.arange(200) * 16384, rng.integers(0, 210 * 16384, 300), [210 * 16384 - 10, 0]])
    lengths = np.concatenate([4096 * (1 + np.arange(200) % 3), rng.integers(0, 40000, 300), [100, 0]])
    before = os.stat(p).st_blocks
    with ReadOnlyFile(str(p)) as f:
        holes = f.holes()
        assert len(holes) > 100
        got = f.pread_many_nomap(offsets, lengths)
        want = [f.pread_nomap(int(o), int(n)) for o, n in zip(offsets, lengths)]
        assert got == want
        assert f.pread_many_nomap(np.zeros(0, np.int64), np.zeros(0, np.int64)) == []
        with pytest.raises(FileReadError):
            f.pread_many_nomap(np.array([-1]), np.array([10]))
    with ReadOnlyFile(str(p)) as f:
        assert f.holes() == holes
    assert os.stat(p).st_blocks == before


def test_long_extent_lists_split_in_numpy_as_one_by_one():
    """The numpy paths for long FIEMAP lists (a page-compressed file's thousands of extents)
    give what the loops give: extents_within's ranges and split_extents' sums, on lists in
    file order with gaps, touching extents, unwritten / shared / encoded flags, extents past
    EOF; and lists FIEMAP would not give (overlaps, empty extents) go to the loop."""
    import random
    from dbxray.parsers import fileio, fsfacts
    rng = random.Random(3)
    flags = [0, 1, 0x0800, 0x2000, 0x0008, 0x2001]
    for _ in range(400):
        raw, pos = [], rng.choice([0, 4096])
        for _ in range(rng.randint(64, 400)):
            pos += rng.choice([0, 0, rng.randint(1, 8) * 4096])
            ln = rng.randint(1, 16) * 4096
            raw.append((pos, ln, rng.choice(flags)))
            pos += ln
        size = rng.randint(0, pos + 50000)
        assert fileio.extents_within(raw, size) == fileio._extents_within_loop(raw, size)
        block = rng.choice([512, 4096, 65536])
        eof_block = -(-size // block) * block
        assert fsfacts.split_extents(raw, size, block) == fsfacts._split_extents_loop(raw, size, eof_block)
    odd = [(i * 10, 15, 0) for i in range(100)]                 # overlapping
    assert fileio._extents_within_sorted(odd, 2000) is None
    assert fileio.extents_within(odd, 2000) == fileio._extents_within_loop(odd, 2000)
    empty = [(i * 10, 0 if i == 50 else 5, 0) for i in range(100)]
    assert fileio._extents_within_sorted(empty, 2000) is None


def _many_extents_file(path, n: int = 300):
    """A file of ``n`` 16 KiB pages, each page's second half a punched hole, every 7th page
    fallocated and never written (unwritten), as a page-compressed tablespace looks."""
    from fixtures_util import punch_hole
    page = 16384
    with open(path, "wb") as fh:
        fh.write(os.urandom(page) * n)
    for i in range(n):
        punch_hole(path, i * page + 8192, 8192)
    fd = os.open(path, os.O_RDWR)
    try:
        for i in range(0, n, 7):
            os.posix_fallocate(fd, i * page + 8192, 4096)
        os.fsync(fd)
    finally:
        os.close(fd)


def test_long_fiemap_lists_give_the_holes_the_extents_give(tmp_path, monkeypatch):
    """holes() of a file with thousands of FIEMAP ranges comes from arrays
    (ReadOnlyFile._list_holes_from), not an Extent per range: the same list as merging the
    extents' non-data ranges, the same unwritten extents, recently changed or not."""
    from dbxray.parsers import fileio
    p = tmp_path / "pc.ibd"
    _many_extents_file(p)
    for fresh in (True, False):
        monkeypatch.setattr(fileio, "_FRESH_SECONDS", 10 ** 9 if fresh else 0)
        with ReadOnlyFile(str(p)) as f:
            raw = f.fiemap_raw()
            if raw is None:
                pytest.skip("no FIEMAP here")
            assert len(raw) >= fileio._EXTENTS_VECTORISED
            ext = fileio._extents_within_loop(raw, f.size)
            want = fileio.merge_ranges((e.offset, e.length) for e in ext if e.kind != "data")
            calls = []
            real = fileio.ReadOnlyFile._list_holes_from
            monkeypatch.setattr(fileio.ReadOnlyFile, "_list_holes_from",
                                lambda self, *a: calls.append(1) or real(self, *a))
            got = f.holes()
            monkeypatch.setattr(fileio.ReadOnlyFile, "_list_holes_from", real)
            assert calls and got == want and len(got) >= 250
            assert f.unwritten() == [(e.offset, e.length) for e in ext if e.kind == "unwritten"]
            assert f.unwritten()


def test_long_fiemap_list_that_misses_data_falls_back_to_seek_hole(tmp_path, monkeypatch):
    """A FIEMAP that leaves data out (a filesystem whose FIEMAP lists too little) is caught by
    SEEK_DATA: on a recently changed file every hole is asked about, on an older one the largest
    and 63 spread over the list (a missing data extent makes a hole larger than the others):
    the holes then come from SEEK_DATA/SEEK_HOLE, which are right."""
    from dbxray.parsers import fileio
    p = tmp_path / "pc.ibd"
    _many_extents_file(p)
    with ReadOnlyFile(str(p)) as f:
        truth = fileio.list_holes(f.fd, f.size)
    for fresh in (True, False):
        monkeypatch.setattr(fileio, "_FRESH_SECONDS", 10 ** 9 if fresh else 0)
        for gone in (0, 137, 299):           # the data of one page left out of FIEMAP's list
            with ReadOnlyFile(str(p)) as f:
                raw = [r for r in f.fiemap_raw() if not (r[0] == gone * 16384 and not r[2] & 0x800)]
                assert len(raw) < len(f.fiemap_raw())
                f._fiemap_raw, f._fiemap_arr = raw, np.array(raw, dtype=np.int64)
                assert f.holes() == truth

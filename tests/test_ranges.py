"""A file's holes and unwritten extents as :class:`dbxray.parsers.ranges.Ranges`: the list
of (offset, length) tuples every reader iterates, read-only, with its array and total made
once (a page-compressed tablespace has thousands of holes, and the page map, the hole bytes
of every unit and the file's total each converted the list again)."""
from __future__ import annotations

import copy
import os
import pickle

import numpy as np
import pytest

from dbxray.parsers.fileio import ReadOnlyFile, list_holes, merge_ranges
from dbxray.parsers.innodb.pagemap import pages_in_holes, pages_touching_holes
from dbxray.parsers.model import FileEntry
from dbxray.parsers.ranges import Ranges, ranges_array, ranges_total, sorted_ranges_array
from dbxray.parsers.units import covered_upto, hole_bytes_per_unit

from fixtures_util import punch_hole

BLOCK = 4096


def test_ranges_is_a_read_only_list_with_its_array_and_total():
    r = Ranges([(0, 4096), (8192, 100), (20000, 5)])
    assert r == [(0, 4096), (8192, 100), (20000, 5)] and isinstance(r, list)
    assert r.total() == 4201 and ranges_total(r) == 4201
    a = r.array()
    assert a.dtype == np.int64 and a.shape == (3, 2) and a.tolist() == [[0, 4096], [8192, 100], [20000, 5]]
    assert r.array() is a                                   # made once
    with pytest.raises(ValueError):
        a[0, 0] = 1                                         # and not to be written through
    for change in (lambda: r.append((1, 1)), lambda: r.extend([(1, 1)]), lambda: r.insert(0, (1, 1)),
                   lambda: r.pop(), lambda: r.remove((0, 4096)), r.clear, r.sort, r.reverse,
                   lambda: r.__setitem__(0, (1, 1)), lambda: r.__delitem__(0), lambda: r.__iadd__([(1, 1)]),
                   lambda: r.__imul__(2)):
        with pytest.raises(TypeError):
            change()
    assert r == [(0, 4096), (8192, 100), (20000, 5)] and r.total() == 4201
    for back in (pickle.loads(pickle.dumps(r)), copy.copy(r), copy.deepcopy(r)):
        assert type(back) is Ranges and back == r and back.total() == 4201
        assert np.array_equal(back.array(), a)
    # slices and sums are plain lists, free to change
    assert type(r[:2]) is list and type(r + []) is list
    empty = Ranges()
    assert empty == [] and not empty and empty.total() == 0 and empty.array().shape == (0, 2)


def test_ranges_from_arrays():
    r = Ranges.from_arrays(np.array([10, 50], dtype=np.int64), np.array([5, 7], dtype=np.int32))
    assert r == [(10, 5), (50, 7)] and all(type(v) is int for pair in r for v in pair)
    assert r.total() == 12 and r.array().tolist() == [[10, 5], [50, 7]]
    assert Ranges.from_arrays(np.zeros(0, np.int64), np.zeros(0, np.int64)) == []


def test_the_helpers_take_ranges_arrays_and_lists():
    pairs = [(8192, 100), (0, 4096)]
    assert ranges_array(pairs).tolist() == [[8192, 100], [0, 4096]]      # in the order given
    assert ranges_array(np.array(pairs, dtype=np.int32)).dtype == np.int64
    assert sorted_ranges_array(pairs).tolist() == [[0, 4096], [8192, 100]]
    assert ranges_total(pairs) == 4196 and ranges_total([]) == 0
    r = merge_ranges(pairs + [(4096, 10)])                  # sorted, touching ones merged
    assert type(r) is Ranges and r == [(0, 4106), (8192, 100)]
    assert sorted_ranges_array(r) is r.array()


def _holey_file(path, holes: int = 100, unwritten: tuple[int, int] | None = None) -> list[tuple[int, int]]:
    """A 2 MiB file of data with ``holes`` one-block holes punched every other block (more
    than the FIEMAP list the file layer splits in a loop) and, at the end, ``unwritten``: a
    range punched and then fallocated (allocated, never written)."""
    size = 2 << 20
    with open(path, "wb") as fh:
        fh.write(np.random.default_rng(1).integers(1, 256, size=size, dtype=np.uint8).tobytes())
        fh.flush()
        os.fsync(fh.fileno())
    want = []
    for k in range(holes):
        off = (2 * k + 1) * BLOCK
        punch_hole(path, off, BLOCK)
        want.append((off, BLOCK))
    if unwritten is not None:
        off, ln = unwritten
        punch_hole(path, off, ln)
        fd = os.open(path, os.O_RDWR)
        try:
            os.posix_fallocate(fd, off, ln)
            os.fsync(fd)
        finally:
            os.close(fd)
        want.append(unwritten)
    return want


def _fiemap_lists(path) -> bool:
    with ReadOnlyFile(str(path)) as f:
        return f.fiemap() is not None


def test_the_file_layer_lists_holes_and_unwritten_extents_as_ranges(tmp_path):
    p = tmp_path / "holey.bin"
    unw = (1 << 20, 64 * BLOCK)
    want = _holey_file(p, 100, unw)
    if not _fiemap_lists(p):
        pytest.skip("no FIEMAP on this filesystem")
    with ReadOnlyFile(str(p)) as f:
        holes = f.holes()
        assert type(holes) is Ranges and holes == want
        assert holes.array().tolist() == [list(h) for h in want]
        assert holes.total() == sum(n for _o, n in want)
        u = f.unwritten()
        assert type(u) is Ranges and u == [unw]
        assert f.unwritten() is u                           # read-only: handed out as it is
        # the page-by-page readers of the file layer see the same holes
        offs = np.array([0, BLOCK, BLOCK + 10, 2 * BLOCK, unw[0] + 5], dtype=np.int64)
        got = f.touches_hole_many(offs, np.full(len(offs), 8, dtype=np.int64))
        assert got.tolist() == [False, True, True, False, True]
        assert [f.touches_hole(int(o), 8) for o in offs] == got.tolist()
    # SEEK_HOLE (the listing without FIEMAP): every punched hole; an unwritten range is a hole
    # to some filesystems (ext4, XFS) and data to others
    fd = os.open(p, os.O_RDONLY)
    try:
        seek = list_holes(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)
    assert type(seek) is Ranges and seek in (want, want[:-1])


def test_a_second_open_shares_the_ranges_and_copies_a_plain_list(tmp_path):
    p = tmp_path / "holey.bin"
    _holey_file(p, 70)
    with ReadOnlyFile(str(p)) as a:
        holes, unwritten = a.holes(), a.unwritten()
        st = a.stat
        stamp = (st.st_size, st.st_mtime_ns, st.st_dev, st.st_ino)
    with ReadOnlyFile(str(p)) as b:
        assert b.adopt_holes(holes, stamp, unwritten)
        assert b.holes() is holes                           # no copy of thousands of tuples
    as_numpy = [(np.int64(o), np.int64(n)) for o, n in holes]
    with ReadOnlyFile(str(p)) as c:
        assert c.adopt_holes(as_numpy, stamp, [])
        got = c.holes()
        assert got == list(holes) and got is not as_numpy
        assert all(type(v) is int for pair in got for v in pair)
    with ReadOnlyFile(str(p)) as d:                         # another file's stamp: not taken
        assert not d.adopt_holes(holes, (1, 2, 3, 4), unwritten)
        assert d.holes() == holes and d.holes() is not holes


@pytest.mark.parametrize("physical", [4096, 16384])
def test_every_reader_gives_the_same_for_ranges_and_lists(physical):
    rng = np.random.default_rng(7)
    starts = np.sort(rng.choice(np.arange(0, 4000) * 1000, size=300, replace=False)).astype(np.int64)
    lengths = rng.integers(1, 999, size=300).astype(np.int64)     # disjoint: every start 1,000 apart
    r = Ranges.from_arrays(starts, lengths)
    plain = list(r)
    shuffled = [plain[i] for i in rng.permutation(len(plain))]
    n = 4_000_000 // physical
    assert np.array_equal(pages_in_holes(r, n, physical), pages_in_holes(plain, n, physical))
    assert np.array_equal(pages_touching_holes(r, n, physical), pages_touching_holes(plain, n, physical))
    assert pages_touching_holes(r, n, physical).sum() > 0
    units = np.arange(n, dtype=np.int64) * physical
    want = hole_bytes_per_unit(plain, units, physical)
    assert want.sum() == lengths.sum()
    assert np.array_equal(hole_bytes_per_unit(r, units, physical), want)
    assert np.array_equal(hole_bytes_per_unit(shuffled, units, physical), want)   # a plain list is sorted first
    assert np.array_equal(covered_upto(r, units), covered_upto(plain, units))
    e1 = FileEntry(path="a.ibd", abspath="/a.ibd", holes=r, unwritten=Ranges(plain[:3]))
    e2 = FileEntry(path="a.ibd", abspath="/a.ibd", holes=plain, unwritten=plain[:3])
    assert e1.hole_bytes == e2.hole_bytes == int(lengths.sum())
    assert e1.unwritten_bytes == e2.unwritten_bytes == int(lengths[:3].sum())

"""The steps of build_page_map one by one (parsers/innodb/pagemap.py), on real
fixture files and damaged copies of them: page size from page 0, the pages to
map, the flavour, the doublewrite buffer, page numbers, space ids, unknown types,
extents and owners, each checked against what the whole map and the manifest say."""
from __future__ import annotations

import shutil
import struct

import numpy as np
import pytest

from dbxray.parsers.fileio import ReadOnlyFile
from dbxray.parsers.innodb import pagemap as P
from dbxray.parsers.innodb.fsp import decode_fsp_flags


def _walk_to(path, upto: str, holes=()):
    """Run build_page_map's steps up to and including ``upto``; (pm, walk, file)."""
    f = ReadOnlyFile(str(path))
    w, flags, physical, n, trailing, errors = P._page_size(f, lambda: None)
    n, in_hole = P._pages_to_map(w, flags, physical, n, list(holes), errors)
    P._header_blocks(w, n, physical, list(holes), in_hole, False)
    pm = P._new_page_map(w, str(path), flags, physical, n, trailing, in_hole, errors)
    steps = [("doublewrite", P._doublewrite), ("page_numbers", P._check_page_numbers),
             ("encryption", P._encryption), ("compression", lambda pm, w: P._page_compression(pm, w, True)),
             ("decoded", P._apply_decoded_headers), ("space_ids", P._check_space_ids),
             ("unknown", P._check_unknown_types), ("extents", P._extents), ("segments", P._segments),
             ("owners", P._owners), ("fill", P._fill), ("zero", P._zero_in_use)]
    if upto != "new":
        for name, step in steps:
            step(pm, w)
            if name == upto:
                break
    return pm, w, f


@pytest.fixture
def t_dynamic(sparse_fixtures):
    return sparse_fixtures / "innodb" / "16k" / "fx" / "t_dynamic.ibd"


def test_page_size_from_page_0_and_from_page_1_when_the_flags_lie(t_dynamic, tmp_path):
    f = ReadOnlyFile(str(t_dynamic))
    w, flags, physical, n, trailing, errors = P._page_size(f, lambda: None)
    assert (physical, flags.logical_page_size, trailing, errors) == (16384, 16384, 0, [])
    assert n == f.size // 16384 and w.ext == 64 and w.fil0.page_no == 0
    bad = tmp_path / "bad.ibd"
    data = bytearray(t_dynamic.read_bytes())
    struct.pack_into(">I", data, 38 + 16, 0x7F << 6)        # FSP_SPACE_FLAGS: impossible page size
    bad.write_bytes(bytes(data[:-100]))                     # and a torn end
    _, flags, physical, n, trailing, errors = P._page_size(ReadOnlyFile(str(bad)), lambda: None)
    assert physical == 16384 and not flags.valid and trailing == 16384 - 100
    assert "page size 16384 found from page 1" in errors[0][0] and "trailing bytes" in errors[-1][0]


def test_pages_to_map_stop_at_a_trailing_hole_beyond_the_fsp_size(t_dynamic, tmp_path):
    big = tmp_path / "big.ibd"
    shutil.copy(t_dynamic, big)
    size = big.stat().st_size
    with open(big, "r+b") as fh:
        fh.truncate(size + (3 << 30))                       # 3 GiB of hole past the data
    f = ReadOnlyFile(str(big))
    w, flags, physical, n, trailing, errors = P._page_size(f, lambda: None)
    n2, in_hole = P._pages_to_map(w, flags, physical, n, f.holes(), errors)
    assert n2 == size // 16384 < n and len(in_hole) == n2
    assert "lie in a trailing hole" in errors[-1][0]


def test_flavor_from_flags_and_page_types():
    fc = decode_fsp_flags(0x15)                             # full_crc32, 16k
    my = decode_fsp_flags(0x21)                             # MySQL post-antelope, 16k
    assert P._flavor(fc, set()) == "mariadb"
    assert P._flavor(my, {17855}) == "mysql"
    assert P._flavor(my, {17855, 17853}) == "mysql"         # FIL_PAGE_SDI
    assert P._flavor(my, {17855, 18}) == "mariadb"          # FIL_PAGE_TYPE_INSTANT, no SDI
    assert P._flavor(my, {34354}) == "mariadb"              # FIL_PAGE_PAGE_COMPRESSED


def test_doublewrite_buffer_of_the_system_tablespace(sparse_fixtures):
    pm, w, _ = _walk_to(sparse_fixtures / "innodb" / "datadir16k" / "ibdata1", "doublewrite")
    d = np.nonzero(pm.doublewrite)[0]
    # TRX_SYS_DOUBLEWRITE_BLOCK1/2: two extents of 64 pages (trx0sys.h)
    assert len(d) == 128 and d[0] == 64 and d[-1] == 191


def test_misplaced_page_and_wrong_space_are_corrupt(t_dynamic, tmp_path):
    p = tmp_path / "x.ibd"
    data = bytearray(t_dynamic.read_bytes())
    struct.pack_into(">I", data, 3 * 16384 + 4, 77)         # page 3 claims to be page 77
    struct.pack_into(">I", data, 4 * 16384 + 34, 9999)      # page 4 names another space
    p.write_bytes(bytes(data))
    pm, w, _ = _walk_to(p, "page_numbers")
    assert pm.corrupt.nonzero()[0].tolist() == [3]
    assert "header says page number 77" in pm.errors[-1][0]
    pm, w, _ = _walk_to(p, "space_ids")
    assert pm.corrupt.nonzero()[0].tolist() == [3, 4]
    assert "space id 9999 differs" in pm.errors[-1][0]


def test_unknown_page_type_is_named_once_per_type(t_dynamic, tmp_path):
    p = tmp_path / "x.ibd"
    data = bytearray(t_dynamic.read_bytes())
    for page in (5, 6):
        struct.pack_into(">H", data, page * 16384 + 24, 4321)
    p.write_bytes(bytes(data))
    pm, _, _ = _walk_to(p, "unknown")
    msgs = [m for m, _ in pm.errors if "unknown page type" in m]
    assert msgs == ["page 5: unknown page type 4321 (2 page(s), first 5)"]


def test_steps_to_owners_equal_the_whole_map(t_dynamic):
    whole = P.build_page_map(ReadOnlyFile(str(t_dynamic)), str(t_dynamic), verify_checksums=False)
    pm, w, _ = _walk_to(t_dynamic, "zero")
    for name in ("free", "seg_id", "owner_index", "owned", "fill", "data_size", "kind"):
        assert np.array_equal(getattr(pm, name), getattr(whole, name), equal_nan=name == "fill"), name
    assert pm.roots == whole.roots and pm.seg_index == whole.seg_index and pm.roots
    # the extent map alone: every page of an extent the XDES entries call free is free
    pm2, _, _ = _walk_to(t_dynamic, "extents")
    assert pm2.owner_index is None and np.array_equal(pm2.free, whole.free)


def test_pages_outside_holes_by_range_arithmetic():
    """The header blocks read with pread near holes (pages whose header's memory page
    touches a hole, not wholly in one): by range arithmetic, the same pages as a pass
    over ``pages_in_holes`` gives, for unaligned and aligned holes of every page size."""
    import random
    rng = random.Random(7)
    seen_some = False
    for _ in range(2000):
        physical = rng.choice([4096, 8192, 16384, 65536])
        n = rng.randint(1, 300)
        size = n * physical
        holes, pos = [], 0
        while True:
            pos += rng.randint(0, 5 * physical)
            if pos >= size:
                break
            ln = min(rng.randint(1, 6 * physical), size - pos)
            if rng.random() < 0.3:                    # page-aligned holes, as punched by InnoDB
                pos -= pos % physical
                ln = max(physical, ln - ln % physical)
                ln = min(ln, size - pos)
            holes.append((pos, ln))
            pos += ln + rng.randint(1, 3 * physical)
        near = P._heads_near_holes(holes, n, physical)
        in_hole = P.pages_in_holes(holes, n, physical)
        want = [i for a, b in near for i in (a + np.flatnonzero(~in_hole[a:b])).tolist()]
        assert P._pages_outside(near, P._hole_pages(holes, n, physical)) == want, (holes, n, physical)
        seen_some = seen_some or bool(want)
    assert seen_some

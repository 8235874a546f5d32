"""The vectorised extent map (read_extent_map) against a reading of every
XDES entry one by one with parse_xdes_entry, on every fixture tablespace."""
import numpy as np

from dbxray.parsers.fileio import ReadOnlyFile
from dbxray.parsers.innodb.fsp import decode_fsp_flags, extent_size_pages, parse_fsp_header
from dbxray.parsers.innodb.xdes import (XDES_ARR_OFFSET, XDES_FREE, XDES_FSEG, XDES_FSEG_FRAG, XDES_NOT_INITED,
                                 parse_xdes_entry, read_extent_map, xdes_size)


def _reference(pages, n, physical, ext, free_limit):
    page_free = np.zeros(n, dtype=bool)
    page_seg = np.zeros(n, dtype=np.uint64)
    for d in range(0, n, physical):
        for k in range(physical // ext):
            first = d + k * ext
            if first >= n:
                break
            e = parse_xdes_entry(bytes(pages[d]), XDES_ARR_OFFSET + k * xdes_size(ext), ext)
            for j in range(ext):
                p = first + j
                if p >= n:
                    break
                page_free[p] = (e.free_bits[j] == 1 or e.state in (XDES_FREE, XDES_NOT_INITED)
                                or e.state > XDES_FSEG_FRAG or p >= free_limit)
                page_seg[p] = e.seg_id if e.state in (XDES_FSEG, XDES_FSEG_FRAG) else 0
    return page_free, page_seg


def test_extent_map_equals_entry_by_entry_reading(fixtures_root):
    checked = with_segments = 0
    paths = [p for d in ("innodb", "innodb-public", "innodb-mysql") for p in sorted((fixtures_root / d).rglob("*"))
             if p.is_file() and (p.suffix == ".ibd" or p.name == "ibdata1")]
    for path in paths:
        with ReadOnlyFile(str(path)) as f:
            head = f.pread(0, 4096)
            fsp = parse_fsp_header(head, 0)
            flags = decode_fsp_flags(fsp.flags)
            if not flags.valid or flags.encryption or f.size < flags.physical_page_size:
                continue
            physical = flags.physical_page_size
            n = f.size // physical
            pages = np.frombuffer(f.mmap(), dtype=np.uint8, count=n * physical).reshape(n, physical)
            ext = extent_size_pages(flags.logical_page_size)
            limit = min(fsp.free_limit, n)
            em = read_extent_map(pages, n, physical, ext, limit)
            free, seg = _reference(pages, n, physical, ext, limit)
            assert np.array_equal(em.page_free, free), path.name
            assert np.array_equal(em.page_seg, seg), path.name
            assert (~free).any(), path.name
            with_segments += bool(seg.any())
            del pages
            checked += 1
    assert checked >= 100 and with_segments >= 2


def test_extent_map_equals_entry_by_entry_reading_on_random_descriptors():
    """Descriptor pages filled with random states (valid and not), bitmaps and
    segment ids, for 4k, 16k and 64k pages, a partial last extent and a free
    limit inside the file."""
    rng = np.random.default_rng(7)
    for physical, logical in ((4096, 4096), (16384, 16384), (65536, 65536), (8192, 16384)):
        ext = extent_size_pages(logical)
        n = 2 * physical + 3 * ext + 5            # two descriptor pages and a partial extent after them
        pages = np.zeros((n, physical), dtype=np.uint8)
        size = xdes_size(ext)
        for d in range(0, n, physical):
            count = physical // ext
            raw = rng.integers(0, 256, size=count * size, dtype=np.uint8).reshape(count, size)
            raw[:, 20:23] = 0
            raw[:, 23] = rng.integers(0, 8, size=count)     # states 0..7 (6, 7 are not valid)
            pages[d, XDES_ARR_OFFSET:XDES_ARR_OFFSET + count * size] = raw.ravel()
        limit = n - ext - 3
        em = read_extent_map(pages, n, physical, ext, limit)
        free, seg = _reference(pages, n, physical, ext, limit)
        assert np.array_equal(em.page_free, free), physical
        assert np.array_equal(em.page_seg, seg), physical
        assert free.any() and (~free).any() and seg.any()

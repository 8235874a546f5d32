"""Pages in holes and the runs of data pages between them: the slice path for
a few holes and the numpy path for many give what a page-by-page check gives."""
import random

import numpy as np
import pytest

from dbxray.parsers.innodb.pagemap import _FEW_HOLES, _data_runs, pages_in_holes


def _reference(holes, n, physical):
    out = np.zeros(n, dtype=bool)
    for p in range(n):
        a, b = p * physical, (p + 1) * physical
        out[p] = any(off <= a and b <= off + ln for off, ln in holes)
    return out


def _runs(mask):
    runs, start = [], None
    for i, h in enumerate(mask.tolist() + [True]):
        if not h and start is None:
            start = i
        elif h and start is not None:
            runs.append((start, i))
            start = None
    return runs


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("count", [0, 1, 5, _FEW_HOLES, _FEW_HOLES + 1, 300])
def test_hole_pages_match_a_page_by_page_check(seed, count):
    rng = random.Random(seed * 1000 + count)
    physical = rng.choice([4096, 16384, 65536])
    n = rng.randint(1, 600)
    # holes on 4 KiB boundaries (what a filesystem gives), sorted, disjoint, some past the end
    holes, pos = [], 0
    for _ in range(count):
        pos += rng.randint(0, 3 * physical // 4096) * 4096
        ln = rng.randint(1, 4 * physical // 4096) * 4096
        holes.append((pos, ln))
        pos += ln + 4096
    ref = _reference(holes, n, physical)
    got = pages_in_holes(holes, n, physical)
    assert np.array_equal(got, ref)
    assert _data_runs(got, holes, physical) == _runs(ref) == _data_runs(got)


@pytest.mark.parametrize("seed", range(30))
def test_heads_near_holes_match_a_page_by_page_check(seed):
    """The pages whose header's memory page overlaps a hole (read from the blanked map,
    never through the unblanked one) are what a page-by-page check finds."""
    import mmap

    from dbxray.parsers.innodb.pagemap import _heads_near_holes
    rng = random.Random(seed)
    physical = rng.choice([1024, 2048, 4096, 16384, 65536])
    n = rng.randint(1, 400)
    page = mmap.PAGESIZE
    holes, pos = [], 0
    for _ in range(rng.randint(0, 8)):
        pos += rng.randint(0, 6) * 1024          # XFS 1 KiB blocks: holes inside a memory page too
        ln = rng.randint(1, 12) * 1024
        holes.append((pos, ln))
        pos += ln
    ref = [p for p in range(n)
           if any(off < (p * physical // page + 1) * page and p * physical // page * page < off + ln
                  for off, ln in holes)]
    ranges = _heads_near_holes(holes, n, physical)
    assert [p for a, b in ranges for p in range(a, b)] == ref
    assert all(b0 < a1 for (_a0, b0), (a1, _b1) in zip(ranges, ranges[1:]))    # merged, in order

"""Units against holes (parsers/units.py): the bytes of each unit in a hole, the bytes
of ranges per bin, and merged ranges, against a byte-by-byte count."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dbxray.parsers.units import as_ranges, covered_per_bin, hole_bytes_per_unit

SIZE = 600


def _mask(ranges) -> np.ndarray:
    m = np.zeros(SIZE + 200, dtype=bool)
    for o, n in ranges:
        m[o:o + n] = True
    return m


ranges_st = st.lists(st.tuples(st.integers(0, SIZE), st.integers(0, 80)), max_size=12)


@settings(max_examples=300, deadline=None)
@given(ranges_st, st.lists(st.integers(0, SIZE), max_size=20), st.integers(1, 64))
def test_hole_bytes_per_unit_is_the_byte_count(raw, starts, length):
    holes = [tuple(r) for r in as_ranges(raw).tolist()]
    m = _mask(holes)
    got = hole_bytes_per_unit(holes, np.array(starts, dtype=np.int64), length)
    assert got.tolist() == [int(m[s:s + length].sum()) for s in starts]


@settings(max_examples=300, deadline=None)
@given(ranges_st, st.lists(st.integers(0, SIZE + 100), min_size=2, max_size=10, unique=True))
def test_as_ranges_merges_and_covered_per_bin_counts(raw, edges):
    merged = as_ranges(raw)
    m = _mask(raw)
    assert np.array_equal(_mask(merged.tolist()), m)
    assert (merged[:, 1] > 0).all() and (np.diff(merged[:, 0]) > merged[:-1, 1]).all()
    e = np.array(sorted(edges), dtype=np.int64)
    assert covered_per_bin(merged, e).tolist() == [int(m[a:b].sum()) for a, b in zip(e[:-1], e[1:])]

"""Whole-file checksums read pages as views of the map, not copies (parsers/innodb/pagemap.py
``_take_rows``, ``_rows_spanning``): the same rows either way, a view only where the pages
asked for are one run, or fill at least half of the run they span and none of it is in a
hole (a page in a hole is never read)."""
from __future__ import annotations

import numpy as np

from dbxray.parsers.innodb.pagemap import _rows_spanning, _take_rows


def _pages(n: int = 64, physical: int = 256) -> np.ndarray:
    pages = np.random.default_rng(7).integers(0, 256, size=(n, physical), dtype=np.uint8)
    pages.flags.writeable = False          # as the file's map is
    return pages


def test_one_run_is_a_read_only_view_and_a_gap_a_copy():
    pages = _pages()
    run = _take_rows(pages, np.arange(5, 40))
    assert np.shares_memory(run, pages) and not run.flags.writeable
    assert np.array_equal(run, pages[5:40])
    gaps = np.array([1, 2, 4, 9])
    got = _take_rows(pages, gaps)
    assert not np.shares_memory(got, pages)
    assert np.array_equal(got, pages[gaps])
    unordered = np.array([3, 2, 1])       # consecutive values, not ascending: a copy, in order
    assert np.array_equal(_take_rows(pages, unordered), pages[unordered])
    assert np.array_equal(_take_rows(pages, np.array([7])), pages[[7]])


def test_rows_spanning_gives_the_same_pages_as_asked():
    pages = _pages()
    asked = []

    def rows_of(sel):
        asked.append(np.asarray(sel).copy())
        return _take_rows(pages, sel)

    no_holes = np.zeros(len(pages), dtype=bool)
    dense = np.array([10, 11, 13, 14, 16, 17])          # 6 of the 8 pages from 10 to 17
    rows, local = _rows_spanning(rows_of, dense, no_holes)
    assert np.array_equal(asked[-1], np.arange(10, 18)) and np.shares_memory(rows, pages)
    assert np.array_equal(rows[local], pages[dense])
    sparse = np.array([0, 20, 40, 63])
    rows, local = _rows_spanning(rows_of, sparse, no_holes)
    assert np.array_equal(asked[-1], sparse)
    assert np.array_equal(rows[local], pages[sparse])
    one = np.array([5])
    rows, local = _rows_spanning(rows_of, one, no_holes)
    assert np.array_equal(rows[local], pages[one])
    # a page of the run in a hole is never asked for: the pages alone then
    in_hole = no_holes.copy()
    in_hole[12] = True
    rows, local = _rows_spanning(rows_of, dense, in_hole)
    assert np.array_equal(asked[-1], dense) and not (asked[-1] == 12).any()
    assert np.array_equal(rows[local], pages[dense])

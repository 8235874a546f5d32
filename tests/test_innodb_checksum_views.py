"""Whole-file checksums read pages as views of the map, not copies (parsers/innodb/pagemap.py
``_take_rows``, ``_row_chunks``): the same rows either way; one view for a span that the pages
asked for fill at least half of, with none of it in a hole (a page in a hole is never read),
else a view per run of consecutive pages, and a copy only of pages too scattered for that."""
from __future__ import annotations

import numpy as np

from dbxray.parsers.innodb.pagemap import _row_chunks, _take_rows


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


def _chunks(pages, sel, in_hole, span=True):
    """The chunks, each as (pages asked, rows[local], sel[at], whether a view of the map)."""
    asked = []

    def rows_of(s):
        asked.append(np.asarray(s).copy())
        return _take_rows(pages, s)

    out = []
    for rows, local, at in _row_chunks(rows_of, sel, in_hole, span):
        out.append((asked[-1], rows[local], sel[at], np.shares_memory(rows, pages)))
    # every page of sel is covered once, in order, by the rows of its own page
    assert np.array_equal(np.concatenate([c[2] for c in out]), sel)
    for _, rows, at, _ in out:
        assert np.array_equal(rows, pages[at])
    return out


def test_chunks_give_the_same_pages_as_asked():
    pages = _pages()
    no_holes = np.zeros(len(pages), dtype=bool)
    dense = np.array([10, 11, 13, 14, 16, 17])          # 6 of the 8 pages from 10 to 17
    (asked, _, _, view), = _chunks(pages, dense, no_holes)
    assert np.array_equal(asked, np.arange(10, 18)) and view
    sparse = np.array([0, 20, 40, 63])                   # 4 runs of 1 page: one copy
    (asked, _, _, view), = _chunks(pages, sparse, no_holes)
    assert np.array_equal(asked, sparse) and not view
    one = np.array([5])
    assert len(_chunks(pages, one, no_holes)) == 1
    # a page of the span in a hole is never asked for: each run then is a view of its own
    in_hole = no_holes.copy()
    in_hole[[10, 20]] = True
    runs = np.concatenate([np.arange(0, 10), np.arange(11, 20), np.arange(21, 30)])
    out = _chunks(pages, runs, in_hole)
    assert [c[0].tolist() for c in out] == [list(range(0, 10)), list(range(11, 20)), list(range(21, 30))]
    assert all(c[3] for c in out)
    # short runs around a hole: one copy of the pages alone, the hole not read either
    in_hole[12] = in_hole[15] = True
    (asked, _, _, view), = _chunks(pages, dense, in_hole)
    assert np.array_equal(asked, dense) and not view
    # without span (checks that take whole rows only): runs, never the span
    long_runs = np.concatenate([np.arange(0, 20), np.arange(30, 60)])
    out = _chunks(pages, long_runs, no_holes, span=False)
    assert [c[0].tolist() for c in out] == [list(range(0, 20)), list(range(30, 60))]
    assert all(c[3] for c in out)
    # too many runs for a view each: one copy of the pages alone
    every_other = np.arange(0, 64, 2)
    (asked, _, _, view), = _chunks(pages, every_other, no_holes, span=False)
    assert np.array_equal(asked, every_other) and not view

"""page_get_data_size and the fill figure (parsers/innodb/index.py) against the engine's
formulas written out here in plain integers and float64 (page0page.h:
page_get_data_size = PAGE_HEAP_TOP - (comp ? PAGE_NEW_SUPREMUM_END : PAGE_OLD_SUPREMUM_END)
- PAGE_GARBAGE; page_get_free_space_of_empty = page size - supremum end - PAGE_DIR
- 2 * PAGE_DIR_SLOT_SIZE), over every heap top and many garbage values of both formats:
the float32 division the page map uses gives the float64 figures rounded, bit for bit."""
from __future__ import annotations

import numpy as np
import pytest

from dbxray.parsers.innodb.index import data_size, fill_ratio

# page0page.h: PAGE_DATA = FIL_PAGE_DATA + 36 + 2 * FSEG_HEADER_SIZE; REC_N_OLD_EXTRA_BYTES = 6,
# REC_N_NEW_EXTRA_BYTES = 5; the supremum record's data is 8 bytes ("supremum"), 9 with its
# trailing NUL in the old format
PAGE_DATA = 38 + 36 + 2 * 10
PAGE_OLD_SUPREMUM_END = PAGE_DATA + 2 + 2 * 6 + 8 + 9     # 125
PAGE_NEW_SUPREMUM_END = PAGE_DATA + 2 * 5 + 8 + 8         # 120


def _reference(heap_top, n_heap, garbage, page_size):
    comp = (n_heap.astype(np.int64) & 0x8000) != 0
    sup = np.where(comp, PAGE_NEW_SUPREMUM_END, PAGE_OLD_SUPREMUM_END)
    ds = heap_top.astype(np.int64) - sup - garbage.astype(np.int64)
    empty = page_size - sup - 8 - 2 * 2
    return ds, np.clip(ds / empty.astype(np.float64), 0.0, 1.0).astype(np.float32)


def test_supremum_ends_as_the_engine_names_them():
    from dbxray.parsers.innodb import index
    assert (index.PAGE_OLD_SUPREMUM_END, index.PAGE_NEW_SUPREMUM_END) == (PAGE_OLD_SUPREMUM_END,
                                                                          PAGE_NEW_SUPREMUM_END)


@pytest.mark.parametrize("page_size", [4096, 8192, 16384, 32768, 65536])
def test_fill_is_the_float64_figure_rounded(page_size):
    heap_top = np.arange(0, 65536, dtype=np.uint16)
    rng = np.random.default_rng(page_size)
    for compact in (0, 0x8000):
        for garbage in (0, 1, 7, 4000, 65535):
            g = np.full(len(heap_top), garbage, dtype=np.uint16)
            n_heap = ((rng.integers(0, 0x8000, len(heap_top)) | compact)).astype(np.uint16)
            want_ds, want_fill = _reference(heap_top, n_heap, g, page_size)
            ds = data_size(heap_top, n_heap, g)
            assert ds.dtype == np.int32
            assert np.array_equal(ds, want_ds)
            fill = fill_ratio(heap_top, n_heap, g, page_size)
            assert fill.dtype == np.float32
            assert np.array_equal(fill, want_fill)
            # the caller's own format bits and data sizes give the same
            comp = n_heap >= 0x8000
            assert np.array_equal(fill_ratio(heap_top, n_heap, g, page_size, ds=ds, compact=comp), want_fill)
    # random garbage too, mixed formats in one call
    g = rng.integers(0, 65536, len(heap_top)).astype(np.uint16)
    n_heap = rng.integers(0, 65536, len(heap_top)).astype(np.uint16)
    want_ds, want_fill = _reference(heap_top, n_heap, g, page_size)
    assert np.array_equal(data_size(heap_top, n_heap, g), want_ds)
    assert np.array_equal(fill_ratio(heap_top, n_heap, g, page_size), want_fill)

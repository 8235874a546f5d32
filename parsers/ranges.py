"""Byte ranges of one file (its holes, its unwritten extents), sorted and disjoint.

Many steps of a scan read a file's holes: the page map (which pages lie in or touch a
hole), the hole bytes of every unit, the file's hole total, the JSON.  A page-compressed
tablespace has one hole a page, thousands of them, and each step turned the list of
tuples into an array or a sum of its own.  :class:`Ranges` is that list, read-only, with
its ``(n, 2)`` int64 array and its total made once for every reader; :func:`ranges_array`
and :func:`ranges_total` take a Ranges or any other list of pairs.
"""
from __future__ import annotations

from typing import Iterable

import numpy as np


class Ranges(list):
    """Sorted, disjoint ``(offset, length)`` byte ranges as a read-only list of tuples (equal
    to the plain list of the same tuples), with its array and total kept once made.  Made
    only by the file layer's listings (FIEMAP, SEEK_HOLE, merged ranges), which give sorted
    disjoint ranges; anything else stays a plain list."""

    __slots__ = ("_array", "_total")

    def __init__(self, items: Iterable[tuple[int, int]] = (), array: np.ndarray | None = None):
        super().__init__(items)
        self._array = array
        self._total: int | None = None

    @classmethod
    def from_arrays(cls, offsets: np.ndarray, lengths: np.ndarray) -> "Ranges":
        """The ranges of two int arrays of one length (offsets sorted, ranges disjoint)."""
        a = np.empty((len(offsets), 2), dtype=np.int64)
        a[:, 0], a[:, 1] = offsets, lengths
        a.flags.writeable = False
        return cls(zip(a[:, 0].tolist(), a[:, 1].tolist()), a)

    def _refuse(self, *args, **kwargs):
        raise TypeError("a file's ranges are read-only: make a list of your own")

    append = extend = insert = remove = pop = clear = sort = reverse = _refuse
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse

    def __reduce__(self):
        # the tuples alone (what a plain list pickles); the array is made again when asked for
        return (Ranges, (list(self),))

    def array(self) -> np.ndarray:
        """The ranges as a read-only ``(n, 2)`` int64 array of (offset, length)."""
        a = self._array
        if a is None:
            a = np.array(self, dtype=np.int64).reshape(-1, 2)
            a.flags.writeable = False
            self._array = a
        return a

    def total(self) -> int:
        """Bytes of all the ranges."""
        t = self._total
        if t is None:
            a = self._array
            t = self._total = int(a[:, 1].sum()) if a is not None else sum(n for _o, n in self)
        return t


def ranges_array(ranges) -> np.ndarray:
    """``ranges`` (a :class:`Ranges`, an ``(n, 2)`` array or a list of pairs, in the order
    given) as an ``(n, 2)`` int64 array, not to be written to."""
    if type(ranges) is Ranges:
        return ranges.array()
    if isinstance(ranges, np.ndarray):
        return ranges.astype(np.int64, copy=False).reshape(-1, 2)
    return np.asarray(ranges, dtype=np.int64).reshape(-1, 2)


def sorted_ranges_array(ranges) -> np.ndarray:
    """:func:`ranges_array` of ``ranges`` sorted by offset (a Ranges already is)."""
    if type(ranges) is Ranges:
        return ranges.array()
    return np.asarray(sorted(ranges), dtype=np.int64).reshape(-1, 2)


def ranges_total(ranges) -> int:
    """Bytes of ``ranges`` (a :class:`Ranges` or any list of pairs)."""
    if type(ranges) is Ranges:
        return ranges.total()
    return sum(n for _o, n in ranges)

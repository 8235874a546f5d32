"""numpy helpers the parsers share."""
from __future__ import annotations

import numpy as np


def distinct(a) -> np.ndarray:
    """The sorted distinct values of the integer array ``a`` (flattened), as ``np.unique(a)``
    gives them, without what numpy 2's ``np.unique`` imports on its first call
    (``numpy.ma``, to ask whether the input is masked: 10-13 ms of a command's start,
    paid before the scan's workers could begin)."""
    s = np.sort(np.asarray(a).ravel())
    if s.size < 2:
        return s
    keep = np.empty(s.size, dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]

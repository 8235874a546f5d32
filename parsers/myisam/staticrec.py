"""Rows of a fixed-length data file (``.MYD`` of ROW_FORMAT=FIXED; Aria's STATIC_RECORD
``.MAD`` too): rows of ``pack_reclength`` bytes one after the other
(storage/myisam/mi_statrec.c).  A deleted row has 0 in its first byte and the next
deleted row's offset after it (_mi_delete_static_record); a live row never starts with 0
(_mi_read_static_record takes a 0 there for a deleted row).  Counted with numpy over the
rows' first bytes, no Python loop per row."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model import UNIT_FREE, empty_units

#: at most this many units; past it a unit holds several rows
MAX_UNITS = 1_000_000
KIND_ROW, KIND_DELETED, KIND_PARTIAL = 0, 1, 2
KIND_NAMES = {KIND_ROW: "ROW", KIND_DELETED: "DELETED", KIND_PARTIAL: "PARTIAL_ROW"}


@dataclass
class StaticRows:
    rows: int
    deleted: int
    deleted_bytes: int
    trailing_bytes: int             # bytes after the last whole row
    units: np.ndarray
    rows_per_unit: int


def count_rows(arr: np.ndarray, reclength: int, end: int) -> StaticRows:
    """Rows of ``reclength`` bytes in the uint8 array ``arr`` up to ``end``."""
    end = min(end, len(arr))
    n = end // reclength if reclength > 0 else 0
    first = arr[0:n * reclength:reclength] if n else np.zeros(0, dtype=np.uint8)
    dead = first == 0
    deleted = int(dead.sum())
    trailing = end - n * reclength
    per = max(1, -(-n // MAX_UNITS))
    m = -(-n // per) if n else 0
    units = empty_units(m + (1 if trailing else 0))
    if m:
        starts = np.arange(m, dtype=np.int64) * per
        counts = np.minimum(per, n - starts)
        units["offset"][:m] = starts * reclength
        units["stored"][:m] = units["logical"][:m] = counts * reclength
        dead_per = np.add.reduceat(dead.astype(np.int64), starts) if n else np.zeros(0)
        units["kind"][:m] = np.where(dead_per == counts, KIND_DELETED, KIND_ROW)
        units["flags"][:m] = np.where(dead_per == counts, UNIT_FREE, 0)
        units["fill"][:m] = (counts - dead_per) / counts
    if trailing:
        units[-1]["offset"] = n * reclength
        units[-1]["stored"] = units[-1]["logical"] = trailing
        units[-1]["kind"] = KIND_PARTIAL
    return StaticRows(rows=n - deleted, deleted=deleted, deleted_bytes=deleted * reclength,
                      trailing_bytes=trailing, units=units, rows_per_unit=per)

"""``__marks.mrk`` of a Log table (src/Storages/StorageLog.cpp, ``StorageLog::Mark``,
``loadMarks`` / ``saveMarks``).

One mark per INSERT block; each mark holds, for every data file in the order the
table enumerates its streams (``addDataFiles``: the columns in order, each
column's streams as enumerateStreams lists them), two little-endian UInt64::

    rows    rows in the file's stream after this block (cumulative)
    offset  byte offset in the .bin file where this block's data starts
            (a compressed block start)

so the file is ``marks x data files x 16`` bytes; any other size is the engine's
SIZES_OF_MARKS_FILES_ARE_INCONSISTENT.  ``system.tables.total_rows`` is the
last mark's ``rows`` of the first data file (``updateTotalRows``,
INDEX_WITH_REAL_ROW_COUNT = 0), once the marks are loaded.  TinyLog has no
marks file.
"""
from __future__ import annotations

import numpy as np

from .logfiles import MARKS_FILE_NAME  # noqa: F401 (its name)

#: StorageLog::Mark: rows, offset
LOG_MARK_DTYPE = np.dtype([("rows", "<u8"), ("offset", "<u8")])


class LogMarksError(Exception):
    """The marks file does not fit the table's data files."""


def read_log_marks(data: bytes, num_data_files: int) -> np.ndarray:
    """The marks as an array of shape (marks, data files) of LOG_MARK_DTYPE."""
    per_mark = num_data_files * LOG_MARK_DTYPE.itemsize
    if num_data_files <= 0:
        raise LogMarksError("the table has no data files to read marks for")
    if len(data) % per_mark:
        raise LogMarksError(f"size of marks file is inconsistent: {len(data)} bytes is not a whole number of "
                            f"marks of {num_data_files} data files x 16 bytes")
    return np.frombuffer(data, dtype=LOG_MARK_DTYPE).reshape(-1, num_data_files)

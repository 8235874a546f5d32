"""The rows of a MyISAM or Aria data file of the Dynamic row format, read as the engine
stores them, in runs for the cross-engine row models (innodbrows.py, innodbziprows.py,
myrocksrows.py, tokudbrows.py), framed as ARCHIVE's row stream is framed (each row behind its
4-byte length) so those models take them as they take ARCHIVE's.

A row is its packed image (mi_dynrec.c ``_mi_rec_pack``; ma_dynrec.c the same: the bitmap of
empty fields, then the fields, strings and blobs behind their lengths, trailing spaces and
zero fields left out), gathered from its first block and the parts its ``next`` pointers
chain (parsers/myisam/dynrec.py read_block_header). A unit is the live rows whose first block
starts in a run of :data:`RUN_BYTES` of the file (the scan's ROW units: parsers/myisam/scan.py).

Not read here: Fixed rows (mi_statrec.c) keep every CHAR at its full width in bytes (4 a
character in utf8mb4) where InnoDB stores it trimmed: fixedrows.py decodes them with the
table's .frm, as it does Aria's Page rows (ma_blockrec.c).
"""
from __future__ import annotations

import numpy as np

from dbxray.parsers.fileio import ReadOnlyFile
from dbxray.parsers.model import FileEntry
from dbxray.parsers.myisam.dynrec import read_block_header

from ..sources import UnitSet

#: a run of the data file whose rows make one unit (as ARCHIVE's groups of 32 spans)
RUN_BYTES = 1 << 20
#: the parts a split row is followed through at most (a longer chain is a damaged file)
MAX_PARTS = 4096
_HEADER_READ = 20


def read_dynamic_row(f: ReadOnlyFile, pos: int) -> bytes | None:
    """The packed row whose first block is at ``pos``, its parts followed (None: damaged)."""
    parts: list[bytes] = []
    want = None
    for _ in range(MAX_PARTS):
        h = read_block_header(f.pread(pos, _HEADER_READ))
        if h is None or (want is None and not h.first):
            return None
        if want is None:
            want = h.rec_len
        parts.append(f.pread(pos + h.header_bytes, h.data_len))
        if h.next_pos is None:
            break
        pos = h.next_pos
    row = b"".join(parts)
    return row if want is not None and len(row) == want else None


def row_units(entry: FileEntry, engine: str) -> UnitSet | None:
    """The file's live rows in runs (module doc), or None where its rows are not read here
    (another row format, no walk, a walk that did not reach the end)."""
    sec = entry.sections.get(engine) or {}
    fmt = sec.get("row_format")
    if fmt != "Dynamic" or entry.units is None or not len(entry.units):
        return None
    if sec.get("walked_bytes") is not None and fmt == "Dynamic" and \
            int(sec.get("walked_bytes") or 0) < int(sec.get("data_bytes") or 0):
        return None
    names = entry.kind_names or {}
    row_codes = [c for c, n in names.items() if n == "ROW"]
    if any(n in ("NOT_WALKED", "UNREADABLE") and bool((entry.units["kind"] == c).any()) for c, n in names.items()):
        return None
    mask = np.isin(entry.units["kind"], row_codes)
    offsets = entry.units["offset"][mask].astype(np.int64)
    stored = entry.units["stored"][mask].astype(np.int64)
    if not len(offsets):
        return None
    run = offsets // RUN_BYTES
    keys, first = np.unique(run, return_index=True)
    bounds = list(first) + [len(offsets)]
    groups = [(bounds[i], bounds[i + 1]) for i in range(len(keys))]
    logical = np.array([int(stored[a:b].sum()) + 4 * (b - a) for a, b in groups], dtype=np.int64)
    path = entry.abspath

    def payload(j: int) -> bytes:
        a, b = groups[j]
        out = []
        with ReadOnlyFile(path) as f:
            for k in range(a, b):
                row = read_dynamic_row(f, int(offsets[k]))
                if row:
                    out.append(len(row).to_bytes(4, "little") + row)
        return b"".join(out)

    return UnitSet(label=f"{entry.path} (rows in runs of {RUN_BYTES >> 20} MiB)", logical=logical,
                   strata=np.zeros(len(groups), dtype=np.int64), payload=payload,
                   order_key=np.array([int(offsets[a]) for a, _ in groups], dtype=np.int64),
                   meta={"entry": entry, "rows": int(mask.sum())})

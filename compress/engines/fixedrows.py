"""The rows of a Fixed (static) MyISAM or Aria data file, decoded into their columns with the
table's ``.frm`` (parsers/server/frmfields.py, parsers/server/record.py), re-encoded as the
other engines would store them, in runs for the cross-engine row models (rowmodels.py),
framed as datarows.py frames Dynamic rows (each row behind its 4-byte length).

A Fixed row is the server's record (mi_statrec.c): every CHAR at its full width in bytes
(CHAR(200) in utf8mb4: 800 bytes, mostly spaces), so its bytes are not what InnoDB stores.
Two images of each live row (a deleted one starts with 0: mi_statrec.c) are made:

* :func:`innodb_image`, what a COMPACT/DYNAMIC record holds besides its fixed header
  (rem0rec.cc ``rec_convert_dtuple_to_rec_comp``): the NULL bitmap (a bit per nullable
  column), one length byte per variable-length column (two when its maximum is over 255 bytes
  and the value over 127), the non-NULL values: numbers and dates at their width, VARCHAR its
  bytes, CHAR in a single-byte character set at its full width (fixed), CHAR in a variable-width
  one (utf8mb3, utf8mb4) with its trailing spaces stripped down to no fewer bytes than it has
  characters (row0mysql.cc ``row_mysql_store_col_in_innobase_format``), so a variable column;
* :func:`full_width_image`, what MyRocks's value (rdb_converter.cc ``encode_value_slice``:
  the NULL bytes, then every non-NULL column as the record holds it, CHAR at full width,
  VARCHAR behind its length bytes) and TokuDB's row (ha_tokudb.cc ``pack_row``: CHAR a fixed
  field) hold.

A unit is the rows in a run of :data:`RUN_BYTES` of the data file.  The row images' mean is
made from every row of a table of up to :data:`EXACT_ROWS` rows (each unit's bytes then
exact), from that many rows spread evenly over a larger one (the units' bytes then its mean
times their rows).
"""
from __future__ import annotations

import os

import numpy as np

from dbxray.parsers.fileio import FileReadError, ReadOnlyFile
from dbxray.parsers.model import FileEntry
from dbxray.parsers.server.frm import FrmError
from dbxray.parsers.server.frmfields import MYSQL_TYPE_BIT, FrmColumns, read_frm_columns
from dbxray.parsers.server.record import RecordError, Value, record_values

from ..sources import UnitSet
from .datarows import RUN_BYTES

#: rows read for the images' mean (a table with more: that many spread over it)
EXACT_ROWS = 50_000
#: the largest .frm read (MariaDB's FRM_MAX_SIZE is 1 MiB)
MAX_FRM = 1 << 20


def _variable_in_innodb(v: Value) -> bool:
    f = v.field
    if f.is_varchar or f.is_blob:
        return True
    return f.is_char and f.collation is not None and f.collation.mbmaxlen > f.collation.mbminlen


def _innodb_bytes(v: Value) -> bytes:
    f = v.field
    data = v.data or b""
    if f.is_char and f.collation is not None and f.collation.mbmaxlen > f.collation.mbminlen:
        keep = (f.pack_length // f.collation.mbmaxlen) * f.collation.mbminlen
        stripped = data.rstrip(b" ")
        return data[:max(len(stripped), keep)]
    if f.real_type == MYSQL_TYPE_BIT:                        # its bits in whole bytes
        return data + (b"\0" if f.length & 7 else b"")
    return data


def innodb_image(values: list[Value], nullable: int) -> bytes:
    """The row as an InnoDB COMPACT/DYNAMIC record holds it after its 5-byte header (module doc)."""
    lengths = bytearray()
    body = []
    for v in values:
        if v.data is None:
            continue
        b = _innodb_bytes(v)
        if _variable_in_innodb(v):
            lengths += b"\0\0" if (v.field.octet_length or 0) > 255 and len(b) > 127 else b"\0"
        body.append(b)
    return bytes((nullable + 7) // 8) + bytes(lengths) + b"".join(body)


def full_width_image(values: list[Value], nullable: int) -> bytes:
    """The row as MyRocks's value and TokuDB's row hold it (module doc)."""
    out = [bytes((nullable + 7) // 8)]
    for v in values:
        if v.data is None:
            continue
        if v.field.is_varchar:
            out.append(len(v.data).to_bytes(v.field.varchar_length_bytes, "little"))
        out.append(v.data)
    return b"".join(out)


def table_columns(entry: FileEntry) -> tuple[FrmColumns | None, str | None]:
    """The columns of the data file's table from the ``.frm`` beside it, or why not."""
    frm = os.path.splitext(entry.abspath)[0] + ".frm"
    try:
        with ReadOnlyFile(frm) as f:
            if f.size > MAX_FRM:
                return None, f"{frm}: {f.size} bytes, larger than a .frm"
            buf = f.pread(0, f.size)
    except (FileReadError, OSError) as e:
        return None, f"no readable .frm beside it ({e})"
    try:
        return read_frm_columns(buf, frm), None
    except FrmError as e:
        return None, f"{e} (offset {e.offset})"


def fixed_row_units(entry: FileEntry, engine: str) -> tuple[UnitSet, UnitSet] | str:
    """The live rows of a Fixed data file as (InnoDB images, full-width images) in runs (module
    doc), or why they are not read."""
    sec = entry.sections.get(engine) or {}
    if sec.get("row_format") != "Fixed" or entry.units is None or not len(entry.units):
        return "not a Fixed data file with rows"
    if sec.get("trailing_bytes") or not sec.get("complete", True):
        return "the data file does not end on a whole row"
    cols, why = table_columns(entry)
    if cols is None:
        return why or "no columns"
    if any(f.is_blob and f.stored for f in cols.fields):
        return "a BLOB column in a Fixed table: not a record this reads"
    reclen = cols.reclength
    size = int(entry.apparent_bytes)
    if reclen <= 0 or size % reclen:
        return f"data file of {size} bytes is not whole rows of the .frm's {reclen}-byte record"
    nullable = sum(1 for f in cols.fields if f.stored and f.nullable)
    total = size // reclen
    run_rows = max(1, RUN_BYTES // reclen)
    n_units = -(-total // run_rows)
    path = entry.abspath

    def rows_of(f: ReadOnlyFile, first: int, count: int) -> list[list[Value]]:
        buf = f.pread(first * reclen, count * reclen)
        out = []
        for k in range(len(buf) // reclen):
            rec = buf[k * reclen:(k + 1) * reclen]
            if rec[0] == 0:                                   # a deleted row (mi_statrec.c)
                continue
            out.append(record_values(rec, cols))
        return out

    def payload(image, j: int) -> bytes:
        with ReadOnlyFile(path) as f:
            rows = rows_of(f, j * run_rows, min(run_rows, total - j * run_rows))
        return b"".join(len(r).to_bytes(4, "little") + r for r in (image(v, nullable) for v in rows))

    live = np.zeros(n_units, dtype=np.int64)
    sums = {innodb_image: np.zeros(n_units, dtype=np.int64), full_width_image: np.zeros(n_units, dtype=np.int64)}
    longest = 0
    step = max(1, -(-total // EXACT_ROWS))
    try:
        with ReadOnlyFile(path) as f:
            if step == 1:
                for j in range(n_units):
                    for v in rows_of(f, j * run_rows, min(run_rows, total - j * run_rows)):
                        live[j] += 1
                        for image, s in sums.items():
                            n = len(image(v, nullable))
                            s[j] += 4 + n
                            if image is innodb_image:
                                longest = max(longest, n)
            else:
                # the live rows a run holds from its first bytes (a deleted row starts with 0),
                # the images' mean from rows spread evenly over the file
                seen = {innodb_image: [0, 0], full_width_image: [0, 0]}
                for j in range(n_units):
                    count = min(run_rows, total - j * run_rows)
                    firsts = np.frombuffer(f.pread(j * run_rows * reclen, count * reclen), np.uint8)[::reclen]
                    live[j] = int((firsts != 0).sum())
                for i in range(0, total, step):
                    for v in rows_of(f, i, 1):
                        for image, acc in seen.items():
                            n = len(image(v, nullable))
                            acc[0] += 4 + n
                            acc[1] += 1
                            if image is innodb_image:
                                longest = max(longest, n)
                for image, (b, k) in seen.items():
                    sums[image] = np.round(live * (b / max(k, 1))).astype(np.int64)
    except (FileReadError, RecordError) as e:
        return f"rows not read: {e}"
    keep = np.flatnonzero(live > 0)
    if not len(keep):
        return "no live rows"
    out = []
    for image, what in ((innodb_image, "InnoDB records"), (full_width_image, "full-width rows")):
        out.append(UnitSet(label=f"{entry.path} (rows decoded with the .frm as {what}, runs of "
                                 f"{RUN_BYTES >> 20} MiB)", logical=sums[image][keep],
                           strata=np.zeros(len(keep), dtype=np.int64),
                           payload=lambda k, image=image: payload(image, int(keep[k])),
                           order_key=keep.astype(np.int64) * run_rows * reclen,
                           meta={"entry": entry, "rows": int(live.sum()), "longest": longest,
                                 "exact": step == 1}))
    return out[0], out[1]

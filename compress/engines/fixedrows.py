"""The rows of a Fixed (static) MyISAM or Aria data file and of an Aria Page (BLOCK_RECORD)
one, decoded into their columns with the table's ``.frm`` (parsers/server/frmfields.py,
parsers/server/record.py; a Page row with the ``.MAI``'s column definitions:
parsers/aria/blockrow.py), re-encoded as the other engines would store them, in runs for the
cross-engine row models (rowmodels.py), framed as datarows.py frames Dynamic rows (each row
behind its 4-byte length).

A Fixed row is the server's record (mi_statrec.c): every CHAR at its full width in bytes
(CHAR(200) in utf8mb4: 800 bytes, mostly spaces), so its bytes are not what InnoDB stores; a
Page row keeps its columns in the engine's order with empty ones left out.  Two images of
each live row (a deleted Fixed one starts with 0: mi_statrec.c; a deleted Page one has a free
directory entry) are made:

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

A unit is the rows in a run of :data:`RUN_BYTES` of the data file (Page: the rows of the HEAD
pages in it, each row followed through the BLOB and TAIL pages it goes on in:
parsers/aria/blockrow.py, ROW_FLAG_EXTENTS).
Every row of a table of up to :data:`EXACT_ROWS` rows is decoded once to size the units
(their bytes then exact); of a larger one every k-th run (about EXACT_ROWS rows in all), the
other runs' live rows counted (Fixed: from the scan's units; Page: from the page directories)
and sized at the decoded rows' mean.
"""
from __future__ import annotations

import os
import struct

import numpy as np

from dbxray.parsers.aria.blockrec import DIR_COUNT_OFFSET, DIR_ENTRY_SIZE, PAGE_SUFFIX_SIZE
from dbxray.parsers.aria.blockrow import BlockRowError, read_block_row, read_layout
from dbxray.parsers.aria.state import read_header as read_mai
from dbxray.parsers.fileio import FileReadError, ReadOnlyFile
from dbxray.parsers.model import FileEntry
from dbxray.parsers.myisam.state import HeaderError
from dbxray.parsers.server.frm import FrmError
from dbxray.parsers.server.frmfields import _INT_TYPES as INT_TYPES
from dbxray.parsers.server.frmfields import MYSQL_TYPE_BIT, FrmColumns, read_frm_columns
from dbxray.parsers.server.record import RecordError, Value, record_values

from ..sources import UnitSet
from .datarows import RUN_BYTES
from .innodbextern import BTR_EXTERN_LOCAL_STORED_MAX_SIZE, LongField, frame, split_records_cut
from .innodbrows import ROW_OVERHEAD

#: DB_ROW_ID, DB_TRX_ID, DB_ROLL_PTR: the clustered index's fields besides the columns (no primary key)
CLUSTERED_SYSTEM_FIELDS = 3

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
    if f.real_type in INT_TYPES:
        # row0mysql.cc: an integer big-endian, a signed one's sign bit flipped (memcmp order)
        b = bytearray(data[::-1])
        if not f.unsigned:
            b[0] ^= 0x80
        return bytes(b)
    return data


def _big_col(f) -> bool:
    """dict0mem.h DATA_BIG_COL: a column InnoDB may store off-page (its maximum over 255
    bytes, or a BLOB/TEXT)."""
    if f.is_blob:
        return True
    if f.is_char and f.collation is not None:
        return f.pack_length > 255
    return (f.octet_length or 0) > 255


def innodb_image_parts(values: list[Value], nullable: int) -> tuple[bytes, list[LongField]]:
    """:func:`innodb_image` and its columns InnoDB may move off-page (innodbextern.py): where
    their length bytes and values are in it."""
    null_bytes = (nullable + 7) // 8
    lengths = bytearray()
    body = []
    spans = []                               # (length byte index, count, body index, value length, big)
    for v in values:
        if v.data is None:
            continue
        b = _innodb_bytes(v)
        if _variable_in_innodb(v):
            big = _big_col(v.field)
            two = (big or (v.field.octet_length or 0) > 255) and len(b) > 127
            spans.append((len(lengths), 2 if two else 1, len(body), len(b), big))
            lengths += b"\0\0" if two else b"\0"
        body.append(b)
    offsets, at = [], null_bytes + len(lengths)
    for b in body:
        offsets.append(at)
        at += len(b)
    longs = [LongField(null_bytes + la, lb, offsets[bi], n) for la, lb, bi, n, big in spans
             if big and n > BTR_EXTERN_LOCAL_STORED_MAX_SIZE]
    return bytes(null_bytes) + bytes(lengths) + b"".join(body), longs


def innodb_image(values: list[Value], nullable: int) -> bytes:
    """The row as an InnoDB COMPACT/DYNAMIC record holds it after its 5-byte header (module doc)."""
    return innodb_image_parts(values, nullable)[0]


def innodb_frame(values: list[Value], nullable: int) -> bytes:
    """The row framed for the InnoDB row models: its image behind its length, with its columns
    InnoDB may store off-page where the record may be too long for a page (innodbextern.py)."""
    image, longs = innodb_image_parts(values, nullable)
    return frame(image, longs, len(values) + CLUSTERED_SYSTEM_FIELDS, ROW_OVERHEAD)


def inpage_length(framed: bytes) -> int:
    """The record image a 16 KiB DYNAMIC page keeps of a framed row (its long columns moved
    off-page as the engine moves them)."""
    recs, _ = split_records_cut(framed, 0, overhead=ROW_OVERHEAD)
    return len(recs[0].image) if recs else 0


def full_width_frame(values: list[Value], nullable: int) -> bytes:
    """:func:`full_width_image` behind its 4-byte length."""
    image = full_width_image(values, nullable)
    return len(image).to_bytes(4, "little") + image


def full_width_image(values: list[Value], nullable: int) -> bytes:
    """The row as MyRocks's value and TokuDB's row hold it (module doc)."""
    out = [bytes((nullable + 7) // 8)]
    for v in values:
        if v.data is None:
            continue
        if v.field.is_varchar:
            out.append(len(v.data).to_bytes(v.field.varchar_length_bytes, "little"))
        elif v.field.is_blob:
            out.append(len(v.data).to_bytes(v.field.blob_length_bytes, "little"))
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


def _unit_sets(entry: FileEntry, n_units: int, rows_of, live_of, nullable: int, order_key: np.ndarray,
               source: str) -> tuple[UnitSet, UnitSet] | str:
    """The two UnitSets (InnoDB images, full-width images) of ``n_units`` units: ``rows_of(f, j)``
    decodes unit ``j``'s live rows (lists of :class:`Value`), ``live_of(f, j)`` only counts them.
    Every row is decoded when the file holds up to :data:`EXACT_ROWS` of them (each unit's
    bytes exact); else every k-th unit gives the rows' mean (module doc)."""
    path = entry.abspath
    last: dict[int, list] = {}          # the last unit decoded: its two images are asked for one after the other

    def payload(image, j: int) -> bytes:
        rows = last.get(j)
        if rows is None:
            with ReadOnlyFile(path) as f:
                rows = rows_of(f, j)
            last.clear()
            last[j] = rows
        return b"".join(image(v, nullable) for v in rows)

    images = (innodb_frame, full_width_frame)
    live = np.zeros(n_units, dtype=np.int64)
    sums = {im: np.zeros(n_units, dtype=np.int64) for im in images}
    seen = {im: [0, 0] for im in images}
    longest = 0
    inpage_sum = 0                      # the decoded rows' in-page record images (long columns off-page)
    rows_total = int((entry.sections.get(entry.engine) or {}).get("rows") or 0)
    step = max(1, -(-rows_total // EXACT_ROWS) if rows_total else 1)
    try:
        with ReadOnlyFile(path) as f:
            for j in range(n_units):
                if step > 1 and j % step:
                    live[j] = live_of(f, j)
                    continue
                for v in rows_of(f, j):
                    live[j] += 1
                    for im in images:
                        framed = im(v, nullable)
                        n = len(framed)
                        sums[im][j] += n
                        seen[im][0] += n
                        seen[im][1] += 1
                        if im is innodb_frame:
                            inpage = inpage_length(framed)
                            longest = max(longest, inpage)
                            inpage_sum += inpage
    except (FileReadError, RecordError, BlockRowError) as e:
        return f"rows not read: {e} (offset {getattr(e, 'offset', '?')})"
    if step > 1:
        for im, (b, k) in seen.items():
            sums[im] = np.round(live * (b / max(k, 1))).astype(np.int64)
    keep = np.flatnonzero(live > 0)
    if not len(keep):
        return "no live rows"
    out = []
    inpage_avg = inpage_sum / max(seen[innodb_frame][1], 1)
    for im, what in ((innodb_frame, "InnoDB records"), (full_width_frame, "full-width rows")):
        out.append(UnitSet(label=f"{entry.path} ({source} as {what}, runs of {RUN_BYTES >> 20} MiB)",
                           logical=sums[im][keep], strata=np.zeros(len(keep), dtype=np.int64),
                           payload=lambda k, im=im: payload(im, int(keep[k])), order_key=order_key[keep],
                           meta={"entry": entry, "rows": int(live.sum()), "longest": longest, "exact": step == 1,
                                 "inpage_avg": inpage_avg,
                                 "decode": lambda k: _decoded(rows_of, path, int(keep[k]))}))
    return out[0], out[1]


def _decoded(rows_of, path: str, j: int) -> list[list[Value]]:
    with ReadOnlyFile(path) as f:
        return rows_of(f, j)


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

    def records(f: ReadOnlyFile, j: int) -> bytes:
        return f.pread(j * run_rows * reclen, min(run_rows, total - j * run_rows) * reclen)

    def rows_of(f: ReadOnlyFile, j: int) -> list[list[Value]]:
        buf = records(f, j)
        return [record_values(buf[k:k + reclen], cols) for k in range(0, len(buf) - reclen + 1, reclen)
                if buf[k] != 0]                               # 0: a deleted row (mi_statrec.c)

    # the live rows of each run from the scan's units (staticrec.py: rows and the live share of
    # each), not read again
    u = entry.units
    names = entry.kind_names or {}
    row_kinds = [c for c, n in names.items() if n in ("ROW", "DELETED")]
    sel = np.isin(u["kind"], row_kinds)
    counts = u["stored"][sel].astype(np.int64) // reclen
    alive = np.round(counts * u["fill"][sel].astype(np.float64)).astype(np.int64)
    live_by_run = np.bincount(u["offset"][sel].astype(np.int64) // (run_rows * reclen), weights=alive,
                              minlength=n_units).astype(np.int64)

    def live_of(f: ReadOnlyFile, j: int) -> int:
        return int(live_by_run[j])

    return _unit_sets(entry, n_units, rows_of, live_of, nullable,
                      np.arange(n_units, dtype=np.int64) * run_rows * reclen, "rows decoded with the .frm")


def page_row_units(entry: FileEntry, engine: str) -> tuple[UnitSet, UnitSet] | str:
    """The live rows of an Aria Page (BLOCK_RECORD) data file as (InnoDB images, full-width
    images) in runs of HEAD pages: each row read with the ``.MAI``'s column definitions
    (parsers/aria/blockrow.py) and the ``.frm``'s columns, or why they are not read."""
    sec = entry.sections.get(engine) or {}
    if sec.get("row_format") != "Page" or entry.units is None or not len(entry.units):
        return "not a Page data file with rows"
    types = sec.get("page_types") or {}
    if types.get("BAD_PAGE_TYPE") or types.get("PART_PAGE"):
        return "damaged pages"
    cols, why = table_columns(entry)
    if cols is None:
        return why or "no columns"
    mai = os.path.splitext(entry.abspath)[0] + ".MAI"
    try:
        with ReadOnlyFile(mai) as f:
            head = f.pread(0, min(f.size, 1 << 20))
        h = read_mai(head)
        layout = read_layout(head, h)
    except (FileReadError, OSError, HeaderError, BlockRowError) as e:
        return f"{mai}: column definitions not read ({e})"
    dec = entry.detail.get("aria_decryptor") if h.encrypted else None
    if h.encrypted and dec is None:
        return (f"encrypted pages not decrypted ({entry.path}: no key file, or its key id 1 does not decrypt them; "
                f"the scan's warning says which)")
    by_offset = {f.record_offset: f for f in cols.fields if f.stored}
    if sorted(by_offset) != sorted(c.offset for c in layout.columns) or h.reclength != cols.reclength:
        return "the .MAI's columns are not the .frm's"
    nullable = sum(1 for f in cols.fields if f.stored and f.nullable)
    names = entry.kind_names or {}
    head_code = next((c for c, n in names.items() if n == "HEAD_PAGE"), None)
    block = h.block_size
    offsets = entry.units["offset"][entry.units["kind"] == head_code].astype(np.int64)
    run = offsets // RUN_BYTES
    keys, first = np.unique(run, return_index=True)
    bounds = list(first) + [len(offsets)]
    order = [f.record_offset for f in cols.fields if f.stored]

    def directory(page: bytes) -> list[tuple[int, int]]:
        n = page[DIR_COUNT_OFFSET]
        tail = len(page) - PAGE_SUFFIX_SIZE
        out = []
        for r in range(n):
            off, length = struct.unpack_from("<HH", page, tail - DIR_ENTRY_SIZE * (r + 1))
            if off:                                           # 0: a free entry (a deleted row)
                out.append((off, length))
        return out

    def page_at(f: ReadOnlyFile, n: int) -> bytes:
        page = f.pread(n * block, block)
        if dec is None or len(page) < block:
            return page
        # an encrypted table's page (parsers/aria/pagecrypt.py, the decryptor the scan made)
        return dec.data_pages(np.frombuffer(page, dtype=np.uint8).reshape(1, block),
                              np.array([n], dtype=np.int64))[0].tobytes()

    def rows_of(f: ReadOnlyFile, j: int) -> list[list[Value]]:
        def read_page(n: int) -> bytes:                 # a row's BLOB and TAIL pages (ROW_FLAG_EXTENTS)
            return page_at(f, n)
        out = []
        for k in range(bounds[j], bounds[j + 1]):
            page = page_at(f, int(offsets[k]) // block)
            for off, length in directory(page):
                vals = read_block_row(page, off, length, layout, read_page, block)
                out.append([Value(by_offset[o], vals[o]) for o in order])
        return out

    def live_of(f: ReadOnlyFile, j: int) -> int:
        # the directory only: its entry count in the page header, its entries before the suffix
        n = 0
        for k in range(bounds[j], bounds[j + 1]):
            if dec is not None:
                page = page_at(f, int(offsets[k]) // block)
                count = page[DIR_COUNT_OFFSET]
                tail = page[block - PAGE_SUFFIX_SIZE - DIR_ENTRY_SIZE * count:block - PAGE_SUFFIX_SIZE]
            else:
                count = f.pread(int(offsets[k]) + DIR_COUNT_OFFSET, 1)[0]
                tail = f.pread(int(offsets[k]) + block - PAGE_SUFFIX_SIZE - DIR_ENTRY_SIZE * count,
                               DIR_ENTRY_SIZE * count)
            n += sum(1 for r in range(count) if tail[DIR_ENTRY_SIZE * r:DIR_ENTRY_SIZE * r + 2] != b"\0\0")
        return n

    return _unit_sets(entry, len(keys), rows_of, live_of, nullable,
                      np.array([int(offsets[a]) for a in first], dtype=np.int64),
                      "rows read with the .MAI's column definitions and the .frm")

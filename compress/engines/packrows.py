"""The rows of a MyISAM or Aria data file as the packer reads them (myisampack.c / aria_pack.c
``mrg_rrnd``: each live row as the server's record), for the packer's size model
(packmodel.py), and the model's figure for the what-if (compress/engines/myisam.py):

* Fixed (mi_statrec.c / ma_statrec.c): the record as the data file holds it, a deleted one
  (first byte 0) left out;
* Dynamic (mi_dynrec.c / ma_dynrec.c): each row's blocks gathered (datarows.py
  ``read_dynamic_row``) and unpacked into the record (parsers/myisam/dynrec.py ``unpack_record``);
* Aria Page (ma_blockrec.c): each row of the HEAD pages' directories read with the ``.MAI``'s
  column definitions (parsers/aria/blockrow.py, through its BLOB and TAIL pages), its columns
  put back at their offsets in the record, NULL ones as zero bytes with their null bit set.

The columns are the index file's (the ``.MYI``'s MI_COLUMNDEF; the ``.MAI``'s MARIA_COLUMNDEF
in record order after the null bytes, as aria_pack packs them).  A table of up to
:data:`~.fixedrows.EXACT_ROWS` rows is read whole (the figure is then the model's exactly);
a larger one every k-th row (Page: every k-th HEAD page), its counts scaled to the table's
rows (``packmodel.packed_size``) and the rows' mean with its 95% interval.
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
from dbxray.parsers.myisam.dynrec import unpack_record
from dbxray.parsers.myisam.packrec import FIELD_BLOB, FIELD_VARCHAR, PORTABLE_SIZEOF_CHAR_PTR
from dbxray.parsers.myisam.state import HeaderError
from dbxray.parsers.myisam.state import read_header as read_myi

from .datarows import read_dynamic_row
from .fixedrows import EXACT_ROWS
from .packmodel import PackedSize, PackStats, interval, packed_size

#: the pack version each packer writes in its header (checked on their output: myisampack 2,
#: aria_pack 1): a row's length bytes over 65535 (packmodel.calc_pack_length)
PACK_VERSION = {"myisam": 2, "aria": 1}
#: the header read for the column definitions (a .MYI's header_length is a u16; a .MAI's the same)
MAX_INDEX_HEADER = 1 << 16
#: the seed of the rows' sample (a table of more than EXACT_ROWS rows): the same figure each run
SAMPLE_SEED = 19
TOOLS = {"myisam": ("myisampack", ".MYI", "myisamchk"), "aria": ("aria_pack", ".MAI", "aria_chk")}


def _columns(entry: FileEntry, engine: str):
    """(columns as (type, length), null bytes, Aria's column definitions or None, its header), or why not."""
    index = os.path.splitext(entry.abspath)[0] + TOOLS[engine][1]
    try:
        with ReadOnlyFile(index) as f:
            head = f.pread(0, min(f.size, MAX_INDEX_HEADER))
        if engine == "aria":
            h = read_mai(head)
            cols = sorted(read_layout(head, h).columns, key=lambda c: c.offset)
            at = h.null_bytes
            for c in cols:
                if c.offset != at:
                    return f"{index}: the columns do not follow each other in the record (offset {c.offset})"
                at += c.length
            return [(c.type, c.length) for c in cols], h.null_bytes, cols, h
        h = read_myi(head)
        if not h.columns:
            return f"{index}: column definitions not read"
        return list(h.columns), 0, None, h
    except (FileReadError, OSError, HeaderError, BlockRowError, ValueError) as e:
        return f"{index}: {e}"


def _record_of_values(vals: dict, cols, null_bytes: int, reclength: int) -> tuple[bytes, dict]:
    rec = bytearray(reclength)
    blobs = {}
    for c in cols:
        v = vals.get(c.offset)
        if v is None:
            if c.null_bit:
                rec[c.null_pos] |= c.null_bit
            if c.type == FIELD_BLOB:
                blobs[c.offset] = b""
            continue
        if c.type == FIELD_VARCHAR:
            nb = 1 if c.length - 1 < 256 else 2
            rec[c.offset:c.offset + nb] = len(v).to_bytes(nb, "little")
            rec[c.offset + nb:c.offset + nb + len(v)] = v
        elif c.type == FIELD_BLOB:
            size = c.length - PORTABLE_SIZEOF_CHAR_PTR
            rec[c.offset:c.offset + size] = len(v).to_bytes(size, "little")
            blobs[c.offset] = v
        else:
            rec[c.offset:c.offset + c.length] = v[:c.length]
    return bytes(rec), blobs


def packer_size(entry: FileEntry, engine: str) -> tuple[PackedSize, int, float, float] | str:
    """(the model's packed data file, rows read, the 95% interval's ends), or why not made."""
    sec = entry.sections.get(engine) or {}
    fmt = sec.get("row_format")
    if fmt == "Compressed":
        return "the data file is already packed"
    if fmt not in ("Fixed", "Dynamic", "Page"):
        return f"{fmt} rows are not what the packer reads here" if fmt else "row format not known"
    if entry.units is None or not len(entry.units):
        return "no rows"
    names = entry.kind_names or {}
    if any(n in ("NOT_WALKED", "UNREADABLE") and bool((entry.units["kind"] == c).any()) for c, n in names.items()):
        return "the data file was not walked to its end"
    got = _columns(entry, engine)
    if isinstance(got, str):
        return got
    columns, null_bytes, aria_cols, h = got
    reclength = null_bytes + sum(n for _, n in columns)
    rows_total = int(sec.get("rows") or 0)
    step = max(1, -(-rows_total // EXACT_ROWS)) if rows_total else 1
    stats = PackStats(columns, null_bytes, records_hint=1, version=PACK_VERSION[engine])
    # a sample of one row (Page: one HEAD page) in ``step``, drawn at random (a stride could
    # follow a pattern in the rows: every other row of a table whose rows alternate); seeded
    rng = np.random.default_rng(SAMPLE_SEED)

    def take() -> bool:
        return step == 1 or rng.random() * step < 1
    read = 0
    try:
        with ReadOnlyFile(entry.abspath) as f:
            if fmt == "Fixed":
                size = int(entry.apparent_bytes)
                if size % reclength:
                    return f"data file of {size} bytes is not whole {reclength}-byte records"
                total = size // reclength
                live = 0
                chunk = max(1, (1 << 20) // reclength)
                for a in range(0, total, chunk):
                    buf = f.pread(a * reclength, min(chunk, total - a) * reclength)
                    for k in range(0, len(buf), reclength):
                        if buf[k] == 0:
                            continue                      # a deleted row (mi_statrec.c)
                        if take():
                            stats.add(buf[k:k + reclength])
                            read += 1
                        live += 1
                rows_total = live
            elif fmt == "Dynamic":
                row_codes = [c for c, n in names.items() if n == "ROW"]
                offsets = entry.units["offset"][np.isin(entry.units["kind"], row_codes)].astype(np.int64)
                rows_total = len(offsets)
                for pos in (offsets if step == 1 else offsets[rng.random(len(offsets)) * step < 1]):
                    row = read_dynamic_row(f, int(pos))
                    rec = unpack_record(row, columns, null_bytes) if row is not None else None
                    if rec is None or len(rec[0]) != reclength:
                        return f"row at offset {int(pos)} not unpacked into its {reclength}-byte record"
                    stats.add(*rec)
                    read += 1
            else:
                if getattr(h, "encrypted", False):
                    return "encrypted pages"
                index = os.path.splitext(entry.abspath)[0] + ".MAI"
                with ReadOnlyFile(index) as ix:
                    layout_head = ix.pread(0, min(ix.size, MAX_INDEX_HEADER))
                layout = read_layout(layout_head, h)
                block = h.block_size
                head_code = next((c for c, n in names.items() if n == "HEAD_PAGE"), None)
                pages = entry.units["offset"][entry.units["kind"] == head_code].astype(np.int64)
                live = 0

                def read_page(n: int) -> bytes:
                    return f.pread(n * block, block)
                for off in pages:
                    page = f.pread(int(off), block)
                    sampled = take()
                    count = page[DIR_COUNT_OFFSET]
                    tail = len(page) - PAGE_SUFFIX_SIZE
                    for r in range(count):
                        o, length = struct.unpack_from("<HH", page, tail - DIR_ENTRY_SIZE * (r + 1))
                        if not o:
                            continue                      # a free entry (a deleted row)
                        live += 1
                        if not sampled:
                            continue
                        vals = read_block_row(page, o, length, layout, read_page, block)
                        stats.add(*_record_of_values(vals, aria_cols, null_bytes, reclength))
                        read += 1
                rows_total = live
    except (FileReadError, OSError, BlockRowError, HeaderError) as e:
        return f"rows not read: {e} (offset {getattr(e, 'offset', '?')})"
    if not read:
        return "no live rows"
    p = packed_size(stats, rows_total)
    lo, hi = interval(p, read)
    return p, read, lo, hi


def pack_command(engine: str, database: str, table: str) -> str:
    """The packer's command line, run in the data directory on the table's index file, and
    the index rebuild it asks for (myisampack.c: "Remember to run myisamchk -rq on compressed
    tables")."""
    tool, ext, chk = TOOLS[engine]
    name = f"{database}/{table}{ext}"
    return f"{tool} --backup {name} && {chk} -rq {name}"

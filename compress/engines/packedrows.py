"""The rows of a myisampack-compressed MyISAM data file (ROW_FORMAT=COMPRESSED, read-only) or
an aria_pack'ed Aria one, unpacked with the file's own Huffman trees (parsers/myisam/packrec.py:
mi_packrec.c ``_mi_pack_rec_unpack``, ma_packrec.c ``_ma_pack_rec_unpack``) into the server's
record, then decoded into their columns with the
table's ``.frm`` and re-encoded as the other engines would store them, exactly as Fixed rows
are (fixedrows.py: the InnoDB image and the full-width MyRocks / TokuDB image, in runs of
:data:`~.datarows.RUN_BYTES` of the data file, every row decoded up to
:data:`~.fixedrows.EXACT_ROWS` rows, else every k-th run).

A unit is the rows whose packed bytes start in a run (the scan's PACKED_ROW units: one a row).
BLOB/TEXT values come from the row's unpacked blobs (``uf_blob``), not the record's pointer.
"""
from __future__ import annotations

import os

import numpy as np

from dbxray.parsers.fileio import FileReadError, ReadOnlyFile
from dbxray.parsers.model import FileEntry
from dbxray.parsers.aria.blockrow import BlockRowError, read_layout
from dbxray.parsers.aria.state import read_header as read_mai
from dbxray.parsers.myisam import packrec
from dbxray.parsers.myisam.state import HeaderError
from dbxray.parsers.myisam.state import read_header as read_myi
from dbxray.parsers.server.frmfields import FrmColumns
from dbxray.parsers.server.record import RecordError, Value, record_values

from .datarows import RUN_BYTES
from .fixedrows import _unit_sets, table_columns

#: the most of the .MYI header read for its column definitions (its header_length is a u16)
MAX_INDEX_HEADER = 1 << 16


def values_from_record(rec: bytes, blobs: dict[int, bytes], cols: FrmColumns) -> list[Value]:
    """Each stored column's value of an unpacked record (BLOB/TEXT from ``blobs``: the unpacked
    blobs by their column's offset)."""
    return record_values(rec, cols, blobs)


def pack_info_of(entry: FileEntry, engine: str = "myisam") -> tuple[packrec.PackInfo | None, str | None]:
    """The data file's pack info read with its index's column definitions (``.MYI``; Aria's
    ``.MAI`` and its null bytes), or why not."""
    aria = engine == "aria"
    index = os.path.splitext(entry.abspath)[0] + (".MAI" if aria else ".MYI")
    try:
        with ReadOnlyFile(index) as f:
            head = f.pread(0, min(f.size, MAX_INDEX_HEADER))
        if aria:
            h = read_mai(head)
            lengths, null_bytes = [c.length for c in read_layout(head, h).columns], h.null_bytes
        else:
            h = read_myi(head)
            lengths, null_bytes = [n for _, n in h.columns], 0
        if not lengths:
            return None, f"{index}: column definitions not read"
        with ReadOnlyFile(entry.abspath) as f:
            magic = packrec.MARIA_PACK_FILE_MAGIC if aria else packrec.MYISAM_PACK_FILE_MAGIC
            ph = packrec.read_pack_header(f.pread(0, packrec.HEAD_LENGTH), magic)
            if ph.header_length > f.size:
                return None, f"header_length {ph.header_length} past the file's end"
            buf = f.pread(0, ph.header_length)
        return packrec.read_pack_info(buf, lengths, bool(h.blobs), magic, null_bytes), None
    except (FileReadError, OSError, HeaderError, BlockRowError, ValueError) as e:
        return None, f"{e} (offset {getattr(e, 'offset', '?')})"


def packed_row_units(entry: FileEntry, engine: str = "myisam"):
    """The rows of a compressed data file as (InnoDB images, full-width images) in runs (module
    doc), or why they are not read."""
    sec = entry.sections.get(engine) or {}
    if sec.get("row_format") != "Compressed" or entry.units is None or not len(entry.units):
        return "not a compressed data file with rows"
    if not sec.get("complete"):
        return "the rows were not walked to the end of the data"
    cols, why = table_columns(entry)
    if cols is None:
        return why or "no columns"
    info, why = pack_info_of(entry, engine)
    if info is None:
        return why or "no pack info"
    if info.reclength != cols.reclength:
        return f"the index's record of {info.reclength} bytes is not the .frm's {cols.reclength}"
    names = entry.kind_names or {}
    row_code = next((c for c, n in names.items() if n == "PACKED_ROW"), None)
    mask = entry.units["kind"] == row_code
    offsets = entry.units["offset"][mask].astype(np.int64)
    stored = entry.units["stored"][mask].astype(np.int64)
    if not len(offsets):
        return "no rows"
    keys, first = np.unique(offsets // RUN_BYTES, return_index=True)
    bounds = list(first) + [len(offsets)]
    nullable = sum(1 for f in cols.fields if f.stored and f.nullable)
    version, blobs = info.header.version, info.blobs

    def rows_of(f: ReadOnlyFile, j: int) -> list[list[Value]]:
        a, b = bounds[j], bounds[j + 1]
        start = int(offsets[a])
        buf = f.pread(start, int(offsets[b - 1] + stored[b - 1]) - start)
        out = []
        for k in range(a, b):
            at = int(offsets[k]) - start
            try:
                r = packrec.row_at(buf, at, version, blobs, len(buf))
                rec, bl = packrec.unpack_row(info, bytes(buf[r.data_offset:r.data_offset + r.rec_len]), r.blob_len)
            except ValueError as e:
                raise RecordError(f"row not unpacked: {e}", start + at) from None
            out.append(values_from_record(rec, bl, cols))
        return out

    def live_of(f: ReadOnlyFile, j: int) -> int:
        return bounds[j + 1] - bounds[j]

    return _unit_sets(entry, len(keys), rows_of, live_of, nullable,
                      np.array([int(offsets[a]) for a in first], dtype=np.int64),
                      "packed rows unpacked with the file's Huffman trees and decoded with the .frm")

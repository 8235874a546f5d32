"""Blocks of a dynamic-row data file (``.MYD`` of ROW_FORMAT=DYNAMIC; Aria's ``.MAD`` of
ROW_FORMAT=DYNAMIC has the same blocks: storage/maria/ma_dynrec.c), walked from the
start as storage/myisam/mi_dynrec.c _mi_get_block_info reads each block header.  The
first byte is the block type:

* 0: deleted block: 3-byte block length (header included), next and previous deleted
  block (8 bytes each): 20 bytes of header, at least MI_MIN_BLOCK_LENGTH long;
* 1, 2: a whole row: 2- or 3-byte length; 3, 4: the same with 1 byte of unused space after it;
* 5, 6 (and 13: 4-byte row length, 3-byte block length): the first part of a row split
  over several blocks: row length, this block's data length, next block (8 bytes);
* 7, 8: the last part of a split row (2- or 3-byte length), 9, 10: the same with unused bytes;
* 11, 12: a middle part: data length and the next block.

Numbers are big endian.  A row is counted at its first block (types 1-6, 13); the deleted
blocks' bytes are what OPTIMIZE TABLE gives back (state.empty).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..model import UNIT_CORRUPT, UNIT_FREE, empty_units

MI_MIN_BLOCK_LENGTH = 20
MI_DYN_ALIGN_SIZE = 4
#: block walk cap: past this many blocks the rest of the file is one "not walked" unit
MAX_BLOCKS = 1_000_000

KIND_ROW, KIND_ROW_PART, KIND_DELETED, KIND_NOT_WALKED, KIND_BAD = 0, 1, 2, 3, 4
KIND_NAMES = {KIND_ROW: "ROW", KIND_ROW_PART: "ROW_PART (split row)", KIND_DELETED: "DELETED",
              KIND_NOT_WALKED: "NOT_WALKED", KIND_BAD: "UNREADABLE"}

# header type: (header bytes, rec_len bytes, data_len bytes, extra byte, next pointer, first, last)
_TYPES = {
    1: (3, 2, 0, False, False, True, True), 2: (4, 3, 0, False, False, True, True),
    3: (4, 2, 0, True, False, True, True), 4: (5, 3, 0, True, False, True, True),
    5: (13, 2, 2, False, True, True, False), 6: (15, 3, 3, False, True, True, False),
    13: (16, 4, 3, False, True, True, False),
    7: (3, 0, 2, False, False, False, True), 8: (4, 0, 3, False, False, False, True),
    9: (4, 0, 2, True, False, False, True), 10: (5, 0, 3, True, False, False, True),
    11: (11, 0, 2, False, True, False, False), 12: (12, 0, 3, False, True, False, False),
}


@dataclass
class BlockHeader:
    """One row block's header (mi_dynrec.c _mi_get_block_info)."""

    header_bytes: int
    rec_len: int           # the whole row's length (first blocks only, else 0)
    data_len: int          # row bytes in this block
    next_pos: int | None   # the block holding the row's next part (None: the last part)
    first: bool


def read_block_header(buf, pos: int = 0) -> BlockHeader | None:
    """The header of the row block at ``pos`` of ``buf`` (None: a deleted block, an unknown
    type or a header cut short)."""
    if pos >= len(buf):
        return None
    spec = _TYPES.get(buf[pos])
    if spec is None:
        return None
    hdr, rl, dl, _extra, nxt, first, _last = spec
    if pos + hdr > len(buf):
        return None
    p = pos + 1
    rec_len = int.from_bytes(buf[p:p + rl], "big") if rl else 0
    p += rl
    data_len = int.from_bytes(buf[p:p + dl], "big") if dl else rec_len
    p += dl
    next_pos = int.from_bytes(buf[p:p + 8], "big") if nxt else None
    return BlockHeader(hdr, rec_len if first else 0, data_len, next_pos, first)


@dataclass
class DynWalk:
    """What the block walk found."""

    rows: int = 0                  # first blocks (one per live row)
    row_blocks: int = 0            # blocks holding row data (first, middle, last parts)
    row_bytes: int = 0             # bytes of those blocks, headers included
    data_bytes: int = 0            # bytes of row data in them
    deleted_blocks: int = 0
    deleted_bytes: int = 0         # bytes of deleted blocks (OPTIMIZE TABLE gives them back)
    walked_to: int = 0             # offset the walk reached
    complete: bool = False         # the walk reached the end of the data
    error: tuple[str, int] | None = None
    units: np.ndarray = field(default_factory=lambda: empty_units(0))


def walk(buf, end: int, max_blocks: int = MAX_BLOCKS, check=lambda: None) -> DynWalk:
    """Walk the blocks of ``buf`` from 0 to ``end`` (data_file_length)."""
    w = DynWalk()
    offs, lens, kinds, fills = [], [], [], []
    pos = 0
    n = 0
    end = min(end, len(buf))
    while pos < end:
        if n >= max_blocks:
            break
        if n % 65536 == 0:
            check()
        t = buf[pos]
        if t == 0:
            if pos + MI_MIN_BLOCK_LENGTH > end:
                w.error = (f"deleted block header cut by the end of the data at {end}", pos)
                break
            blen = int.from_bytes(buf[pos + 1:pos + 4], "big")
            if blen < MI_MIN_BLOCK_LENGTH or blen & (MI_DYN_ALIGN_SIZE - 1):
                w.error = (f"deleted block of {blen} bytes (at least {MI_MIN_BLOCK_LENGTH}, a multiple of "
                           f"{MI_DYN_ALIGN_SIZE}): not a block header", pos)
                break
            total = blen
            w.deleted_blocks += 1
            w.deleted_bytes += blen
            kind, fill = KIND_DELETED, 0.0
        else:
            spec = _TYPES.get(t)
            if spec is None:
                w.error = (f"block type {t} (0-13 expected): not a block header", pos)
                break
            hdr, rl, dl, extra, nxt, first, _last = spec
            if pos + hdr > end:
                w.error = (f"block header of {hdr} bytes cut by the end of the data at {end}", pos)
                break
            p = pos + 1
            rec_len = int.from_bytes(buf[p:p + rl], "big") if rl else 0
            p += rl
            if dl:
                data_len = int.from_bytes(buf[p:p + dl], "big")
                p += dl
            else:
                data_len = rec_len
            if nxt:
                p += 8
            unused = buf[p] if extra else 0
            total = hdr + data_len + unused
            if total <= 0:
                w.error = (f"block of type {t} with no length", pos)
                break
            w.row_blocks += 1
            w.row_bytes += total
            w.data_bytes += data_len
            if first:
                w.rows += 1
            kind = KIND_ROW if first else KIND_ROW_PART
            fill = data_len / total
        if pos + total > end:
            w.error = (f"block of {total} bytes runs past the end of the data at {end}", pos)
            break
        offs.append(pos)
        lens.append(total)
        kinds.append(kind)
        fills.append(fill)
        pos += total
        n += 1
    w.walked_to = pos
    w.complete = pos >= end and w.error is None
    extra_units = 1 if pos < end else 0
    units = empty_units(len(offs) + extra_units)
    if offs:
        units["offset"][:len(offs)] = offs
        units["stored"][:len(offs)] = lens
        units["logical"][:len(offs)] = lens
        units["kind"][:len(offs)] = kinds
        units["fill"][:len(offs)] = fills
        k = np.asarray(kinds)
        units["flags"][:len(offs)][k == KIND_DELETED] = UNIT_FREE
    if extra_units:
        units[-1]["offset"] = pos
        units[-1]["stored"] = units[-1]["logical"] = min(end - pos, 0xFFFFFFFF)
        units[-1]["kind"] = KIND_BAD if w.error else KIND_NOT_WALKED
        units[-1]["flags"] = UNIT_CORRUPT if w.error else 0
    w.units = units
    return w


# myisampack.h / myisam.h enum en_fieldtype, as a Dynamic row's columns are stored (_mi_rec_pack)
_FIELD_NORMAL, _FIELD_SKIP_ENDSPACE, _FIELD_SKIP_PRESPACE, _FIELD_SKIP_ZERO, _FIELD_BLOB = 0, 1, 2, 3, 4
_FIELD_VARCHAR = 8
PORTABLE_SIZEOF_CHAR_PTR = 8


def unpack_record(row: bytes, columns: list[tuple[int, int]], null_bytes: int = 0
                  ) -> tuple[bytes, dict[int, bytes]] | None:
    """A Dynamic row's packed image (the row :func:`read_block_header`'s blocks gather) back
    into the server's record, as mi_dynrec.c ``_mi_rec_unpack`` does: a flag bit for each
    BLOB, SKIP_ZERO, SKIP_ENDSPACE and SKIP_PRESPACE column first, in whole bytes (a set bit: an empty BLOB, a zero SKIP_ZERO column, a space-stripped CHAR behind its
    length, one byte or two when the column is over 255 bytes and the value over 127), then
    each column (``columns``: the ``.MYI``'s (type, length); Aria's record starts with its
    ``null_bytes``, which the image has after the flags: ma_dynrec.c ``_ma_rec_pack``); VARCHAR behind its length (one byte, or for a
    column over 256 bytes one under 255 or 255 and two big-endian ones: store_key_length_inc).
    The record and each BLOB's bytes by its column's offset; None when the image does not
    make the record (its bytes are left over or run out; a checksum byte may end it)."""
    pack_bits = sum(1 for t, _ in columns if t in (_FIELD_SKIP_ENDSPACE, _FIELD_SKIP_PRESPACE, _FIELD_SKIP_ZERO,
                                                  _FIELD_BLOB))
    flags_len = (pack_bits + 7) // 8
    if len(row) < flags_len:
        return None
    flags = row[:flags_len]
    pos = flags_len + null_bytes
    bit = 0
    out = bytearray(row[flags_len:pos])
    start = 0
    blobs: dict[int, bytes] = {}
    n = len(row)
    try:
        for typ, length in columns:
            at = start + len(out)
            if typ == _FIELD_VARCHAR:
                if length <= 256:
                    k = row[pos]
                    pos += 1
                    out += bytes((k,))
                else:
                    k = row[pos]
                    pos += 1
                    if k == 255:
                        k = row[pos] << 8 | row[pos + 1]
                        pos += 2
                    out += k.to_bytes(2, "little")
                nb = 1 if length <= 256 else 2
                if k > length - nb or pos + k > n:
                    return None
                out += row[pos:pos + k] + bytes(length - nb - k)
                pos += k
                continue
            if typ not in (_FIELD_SKIP_ENDSPACE, _FIELD_SKIP_PRESPACE, _FIELD_SKIP_ZERO, _FIELD_BLOB):
                if pos + length > n:
                    return None
                out += row[pos:pos + length]
                pos += length
                continue
            flag = flags[bit >> 3] >> (bit & 7) & 1
            bit += 1
            if typ in (_FIELD_SKIP_ENDSPACE, _FIELD_SKIP_PRESPACE):
                if flag:
                    k = row[pos]
                    if length > 255 and k & 128:
                        k = (k & 127) + (row[pos + 1] << 7)
                        pos += 2
                    else:
                        pos += 1
                    if k > length or pos + k > n:
                        return None
                    v = row[pos:pos + k]
                    pos += k
                    pad = b" " * (length - k)
                    out += v + pad if typ == _FIELD_SKIP_ENDSPACE else pad + v
                else:
                    if pos + length > n:
                        return None
                    out += row[pos:pos + length]
                    pos += length
            elif typ == _FIELD_SKIP_ZERO:
                if flag:
                    out += bytes(length)
                else:
                    if pos + length > n:
                        return None
                    out += row[pos:pos + length]
                    pos += length
            else:                                         # BLOB: its length, then its bytes
                size = length - PORTABLE_SIZEOF_CHAR_PTR
                if flag:
                    out += bytes(length)
                    blobs[at] = b""
                    continue
                if pos + size > n:
                    return None
                k = int.from_bytes(row[pos:pos + size], "little")
                out += row[pos:pos + size] + bytes(PORTABLE_SIZEOF_CHAR_PTR)
                pos += size
                if pos + k > n:
                    return None
                blobs[at] = row[pos:pos + k]
                pos += k
    except IndexError:
        return None
    if bit != pack_bits or n - pos > 1:
        return None
    return bytes(out), blobs

"""The inspector's facts of one Aria unit: a ``.MAD`` page (ma_blockrec.h: LSN,
PAGE_TYPE, DIR_COUNT, DIR_FREE, EMPTY_SPACE, the directory entries before the 4-byte
CRC) or a ``.MAI`` index page (maria_def.h: [LSN, TRANSID,] key number, flag, bytes used,
keys, free space, CRC), with their byte offsets and regions; other units as bytes."""
from __future__ import annotations

from ..engine import UnitInspection
from ..fileio import ReadOnlyFile
from ..model import FileEntry
from . import blockrec, pagecrc
from .state import lsn_korr, lsn_text

MAX_SHOWN = 1 << 16


def _bytes(entry: FileEntry, offset: int, size: int) -> bytes:
    try:
        with ReadOnlyFile(entry.abspath) as f:
            return bytes(f.pread(offset, min(size, MAX_SHOWN)))
    except Exception:       # noqa: BLE001 - the inspector shows what it can
        return b""


def _crc(data: bytes, page_no: int, length: int, no_crc: int) -> str:
    r = pagecrc.check(data, page_no, length, no_crc)
    return {pagecrc.OK: "matches", pagecrc.BAD: "does NOT match", pagecrc.NO_CRC: "none stored"}[r]


def inspect_unit(entry: FileEntry, i: int, unit=None) -> UnitInspection:
    u = entry.units[i] if unit is None else unit
    off, size, kind = int(u["offset"]), int(u["stored"]), int(u["kind"])
    data = _bytes(entry, off, size)
    sec = entry.sections.get("aria") or {}
    if entry.role == "table_data" and sec.get("pages") is None:      # Dynamic / Fixed: MyISAM's blocks
        from ..myisam.inspect import inspect_unit as blocks
        return blocks(entry, i, unit)
    out = UnitInspection(data=data)
    name = (entry.kind_names or {}).get(kind, str(kind))
    bs = int(sec.get("block_size") or 0) or size
    out.fields.append(("unit", f"{name}, {size:,} B at offset {off:,}", None))
    if len(data) < size or size != bs or entry.role not in ("table_data", "table_index") or \
            name in ("MAI_HEADER", "PART_PAGE") or not data:
        out.regions = [(0, len(data), name)]
        return out
    page_no = off // bs
    no_crc = pagecrc.MARIA_NO_CRC_BITMAP_PAGE if name == "BITMAP_PAGE" else pagecrc.MARIA_NO_CRC_NORMAL_PAGE
    stored = int.from_bytes(data[bs - 4:], "little")
    if entry.role == "table_data" and sec.get("pages") is not None:
        if name == "BITMAP_PAGE":
            out.fields.append(("bitmap", "3 bits a page for the pages after it (ma_bitmap.c)", 0))
            out.regions = [(0, bs - 4, "bitmap"), (bs - 4, bs, "CRC")]
        else:
            d = data[blockrec.DIR_COUNT_OFFSET]
            empty = int.from_bytes(data[blockrec.EMPTY_SPACE_OFFSET:blockrec.EMPTY_SPACE_OFFSET + 2], "little")
            out.fields += [("LSN", lsn_text(lsn_korr(data, 0)), 0),
                           ("PAGE_TYPE", f"{data[7] & 7} ({name}){' CAN_BE_COMPACTED' if data[7] & 128 else ''}", 7)]
            if name in ("HEAD_PAGE", "TAIL_PAGE"):
                out.fields += [("DIR_COUNT", str(d), 8), ("DIR_FREE", str(data[9]), 9), ("EMPTY_SPACE", f"{empty:,}", 10)]
                dir_start = bs - 4 - 4 * d
                for k in range(min(d, 16)):
                    p = bs - 4 - 4 * (k + 1)
                    o, ln = int.from_bytes(data[p:p + 2], "little"), int.from_bytes(data[p + 2:p + 4], "little")
                    out.fields.append((f"dir[{k}]", "free" if o == 0 else f"row at {o:,}, {ln:,} B", p))
                out.regions = [(0, blockrec.PAGE_HEADER_SIZE, "page header"),
                               (blockrec.PAGE_HEADER_SIZE, dir_start, "rows and free space"),
                               (dir_start, bs - 4, "directory"), (bs - 4, bs, "CRC")]
            else:
                out.regions = [(0, 8, "LSN and page type"), (8, bs - 4, "blob data" if name == "BLOB_PAGE"
                                                                 else "page body"), (bs - 4, bs, "CRC")]
        out.fields.append(("CRC", f"0x{stored:08X} ({_crc(data, page_no, bs - 4, no_crc)})", bs - 4))
        return out
    if entry.role == "table_index":
        t = bool(sec.get("transactional"))
        hdr = (13 if t else 0) + 4
        used = int.from_bytes(data[hdr - 2:hdr], "big")
        if t:
            out.fields += [("LSN", lsn_text(lsn_korr(data, 0)), 0),
                           ("TRANSID", str(int.from_bytes(data[7:13], "big")), 7)]
        keynr = data[hdr - 4]
        out.fields += [("key number", "255 (deleted page)" if keynr == 255 else str(keynr), hdr - 4),
                       ("flag", f"{data[hdr - 3]} ({'node' if data[hdr - 3] & 1 else 'leaf'})", hdr - 3),
                       ("bytes used", f"{used:,}", hdr - 2)]
        used_c = min(max(used, hdr), bs - 4)
        out.regions = [(0, hdr, "page header"), (hdr, used_c, "keys"), (used_c, bs - 4, "free space"),
                       (bs - 4, bs, "CRC")]
        out.fields.append(("CRC", f"0x{stored:08X} ({_crc(data, page_no, used_c, no_crc)})", bs - 4))
    return out

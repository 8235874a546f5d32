"""The inspector's facts of one MyISAM unit: a key block of the ``.MYI`` (mi_page.c:
the 2-byte header with the bytes used and the node bit, the keys, the free space; a
deleted block's link to the next) or a row block of the ``.MYD`` (mi_dynrec.c block
header type and lengths; a fixed-length row's first byte; a packed row's lengths and bits, the
pack header: mi_packrec.c), with byte offsets."""
from __future__ import annotations

from ..engine import UnitInspection
from ..fileio import ReadOnlyFile
from ..model import FileEntry
from . import dynrec, keyblocks, packrec

MAX_SHOWN = 1 << 16


def inspect_unit(entry: FileEntry, i: int, unit=None) -> UnitInspection:
    u = entry.units[i] if unit is None else unit
    off, size, kind = int(u["offset"]), int(u["stored"]), int(u["kind"])
    try:
        with ReadOnlyFile(entry.abspath) as f:
            data = bytes(f.pread(off, min(size, MAX_SHOWN)))
    except Exception:       # noqa: BLE001 - the inspector shows what it can
        data = b""
    out = UnitInspection(data=data)
    name = (entry.kind_names or {}).get(kind, str(kind))
    out.fields.append(("unit", f"{name}, {size:,} B at offset {off:,}", None))
    if not data:
        return out
    if entry.role == "table_index" and kind in (keyblocks.KIND_LEAF, keyblocks.KIND_NODE) and len(data) >= 2:
        used = int.from_bytes(data[:2], "big") & 0x7FFF
        out.fields += [("bytes used", f"{used:,}", 0), ("node", "yes" if data[0] & 0x80 else "no (leaf)", 0)]
        if int(u["owner"]) >= 0:
            out.fields.append(("key", str(int(u["owner"])), None))
        out.regions = [(0, 2, "block header"), (2, min(used, len(data)), "keys"), (min(used, len(data)), len(data),
                                                                                   "free space")]
    elif entry.role == "table_index" and kind == keyblocks.KIND_FREE and len(data) >= 8:
        link = int.from_bytes(data[:8], "big")
        out.fields.append(("next deleted block", "none" if link == keyblocks.HA_OFFSET_ERROR else f"{link:,}", 0))
        out.regions = [(0, 8, "delete link"), (8, len(data), "unused")]
    elif entry.role == "table_data" and packrec.KIND_NAMES[packrec.KIND_ROW] in (entry.kind_names or {}).values():
        _packed(entry, out, data, name, size)
    elif entry.role == "table_data" and "NOT_WALKED" in (entry.kind_names or {}).values():
        t = data[0]
        hdr = dynrec.MI_MIN_BLOCK_LENGTH if t == 0 else dynrec._TYPES.get(t, (len(data),))[0]
        what = "deleted block" if t == 0 else ("unknown" if t not in dynrec._TYPES else
                                               "first part" if dynrec._TYPES[t][5] else "later part")
        out.fields.append(("block type", f"{t} ({what})", 0))
        out.regions = [(0, min(hdr, len(data)), "block header"),
                       (min(hdr, len(data)), len(data), "deleted" if t == 0 else "row data")]
    elif entry.role == "table_data":
        out.fields.append(("first byte", f"{data[0]} ({'deleted row' if data[0] == 0 else 'row in use'})", 0))
        out.regions = [(0, len(data), name)]
    return out


def _packed(entry: FileEntry, out: UnitInspection, data: bytes, name: str, size: int) -> None:
    """A unit of a myisampack / aria_pack file: the header, or a row (its packed length, the
    blobs' length when the row has one, then the columns' Huffman-coded bits)."""
    sec = next((s for s in entry.sections.values() if isinstance(s, dict) and s.get("pack")), {})
    pack = sec.get("pack") or {}
    if name == packrec.KIND_NAMES[packrec.KIND_HEADER]:
        out.fields.append(("pack header", f"version {pack.get('version')}, {pack.get('trees')} trees, "
                                          f"header_length {pack.get('header_length')}", 0))
        out.regions = [(0, min(packrec.HEAD_LENGTH, len(data)), "fixed header"),
                       (min(packrec.HEAD_LENGTH, len(data)), len(data), "column pack info, Huffman trees, values")]
        return
    if name != packrec.KIND_NAMES[packrec.KIND_ROW]:
        out.regions = [(0, len(data), name)]
        return
    version = int(pack.get("version") or 2)
    try:
        rec_len, n = packrec.read_pack_length(data, 0, version)
        out.fields.append(("packed length", f"{rec_len:,}", 0))
        if n + rec_len < size:                      # a blob length follows (a table with blobs)
            blob_len, m = packrec.read_pack_length(data, n, version)
            out.fields.append(("blob length", f"{blob_len:,}", n))
            n += m
    except IndexError:
        out.regions = [(0, len(data), "cut row")]
        return
    out.regions = [(0, n, "lengths"), (n, len(data), "columns (Huffman-coded bits)")]

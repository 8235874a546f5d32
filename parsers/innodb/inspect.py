"""The page inspector's facts of one page: header fields (with their byte offsets)
and byte regions (FIL header, page header, records, free space, page directory, FIL
trailer; compressed payload and punched tail for page-compressed pages), from the
page map (``inspect_page``) or, for a page the scan did not map, from its bytes.
Field offsets as fil0types.h and page0page.h name them.
"""
from __future__ import annotations

from typing import Any

from ..engine import UnitInspection
from ..fileio import ReadOnlyFile
from ..model import UNIT_COMPRESSED, FileEntry
from . import fil, index
from .detail import DetailUnavailable, innodb_detail
from .payloads import unit_payload
from .scan import inspect_page

#: byte offsets of the header fields the inspector names (fil0types.h; page0page.h
#: fields are relative to PAGE_HEADER)
FIELD_OFFSETS = {
    **{name: getattr(fil, name) for name in (
        "FIL_PAGE_SPACE_OR_CHKSUM", "FIL_PAGE_OFFSET", "FIL_PAGE_PREV", "FIL_PAGE_NEXT", "FIL_PAGE_LSN",
        "FIL_PAGE_TYPE", "FIL_PAGE_FILE_FLUSH_LSN", "FIL_PAGE_SPACE_ID")},
    **{name: index.PAGE_HEADER + getattr(index, name) for name in (
        "PAGE_N_DIR_SLOTS", "PAGE_HEAP_TOP", "PAGE_N_HEAP", "PAGE_FREE", "PAGE_GARBAGE", "PAGE_LAST_INSERT",
        "PAGE_DIRECTION", "PAGE_N_DIRECTION", "PAGE_N_RECS", "PAGE_MAX_TRX_ID", "PAGE_LEVEL", "PAGE_INDEX_ID",
        "PAGE_BTR_SEG_LEAF", "PAGE_BTR_SEG_TOP")},
    "format": index.PAGE_HEADER + index.PAGE_N_HEAP,      # the PAGE_HEAP_NO_COMPACT bit of PAGE_N_HEAP
}
_NOT_FIELDS = ("regions", "data", "raw")


def read_page_bytes(entry: FileEntry, offset: int, size: int) -> bytes:
    """The page's bytes as stored (empty when the file cannot be read)."""
    try:
        with ReadOnlyFile(entry.abspath) as f:
            return bytes(f.pread(offset, size))
    except Exception:
        try:
            with open(entry.abspath, "rb") as fh:
                fh.seek(offset)
                return fh.read(size)
        except OSError:
            return b""


def _fmt(v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return "-" if v is None else str(v)
    if isinstance(v, int):
        return f"{v:,}" if abs(v) < 1 << 32 else f"{v:,} (0x{v:X})"
    if isinstance(v, (tuple, list)):
        return ", ".join(_fmt(x) for x in v)
    return str(v)


def _logical_bytes(entry: FileEntry, page_no: int, raw: bytes) -> bytes:
    try:
        return unit_payload(entry, page_no)
    except Exception:
        return raw


def inspect_unit(entry: FileEntry, page_no: int, unit=None) -> UnitInspection:
    """Header fields and byte regions of one page: from the page map when the file was
    scanned (page-compressed pages shown decompressed), else a FIL-level view."""
    sec = entry.sections.get("innodb") or {}
    logical = int(sec.get("page_size") or 16384)
    physical = int(sec.get("physical_page_size") or logical)
    offset = int(unit["offset"]) if unit is not None else page_no * physical
    raw = read_page_bytes(entry, offset, physical)
    try:
        det = innodb_detail(entry) or {}
    except DetailUnavailable as e:
        out = _fallback_decode(entry, raw, page_no, unit, logical, physical)
        out.note = str(e)
        return out
    if det.get("page_map") is not None:
        try:
            info = inspect_page(entry, page_no)
        except Exception as e:  # a parser failure is shown, not raised
            out = _fallback_decode(entry, raw, page_no, unit, logical, physical)
            out.note = f"parser inspector failed: {type(e).__name__}: {e}"
            return out
        data = _logical_bytes(entry, page_no, raw)
        out = UnitInspection(data=data)
        for k, v in info.items():
            if k not in _NOT_FIELDS:
                out.fields.append((k, _fmt(v), FIELD_OFFSETS.get(k)))
        out.regions = [(int(a), int(b), str(n)) for a, b, n in info.get("regions", [])]
        if unit is not None and int(unit["flags"]) & UNIT_COMPRESSED and data != raw:
            out.note = (f"page_compressed: {int(info.get('payload_len') or 0):,} B payload in "
                        f"{int(info.get('stored_bytes') or 0):,} B stored; shown decompressed "
                        f"({len(data):,} B)")
        return out
    return _fallback_decode(entry, raw, page_no, unit, logical, physical)


def _fallback_decode(entry, data, page_no, unit, logical, physical) -> UnitInspection:
    """FIL header/trailer, and the INDEX page header for B-tree pages, read from the
    bytes alone (a file the scan has not mapped, or a page it could not inspect)."""
    out = UnitInspection(data=data)
    if len(data) < fil.FIL_PAGE_DATA:
        out.note = "page is truncated"
        out.regions = [(0, len(data), "page body")]
        return out
    h = fil.parse_fil_header(data)
    names = entry.kind_names or {}
    out.fields += [("checksum", f"0x{h.checksum:08X}", 0), ("page number", f"{h.page_no:,}", 4),
                   ("previous page", "FIL_NULL" if h.prev == fil.FIL_NULL else f"{h.prev:,}", 8),
                   ("next page", "FIL_NULL" if h.next == fil.FIL_NULL else f"{h.next:,}", 12),
                   ("LSN", f"{h.lsn:,}", 16),
                   ("page type", f"{names.get(h.page_type, '')} ({h.page_type})".strip(), 24),
                   ("flush LSN / key version", f"{h.flush_lsn_or_key_version:,}", 26),
                   ("space id", f"{h.space_id:,}", 34)]
    compressed = unit is not None and int(unit["flags"]) & UNIT_COMPRESSED and physical == logical
    if compressed:
        stored = int(unit["stored"]) or physical
        hdr = 26 if h.page_type & 0x8000 else fil.FIL_PAGE_DATA
        out.regions = [(0, hdr, "FIL header"), (hdr, min(stored, physical), "compressed payload"),
                       (min(stored, physical), physical, "punched / unused")]
        out.fields.append(("payload", f"{stored:,} B of {physical:,}", None))
        out.note = "page_compressed: payload as stored on disk"
        return out
    kind = int(unit["kind"]) if unit is not None else h.page_type
    if kind in (fil.FIL_PAGE_INDEX, fil.FIL_PAGE_RTREE, fil.FIL_PAGE_TYPE_INSTANT, fil.FIL_PAGE_SDI) \
            and physical == logical:
        ih = index.parse_index_header(data)
        base = index.PAGE_HEADER
        out.fields += [("n_dir_slots", f"{ih.n_dir_slots:,}", base + 0), ("heap top", f"{ih.heap_top:,}", base + 2),
                       ("n_heap", f"{ih.n_heap:,}", base + 4),
                       ("format", "COMPACT" if ih.compact else "REDUNDANT", base + 4),
                       ("free", f"{ih.free:,}", base + 6), ("garbage", f"{ih.garbage:,} B", base + 8),
                       ("records", f"{ih.n_recs:,}", base + 16), ("max trx id", f"{ih.max_trx_id:,}", base + 18),
                       ("level", f"{ih.level}", base + 26), ("index id", f"{ih.index_id:,}", base + 28),
                       ("data size", f"{ih.data_size:,} B", None)]
        out.regions = index.page_regions(ih, logical)
        return out
    out.regions = [(0, fil.FIL_PAGE_DATA, "FIL header"), (fil.FIL_PAGE_DATA, physical - 8, "page body"),
                   (physical - 8, physical, "FIL trailer")]
    return out

"""Page bytes for the compressor layer and the inspector.

``unit_payload(entry, i)`` returns page i's LOGICAL bytes: the decompressed
page for page-compressed pages (MariaDB both layouts, MySQL type 14), the
physical zip page for ROW_FORMAT=COMPRESSED, the raw page otherwise.
``page_bytes(entry, page_no)`` returns the raw stored page.
"""
from __future__ import annotations

from ..codecs.general import DEFAULT_MAX_OUTPUT
from ..fileio import ReadOnlyFile
from ..model import FileEntry
from .fil import FIL_PAGE_COMPRESSED, FIL_PAGE_PAGE_COMPRESSED
from .pagecomp import PageDecodeError, decode_fcrc32_page, decode_legacy_page, decode_mysql_page


class PayloadError(Exception):
    """A page's bytes could not be produced; the message names file and page."""


def _geometry(entry: FileEntry) -> tuple[int, int, object]:
    det = entry.detail.get("innodb") or {}
    pm = det.get("page_map")
    if pm is None:
        raise PayloadError(f"{entry.path}: not read as an InnoDB file")
    return pm.physical, pm.logical, pm


def page_bytes(entry: FileEntry, page_no: int) -> bytes:
    """The raw stored bytes of page ``page_no`` (physical page size)."""
    physical, _, pm = _geometry(entry)
    if not 0 <= page_no < pm.n_pages:
        raise PayloadError(f"{entry.path}: page {page_no} out of range (0..{pm.n_pages - 1})")
    with ReadOnlyFile(entry.abspath) as f:
        data = f.pread(page_no * physical, physical)
    if len(data) != physical:
        raise PayloadError(f"{entry.path}: page {page_no} truncated ({len(data)} of {physical} bytes)")
    return data


def unit_payload(entry: FileEntry, i: int, max_output: int = DEFAULT_MAX_OUTPUT) -> bytes:
    """Page i's logical bytes (decompressed for page-compressed pages)."""
    physical, logical, pm = _geometry(entry)
    raw = page_bytes(entry, i)
    if not pm.compressed[i]:
        return raw
    if logical > max_output:
        raise PayloadError(f"{entry.path}: page {i}: {logical} bytes over the cap of {max_output}")
    if pm.encrypted[i]:
        raise PayloadError(f"{entry.path}: page {i}: encrypted, not decrypted")
    try:
        if pm.flags.full_crc32:
            return decode_fcrc32_page(raw, logical, pm.compression_algorithm or "").page
        if int(pm.type[i]) == FIL_PAGE_PAGE_COMPRESSED:
            return decode_legacy_page(raw, logical).page
        if int(pm.type[i]) == FIL_PAGE_COMPRESSED:
            return decode_mysql_page(raw, logical).page
    except PageDecodeError as e:
        raise PayloadError(f"{entry.path}: page {i}: {e}") from None
    raise PayloadError(f"{entry.path}: page {i}: compressed page of type {int(pm.type[i])} cannot be decoded")

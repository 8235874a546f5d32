"""Page bytes for the compressor layer and the inspector.

``unit_payload(entry, i)`` returns page i's LOGICAL bytes: MariaDB encrypted
pages decrypted when the scan had the key, the decompressed
page for page-compressed pages (MariaDB both layouts, MySQL type 14), the
physical zip page for ROW_FORMAT=COMPRESSED, the raw page otherwise.
``page_bytes(entry, page_no)`` returns the raw stored page.

Pages are read with ``pread`` on one cached read-only handle per file (a bounded LRU of
:data:`MAX_OPEN_FILES` handles, closed on eviction, by :func:`close_handles` and at exit), not
by opening and mapping the file for every page.  A handle is reopened when the path no longer
names the same file (inode, size or mtime changed).  No map is kept, so a file truncated
meanwhile gives a short read (an error naming the page), never SIGBUS.
"""
from __future__ import annotations

import atexit
import os

from ..codecs.general import DEFAULT_MAX_OUTPUT
from ..fileio import FileReadError, HandleCache, ReadOnlyFile
from ..model import FileEntry
from .fil import FIL_PAGE_COMPRESSED, FIL_PAGE_PAGE_COMPRESSED, FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED
from .detail import DetailUnavailable, innodb_detail
from .pagecomp import PageDecodeError, decode_fcrc32_page, decode_legacy_page, decode_mysql_page


class PayloadError(Exception):
    """A page's bytes could not be produced; the message names file and page."""


#: bound of the handle cache (file descriptors kept open by page_bytes)
MAX_OPEN_FILES = 16


#: the opener is looked up here at each open (tests count the opens)
_HANDLES = HandleCache(MAX_OPEN_FILES, opener=lambda path: ReadOnlyFile(path))
atexit.register(_HANDLES.close)


def close_handles() -> None:
    """Close every cached handle (they are reopened on the next read)."""
    _HANDLES.close()


def _geometry(entry: FileEntry) -> tuple[int, int, object]:
    try:
        det = innodb_detail(entry) or {}
    except DetailUnavailable as e:
        raise PayloadError(str(e)) from None
    pm = det.get("page_map")
    if pm is None:
        raise PayloadError(f"{entry.path}: not read as an InnoDB file")
    return pm.physical, pm.logical, pm


def page_bytes(entry: FileEntry, page_no: int) -> bytes:
    """The raw stored bytes of page ``page_no`` (physical page size)."""
    physical, _, pm = _geometry(entry)
    if not 0 <= page_no < pm.n_pages:
        raise PayloadError(f"{entry.path}: page {page_no} out of range (0..{pm.n_pages - 1})")
    try:
        data = _HANDLES.pread(entry.abspath, page_no * physical, physical,
                              known_holes=(entry.holes, entry.seen, entry.unwritten))
    except FileReadError as e:
        raise PayloadError(f"{entry.path}: page {page_no}: {str(e).split(': ', 1)[-1]}") from None
    except OSError as e:
        raise PayloadError(f"{entry.path}: page {page_no}: cannot read: {e.strerror or e}") from None
    if len(data) != physical:
        raise PayloadError(f"{entry.path}: page {page_no} truncated ({len(data)} of {physical} bytes)")
    return data


def unit_payload(entry: FileEntry, i: int, max_output: int = DEFAULT_MAX_OUTPUT) -> bytes:
    """Page i's logical bytes (decompressed for page-compressed pages)."""
    physical, logical, pm = _geometry(entry)
    raw = page_bytes(entry, i)
    crypt = getattr(pm, "crypt", None)
    if crypt is not None and crypt.decryptor is not None and crypt.decrypted[i]:
        raw = crypt.decryptor.page(raw, i)         # decrypted in memory, never written
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
        if int(pm.type[i]) == FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED:     # decrypted above
            return decode_legacy_page(raw, logical, decrypted=True).page
        if int(pm.type[i]) == FIL_PAGE_COMPRESSED:
            return decode_mysql_page(raw, logical).page
    except PageDecodeError as e:
        raise PayloadError(f"{entry.path}: page {i}: {e}") from None
    raise PayloadError(f"{entry.path}: page {i}: compressed page of type {int(pm.type[i])} cannot be decoded")

"""MySQL 8.0.20+ doublewrite files ``#ib_<page size>_<n>.dblwr`` (storage/innobase/buf/buf0dblwr.cc:
dblwr::File, Double_write::load, create_batch_segments, create_single_segments, dblwr::Buffer).

A file is an array of slots of the server's page size (the size in its name):
Double_write::load reads it in page-size pieces and recovery takes each as the image of
the page its FIL header names (FIL_PAGE_SPACE_ID, FIL_PAGE_OFFSET); dblwr::Buffer::append
advances by a whole page also for a ROW_FORMAT=COMPRESSED page, whose image fills only
the first zip-size bytes of its slot.  Files with an even id hold flush-list batch
segments; files with an odd id hold LRU batch segments (the first File::s_n_pages slots,
as many as an even file has) followed by the slots of single-page flushes
(SYNC_PAGE_FLUSH_SLOTS = 512, divided between the odd files).  A slot never written is
all zero (Double_write::init_file writes zeros).  innodb_doublewrite=DETECT_ONLY (8.0.30+)
writes ``.bdblwr`` files of page ids instead: not read here.

Each written slot: space id, page number, type, LSN, and whether its checksum holds as
recovery checks it (BlockReporter::is_corrupted: crc32 / innodb / none and the LSN in the
trailer for a full page, page_zip checksums over the zip size for a compressed page of a
tablespace whose size the scan knows); encrypted pages (FIL_PAGE_ENCRYPTED...) are not
checked (null)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..arrays import distinct
from . import checksum as ck
from .fil import (BUF_NO_CHECKSUM_MAGIC, FIL_PAGE_COMPRESSED_AND_ENCRYPTED, FIL_PAGE_ENCRYPTED,
                  FIL_PAGE_ENCRYPTED_RTREE, page_type_names)
from .pagemap import _check_legacy_rows

DBLWR_NAME_RE = re.compile(r"^#ib_(?P<page_size>\d+)_(?P<id>\d+)\.dblwr$", re.IGNORECASE)
#: buf0dblwr.cc: DBLWR file pages reserved (over all LRU files) for single page flushes
SYNC_PAGE_FLUSH_SLOTS = 512
_ENCRYPTED_TYPES = (FIL_PAGE_ENCRYPTED, FIL_PAGE_COMPRESSED_AND_ENCRYPTED, FIL_PAGE_ENCRYPTED_RTREE)
#: slots read per batch
_BATCH = 1024


class DblwrError(Exception):
    """The file is not a doublewrite file this reader understands."""


@dataclass
class DblwrFile:
    """What one ``.dblwr`` file holds."""

    file_id: int
    page_size: int
    slots: int
    trailing_bytes: int
    copies: list[dict] = field(default_factory=list)

    @property
    def for_lru(self) -> bool:
        """dblwr::File::is_for_lru: odd ids (LRU batch and single-page flush slots)."""
        return bool(self.file_id & 1)

    def to_json(self, batch_slots: int | None = None) -> dict:
        """``batch_slots``: File::s_n_pages when known (the size of an even sibling file)."""
        single = None
        if batch_slots is not None:
            single = max(self.slots - batch_slots, 0) if self.for_lru else 0
        return {"kind": "dblwr file (MySQL 8.0.20+)", "file_id": self.file_id, "page_size": self.page_size,
                "segments": "LRU batch + single-page flush" if self.for_lru else "flush-list batch",
                "slots": self.slots, "batch_slots": batch_slots, "single_page_slots": single,
                "written_slots": len(self.copies),
                "bad_checksum_slots": sum(1 for c in self.copies if c["checksum_ok"] is False),
                "trailing_bytes": self.trailing_bytes, "copies": self.copies}


def parse_dblwr_name(name: str) -> tuple[int, int] | None:
    """(page size, file id) from ``#ib_<page size>_<id>.dblwr``, or None."""
    m = DBLWR_NAME_RE.match(name)
    if m is None:
        return None
    return int(m.group("page_size")), int(m.group("id"))


def _be32(rows: np.ndarray, off: int) -> np.ndarray:
    b = rows[:, off:off + 4].astype(np.uint32)
    return (b[:, 0] << 24) | (b[:, 1] << 16) | (b[:, 2] << 8) | b[:, 3]


def _zip_ok(rows: np.ndarray, f0: np.ndarray) -> np.ndarray:
    """page_zip_verify_checksum over the rows (each the zip-size image): crc32, innodb (adler), none."""
    good = (ck.zip_page_checksum_crc32(rows) == f0) | (f0 == BUF_NO_CHECKSUM_MAGIC)
    rest = np.nonzero(~good)[0]
    if len(rest):
        good[rest] = np.array(ck.zip_page_checksum_adler(rows[rest]), dtype=np.uint32) == f0[rest]
    return good


def read_dblwr(f, name: str, zip_sizes: dict[int, int] | None = None, check=lambda: None) -> DblwrFile:
    """The slots of one open ``.dblwr`` file (``f``: a ReadOnlyFile); ``zip_sizes`` gives the
    physical page size of ROW_FORMAT=COMPRESSED tablespaces by space id."""
    parsed = parse_dblwr_name(name)
    if parsed is None:
        raise DblwrError(f"{name}: not named #ib_<page size>_<n>.dblwr")
    page_size, file_id = parsed
    if page_size not in (4096, 8192, 16384, 32768, 65536):
        raise DblwrError(f"{name}: page size {page_size} in the name is not an InnoDB page size")
    n = f.size // page_size
    out = DblwrFile(file_id, page_size, n, f.size - n * page_size)
    names = page_type_names("mysql")
    zip_sizes = zip_sizes or {}
    for a in range(0, n, _BATCH):
        check()
        m = min(_BATCH, n - a)
        rows = np.frombuffer(f.pread(a * page_size, m * page_size).ljust(m * page_size, b"\0"),
                             dtype=np.uint8).reshape(m, page_size)
        written = np.nonzero(rows.any(axis=1))[0]
        if not len(written):
            continue
        w = rows[written]
        space = _be32(w, 34)
        page_no = _be32(w, 4)
        ptype = ((w[:, 24].astype(np.uint16) << 8) | w[:, 25]).astype(np.uint16)
        lsn = w[:, 16:24].copy().view(">u8").reshape(-1).astype(np.uint64)
        f0 = _be32(w, 0)
        ok = np.zeros(len(written), dtype=bool)
        physical = np.array([zip_sizes.get(int(s), page_size) for s in space.tolist()], dtype=np.int64)
        full = np.nonzero(physical >= page_size)[0]
        if len(full):
            sub = np.zeros(len(full), dtype=bool)
            _check_legacy_rows(w[full], f0[full], lsn[full], sub, np.arange(len(full)), {})
            ok[full] = sub
        for zs in distinct(physical[physical < page_size]).tolist():
            sel = np.nonzero(physical == zs)[0]
            ok[sel] = _zip_ok(np.ascontiguousarray(w[sel, :zs]), f0[sel])
        for j, slot in enumerate(written.tolist()):
            t = int(ptype[j])
            out.copies.append({"slot": a + slot, "space_id": int(space[j]), "page_no": int(page_no[j]),
                               "type": names.get(t, f"UNKNOWN_PAGE_TYPE_{t}"), "lsn": int(lsn[j]),
                               "page_size": int(physical[j]),
                               "checksum_ok": None if t in _ENCRYPTED_TYPES else bool(ok[j])})
    return out

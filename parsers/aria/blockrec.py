"""Pages of a BLOCK_RECORD data file (``.MAD`` of ROW_FORMAT=PAGE), as
storage/maria/ma_blockrec.h / ma_blockrec.c and ma_bitmap.c lay them out: pages of
``block_size``; page 0 and every ``pages_covered``-th page after it are bitmap pages
(3 bits per page: ``pages_covered = (block_size - PAGE_SUFFIX_SIZE) / 6 * 16 + 1``,
_ma_bitmap_init); every other page starts with LSN (7 bytes), PAGE_TYPE (1 byte:
UNALLOCATED_PAGE 0, HEAD_PAGE 1, TAIL_PAGE 2, BLOB_PAGE 3; bit 7 PAGE_CAN_BE_COMPACTED),
DIR_COUNT (1), DIR_FREE (1) and EMPTY_SPACE (2 bytes, little endian); HEAD and TAIL pages
end with their directory (DIR_ENTRY_SIZE = 4 bytes a row: offset, length; offset 0 for a
free entry) before the 4-byte CRC (PAGE_SUFFIX_SIZE); BLOB pages hold one blob part
after the LSN and type (FULL_PAGE_SIZE).  A row has one directory entry on a HEAD page
(its first part); TAIL pages hold the ends of rows and blobs.  The page types, the
directory counts and the empty space are read with numpy over all pages at once; the
CRCs one page at a time with zlib (pagecrc.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..model import UNIT_BAD_CHECKSUM, UNIT_CORRUPT, UNIT_ENCRYPTED, UNIT_FREE, empty_units
from . import pagecrc

LSN_SIZE = 7
PAGE_TYPE_OFFSET = LSN_SIZE
DIR_COUNT_OFFSET = LSN_SIZE + 1
DIR_FREE_OFFSET = DIR_COUNT_OFFSET + 1
EMPTY_SPACE_OFFSET = DIR_FREE_OFFSET + 1
PAGE_HEADER_SIZE = LSN_SIZE + 1 + 1 + 2 + 1
PAGE_SUFFIX_SIZE = 4
DIR_ENTRY_SIZE = 4
PAGE_TYPE_MASK = 7
UNALLOCATED_PAGE, HEAD_PAGE, TAIL_PAGE, BLOB_PAGE = 0, 1, 2, 3
KIND_BITMAP, KIND_BAD_TYPE, KIND_NOT_WHOLE = 4, 5, 6
KIND_NAMES = {UNALLOCATED_PAGE: "UNALLOCATED_PAGE", HEAD_PAGE: "HEAD_PAGE", TAIL_PAGE: "TAIL_PAGE",
              BLOB_PAGE: "BLOB_PAGE", KIND_BITMAP: "BITMAP_PAGE", KIND_BAD_TYPE: "BAD_PAGE_TYPE",
              KIND_NOT_WHOLE: "PART_PAGE"}


def pages_covered(block_size: int) -> int:
    """Pages one bitmap page covers, itself included (ma_bitmap.c _ma_bitmap_init)."""
    return (block_size - PAGE_SUFFIX_SIZE) // 6 * 16 + 1


@dataclass
class BlockPages:
    units: np.ndarray
    records: np.ndarray                 # rows (directory entries in use) per page
    pages: int
    by_type: dict = field(default_factory=dict)
    rows: int = 0                       # used directory entries of HEAD pages: one per row
    empty_bytes: int = 0                # EMPTY_SPACE of HEAD and TAIL pages
    unallocated_pages: int = 0
    bad_crc_pages: list = field(default_factory=list)
    no_crc_pages: int = 0
    bad_type_pages: list = field(default_factory=list)
    trailing_bytes: int = 0


def read_pages(buf, size: int, block_size: int, verify: bool, encrypted: bool = False,
               check=lambda: None, decrypted: bool = False) -> BlockPages:
    """Every page of the data file ``buf`` (``size`` bytes); ``encrypted``: its pages are
    (marked so, and their CRCs and directories not read unless ``decrypted``: ``buf`` then
    holds them decrypted, parsers/aria/pagecrypt.py)."""
    n = size // block_size
    trailing = size - n * block_size
    arr = np.frombuffer(buf, dtype=np.uint8, count=n * block_size).reshape(n, block_size) if n else \
        np.zeros((0, block_size), np.uint8)
    cover = pages_covered(block_size)
    idx = np.arange(n, dtype=np.int64)
    bitmap = idx % cover == 0
    ptype = (arr[:, PAGE_TYPE_OFFSET] & PAGE_TYPE_MASK).astype(np.uint16) if n else np.zeros(0, np.uint16)
    kind = np.where(bitmap, KIND_BITMAP, ptype).astype(np.uint16)
    bad_type = ~bitmap & (ptype > BLOB_PAGE)
    kind[bad_type] = KIND_BAD_TYPE
    dir_count = arr[:, DIR_COUNT_OFFSET].astype(np.int64) if n else np.zeros(0, np.int64)
    empty = (arr[:, EMPTY_SPACE_OFFSET].astype(np.int64) | (arr[:, EMPTY_SPACE_OFFSET + 1].astype(np.int64) << 8)
             ) if n else np.zeros(0, np.int64)
    headtail = (kind == HEAD_PAGE) | (kind == TAIL_PAGE)
    zero = ~arr.any(axis=1) if n else np.zeros(0, bool)
    unalloc = (kind == UNALLOCATED_PAGE)
    usable = block_size - PAGE_HEADER_SIZE - PAGE_SUFFIX_SIZE
    fill = np.full(n, np.nan, dtype=np.float32)
    fill[headtail] = 1.0 - np.minimum(empty[headtail], usable) / usable
    fill[kind == BLOB_PAGE] = 1.0
    records = np.zeros(n, dtype=np.uint32)
    rows = 0
    if encrypted and not decrypted:
        # the directory is encrypted, its entry count (in the clear header) is all there is:
        # rows and free entries together
        records[headtail] = dir_count[headtail]
        rows = int(dir_count[kind == HEAD_PAGE].sum())
    for i in np.flatnonzero(headtail if decrypted or not encrypted else np.zeros(0, bool)):
        d = int(dir_count[i])
        if d == 0:
            continue
        ents = arr[i, block_size - PAGE_SUFFIX_SIZE - DIR_ENTRY_SIZE * d:block_size - PAGE_SUFFIX_SIZE]
        offs = ents.reshape(d, DIR_ENTRY_SIZE)[:, :2]
        used = int(np.count_nonzero(offs[:, 0] | offs[:, 1]))
        records[i] = used
        if kind[i] == HEAD_PAGE:
            rows += used
    lsn = np.zeros(n, dtype=np.uint64)
    if n:
        lo = arr[:, 3:7].copy().view("<u4").ravel().astype(np.uint64)
        hi = (arr[:, 0].astype(np.uint64) | (arr[:, 1].astype(np.uint64) << 8) | (arr[:, 2].astype(np.uint64) << 16))
        lsn = (hi << np.uint64(32)) | lo
        lsn[bitmap] = 0
    flags = np.zeros(n, dtype=np.uint16)
    flags[unalloc] |= UNIT_FREE
    flags[bad_type] |= UNIT_CORRUPT
    bad_crc, no_crc = [], 0
    if encrypted:
        flags[~zero & ~bitmap] |= UNIT_ENCRYPTED
    if verify and (decrypted or not encrypted):
        for i in range(n):
            if i % 4096 == 0:
                check()
            if zero[i] and not bitmap[i]:
                continue                        # never written: the bitmap says free, the engine never reads it
            r = pagecrc.check(arr[i], i, block_size - pagecrc.CRC_SIZE,
                              pagecrc.MARIA_NO_CRC_BITMAP_PAGE if bitmap[i] else pagecrc.MARIA_NO_CRC_NORMAL_PAGE)
            if r == pagecrc.BAD:
                bad_crc.append(i)
                flags[i] |= UNIT_BAD_CHECKSUM
            elif r == pagecrc.NO_CRC:
                no_crc += 1
    units = empty_units(n + (1 if trailing else 0))
    units["offset"][:n] = idx * block_size
    units["stored"][:n] = units["logical"][:n] = block_size
    units["kind"][:n] = kind
    units["flags"][:n] = flags
    units["fill"][:n] = fill
    units["lsn"][:n] = lsn
    if trailing:
        units[-1]["offset"] = n * block_size
        units[-1]["stored"] = units[-1]["logical"] = trailing
        units[-1]["kind"] = KIND_NOT_WHOLE
        units[-1]["flags"] = UNIT_CORRUPT
    by_type = {KIND_NAMES[int(k)]: int(c) for k, c in zip(*np.unique(kind, return_counts=True))}
    return BlockPages(units=units, records=records if not trailing else np.append(records, 0).astype(np.uint32),
                      pages=n, by_type=by_type, rows=rows,
                      empty_bytes=int(empty[headtail].sum()), unallocated_pages=int(unalloc.sum()),
                      bad_crc_pages=bad_crc, no_crc_pages=no_crc,
                      bad_type_pages=[int(i) for i in np.flatnonzero(bad_type)], trailing_bytes=trailing)

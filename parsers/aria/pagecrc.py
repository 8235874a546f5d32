"""Aria's page checksum (storage/maria/ma_pagecrc.c): the CRC-32 of zlib (``crc32``)
seeded with the page number, over the page but its last 4 bytes (data and bitmap
pages, maria_page_crc_check_data / _bitmap) or over the used part of an index page
(maria_page_crc_check_index), stored little endian in the page's last 4 bytes.  A
computed value of 0xfffffffe or more is stored as 0xfffffffd; a stored 0xffffffff
(MARIA_NO_CRC_NORMAL_PAGE) or 0xfffffffe (MARIA_NO_CRC_BITMAP_PAGE) means "no CRC"
(tables without PAGE_CHECKSUM write the filler), and a bitmap page of zeros with CRC 0
is accepted (written before its bitmap was)."""
from __future__ import annotations

import zlib

CRC_SIZE = 4
MARIA_NO_CRC_NORMAL_PAGE = 0xFFFFFFFF
MARIA_NO_CRC_BITMAP_PAGE = 0xFFFFFFFE

OK, BAD, NO_CRC = 0, 1, 2


def page_crc(page_no: int, data) -> int:
    """maria_page_crc."""
    crc = zlib.crc32(data, page_no & 0xFFFFFFFF)
    return MARIA_NO_CRC_BITMAP_PAGE - 1 if crc >= MARIA_NO_CRC_BITMAP_PAGE else crc


def check(page, page_no: int, length: int, no_crc_val: int = MARIA_NO_CRC_NORMAL_PAGE) -> int:
    """maria_page_crc_check: OK, BAD or NO_CRC for one page."""
    stored = int.from_bytes(page[len(page) - CRC_SIZE:], "little")
    if stored >= MARIA_NO_CRC_BITMAP_PAGE:
        return NO_CRC if stored == no_crc_val else BAD
    if page_crc(page_no, page[:length]) == stored:
        return OK
    if no_crc_val == MARIA_NO_CRC_BITMAP_PAGE and stored == 0 and not any(page[:length]):
        return OK
    return BAD

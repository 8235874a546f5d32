"""Index pages of a ``.MAI`` file (storage/maria/ma_page.c, maria_def.h): from
``keystart`` on, pages of ``block_size``.  A page starts with ``keypage_header`` bytes:
for a transactional table the LSN (7) and a TRANSID (6), then the key number
(KEYPAGE_KEYID_SIZE, MARIA_DELETE_KEY_NR = 255 for a deleted page, _ma_dispose), the
flag byte (KEYPAGE_FLAG_ISNOD 1: a node, KEYPAGE_FLAG_HAS_TRANSID 2) and the bytes used
(KEYPAGE_USED_SIZE = 2, big endian, header included: _ma_get_page_used); its CRC
(ma_pagecrc.c maria_page_crc_check_index) covers the used bytes and sits in the last
4 bytes.  The key number gives every page its owner without a tree walk."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..model import UNIT_BAD_CHECKSUM, UNIT_CORRUPT, UNIT_ENCRYPTED, UNIT_FREE, UNIT_LEAF, empty_units
from . import pagecrc
from .state import MaiHeader, lsn_korr

MARIA_DELETE_KEY_NR = 255
KEYPAGE_FLAG_ISNOD = 1
KIND_HEADER, KIND_LEAF, KIND_NODE, KIND_DELETED, KIND_BAD = 0, 1, 2, 3, 4
KIND_NAMES = {KIND_HEADER: "MAI_HEADER", KIND_LEAF: "KEY_LEAF", KIND_NODE: "KEY_NODE",
              KIND_DELETED: "KEY_DELETED", KIND_BAD: "KEY_PAGE_UNREADABLE"}
UNKNOWN_LEVEL = 0xFFFF


@dataclass
class KeyPages:
    units: np.ndarray
    level: np.ndarray
    pages: int = 0
    leaf_pages: int = 0
    node_pages: int = 0
    deleted_pages: int = 0
    per_key: dict = field(default_factory=dict)
    bad_crc_pages: list = field(default_factory=list)
    no_crc_pages: int = 0
    problems: list = field(default_factory=list)


def read_key_pages(buf, size: int, h: MaiHeader, verify: bool, decrypted: bool = False) -> KeyPages:
    """Classify the header and every index page of ``buf`` up to ``size``."""
    bs = h.block_size
    start = min(h.keystart, size)
    end = min(max(h.key_file_length, h.keystart), size)
    n = max(0, (end - start) // bs)
    hdr = h.keypage_header
    rest = end - start - n * bs
    units = empty_units(1 + n + (1 if rest else 0))
    level = np.full(len(units), UNKNOWN_LEVEL, dtype=np.uint16)
    units[0]["offset"], units[0]["stored"], units[0]["logical"] = 0, start, start
    units[0]["kind"] = KIND_HEADER
    kp = KeyPages(units=units, level=level, pages=n)
    for j in range(n):
        off = start + j * bs
        page = buf[off:off + bs]
        u = units[1 + j]
        u["offset"], u["stored"], u["logical"] = off, bs, bs
        keynr = page[hdr - 4]
        flag = page[hdr - 3]
        used = int.from_bytes(page[hdr - 2:hdr], "big")
        if h.born_transactional:
            u["lsn"] = lsn_korr(page, 0)
        if h.encrypted:
            u["flags"] |= UNIT_ENCRYPTED
        if keynr == MARIA_DELETE_KEY_NR:
            u["kind"], u["flags"] = KIND_DELETED, u["flags"] | UNIT_FREE
            kp.deleted_pages += 1
        elif keynr >= max(h.keys, 1) or used < hdr or used > bs - pagecrc.CRC_SIZE:
            u["kind"], u["flags"] = KIND_BAD, u["flags"] | UNIT_CORRUPT
            kp.problems.append((f"index page {off // bs}: key number {keynr}, used length {used} (keys "
                                f"0..{h.keys - 1}, {hdr}..{bs - pagecrc.CRC_SIZE} bytes)", off))
            continue
        else:
            node = bool(flag & KEYPAGE_FLAG_ISNOD)
            u["kind"] = KIND_NODE if node else KIND_LEAF
            u["owner"] = keynr
            u["fill"] = used / (bs - pagecrc.CRC_SIZE)
            if not node:
                u["flags"] |= UNIT_LEAF
                level[1 + j] = 0
            pk = kp.per_key.setdefault(int(keynr), {"pages": 0, "leaf_pages": 0, "node_pages": 0})
            pk["pages"] += 1
            pk["node_pages" if node else "leaf_pages"] += 1
            kp.node_pages += node
            kp.leaf_pages += not node
        if verify and (decrypted or not h.encrypted):
            length = used if keynr != MARIA_DELETE_KEY_NR else min(used, bs - pagecrc.CRC_SIZE)
            r = pagecrc.check(page, off // bs, length)
            if r == pagecrc.BAD:
                kp.bad_crc_pages.append(off // bs)
                u["flags"] |= UNIT_BAD_CHECKSUM
            elif r == pagecrc.NO_CRC:
                kp.no_crc_pages += 1
    if rest:
        u = units[-1]
        u["offset"], u["stored"], u["logical"], u["kind"], u["flags"] = start + n * bs, rest, rest, KIND_BAD, UNIT_CORRUPT
        kp.problems.append((f"{rest} bytes after the last whole index page of {bs} bytes", start + n * bs))
    return kp

"""The block InnoDB rounds a page-compressed page to before it punches the rest of
the page, per server: what "expected holes" are computed with.

MariaDB (10.5+, full_crc32 and the older layout): the block is the file's
``st_blksize`` (os0file.cc ``fil_node_t::find_metadata``), but
``fil_space_get_block_size`` (fil0fil.cc) falls back to 512 when it is above 4096
("Currently supporting block size up to 4K"); ``fil_page_compress``
(fil0pagecompress.cc) rounds the write up to it and ``IORequest::punch_hole``
(os0file.cc) punches from there to the end of the page.

MySQL 5.7/8.0 (``COMPRESSION=``): the block is ``st_blksize``
(os0file.cc ``os_file_get_status_posix``); ``Fil_shard::create_node`` turns
punching off for the file when it is not smaller than the page size, and
``os_file_compress_page`` rounds ``len + FIL_PAGE_DATA`` up to it.

The filesystem then frees only whole blocks of its own inside the punched range,
so a page keeps ``roundup(stored, max(engine block, filesystem block))`` bytes.
"""
from __future__ import annotations

MARIADB_RULE = ("MariaDB: st_blksize, 512 when above 4096 (fil0fil.cc fil_space_get_block_size, "
                "os0file.cc fil_node_t::find_metadata)")
MYSQL_RULE = ("MySQL: st_blksize; no punching when it is not smaller than the page "
              "(os0file.cc os_file_get_status_posix, fil0fil.cc Fil_shard::create_node)")


def punch_block(flavor: str, st_blksize: int, page_size: int) -> tuple[int | None, str]:
    """(block the server rounds compressed pages to, or None when it does not punch; the rule)."""
    if flavor == "mariadb":
        b = int(st_blksize) or 512
        return (512 if b > 4096 else b), MARIADB_RULE
    b = int(st_blksize)
    if b <= 0 or b >= page_size:
        return None, MYSQL_RULE
    return b, MYSQL_RULE


def kept_granularity(flavor: str, st_blksize: int, page_size: int, fs_block: int) -> int | None:
    """Bytes a punched page keeps are a multiple of this (None: the server punches nothing)."""
    b, _rule = punch_block(flavor, st_blksize, page_size)
    if b is None:
        return None
    return max(b, int(fs_block) or 1)

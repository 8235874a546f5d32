"""Bytes a file really takes on btrfs: its EXTENT_DATA items read from the
subvolume's tree with BTRFS_IOC_TREE_SEARCH_V2, counted as compsize
(kilobyte/compsize, compsize.c ``parse_file_extent_item``) counts them: each disk
extent once (by ``disk_bytenr``) at its ``disk_num_bytes`` (compressed size),
inline extents at their item's payload, holes (``disk_bytenr`` 0) not at all.

Layouts from the kernel's uapi ``linux/btrfs.h`` (``btrfs_ioctl_search_key``,
``btrfs_ioctl_search_args_v2``, ``btrfs_ioctl_search_header``) and
``linux/btrfs_tree.h`` (``btrfs_file_extent_item``, packed).  The ioctl needs
CAP_SYS_ADMIN (fs/btrfs/ioctl.c ``btrfs_ioctl_tree_search_v2``): without it
:func:`file_extents` returns None.
"""
from __future__ import annotations

import errno
import fcntl
import os
import struct
from dataclasses import dataclass

#: _IOWR(BTRFS_IOCTL_MAGIC 0x94, 17, struct btrfs_ioctl_search_args_v2)
BTRFS_IOC_TREE_SEARCH_V2 = 0xC0709411
BTRFS_EXTENT_DATA_KEY = 108
BTRFS_FILE_EXTENT_INLINE = 0
BTRFS_FILE_EXTENT_REG = 1
BTRFS_FILE_EXTENT_PREALLOC = 2
#: btrfs_file_extent_item.compression
COMPRESSION = {0: "none", 1: "zlib", 2: "lzo", 3: "zstd"}

_KEY = struct.Struct("<7Q4I4Q")            # btrfs_ioctl_search_key, 104 bytes
_ARGS_HEAD = struct.Struct("<7Q4I4QQ")     # key + buf_size
_HEADER = struct.Struct("<3Q2I")           # btrfs_ioctl_search_header: transid, objectid, offset, type, len
_ITEM_HEAD = struct.Struct("<QQBBHB")      # generation, ram_bytes, compression, encryption, other_encoding, type
_ITEM_REG = struct.Struct("<4Q")           # disk_bytenr, disk_num_bytes, offset, num_bytes (at byte 21)
_INLINE_DATA = 21                          # offsetof(btrfs_file_extent_item, disk_bytenr)
_BUF = 64 << 10


@dataclass
class FileExtentItem:
    """One btrfs_file_extent_item of a file."""

    file_offset: int
    kind: int                 # BTRFS_FILE_EXTENT_*
    compression: int
    ram_bytes: int
    disk_bytenr: int = 0
    disk_num_bytes: int = 0   # inline: the item's payload
    num_bytes: int = 0        # bytes of the file this item maps


@dataclass
class BtrfsUsage:
    """compsize's three figures for one file, and its prealloc share."""

    disk: int = 0             # each disk extent once, compressed size
    uncompressed: int = 0     # each disk extent once, ram_bytes
    referenced: int = 0       # what the file maps (num_bytes of every item)
    prealloc: int = 0         # disk bytes of PREALLOC extents (never compressed)
    compressed_disk: int = 0  # disk bytes of compressed extents
    by_compression: dict | None = None


def file_extents(fd: int) -> list[FileExtentItem] | None:
    """Every EXTENT_DATA item of the open file, or None when the ioctl is refused
    (not btrfs, or no CAP_SYS_ADMIN)."""
    ino = os.fstat(fd).st_ino
    out: list[FileExtentItem] = []
    min_offset = 0
    while True:
        buf = bytearray(_ARGS_HEAD.size + _BUF)
        _ARGS_HEAD.pack_into(buf, 0, 0, ino, ino, min_offset, (1 << 64) - 1, 0, (1 << 64) - 1,
                             BTRFS_EXTENT_DATA_KEY, BTRFS_EXTENT_DATA_KEY, 4096, 0, 0, 0, 0, 0, _BUF)
        try:
            fcntl.ioctl(fd, BTRFS_IOC_TREE_SEARCH_V2, buf, True)
        except OSError as e:
            if e.errno in (errno.EPERM, errno.ENOTTY, errno.EINVAL, errno.EOPNOTSUPP, errno.EACCES):
                return None
            raise
        nr = _KEY.unpack_from(buf, 0)[9]
        if nr == 0:
            return out
        pos = _ARGS_HEAD.size
        last = None
        for _ in range(nr):
            _transid, objectid, offset, typ, ln = _HEADER.unpack_from(buf, pos)
            pos += _HEADER.size
            item = bytes(buf[pos:pos + ln])
            pos += ln
            last = offset
            if objectid != ino or typ != BTRFS_EXTENT_DATA_KEY or ln < _ITEM_HEAD.size:
                continue
            _gen, ram, comp, _enc, _oth, kind = _ITEM_HEAD.unpack_from(item, 0)
            if kind == BTRFS_FILE_EXTENT_INLINE:
                out.append(FileExtentItem(offset, kind, comp, ram, 0, ln - _INLINE_DATA, ram))
            elif ln >= _INLINE_DATA + _ITEM_REG.size:
                bytenr, disk_num, _off, num = _ITEM_REG.unpack_from(item, _INLINE_DATA)
                out.append(FileExtentItem(offset, kind, comp, ram, bytenr, disk_num, num))
        if last is None or last >= (1 << 64) - 1:
            return out
        min_offset = last + 1


def usage(items: list[FileExtentItem]) -> BtrfsUsage:
    """compsize's Disk Usage / Uncompressed / Referenced of one file's items."""
    u = BtrfsUsage(by_compression={})
    seen: set[int] = set()
    for it in items:
        if it.kind == BTRFS_FILE_EXTENT_INLINE:
            u.disk += it.disk_num_bytes
            u.uncompressed += it.ram_bytes
            u.referenced += it.ram_bytes
            continue
        if it.disk_bytenr == 0:          # a hole (no-holes off): nothing on disk
            continue
        u.referenced += it.num_bytes
        if it.disk_bytenr in seen:
            continue
        seen.add(it.disk_bytenr)
        u.disk += it.disk_num_bytes
        u.uncompressed += it.ram_bytes
        if it.kind == BTRFS_FILE_EXTENT_PREALLOC:
            u.prealloc += it.disk_num_bytes
        elif it.compression:
            u.compressed_disk += it.disk_num_bytes
        name = "prealloc" if it.kind == BTRFS_FILE_EXTENT_PREALLOC else COMPRESSION.get(it.compression, "?")
        d = u.by_compression.setdefault(name, [0, 0])
        d[0] += it.disk_num_bytes
        d[1] += it.ram_bytes
    return u

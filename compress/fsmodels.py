"""Filesystem storage models: what a filesystem allocates for a file's bytes
(ZFS and btrfs compression of the raw file, ext4's extent-tree blocks), and the
filesystem type holding a path.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

from .models import Model, is_zero, roundup
from .registry import Codec

EXT4_INLINE_EXTENTS = 4       # extents held in the inode itself (ext4_extent_header + 4 entries)
EXT4_EXTENTS_PER_BLOCK = 340  # (4096 - 12) // 12: extents per extent-tree leaf block


def ext4_extent_tree_bytes(n_extents: float, block: int = 4096) -> int:
    """Extent-tree blocks ext4 adds to a file of ``n_extents`` data extents.

    ext4 keeps 4 extents in the inode (fs/ext4/ext4_extents.h); beyond that
    the extents move to tree blocks of 340 entries each.  This is why a
    page-compressed tablespace's ALLOCATED_SIZE is one block above the sum
    of its pages.
    """
    if n_extents <= EXT4_INLINE_EXTENTS:
        return 0
    return int(math.ceil(n_extents / EXT4_EXTENTS_PER_BLOCK)) * block


def filesystem_type(path: str) -> str | None:
    """The filesystem type holding ``path`` (from /proc/self/mounts), None when unknown."""
    try:
        path = os.path.realpath(path)
        best, fstype = "", None
        with open("/proc/self/mounts", encoding="utf-8") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) < 3:
                    continue
                mnt = parts[1].replace("\\040", " ")
                if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best):
                    best, fstype = mnt, parts[2]
        return fstype
    except OSError:
        return None


@dataclass
class ZFSRecords(Model):
    """ZFS compression of the raw file, as a comparison.

    OpenZFS module/zfs/zio_compress.c zio_compress_data(): a record is kept
    compressed only when it shrinks to at most s_len - s_len/8 (saves at
    least 12.5%); zio.c then rounds the physical size up to the pool's
    sector (2^ashift).  All-zero records become holes.  Codecs: lz4, gzip-N
    (zlib:N) and zstd-N (their own small headers: lz4 4 bytes, zstd 8 bytes).
    """

    recordsize: int = 131072
    ashift: int = 12

    def __post_init__(self):
        self.name = f"zfs_recordsize_{self.recordsize // 1024}k_ashift{self.ashift}"
        self.granularity = 1 << self.ashift

    def supports(self, codec: Codec) -> str | None:
        if codec.is_chain or codec.family not in ("none", "lz4", "zlib", "zstd"):
            return "ZFS compresses with lz4, gzip-N (zlib) or zstd-N"
        return None

    def fixed_by_payload(self, payload: bytes) -> int | None:
        if is_zero(payload):
            return 0
        return None

    def project(self, codec: Codec, payload: bytes, unit: int | None = None) -> int:
        if is_zero(payload):
            return 0
        sector = 1 << self.ashift
        s_len = len(payload)
        if codec.family == "none":
            return roundup(s_len, sector)
        extra = {"lz4": 4, "zstd": 8}.get(codec.family, 0)
        c = len(codec.compress(payload)) + extra
        if c > s_len - (s_len >> 3) or roundup(c, sector) >= s_len:
            return roundup(s_len, sector)
        return roundup(c, sector)


@dataclass
class BtrfsExtents(Model):
    """btrfs compression of the raw file, as a comparison.

    fs/btrfs/inode.c compress_file_range(): 128 KiB of file data is
    compressed as one extent; it is kept only when it frees at least one
    sector ("total_compressed + blocksize <= total_in"), and is rounded up
    to the 4 KiB sector.  Codecs: zlib:1..9, zstd:1..15 (lzo is not in the
    registry).  Holes of the file stay holes.
    """

    extent: int = 131072
    sector: int = 4096

    def __post_init__(self):
        self.name = f"btrfs_{self.extent // 1024}k_extents"
        self.granularity = self.sector

    def supports(self, codec: Codec) -> str | None:
        if codec.is_chain or codec.family not in ("none", "zlib", "zstd"):
            return "btrfs compresses with zlib, zstd or lzo"
        if codec.family == "zstd" and not 1 <= (codec.level or 3) <= 15:
            return "btrfs zstd levels are 1..15"
        return None

    def fixed_by_payload(self, payload: bytes) -> int | None:
        return None

    def project(self, codec: Codec, payload: bytes, unit: int | None = None) -> int:
        n = roundup(len(payload), self.sector)
        if codec.family == "none":
            return n
        c = len(codec.compress(payload))
        if c + self.sector <= n:
            return roundup(c, self.sector)
        return n

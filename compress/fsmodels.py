"""Filesystem storage models: what a filesystem allocates for a file's bytes
(ZFS and btrfs compression of the raw file, ext4's extent-tree blocks), and the
filesystem type holding a path.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Callable

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
    """btrfs with ``compress-force``: what the file would take if written again.

    fs/btrfs/inode.c ``compress_file_range``: each run of dirty data is compressed
    in extents of at most 128 KiB of file data (BTRFS_MAX_UNCOMPRESSED,
    compression.h); an extent is kept compressed only when it frees at least one
    sector ("total_compressed + blocksize > total_in": stored raw), a run of one
    block or less is stored raw, compressed extents are rounded up to the 4 KiB
    sector.  Holes (here: whole all-zero 4 KiB blocks, which is what a hole reads
    as) are not stored, and split the data into separate runs.

    An inode that was ever fallocated is never compressed: ``__btrfs_prealloc_file_range``
    sets BTRFS_INODE_PREALLOC and from then on ``should_nocow`` sends its writes to
    ``run_delalloc_nocow`` (in place into the prealloc extents, or uncompressed COW)
    before compression is considered.  MariaDB extends tablespaces that are not
    page_compressed with ``posix_fallocate`` (os0file.cc ``os_file_set_size``), and
    a file with unwritten extents was fallocated: ``fallocated=True`` projects
    such a file uncompressed, as btrfs stores it.  ``compress`` without ``-force``
    (a heuristic per range and the NOCOMPRESS flag after the first incompressible
    range, which depend on the order of writes) is not modelled: compared with btrfs
    itself it stopped compressing a page_compressed tablespace after its first extent,
    at a range this model could not place.  Codecs: zlib:1..9,
    zstd:1..15 (lzo is not in the registry).
    """

    extent: int = 131072
    sector: int = 4096
    fallocated: bool = False
    #: unit index -> [(start, end)] of the record's written ranges (outside the file's holes);
    #: None: all-zero sectors stand for holes
    data_ranges: Callable[[int], list[tuple[int, int]]] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        self.name = f"btrfs_{self.extent // 1024}k_extents" + ("_fallocated" if self.fallocated else "")
        self.granularity = self.sector

    def supports(self, codec: Codec) -> str | None:
        if codec.is_chain or codec.family not in ("none", "zlib", "zstd"):
            return "btrfs compresses with zlib, zstd or lzo"
        if codec.family == "zstd" and not 1 <= (codec.level or 3) <= 15:
            return "btrfs zstd levels are 1..15"
        return None

    def fixed_by_payload(self, payload: bytes) -> int | None:
        return None

    def runs(self, payload: bytes, unit: int | None = None) -> list[bytes]:
        """The data runs of a record: its written ranges (from the file's hole map when
        known), else the record with all-zero sectors (what holes read as) left out."""
        if self.data_ranges is not None and unit is not None:
            return [payload[a:b] for a, b in self.data_ranges(unit) if b > a]
        import numpy as np
        n = len(payload)
        if n == 0:
            return []
        full = n // self.sector
        if full == 0:
            return [payload]
        blocks = np.frombuffer(payload, dtype=np.uint8, count=full * self.sector).reshape(full, self.sector)
        data = blocks.any(axis=1)
        out, start = [], None
        for i, d in enumerate(data.tolist() + [False]):
            if d and start is None:
                start = i
            elif not d and start is not None:
                out.append(payload[start * self.sector:i * self.sector])
                start = None
        tail = payload[full * self.sector:]
        if tail and any(tail):
            if out and data[-1]:
                out[-1] = out[-1] + tail
            else:
                out.append(tail)
        return out

    def project(self, codec: Codec, payload: bytes, unit: int | None = None) -> int:
        total = 0
        for run in self.runs(payload, unit):
            n = roundup(len(run), self.sector)
            if codec.family == "none" or self.fallocated or n <= self.sector:
                total += n
                continue
            c = len(codec.compress(run))
            total += roundup(c, self.sector) if c + self.sector <= n else n
        return total


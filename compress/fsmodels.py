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
    range, which depend on the order of writes) is :func:`btrfs_compress_walk`.  Codecs: zlib:1..9,
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



#: fs/btrfs/compression.c: the heuristic's constants
SAMPLING_READ_SIZE = 16
SAMPLING_INTERVAL = 256
BYTE_SET_THRESHOLD = 64
BYTE_CORE_SET_LOW = 64
BYTE_CORE_SET_HIGH = 200
ENTROPY_LVL_ACEPTABLE = 65
ENTROPY_LVL_HIGH = 80
#: fs/btrfs/inode.c run_delalloc_compressed: a delalloc range is compressed in chunks of this
BTRFS_COMPRESSION_CHUNK = 512 << 10
BTRFS_HEURISTIC_MODEL = "btrfs_128k_extents_compress_heuristic"


def _ilog2_w(n: int) -> int:
    """ilog2(n**4), compression.c's ilog2_w: log2 in quarter steps."""
    return (n ** 4).bit_length() - 1 if n > 0 else 0


def btrfs_compress_heuristic(data: bytes, page: int = 4096) -> bool:
    """fs/btrfs/compression.c ``btrfs_compress_heuristic`` on a range (its first 128 KiB):
    16 bytes every 256 of each page (``heuristic_collect_sample``); compress when the
    sample's two halves are equal, when fewer than 64 byte values occur, when at most
    64 values make 90% of it; not when 200 or more do; else when its Shannon entropy
    (``shannon_entropy``, % of 8 bits) is below 80."""
    data = data[:131072]
    sample = bytearray()
    for p0 in range(0, len(data), page):
        i = 0
        while i < page - SAMPLING_READ_SIZE and p0 + i <= len(data) - SAMPLING_READ_SIZE:
            sample += data[p0 + i:p0 + i + SAMPLING_READ_SIZE]
            i += SAMPLING_INTERVAL
    n = len(sample)
    half = n // 2
    if sample[:half] == sample[half:2 * half]:
        return True
    import numpy as np
    counts = np.bincount(np.frombuffer(bytes(sample), dtype=np.uint8), minlength=256)
    if int((counts > 0).sum()) < BYTE_SET_THRESHOLD:
        return True
    desc = np.sort(counts)[::-1]
    threshold = n * 90 // 100
    total, core = int(desc[:BYTE_CORE_SET_LOW].sum()), BYTE_CORE_SET_LOW
    if total <= threshold:
        while core < BYTE_CORE_SET_HIGH and desc[core] > 0:
            total += int(desc[core])
            if total > threshold:
                break
            core += 1
    if core <= BYTE_CORE_SET_LOW:
        return True
    if core >= BYTE_CORE_SET_HIGH:
        return False
    base = _ilog2_w(n)
    entropy = (sum(int(c) * (base - _ilog2_w(int(c))) for c in desc if c > 0) // n) * 100 // (8 * _ilog2_w(2))
    return entropy < ENTROPY_LVL_HIGH


@dataclass
class HeuristicWalk:
    projected: int
    lo: int
    hi: int
    read_bytes: int
    nocompress_at: int | None       # where btrfs sets NOCOMPRESS on the file, if it does
    exact: bool


def btrfs_compress_walk(read: Callable[[int, int], bytes], runs: list[tuple[int, int]], codec: Codec,
                        sector: int = 4096, budget: int = 64 << 20) -> HeuristicWalk:
    """btrfs mounted with ``compress`` (not -force), the file's written ranges ``runs``
    ([start, end), file order) each written back as one delalloc range:
    ``btrfs_run_delalloc_range`` (fs/btrfs/inode.c) asks ``inode_need_compress`` once for
    the range (the heuristic on its first 128 KiB): no, and the whole range is stored raw;
    yes, and ``run_delalloc_compressed`` cuts it in 512 KiB chunks, in each of which
    ``compress_file_range`` asks again for the rest of the chunk, compresses 128 KiB, keeps
    it when it frees a sector, and otherwise stores the rest of the chunk raw and sets
    BTRFS_INODE_NOCOMPRESS, after which nothing of the file is compressed.  Order matters,
    so this walks the file (no sampling); past ``budget`` bytes read without NOCOMPRESS,
    the rest lies between compressed as the part read was and raw (``lo``/``hi``)."""
    total = read_n = raw_done = 0
    nocompress_at = None
    for k, (a, b) in enumerate(runs):
        if nocompress_at is not None:
            total += roundup(b - a, sector)
            continue
        if read_n >= budget:
            rest = sum(roundup(e - s, sector) for s, e in runs[k:])
            lo = total + int(rest * (total / raw_done if raw_done else 1.0))
            return HeuristicWalk(lo, lo, total + rest, read_n, None, False)
        raw_done += roundup(b - a, sector)
        if codec.family == "none" or b - a <= sector or not btrfs_compress_heuristic(read(a, min(b, a + 131072))):
            read_n += min(b - a, 131072)
            total += roundup(b - a, sector)
            continue
        for c0 in range(a, b, BTRFS_COMPRESSION_CHUNK):
            c1 = min(b, c0 + BTRFS_COMPRESSION_CHUNK)
            s = c0
            while s < c1:
                if nocompress_at is not None or c1 - s <= sector:
                    total += roundup(c1 - s, sector)
                    break
                head = read(s, min(c1, s + 131072))
                read_n += len(head)
                if not btrfs_compress_heuristic(head):
                    total += roundup(c1 - s, sector)
                    break
                c = len(codec.compress(head))
                if roundup(c, sector) + sector > roundup(len(head), sector):
                    nocompress_at = s
                    total += roundup(c1 - s, sector)
                    break
                total += roundup(c, sector)
                s += len(head)
    return HeuristicWalk(total, total, total, read_n, nocompress_at, True)

"""Filesystem facts of one file: which filesystem holds it (``statfs`` f_type,
linux/magic.h), its block sizes, and its allocation split so that nothing is
counted twice.

The split (bytes; each byte of allocation is in exactly one of the first four,
and ``data + unwritten + hole`` is the apparent size rounded to the blocks the
extents cover):

- ``data``: allocated and written, inside the file's size;
- ``unwritten``: allocated by ``fallocate`` and never written, inside the size
  (reads as zeros; FIEMAP_EXTENT_UNWRITTEN);
- ``past_eof``: allocated beyond the file's size: XFS speculative preallocation
  of a file being appended (trimmed by XFS when the file is closed or after a few
  minutes idle) or ``fallocate(KEEP_SIZE)``;
- ``hole``: not allocated, inside the size;
- ``shared``: the part of ``data`` whose extents are shared with other files
  (reflinked copies, snapshots: FIEMAP_EXTENT_SHARED), counted in full by st_blocks;
- ``encoded``: the part of ``data`` in extents stored encoded (btrfs compression:
  FIEMAP_EXTENT_ENCODED), whose on-disk size st_blocks does not give;
- ``metadata``: what st_blocks counts beyond the file's extents: blocks the
  filesystem uses to map them (an XFS bmap btree block, ext4 extent tree nodes);
- ``disk``: bytes really on disk where the filesystem tells (btrfs: the file's
  extent items, as compsize reads them; see :mod:`parsers.btrfs`), else None.

Without FIEMAP (tmpfs) the extents come from SEEK_DATA/SEEK_HOLE, which cannot
tell unwritten from hole: the allocated bytes beyond the data ranges are then
given as ``unwritten`` (``extent_source`` says so).
"""
from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass

from .libc import libc

#: statfs f_type values (linux/magic.h; ZFS_SUPER_MAGIC from OpenZFS zfs_vfsops.h)
FS_MAGIC = {
    0xEF53: "ext4", 0x58465342: "xfs", 0x9123683E: "btrfs", 0x01021994: "tmpfs",
    0x2FC12FC1: "zfs", 0x794C7630: "overlayfs", 0x6969: "nfs", 0xF2F52010: "f2fs",
    0x65735546: "fuse", 0x858458F6: "ramfs", 0x73717368: "squashfs", 0xFF534D42: "cifs",
    0x4D44: "vfat", 0x5346544E: "ntfs", 0x2011BAB0: "exfat", 0x62656572: "sysfs",
}

# linux/fiemap.h
FIEMAP_EXTENT_LAST = 0x0001
FIEMAP_EXTENT_UNKNOWN = 0x0002
FIEMAP_EXTENT_DELALLOC = 0x0004
FIEMAP_EXTENT_ENCODED = 0x0008
FIEMAP_EXTENT_DATA_INLINE = 0x0200
FIEMAP_EXTENT_UNWRITTEN = 0x0800
FIEMAP_EXTENT_SHARED = 0x2000


class _Statfs(ctypes.Structure):
    # struct statfs on 64-bit Linux: __fsword_t f_type, f_bsize, then block counts (not used)
    _fields_ = [("f_type", ctypes.c_long), ("f_bsize", ctypes.c_long), ("rest", ctypes.c_long * 14)]


def _fs_of_dev(dev: int, path: str) -> tuple[str, int]:
    """(filesystem type, statfs block size) of the filesystem ``dev`` (path: any file on it),
    asked once per device (keyed by the device alone: every file of it gives the same)."""
    got = _FS_OF_DEV.get(dev)
    if got is None:
        got = _FS_OF_DEV[dev] = _statfs_of(path)
    return got


#: device -> (filesystem type, block size), filled by _fs_of_dev
_FS_OF_DEV: dict[int, tuple[str, int]] = {}


def _statfs_of(path: str) -> tuple[str, int]:
    """(filesystem type, statfs block size) of the filesystem holding ``path``."""
    lib = libc()
    buf = _Statfs()
    if lib is not None:
        lib.statfs.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
        if lib.statfs(os.fsencode(path), ctypes.byref(buf)) == 0:
            magic = buf.f_type & 0xFFFFFFFF
            return FS_MAGIC.get(magic, f"0x{magic:x}"), int(buf.f_bsize)
    try:
        return "unknown", int(os.statvfs(path).f_bsize)
    except OSError:
        return "unknown", 4096


def filesystem_of(path: str, st: os.stat_result | None = None) -> tuple[str, int]:
    """(type, block size) of the filesystem holding ``path``, asked once per device."""
    st = st or os.stat(path)
    return _fs_of_dev(st.st_dev, path)


@dataclass(slots=True)
class FsFacts:
    """What the filesystem says about one file (the ``fs`` object of a file in the JSON)."""

    type: str
    block_size: int                 # statfs f_bsize: the filesystem's block
    st_blksize: int                 # stat st_blksize: the I/O size the filesystem prefers (engines read it)
    data: int = 0
    unwritten: int = 0
    past_eof: int = 0
    hole: int = 0
    shared: int = 0
    encoded: int = 0
    #: st_blocks beyond the file's extents: blocks the filesystem uses to map them
    #: (XFS bmap btree, ext4 extent tree nodes)
    metadata: int = 0
    disk: int | None = None
    disk_source: str | None = None  # where ``disk`` comes from
    extent_source: str = "fiemap"   # "fiemap", "seek_hole" (no FIEMAP: tmpfs), "none"
    #: the block the engine rounds page-compressed writes to and punches by, and the rule's source
    engine_block: int | None = None
    engine_block_rule: str | None = None

    @property
    def allocated(self) -> int:
        """data + unwritten + past_eof + metadata: what st_blocks counts (to the block)."""
        return self.data + self.unwritten + self.past_eof + self.metadata

    def to_json(self) -> dict:
        out = {"type": self.type, "block_size": self.block_size, "st_blksize": self.st_blksize,
               "data_bytes": self.data, "unwritten_bytes": self.unwritten,
               "past_eof_bytes": self.past_eof, "hole_bytes": self.hole,
               "shared_bytes": self.shared, "encoded_bytes": self.encoded,
               "metadata_bytes": self.metadata, "extent_source": self.extent_source}
        if self.disk is not None:
            out["disk_bytes"] = self.disk
            out["disk_source"] = self.disk_source
        if self.engine_block is not None:
            out["engine_block"] = self.engine_block
            out["engine_block_rule"] = self.engine_block_rule
        return out

    @classmethod
    def from_json(cls, d: dict) -> "FsFacts":
        return cls(type=d.get("type", "unknown"), block_size=int(d.get("block_size", 4096)),
                   st_blksize=int(d.get("st_blksize", 4096)), data=int(d.get("data_bytes", 0)),
                   unwritten=int(d.get("unwritten_bytes", 0)), past_eof=int(d.get("past_eof_bytes", 0)),
                   hole=int(d.get("hole_bytes", 0)), shared=int(d.get("shared_bytes", 0)),
                   encoded=int(d.get("encoded_bytes", 0)), metadata=int(d.get("metadata_bytes", 0)),
                   disk=d.get("disk_bytes"),
                   disk_source=d.get("disk_source"), extent_source=d.get("extent_source", "fiemap"),
                   engine_block=d.get("engine_block"), engine_block_rule=d.get("engine_block_rule"))


def split_extents(raw: list[tuple[int, int, int]], size: int, block: int) -> dict[str, int]:
    """data / unwritten / past_eof / hole / shared / encoded bytes from FIEMAP extents
    (logical, length, flags) asked over the whole offset range, EOF included.  Delayed
    allocations count as data (st_blocks counts them too); the slack of the block
    that holds EOF is neither data nor past EOF."""
    eof_block = -(-size // block) * block
    if len(raw) >= 64:             # a page-compressed file's thousands of extents: in numpy
        import numpy as np
        a = np.asarray(raw, dtype=np.int64).reshape(-1, 3)
        logical, end, flags = a[:, 0], a[:, 0] + a[:, 1], a[:, 2]
        inside = np.maximum(0, np.minimum(end, size) - logical)
        beyond = np.maximum(0, end - np.maximum(logical, eof_block))
        unw = (flags & FIEMAP_EXTENT_UNWRITTEN) != 0
        data = inside[~unw]
        covered = int(inside.sum())
        return dict(data=int(data.sum()), unwritten=int(inside[unw].sum()), past_eof=int(beyond.sum()),
                    hole=max(0, size - covered),
                    shared=int(data[(flags[~unw] & FIEMAP_EXTENT_SHARED) != 0].sum()),
                    encoded=int(data[(flags[~unw] & FIEMAP_EXTENT_ENCODED) != 0].sum()),
                    mapped=int((np.maximum(0, np.minimum(end, eof_block) - logical) + beyond).sum()))
    return _split_extents_loop(raw, size, eof_block)


def _split_extents_loop(raw: list[tuple[int, int, int]], size: int, eof_block: int) -> dict[str, int]:
    """:func:`split_extents` one extent at a time."""
    out = dict(data=0, unwritten=0, past_eof=0, hole=0, shared=0, encoded=0, mapped=0)
    covered = 0
    for logical, length, flags in raw:
        end = logical + length
        inside = max(0, min(end, size) - logical)
        beyond = max(0, end - max(logical, eof_block))
        if inside:
            covered += inside
            if flags & FIEMAP_EXTENT_UNWRITTEN:
                out["unwritten"] += inside
            else:
                out["data"] += inside
                if flags & FIEMAP_EXTENT_SHARED:
                    out["shared"] += inside
                if flags & FIEMAP_EXTENT_ENCODED:
                    out["encoded"] += inside
        out["past_eof"] += beyond
        out["mapped"] += max(0, min(end, eof_block) - logical) + beyond
    out["hole"] = max(0, size - covered)
    return out


def totals(facts: list["FsFacts"]) -> dict:
    """The dataset's sums of the per-file split (the ``filesystem`` object of the JSON):
    each figure sums that field over the files that have facts; ``disk_bytes`` sums
    the files' real on-disk bytes where the filesystem gives them and their
    allocated bytes elsewhere (``disk_known_files`` says how many are real)."""
    out = {"files": len(facts), "types": sorted({f.type for f in facts}),
           "data_bytes": 0, "unwritten_bytes": 0, "past_eof_bytes": 0, "hole_bytes": 0,
           "shared_bytes": 0, "encoded_bytes": 0, "metadata_bytes": 0, "disk_bytes": 0, "disk_known_files": 0}
    for f in facts:
        out["data_bytes"] += f.data
        out["unwritten_bytes"] += f.unwritten
        out["past_eof_bytes"] += f.past_eof
        out["hole_bytes"] += f.hole
        out["shared_bytes"] += f.shared
        out["encoded_bytes"] += f.encoded
        out["metadata_bytes"] += f.metadata
        if f.disk is not None and not (f.disk_source or "").startswith("estimate"):
            out["disk_bytes"] += f.disk
            out["disk_known_files"] += 1
        else:
            out["disk_bytes"] += f.allocated
    return out

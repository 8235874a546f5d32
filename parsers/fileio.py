"""Read-only access to database files: mmap or pread, holes, allocation.

Every file is opened ``O_RDONLY``; nothing in dbxray ever opens user data for
writing.  Holes are listed with ``lseek(SEEK_DATA/SEEK_HOLE)`` so a sparse
terabyte is listed without reading a byte of it; the exact extent map comes
from the FIEMAP ioctl where the filesystem has it.
"""
from __future__ import annotations

import bisect
import ctypes
import errno
import fcntl
import mmap
import os
import struct
import threading
import time
from collections import OrderedDict
from typing import NamedTuple

import numpy as np

from .arrays import distinct
from . import mapguard
# every file's facts need it: imported here, once, not again in each forked worker (3-4 ms each)
from .fsfacts import FsFacts, filesystem_of, split_extents
from .libc import libc
from .ranges import Ranges, ranges_array

SEEK_DATA = getattr(os, "SEEK_DATA", 3)
SEEK_HOLE = getattr(os, "SEEK_HOLE", 4)

# linux/fs.h: #define FS_IOC_FIEMAP _IOWR('f', 11, struct fiemap)
FS_IOC_FIEMAP = 0xC020660B
FIEMAP_FLAG_SYNC = 0x0001
FIEMAP_EXTENT_LAST = 0x0001
FIEMAP_EXTENT_UNWRITTEN = 0x0800
_FIEMAP_HDR = struct.Struct("=QQIIII")          # fm_start, fm_length, fm_flags, fm_mapped_extents, fm_extent_count, fm_reserved
_FIEMAP_EXTENT = struct.Struct("=QQQQQIIII")    # fe_logical, fe_physical, fe_length, 2 reserved, fe_flags, 3 reserved
_FIEMAP_FIRST_BATCH = 32
#: struct fiemap_extent as a numpy record (a batch of hundreds read without a Python loop)
_FIEMAP_EXTENT_DTYPE = np.dtype([("logical", "=u8"), ("physical", "=u8"), ("length", "=u8"), ("r1", "=u8"),
                                 ("r2", "=u8"), ("flags", "=u4"), ("r3", "=u4"), ("r4", "=u4"), ("r5", "=u4")])
_FIEMAP_MAX_OFFSET = (1 << 63) - 1       # fm_length reaching the largest file offset
_MINCORE_SPAN = 1 << 30          # mincore asked about at most this many bytes at once
#: at most this many holes are blanked in a file's map (each splits the map in two
#: in the kernel, and a process may hold vm.max_map_count = 65530 maps in all); a
#: file with more (page-compressed tablespaces: one hole per page) is read around
#: its holes by its readers instead (``hole_safe_map`` False, ``pread`` goes to the file)
_MAX_BLANKED_HOLES = 256
#: files up to this size are read into memory by ``mmap()`` instead of mapped
_SMALL_READ = 256 << 10
#: read-ahead is turned off this far on either side of an unwritten extent (the largest
#: read-around window a fault may start: read_ahead_kb is 128 KiB by default, a few MiB at most)
_READAHEAD_MARGIN = 4 << 20
#: those read-ahead-off ranges are widened to this alignment (the PMD size, 2 MiB on
#: x86_64 and arm64 with 4 KiB pages): madvise splits the map's VMA at the range's ends, and a
#: split inside a 2 MiB block keeps the kernel from mapping that block's cached large folio
#: with one PMD, so every read there faults per 64 KiB instead (+680 faults, +2 ms over the
#: 13 plain files of bench_innodb; widening the off range only widens the guarantee)
_READAHEAD_ALIGN = 2 << 20
#: files changed this recently may hold data not yet written back over unwritten extents
_FRESH_SECONDS = 900


class FileReadError(Exception):
    """A file could not be read; the message names the file (and offset)."""

    def __init__(self, path: str, message: str, offset: int | None = None):
        self.path = path
        self.offset = offset
        where = path if offset is None else f"{path} @ offset {offset}"
        super().__init__(f"{where}: {message}")


class Extent(NamedTuple):
    """One FIEMAP range: kind is 'data', 'unwritten' or 'hole' (a tuple: made for every
    range of every file a scan opens)."""

    offset: int
    length: int
    kind: str


def fs_block_size(path: str) -> int:
    """Filesystem block size of the filesystem holding ``path`` (statvfs f_bsize)."""
    try:
        st = os.statvfs(path)
        return int(st.f_bsize) or 4096
    except OSError:
        return 4096


class ReadOnlyFile:
    """A file opened ``O_RDONLY`` and read through ``mmap`` (or ``pread``).

    Use as a context manager.  ``size`` is the size at open time; ``changed()``
    tells whether the file grew or shrank since.
    """

    def __init__(self, path: str):
        self.path = path
        try:
            self.fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))
        except OSError as e:
            raise FileReadError(path, f"cannot open: {e.strerror}") from None
        st = os.fstat(self.fd)
        self.stat = st
        self.size = st.st_size
        self._mm: mmap.mmap | None = None
        self._guard = None
        self._mmap_failed = False
        self._fiemap: list[Extent] | None | bool = False
        self._fiemap_raw: list[tuple[int, int, int]] | None | bool = False
        self._fiemap_arr: np.ndarray | None | bool = False
        self._holes: list[tuple[int, int]] | None = None
        self._hole_starts: np.ndarray | None = None
        self._hole_ends: np.ndarray | None = None
        self._hole_start_list: list[int] | None = None
        self._unwritten: list[tuple[int, int]] | None = None
        self._fadvised_random = False
        #: True when reading the map anywhere touches no hole: the file has none, or
        #: every hole is blanked with zero pages (set by ``mmap()``)
        self.hole_safe_map = False

    # -- lifetime -----------------------------------------------------------
    def close(self) -> None:
        mapguard.release_fd(self._guard)
        if isinstance(self._mm, mmap.mmap):
            try:
                self._mm.close()
            except BufferError:
                pass     # a numpy view still holds it; the GC will release it
        self._mm = None
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> "ReadOnlyFile":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- reading ------------------------------------------------------------
    def mmap(self) -> mmap.mmap | bytes | None:
        """A read-only map of the whole file, or None when it cannot be mapped.

        A file of at most ``_SMALL_READ`` bytes is read into memory instead, in one
        pread (its holes and unwritten extents as the zeros they hold, never read):
        a map's setup, guard, faults and unmapping cost more than the copy there
        (the per-file time of a scan of 20,000 small tablespaces).

        A read through the map never touches a hole where that can be arranged: the
        holes (and unwritten extents) are covered with anonymous zero pages, so a
        read there sees the zeros the file holds without faulting the file in
        (on tmpfs such a fault would allocate the hole: a scan would change the
        file).  When the file has too many holes for that, ``hole_safe_map`` stays
        False and readers must not read the map over a hole (``touches_hole``)."""
        if self._mm is None and not self._mmap_failed and 0 < self.size <= _SMALL_READ:
            data = self._read_small()
            if data is None:
                self._mmap_failed = True
                return None
            self._mm = data
            self.hole_safe_map = True
            return data
        if self._mm is None and not self._mmap_failed and self.size > 0:
            try:
                self._mm = mmap.mmap(self.fd, self.size, access=mmap.ACCESS_READ)
                self._guard = mapguard.register(self.path, self.fd, self._mm)
            except (OSError, ValueError):
                self._mmap_failed = True
                return None
            holes = self.holes()
            if not holes:
                self.hole_safe_map = True
            elif len(holes) <= _MAX_BLANKED_HOLES:
                page = mmap.PAGESIZE
                whole = sum(max(0, (o + n) // page * page - -(-o // page) * page) for o, n in holes)
                self.hole_safe_map = mapguard.blank(self._mm, holes) == whole
            if self.unwritten():
                self._no_readahead_near_unwritten()
        return self._mm

    def _read_small(self) -> bytes | None:
        """The whole (small) file in memory, holes as zeros; None when it changed size
        meanwhile (the readers then go through ``pread``, whose short reads they report)."""
        try:
            data = self._read_around_holes(0, self.size) if self.holes() else os.pread(self.fd, self.size, 0)
            if len(data) != self.size or os.fstat(self.fd).st_size != self.size:
                return None
        except OSError:
            return None
        return data

    def data_map(self) -> mmap.mmap | None:
        """A second read-only map of the whole file whose holes are NOT covered with zero
        pages, for a reader that reads only data through it (the page map's header
        gather): one file map with no anonymous ranges in it, so every cached 2 MiB
        block of data is mapped with one PMD even next to a hole (in the blanked map
        such a block straddles a map boundary and faults per 64 KiB).  Guarded against
        SIGBUS and with read-ahead off near unwritten extents as ``mmap()`` is; the
        caller must never read a hole through it, and closes it.  None when unavailable."""
        if self._mmap_failed or self.size <= 0 or self.fd < 0:
            return None
        try:
            mm = mmap.mmap(self.fd, self.size, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            return None
        mm_guard = mapguard.register(self.path, self.fd, mm)
        if mm_guard is None and self._guard is not None:
            mm.close()                 # the main map is guarded, this one could not be
            return None
        self._no_readahead_near_unwritten(mm)
        return mm

    def _no_readahead_near_unwritten(self, mm: mmap.mmap | None = None) -> None:
        """No read-ahead around unwritten extents (MADV_RANDOM on the map near them,
        POSIX_FADV_RANDOM on this descriptor): the kernel's read-ahead around a read of
        the data next to one would put zero pages over it in the cache, and SEEK_HOLE on
        XFS, ext4 and btrfs reports cached pages over an unwritten extent as data."""
        unw = self.unwritten()
        if not unw:
            return
        if not self._fadvised_random:          # once per descriptor: it marks the open file
            self._fadvised_random = True
            try:
                os.posix_fadvise(self.fd, 0, 0, os.POSIX_FADV_RANDOM)
            except (OSError, AttributeError):
                pass
        mm = self._mm if mm is None else mm
        if mm is None or not hasattr(mm, "madvise") or len(unw) > _MAX_BLANKED_HOLES:
            return
        for o, n in merge_ranges((max(0, o - _READAHEAD_MARGIN), n + 2 * _READAHEAD_MARGIN) for o, n in unw):
            a = o - o % _READAHEAD_ALIGN
            b = min(-(-(o + n) // _READAHEAD_ALIGN) * _READAHEAD_ALIGN, len(mm))
            if b > a:
                try:
                    mm.madvise(mmap.MADV_RANDOM, a, b - a)
                except (OSError, ValueError):
                    pass

    def few_holes(self) -> bool:
        """Whether the file has no more holes than a map can have blanked
        (``_MAX_BLANKED_HOLES``): readers may then step around them by slices."""
        return len(self.holes()) <= _MAX_BLANKED_HOLES

    def touches_hole(self, offset: int, length: int) -> bool:
        """Whether [offset, offset + length) overlaps a hole or an unwritten extent."""
        holes = self.holes()
        if not holes or length <= 0:
            return False
        if self._hole_starts is None:
            self._hole_starts = np.ascontiguousarray(ranges_array(holes)[:, 0])
        k = int(np.searchsorted(self._hole_starts, offset + length)) - 1   # last hole starting before the end
        return k >= 0 and holes[k][0] + holes[k][1] > offset

    def touches_hole_many(self, offsets: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """:meth:`touches_hole` of every (offset, length), as a bool array."""
        offsets = np.asarray(offsets, dtype=np.int64)
        lengths = np.asarray(lengths, dtype=np.int64)
        holes = self.holes()
        if not holes:
            return np.zeros(len(offsets), dtype=bool)
        if self._hole_starts is None:
            self._hole_starts = np.ascontiguousarray(ranges_array(holes)[:, 0])
        if self._hole_ends is None:
            h = ranges_array(holes)
            self._hole_ends = h[:, 0] + h[:, 1]
        k = np.searchsorted(self._hole_starts, offsets + lengths) - 1     # last hole starting before the end
        return (k >= 0) & (self._hole_ends[np.maximum(k, 0)] > offsets) & (lengths > 0)

    def advise_random(self) -> None:
        """Tell the kernel not to read ahead (header-only scans)."""
        mm = self.mmap()
        if mm is not None and hasattr(mm, "madvise") and hasattr(mmap, "MADV_RANDOM"):
            try:
                mm.madvise(mmap.MADV_RANDOM)
            except OSError:
                pass

    def pread(self, offset: int, length: int) -> bytes:
        """Up to ``length`` bytes at ``offset`` (fewer at the end of the file)."""
        if offset < 0 or length < 0:
            raise FileReadError(self.path, f"bad read of {length} bytes", offset)
        if offset >= self.size or length == 0:
            return b""
        length = min(length, self.size - offset)
        mm = self.mmap()
        try:
            if mm is not None and (self.hole_safe_map or not self.touches_hole(offset, length)):
                return mm[offset:offset + length]
            if mm is None and not self.touches_hole(offset, length):
                return os.pread(self.fd, length, offset)
            return self._read_around_holes(offset, length)
        except (OSError, ValueError) as e:
            raise FileReadError(self.path, f"read failed: {e}", offset) from None

    def pread_nomap(self, offset: int, length: int) -> bytes:
        """As :meth:`pread`, through ``pread(2)`` only (no map, so a file truncated meanwhile
        gives a short read, never SIGBUS); holes and unwritten extents are not read."""
        if offset < 0 or length < 0:
            raise FileReadError(self.path, f"bad read of {length} bytes", offset)
        if isinstance(self._mm, bytes):          # a small file already read into memory
            return self._mm[offset:offset + length]
        try:
            if not self.touches_hole(offset, length):
                return os.pread(self.fd, length, offset)
            length = max(0, min(length, self.size - offset))
            return self._read_around_holes(offset, length)
        except OSError as e:
            raise FileReadError(self.path, f"read failed: {e}", offset) from None

    def pread_many_nomap(self, offsets: np.ndarray, lengths: np.ndarray) -> list[bytes]:
        """:meth:`pread_nomap` of every (offset, length), the hole test made once for all of
        them (a page-compressed file's stored pages: thousands of reads between its holes)."""
        offsets = np.asarray(offsets, dtype=np.int64)
        lengths = np.asarray(lengths, dtype=np.int64)
        if isinstance(self._mm, bytes):
            mm = self._mm
            return [mm[o:o + n] for o, n in zip(offsets.tolist(), lengths.tolist())]
        if len(offsets) and ((offsets < 0) | (lengths < 0)).any():
            k = int(np.argmax((offsets < 0) | (lengths < 0)))
            raise FileReadError(self.path, f"bad read of {int(lengths[k])} bytes", int(offsets[k]))
        touch = self.touches_hole_many(offsets, lengths)
        fd, out = self.fd, []
        try:
            for o, n, t in zip(offsets.tolist(), lengths.tolist(), touch.tolist()):
                if t:
                    out.append(self._read_around_holes(o, max(0, min(n, self.size - o))))
                else:
                    out.append(os.pread(fd, n, o))
        except OSError as e:
            raise FileReadError(self.path, f"read failed: {e}", o) from None
        return out

    def _read_around_holes(self, offset: int, length: int) -> bytes:
        """[offset, offset + length) with holes and unwritten extents as the zeros they
        hold, only the data between them read (pread): a read of a hole would allocate
        it on tmpfs, and a read of an unwritten extent leaves zero pages in the cache,
        which XFS, ext4 and btrfs then report to SEEK_HOLE as data."""
        out = bytearray(length)
        end = offset + length
        pos = offset
        holes = self.holes()
        if self._hole_start_list is None:
            self._hole_start_list = [o for o, _ in holes]
        # from the last hole starting at or before ``offset`` (holes are sorted and
        # disjoint): one page of a page-compressed file is not a walk over its 1,000s of holes
        first = max(0, bisect.bisect_right(self._hole_start_list, offset) - 1)
        for k in range(first, len(holes)):
            o, n = holes[k]
            if o + n <= pos:
                continue
            if o >= end:
                break
            if o > pos:
                out[pos - offset:o - offset] = os.pread(self.fd, o - pos, pos).ljust(o - pos, b"\0")
            pos = max(pos, o + n)
        if pos < end:
            chunk = os.pread(self.fd, end - pos, pos)
            out[pos - offset:pos - offset + len(chunk)] = chunk
        return bytes(out)

    def read_exact(self, offset: int, length: int) -> bytes:
        """Exactly ``length`` bytes at ``offset`` or a FileReadError naming the offset."""
        data = self.pread(offset, length)
        if len(data) != length:
            raise FileReadError(self.path, f"truncated: wanted {length} bytes, file ends at {self.size}", offset)
        return data

    def array(self, dtype=np.uint8, offset: int = 0, count: int = -1) -> np.ndarray:
        """A numpy view over the map (or a copy read with pread when unmappable)."""
        dtype = np.dtype(dtype)
        mm = self.mmap()
        if count < 0:
            count = (self.size - offset) // dtype.itemsize
        if mm is not None:
            return np.frombuffer(mm, dtype=dtype, count=count, offset=offset)
        return np.frombuffer(self.read_exact(offset, count * dtype.itemsize), dtype=dtype)

    def changed(self) -> str | None:
        """A message when the file's size or mtime changed since it was opened."""
        try:
            st = os.stat(self.path)
        except OSError as e:
            return f"{self.path}: disappeared during the scan ({e.strerror})"
        if st.st_size != self.size:
            return f"{self.path}: size changed during the scan ({self.size} -> {st.st_size} bytes)"
        if st.st_mtime_ns != self.stat.st_mtime_ns:
            return f"{self.path}: modified during the scan"
        return None

    # -- allocation ---------------------------------------------------------
    @property
    def allocated_bytes(self) -> int:
        return int(self.stat.st_blocks) * 512

    def holes(self) -> list[tuple[int, int]]:
        """Ranges that hold no written data: unallocated holes and unwritten
        (fallocated, never written) extents, from FIEMAP where the filesystem
        has it (deterministic), else from SEEK_DATA/SEEK_HOLE.  Listed once per
        open file."""
        if self._holes is None:
            self._holes = self._list_holes()
            if self.unwritten():
                self._no_readahead_near_unwritten()
        return self._holes

    def adopt_holes(self, holes, stamp, unwritten=()) -> bool:
        """Take ``holes`` as this open's list (:meth:`holes`) when another open of the very
        same file listed them: ``stamp`` is that open's (size, mtime_ns, st_dev, st_ino)
        (``FileEntry.seen``, the scan's), and this open must see the same four, so the file
        was not written, cut or replaced between the two.  False (nothing taken: the holes
        are listed on first use) otherwise.  ``unwritten``: that open's unwritten extents
        (read-ahead is kept away from them as :meth:`holes` does)."""
        st = self.stat
        if self._holes is not None or stamp is None or len(stamp) != 4 \
                or tuple(stamp) != (st.st_size, st.st_mtime_ns, st.st_dev, st.st_ino):
            return False
        # a Ranges is the file layer's own listing, read-only: shared, not copied
        self._holes = holes if type(holes) is Ranges else [(int(o), int(n)) for o, n in holes]
        if unwritten is not None:
            # that open's unwritten extents too: no FIEMAP asked for them again
            self._unwritten = unwritten if type(unwritten) is Ranges \
                else [(int(o), int(n)) for o, n in unwritten]
        if unwritten:
            self._no_readahead_near_unwritten()
        return True

    def _list_holes(self) -> list[tuple[int, int]]:
        raw = self.fiemap_array()
        if raw is not None and len(raw) >= _EXTENTS_VECTORISED and self._fiemap is False:
            segs = _segments_sorted(raw, self.size)
            if segs is not None:
                return self._list_holes_from(*segs)
        extents = self.fiemap()
        if extents is not None:
            # ranges FIEMAP maps to nothing must hold no data for SEEK_DATA either
            # (which, for those, ignores what the page cache holds): a file written a
            # moment ago can have its extents missing from FIEMAP while they are allocated;
            # and its new data can sit in the page cache over extents FIEMAP still calls
            # unwritten (seen in CI on a file just rewritten): then SEEK_DATA/SEEK_HOLE decide.
            # Only a recently changed file can have such data (writeback converts the
            # extents within dirty_expire_centisecs, 30 s by default), so older files skip
            # reading what the cache holds over their unwritten ranges
            fresh = time.time() - max(self.stat.st_mtime, self.stat.st_ctime) < _FRESH_SECONDS
            if not _data_in(self.fd, [(e.offset, e.length) for e in extents if e.kind == "hole"]) \
                    and not (fresh and self._written_over(
                        [(e.offset, e.length) for e in extents if e.kind == "unwritten"])):
                return merge_ranges((e.offset, e.length) for e in extents if e.kind != "data")
            self._fiemap = None
            self._unwritten = None           # FIEMAP is not trusted for this file from here on
        return list_holes(self.fd, self.size)

    def _list_holes_from(self, start: np.ndarray, end: np.ndarray, kind: np.ndarray) -> list[tuple[int, int]]:
        """:meth:`_list_holes` from the FIEMAP ranges as arrays (:func:`_segments_sorted`: a
        page-compressed file has thousands, one hole a page), the same list without an
        :class:`Extent` for each.  SEEK_DATA is asked about every FIEMAP hole of a recently
        changed file and about :data:`_DATA_IN_CHECKS` of them (the largest and the rest
        spread evenly) of any other: a file not written for minutes has every extent
        allocated (writeback), and what the check catches there is a FIEMAP that lists too
        little on the whole filesystem (which any of its holes shows)."""
        hole = kind == 0
        hs, hl = start[hole], end[hole] - start[hole]
        unw = kind == 2
        self._unwritten = Ranges.from_arrays(start[unw], end[unw] - start[unw])
        fresh = time.time() - max(self.stat.st_mtime, self.stat.st_ctime) < _FRESH_SECONDS
        if not fresh and len(hs) > _DATA_IN_CHECKS:
            pick = distinct(np.concatenate([np.linspace(0, len(hs) - 1, _DATA_IN_CHECKS - 1).astype(np.int64),
                                             [int(np.argmax(hl))]]))
            asked = list(zip(hs[pick].tolist(), hl[pick].tolist()))
        else:
            asked = list(zip(hs.tolist(), hl.tolist()))
        if not _data_in(self.fd, asked) and not (fresh and self._written_over(self._unwritten)):
            # the ranges that are not data, touching ones merged (a hole beside an unwritten extent)
            other = kind != 1
            if not other.any():
                return []
            edges = np.flatnonzero(np.diff(np.concatenate([[False], other, [False]]).astype(np.int8)))
            first, stop = edges[0::2], edges[1::2] - 1
            o = start[first]
            return Ranges.from_arrays(o, end[stop] - o)
        self._fiemap = None
        self._unwritten = None           # FIEMAP is not trusted for this file from here on
        return list_holes(self.fd, self.size)

    def _written_over(self, ranges: list[tuple[int, int]]) -> bool:
        """Whether the page cache holds non-zero bytes inside any of the
        unwritten ``ranges``: data written but not yet on disk (an unwritten
        extent reads as zeros, so cached non-zero bytes there can only be new
        data).  Only pages already in the cache are read (mincore), no I/O."""
        if not ranges:
            return False
        lib = libc()
        if lib is None:
            return False
        # a map of its own (``mmap()`` may hold an in-memory copy, which mincore cannot ask
        # about, and would list the holes, which is what is being decided here)
        try:
            mm = mmap.mmap(self.fd, self.size, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            return False
        guard = mapguard.register(self.path, self.fd, mm)
        try:
            return self._resident_nonzero(mm, ranges, lib)
        finally:
            mapguard.release_fd(guard)
            try:
                mm.close()
            except BufferError:
                pass

    def _resident_nonzero(self, mm: mmap.mmap, ranges: list[tuple[int, int]], lib) -> bool:
        view = np.frombuffer(mm, dtype=np.uint8)
        base = int(view.__array_interface__["data"][0])
        page = mmap.PAGESIZE
        for off, ln in ranges:
            start = off - off % page
            end = min(off + ln, self.size)
            for a in range(start, end, _MINCORE_SPAN):
                b = min(end, a + _MINCORE_SPAN)
                vec = np.zeros(-(-(b - a) // page), dtype=np.uint8)
                if lib.mincore(ctypes.c_void_p(base + a), ctypes.c_size_t(b - a),
                               vec.ctypes.data_as(ctypes.c_void_p)) != 0:
                    return False
                # runs of resident pages, each read at once
                res = np.concatenate(([0], vec & 1, [0])).astype(np.int8)
                edges = np.flatnonzero(np.diff(res))
                for r0, r1 in zip(edges[0::2].tolist(), edges[1::2].tolist()):
                    if np.count_nonzero(view[a + r0 * page:min(a + r1 * page, b)]):
                        return True
        return False

    def unwritten(self) -> list[tuple[int, int]]:
        """Allocated but never written extents (FIEMAP), empty when unknown (listed once
        per open file, like the extents: a read-only :class:`Ranges`, or a copy of a list
        another open handed over)."""
        if self._unwritten is None:
            extents = self.fiemap()
            self._unwritten = Ranges((e.offset, e.length) for e in extents or () if e.kind == "unwritten")
        u = self._unwritten
        return u if type(u) is Ranges else list(u)

    def fs_facts(self):
        """The filesystem's facts of this file (:class:`parsers.fsfacts.FsFacts`):
        its type and block sizes, and its allocation split without double counting."""
        fs_type, bsize = filesystem_of(self.path, self.stat)
        facts = FsFacts(type=fs_type, block_size=bsize, st_blksize=int(self.stat.st_blksize))
        arr = self.fiemap_array()
        raw = arr if arr is None or len(arr) >= 64 else self.fiemap_raw()
        if raw is not None:
            split = split_extents(raw, self.size, bsize)
            mapped = split.pop("mapped")
            for k, v in split.items():
                setattr(facts, k, v)
            facts.metadata = max(0, self.allocated_bytes - mapped)
            if self._holes is not None and self._fiemap is None:
                facts.extent_source = "seek_hole"     # FIEMAP disagreed with SEEK_DATA (a fresh file)
            if fs_type == "btrfs":
                from .btrfs import file_extents, usage
                items = file_extents(self.fd)
                if items is not None:
                    facts.disk = usage(items).disk
                    facts.disk_source = "btrfs extent items, each disk extent once (as compsize counts)"
                else:
                    facts.disk = self.allocated_bytes
                    facts.disk_source = ("estimate: st_blocks, which counts compressed extents uncompressed "
                                         "(reading btrfs' extent items needs CAP_SYS_ADMIN)")
        else:
            facts.extent_source = "seek_hole" if self.holes() or self.size else "none"
            hole = sum(n for _o, n in self.holes())
            facts.data = self.size - hole
            # allocation beyond the data ranges is fallocated space: inside the holes as far as
            # they reach (SEEK_HOLE calls it a hole), the rest past EOF
            beyond = max(0, self.allocated_bytes - -(-facts.data // bsize) * bsize)
            facts.unwritten = min(beyond, hole)
            facts.past_eof = beyond - facts.unwritten
            facts.hole = hole - facts.unwritten
        return facts

    def fiemap_raw(self) -> list[tuple[int, int, int]] | None:
        """FIEMAP over the whole offset range (past EOF too), asked once per open file."""
        if self._fiemap_raw is False:
            a = self.fiemap_array()
            self._fiemap_raw = None if a is None else _as_tuples(a)
        return self._fiemap_raw

    def fiemap_array(self) -> np.ndarray | None:
        """:meth:`fiemap_raw` as an (n, 3) int64 array (module :func:`fiemap_array`), asked once
        per open file; a list set on ``_fiemap_raw`` (tests) is taken as it is."""
        if self._fiemap_arr is False:
            if self._fiemap_raw is not False:
                raw = self._fiemap_raw
                self._fiemap_arr = None if raw is None else np.array(raw, dtype=np.int64).reshape(-1, 3)
            else:
                self._fiemap_arr = fiemap_array(self.fd) if self.size or self.allocated_bytes \
                    else np.zeros((0, 3), dtype=np.int64)
        return self._fiemap_arr

    def fiemap(self) -> list[Extent] | None:
        if self._fiemap is False:
            raw = self.fiemap_raw()
            self._fiemap = None if raw is None else extents_within(raw, self.size)
        return self._fiemap


def _data_in(fd: int, holes: list[tuple[int, int]]) -> bool:
    """Whether SEEK_DATA finds data inside any of ``holes`` (one lseek each;
    False where the filesystem has no SEEK_DATA)."""
    for off, ln in holes:
        try:
            if os.lseek(fd, off, SEEK_DATA) < off + ln:
                return True
        except OSError:
            return False        # ENXIO: no data after off; EINVAL: no SEEK_DATA here
    return False


def list_holes(fd: int, size: int) -> Ranges:
    """Holes of an open file as (offset, length), from SEEK_DATA/SEEK_HOLE.

    Never reads data: a 1 TB sparse file costs a handful of syscalls.  On a
    filesystem without SEEK_HOLE support the file is reported as all data.
    """
    holes: list[tuple[int, int]] = []
    pos = 0
    while pos < size:
        try:
            data = os.lseek(fd, pos, SEEK_DATA)
        except OSError as e:
            if e.errno == errno.ENXIO:          # no data after pos: hole to the end
                holes.append((pos, size - pos))
                break
            if e.errno in (errno.EINVAL, errno.EOPNOTSUPP):
                return []
            raise
        if data > pos:
            holes.append((pos, min(data, size) - pos))
        if data >= size:
            break
        try:
            hole = os.lseek(fd, data, SEEK_HOLE)
        except OSError as e:
            if e.errno in (errno.EINVAL, errno.EOPNOTSUPP, errno.ENXIO):
                break
            raise
        if hole <= data:     # file shrank under us
            break
        pos = hole
    return Ranges(holes)


def fiemap_raw(fd: int, start: int = 0, length: int | None = None,
               batch: int = 512) -> list[tuple[int, int, int]] | None:
    """FIEMAP extents (logical, length, flags) overlapping [start, start + length)
    (the whole offset range, past EOF included, when ``length`` is None), in
    file order.  None when the filesystem has no FIEMAP."""
    a = fiemap_array(fd, start, length, batch)
    return None if a is None else _as_tuples(a)


def _as_tuples(a: np.ndarray) -> list[tuple[int, int, int]]:
    return list(zip(*a.T.tolist())) if len(a) else []


def fiemap_array(fd: int, start: int = 0, length: int | None = None, batch: int = 4096) -> np.ndarray | None:
    """:func:`fiemap_raw` as an (n, 3) int64 array of (logical, length, flags), made from the
    ioctl's buffers without a tuple per extent (a page-compressed file has thousands)."""
    end = _FIEMAP_MAX_OFFSET if length is None else start + length
    parts: list[np.ndarray] = []
    # most files have a few extents: a small first request, the full batch after
    ask = min(batch, _FIEMAP_FIRST_BATCH)
    pos = start
    while pos < end:
        buf = bytearray(_FIEMAP_HDR.size + ask * _FIEMAP_EXTENT.size)
        # no FIEMAP_FLAG_SYNC: we never cause writes; delayed-allocation extents count as data
        _FIEMAP_HDR.pack_into(buf, 0, pos, end - pos, 0, 0, ask, 0)
        count, ask = ask, batch
        try:
            fcntl.ioctl(fd, FS_IOC_FIEMAP, buf, True)
        except OSError:
            return None
        mapped = min(_FIEMAP_HDR.unpack_from(buf, 0)[3], count)
        if mapped == 0:
            break
        ext = np.frombuffer(buf, dtype=_FIEMAP_EXTENT_DTYPE, count=mapped, offset=_FIEMAP_HDR.size)
        part = np.empty((mapped, 3), dtype=np.int64)
        part[:, 0], part[:, 1], part[:, 2] = ext["logical"], ext["length"], ext["flags"]
        parts.append(part)
        pos = max(pos, int((part[:, 0] + part[:, 1]).max()))
        if (part[:, 2] & FIEMAP_EXTENT_LAST).any():
            break
    return np.concatenate(parts) if parts else np.zeros((0, 3), dtype=np.int64)


def fiemap(fd: int, size: int, batch: int = 512) -> list[Extent] | None:
    """The file's extent map (data / unwritten / hole) from the FIEMAP ioctl, up to
    ``size``.  Returns None when the filesystem does not support FIEMAP.  Adjacent
    ranges of the same kind are merged."""
    raw = fiemap_raw(fd, 0, size, batch) if size else []
    return None if raw is None else extents_within(raw, size)


#: FIEMAP lists from this long on are split in numpy (a page-compressed file has thousands)
_EXTENTS_VECTORISED = 64
_KIND_NAMES = ("hole", "data", "unwritten")


def extents_within(raw: list[tuple[int, int, int]], size: int) -> list[Extent]:
    """FIEMAP extents (logical, length, flags) as data / unwritten / hole ranges covering
    [0, size), adjacent ranges of the same kind merged."""
    if len(raw) >= _EXTENTS_VECTORISED:
        got = _extents_within_sorted(raw, size)
        if got is not None:
            return got
    return _extents_within_loop(raw, size)


#: FIEMAP holes of a file not changed recently that SEEK_DATA is asked about (ReadOnlyFile._list_holes_from)
_DATA_IN_CHECKS = 64


def _extents_within_sorted(raw: list[tuple[int, int, int]], size: int) -> list[Extent] | None:
    """:func:`extents_within` in numpy for extents in file order that do not overlap (as
    FIEMAP lists them); None for any other list (the loop then decides)."""
    segs = _segments_sorted(raw, size)
    if segs is None:
        return None
    start, end, kind = segs
    names = _KIND_NAMES
    return [Extent(o, e - o, names[k]) for o, e, k in zip(start.tolist(), end.tolist(), kind.tolist())]


def _segments_sorted(raw: list[tuple[int, int, int]], size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The ranges :func:`extents_within` makes, as arrays (start, end, kind: 0 hole, 1 data,
    2 unwritten; adjacent ranges of one kind merged), for extents in file order that do not
    overlap (as FIEMAP lists them); None for any other list."""
    a = np.asarray(raw, dtype=np.int64).reshape(-1, 3)
    a = a[a[:, 0] < size]
    start = a[:, 0]
    end = np.minimum(start + a[:, 1], size)
    if len(a) and (a[:, 1] <= 0).any():
        return None
    prev = np.empty_like(end)
    if len(end):
        prev[0] = 0
        prev[1:] = end[:-1]
        if (start < prev).any():
            return None
    kinds = np.where(a[:, 2] & FIEMAP_EXTENT_UNWRITTEN, 2, 1)
    last = int(end[-1]) if len(end) else 0
    seg_start = np.append(np.stack([prev, start], axis=1).ravel(), last)
    seg_end = np.append(np.stack([start, end], axis=1).ravel(), size)
    seg_kind = np.append(np.stack([np.zeros_like(kinds), kinds], axis=1).ravel(), 0)
    keep = seg_end > seg_start
    seg_start, seg_end, seg_kind = seg_start[keep], seg_end[keep], seg_kind[keep]
    if not len(seg_kind):
        return seg_start, seg_end, seg_kind
    first = np.flatnonzero(np.diff(seg_kind)) + 1          # where a run of one kind begins
    starts = np.concatenate([[0], first])
    stops = np.concatenate([first - 1, [len(seg_kind) - 1]])
    return seg_start[starts], seg_end[stops], seg_kind[starts]


def _extents_within_loop(raw: list[tuple[int, int, int]], size: int) -> list[Extent]:
    """:func:`extents_within` one extent at a time (any list)."""
    out: list[Extent] = []
    pos = 0
    for logical, length, flags in raw:
        if logical >= size:
            break
        end = min(logical + length, size)
        for offset, stop, kind in ((pos, logical, "hole"),
                                   (logical, end, "unwritten" if flags & FIEMAP_EXTENT_UNWRITTEN else "data")):
            if stop <= offset:
                continue
            if out and out[-1].kind == kind and out[-1].offset + out[-1].length == offset:
                out[-1] = Extent(out[-1].offset, stop - out[-1].offset, kind)
            else:
                out.append(Extent(offset, stop - offset, kind))
        pos = max(pos, end)
    if pos < size:
        if out and out[-1].kind == "hole" and out[-1].offset + out[-1].length == pos:
            out[-1] = Extent(out[-1].offset, size - out[-1].offset, "hole")
        else:
            out.append(Extent(pos, size - pos, "hole"))
    return out


def merge_ranges(ranges) -> Ranges:
    """Sort and merge touching (offset, length) ranges."""
    out: list[tuple[int, int]] = []
    for off, ln in sorted(ranges):
        if ln <= 0:
            continue
        if out and out[-1][0] + out[-1][1] >= off:
            o, l = out[-1]
            out[-1] = (o, max(o + l, off + ln) - o)
        else:
            out.append((off, ln))
    return Ranges(out)


def file_facts(path: str) -> tuple[int, int, list[tuple[int, int]]]:
    """(apparent bytes, allocated bytes, holes) of one file, read-only."""
    with ReadOnlyFile(path) as f:
        return f.size, f.allocated_bytes, f.holes()


class HandleCache:
    """Bounded LRU of read-only file handles, keyed by absolute path: many small reads of a
    few files (what-if payloads, the inspector) open and list each file's holes once, and
    read with ``pread`` (no map kept: a file truncated meanwhile gives a short read, never
    SIGBUS).  A handle is reopened when the path names another file (inode, size, mtime)."""

    def __init__(self, capacity: int, opener=None):
        self.capacity = capacity
        self._open = opener or ReadOnlyFile
        self._handles: OrderedDict[str, ReadOnlyFile] = OrderedDict()
        self._lock = threading.Lock()
        #: reads under way per handle (id), and handles evicted or replaced while read: each is
        #: closed by its last reader, so the lock is held for the look-up only, never the read
        self._reading: dict[int, int] = {}
        self._retired: dict[int, ReadOnlyFile] = {}

    @staticmethod
    def _same_file(f: ReadOnlyFile, st: os.stat_result) -> bool:
        o = f.stat
        return (o.st_dev, o.st_ino, o.st_size, o.st_mtime_ns) == (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)

    def _retire(self, f: ReadOnlyFile) -> None:
        """Close ``f`` now, or when its last read ends (the lock is held)."""
        if self._reading.get(id(f)):
            self._retired[id(f)] = f
        else:
            f.close()

    def pread(self, path: str, offset: int, length: int, known_holes=None) -> bytes:
        """``length`` bytes at ``offset`` of ``path`` (fewer at the end of the file).
        ``known_holes``: (holes, stamp, unwritten) of the file as a scan listed them, taken
        by a new handle when the file is the same (:meth:`ReadOnlyFile.adopt_holes`)."""
        st = os.stat(path)
        with self._lock:
            f = self._handles.get(path)
            if f is not None and not self._same_file(f, st):
                self._handles.pop(path)
                self._retire(f)
                f = None
            if f is None:
                f = self._open(path)
                # listed once here, before reads of two threads share them
                if known_holes is None or not f.adopt_holes(*known_holes):
                    f.holes()
                self._handles[path] = f
                while len(self._handles) > self.capacity:
                    _, old = self._handles.popitem(last=False)
                    if old is not f:
                        self._retire(old)
            else:
                self._handles.move_to_end(path)
            self._reading[id(f)] = self._reading.get(id(f), 0) + 1
        try:
            return f.pread_nomap(offset, length)
        finally:
            with self._lock:
                k = id(f)
                left = self._reading[k] - 1
                if left:
                    self._reading[k] = left
                else:
                    del self._reading[k]
                    done = self._retired.pop(k, None)
                    if done is not None:
                        done.close()

    def close(self) -> None:
        with self._lock:
            while self._handles:
                _, f = self._handles.popitem()
                self._retire(f)

    def open_paths(self) -> list[str]:
        with self._lock:
            return list(self._handles)

"""The vectorised page map of one InnoDB data file.

Every page's FIL header, INDEX page header and trailer fields are read with
one numpy structured view over the mmap (header_dtype), so a file of a
million pages costs a handful of strided copies, not a Python loop per page.
Only page-compressed pages are visited one by one (their headers have to be
decompressed) and only INODE pages are parsed one by one.
"""
from __future__ import annotations

import functools
import mmap
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from collections import Counter

import numpy as np

from ..arrays import distinct
from ..fileio import ReadOnlyFile
from .fil import (FIL_NULL, FIL_PAGE_COMPRESSED, FIL_PAGE_COMPRESSED_AND_ENCRYPTED, FIL_PAGE_ENCRYPTED,
                  FIL_PAGE_ENCRYPTED_RTREE, FIL_PAGE_INODE, FIL_PAGE_PAGE_COMPRESSED,
                  FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED, FIL_PAGE_SDI, FIL_PAGE_TYPE_FSP_HDR,
                  FIL_PAGE_TYPE_INSTANT, FIL_PAGE_TYPE_XDES, INDEX_TYPES_MARIADB, INDEX_TYPES_MYSQL,
                  KIND_NAME_UNDECODED, KIND_PAGE_COMPRESSED_UNDECODED, BUF_NO_CHECKSUM_MAGIC,
                  FIL_PAGE_DATA, FIL_PAGE_ORIGINAL_TYPE_V1, FilHeader, header_dtype, page_type_names,
                  parse_fil_header)
from .fsp import MARIADB_ALGORITHMS, FspFlags, FspHeader, decode_fsp_flags, extent_size_pages, parse_fsp_header
from ..ranges import ranges_array
from ..units import hole_bytes_per_unit
from .index import PAGE_HEADER, PAGE_HEAP_NO_COMPACT, data_size, fill_ratio
from .inode import Segment, parse_inode_page
from .xdes import XDES_ARR_OFFSET, ExtentMap, read_extent_map, xdes_size
from .crypt import CRYPT_MAGIC, crypt_data_offset

if TYPE_CHECKING:
    # imported where a file needs them: the codecs for page-compressed files, the checksums
    # when they are verified, the crypt readers for encrypted files (a plain file needs none)
    from .encryption import EncryptionFacts

#: decoded bytes enough for the FIL and INDEX page headers
_HEADER_PREFIX = 128
_SLOW = ("lzo",)
#: codecs whose full page decode is slow enough (zlib ~90 us, bzip2 ~500 us per
#: 16 KiB page) for threads to pay; zlib and bz2 release the GIL while decoding
_THREADED = ("zlib", "bzip2")
_THREAD_BATCH = 64
#: page-compressed pages are read and decoded this many page-size bytes at a time (their stored
#: bytes are held meanwhile: at most 64 MiB, where the whole file's were held before)
_PC_CHUNK_BYTES = 64 << 20
#: bytes of each page holding the FIL header and the INDEX page header (PAGE_DATA = 94)
_HEAD_BYTES = 96
#: the same for encrypted tablespaces: the encrypted area starts at 26 (full_crc32) or 38,
#: so the INDEX header ends in the AES block that ends at byte 106 (full_crc32) or 118
_CRYPT_HEAD_BYTES = 128
_HEAD_CHUNK = 1 << 18
_HEAD_ITEM = np.dtype(f"V{_HEAD_BYTES}")       # one page's header block as an opaque item
#: trailing all-hole pages beyond the data mapped at most (a sparse terabyte is 2^26 pages)
_MAX_TRAILING_HOLE_PAGES = 1 << 20
#: largest file read into memory when it cannot be mapped
_MAX_UNMAPPED = 512 << 20
PAGE_SIZES = (16384, 8192, 4096, 32768, 65536, 2048, 1024)
MAX_ERRORS_PER_KIND = 8


class PageMapError(Exception):
    """The file cannot be mapped at all (too small, unreadable)."""


#: arrays up to this long are counted by a Counter of their list (PageMap.kind_counts)
_SMALL_COUNT = 4096
#: kind_names() results shared between files with the same kinds (bounded)
_KIND_NAMES: dict[tuple, dict[int, str]] = {}
_KIND_NAMES_MAX = 4096

@dataclass
class PageMap:
    """Everything read from one file, as arrays of one element per page."""

    path: str
    n_pages: int
    physical: int
    logical: int
    flavor: str                         # "mysql" | "mariadb"
    fsp: FspHeader | None
    flags: FspFlags
    trailing_bytes: int
    # per page
    page_no: np.ndarray
    space_id: np.ndarray
    prev: np.ndarray
    next: np.ndarray
    lsn: np.ndarray
    type: np.ndarray                    # FIL_PAGE_TYPE as stored
    kind: np.ndarray                    # logical type (original type of compressed pages)
    level: np.ndarray
    n_recs: np.ndarray
    index_id: np.ndarray
    n_heap: np.ndarray
    heap_top: np.ndarray
    garbage: np.ndarray
    stored: np.ndarray                  # bytes stored (payload + header for compressed pages)
    payload_len: np.ndarray             # compressed payload bytes, 0 when not compressed
    compressed: np.ndarray
    encrypted: np.ndarray
    corrupt: np.ndarray
    zero: np.ndarray                    # header all zero (never written / punched)
    checksum_ok: np.ndarray
    # set by the later steps of build_page_map (extents, segments, owners, fill)
    data_size: np.ndarray | None = None
    fill: np.ndarray | None = None
    free: np.ndarray | None = None
    seg_id: np.ndarray | None = None
    owner_index: np.ndarray | None = None   # u8 index id owning the page, 0 none
    owned: np.ndarray | None = None
    checksum_checked: bool = False
    checksum_algorithm: str | None = None
    compression_algorithm: str | None = None
    segments: dict[int, Segment] = field(default_factory=dict)
    seg_index: dict[int, int] = field(default_factory=dict)
    roots: dict[int, int] = field(default_factory=dict)
    extent_map: ExtentMap | None = None
    errors: list[tuple[str, int | None]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    encrypted_tablespace: bool = False
    undecoded: dict[str, int] = field(default_factory=dict)
    doublewrite: np.ndarray | None = None
    zero_in_use: np.ndarray | None = None      # zeroed pages the extent map says are used
    #: ibdata1: the doublewrite area ({"blocks", "reserved_pages", "copies"}; None elsewhere)
    doublewrite_area: dict | None = None
    in_hole: np.ndarray | None = None          # pages entirely in a hole (never read)
    original_type: np.ndarray | None = None   # type before encryption (MySQL) / compression
    #: MariaDB crypt data, key versions and decrypted pages (None: no crypt data on page 0)
    crypt: EncryptionFacts | None = None
    #: ``build_page_map(owners_only=True)``: the page-compressed pages left undecoded because a
    #: segment owns their extent (their index from ``owner_index``; no type, level or records)
    skipped: np.ndarray | None = None
    #: the leaf segments' ids (PAGE_BTR_SEG_LEAF of each index's root): a skipped page of one
    #: is a leaf page (btr_page_alloc takes level-0 pages from the leaf segment, the others
    #: from the top segment; storage/innobase/btr/btr0btr.cc)
    leaf_segments: frozenset = frozenset()

    def is_index_kind(self, kinds: np.ndarray) -> np.ndarray:
        """B-tree page kinds of this file's flavour (one lookup per page)."""
        return _index_kinds(self.flavor).take(np.asarray(kinds, dtype=np.uint16))

    def kind_counts(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The page kinds of this file in ascending order, and how many pages of each
        (``np.unique(kind, return_counts=True)``; a small file's by a Counter of its list,
        which costs a tenth of np.unique's fixed cost)."""
        kind = self.kind
        if len(kind) <= _SMALL_COUNT:
            c = Counter(kind.tolist())
            kinds = tuple(sorted(c))
            return kinds, tuple(c[k] for k in kinds)
        u, counts = np.unique(kind, return_counts=True)
        return tuple(u.tolist()), tuple(counts.tolist())

    def kind_names(self, kinds: tuple[int, ...] | None = None) -> dict[int, str]:
        """Names of the page kinds in this file (``kinds``: kind_counts()'s kinds when the
        caller has them). Files with the same kinds get the same dict object (a data dir
        of 100,000 tablespaces holds a handful of kind sets): read it, never change it in place."""
        if kinds is None:
            kinds = self.kind_counts()[0]
        key = (self.flavor, kinds)
        out = _KIND_NAMES.get(key)
        if out is None:
            names = page_type_names(self.flavor)
            out = {k: KIND_NAME_UNDECODED if k == KIND_PAGE_COMPRESSED_UNDECODED
                   else names.get(k, f"UNKNOWN_PAGE_TYPE_{k}") for k in kinds}
            if len(_KIND_NAMES) < _KIND_NAMES_MAX:
                _KIND_NAMES[key] = out
        return out


def _be(b: bytes, a: int, n: int) -> int:
    return int.from_bytes(b[a:a + n], "big")


def guess_page_size(f: ReadOnlyFile, space_id: int) -> int | None:
    """Find the physical page size by looking for page 1's header (page number 1, same space)."""
    for ps in PAGE_SIZES:
        if f.size < 2 * ps:
            continue
        h = f.pread(ps, 38)
        if len(h) == 38 and _be(h, 4, 4) == 1 and _be(h, 34, 4) == space_id:
            return ps
    return None


def _add(pm: PageMap, counts: dict, key: str, message: str, offset: int | None) -> None:
    n = counts.get(key, 0)
    counts[key] = n + 1
    if n < MAX_ERRORS_PER_KIND:
        pm.errors.append((message, offset))


def _cached(fd: int, n: int, physical: int) -> bool:
    """Whether a few sampled page headers are already in the page cache
    (preadv2 with RWF_NOWAIT fails with EAGAIN otherwise)."""
    flag = getattr(os, "RWF_NOWAIT", None)
    if flag is None or n == 0:
        return False
    buf = bytearray(1)
    for i in sorted({0, n // 3, (2 * n) // 3, n - 1}):
        try:
            if os.preadv(fd, [buf], i * physical, flag) != 1:
                return False
        except OSError:
            return False
    return True


def _prefetch_headers(mm, n: int, physical: int, holes, fd: int | None = None) -> None:
    """Header-only reads: no read-ahead of payloads (MADV_RANDOM), then ask the
    kernel for the first 4 KiB of every page that is not in a hole at once
    (MADV_WILLNEED), so the reads are queued together instead of faulting one
    by one.  One madvise per page, no Python work on the bytes."""
    import mmap as _mmap
    if not hasattr(mm, "madvise") or not hasattr(_mmap, "MADV_WILLNEED"):
        return
    if fd is not None and _cached(fd, n, physical):
        return
    try:
        mm.madvise(_mmap.MADV_RANDOM)
        starts = np.arange(n, dtype=np.int64) * physical
        if holes:
            starts = starts[hole_bytes_per_unit(holes, starts, min(4096, physical)) == 0]
        length = min(4096, physical)
        advise, will = mm.madvise, _mmap.MADV_WILLNEED
        for s in starts.tolist():
            advise(will, s, length)
    except (OSError, ValueError):
        pass


@functools.lru_cache(maxsize=4)
def _unknown_types(flavor: str) -> np.ndarray:
    """Lookup table over all 65536 type values: a page type the flavour does not name."""
    table = np.ones(1 << 16, dtype=bool)
    table[[k for k in page_type_names(flavor) if 0 <= k < (1 << 16)]] = False
    table.flags.writeable = False
    return table


@functools.lru_cache(maxsize=4)
def _index_kinds(flavor: str) -> np.ndarray:
    """Lookup table over all 65536 type values: a B-tree page of the flavour."""
    table = np.zeros(1 << 16, dtype=bool)
    table[list(INDEX_TYPES_MARIADB if flavor == "mariadb" else INDEX_TYPES_MYSQL)] = True
    table.flags.writeable = False
    return table


@functools.lru_cache(maxsize=8)
def _head_block_dtype(physical: int, head_bytes: int = _HEAD_BYTES) -> np.dtype:
    """A page as a record whose one field is its first ``head_bytes`` bytes."""
    return np.dtype({"names": ["h"], "formats": [np.dtype(f"V{head_bytes}")], "offsets": [0], "itemsize": physical})


def _any_of(values: np.ndarray, wanted) -> np.ndarray:
    """``np.isin`` for a handful of page types: a few comparisons, no sort."""
    out = np.zeros(values.shape, dtype=bool)
    for w in wanted:
        out |= values == w
    return out


#: up to this many holes, page ranges are set by slices (no pass over every page)
_FEW_HOLES = 64


def _hole_pages(holes: list[tuple[int, int]], n: int, physical: int) -> list[tuple[int, int]]:
    """[first, last) page ranges wholly inside a hole, for a few holes."""
    out = []
    for off, ln in holes:
        a = min(-(-off // physical), n)
        b = min((off + ln) // physical, n)
        if b > a:
            out.append((a, b))
    return out


def pages_in_holes(holes: list[tuple[int, int]] | None, n: int, physical: int) -> np.ndarray:
    """Which of the first ``n`` pages lie wholly in a hole (O(pages + holes))."""
    if not holes:
        return np.zeros(n, dtype=bool)
    if len(holes) <= _FEW_HOLES:
        out = np.zeros(n, dtype=bool)
        for a, b in _hole_pages(holes, n, physical):
            out[a:b] = True
        return out
    h = ranges_array(holes)
    first = np.minimum(-(-h[:, 0] // physical), n)
    last = np.minimum((h[:, 0] + h[:, 1]) // physical, n)
    ok = last > first
    if not ok.any():
        return np.zeros(n, dtype=bool)
    d = np.bincount(first[ok], minlength=n + 1) - np.bincount(last[ok], minlength=n + 1)
    return np.cumsum(d[:n]) > 0


def pages_touching_holes(holes: list[tuple[int, int]] | None, n: int, physical: int) -> np.ndarray:
    """Which of the first ``n`` pages overlap a hole at all (wholly or in part)."""
    out = np.zeros(n, dtype=bool)
    if not holes or n == 0:
        return out
    h = ranges_array(holes)
    h = h[h[:, 1] > 0]
    first = np.minimum(h[:, 0] // physical, n)
    last = np.minimum((h[:, 0] + h[:, 1] - 1) // physical + 1, n)
    ok = last > first
    d = np.bincount(first[ok], minlength=n + 1) - np.bincount(last[ok], minlength=n + 1)
    return np.cumsum(d[:n]) > 0


class _RowsAroundHoles:
    """``pages[d, a:b]`` for readers that take the page array (the extent map), each
    row through :meth:`_Walk.row` so a page overlapping a hole is not faulted in."""

    def __init__(self, walk: "_Walk"):
        self.walk = walk

    def __getitem__(self, key):
        i, rest = key if isinstance(key, tuple) else (key, slice(None))
        return self.walk.row(int(i))[rest]


def _data_runs(in_hole: np.ndarray, holes: list[tuple[int, int]] | None = None,
               physical: int = 0) -> list[tuple[int, int]]:
    """[start, end) runs of pages not in a hole (from the hole list when it is
    short and given, else from ``in_hole``)."""
    n = len(in_hole)
    if holes is not None and physical and len(holes) <= _FEW_HOLES:
        runs, pos = [], 0
        for a, b in sorted(_hole_pages(holes, n, physical)):
            if a > pos:
                runs.append((pos, a))
            pos = max(pos, b)
        if pos < n:
            runs.append((pos, n))
        return runs
    if not in_hole.any():
        return [(0, n)]
    data = (~in_hole).astype(np.int8)
    edges = np.flatnonzero(np.diff(np.concatenate([[0], data, [0]])))
    return list(zip(edges[0::2].tolist(), edges[1::2].tolist()))


def _decode_all(one, raws: list, threaded: bool, check=lambda: None) -> list:
    """``one`` over every page, in order, ``check`` (the cancel hook) between
    batches of pages; on all cores when ``threaded`` and there are enough pages."""
    if not raws:
        return []

    def batch(k: int) -> list:
        check()
        return [one(r) for r in raws[k:k + _THREAD_BATCH]]
    starts = range(0, len(raws), _THREAD_BATCH)
    workers = min(8, os.cpu_count() or 1)
    if not threaded or workers < 2 or len(raws) < 2 * _THREAD_BATCH:
        return [d for k in starts for d in batch(k)]
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return [d for part in pool.map(batch, starts) for d in part]


@dataclass
class _Walk:
    """What the steps of :func:`build_page_map` share besides the PageMap itself:
    the file, page 0's headers, the pages and their header records, and facts
    one step finds for the later ones."""

    f: ReadOnlyFile
    check: Callable[[], None]
    head: bytes                       # the start of page 0 (FIL and FSP headers)
    fil0: FilHeader
    fsp: FspHeader | None
    #: (n, physical) uint8 view of the file, made on first use (``pages``): a page map
    #: whose header blocks came through ``ReadOnlyFile.data_map`` may never need it
    mapped: np.ndarray | None = None
    n_pages: int = 0
    physical: int = 0
    in_hole: np.ndarray | None = None
    hdr: np.ndarray | None = None      # header record of every page (header_dtype over copied header blocks)
    pno: np.ndarray | None = None      # 0..n-1
    seg_top_off: np.ndarray | None = None
    types_present: set = field(default_factory=set)
    ext: int = 0                      # pages per extent
    counts: dict = field(default_factory=dict)
    #: PAGE_BTR_SEG_* columns read whole once decoded pages overwrite them
    seg_cols: dict[str, np.ndarray] = field(default_factory=dict)
    decoded: dict[int, bytes] = field(default_factory=dict)
    decoded_idx: np.ndarray | None = None
    undecided: np.ndarray | None = None
    #: page-compressed pages left undecoded (``build_page_map(owners_only=True)``): those of
    #: extents a segment owns, whose index the extent's segment names
    skip_decode: np.ndarray | None = None
    free_limit: int = 0
    by_place: dict = field(default_factory=dict)
    frag_at: list = field(default_factory=list)
    is_index: np.ndarray | None = None
    live_index: np.ndarray | None = None
    heads: np.ndarray | None = None    # (n, _HEAD_BYTES) uint8 under ``hdr`` (decrypted pages written in)
    dblwr_fseg: tuple[int, int] | None = None      # (page, offset) of the doublewrite segment's inode
    dblwr_blocks: list = field(default_factory=list)
    crypt: EncryptionFacts | None = None
    plain: dict[int, bytes] = field(default_factory=dict)   # whole decrypted pages kept for later steps
    #: checksum of each decrypted and decompressed FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED page
    decoded_ok: dict[int, bool] | None = None
    #: pages that overlap a hole without lying wholly in one, when the file's map
    #: is not hole-safe (too many holes to blank): read with pread, never through the map
    partial: np.ndarray | None = None

    @property
    def pages(self) -> np.ndarray:
        """The file as an (n, physical) array: its hole-safe map (``ReadOnlyFile.mmap``),
        made on first use, or the file read into memory when it cannot be mapped.  When
        the map could not cover the holes, the pages overlapping one are marked
        ``partial`` (read with pread from then on, never through the map)."""
        if self.mapped is None:
            f, n, physical = self.f, self.n_pages, self.physical
            mm = f.mmap()
            if mm is None:
                if n * physical > _MAX_UNMAPPED:
                    raise PageMapError(f"cannot mmap the file and {n * physical} bytes are too many to read "
                                       f"into memory (limit {_MAX_UNMAPPED})")
                mm = f.read_exact(0, n * physical)
            elif self.partial is None and not f.hole_safe_map:
                holes = f.holes()
                if holes:
                    self.partial = pages_touching_holes(holes, n, physical) & ~self.in_hole
            self.mapped = np.frombuffer(mm, dtype=np.uint8, count=n * physical).reshape(n, physical)
        return self.mapped

    def row(self, i: int) -> np.ndarray:
        """Page ``i`` in full (a hole reads as the zeros it holds, nothing is faulted in)."""
        p = self.plain.get(i)
        if p is not None:
            return np.frombuffer(p, dtype=np.uint8)
        return self._stored_row(i)

    def raw(self, i: int) -> bytes:
        """Page ``i`` as bytes: decrypted when it was, read around holes."""
        p = self.plain.get(i)
        return p if p is not None else bytes(self.row(i))

    def stored_prefix(self, i: int, length: int) -> bytes:
        """The first ``length`` bytes of page ``i`` (not a decrypted one) as :meth:`raw` gives
        them: a page-compressed page's stored bytes, without the punched tail behind them."""
        physical = self.physical
        if self.mapped is None:
            return self.f.pread_nomap(i * physical, length).ljust(length, b"\0")
        if self.partial is not None and self.partial[i]:
            return self.f.pread(i * physical, length).ljust(length, b"\0")
        return bytes(self.mapped[i, :length])

    def stored_prefixes(self, idx: list[int], lengths: list[int]) -> list[bytes]:
        """:meth:`stored_prefix` of every (page, length), read in one call where the file is
        not mapped (the hole test once for all of them)."""
        if not idx:
            return []
        if self.mapped is None:
            got = self.f.pread_many_nomap(np.array(idx, dtype=np.int64) * self.physical, np.array(lengths))
            return [g if len(g) == n else g.ljust(n, b"\0") for g, n in zip(got, lengths)]
        f, ps = self.f, self.physical
        mm = f.mmap()            # what ``mapped`` views: sliced directly, a copy without numpy's
        if mm is None or len(mm) < self.mapped.size:
            return [self.stored_prefix(i, n) for i, n in zip(idx, lengths)]
        if self.partial is None or f.hole_safe_map:
            return [mm[i * ps:i * ps + n] for i, n in zip(idx, lengths)]
        # pages beside holes: through the map where the bytes asked for touch none (as
        # ReadOnlyFile.pread decides, one test for all of them), read around them where they do
        sel = np.array(idx, dtype=np.int64)
        touch = self.partial[sel] & f.touches_hole_many(sel * ps, np.array(lengths))
        return [f.pread(i * ps, n).ljust(n, b"\0") if t else mm[i * ps:i * ps + n]
                for i, n, t in zip(idx, lengths, touch.tolist())]

    def stored_bytes_at(self, idx: np.ndarray, col: np.ndarray) -> np.ndarray:
        """Byte ``col[k]`` of page ``idx[k]`` as stored (a byte in a hole reads as 0, never
        through the map), for every k: one byte of thousands of pages, in numpy."""
        idx = np.asarray(idx, dtype=np.int64)
        col = np.asarray(col, dtype=np.int64)
        pos = idx * self.physical + col
        ones = np.ones(len(idx), dtype=np.int64)
        if self.mapped is None:
            got = self.f.pread_many_nomap(pos, ones)
            return np.fromiter((g[0] if g else 0 for g in got), dtype=np.uint8, count=len(got))
        out = np.zeros(len(idx), dtype=np.uint8)
        safe = np.ones(len(idx), dtype=bool)
        if self.partial is not None and not self.f.hole_safe_map:
            safe = ~(self.partial[idx] & self.f.touches_hole_many(pos, ones))
        out[safe] = self.mapped[idx[safe], col[safe]]
        return out

    def rows(self, sel: np.ndarray, decrypted: bool = True) -> np.ndarray:
        """Pages ``sel`` as an (len(sel), physical) array read around holes; decrypted
        pages as decrypted unless ``decrypted`` is False (checksums are of what is stored)."""
        plain = self.plain if decrypted else {}
        if self.partial is None and not plain:
            return _take_rows(self.pages, sel)
        sel = np.asarray(sel, dtype=np.int64)
        part = self.partial[sel] if self.partial is not None else np.zeros(len(sel), bool)
        if plain:
            part = part | np.fromiter((int(i) in plain for i in sel), dtype=bool, count=len(sel))
        if not part.any():
            return _take_rows(self.pages, sel)
        out = np.empty((len(sel), self.pages.shape[1]), dtype=np.uint8)
        keep = ~part
        out[keep] = self.pages[sel[keep]]
        for j in np.nonzero(part)[0].tolist():
            i = int(sel[j])
            p = plain.get(i)
            out[j] = np.frombuffer(p, dtype=np.uint8) if p is not None else self._stored_row(i)
        return out

    def _stored_row(self, i: int) -> np.ndarray:
        physical = self.physical
        if self.mapped is None:
            # not mapped (yet): one page costs a read, not a map of the whole file
            return np.frombuffer(self.f.pread_nomap(i * physical, physical).ljust(physical, b"\0"), dtype=np.uint8)
        if self.partial is not None and self.partial[i]:
            return np.frombuffer(self.f.pread(i * physical, physical).ljust(physical, b"\0"), dtype=np.uint8)
        return self.mapped[i]

    def col(self, name: str, dtype) -> np.ndarray:
        return self.hdr[name].astype(dtype)

    def seg_field(self, name: str, dtype, idx: np.ndarray) -> np.ndarray:
        """A PAGE_BTR_SEG_* field of some pages (root candidates only need it)."""
        return self.seg_cols[name][idx] if name in self.seg_cols else self.hdr[name][idx].astype(dtype)


#: full_crc32 page_compressed pages whose stored bytes are read (and held) at once
_STORED_BATCH = 4096


def _full_crc32_stored_ok(prefixes_of: Callable[[list[int], list[int]], list[bytes]], sel: np.ndarray,
                          sizes: np.ndarray, physical: int, check) -> np.ndarray:
    """checksum.full_crc32_ok of page_compressed pages ``sel`` (stored lengths ``sizes``)
    from their stored bytes only, read in batches; a stored length under 8 or over the page
    (a corrupt header) is a bad checksum, and nothing of that page is read."""
    from . import checksum as ck
    ok = np.zeros(len(sel), dtype=bool)
    valid = np.nonzero((sizes >= 8) & (sizes <= physical))[0]
    for a in range(0, len(valid), _STORED_BATCH):
        part = valid[a:a + _STORED_BATCH]
        ok[part] = ck.full_crc32_prefixes_ok(prefixes_of(sel[part].tolist(), sizes[part].tolist()))
        check()
    return ok


#: a batch whose pages make more runs than this share of its pages is read as one copy
#: (a view of the map per run is then more calls than the copy costs)
_RUNS_PER_PAGE = 1 / 8


def _row_chunks(rows_of: Callable[[np.ndarray], np.ndarray], sel: np.ndarray, in_hole: np.ndarray,
                span: bool = True):
    """(rows, local, at) chunks covering the ascending pages ``sel``: ``rows[local]`` are pages
    ``sel[at]`` (``local`` and ``at`` slices or index arrays).  With ``span``, one view of the
    map from ``sel[0]`` to ``sel[-1]`` when ``sel`` fills at least half of that run and no page
    of it lies in a hole (checking a few pages more costs less than copying the others out; a
    page in a hole is never read); else one view per run of consecutive pages (:func:`_take_rows`:
    nothing copied, nothing between the runs read, e.g. unwritten extents); a copy of ``sel``
    alone when its runs are too many for a view each."""
    if len(sel) > 1:
        a, b = int(sel[0]), int(sel[-1]) + 1
        if span and len(sel) * 2 >= b - a and not in_hole[a:b].any():
            yield rows_of(np.arange(a, b)), sel - a, slice(None)
            return
        cuts = np.nonzero(np.diff(sel) != 1)[0] + 1
        if len(cuts) <= len(sel) * _RUNS_PER_PAGE:
            bounds = [0, *cuts.tolist(), len(sel)]
            for lo, hi in zip(bounds, bounds[1:]):
                yield rows_of(sel[lo:hi]), slice(None), slice(lo, hi)
            return
    yield rows_of(sel), slice(None), slice(None)


def _take_rows(pages: np.ndarray, sel) -> np.ndarray:
    """``pages[sel]`` (read only): a view of the map when ``sel`` is one ascending run of
    pages, as a whole file's checksums ask for (no copy of 64 MiB batches into fresh
    memory), a copy otherwise."""
    sel = np.asarray(sel)
    if len(sel) > 1 and int(sel[-1]) - int(sel[0]) == len(sel) - 1 and bool((np.diff(sel) == 1).all()):
        view = pages[int(sel[0]):int(sel[-1]) + 1]
        view.flags.writeable = False
        return view
    return pages[sel]


def build_page_map(f: ReadOnlyFile, path: str, verify_checksums: bool = True,
                   check=lambda: None, exact_payload: bool = True,
                   holes: list[tuple[int, int]] | None = None, header_reads: bool = False,
                   keys=None, owners_only: bool = False) -> PageMap:
    """Read the page map of the open file ``f`` (``path`` names it in errors).

    ``exact_payload=False`` decodes only the headers of zlib page_compressed
    pages (full_crc32 layout) and takes their payload length from the zero
    fill behind the stream (exact unless the Adler-32 ends in a zero byte);
    the default decodes zlib pages in full.  lzma pages are always decoded
    by their headers: an .xz stream ends in its footer magic, so the zero
    fill gives its exact length.

    The steps, in order, each a function of its own: the page size from page 0,
    the pages to map (never a hole), their header blocks, the per-page fields and
    MariaDB crypt data and key versions (with ``keys``, a key file's KeyRing, the
    encrypted pages decrypted in memory and their headers used from then on), the
    per-page fields and the flavour, the doublewrite buffer, page numbers,
    encryption, page compression (decoded headers replace the stored ones), space
    ids, unknown types, the extent map, segments, owners, fill, zeroed pages in use,
    checksums."""
    w, flags, physical, n, trailing, errors = _page_size(f, check)
    if holes is None:
        holes = f.holes()
    n, in_hole = _pages_to_map(w, flags, physical, n, holes, errors)
    page0 = _page0_if_crypt(w, flags, physical)
    # encrypted tablespaces: header blocks wide enough for the AES blocks of the INDEX header
    _header_blocks(w, n, physical, holes, in_hole, header_reads and not verify_checksums,
                   _CRYPT_HEAD_BYTES if page0 is not None else _HEAD_BYTES)
    if page0 is not None:
        _decrypt(w, flags, physical, n, in_hole, path, errors, keys, page0)
    pm = _new_page_map(w, path, flags, physical, n, trailing, in_hole, errors)
    _doublewrite(pm, w)
    _check_page_numbers(pm, w)
    _encryption(pm, w)
    w.check()
    early = owners_only and not verify_checksums and pm.flavor == "mariadb"
    if early:
        # the extent map first (descriptor pages are never page-compressed): the pages of
        # extents a segment owns are then not decoded, their owner is the segment's index
        _extents(pm, w)
        w.skip_decode = pm.seg_id != 0
    _page_compression(pm, w, exact_payload, verify_checksums)
    if early:
        pm.skipped = w.skip_decode & pm.compressed & (pm.kind == KIND_PAGE_COMPRESSED_UNDECODED) \
            & ~pm.encrypted & ~pm.corrupt
    _apply_decoded_headers(pm, w)
    _check_space_ids(pm, w)
    _check_unknown_types(pm, w)
    if not early:
        _extents(pm, w)
    _segments(pm, w)
    w.check()
    _owners(pm, w)
    _fill(pm, w)
    _zero_in_use(pm, w)
    if verify_checksums:
        verify(pm, lambda sel: w.rows(sel, decrypted=False), w.hdr, w.decoded, w.check, w.decoded_ok,
               prefixes_of=w.stored_prefixes)
    return pm


def _page_size(f: ReadOnlyFile, check):
    """Page 0: its FIL and FSP headers, the page size from the FSP flags (or, when
    they do not fit the file, from page 1), pages and trailing bytes."""
    size = f.size
    if size < 1024:
        raise PageMapError(f"{size} bytes is too small for an InnoDB page")
    head = f.pread_nomap(0, min(size, 4096))   # FIL and FSP headers (a read: no map made for it)
    errors: list[tuple[str, int | None]] = []
    fil0 = parse_fil_header(head, 0)
    fsp = parse_fsp_header(head, 0) if len(head) >= 150 else None
    flags = decode_fsp_flags(fsp.flags if fsp else 0)
    physical = flags.physical_page_size
    ok_size = flags.valid and physical <= size and (size < 2 * physical or _be(f.pread_nomap(physical, 8), 4, 4) == 1
                                                    or fil0.page_type != FIL_PAGE_TYPE_FSP_HDR)
    if fil0.page_type != FIL_PAGE_TYPE_FSP_HDR:
        errors.append((f"page 0: page type {fil0.page_type} is not FIL_PAGE_TYPE_FSP_HDR; FSP header not trusted", 0))
    if not flags.valid or not ok_size:
        guess = guess_page_size(f, fil0.space_id)
        msg = flags.problem or f"FSP flags 0x{flags.raw:x} give page size {physical} which does not fit the file"
        if guess is None:
            guess = 16384
            errors.append((f"page 0: {msg}; page size unknown, assuming 16384", 38 + 16))
        else:
            errors.append((f"page 0: {msg}; page size {guess} found from page 1", 38 + 16))
        physical = guess
        logical = flags.logical_page_size if flags.valid and flags.zip_size == guess else guess
        flags = FspFlags(flags.raw, flags.format, logical, guess, guess if guess < logical else 0,
                         flags.page_compressed if flags.valid else False,
                         flags.compression_algorithm if flags.valid else None, valid=False, problem=msg)
    n = size // physical
    trailing = size - n * physical
    if trailing:
        errors.append((f"file size {size} is not a multiple of the page size {physical}: "
                       f"{n} whole pages and {trailing} trailing bytes (truncated or torn file)", n * physical))
    w = _Walk(f=f, check=check, head=head, fil0=fil0, fsp=fsp, ext=extent_size_pages(flags.logical_page_size))
    return w, flags, physical, n, trailing, errors


def _pages_to_map(w: _Walk, flags: FspFlags, physical: int, n: int, holes, errors) -> tuple[int, np.ndarray]:
    """The pages to map, never walking a hole: up to the end of the data, or the size
    the FSP header states when that is further; which of them lie in a hole."""
    size = w.f.size
    data_end = size
    if holes and holes[-1][0] + holes[-1][1] >= size:
        data_end = holes[-1][0]
    last_data_page = -(-data_end // physical)
    fsp, fil0 = w.fsp, w.fil0
    fsp_pages = fsp.size_pages if (fsp and flags.valid and fil0.page_type == FIL_PAGE_TYPE_FSP_HDR) else 0
    n_map = min(n, max(last_data_page, fsp_pages))
    if n_map - last_data_page > _MAX_TRAILING_HOLE_PAGES:
        n_map = last_data_page
    if n_map < n:
        errors.append((f"pages {n_map}..{n - 1} ({(n - n_map) * physical} bytes) lie in a trailing hole beyond "
                       f"the tablespace size the FSP header states ({fsp_pages} pages); not mapped",
                       n_map * physical))
        n = n_map
    if n == 0:
        raise PageMapError("no pages to map: the file is one hole" if data_end == 0 else "no pages to map")
    return n, pages_in_holes(holes, n, physical)


#: files from this size on have their headers gathered through ``ReadOnlyFile.data_map``
#: when their map has holes blanked (smaller ones have no whole 2 MiB block to gain)
_DATA_MAP_MIN = 4 << 20


def _heads_near_holes(holes: list[tuple[int, int]], n: int, physical: int) -> list[tuple[int, int]]:
    """[first, last) ranges of the pages (of the first ``n``) whose header's memory page
    overlaps a hole, merged: page p's header lies in memory page (p * physical) // PAGE,
    so for a hole over memory pages mlo..mhi those are the p with
    mlo * PAGE <= p * physical < (mhi + 1) * PAGE.  The pages wholly in a hole are among them."""
    page = mmap.PAGESIZE
    out: list[tuple[int, int]] = []
    for off, ln in sorted(holes):
        if ln <= 0:
            continue
        lo = -(-(off // page * page) // physical)
        hi = min(-(-((off + ln - 1) // page + 1) * page // physical), n)
        if lo >= hi:
            continue
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _copy_heads(dst: np.ndarray, src: np.ndarray, runs, few_runs: bool, in_hole: np.ndarray) -> None:
    """Each header block as one opaque item (a copy of 96-byte items, not of 96 bytes
    one by one), pages in holes left out; ``src`` is dropped on return so its map can close."""
    if few_runs:
        for a0, b0 in runs:
            for a in range(a0, b0, _HEAD_CHUNK):
                b = min(b0, a + _HEAD_CHUNK)
                dst[a:b] = src[a:b]
    else:
        data_idx = np.nonzero(~in_hole)[0]
        for a in range(0, len(data_idx), _HEAD_CHUNK):
            sel = data_idx[a:a + _HEAD_CHUNK]
            dst[sel] = src[sel]


def _heads_through(gather, f: ReadOnlyFile, in_hole: np.ndarray, holes, n: int, physical: int,
                   head_bytes: int) -> np.ndarray:
    """The header blocks of the pages gathered through ``gather`` (ReadOnlyFile.data_map,
    closed here), never one whose memory page touches a hole: those few are read with
    pread around the holes, the pages in holes not at all (zero rows).  Slices
    only: the ranges near holes are at most as many as the holes (``ReadOnlyFile.few_holes``)."""
    near = _heads_near_holes(holes, n, physical)
    heads = np.empty((n, head_bytes), dtype=np.uint8)
    runs, pos = [], 0
    for a, b in near:
        heads[a:b] = 0
        if a > pos:
            runs.append((pos, a))
        pos = b
    if pos < n:
        runs.append((pos, n))
    try:
        _copy_heads(heads.view(np.dtype(f"V{head_bytes}")).reshape(n),
                    np.frombuffer(gather, dtype=_head_block_dtype(physical, head_bytes), count=n)["h"],
                    runs, True, in_hole)
    finally:
        gather.close()
    for i in _pages_outside(near, _hole_pages(holes, n, physical)):
        heads[i] = np.frombuffer(f.pread_nomap(i * physical, head_bytes).ljust(head_bytes, b"\0"), np.uint8)
    return heads


def _pages_outside(ranges: list[tuple[int, int]], hole_ranges: list[tuple[int, int]]) -> list[int]:
    """The pages of the sorted, disjoint [first, last) ``ranges`` that lie in none of
    ``hole_ranges`` (the pages wholly in a hole, ``_hole_pages``): by range arithmetic,
    O(ranges + holes), no pass over pages (near a page-aligned hole there are none)."""
    out: list[int] = []
    hr = sorted(hole_ranges)
    k = 0
    for a, b in ranges:
        pos = a
        while k < len(hr) and hr[k][1] <= pos:
            k += 1
        j = k
        while pos < b and j < len(hr) and hr[j][0] < b:
            ha, hb = hr[j]
            if ha > pos:
                out.extend(range(pos, ha))
            pos = max(pos, hb)
            j += 1
        if pos < b:
            out.extend(range(pos, b))
    return out


def _header_blocks(w: _Walk, n: int, physical: int, holes, in_hole: np.ndarray, prefetch: bool,
                   head_bytes: int = _HEAD_BYTES) -> None:
    """The pages as one (n, physical) view, and one pass over them that copies the
    header block of each (pages in holes stay zero, untouched); the fields are then
    read from that compact copy (``w.hdr``)."""
    f = w.f
    w.n_pages, w.physical, w.in_hole = n, physical, in_hole
    if prefetch:
        mm = f.mmap()
        if mm is not None:
            _prefetch_headers(mm, n, physical, holes, f.fd)
    gather = None
    if holes and f.few_holes() and n * physical >= _DATA_MAP_MIN:
        # one map with no zero pages over its holes, read only over data: the file's
        # hole-safe map is made later, only if a step reads whole pages through it
        gather = f.data_map()
    if gather is not None:
        w.heads = _heads_through(gather, f, in_hole, holes, n, physical, head_bytes)
        w.hdr = w.heads.view(header_dtype(head_bytes, with_trailer=False)).reshape(n)
        return
    buf = w.pages                  # the hole-safe map, or the file read into memory
    mm = f.mmap()
    item = np.dtype(f"V{head_bytes}")
    head_in_hole = None
    if mm is not None and holes and not f.hole_safe_map:
        w.partial = pages_touching_holes(holes, n, physical) & ~in_hole
        cand = np.nonzero(w.partial)[0]
        # a header whose memory page overlaps a hole is read with pread below
        head_in_hole = cand[hole_bytes_per_unit(holes, cand * physical, min(4096, physical)) > 0]
        if len(head_in_hole):
            in_hole = in_hole.copy()
            in_hole[head_in_hole] = True      # skipped by the copy from the map
    runs = _data_runs(in_hole, holes if head_in_hole is None or not len(head_in_hole) else None, physical)
    heads = np.empty((n, head_bytes), dtype=np.uint8)
    few_runs = len(runs) <= max(16, n // 64)   # few runs of data pages: plain slices
    if runs != [(0, n)]:                       # rows of pages in holes are zero, never read
        if few_runs:
            for a, b in zip([0] + [e for _, e in runs], [s for s, _ in runs] + [n]):
                heads[a:b] = 0
        else:
            heads[in_hole] = 0
    _copy_heads(heads.view(item).reshape(n),
                np.frombuffer(buf, dtype=_head_block_dtype(physical, head_bytes), count=n)["h"],
                runs, few_runs, in_hole)
    if head_in_hole is not None:
        for i in head_in_hole.tolist():
            heads[i] = w.row(i)[:head_bytes]
    w.heads = heads
    w.hdr = heads.view(header_dtype(head_bytes, with_trailer=False)).reshape(n)


def _page0_if_crypt(w: _Walk, flags: FspFlags, physical: int) -> bytes | None:
    """Page 0 when it holds MariaDB crypt data (the magic at the engine's offset), else None."""
    if not flags.valid or w.fil0.page_type != FIL_PAGE_TYPE_FSP_HDR or flags.encryption:
        return None
    off = crypt_data_offset(flags.logical_page_size, physical)
    if w.f.pread_nomap(off, len(CRYPT_MAGIC)) != CRYPT_MAGIC:
        return None
    return w.f.pread_nomap(0, min(w.f.size, physical))


def _decrypt(w: _Walk, flags: FspFlags, physical: int, n: int, in_hole: np.ndarray, path: str, errors,
             keys, page0: bytes) -> None:
    """MariaDB crypt data on page 0 and each page's key version (encryption.py); with
    ``keys``, the encrypted pages decrypted in batches, their header blocks written
    over the stored ones (so every later step reads them as plain pages)."""
    from .encryption import read_encryption
    space_id = w.fsp.space_id if w.fsp else w.fil0.space_id
    w.crypt = read_encryption(path, w.pages, w.heads, page0, n, physical, flags.logical_page_size, flags.full_crc32,
                              flags.zip_size, space_id, flags.compression_algorithm if flags.page_compressed else None,
                              in_hole, keys=keys, check=w.check,
                              rows_of=lambda sel: w.rows(sel, decrypted=False))
    w.plain = w.crypt.plain
    errors.extend(w.crypt.errors)


def _flavor(flags: FspFlags, types_present: set) -> str:
    """Which engine's page type names apply: MariaDB's or MySQL's."""
    if flags.format in ("full_crc32", "mariadb") or types_present & {FIL_PAGE_PAGE_COMPRESSED, FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED}:
        return "mariadb"
    if flags.sdi or FIL_PAGE_SDI in types_present or types_present & (set(range(14, 18)) | set(range(19, 30))):
        return "mysql"
    if FIL_PAGE_TYPE_INSTANT in types_present:
        return "mariadb"
    return "mysql"


def _new_page_map(w: _Walk, path: str, flags: FspFlags, physical: int, n: int, trailing: int,
                  in_hole: np.ndarray, errors) -> PageMap:
    """The per-page fields as columns, all-zero headers, the flavour: the PageMap the
    later steps complete."""
    w.check()
    col = w.col
    ptype = col("type", np.uint16)
    page_no = col("page_no", np.uint32)
    space_id = col("space_id", np.uint32)
    lsn = col("lsn", np.uint64)
    w.seg_top_off = col("seg_top_offset", np.uint16)
    w.pno = np.arange(n, dtype=np.uint32)
    # all-zero FIL header: candidates by type first, the other fields on those only
    zc = (ptype == 0).nonzero()[0]
    if len(zc):
        zc = zc[~in_hole[zc]]             # pages in holes are zero already: the others only
        zc = zc[(lsn[zc] == 0) & (page_no[zc] == 0) & (w.hdr["checksum"][zc] == 0) & (space_id[zc] == 0) & (zc != 0)]
    zero = in_hole.copy()
    zero[zc] = True
    # page types come in runs: the first of each run is enough to know which occur
    w.types_present = set(ptype[np.concatenate(([True], ptype[1:] != ptype[:-1]))].tolist())
    pm = PageMap(path=path, n_pages=n, physical=physical, logical=flags.logical_page_size,
                 flavor=_flavor(flags, w.types_present), fsp=w.fsp, flags=flags, trailing_bytes=trailing,
                 page_no=page_no, space_id=space_id, prev=col("prev", np.uint32), next=col("next", np.uint32),
                 lsn=lsn, type=ptype, kind=ptype.copy(), level=col("level", np.uint16),
                 n_recs=col("n_recs", np.uint16), index_id=col("index_id", np.uint64),
                 n_heap=col("n_heap", np.uint16), heap_top=col("heap_top", np.uint16),
                 garbage=col("garbage", np.uint16), stored=np.full(n, physical, dtype=np.uint32),
                 payload_len=np.zeros(n, dtype=np.uint32), compressed=np.zeros(n, dtype=bool),
                 encrypted=np.zeros(n, dtype=bool), corrupt=np.zeros(n, dtype=bool), zero=zero,
                 checksum_ok=np.ones(n, bool))
    pm.errors = errors
    pm.in_hole = in_hole
    pm.original_type = ptype.copy()
    return pm


def _doublewrite(pm: PageMap, w: _Walk) -> None:
    """The doublewrite buffer of the system tablespace (trx0sys.h): copies of other
    pages, so their page numbers and space ids legitimately differ; never index pages.
    Its segment's inode (TRX_SYS_DOUBLEWRITE_FSEG) is kept to find the fragment pages
    buf_dblwr_t::create allocates before the two blocks and never writes."""
    n, physical = pm.n_pages, pm.physical
    dblwr = np.zeros(n, dtype=bool)
    if w.fil0.space_id == 0 and n > 5:
        trx = w.raw(5)
        o = physical - 200                                # TRX_SYS_DOUBLEWRITE
        if _be(trx, o + 10, 4) == 536853855:              # TRX_SYS_DOUBLEWRITE_MAGIC_N
            ext0 = extent_size_pages(pm.logical)          # TRX_SYS_DOUBLEWRITE_BLOCK_SIZE
            blocks = []
            for b in (_be(trx, o + 14, 4), _be(trx, o + 18, 4)):
                if 0 < b < n:
                    dblwr[b:b + ext0] = True
                    blocks.append((b, min(ext0, n - b)))
            # TRX_SYS_DOUBLEWRITE_FSEG: space, page, byte offset of the segment inode
            w.dblwr_fseg = (_be(trx, o + 4, 4), _be(trx, o + 8, 2))
            w.dblwr_blocks = blocks
    pm.doublewrite = dblwr


def _check_page_numbers(pm: PageMap, w: _Walk) -> None:
    """Pages whose header names another page number: misplaced, torn or corrupt."""
    page_no = pm.page_no
    misplaced = (page_no != w.pno).nonzero()[0]
    if len(misplaced):
        misplaced = misplaced[~pm.zero[misplaced] & ~pm.doublewrite[misplaced]]
    for i in misplaced[:MAX_ERRORS_PER_KIND]:
        pm.errors.append((f"page {int(i)}: header says page number {int(page_no[i])} (misplaced, torn or corrupt page)",
                          int(i) * pm.physical))
    if len(misplaced) > MAX_ERRORS_PER_KIND:
        pm.errors.append((f"{len(misplaced)} pages carry a wrong page number in all", None))
    pm.corrupt[misplaced] = True


def _encryption(pm: PageMap, w: _Walk) -> None:
    """Encrypted pages: MariaDB's (crypt data on page 0, key version in each page; those
    not decrypted), MySQL's FIL_PAGE_ENCRYPTED(_RTREE) types, which keep the original type at 28."""
    physical, ptype, encrypted = pm.physical, pm.type, pm.encrypted
    flags = pm.flags
    if w.crypt is not None and w.crypt.candidates is not None:
        pm.crypt = w.crypt
        encrypted |= w.crypt.candidates & ~w.crypt.decrypted
        if w.crypt.candidates.any() or (w.crypt.crypt is not None and w.crypt.crypt.encrypted):
            pm.encrypted_tablespace = True
    if flags.encryption:
        pm.encrypted_tablespace = True
    if pm.flavor == "mysql" and w.types_present & {FIL_PAGE_ENCRYPTED, FIL_PAGE_ENCRYPTED_RTREE,
                                                   FIL_PAGE_COMPRESSED_AND_ENCRYPTED}:
        enc_idx = np.nonzero(_any_of(ptype, (FIL_PAGE_ENCRYPTED, FIL_PAGE_ENCRYPTED_RTREE,
                                             FIL_PAGE_COMPRESSED_AND_ENCRYPTED)))[0]
        if len(enc_idx):
            pages = w.pages
            encrypted[enc_idx] = True
            pm.encrypted_tablespace = True
            # the type before encryption (Encryption::encrypt keeps it at
            # FIL_PAGE_ORIGINAL_TYPE_V1); the page itself is counted as encrypted
            orig = (pages[enc_idx, FIL_PAGE_ORIGINAL_TYPE_V1].astype(np.uint16) << 8) | pages[enc_idx, FIL_PAGE_ORIGINAL_TYPE_V1 + 1]
            pm.original_type[enc_idx] = orig
            ce = enc_idx[ptype[enc_idx] == FIL_PAGE_COMPRESSED_AND_ENCRYPTED]
            if len(ce):
                from .pagecomp import parse_mysql_comp_meta
            for i in ce:
                meta = parse_mysql_comp_meta(bytes(pages[i, :38]), 0)
                pm.compressed[i] = True
                pm.payload_len[i] = meta.compressed_size
                pm.stored[i] = min(38 + meta.compressed_size, physical)
            pm.compression_algorithm = pm.compression_algorithm or ("zlib" if len(ce) else None)


def _page_compression(pm: PageMap, w: _Walk, exact_payload: bool, verify_checksums: bool = True) -> None:
    """Page-compressed pages: stored and payload bytes from their headers, and their
    headers decoded (``w.decoded``): MariaDB full_crc32 and legacy layouts, MySQL
    FIL_PAGE_COMPRESSED."""
    if pm.flags.full_crc32:
        _full_crc32_compression(pm, w, exact_payload)
    _legacy_compression(pm, w)
    _mysql_compression(pm, w, whole=verify_checksums)
    w.check()


def _full_crc32_compression(pm: PageMap, w: _Walk, exact_payload: bool) -> None:
    """MariaDB full_crc32 page_compressed pages (fil0pagecompress.cc): the marker bit
    in the page type, the algorithm in the FSP flags."""
    physical, ptype, kind, flags = pm.physical, pm.type, pm.kind, pm.flags
    compressed, corrupt, encrypted = pm.compressed, pm.corrupt, pm.encrypted
    counts, decoded = w.counts, w.decoded
    algo = flags.compression_algorithm
    cand = np.nonzero((ptype & 0x8000) != 0)[0] if any(t & 0x8000 for t in w.types_present) \
        else np.zeros(0, np.int64)
    if len(cand) and not flags.page_compressed:
        for i in cand[:MAX_ERRORS_PER_KIND]:
            pm.errors.append((f"page {int(i)}: page_compressed marker in page type 0x{int(ptype[i]):04x} "
                              f"but the tablespace is not page_compressed", int(i) * physical + 24))
        corrupt[cand] = True
        cand = cand[:0]
    pm.compression_algorithm = algo if flags.page_compressed else None
    if not len(cand):
        return
    from .pagecomp import (FCRC32_LEN_BYTE_ALGOS, FIL_PAGE_COMP_ALGO, Fcrc32CompHeader, PageDecodeError,
                           decode_fcrc32_page, parse_fcrc32_comp_header)
    plain, skip = w.plain, w.skip_decode
    compressed[cand] = True
    if skip is not None:
        # pages left undecoded (owners_only): their stored size from the page type, their payload
        # length from the length byte where the algorithm writes one (parse_fcrc32_comp_header),
        # in numpy and without reading their stored bytes; a page whose fields are out of range
        # goes the way of the others (its error named there)
        s = cand[skip[cand] & ~encrypted[cand]]
        if plain and len(s):
            s = s[~np.isin(s, np.fromiter(plain, np.int64, len(plain)))]
        t = ptype[s].astype(np.int64)
        stored = (t & 0xFF) << 8
        ok = ((t & 0x7F00) == 0) & (stored > 0) & (stored < physical)
        s, stored = s[ok], stored[ok]
        payload = None
        if algo in FCRC32_LEN_BYTE_ALGOS and len(s):
            lsb = w.stored_bytes_at(s, stored - 5).astype(np.int64)
            payload = stored - 5 + np.where(lsb != 0, lsb - 0x100, 0) - FIL_PAGE_COMP_ALGO
            ok = payload > 0
            s, stored, payload = s[ok], stored[ok], payload[ok]
        pm.stored[s] = stored
        if payload is not None:
            pm.payload_len[s] = payload
        kind[s] = KIND_PAGE_COMPRESSED_UNDECODED
        if len(s):
            rest = np.ones(len(pm.kind), dtype=bool)
            rest[s] = False
            cand = cand[rest[cand]]
    # slow pure-Python codecs (and zlib/lzma when exact payload lengths are
    # not asked for): the headers first, the whole page only for INODE pages
    # lzma: .xz streams end in their footer magic, so the zero fill gives the exact length
    # bzip2: a block is decoded whole before its first byte comes out, but the inverse
    # transform stops at the headers; its exact length is in its tail (bzip2_stream_end)
    fast = algo in _SLOW or algo in ("lzma", "bzip2") or (not exact_payload and algo == "zlib")
    threaded = algo in _THREADED and (not fast or algo == "bzip2")

    def one(item: tuple[bytes, Fcrc32CompHeader]):
        raw, h = item
        try:
            d = decode_fcrc32_page(raw, physical, algo, prefix=_HEADER_PREFIX if fast else None, hdr=h)
            if d.original_type == FIL_PAGE_INODE:
                if len(d.page) < physical:
                    d = decode_fcrc32_page(raw, physical, algo, hdr=h)
            elif len(d.page) > _HEADER_PREFIX:
                d.page = d.page[:_HEADER_PREFIX]     # only the headers are read from here on
            return d
        except PageDecodeError as e:
            return e

    # a chunk of pages at a time: their stored bytes are held only while they are decoded
    chunk = max(_THREAD_BATCH, _PC_CHUNK_BYTES // physical)
    for c0 in range(0, len(cand), chunk):
        # the stored length is in the page type (parse_fcrc32_comp_header): only those bytes
        # are read, not the punched rest of the page, the chunk's in one call; a decrypted
        # page or a length out of range as before (the page whole)
        pages, types = cand[c0:c0 + chunk].tolist(), ptype[cand[c0:c0 + chunk]].tolist()
        sizes = [(t & 0xFF) << 8 for t in types]
        short = [i not in plain and not t & 0x7F00 and 0 < size < physical
                 for i, t, size in zip(pages, types, sizes)]
        stored = iter(w.stored_prefixes([i for i, s_ in zip(pages, short) if s_],
                                        [n for n, s_ in zip(sizes, short) if s_]))
        todo: list[tuple[int, bytes, Fcrc32CompHeader]] = []
        for i, s_ in zip(pages, short):
            raw = next(stored) if s_ else w.raw(i)
            try:
                h = parse_fcrc32_comp_header(raw, 0, physical, algo)
            except PageDecodeError as e:
                corrupt[i] = True
                kind[i] = KIND_PAGE_COMPRESSED_UNDECODED
                _add(pm, counts, "pc", f"page {i}: {e}", i * physical + 24)
                continue
            pm.stored[i] = h.stored_bytes
            if h.payload_len is not None:
                pm.payload_len[i] = h.payload_len
            if encrypted[i] or (skip is not None and skip[i]):
                kind[i] = KIND_PAGE_COMPRESSED_UNDECODED
                continue
            todo.append((i, raw[:h.stored_bytes], h))
        for (i, _, _), d in zip(todo, _decode_all(one, [(r, h) for _, r, h in todo], threaded, w.check)):
            if isinstance(d, PageDecodeError):
                kind[i] = KIND_PAGE_COMPRESSED_UNDECODED
                if str(d).endswith("not decoded"):
                    pm.undecoded[algo] = pm.undecoded.get(algo, 0) + 1
                else:
                    corrupt[i] = True
                    _add(pm, counts, "pc", f"page {i}: page_compressed ({algo}) page does not decode: {d}",
                         i * physical)
                continue
            pm.payload_len[i] = d.payload_len
            decoded[i] = d.page
        w.check()


def _legacy_compression(pm: PageMap, w: _Walk) -> None:
    """MariaDB page_compressed pages of the legacy layout (FIL_PAGE_PAGE_COMPRESSED
    types, algorithm in each page)."""
    if not (pm.flavor == "mariadb" and not pm.flags.full_crc32 and
            w.types_present & {FIL_PAGE_PAGE_COMPRESSED, FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED}):
        return
    from .pagecomp import LegacyCompHeader, PageDecodeError, decode_legacy_page, parse_legacy_comp_header
    physical, kind = pm.physical, pm.kind
    compressed, corrupt = pm.compressed, pm.corrupt
    counts, decoded = w.counts, w.decoded
    legacy = np.nonzero(_any_of(pm.type, (FIL_PAGE_PAGE_COMPRESSED, FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED)))[0]
    compressed[legacy] = True
    whole: list[tuple[int, bytes]] = []
    plain, heads, skip = w.plain, w.heads, w.skip_decode
    first: list[tuple[int, str]] = []          # (page, algorithm) of the first page whose header reads
    if skip is not None and heads is not None and len(legacy):
        legacy = _legacy_left_undecoded(pm, w, legacy, first)
    loop_first: tuple[int, str] | None = None
    chunk = max(_THREAD_BATCH, _PC_CHUNK_BYTES // physical)
    for c0 in range(0, len(legacy), chunk):
        # the header from the header block already read (a decrypted page: the page whole,
        # as before); then only each page's header and payload, the chunk's in one call
        got: list[tuple[int, LegacyCompHeader, bytes | None]] = []
        for i in legacy[c0:c0 + chunk].tolist():
            raw = w.raw(i) if i in plain or heads is None else None
            try:
                h = parse_legacy_comp_header(raw if raw is not None else bytes(heads[i]), 0, physical)
            except PageDecodeError as e:
                corrupt[i] = True
                kind[i] = KIND_PAGE_COMPRESSED_UNDECODED
                _add(pm, counts, "pc", f"page {i}: {e}", i * physical + 38)
                continue
            got.append((i, h, raw))
        # pages left undecoded (owners_only): the header is all they need, their stored bytes are not read
        left = [skip is not None and bool(skip[i]) and not h.encrypted for i, h, _ in got]
        short = [(i, h.header_len + h.payload_len) for (i, h, raw), lf in zip(got, left) if raw is None and not lf]
        stored = iter(w.stored_prefixes([i for i, _ in short], [n for _, n in short]))
        for (i, h, raw), lf in zip(got, left):
            if raw is None and not lf:
                raw = next(stored)
            if loop_first is None:
                loop_first = (i, h.algorithm)
            pm.stored[i] = h.header_len + h.payload_len
            pm.payload_len[i] = h.payload_len
            if h.encrypted and (w.crypt is None or w.crypt.decrypted is None or not w.crypt.decrypted[i]):
                pm.encrypted[i] = True
                kind[i] = KIND_PAGE_COMPRESSED_UNDECODED
                continue
            if w.skip_decode is not None and w.skip_decode[i] and not h.encrypted:
                kind[i] = KIND_PAGE_COMPRESSED_UNDECODED
                continue
            try:
                if h.encrypted:                       # decrypted (w.raw): decoded whole for its own checksum
                    d = decode_legacy_page(raw, physical, decrypted=True, hdr=h)
                    whole.append((i, d.page))
                else:
                    d = decode_legacy_page(raw, physical, prefix=_HEADER_PREFIX, hdr=h)
                    if len(d.page) < physical and d.original_type == FIL_PAGE_INODE:
                        d = decode_legacy_page(raw, physical, hdr=h)
            except PageDecodeError as e:
                kind[i] = KIND_PAGE_COMPRESSED_UNDECODED
                if str(e).endswith("not decoded"):
                    pm.undecoded[h.algorithm] = pm.undecoded.get(h.algorithm, 0) + 1
                else:
                    corrupt[i] = True
                    _add(pm, counts, "pc", f"page {i}: page_compressed ({h.algorithm}) page does not decode: {e}",
                         i * physical)
                continue
            decoded[i] = d.page if d.original_type == FIL_PAGE_INODE else d.page[:_HEADER_PREFIX]
            if len(whole) >= 1024:
                _check_decoded_checksums(pm, w, whole)
        w.check()
    if loop_first is not None:
        first.append(loop_first)
    if first:
        pm.compression_algorithm = pm.compression_algorithm or min(first)[1]
    _check_decoded_checksums(pm, w, whole)


def _legacy_left_undecoded(pm: PageMap, w: _Walk, legacy: np.ndarray, first: list) -> np.ndarray:
    """The legacy-layout pages left undecoded (owners_only) whose header block reads as
    parse_legacy_comp_header reads it (FIL_PAGE_PAGE_COMPRESSED, the algorithm's high bytes
    zero, a payload length in range): stored and payload bytes in numpy, nothing else read.
    Returns the other pages, for the page-by-page way; ``first`` gets (page, algorithm) of
    the first of them."""
    from .pagecomp import FIL_PAGE_COMP_ALGO, FIL_PAGE_COMP_METADATA_LEN, FIL_PAGE_COMP_SIZE
    s = legacy[w.skip_decode[legacy] & (pm.type[legacy] == FIL_PAGE_PAGE_COMPRESSED)]
    if w.plain and len(s):
        s = s[~np.isin(s, np.fromiter(w.plain, np.int64, len(w.plain)))]
    if not len(s):
        return legacy
    h = w.heads[s]
    algo_at, size_at = FIL_PAGE_COMP_ALGO + 6, FIL_PAGE_DATA + FIL_PAGE_COMP_SIZE
    algo = (h[:, algo_at].astype(np.int64) << 8) | h[:, algo_at + 1]
    size = (h[:, size_at].astype(np.int64) << 8) | h[:, size_at + 1]
    header_len = FIL_PAGE_DATA + FIL_PAGE_COMP_METADATA_LEN
    ok = ~h[:, FIL_PAGE_COMP_ALGO:algo_at].any(axis=1) & (size > 0) & (size <= pm.physical - header_len)
    s, algo, size = s[ok], algo[ok], size[ok]
    if not len(s):
        return legacy
    pm.stored[s] = header_len + size
    pm.payload_len[s] = size
    pm.kind[s] = KIND_PAGE_COMPRESSED_UNDECODED
    a = int(algo[0])
    first.append((int(s[0]), MARIADB_ALGORITHMS.get(a, f"algorithm {a}")))
    rest = np.ones(pm.n_pages, dtype=bool)
    rest[s] = False
    return legacy[rest[legacy]]


def _check_decoded_checksums(pm: PageMap, w: _Walk, whole: list[tuple[int, bytes]]) -> None:
    """The checksum of decrypted and decompressed FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED
    pages, as buf0buf.cc buf_page_check_corrupt checks the page once
    buf_page_decrypt_after_read has decrypted and decompressed it (buf_page_is_corrupted
    on the original page, whose checksum was computed before compression); the
    result is used by the checksum step (``w.decoded_ok``)."""
    if not whole:
        return
    if w.decoded_ok is None:
        w.decoded_ok = {}
    sel = np.array([i for i, _ in whole], dtype=np.int64)
    rows = np.frombuffer(b"".join(p for _, p in whole), dtype=np.uint8).reshape(len(whole), -1)
    f0 = ((rows[:, 0].astype(np.uint32) << 24) | (rows[:, 1].astype(np.uint32) << 16)
          | (rows[:, 2].astype(np.uint32) << 8) | rows[:, 3])
    lsn = rows[:, 16:24].copy().view(">u8").reshape(-1).astype(np.uint64)
    ok = np.zeros(len(sel), dtype=bool)
    _check_legacy_rows(rows, f0, lsn, ok, np.arange(len(sel)), {})
    w.decoded_ok.update(zip(sel.tolist(), ok.tolist()))
    whole.clear()


def _mysql_compression(pm: PageMap, w: _Walk, whole: bool = True) -> None:
    """MySQL transparent page compression (FIL_PAGE_COMPRESSED, os0file.cc).  Without
    ``whole`` (no checksum verified: it belongs to the page before compression) a page
    is decoded only to its headers where the codec can stop early (zlib) and only they
    are kept, INODE pages whole."""
    if not (pm.flavor == "mysql" and FIL_PAGE_COMPRESSED in w.types_present):
        return
    from .pagecomp import PageDecodeError, decode_mysql_page, parse_mysql_comp_meta
    physical = pm.physical
    for i in np.nonzero(pm.type == FIL_PAGE_COMPRESSED)[0]:
        i = int(i)
        pm.compressed[i] = True
        raw = w.raw(i)
        meta = parse_mysql_comp_meta(raw, 0)
        pm.kind[i] = meta.original_type
        pm.original_type[i] = meta.original_type
        pm.payload_len[i] = meta.compressed_size
        pm.stored[i] = min(38 + meta.compressed_size, physical)
        pm.compression_algorithm = pm.compression_algorithm or meta.algorithm
        full = whole or meta.original_type == FIL_PAGE_INODE
        try:
            d = decode_mysql_page(raw, physical, None if full else _HEADER_PREFIX)
        except PageDecodeError as e:
            pm.corrupt[i] = True
            _add(pm, w.counts, "pc", f"page {i}: FIL_PAGE_COMPRESSED ({meta.algorithm}) page does not decode: {e}",
                 i * physical)
            continue
        w.decoded[i] = d.page if full else d.page[:_HEADER_PREFIX]


def _apply_decoded_headers(pm: PageMap, w: _Walk) -> None:
    """Header fields of decoded pages replace the compressed ones; which compressed
    pages stay undecided."""
    decoded = w.decoded
    if decoded:
        idx = np.fromiter(decoded.keys(), dtype=np.int64, count=len(decoded))
        hp = _HEADER_PREFIX                      # (values in the keys' order)
        heads = b"".join(v if len(v) == hp else v[:hp].ljust(hp, b"\0") for v in decoded.values())
        dh = np.frombuffer(heads, dtype=header_dtype(_HEADER_PREFIX, with_trailer=False), count=len(idx))
        pm.kind[idx] = dh["type"]
        pm.original_type[idx] = dh["type"]
        for name, arr in (("level", pm.level), ("n_recs", pm.n_recs), ("index_id", pm.index_id),
                          ("n_heap", pm.n_heap), ("heap_top", pm.heap_top), ("garbage", pm.garbage),
                          ("prev", pm.prev), ("next", pm.next), ("seg_top_offset", w.seg_top_off),
                          ("space_id", pm.space_id)):
            arr[idx] = dh[name]
        for name, dtype in (("seg_top_page", np.uint32), ("seg_leaf_page", np.uint32), ("seg_leaf_offset", np.uint16)):
            w.seg_cols[name] = w.col(name, dtype)
            w.seg_cols[name][idx] = dh[name]
        w.decoded_idx = idx
    n = pm.n_pages
    w.undecided = pm.compressed & (pm.kind == KIND_PAGE_COMPRESSED_UNDECODED) if pm.compressed.any() \
        else np.zeros(n, dtype=bool)


def _check_space_ids(pm: PageMap, w: _Walk) -> None:
    """Pages whose header names another space than page 0 (each test on the few pages
    the first one leaves)."""
    n, space_id, compressed = pm.n_pages, pm.space_id, pm.compressed
    decoded_mask = np.zeros(n, dtype=bool)
    if w.decoded_idx is not None:
        decoded_mask[w.decoded_idx] = True
    space0 = w.fil0.space_id
    wrong_space = (space_id != space0).nonzero()[0]
    s = wrong_space
    if len(s):
        wrong_space = s[~pm.zero[s] & (pm.page_no[s] == w.pno[s]) & ~pm.doublewrite[s] &
                        ~(compressed[s] & ~decoded_mask[s])]
        if pm.flags.full_crc32 and len(wrong_space):   # FIL_PAGE_SPACE_ID lies in the ciphertext
            wrong_space = wrong_space[~pm.encrypted[wrong_space]]
    for i in wrong_space[:MAX_ERRORS_PER_KIND]:
        pm.errors.append((f"page {int(i)}: space id {int(space_id[i])} differs from page 0's {space0}",
                          int(i) * pm.physical + 34))
    pm.corrupt[wrong_space] = True


def _check_unknown_types(pm: PageMap, w: _Walk) -> None:
    """Page types the flavour does not know (methods, not np.* functions: no Python
    wrappers; take: uint16 fancy indexing is 3x slower)."""
    kind = pm.kind
    unknown = _unknown_types(pm.flavor).take(kind).nonzero()[0]
    if len(unknown):
        unknown = unknown[~w.undecided[unknown] & ~pm.corrupt[unknown]]
    if len(unknown):
        for t in distinct(kind[unknown])[:MAX_ERRORS_PER_KIND]:
            where = unknown[kind[unknown] == t]
            pm.errors.append((f"page {int(where[0])}: unknown page type {int(t)} "
                              f"({len(where)} page(s), first {int(where[0])})", int(where[0]) * pm.physical + 24))


def _extents(pm: PageMap, w: _Walk) -> None:
    """The extent map from page 0 and every XDES page: free pages, segment of each
    extent (extents of a missing descriptor page: free unknown)."""
    n, physical, ptype, flags, fsp = pm.n_pages, pm.physical, pm.type, pm.flags, w.fsp
    w.free_limit = free_limit = fsp.free_limit if (fsp and flags.valid and w.fil0.page_type == FIL_PAGE_TYPE_FSP_HDR) \
        else n
    desc_ok = np.zeros(n, dtype=bool)
    desc_pages = np.arange(0, n, physical)
    desc_ok[desc_pages] = _any_of(ptype[desc_pages], (FIL_PAGE_TYPE_FSP_HDR, FIL_PAGE_TYPE_XDES)) & \
        ~pm.encrypted[desc_pages]
    for d in desc_pages[~desc_ok[desc_pages]]:
        if d < free_limit and flags.valid:
            pm.errors.append((f"page {int(d)}: expected an extent descriptor page, found type {int(ptype[d])}; "
                              f"extents {int(d)}..{int(d) + physical - 1} have no free/owner facts", int(d) * physical))
    direct = w.mapped is not None and w.partial is None and not w.plain
    em = read_extent_map(w.mapped if direct else _RowsAroundHoles(w), n, physical, w.ext, min(free_limit, n), desc_ok)
    pm.extent_map = em
    free = em.page_free.copy()
    if not desc_ok[desc_pages].all():
        free[np.repeat(~desc_ok[desc_pages], physical)[:n]] = False
    pm.free = free
    pm.seg_id = em.page_seg.copy()


def _segments(pm: PageMap, w: _Walk) -> None:
    """Segments from the INODE pages (fsp0fsp.h): their fragment pages' segment ids."""
    n, kind, free, seg_of_page = pm.n_pages, pm.kind, pm.free, pm.seg_id
    inode_pages = (kind == FIL_PAGE_INODE).nonzero()[0]
    inode_pages = inode_pages[~free[inode_pages] & ~pm.encrypted[inode_pages] & ~pm.corrupt[inode_pages]]
    for i in inode_pages:
        i = int(i)
        raw = w.decoded.get(i)
        if raw is None:
            if pm.compressed[i]:
                continue
            raw = w.raw(i)
        for seg in parse_inode_page(raw, len(raw), w.ext, i):
            if not seg.magic_ok:
                _add(pm, w.counts, "inode", f"page {i}: segment inode at byte {seg.inode_offset} has a bad magic number",
                     i * pm.physical + seg.inode_offset)
                continue
            pm.segments[seg.seg_id] = seg
            w.by_place[(i, seg.inode_offset)] = seg
            if seg.frag_pages:
                fp = np.asarray(seg.frag_pages, dtype=np.int64)
                fp = fp[fp < n]
                seg_of_page[fp] = seg.seg_id
                w.frag_at.append(fp)


def _owners(pm: PageMap, w: _Walk) -> None:
    """B-tree pages, each index's root (the page whose PAGE_BTR_SEG_TOP names its
    segments' inodes, else its highest-level page), and the index owning each page."""
    n, kind, free, level, index_id, seg_of_page = pm.n_pages, pm.kind, pm.free, pm.level, pm.index_id, pm.seg_id
    is_index = pm.is_index_kind(kind)
    unusable = pm.encrypted | pm.corrupt | w.undecided | pm.doublewrite
    if unusable.any():
        is_index &= ~unusable
    live_index = is_index & ~free
    w.is_index, w.live_index = is_index, live_index
    roots: dict[int, int] = {}
    seg_index: dict[int, int] = {}
    leaf_segments: dict[int, int] = {}
    by_place = w.by_place
    # root candidates: pages whose PAGE_BTR_SEG_TOP names an inode (zero elsewhere)
    seg_top_off = w.seg_top_off
    cand = (seg_top_off != 0).nonzero()[0]
    top_page = w.seg_field("seg_top_page", np.uint32, cand)
    keep = live_index[cand] & (top_page != 0) & (top_page < n)
    cand, top_page = cand[keep], top_page[keep]
    for i, tp, to, lp, lo in zip(cand.tolist(), top_page.tolist(), seg_top_off[cand].tolist(),
                                 w.seg_field("seg_leaf_page", np.uint32, cand).tolist(),
                                 w.seg_field("seg_leaf_offset", np.uint16, cand).tolist()):
        top = by_place.get((tp, to))
        leaf = by_place.get((lp, lo))
        if top is None or leaf is None:
            continue
        if i not in top.frag_pages and seg_of_page[i] != top.seg_id:
            continue
        iid = int(index_id[i])
        if iid in roots and level[roots[iid]] >= level[i]:
            continue
        roots[iid] = i
        seg_index[top.seg_id] = iid
        seg_index[leaf.seg_id] = iid
        leaf_segments[iid] = leaf.seg_id
    # indexes without a verified root: the highest-level live page stands in
    vals = index_id[live_index]
    if len(vals) > 1:       # runs of one index first: unique() then sorts a few values, not every page
        vals = vals[np.concatenate([[True], vals[1:] != vals[:-1]])]
    ids = sorted(set(vals.tolist())) if len(vals) < 4096 else distinct(vals).tolist()
    for iid in ids:
        iid = int(iid)
        if iid not in roots:
            sel = np.nonzero(live_index & (index_id == iid))[0]
            roots[iid] = int(sel[np.argmax(level[sel])])
    pm.roots = roots
    pm.seg_index = seg_index
    pm.leaf_segments = frozenset(leaf_segments.values())
    if seg_index:
        segs = np.fromiter(seg_index.keys(), dtype=np.uint64)
        idxs = np.fromiter(seg_index.values(), dtype=np.uint64)
        order = np.argsort(segs)
        segs, idxs = segs[order], idxs[order]

        def index_of(seg_ids):
            """(known, index id) of each segment id."""
            pos = np.minimum(np.searchsorted(segs, seg_ids), len(segs) - 1)
            known = (segs[pos] == seg_ids) & (seg_ids != 0)
            return known, np.where(known, idxs[pos], np.uint64(0))
        # segment ids are per extent (page_seg repeats them) except fragment pages:
        # look up one id per extent, spread it, then the fragment pages
        em = pm.extent_map
        ext_ids = em.page_seg[::em.extent_pages]
        fp = np.concatenate(w.frag_at) if w.frag_at else np.zeros(0, np.int64)
        known, owner_of = index_of(np.concatenate((ext_ids, seg_of_page[fp])))
        ne = len(ext_ids)
        hit = known[:ne].repeat(em.extent_pages)[:n]
        owner = owner_of[:ne].repeat(em.extent_pages)[:n]
        hit[fp], owner[fp] = known[ne:], owner_of[ne:]
        hit &= ~free
        np.multiply(owner, hit, out=owner)
        owned = hit | live_index
    else:
        owner = np.zeros(n, dtype=np.uint64)
        owned = live_index.copy()
    np.copyto(owner, index_id, where=live_index)
    pm.owner_index = owner
    pm.owned = owned


def _fill(pm: PageMap, w: _Walk) -> None:
    """page_get_data_size and fill_ratio's figure (data size / free space of an empty
    page) of the B-tree pages."""
    is_index = w.is_index
    compact = pm.n_heap >= PAGE_HEAP_NO_COMPACT
    ds = data_size(pm.heap_top, pm.n_heap, pm.garbage, compact)
    pm.data_size = ds * is_index
    fill = fill_ratio(pm.heap_top, pm.n_heap, pm.garbage, pm.logical, ds=ds, compact=compact)
    fill[~is_index] = np.nan
    pm.fill = fill


def _zero_in_use(pm: PageMap, w: _Walk) -> None:
    """Zeroed pages that the extent map says are in use (the doublewrite segment's
    fragment pages excepted: buf_dblwr_t::create allocates FSP_EXTENT_SIZE / 2 of them
    so that its blocks start on an extent, and never writes them)."""
    reserved = _doublewrite_area(pm, w)
    zero_used = pm.zero.nonzero()[0]
    if len(zero_used):
        zero_used = zero_used[~pm.free[zero_used] & ~pm.doublewrite[zero_used] & (zero_used < w.free_limit)]
        if len(reserved) and len(zero_used):
            zero_used = zero_used[~np.isin(zero_used, reserved)]
    pm.zero_in_use = zero_used


def _doublewrite_area(pm: PageMap, w: _Walk) -> np.ndarray:
    """The doublewrite area of ibdata1 (buf0dblwr.cc, trx0sys.h): its two blocks, the
    fragment pages of its segment, and which page of which space each written slot is a
    copy of (the copy's FIL header; the space id of an encrypted full_crc32 copy lies in
    its ciphertext: null).  Returns the fragment pages."""
    if not w.dblwr_blocks:
        return np.zeros(0, dtype=np.int64)
    seg = w.by_place.get(w.dblwr_fseg) if w.dblwr_fseg else None
    reserved = np.asarray(sorted(seg.frag_pages) if seg is not None else [], dtype=np.int64)
    reserved = reserved[reserved < pm.n_pages]
    names = page_type_names(pm.flavor)
    slots = np.nonzero(pm.doublewrite & ~pm.zero)[0]
    kv = w.col("checksum", np.uint32)[slots] if pm.flags.full_crc32 else np.zeros(len(slots), np.uint32)
    copies = []
    for i, k in zip(slots.tolist(), kv.tolist()):
        t = int(pm.type[i])
        copies.append({"slot_page": i, "space_id": None if k else int(pm.space_id[i]),
                       "page_no": int(pm.page_no[i]), "type": names.get(t, f"UNKNOWN_PAGE_TYPE_{t}")})
    pm.doublewrite_area = {
        "blocks": [[b, k] for b, k in w.dblwr_blocks],
        "segment_id": seg.seg_id if seg is not None else None,
        "reserved_pages": reserved.tolist(),
        "reserved_zero_pages": int(pm.zero[reserved].sum()) if len(reserved) else 0,
        "slots": int(pm.doublewrite.sum()), "written_slots": len(copies), "copies": copies,
    }
    return reserved


def verify(pm: PageMap, rows_of: Callable[[np.ndarray], np.ndarray], hdr: np.ndarray,
           decoded: dict[int, bytes], check, decoded_ok: dict[int, bool] | None = None,
           prefixes_of: Callable[[list[int], list[int]], list[bytes]] | None = None) -> None:
    """Check every page's checksum with the algorithm its format uses (``rows_of(sel)``
    gives pages ``sel`` in full, read around holes; ``decoded_ok`` the checksums of
    decrypted and decompressed FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED pages;
    ``prefixes_of(pages, lengths)``, when given, the first bytes of pages as stored, which
    full_crc32 page_compressed pages are checked from: their stored bytes alone, not the
    whole page around its punched tail)."""
    from . import checksum as ck
    n, physical = pm.n_pages, pm.physical
    ok = np.ones(n, dtype=bool)
    algos: dict[str, int] = {}
    skip = pm.encrypted.copy()
    crypt_pages = pm.crypt.candidates if pm.crypt is not None and pm.crypt.candidates is not None else None
    if crypt_pages is not None:
        skip |= crypt_pages
    in_hole = pm.in_hole if pm.in_hole is not None else np.zeros(n, dtype=bool)
    header_zero = (pm.type == 0) & (pm.lsn == 0) & (pm.page_no == 0) & (field0_of(hdr, n, in_hole) == 0)
    zero_cand = np.nonzero((pm.zero | header_zero) & ~in_hole)[0]
    truly_zero = in_hole.copy()
    for start in range(0, len(zero_cand), 4096):
        for rows, _, at in _row_chunks(rows_of, zero_cand[start:start + 4096], in_hole, span=False):
            truly_zero[zero_cand[start:start + 4096][at]] = ~rows.any(axis=1)
    todo = ~skip & ~truly_zero
    field0 = field0_of(hdr, n, in_hole)
    batch = max(1, (64 << 20) // physical)

    if pm.flags.full_crc32:
        plain = np.nonzero(todo & ~pm.compressed)[0]
        for s in range(0, len(plain), batch):
            for rows, local, at in _row_chunks(rows_of, plain[s:s + batch], in_hole):
                sel = plain[s:s + batch][at]
                good = ck.full_crc32_ok(rows)[local]
                lsn_low = (pm.lsn[sel] & np.uint64(0xFFFFFFFF)).astype(np.uint32)
                tail = rows[local, -8:-4].astype(np.uint32)
                end_lsn = (tail[:, 0] << 24) | (tail[:, 1] << 16) | (tail[:, 2] << 8) | tail[:, 3]
                ok[sel] = good & (lsn_low == end_lsn)
            check()
        comp = np.nonzero(todo & pm.compressed & (pm.stored < physical))[0]
        if len(comp) and prefixes_of is None:
            ok[comp] = ck.full_crc32_ok(rows_of(comp), pm.stored[comp].astype(np.int64))
        elif len(comp):
            ok[comp] = _full_crc32_stored_ok(prefixes_of, comp, pm.stored[comp].astype(np.int64), physical, check)
        algos["full_crc32"] = int(todo.sum())
    elif pm.flags.zip_size:
        sel_all = np.nonzero(todo)[0]
        for s in range(0, len(sel_all), batch):
            for rows, _, at in _row_chunks(rows_of, sel_all[s:s + batch], in_hole, span=False):
                sel = sel_all[s:s + batch][at]
                f0 = field0[sel]
                crc = ck.zip_page_checksum_crc32(rows) == f0
                magic = f0 == BUF_NO_CHECKSUM_MAGIC
                good = crc | magic
                rest = np.nonzero(~good)[0]
                if len(rest):
                    ad = np.array(ck.zip_page_checksum_adler(rows[rest]), dtype=np.uint32) == f0[rest]
                    good[rest] = ad
                    algos["innodb"] = algos.get("innodb", 0) + int(ad.sum())
                algos["crc32"] = algos.get("crc32", 0) + int(crc.sum())
                algos["none"] = algos.get("none", 0) + int(magic.sum())
                ok[sel] = good
            check()
    else:
        sel_all = np.nonzero(todo & ~(pm.compressed & (pm.type != FIL_PAGE_COMPRESSED)))[0]
        mysql_comp = np.nonzero(todo & pm.compressed & (pm.type == FIL_PAGE_COMPRESSED))[0]
        for s in range(0, len(sel_all), batch):
            for rows, _, at in _row_chunks(rows_of, sel_all[s:s + batch], in_hole, span=False):
                sel = sel_all[s:s + batch][at]
                _check_legacy_rows(rows, field0[sel], pm.lsn[sel], ok, sel, algos)
            check()
        # MySQL type 14: the checksum belongs to the page before compression
        if len(mysql_comp):
            have = [int(i) for i in mysql_comp if int(i) in decoded]
            if have:
                rows = np.frombuffer(b"".join(decoded[i] for i in have), dtype=np.uint8).reshape(len(have), -1)
                sel = np.array(have)
                _check_legacy_rows(rows, field0[sel], pm.lsn[sel], ok, sel, algos)
        # MariaDB legacy page_compressed pages carry BUF_NO_CHECKSUM_MAGIC
        leg = np.nonzero(todo & pm.compressed & (pm.type != FIL_PAGE_COMPRESSED))[0]
        if len(leg):
            magic = field0[leg] == BUF_NO_CHECKSUM_MAGIC
            ok[leg] = magic
            algos["none"] = algos.get("none", 0) + int(magic.sum())
    if crypt_pages is not None and crypt_pages.any():
        _verify_encrypted(pm, rows_of, field0, np.nonzero(crypt_pages & ~in_hole)[0], ok, algos, check,
                          decoded_ok or {})
    pm.checksum_ok = ok
    pm.checksum_checked = True
    if algos:
        pm.checksum_algorithm = max(algos.items(), key=lambda kv: kv[1])[0]


def _verify_encrypted(pm: PageMap, rows_of: Callable[[np.ndarray], np.ndarray], field0: np.ndarray, sel_all: np.ndarray, ok: np.ndarray,
                      algos: dict[str, int], check, decoded_ok: dict[int, bool]) -> None:
    """Checksums of MariaDB encrypted pages as stored (buf_page_is_corrupted,
    fil_space_verify_crypt_checksum): full_crc32: the CRC-32C of the stored bytes,
    which covers the ciphertext, and no end-LSN check (it lies in the ciphertext);
    the older format: the post-encryption checksum after the key version
    (FIL_PAGE_FILE_FLUSH_LSN_OR_KEY_VERSION + 4), CRC-32 of the page (page_zip_calc_checksum
    for ROW_FORMAT=COMPRESSED), BUF_NO_CHECKSUM_MAGIC accepted.  Page-compressed
    encrypted pages (FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED) carry none
    (fil_space_verify_crypt_checksum accepts them; buf_page_is_corrupted skips both
    page_compressed types): their checksum field must hold BUF_NO_CHECKSUM_MAGIC, in
    clear (fil_page_decompress_for_non_full_crc32 refuses them otherwise), and once
    decrypted and decompressed the original page's own checksum must hold."""
    from . import checksum as ck
    physical = pm.physical
    batch = max(1, (64 << 20) // physical)
    for s in range(0, len(sel_all), batch):
        sel = sel_all[s:s + batch]
        rows = rows_of(sel)
        if pm.flags.full_crc32:
            t = pm.type[sel].astype(np.int64)
            size = np.where(t & 0x8000, (t & 0xFF) << 8, physical)
            good = ck.full_crc32_ok(rows, size) if (size < physical).any() else ck.full_crc32_ok(rows)
            algos["full_crc32"] = algos.get("full_crc32", 0) + len(sel)
        else:
            stored = ((rows[:, 30].astype(np.uint32) << 24) | (rows[:, 31].astype(np.uint32) << 16)
                      | (rows[:, 32].astype(np.uint32) << 8) | rows[:, 33])
            crc = ck.zip_page_checksum_crc32(rows) if pm.flags.zip_size else ck.crc32_page_checksum(rows)
            pc = pm.type[sel] == FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED
            good = ((crc == stored) | (stored == BUF_NO_CHECKSUM_MAGIC)) & ~pc
            for j in np.nonzero(pc)[0].tolist():
                good[j] = field0[sel[j]] == BUF_NO_CHECKSUM_MAGIC and decoded_ok.get(int(sel[j]), True)
            rest = np.nonzero(~good & ~pc)[0]
            if len(rest) and pm.flags.zip_size:
                good[rest] = np.array(ck.zip_page_checksum_adler(rows[rest]), dtype=np.uint32) == stored[rest]
            algos["crc32"] = algos.get("crc32", 0) + len(sel)
        ok[sel] = good
        check()


def field0_of(hdr: np.ndarray, n: int, in_hole: np.ndarray) -> np.ndarray:
    """FIL_PAGE_SPACE_OR_CHKSUM of every page, holes read as zero without touching them."""
    if not in_hole.any():
        return hdr["checksum"].astype(np.uint32)
    out = np.zeros(n, dtype=np.uint32)
    idx = np.nonzero(~in_hole)[0]
    out[idx] = hdr["checksum"][idx]
    return out


def _check_legacy_rows(rows: np.ndarray, f0: np.ndarray, lsn: np.ndarray, ok: np.ndarray,
                       sel: np.ndarray, algos: dict[str, int]) -> None:
    """crc32 / legacy big-endian crc32 / innodb / none, plus the trailer LSN check."""
    from . import checksum as ck
    size = rows.shape[1]
    old = ((rows[:, size - 8].astype(np.uint32) << 24) | (rows[:, size - 7].astype(np.uint32) << 16)
           | (rows[:, size - 6].astype(np.uint32) << 8) | rows[:, size - 5])
    end_lsn = ((rows[:, size - 4].astype(np.uint32) << 24) | (rows[:, size - 3].astype(np.uint32) << 16)
               | (rows[:, size - 2].astype(np.uint32) << 8) | rows[:, size - 1])
    lsn_ok = end_lsn == (lsn & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    crc = ck.crc32_page_checksum(rows)
    good = (crc == f0) & ((old == crc) | (old == f0))
    magic = (f0 == BUF_NO_CHECKSUM_MAGIC) & (old == BUF_NO_CHECKSUM_MAGIC)
    algos["crc32"] = algos.get("crc32", 0) + int(good.sum())
    algos["none"] = algos.get("none", 0) + int(magic.sum())
    good |= magic
    rest = np.nonzero(~good)[0]
    if len(rest):
        be = ck.crc32_page_checksum_legacy_big_endian(rows[rest]) == f0[rest]
        good[rest] |= be
        algos["crc32 (legacy big-endian)"] = algos.get("crc32 (legacy big-endian)", 0) + int(be.sum())
        rest = rest[~be]
    rest = rest[f0[rest] != 0] if len(rest) else rest
    if len(rest) and len(rest) <= 4096:
        sub = rows[rest]
        new = ck.innodb_new_checksum(sub) == f0[rest]
        oldc = ck.innodb_old_checksum(sub) == old[rest]
        inn = new & oldc
        good[rest] |= inn
        algos["innodb"] = algos.get("innodb", 0) + int(inn.sum())
    ok[sel] = good & lsn_ok


def page_header_fields(raw: bytes, flavor: str = "mysql", logical: int | None = None) -> dict[str, Any]:
    """Inspector: the header fields of one page's bytes (logical page) as a dict."""
    from .index import parse_index_header, page_regions
    h = parse_fil_header(raw, 0)
    names = page_type_names(flavor)
    out: dict[str, Any] = {
        "FIL_PAGE_SPACE_OR_CHKSUM": h.checksum, "FIL_PAGE_OFFSET": h.page_no,
        "FIL_PAGE_PREV": None if h.prev == FIL_NULL else h.prev,
        "FIL_PAGE_NEXT": None if h.next == FIL_NULL else h.next,
        "FIL_PAGE_LSN": h.lsn, "FIL_PAGE_TYPE": names.get(h.page_type, h.page_type),
        "FIL_PAGE_FILE_FLUSH_LSN": h.flush_lsn_or_key_version, "FIL_PAGE_SPACE_ID": h.space_id,
    }
    size = logical or len(raw)
    regions: list[tuple[int, int, str]] = [(0, 38, "FIL header")]
    types = INDEX_TYPES_MARIADB if flavor == "mariadb" else INDEX_TYPES_MYSQL
    if h.page_type in types and len(raw) >= PAGE_HEADER + 56:
        ih = parse_index_header(raw, 0)
        out.update({"PAGE_N_DIR_SLOTS": ih.n_dir_slots, "PAGE_HEAP_TOP": ih.heap_top, "PAGE_N_HEAP": ih.n_heap,
                    "format": "compact" if ih.compact else "redundant", "PAGE_FREE": ih.free,
                    "PAGE_GARBAGE": ih.garbage, "PAGE_LAST_INSERT": ih.last_insert,
                    "PAGE_DIRECTION": ih.direction, "PAGE_N_DIRECTION": ih.n_direction,
                    "PAGE_N_RECS": ih.n_recs, "PAGE_MAX_TRX_ID": ih.max_trx_id, "PAGE_LEVEL": ih.level,
                    "PAGE_INDEX_ID": ih.index_id, "data_size": ih.data_size,
                    "PAGE_BTR_SEG_LEAF": (ih.btr_seg_leaf.space, ih.btr_seg_leaf.page_no, ih.btr_seg_leaf.offset),
                    "PAGE_BTR_SEG_TOP": (ih.btr_seg_top.space, ih.btr_seg_top.page_no, ih.btr_seg_top.offset)})
        if len(raw) == size:
            regions = page_regions(ih, size)
        else:   # ROW_FORMAT=COMPRESSED: headers uncompressed, then the zlib stream
            regions = [(0, 38, "FIL header"), (38, 94, "page header"), (94, len(raw), "compressed records")]
    elif h.page_type in (FIL_PAGE_TYPE_FSP_HDR, FIL_PAGE_TYPE_XDES) and len(raw) >= 150:
        if h.page_type == FIL_PAGE_TYPE_FSP_HDR:
            fsp = parse_fsp_header(raw, 0)
            out.update({"FSP_SPACE_ID": fsp.space_id, "FSP_SIZE": fsp.size_pages, "FSP_FREE_LIMIT": fsp.free_limit,
                        "FSP_SPACE_FLAGS": fsp.flags, "FSP_FRAG_N_USED": fsp.frag_n_used,
                        "FSP_FREE": fsp.free.length, "FSP_FREE_FRAG": fsp.free_frag.length,
                        "FSP_FULL_FRAG": fsp.full_frag.length, "FSP_SEG_ID": fsp.seg_id_next,
                        "FSP_SEG_INODES_FULL": fsp.seg_inodes_full.length,
                        "FSP_SEG_INODES_FREE": fsp.seg_inodes_free.length})
            regions.append((38, 150, "FSP header"))
        ext = extent_size_pages(size)
        end = min(XDES_ARR_OFFSET + xdes_size(ext) * (len(raw) // ext), len(raw) - 8)
        regions.append((XDES_ARR_OFFSET, end, "extent descriptors"))
        regions.append((end, len(raw) - 8, "page body"))
        regions.append((len(raw) - 8, len(raw), "FIL trailer"))
    elif h.page_type == FIL_PAGE_INODE:
        from .inode import FSEG_ARR_OFFSET, fseg_inode_size, inodes_per_page
        ext = extent_size_pages(size)
        segs = parse_inode_page(raw, len(raw), ext, h.page_no)
        out["segments"] = [(sg.seg_id, sg.inode_offset, len(sg.frag_pages), sg.free.length,
                            sg.not_full.length, sg.full.length) for sg in segs]
        end = FSEG_ARR_OFFSET + inodes_per_page(len(raw), ext) * fseg_inode_size(ext)
        regions += [(38, FSEG_ARR_OFFSET, "inode page list node"), (FSEG_ARR_OFFSET, end, "segment inodes"),
                    (end, len(raw) - 8, "page body"), (len(raw) - 8, len(raw), "FIL trailer")]
    else:
        regions.append((38, max(38, len(raw) - 8), "page body"))
        regions.append((len(raw) - 8, len(raw), "FIL trailer"))
    out["regions"] = regions
    return out

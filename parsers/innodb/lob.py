"""MySQL 8 large objects (LOBs): the page chains of uncompressed and compressed LOBs.

MySQL 8.0 stores an externally stored field (BLOB, TEXT, JSON, ...) of a DYNAMIC / COMPACT
table as a LOB: a FIL_PAGE_TYPE_LOB_FIRST page holding the head of the data and the list of
index entries, one entry per piece of data (on the first page itself or on a
FIL_PAGE_TYPE_LOB_DATA page), more entries on FIL_PAGE_TYPE_LOB_INDEX pages, and per entry
a list of older versions (partial updates).  A ROW_FORMAT=COMPRESSED table stores a ZLOB: a
FIL_PAGE_TYPE_ZLOB_FIRST page whose index entries each point to one zlib stream that starts on
the first page, on a FIL_PAGE_TYPE_ZLOB_DATA page (continued through FIL_PAGE_NEXT) or in a
fragment of a FIL_PAGE_TYPE_ZLOB_FRAG page; extra entries sit on FIL_PAGE_TYPE_ZLOB_INDEX
pages, extra fragment entries on FIL_PAGE_TYPE_ZLOB_FRAG_ENTRY pages.

:func:`follow_lob` starts at one first page and returns every page of that LOB with its
length (the sum of the data lengths of the current index entries) and its page count.
Offsets are named as the engine names them; the file each comes from is given beside it.
Every walk is bounded (a page is visited once, lists at most as long as the file has room
for), so a corrupt or looping chain ends with an error naming the page, never a hang.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .fil import (FIL_NULL, FIL_PAGE_DATA, FIL_PAGE_NEXT, FIL_PAGE_TYPE, FIL_PAGE_TYPE_LOB_DATA,
                  FIL_PAGE_TYPE_LOB_FIRST, FIL_PAGE_TYPE_LOB_INDEX, FIL_PAGE_TYPE_ZLOB_DATA, FIL_PAGE_TYPE_ZLOB_FIRST, FIL_PAGE_TYPE_ZLOB_FRAG,
                  FIL_PAGE_TYPE_ZLOB_FRAG_ENTRY, FIL_PAGE_TYPE_ZLOB_INDEX, LOB_FIRST_TYPES, LOB_TYPES)

# -- fil0types.h / fut0lst.h: file addresses and list nodes -------------------------
FIL_ADDR_PAGE = 0
FIL_ADDR_BYTE = 4
FIL_ADDR_SIZE = 6
FLST_LEN = 0
FLST_FIRST = 4
FLST_LAST = 4 + FIL_ADDR_SIZE
FLST_BASE_NODE_SIZE = 4 + 2 * FIL_ADDR_SIZE      # 16
FLST_PREV = 0
FLST_NEXT = FIL_ADDR_SIZE



class first_page_t:  # noqa: N801 - named as the engine names it
    """lob0first.h struct first_page_t (FIL_PAGE_TYPE_LOB_FIRST)."""

    OFFSET_VERSION = FIL_PAGE_DATA                                  # 1 byte
    OFFSET_FLAGS = FIL_PAGE_DATA + 1                                # 1 byte
    OFFSET_LOB_VERSION = OFFSET_FLAGS + 1                           # 4 bytes
    OFFSET_LAST_TRX_ID = OFFSET_LOB_VERSION + 4                     # 6 bytes
    OFFSET_LAST_UNDO_NO = OFFSET_LAST_TRX_ID + 6                    # 4 bytes
    OFFSET_DATA_LEN = OFFSET_LAST_UNDO_NO + 4                       # 4 bytes
    OFFSET_TRX_ID = OFFSET_DATA_LEN + 4                             # 6 bytes
    OFFSET_INDEX_LIST = OFFSET_TRX_ID + 6                           # flst base
    OFFSET_INDEX_FREE_NODES = OFFSET_INDEX_LIST + FLST_BASE_NODE_SIZE
    LOB_PAGE_DATA = OFFSET_INDEX_FREE_NODES + FLST_BASE_NODE_SIZE   # 96


class index_entry_t:  # noqa: N801
    """lob0index.h struct index_entry_t (uncompressed LOB index entry)."""

    OFFSET_PREV = 0
    OFFSET_NEXT = OFFSET_PREV + FIL_ADDR_SIZE
    OFFSET_VERSIONS = OFFSET_NEXT + FIL_ADDR_SIZE                   # flst base of older versions
    OFFSET_TRXID = OFFSET_VERSIONS + FLST_BASE_NODE_SIZE
    OFFSET_TRXID_MODIFIER = OFFSET_TRXID + 6
    OFFSET_TRX_UNDO_NO = OFFSET_TRXID_MODIFIER + 6
    OFFSET_TRX_UNDO_NO_MODIFIER = OFFSET_TRX_UNDO_NO + 4
    OFFSET_PAGE_NO = OFFSET_TRX_UNDO_NO_MODIFIER + 4
    OFFSET_DATA_LEN = OFFSET_PAGE_NO + 4            # read as 2 bytes (index_entry_t::get_data_len)
    OFFSET_LOB_VERSION = OFFSET_DATA_LEN + 4
    SIZE = OFFSET_LOB_VERSION + 4                   # 60


class data_page_t:  # noqa: N801
    """lob0pages.h struct data_page_t (FIL_PAGE_TYPE_LOB_DATA)."""

    OFFSET_VERSION = FIL_PAGE_DATA
    OFFSET_DATA_LEN = OFFSET_VERSION + 1            # 4 bytes
    OFFSET_TRX_ID = OFFSET_DATA_LEN + 4             # 6 bytes
    LOB_PAGE_DATA = OFFSET_TRX_ID + 6               # 49


class node_page_t:  # noqa: N801
    """lob0impl.h struct node_page_t (FIL_PAGE_TYPE_LOB_INDEX): an array of index_entry_t."""

    OFFSET_VERSION = FIL_PAGE_DATA
    LOB_PAGE_DATA = OFFSET_VERSION + 1


class z_first_page_t:  # noqa: N801
    """zlob0first.h struct z_first_page_t (FIL_PAGE_TYPE_ZLOB_FIRST)."""

    OFFSET_VERSION = FIL_PAGE_DATA
    OFFSET_FLAGS = FIL_PAGE_DATA + 1
    OFFSET_LOB_VERSION = OFFSET_FLAGS + 1                           # 4 bytes
    OFFSET_LAST_TRX_ID = OFFSET_LOB_VERSION + 4                     # 6 bytes
    OFFSET_LAST_UNDO_NO = OFFSET_LAST_TRX_ID + 6                    # 4 bytes
    OFFSET_DATA_LEN = OFFSET_LAST_UNDO_NO + 4                       # compressed bytes on this page
    OFFSET_TRX_ID = OFFSET_DATA_LEN + 4                             # 6 bytes
    OFFSET_INDEX_PAGE_NO = OFFSET_TRX_ID + 6                        # first ZLOB_INDEX page
    OFFSET_FRAG_NODES_PAGE_NO = OFFSET_INDEX_PAGE_NO + 4            # first ZLOB_FRAG_ENTRY page
    OFFSET_FREE_LIST = OFFSET_FRAG_NODES_PAGE_NO + 4
    OFFSET_INDEX_LIST = OFFSET_FREE_LIST + FLST_BASE_NODE_SIZE
    OFFSET_FREE_FRAG_LIST = OFFSET_INDEX_LIST + FLST_BASE_NODE_SIZE
    OFFSET_FRAG_LIST = OFFSET_FREE_FRAG_LIST + FLST_BASE_NODE_SIZE
    OFFSET_INDEX_BEGIN = OFFSET_FRAG_LIST + FLST_BASE_NODE_SIZE     # 136


class z_index_entry_t:  # noqa: N801
    """zlob0index.h struct z_index_entry_t (one zlib stream)."""

    OFFSET_PREV = 0
    OFFSET_NEXT = OFFSET_PREV + FIL_ADDR_SIZE
    OFFSET_VERSIONS = OFFSET_NEXT + FIL_ADDR_SIZE
    OFFSET_TRXID = OFFSET_VERSIONS + FLST_BASE_NODE_SIZE
    OFFSET_TRXID_MODIFIER = OFFSET_TRXID + 6
    OFFSET_TRX_UNDO_NO = OFFSET_TRXID_MODIFIER + 6
    OFFSET_TRX_UNDO_NO_MODIFIER = OFFSET_TRX_UNDO_NO + 4
    OFFSET_Z_PAGE_NO = OFFSET_TRX_UNDO_NO_MODIFIER + 4
    OFFSET_Z_FRAG_ID = OFFSET_Z_PAGE_NO + 4                         # 2 bytes
    OFFSET_DATA_LEN = OFFSET_Z_FRAG_ID + 2                          # uncompressed bytes
    OFFSET_ZDATA_LEN = OFFSET_DATA_LEN + 4                          # compressed bytes
    OFFSET_LOB_VERSION = OFFSET_ZDATA_LEN + 4
    SIZE = OFFSET_LOB_VERSION + 4                                   # 66


class z_frag_entry_t:  # noqa: N801
    """lob0impl.h struct z_frag_entry_t (one fragment page of a ZLOB)."""

    OFFSET_PREV = 0
    OFFSET_NEXT = OFFSET_PREV + FIL_ADDR_SIZE
    OFFSET_PAGE_NO = OFFSET_NEXT + FIL_ADDR_SIZE
    OFFSET_N_FRAGS = OFFSET_PAGE_NO + 4
    OFFSET_USED_LEN = OFFSET_N_FRAGS + 2
    OFFSET_TOTAL_FREE_LEN = OFFSET_USED_LEN + 2
    OFFSET_BIG_FREE_LEN = OFFSET_TOTAL_FREE_LEN + 2
    SIZE = OFFSET_BIG_FREE_LEN + 2                                  # 24


class z_data_page_t:  # noqa: N801
    """lob0impl.h struct z_data_page_t (FIL_PAGE_TYPE_ZLOB_DATA), chained by FIL_PAGE_NEXT."""

    OFFSET_VERSION = FIL_PAGE_DATA
    OFFSET_DATA_LEN = OFFSET_VERSION + 1                            # 4 bytes
    OFFSET_TRX_ID = OFFSET_DATA_LEN + 4
    OFFSET_DATA_BEGIN = OFFSET_TRX_ID + 6                           # 49


#: lob0impl.h: z_index_entry_t::OFFSET_Z_FRAG_ID of a stream that is not in a fragment
FRAG_ID_NULL = 0xFFFF


class LobError(Exception):
    """A LOB page or list could not be read; the message names the page."""


@dataclass
class FilAddr:
    """fil_addr_t: page number and byte offset of a list node."""

    page: int
    boffset: int

    @property
    def is_null(self) -> bool:
        return self.page == FIL_NULL


@dataclass
class FlstBaseNode:
    """fut0lst.h list base node: length, first and last node."""

    length: int
    first: FilAddr
    last: FilAddr


@dataclass
class LobFirstPage:
    """Header of a FIL_PAGE_TYPE_LOB_FIRST page (lob0first.h)."""

    version: int
    flags: int
    lob_version: int
    last_trx_id: int
    last_undo_no: int
    data_len: int
    trx_id: int
    index_list: FlstBaseNode
    free_list: FlstBaseNode


@dataclass
class LobIndexEntry:
    """One index_entry_t (lob0index.h)."""

    addr: FilAddr
    prev: FilAddr
    next: FilAddr
    versions: FlstBaseNode
    trx_id: int
    trx_id_modifier: int
    trx_undo_no: int
    trx_undo_no_modifier: int
    page_no: int
    data_len: int
    lob_version: int


@dataclass
class LobDataPage:
    """Header of a FIL_PAGE_TYPE_LOB_DATA page (lob0pages.h)."""

    version: int
    data_len: int
    trx_id: int


@dataclass
class ZlobFirstPage:
    """Header of a FIL_PAGE_TYPE_ZLOB_FIRST page (zlob0first.h)."""

    version: int
    flags: int
    lob_version: int
    last_trx_id: int
    last_undo_no: int
    data_len: int
    trx_id: int
    index_page_no: int
    frag_nodes_page_no: int
    free_list: FlstBaseNode
    index_list: FlstBaseNode
    free_frag_list: FlstBaseNode
    frag_list: FlstBaseNode


@dataclass
class ZlobIndexEntry:
    """One z_index_entry_t (zlob0index.h)."""

    addr: FilAddr
    prev: FilAddr
    next: FilAddr
    versions: FlstBaseNode
    trx_id: int
    trx_id_modifier: int
    trx_undo_no: int
    trx_undo_no_modifier: int
    z_page_no: int
    z_frag_id: int
    data_len: int
    zdata_len: int
    lob_version: int


@dataclass
class ZlobFragEntry:
    """One z_frag_entry_t (lob0impl.h)."""

    addr: FilAddr
    prev: FilAddr
    next: FilAddr
    page_no: int
    n_frags: int
    used_len: int
    total_free_len: int
    big_free_len: int


@dataclass
class ZlobDataPage:
    """Header of a FIL_PAGE_TYPE_ZLOB_DATA page (lob0impl.h z_data_page_t)."""

    version: int
    data_len: int
    trx_id: int
    next_page: int


@dataclass
class Lob:
    """One LOB found from its first page: every page it uses and its length."""

    first_page: int
    compressed: bool                      # ZLOB (ROW_FORMAT=COMPRESSED)
    length: int = 0                       # bytes of the current version (uncompressed)
    zlength: int = 0                      # ZLOB: compressed bytes of the current version
    entries: int = 0                      # current index entries
    versions: int = 0                     # older entry versions kept for MVCC
    pages: list[int] = field(default_factory=list)        # every page, first page first
    page_types: dict[int, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    @property
    def n_pages(self) -> int:
        return len(self.pages)


def _u(buf: bytes, off: int, n: int) -> int:
    if off < 0 or off + n > len(buf):
        raise LobError(f"field of {n} bytes at offset {off} runs past the {len(buf)}-byte page")
    return int.from_bytes(buf[off:off + n], "big")


def parse_fil_addr(buf: bytes, offset: int) -> FilAddr:
    """fil_addr_t (fil0types.h): page (4) and byte offset (2)."""
    return FilAddr(_u(buf, offset + FIL_ADDR_PAGE, 4), _u(buf, offset + FIL_ADDR_BYTE, 2))


def parse_flst_base_node(buf: bytes, offset: int) -> FlstBaseNode:
    """flst base node (fut0lst.h): FLST_LEN (4), FLST_FIRST, FLST_LAST."""
    return FlstBaseNode(_u(buf, offset + FLST_LEN, 4), parse_fil_addr(buf, offset + FLST_FIRST),
                        parse_fil_addr(buf, offset + FLST_LAST))


def parse_lob_first_page(buf: bytes, offset: int = 0) -> LobFirstPage:
    """The header of a FIL_PAGE_TYPE_LOB_FIRST page starting at ``offset``."""
    o, c = offset, first_page_t
    return LobFirstPage(
        version=_u(buf, o + c.OFFSET_VERSION, 1), flags=_u(buf, o + c.OFFSET_FLAGS, 1),
        lob_version=_u(buf, o + c.OFFSET_LOB_VERSION, 4), last_trx_id=_u(buf, o + c.OFFSET_LAST_TRX_ID, 6),
        last_undo_no=_u(buf, o + c.OFFSET_LAST_UNDO_NO, 4), data_len=_u(buf, o + c.OFFSET_DATA_LEN, 4),
        trx_id=_u(buf, o + c.OFFSET_TRX_ID, 6), index_list=parse_flst_base_node(buf, o + c.OFFSET_INDEX_LIST),
        free_list=parse_flst_base_node(buf, o + c.OFFSET_INDEX_FREE_NODES))


def parse_lob_index_entry(buf: bytes, offset: int, page_no: int = FIL_NULL) -> LobIndexEntry:
    """One index_entry_t at ``offset`` of page ``page_no``."""
    o, c = offset, index_entry_t
    return LobIndexEntry(
        addr=FilAddr(page_no, offset), prev=parse_fil_addr(buf, o + c.OFFSET_PREV),
        next=parse_fil_addr(buf, o + c.OFFSET_NEXT), versions=parse_flst_base_node(buf, o + c.OFFSET_VERSIONS),
        trx_id=_u(buf, o + c.OFFSET_TRXID, 6), trx_id_modifier=_u(buf, o + c.OFFSET_TRXID_MODIFIER, 6),
        trx_undo_no=_u(buf, o + c.OFFSET_TRX_UNDO_NO, 4),
        trx_undo_no_modifier=_u(buf, o + c.OFFSET_TRX_UNDO_NO_MODIFIER, 4),
        page_no=_u(buf, o + c.OFFSET_PAGE_NO, 4), data_len=_u(buf, o + c.OFFSET_DATA_LEN, 2),
        lob_version=_u(buf, o + c.OFFSET_LOB_VERSION, 4))


def parse_lob_data_page(buf: bytes, offset: int = 0) -> LobDataPage:
    """The header of a FIL_PAGE_TYPE_LOB_DATA page."""
    c = data_page_t
    return LobDataPage(_u(buf, offset + c.OFFSET_VERSION, 1), _u(buf, offset + c.OFFSET_DATA_LEN, 4),
                       _u(buf, offset + c.OFFSET_TRX_ID, 6))


def parse_zlob_first_page(buf: bytes, offset: int = 0) -> ZlobFirstPage:
    """The header of a FIL_PAGE_TYPE_ZLOB_FIRST page."""
    o, c = offset, z_first_page_t
    return ZlobFirstPage(
        version=_u(buf, o + c.OFFSET_VERSION, 1), flags=_u(buf, o + c.OFFSET_FLAGS, 1),
        lob_version=_u(buf, o + c.OFFSET_LOB_VERSION, 4), last_trx_id=_u(buf, o + c.OFFSET_LAST_TRX_ID, 6),
        last_undo_no=_u(buf, o + c.OFFSET_LAST_UNDO_NO, 4), data_len=_u(buf, o + c.OFFSET_DATA_LEN, 4),
        trx_id=_u(buf, o + c.OFFSET_TRX_ID, 6), index_page_no=_u(buf, o + c.OFFSET_INDEX_PAGE_NO, 4),
        frag_nodes_page_no=_u(buf, o + c.OFFSET_FRAG_NODES_PAGE_NO, 4),
        free_list=parse_flst_base_node(buf, o + c.OFFSET_FREE_LIST),
        index_list=parse_flst_base_node(buf, o + c.OFFSET_INDEX_LIST),
        free_frag_list=parse_flst_base_node(buf, o + c.OFFSET_FREE_FRAG_LIST),
        frag_list=parse_flst_base_node(buf, o + c.OFFSET_FRAG_LIST))


def parse_zlob_index_entry(buf: bytes, offset: int, page_no: int = FIL_NULL) -> ZlobIndexEntry:
    """One z_index_entry_t at ``offset`` of page ``page_no``."""
    o, c = offset, z_index_entry_t
    return ZlobIndexEntry(
        addr=FilAddr(page_no, offset), prev=parse_fil_addr(buf, o + c.OFFSET_PREV),
        next=parse_fil_addr(buf, o + c.OFFSET_NEXT), versions=parse_flst_base_node(buf, o + c.OFFSET_VERSIONS),
        trx_id=_u(buf, o + c.OFFSET_TRXID, 6), trx_id_modifier=_u(buf, o + c.OFFSET_TRXID_MODIFIER, 6),
        trx_undo_no=_u(buf, o + c.OFFSET_TRX_UNDO_NO, 4),
        trx_undo_no_modifier=_u(buf, o + c.OFFSET_TRX_UNDO_NO_MODIFIER, 4),
        z_page_no=_u(buf, o + c.OFFSET_Z_PAGE_NO, 4), z_frag_id=_u(buf, o + c.OFFSET_Z_FRAG_ID, 2),
        data_len=_u(buf, o + c.OFFSET_DATA_LEN, 4), zdata_len=_u(buf, o + c.OFFSET_ZDATA_LEN, 4),
        lob_version=_u(buf, o + c.OFFSET_LOB_VERSION, 4))


def parse_zlob_frag_entry(buf: bytes, offset: int, page_no: int = FIL_NULL) -> ZlobFragEntry:
    """One z_frag_entry_t at ``offset`` of page ``page_no``."""
    o, c = offset, z_frag_entry_t
    return ZlobFragEntry(
        addr=FilAddr(page_no, offset), prev=parse_fil_addr(buf, o + c.OFFSET_PREV),
        next=parse_fil_addr(buf, o + c.OFFSET_NEXT), page_no=_u(buf, o + c.OFFSET_PAGE_NO, 4),
        n_frags=_u(buf, o + c.OFFSET_N_FRAGS, 2), used_len=_u(buf, o + c.OFFSET_USED_LEN, 2),
        total_free_len=_u(buf, o + c.OFFSET_TOTAL_FREE_LEN, 2), big_free_len=_u(buf, o + c.OFFSET_BIG_FREE_LEN, 2))


def parse_zlob_data_page(buf: bytes, offset: int = 0) -> ZlobDataPage:
    """The header of a FIL_PAGE_TYPE_ZLOB_DATA page (and its FIL_PAGE_NEXT link)."""
    c = z_data_page_t
    return ZlobDataPage(_u(buf, offset + c.OFFSET_VERSION, 1), _u(buf, offset + c.OFFSET_DATA_LEN, 4),
                        _u(buf, offset + c.OFFSET_TRX_ID, 6), _u(buf, offset + FIL_PAGE_NEXT, 4))


class _Walker:
    """Page access for one LOB: types checked, each page counted once, everything bounded."""

    def __init__(self, read_page: Callable[[int], bytes], n_pages: int, lob: Lob):
        self.read_page = read_page
        self.n_pages = n_pages
        self.lob = lob
        self.cache: dict[int, bytes] = {}
        self.seen: set[int] = set()

    def page(self, page_no: int) -> bytes:
        if not 0 <= page_no < self.n_pages:
            raise LobError(f"page {page_no} is outside the file ({self.n_pages} pages)")
        buf = self.cache.get(page_no)
        if buf is None:
            buf = self.read_page(page_no)
            if len(self.cache) < 64:
                self.cache[page_no] = buf
        return buf

    def ptype(self, page_no: int) -> int:
        return _u(self.page(page_no), FIL_PAGE_TYPE, 2)

    def add(self, page_no: int, expect: tuple[int, ...], what: str) -> bytes | None:
        """Count ``page_no`` in the LOB (once) after checking its type; its bytes, or None."""
        try:
            buf = self.page(page_no)
            t = _u(buf, FIL_PAGE_TYPE, 2)
        except LobError as e:
            self.lob.errors.append(f"LOB first page {self.lob.first_page}: {what}: {e}")
            return None
        if t not in expect:
            self.lob.errors.append(f"LOB first page {self.lob.first_page}: {what} page {page_no} "
                                   f"has page type {t}, expected {'/'.join(str(x) for x in expect)}")
            return None
        if page_no not in self.seen:
            self.seen.add(page_no)
            self.lob.pages.append(page_no)
            self.lob.page_types[t] = self.lob.page_types.get(t, 0) + 1
        return buf

    def flst(self, base: FlstBaseNode, node_types: tuple[int, ...], parse, what: str) -> list:
        """Walk a file list from its base node; nodes are parsed with ``parse(buf, off, page)``."""
        out = []
        addr = base.first
        visited: set[tuple[int, int]] = set()
        limit = min(base.length, self.n_pages * 1024)
        while not addr.is_null and len(out) < limit:
            if (addr.page, addr.boffset) in visited:
                self.lob.errors.append(f"LOB first page {self.lob.first_page}: {what} list loops at "
                                       f"page {addr.page} offset {addr.boffset}")
                break
            visited.add((addr.page, addr.boffset))
            buf = self.add(addr.page, node_types, f"{what} node")
            if buf is None:
                break
            try:
                node = parse(buf, addr.boffset, addr.page)
            except LobError as e:
                self.lob.errors.append(f"LOB first page {self.lob.first_page}: {what} node at page "
                                       f"{addr.page} offset {addr.boffset}: {e}")
                break
            out.append(node)
            addr = node.next
        if len(out) != base.length and not self.lob.errors:
            self.lob.errors.append(f"LOB first page {self.lob.first_page}: {what} list holds {len(out)} "
                                   f"nodes, its base node says {base.length}")
        return out

    def page_chain(self, start: int, types: tuple[int, ...], what: str) -> None:
        """Pages linked by FIL_PAGE_NEXT from ``start`` (bounded, each once)."""
        page_no, steps = start, 0
        while page_no != FIL_NULL and steps <= self.n_pages:
            if page_no in self.seen and steps:
                break
            buf = self.add(page_no, types, what)
            if buf is None:
                break
            page_no = _u(buf, FIL_PAGE_NEXT, 4)
            steps += 1


def _follow_uncompressed(w: _Walker, first: bytes) -> None:
    lob = w.lob
    hdr = parse_lob_first_page(first)
    node_types = (FIL_PAGE_TYPE_LOB_FIRST, FIL_PAGE_TYPE_LOB_INDEX)
    # lob0first.h free_all_index_pages: the LOB_INDEX pages hang off the first page by FIL_PAGE_NEXT
    nxt = _u(first, FIL_PAGE_NEXT, 4)
    if nxt != FIL_NULL:
        w.page_chain(nxt, (FIL_PAGE_TYPE_LOB_INDEX,), "LOB index page")
    entries = w.flst(hdr.index_list, node_types, parse_lob_index_entry, "index")
    data_types = (FIL_PAGE_TYPE_LOB_FIRST, FIL_PAGE_TYPE_LOB_DATA)
    for e in entries:
        lob.entries += 1
        lob.length += e.data_len
        w.add(e.page_no, data_types, "data")
        for old in w.flst(e.versions, node_types, parse_lob_index_entry, "versions"):
            lob.versions += 1
            w.add(old.page_no, data_types, "old version data")


def _follow_compressed(w: _Walker, first: bytes) -> None:
    lob = w.lob
    hdr = parse_zlob_first_page(first)
    node_types = (FIL_PAGE_TYPE_ZLOB_FIRST, FIL_PAGE_TYPE_ZLOB_INDEX)
    if hdr.index_page_no != FIL_NULL:
        w.page_chain(hdr.index_page_no, (FIL_PAGE_TYPE_ZLOB_INDEX,), "ZLOB index page")
    if hdr.frag_nodes_page_no != FIL_NULL:
        w.page_chain(hdr.frag_nodes_page_no, (FIL_PAGE_TYPE_ZLOB_FRAG_ENTRY,), "ZLOB frag node page")
    frag_nodes = (FIL_PAGE_TYPE_ZLOB_FIRST, FIL_PAGE_TYPE_ZLOB_FRAG_ENTRY)
    for fe in w.flst(hdr.frag_list, frag_nodes, parse_zlob_frag_entry, "frag"):
        w.add(fe.page_no, (FIL_PAGE_TYPE_ZLOB_FRAG,), "fragment")

    def stream(e: ZlobIndexEntry, what: str) -> None:
        if e.z_frag_id != FRAG_ID_NULL:          # the whole stream is one fragment
            w.add(e.z_page_no, (FIL_PAGE_TYPE_ZLOB_FRAG,), f"{what} fragment")
            return
        # the stream starts on the first page or a ZLOB_DATA page and goes on by FIL_PAGE_NEXT
        page_no, got, steps = e.z_page_no, 0, 0
        while page_no != FIL_NULL and got < e.zdata_len and steps <= w.n_pages:
            buf = w.add(page_no, (FIL_PAGE_TYPE_ZLOB_FIRST, FIL_PAGE_TYPE_ZLOB_DATA), f"{what} data")
            if buf is None:
                return
            if _u(buf, FIL_PAGE_TYPE, 2) == FIL_PAGE_TYPE_ZLOB_FIRST:
                got += _u(buf, z_first_page_t.OFFSET_DATA_LEN, 4)
            else:
                d = parse_zlob_data_page(buf)
                if d.data_len == 0:
                    break
                got += d.data_len
            page_no = _u(buf, FIL_PAGE_NEXT, 4)
            steps += 1
        if got < e.zdata_len:
            lob.errors.append(f"LOB first page {lob.first_page}: {what} stream at page {e.z_page_no} holds "
                              f"{got} of {e.zdata_len} compressed bytes")

    for e in w.flst(hdr.index_list, node_types, parse_zlob_index_entry, "index"):
        lob.entries += 1
        lob.length += e.data_len
        lob.zlength += e.zdata_len
        stream(e, "stream")
        for old in w.flst(e.versions, node_types, parse_zlob_index_entry, "versions"):
            lob.versions += 1
            stream(old, "old version stream")


def follow_lob(read_page: Callable[[int], bytes], first_page: int, n_pages: int) -> Lob:
    """Every page of the LOB whose first page is ``first_page`` and its length.

    ``read_page(p)`` returns page p's (uncompressed, decrypted) bytes.  Problems are in
    ``Lob.errors`` naming the page; what was found until then is kept.
    """
    probe = _Walker(read_page, n_pages, Lob(first_page, False))
    try:
        t = probe.ptype(first_page)
    except LobError as e:
        lob = Lob(first_page, False)
        lob.errors.append(f"LOB first page {first_page}: {e}")
        return lob
    lob = Lob(first_page, t == FIL_PAGE_TYPE_ZLOB_FIRST)
    w = _Walker(read_page, n_pages, lob)
    w.cache = probe.cache
    first = w.add(first_page, LOB_FIRST_TYPES, "first")
    if first is None:
        return lob
    try:
        if lob.compressed:
            _follow_compressed(w, first)
        else:
            _follow_uncompressed(w, first)
    except LobError as e:
        lob.errors.append(f"LOB first page {first_page}: {e}")
    return lob


def find_lobs(read_page: Callable[[int], bytes], kinds, n_pages: int,
              skip=None) -> list[Lob]:
    """Follow every LOB of a file from its first pages (``kinds``: page type per page;
    pages where ``skip`` is true, e.g. encrypted or unreadable, are not started from)."""
    import numpy as np
    firsts = np.nonzero(np.isin(kinds, LOB_FIRST_TYPES) & (True if skip is None else ~skip))[0]
    return [follow_lob(read_page, int(p), n_pages) for p in firsts]


def page_lob_owner(lobs: list[Lob], n_pages: int):
    """int64 per page: the first page of the LOB it belongs to, -1 for none (the first LOB
    that reaches a page keeps it)."""
    import numpy as np
    owner = np.full(n_pages, -1, dtype=np.int64)
    for lob in lobs:
        for p in lob.pages:
            if owner[p] < 0:
                owner[p] = lob.first_page
    return owner


__all__ = ["Lob", "LobError", "follow_lob", "find_lobs", "page_lob_owner", "LOB_TYPES", "LOB_FIRST_TYPES",
           "parse_lob_first_page", "parse_lob_index_entry", "parse_lob_data_page", "parse_zlob_first_page",
           "parse_zlob_index_entry", "parse_zlob_frag_entry", "parse_zlob_data_page"]

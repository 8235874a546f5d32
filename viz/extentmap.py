"""The InnoDB extent map: one row per extent, one cell per page, coloured by
page type, index, fill, LSN age, compression, allocation or checksum state.

Everything per page is done with numpy over ``FileEntry.units`` (no Python
loop per page): a colour mode turns the units into a category per page and a
colour index into a small lookup table; the RGBA image is one fancy-index of
that table.  Very tall maps (millions of pages) are drawn through a window of
rows sized to the screen (stride-sampled when zoomed far out), so panning and
zooming stay smooth at 10M pages.

Interaction: hover a page for its facts, click it for the page inspector (and
``node_selected`` with its index's tree node), click a legend row to
highlight that category, pick an index in the tree to highlight its pages.
"""
from __future__ import annotations

import colorsys
import math
from dataclasses import dataclass, field

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QAbstractListModel, QEvent, QModelIndex, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QBrush, QColor, QGuiApplication, QPen, QPixmap, QStandardItemModel
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QComboBox, QHBoxLayout, QHeaderView, QLabel,
                               QPushButton, QSizePolicy, QSpinBox, QSplitter, QTableWidget, QTableWidgetItem, QToolTip, QVBoxLayout,
                               QWidget)

from dbxray.parsers import engines
from dbxray.parsers.scan import release_free_memory
from dbxray.parsers.humanize import human_bytes
from dbxray.parsers.model import (UNIT_BAD_CHECKSUM, UNIT_COMPRESSED, UNIT_CORRUPT, UNIT_ENCRYPTED,
                           UNIT_FREE, UNIT_HOLE, UNIT_HOLE_MISSING, UNIT_LEAF, FileEntry, unit_count, unit_map_shows)
from dbxray.parsers.tree import Node, expand

from . import theme
from .pageinspector import PageInspector

MODES = [
    ("type", "Page type"),
    ("index", "Index"),
    ("level", "B-tree level"),
    ("fill", "Fill ratio"),
    ("lsn", "LSN age"),
    ("compression", "Stored / page size"),
    ("allocation", "Allocation (holes)"),
    ("checksum", "Checksum"),
]

#: colours of the page types DBAs look at most, by constant name without prefix
TYPE_COLOURS = {
    "INDEX": "#0072B2", "TYPE_INSTANT": "#56B4E9", "RTREE": "#009E73", "SDI": "#CC79A7",
    "TYPE_BLOB": "#E69F00", "TYPE_ZBLOB": "#F28E2B", "TYPE_ZBLOB2": "#FFBE7D",
    "TYPE_LOB_FIRST": "#E69F00", "TYPE_LOB_DATA": "#F28E2B", "TYPE_LOB_INDEX": "#FFBE7D",
    "TYPE_ZLOB_FIRST": "#E69F00", "TYPE_ZLOB_DATA": "#F28E2B", "TYPE_ZLOB_INDEX": "#FFBE7D",
    "TYPE_ZLOB_FRAG": "#B07AA1", "TYPE_ZLOB_FRAG_ENTRY": "#B07AA1", "SDI_BLOB": "#CC79A7",
    "SDI_ZBLOB": "#CC79A7",
    "UNDO_LOG": "#D55E00", "TYPE_SYS": "#8C564B", "TYPE_TRX_SYS": "#FF9DA7", "TYPE_RSEG_ARRAY": "#9C755F",
    "TYPE_FSP_HDR": "#37474F", "TYPE_XDES": "#546E7A", "INODE": "#78909C", "IBUF_BITMAP": "#90A4AE",
    "IBUF_FREE_LIST": "#B0BEC5", "TYPE_ALLOCATED": "#F0F0F0", "TYPE_UNUSED": "#EEEEEE",
    "PAGE_COMPRESSED": "#F0E442", "PAGE_COMPRESSED_ENCRYPTED": "#BCBD22", "ENCRYPTED": "#7B1FA2",
    "COMPRESSED": "#F0E442", "COMPRESSED_AND_ENCRYPTED": "#BCBD22", "TYPE_UNKNOWN": "#BDBDBD",
    "not read yet": "#F3F5F7",           # the pages a progressive preview has not read yet
}
FREE_COLOUR = "#DEDEDE"
NO_INDEX_COLOUR = "#8C8C8C"
NO_OWNER = -1
NA_COLOUR = "#C8C8C8"
FREE_KEY = 0x10000          # pseudo page type of free pages (XDES free bit set)
UNKNOWN_LEVEL = 0xFFFF      # UnitFacts.level of a unit whose tree level is unknown

#: category rows of the fixed-category modes: (label, colour)
ALLOCATION_CATS = [
    ("allocated (no hole)", theme.ALLOCATED),
    ("hole punched in page", theme.HOLES),
    ("whole page unallocated", "#FFE082"),
    ("hole missing (should be punched)", theme.MISSING_HOLE),
    ("unwritten (fallocated: allocated, reads as zeros)", theme.UNWRITTEN),
]
CHECKSUM_CATS = [
    ("checksum OK", "#43A047"),
    ("bad checksum", "#E53935"),
    ("encrypted (not verified)", "#7B1FA2"),
    ("corrupt (not parsed)", "#6D1B1B"),
]

CELL_LIMIT_ROWS = 4096      # above this many extents, draw through a row window
FILL_HEIGHT_MODES = ("type", "index", "level")
FILL_HEIGHT_MAX_ROWS = 2048  # 8x8 pixels a page up to 131,072 pages (16k); plain cells beyond
FILL_PX = 8


def fill_height_image(rgba: np.ndarray, fill: np.ndarray, bg: str, k: int = FILL_PX) -> np.ndarray:
    """Each cell as a k x k block: a bar from the bottom as tall as the page's fill
    (NaN = full), one pixel of background right and below as the gap (vectorised)."""
    rows, cols = rgba.shape[:2]
    f = np.where(np.isfinite(fill), fill, 1.0).reshape(rows, cols)
    h = np.clip(np.ceil(f * (k - 1)), 1, k - 1).astype(np.int8)          # bar height in pixels
    py = np.arange(k)[:, None]
    px = np.arange(k)[None, :]
    tab = np.stack([(py >= k - 1 - hh) & (py < k - 1) & (px < k - 1) for hh in range(k)])   # (k, k, k)
    m = tab[h]                                                              # rows, cols, k, k
    b = np.array(_rgba(bg), dtype=np.uint8)
    back = np.empty((rows, cols, 4), dtype=np.uint8)                        # background, cell's alpha
    back[...] = b
    back[..., 3] = rgba[..., 3]                                             # beyond EOF stays transparent
    sel = m.transpose(0, 2, 1, 3)[..., None]                                # rows, k, cols, k, 1
    out = np.where(sel, rgba[:, None, :, None, :], back[:, None, :, None, :])
    return out.reshape(rows * k, cols * k, 4)


def short_type(name: str) -> str:
    for p in ("FIL_PAGE_TYPE_", "FIL_PAGE_"):
        if name.startswith(p):
            return name[len(p):]
    return name


def _type_colour(name: str) -> str | None:
    n = name[len("FIL_PAGE_"):] if name.startswith("FIL_PAGE_") else name
    return TYPE_COLOURS.get(n) or TYPE_COLOURS.get(short_type(name))


#: index colours: Okabe-Ito, then hues chosen to stay apart from them (no greys: those mean
#: "no index" and "free")
INDEX_PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
                 "#7F3C8D", "#8C564B", "#17BECF", "#BCBD22", "#E15759", "#1D3557", "#FF9DA7",
                 "#2CA02C", "#A6761D"]


def distinct_colours(n: int) -> list[str]:
    """n distinct colours: the index palette, then golden-ratio hues."""
    out = INDEX_PALETTE[:n]
    h = 0.11
    while len(out) < n:
        h = (h + 0.618033988749895) % 1.0
        k = len(out)
        r, g, b = colorsys.hsv_to_rgb(h, 0.55 + 0.35 * (k % 3) / 2, 0.95 - 0.25 * ((k // 3) % 3) / 2)
        out.append(f"#{int(r * 255):02X}{int(g * 255):02X}{int(b * 255):02X}")
    return out


def _rgba(colour) -> tuple[int, int, int, int]:
    c = QColor(colour)
    return c.red(), c.green(), c.blue(), c.alpha()


def _lut(colours) -> np.ndarray:
    return np.array([_rgba(c) for c in colours], dtype=np.uint8).reshape(-1, 4)


#: colour levels of a continuous mode: with the "n/a" colour and the map's empty
#: cell they make 256 colours, so a page's colour code is one byte
CONTINUOUS_LEVELS = 254


def _cmap_lut(name: str, levels: int = 256) -> np.ndarray:
    cm = pg.colormap.get(name)
    lut = cm.getLookupTable(0.0, 1.0, levels, alpha=True)
    return np.asarray(lut, dtype=np.uint8)


@dataclass
class ModeResult:
    """What a colour mode made of the units (all arrays one entry per unit)."""

    cat: np.ndarray | None          # legend category per unit (int); None: see categories()
    cidx: np.ndarray                # index into lut per unit
    lut: np.ndarray                 # (M, 4) uint8
    labels: list[str]
    colours: list[str]
    counts: np.ndarray
    sizes: np.ndarray               # stored bytes per category
    keys: list = field(default_factory=list)  # mode-specific key per category (page type, owner)
    colorbar: tuple | None = None   # (colormap name, lo, hi, label)
    keep_empty: bool = False        # show categories with 0 pages
    #: continuous modes: ``cat`` is None and comes from ``cidx`` when asked (levels, bins)
    cat_from_cidx: tuple | None = None

    def categories(self) -> np.ndarray:
        """Legend category per unit (computed from the colour codes for continuous modes,
        which keep only those: one byte a page instead of two)."""
        if self.cat is not None:
            return self.cat
        levels, bins = self.cat_from_cidx
        return (self.cidx.astype(np.uint16) * bins // levels).astype(np.uint8)


def _small_int(n: int):
    return np.uint8 if n < 256 else np.uint16 if n < 65536 else np.int32


#: units handled at a time by the per-unit passes below: a 10M-page map's temporaries stay a
#: few MB instead of several full-length int32/float arrays (its 500 MB budget, issue 22)
CHUNK = 1 << 18


def _slices(n: int, chunk: int = CHUNK):
    for a in range(0, n, chunk):
        yield slice(a, min(n, a + chunk))


def _bincount(cat: np.ndarray, n: int) -> np.ndarray:
    """Count of each value 0..n-1 in ``cat`` (np.bincount copies its input as int64 first:
    80 MB for 10M one-byte codes; here a chunk at a time)."""
    out = np.zeros(n, dtype=np.int64)
    for sl in _slices(len(cat)):
        out += np.bincount(cat[sl], minlength=n)[:n]
    return out


def _categorise_chunked(n: int, keys_of, order_by_count: bool = False):
    """``_categorise`` of the keys ``keys_of(slice)`` gives a chunk at a time (each chunk
    computed again per pass instead of one full-length key array)."""
    if n == 0:
        return _categorise(np.zeros(0, np.int32), order_by_count)
    lo = hi = None
    for sl in _slices(n):
        k = keys_of(sl)
        a, b = int(k.min()), int(k.max())
        lo = a if lo is None else min(lo, a)
        hi = b if hi is None else max(hi, b)
    if hi - lo >= 4_000_000:            # sparse keys: one pass over all of them
        return _categorise(np.concatenate([keys_of(sl) for sl in _slices(n)]), order_by_count)
    counts_all = np.zeros(hi - lo + 1, dtype=np.int64)
    for sl in _slices(n):
        k = keys_of(sl).astype(np.int64) - lo
        counts_all += np.bincount(k, minlength=hi - lo + 1)
    uniq = np.nonzero(counts_all)[0]
    counts = counts_all[uniq]
    if order_by_count:
        order = np.argsort(-counts, kind="stable")
        uniq, counts = uniq[order], counts[order]
    lookup = np.zeros(hi - lo + 1, dtype=_small_int(len(uniq)))
    lookup[uniq] = np.arange(uniq.size)
    inv = np.empty(n, dtype=lookup.dtype)
    for sl in _slices(n):
        inv[sl] = lookup[keys_of(sl).astype(np.int64) - lo]
    return uniq.astype(np.int64) + lo, counts, inv


def _categorise(keys: np.ndarray, order_by_count: bool = False):
    """(unique keys, count per key, category per unit): one counting pass and one
    lookup pass for small key ranges (no sort of the units); categories ordered
    by count (largest first) when asked, else by key."""
    if keys.size == 0:
        return keys[:0].astype(np.int64), np.zeros(0, np.int64), np.zeros(0, dtype=np.uint8)
    lo, hi = int(keys.min()), int(keys.max())
    if hi - lo < 4_000_000:
        shifted = keys - lo if lo else keys
        if shifted.dtype.kind not in "iu" or shifted.dtype.itemsize > 4:
            shifted = shifted.astype(np.int32 if hi - lo < 2 ** 31 else np.int64)
        counts_all = np.bincount(shifted, minlength=hi - lo + 1)
        uniq = np.nonzero(counts_all)[0]
        counts = counts_all[uniq].astype(np.int64)
        if order_by_count:
            order = np.argsort(-counts, kind="stable")
            uniq, counts = uniq[order], counts[order]
        lookup = np.zeros(hi - lo + 1, dtype=_small_int(len(uniq)))
        lookup[uniq] = np.arange(uniq.size)
        return uniq.astype(np.int64) + lo, counts, lookup[shifted]
    uniq, inv, counts = np.unique(keys, return_inverse=True, return_counts=True)
    counts = counts.astype(np.int64)
    if order_by_count:
        order = np.argsort(-counts, kind="stable")
        remap = np.empty_like(order)
        remap[order] = np.arange(len(order))
        uniq, counts, inv = uniq[order], counts[order], remap[inv]
    return uniq.astype(np.int64), counts, inv.astype(_small_int(len(uniq)))


class MapData:
    """The pages of one InnoDB file laid out as extents (rows) x pages (columns):
    the engine's unit geometry (``Engine.unit_geometry``) and per-unit facts
    (``FileEntry.unit_facts``)."""

    def __init__(self, entry: FileEntry):
        self.entry = entry
        units = entry.units if entry.units is not None else np.zeros(0)
        self.units = units
        sec = entry.sections.get(entry.engine or "") or {}
        self.section = sec
        engine = engines.get(entry.engine)
        geo = engine.unit_geometry(entry) if engine is not None else None
        if geo is None:
            raise ValueError(f"{entry.path}: its engine draws no unit map")
        self.geometry = geo
        self.logical = geo.logical_unit_bytes
        self.physical = geo.unit_bytes
        self.extent_pages = geo.units_per_row
        n = len(units)
        rank = None
        if n and not self.physical:
            # units of varying size (unit_bytes 0): one cell each, in file order
            order = np.argsort(units["offset"], kind="stable")
            if (order != np.arange(n)).any():
                rank = np.empty(n, dtype=np.int64)
                rank[order] = np.arange(n)
        self.contiguous = (_is_contiguous(units, self.physical) if self.physical else rank is None) if n else False
        if self.contiguous:
            self.page_no = None           # page i is unit i
            n_pages = n
        elif rank is not None:
            self.page_no = rank           # cell of each unit: its place in file order
            n_pages = n
        elif n:
            self.page_no = (units["offset"] // np.uint64(self.physical)).astype(np.int64)
            n_pages = int(self.page_no.max()) + 1
        else:
            self.page_no = np.zeros(0, dtype=np.int64)
            n_pages = 0
        if not self.contiguous:
            n_pages = max(n_pages, int(entry.apparent_bytes) // self.physical if self.physical else 0)
        self.n_pages = n_pages
        self._hole_in_page: np.ndarray | None = None
        self.set_cols(self.extent_pages)

    def set_cols(self, cols: int) -> None:
        """Lay the map out ``cols`` cells a row: the engine's row unit (an extent) by
        default; a small file is wrapped in fewer (or a larger one in more) so its cells
        stay square-ish and fill the view.  Only the layout changes: a page's extent is
        always counted in ``extent_pages``."""
        self.cols = max(1, int(cols))
        self.rows = max(1, math.ceil(self.n_pages / self.cols))
        self.n_cells = self.rows * self.cols
        self._unit_of_page: np.ndarray | None = None

    def unit_lengths(self, idx=slice(None)):
        """Bytes each unit spans in the file: the unit size, or each unit's stored bytes
        where units vary in size."""
        if self.physical:
            return self.physical
        return self.units["stored"][idx].astype(np.int64)

    # -- per page lookups ------------------------------------------------------
    def unit_at(self, page: int) -> int | None:
        """Index into ``units`` of a page number, or None."""
        if page < 0 or page >= self.n_cells:
            return None
        if self.contiguous:
            return page if page < len(self.units) else None
        if self._unit_of_page is None:
            m = np.full(self.n_cells, -1, dtype=np.int64)
            m[self.page_no] = np.arange(len(self.units))
            self._unit_of_page = m
        i = int(self._unit_of_page[page])
        return None if i < 0 else i

    def hole_bytes(self) -> np.ndarray:
        """Bytes of each page that lie in a hole of the file (from entry.holes)."""
        if self._hole_in_page is None:
            arr = self._fact("hole_bytes")
            if arr is not None:
                self._hole_in_page = arr
                return arr
            from dbxray.parsers.units import hole_bytes_per_unit
            self._hole_in_page = hole_bytes_per_unit(self.entry.holes, self.units["offset"].astype(np.int64),
                                                     self.unit_lengths())
        return self._hole_in_page

    def cell_fill(self) -> np.ndarray:
        """Fill ratio per map cell (NaN for pages without one, 0 past the end)."""
        out = np.zeros(self.n_cells, dtype=np.float32)
        f = np.where((self.units["flags"] & UNIT_FREE) != 0, np.float32(np.nan), self.units["fill"])
        if self.contiguous:
            out[:len(f)] = f
        else:
            out[self.page_no] = f
        return out

    def hole_bytes_of(self, i: int) -> int:
        """Hole bytes of one page (no per-file array needed)."""
        if self._hole_in_page is not None:
            return int(self._hole_in_page[i])
        arr = self._fact("hole_bytes")
        if arr is not None:
            return int(arr[i])
        from dbxray.parsers.units import hole_bytes_per_unit
        return int(hole_bytes_per_unit(self.entry.holes, np.array([int(self.units["offset"][i])]),
                                       self.unit_lengths(slice(i, i + 1)))[0])

    def index_names(self) -> dict[int, str]:
        names = {int(k): str(v) for k, v in (self.entry.owner_names or {}).items()}
        for ix in self.section.get("indexes", []) or []:
            iid = ix.get("index_id")
            if iid is not None and ix.get("name") and int(iid) not in names:
                names[int(iid)] = str(ix["name"])
        return names

    def owner_code(self, index_id: int) -> int | None:
        """The ``owner`` value of an index id (ids >= 2**31 get other codes from the parser)."""
        owner = self.units["owner"]
        ids = self._fact("owner_id")
        if ids is not None and index_id >= 0:
            counts: dict[int, int] = {}
            for sl in _slices(len(owner)):
                sel = (ids[sl] == np.uint64(index_id)) & (owner[sl] != NO_OWNER)
                if sel.any():
                    vals, cnt = np.unique(owner[sl][sel], return_counts=True)
                    for v, c in zip(vals, cnt):
                        counts[int(v)] = counts.get(int(v), 0) + int(c)
            if counts:          # the most frequent code (the smallest of equals)
                return max(sorted(counts), key=lambda v: counts[v])
        if 0 <= index_id < 2 ** 31 and any((owner[sl] == index_id).any() for sl in _slices(len(owner))):
            return int(index_id)
        return None

    def btree_mask(self, index_id: int) -> np.ndarray:
        """Live (not free) B-tree pages of an index: page header index id + index page type, and
        owned (pages the parser did not count as the index's, e.g. ibdata1's doublewrite copies or
        undecrypted pages, have no owner)."""
        out = np.zeros(len(self.units), dtype=bool)
        for sl, live in self._btree_chunks(index_id):
            out[sl] = live
        return out

    def btree_count(self, index_id: int) -> int:
        """``btree_mask(index_id).sum()`` without the full-length mask."""
        return sum(int(live.sum()) for _, live in self._btree_chunks(index_id))

    def _btree_chunks(self, index_id: int):
        u = self.units
        ids = self._fact("owner_id")
        kinds = self.index_kinds()
        if not kinds:
            return
        kind_list = np.array(sorted(kinds), dtype=u["kind"].dtype)
        code = index_id if index_id < 2 ** 31 else -1
        for sl in _slices(len(u)):
            live = np.isin(u["kind"][sl], kind_list) & ((u["flags"][sl] & UNIT_FREE) == 0)
            if ids is not None:
                live &= (ids[sl] == np.uint64(index_id)) & (u["owner"][sl] != NO_OWNER)
            else:
                live &= u["owner"][sl] == code
            yield sl, live

    def index_kinds(self) -> set[int]:
        """Kind codes of the tree units (the engine's tree_kind_names; all kinds when None)."""
        names = self.geometry.tree_kind_names
        kinds = self.entry.kind_names or {}
        if names is None:
            return {int(k) for k in np.unique(self.units["kind"])} if len(self.units) else set()
        return {int(k) for k, v in kinds.items() if v in names}

    def modes(self) -> list[tuple[str, str]]:
        """(mode, label) the map offers for this file's units."""
        base = list(self.geometry.modes) if self.geometry.modes is not None else list(MODES)
        return base + [m for m in self.geometry.extra_modes if m not in base]

    def _fact(self, name: str) -> np.ndarray | None:
        """A per-unit fact (``FileEntry.unit_facts``) when known for every unit."""
        facts = self.entry.unit_facts
        return facts.array(name, len(self.units)) if facts is not None else None

    def type_name(self, kind: int) -> str:
        if kind == FREE_KEY:
            return "free (XDES)"
        name = (self.entry.kind_names or {}).get(int(kind))
        return name or f"page type {int(kind)}"

    def fact(self, name: str, i: int):
        """One unit's fact (``FileEntry.unit_facts``), or None."""
        arr = self._fact(name)
        return None if arr is None else arr[i]

    def mode(self, mode: str) -> ModeResult:
        return getattr(self, f"_mode_{mode}")()

    def _sizes(self, cat: np.ndarray, n: int) -> np.ndarray:
        """Stored bytes per category (for the legend)."""
        stored = self.units["stored"]
        sizes = np.zeros(n, dtype=np.float64)
        for sl in _slices(len(cat)):
            c = cat[sl]
            sizes += np.bincount(c, minlength=n)[:n] * float(self.physical)
            st = stored[sl]
            odd = np.nonzero(st != self.physical)[0]       # usually only compressed / short pages
            if len(odd):
                sizes += np.bincount(c[odd], weights=st[odd].astype(np.float64) - self.physical, minlength=n)[:n]
        return sizes

    def _categorical(self, keys_of, label_of, colour_of, order_by_count: bool = False) -> ModeResult:
        """Categories of the keys ``keys_of(slice of units)`` gives, a chunk at a time."""
        uniq, counts, inv = _categorise_chunked(len(self.units), keys_of, order_by_count)
        sizes = self._sizes(inv, len(uniq))
        labels = [label_of(int(k)) for k in uniq]
        colours = colour_of([int(k) for k in uniq])
        return ModeResult(cat=inv, cidx=inv, lut=_lut(colours), labels=labels, colours=colours,
                          counts=counts, sizes=sizes, keys=[int(k) for k in uniq])

    def _mode_type(self) -> ModeResult:
        u = self.units

        def keys_of(sl):
            return np.where((u["flags"][sl] & UNIT_FREE) != 0, np.int32(FREE_KEY), u["kind"][sl].astype(np.int32))

        def colours(ks):
            out, spare = [], iter(distinct_colours(len(ks) + 20)[6:])
            for k in ks:
                if k == FREE_KEY:
                    out.append(FREE_COLOUR)
                    continue
                c = _type_colour(self.type_name(k))
                out.append(c or next(spare))
            return out

        return self._categorical(keys_of, lambda k: short_type(self.type_name(k)), colours, order_by_count=True)

    def _mode_index(self) -> ModeResult:
        """Colour by owning index (owner -1: no owner; codes <= -2 are indexes whose id does
        not fit an int32, named in owner_names); real indexes first, by page count."""
        u = self.units
        owner = u["owner"]
        free_key = int(owner.max()) + 1 if len(owner) else 0

        def keys_of(sl):
            return np.where((u["flags"][sl] & UNIT_FREE) != 0, np.int32(free_key), owner[sl])
        names = self.index_names()
        ids = self.true_index_ids()

        def label(k):
            if k == free_key:
                return "free (XDES)"
            if k == NO_OWNER:
                return "no index (file / system pages)"
            name = names.get(k)
            iid = ids.get(k, k if k >= 0 else None)
            if name is None:
                return f"index id {iid}" if iid is not None else f"index (owner {k})"
            if iid is None or iid >= 2 ** 32 or name.endswith(f"index {iid}") or not self.geometry.owner_ids:
                return name
            return f"{name} (id {iid})"

        uniq, counts, inv = _categorise_chunked(len(u), keys_of, order_by_count=True)
        # real indexes first (by page count), then "no index", then "free"
        rank = np.array([(2 if k == free_key else 1 if k == NO_OWNER else 0) for k in uniq], dtype=np.int64)
        order = np.lexsort((-counts, rank)) if len(uniq) else np.zeros(0, np.int64)
        if len(order) and not np.array_equal(order, np.arange(len(order))):
            remap = np.empty(len(order), dtype=inv.dtype)
            remap[order] = np.arange(len(order))
            uniq, counts = uniq[order], counts[order]
            for sl in _slices(len(inv)):
                inv[sl] = remap[inv[sl]]
        real = [int(k) for k in uniq if k not in (free_key, NO_OWNER)]
        pal = dict(zip(real, distinct_colours(len(real))))
        colours = [pal.get(int(k), FREE_COLOUR if k == free_key else NO_INDEX_COLOUR) for k in uniq]
        return ModeResult(cat=inv, cidx=inv, lut=_lut(colours), labels=[label(int(k)) for k in uniq],
                          colours=colours, counts=counts, sizes=self._sizes(inv, len(uniq)),
                          keys=[int(k) for k in uniq])

    def true_index_ids(self) -> dict[int, int]:
        """owner code -> index id (the page headers' PAGE_INDEX_ID), where they differ or are known."""
        if getattr(self, "_true_ids", None) is not None:
            return self._true_ids
        out: dict[int, int] = {}
        ids = self._fact("owner_id")
        if ids is not None and len(self.units):
            u = self.units
            kinds = self.index_kinds()
            kind_list = np.array(sorted(kinds), dtype=u["kind"].dtype)
            for sl in _slices(len(u)):          # each owner's first tree page, in file order
                m = u["owner"][sl] != NO_OWNER
                if kinds:
                    m &= np.isin(u["kind"][sl], kind_list)
                sel = np.nonzero(m)[0]
                if len(sel):
                    codes, first = np.unique(u["owner"][sl][sel], return_index=True)
                    for c, f in zip(codes, first):
                        out.setdefault(int(c), int(ids[sl.start + sel[f]]))
        self._true_ids = out
        return out

    def _continuous(self, values_of, lo: float, hi: float, cmap: str,
                    bin_labels, na_label: str, cbar_label: str, bins: int = 5) -> ModeResult:
        """A colour ramp over ``values_of(slice) -> (float32 values, valid)``, a chunk at a time."""
        levels = CONTINUOUS_LEVELS
        lut = _cmap_lut(cmap, levels)
        span = (hi - lo) or 1.0
        n = len(self.units)
        cidx = np.empty(n, dtype=np.uint8)
        for sl in _slices(n):
            values, valid = values_of(sl)
            t = (values - np.float32(lo)) * np.float32(levels / span)
            np.clip(t, 0, levels - 0.01, out=t)
            t[~valid] = levels
            cidx[sl] = t
        cat = np.empty(n, dtype=np.uint8)
        for sl in _slices(n):                    # NA (levels) -> bins
            cat[sl] = cidx[sl].astype(np.uint16) * bins // levels
        full_lut = np.vstack([lut, np.array(_rgba(NA_COLOUR), dtype=np.uint8)[None, :]])
        colours = []
        for b in range(bins):
            r, g, b_, a = lut[min(levels - 1, int((b + 0.5) / bins * levels))]
            colours.append(f"#{r:02X}{g:02X}{b_:02X}")
        colours.append(NA_COLOUR)
        counts = _bincount(cat, bins + 1)
        sizes = self._sizes(cat, bins + 1)
        labels = [bin_labels(lo + span * b / bins, lo + span * (b + 1) / bins, b) for b in range(bins)] + [na_label]
        del cat                 # kept as the colour codes only; categories() derives it
        return ModeResult(cat=None, cidx=cidx, lut=full_lut, labels=labels, colours=colours, counts=counts,
                          sizes=sizes, keys=list(range(bins + 1)), colorbar=(cmap, lo, hi, cbar_label),
                          cat_from_cidx=(levels, bins))

    def _mode_fill(self) -> ModeResult:
        fill = self.units["fill"]

        def values_of(sl):
            f = fill[sl].astype(np.float32)
            valid = np.isfinite(f)
            f *= 100
            return f, valid
        return self._continuous(values_of, 0.0, 100.0, "viridis",
                                lambda a, b, i: f"fill {a:.0f}–{b:.0f}%", "fill n/a (not a B-tree page)",
                                "fill (%)")

    def _mode_lsn(self) -> ModeResult:
        lsn = self.units["lsn"]
        lo_i, hi_i = None, 0
        for sl in _slices(len(lsn)):
            part = lsn[sl]
            written = part[part > 0]
            if len(written):
                m = int(written.min())
                lo_i = m if lo_i is None else min(lo_i, m)
                hi_i = max(hi_i, int(written.max()))
        if lo_i is None:
            lo_i, hi_i = 0, 1
        span = float(max(1, hi_i - lo_i))

        def values_of(sl):
            # colour by age: newest (age 0) bright, oldest dark; float32 offsets from the oldest LSN
            part = lsn[sl]
            valid = part > 0
            return (np.where(valid, part, np.uint64(lo_i)) - np.uint64(lo_i)).astype(np.float32), valid
        res = self._continuous(values_of, 0.0, span, "inferno",
                               lambda a, b, i: f"age {_lsn_num(span - b)}–{_lsn_num(span - a)} LSN"
                               + (" (oldest)" if i == 0 else " (newest)" if i == 4 else ""),
                               "LSN 0 (never written)", "LSN age (0 = newest)")
        res.lsn_range = (float(lo_i), float(hi_i))
        return res

    def _mode_compression(self) -> ModeResult:
        u = self.units

        def values_of(sl):
            logical = u["logical"][sl].astype(np.float32)
            logical[logical == 0] = self.logical
            stored = u["stored"][sl]
            # page_compressed pages, and ROW_FORMAT=COMPRESSED pages (physical < logical page size)
            comp = ((u["flags"][sl] & UNIT_COMPRESSED) != 0) | (stored < logical)
            return stored.astype(np.float32) / logical * 100, comp
        unit = self.geometry.unit_name
        return self._continuous(values_of, 0.0, 100.0, "plasma",
                                lambda a, b, i: f"stored {a:.0f}–{b:.0f}% of {unit}",
                                "not compressed", f"stored / {unit} size (%)")

    def _fixed(self, cat: np.ndarray, cats) -> ModeResult:
        counts = _bincount(cat, len(cats))
        sizes = self._sizes(cat, len(cats))
        colours = [c for _, c in cats]
        return ModeResult(cat=cat, cidx=cat, lut=_lut(colours), labels=[n for n, _ in cats], colours=colours,
                          counts=counts, sizes=sizes, keys=list(range(len(cats))), keep_empty=True)

    def _mode_allocation(self) -> ModeResult:
        u = self.units
        hole = self.hole_bytes()
        cat = np.zeros(len(u), dtype=np.uint8)
        cat[hole > 0] = 1
        cat[hole >= np.maximum(self.unit_lengths(), 1)] = 2
        if self.entry is not None and self.entry.unwritten:
            # unwritten extents are listed among the holes but are allocated: their own category
            from dbxray.parsers.units import hole_bytes_per_unit
            unw = hole_bytes_per_unit(self.entry.unwritten, u["offset"].astype(np.int64), self.unit_lengths())
            cat[(unw > 0) & (unw >= hole)] = 4
        cat[(u["flags"] & UNIT_HOLE_MISSING) != 0] = 3
        return self._fixed(cat, ALLOCATION_CATS)

    def _mode_level(self) -> ModeResult:
        """Leaf pages, then each level above (from the page headers), then other pages."""
        u = self.units
        level = self._fact("level")
        kinds = self.index_kinds()
        kind_list = np.array(sorted(kinds), dtype=u["kind"].dtype)
        other = 10

        def keys_of(sl):
            is_btree = np.isin(u["kind"][sl], kind_list) if kinds else np.zeros(sl.stop - sl.start, bool)
            is_btree &= (u["flags"][sl] & UNIT_FREE) == 0
            if level is None:       # no per-page levels: leaf flag only
                lv = np.where((u["flags"][sl] & UNIT_LEAF) != 0, 0, 1).astype(np.int32)
            else:
                lvl = np.asarray(level[sl]).astype(np.int32)
                is_btree &= lvl != UNKNOWN_LEVEL
                lv = np.minimum(lvl, 9)
            return np.where(is_btree, lv, other).astype(np.int32)
        ramp = ["#0072B2", "#E69F00", "#D55E00", "#CC79A7", "#009E73", "#56B4E9", "#7F3C8D", "#8C564B",
                "#BCBD22", "#17BECF"]

        def label(k):
            if k == other:
                return "not a B-tree page (or free)"
            if k == 0:
                return "leaf (level 0)"
            return f"level {k}" + ("+" if k == 9 else "") + (" (non-leaf)" if k == 1 else "")

        return self._categorical(keys_of, label, lambda ks: [NA_COLOUR if k == other else ramp[k] for k in ks])

    def _mode_encryption(self) -> ModeResult:
        """Pages by encryption key version (UnitFacts.key_version; 0 = not encrypted), decrypted or not."""
        kv = self._fact("key_version")
        f = self.units["flags"]

        def keys_of(sl):
            not_dec = ((f[sl] & UNIT_ENCRYPTED) != 0).astype(np.int64)
            if kv is None:       # a saved scan keeps the units' flags, not the key versions: "version 0" = unknown
                return np.where(not_dec != 0, 1, 0)
            k = kv[sl]
            return np.where(k != 0, k.astype(np.int64) * 2 + not_dec, 0)
        ramp = ["#7B1FA2", "#1565C0", "#00897B", "#EF6C00", "#AD1457", "#6D4C41"]

        def label(k):
            if k == 0:
                return "not encrypted" if kv is not None else "not encrypted or decrypted"
            if k == 1:
                return "encrypted, not decrypted (key version not in a saved scan)"
            return f"key version {k // 2} ({'not decrypted' if k & 1 else 'decrypted'})"

        def colours(ks):
            return ["#E0E0E0" if k == 0 else (ramp[(k // 2 - 1) % len(ramp)] if k & 1 else "#81C784") for k in ks]
        return self._categorical(keys_of, label, colours)

    def _mode_checksum(self) -> ModeResult:
        f = self.units["flags"]
        cat = np.zeros(len(f), dtype=np.uint8)
        cat[(f & UNIT_ENCRYPTED) != 0] = 2
        cat[(f & UNIT_BAD_CHECKSUM) != 0] = 1
        cat[(f & UNIT_CORRUPT) != 0] = 3
        cats = list(CHECKSUM_CATS)
        ck = self.section.get("checksum")
        if isinstance(ck, dict) and ck.get("algorithm") is None:
            cats[0] = ("checksum not verified", NA_COLOUR)
        elif isinstance(ck, dict) and ck.get("algorithm"):
            cats[0] = (f"checksum OK ({ck['algorithm']})", cats[0][1])
        return self._fixed(cat, cats)

    # -- image ----------------------------------------------------------------------
    def cell_codes(self, res: ModeResult, mask: np.ndarray | None = None,
                   bg: str = "#FFFFFF", lazy_mask: bool = False):
        """(colour table (K, 4) uint8, (rows, cols) codes into it): the image
        before colouring, 1 byte a cell for up to 256 colours; pages not in ``mask``
        get their colour dimmed."""
        lut = res.lut
        L = len(lut)
        empty = np.zeros((1, 4), dtype=np.uint8)
        table = np.vstack([lut, empty])
        codes = res.cidx
        if mask is not None:
            b = np.array(_rgba(bg), dtype=np.float32)
            dim = (lut.astype(np.float32) * 0.18 + b * 0.82).astype(np.uint8)
            dim[:, 3] = 255
            table = np.vstack([table, dim])
        # codes index the plain colours; with a lazy mask the dimmed ones are added per row
        # slice when coloured, so the codes stay one byte for up to 255 colours
        n_codes = L + 1 if lazy_mask else len(table)
        dtype = np.uint8 if n_codes <= 256 else np.uint16 if n_codes < 65535 else np.int32
        codes = codes.astype(dtype, copy=False)
        if mask is not None and not lazy_mask:  # dimmed colours follow the plain ones
            codes = np.where(mask, codes, codes + dtype(L + 1))
        if self.contiguous and len(codes) == self.n_cells and codes.dtype == dtype:
            cells = codes               # whole extents, codes already small: a view, no copy
        elif self.contiguous:
            cells = np.empty(self.n_cells, dtype=dtype)
            cells[:len(codes)] = codes
            cells[len(codes):] = L
        else:
            cells = np.full(self.n_cells, L, dtype=dtype)
            cells[self.page_no] = codes
        cells = cells.reshape(self.rows, self.cols)
        if not lazy_mask:
            return table, cells
        cmask = None
        if mask is not None:        # the mask laid out as the cells (a view when it can be)
            if self.contiguous and len(mask) == self.n_cells:
                cmask = mask.reshape(self.rows, self.cols)
            else:
                cmask = np.ones(self.n_cells, dtype=bool)
                if self.contiguous:
                    cmask[:len(mask)] = mask
                else:
                    cmask[self.page_no] = mask
                cmask = cmask.reshape(self.rows, self.cols)
        return table, cells, cmask, (L + 1 if cmask is not None else 0)

    def rgba(self, res: ModeResult, mask: np.ndarray | None = None, bg: str = "#FFFFFF") -> np.ndarray:
        """(rows, cols, 4) uint8 image; pages not in ``mask`` are dimmed."""
        table, cells = self.cell_codes(res, mask, bg)
        return table[cells]


class CodedImage:
    """An RGBA image kept as 1-2 byte colour codes and coloured a slice at a time:
    a 10M-page map holds 10 MB of codes instead of 40 MB of pixels."""

    def __init__(self, table: np.ndarray, codes: np.ndarray, mask: np.ndarray | None = None, dim=0):
        self.table, self.codes, self.mask, self.dim = table, codes, mask, dim

    @property
    def shape(self) -> tuple[int, int, int]:
        return (*self.codes.shape, 4)

    def __getitem__(self, rows) -> np.ndarray:
        c = self.codes[rows]
        if self.mask is not None:           # pages outside the highlight take the dimmed colours
            if len(self.table) > np.iinfo(c.dtype).max + 1:
                c = c.astype(np.uint16 if len(self.table) < 65535 else np.int32)
            c = np.where(self.mask[rows], c, c + c.dtype.type(self.dim))
        return self.table[c]


def _lsn_num(v: float) -> str:
    v = abs(v)
    for div, suf in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if v >= div:
            return f"{v / div:.3g}{suf}"
    return f"{v:.0f}"


def _is_contiguous(units: np.ndarray, physical: int, chunk: int = 1 << 20) -> bool:
    """Unit i is page i (offset i * physical), checked a chunk at a time."""
    off = units["offset"]
    n = len(off)
    if int(off[0]) != 0 or int(off[-1]) != (n - 1) * physical:
        return False
    step = np.uint64(physical)
    for a in range(0, n, chunk):
        blk = off[a:a + chunk]
        want = np.arange(a, a + len(blk), dtype=np.uint64) * step
        if not np.array_equal(blk, want):
            return False
    return True


class GridItem(pg.GraphicsObject):
    """Thin lines between cells, drawn only where cells are big enough to see."""

    def __init__(self, rows: int, cols: int, colour: str):
        super().__init__()
        self.rows, self.cols = rows, cols
        self.pen = QPen(QColor(colour))
        self.pen.setCosmetic(True)
        self.pen.setWidthF(1.0)
        self.setZValue(5)

    def boundingRect(self) -> QRectF:
        return QRectF(0, 0, self.cols, self.rows)

    def paint(self, painter, *args):
        t = painter.worldTransform()
        if abs(t.m11()) < 7 or abs(t.m22()) < 7:
            return
        vb = self.getViewBox()
        rect = vb.viewRect() if vb is not None else self.boundingRect()
        r0, r1 = max(0, int(rect.top()) - 1), min(self.rows, int(rect.bottom()) + 2)
        c0, c1 = max(0, int(rect.left()) - 1), min(self.cols, int(rect.right()) + 2)
        if (r1 - r0) > 2000 or (c1 - c0) > 2000:
            return
        painter.setPen(self.pen)
        for r in range(r0, r1 + 1):
            painter.drawLine(QPointF(c0, r), QPointF(c1, r))
        for c in range(c0, c1 + 1):
            painter.drawLine(QPointF(c, r0), QPointF(c, r1))


class ExtentAxis(pg.AxisItem):
    """Left axis: extent number, with its first page number."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.extent_pages = 64
        self.rows = 1 << 62
        #: rows wrapped to fit the view: each labelled by its first page, not an extent number
        self.first_page_labels = False

    def tickStrings(self, values, scale, spacing):
        out = []
        for v in values:
            e = int(round(v - 0.5))
            label = e * self.extent_pages if self.first_page_labels else e
            out.append(f"{label:,}" if abs(v - 0.5 - e) < 1e-6 and 0 <= e < self.rows else "")
        return out

    def tickValues(self, minVal, maxVal, size):
        # ticks at extent centres (row e spans [e, e+1))
        vals = super().tickValues(minVal - 0.5, maxVal - 0.5, size)
        out = []
        for spacing, ticks in vals:
            sp = max(1.0, round(spacing))
            ticks = [float(int(round(t))) + 0.5 for t in ticks if -0.5 <= t < self.rows]
            out.append((sp, sorted(set(t for t in ticks if abs((t - 0.5) % sp) < 1e-6))))
        return out


class PageAxis(pg.AxisItem):
    """Bottom axis: the cell's place in its row (ticks only where there are cells)."""

    cols = 1 << 62

    def tickValues(self, minVal, maxVal, size):
        vals = super().tickValues(minVal - 0.5, maxVal - 0.5, size)
        out = []
        for spacing, ticks in vals:
            sp = max(1.0, round(spacing))
            out.append((sp, sorted(set(float(int(round(t))) + 0.5 for t in ticks
                                       if -0.5 <= t < self.cols - 0.5 and abs(round(t) % sp) < 1e-6))))
        return out

    def tickStrings(self, values, scale, spacing):
        return [f"{int(round(v - 0.5))}" for v in values]


class LegendTable(QTableWidget):
    """Categories with colour, pages, % of pages and stored bytes; click a row to highlight it."""

    def __init__(self, parent=None):
        super().__init__(0, 4, parent)
        self.setHorizontalHeaderLabels(["category", "pages", "%", "stored"])
        self.verticalHeader().setVisible(False)
        self.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.setSelectionMode(QAbstractItemView.SingleSelection)
        self.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.setShowGrid(False)
        self.setWordWrap(False)
        h = self.horizontalHeader()
        h.setSectionResizeMode(0, QHeaderView.Stretch)
        for c in (1, 2, 3):
            h.setSectionResizeMode(c, QHeaderView.ResizeToContents)
        self.setMinimumWidth(280)
        self.cats: list[int] = []

    def set_rows(self, res: ModeResult) -> None:
        self.clearSelection()
        total = max(1, int(res.counts.sum()))
        rows = [i for i in range(len(res.labels)) if res.counts[i] > 0 or res.keep_empty]
        self.cats = rows
        self.setRowCount(len(rows))
        for r, i in enumerate(rows):
            pm = QPixmap(14, 14)
            pm.fill(QColor(res.colours[i]))
            name = QTableWidgetItem(res.labels[i])
            name.setIcon(pm)
            name.setToolTip(res.labels[i])
            cnt = QTableWidgetItem(f"{int(res.counts[i]):,}")
            p = 100.0 * res.counts[i] / total
            pct = QTableWidgetItem("<0.1" if 0 < p < 0.05 else f"{p:.1f}")
            sz = QTableWidgetItem(human_bytes(res.sizes[i]))
            for it in (cnt, pct, sz):
                it.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
            for c, it in enumerate((name, cnt, pct, sz)):
                self.setItem(r, c, it)
        self.resizeRowsToContents()


class ExtentMapView(QWidget):
    """One row per extent, a cell per page; colour modes, legend, hover, click, highlight."""

    title = "Extent map"
    view_id = "extent-map"
    #: the engine whose files this view draws (None: any dataset)
    engine = None
    #: draws what a light first scan leaves for later (ClickHouse blocks, ``Engine.deferred``):
    #: a headless export completes the scan before drawing it
    reads_deferred = True

    @classmethod
    def shows(cls, dataset) -> bool:
        """Whether the map has something to draw: a file whose engine lays out its units."""
        return dataset is not None and any(_has_pages(e) for e in dataset.files)

    node_selected = Signal(object)
    page_clicked = Signal(int)
    #: the hovered unit's facts on one line ("" when the mouse leaves the units)
    unit_hovered = Signal(str)
    #: a progressive preview was drawn (pages read so far)
    preview_drawn = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.dataset = None
        self.root: Node | None = None
        self.files: list[FileEntry] = []        # files the selector offers
        self.entry: FileEntry | None = None
        self.data: MapData | None = None
        self.result: ModeResult | None = None
        self.mode_id = "type"
        self.highlight_cat: int | None = None
        self.highlight_owner: int | None = None
        self.highlight_mask: np.ndarray | None = None
        self.last_tooltip = ""
        self.hover_page: int | None = None
        self.selected_page: int | None = None
        self._rgba: np.ndarray | CodedImage | None = None
        self._window: tuple[int, int, int] | None = None
        self.preview = None             # the engine's PreviewFile while a scan reads the file
        self._preview_timer = QTimer(self)
        self._preview_timer.setSingleShot(True)
        self._preview_timer.timeout.connect(self._draw_preview)

        # toolbar
        self.file_combo = QComboBox()
        self.file_combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.file_combo.setMinimumContentsLength(18)
        self.file_combo.currentIndexChanged.connect(self._on_file_combo)
        self.mode_combo = QComboBox()
        for mid, label in MODES:
            self.mode_combo.addItem(label, mid)
        self.mode_combo.currentIndexChanged.connect(lambda i: self.set_mode(self.mode_combo.itemData(i)))
        self.fill_height = QCheckBox("Fill as height")
        self.fill_height.setChecked(True)
        self.fill_height.setToolTip("Draw each page as a bar whose height is its fill ratio "
                                    "(as innodb_ruby's space-extents-illustrate): page type, index and level modes")
        self.fill_height.toggled.connect(lambda _: self._redraw() if self.data is not None else None)
        self.fit_button = QPushButton("Fit")
        self.fit_button.setToolTip("Square cells across the width, from extent 0 (Home)")
        self.fit_button.clicked.connect(self.fit)
        self.fit_button.setShortcut("Home")
        self.whole_button = QPushButton("Whole file")
        self.whole_button.setToolTip("Every extent in view (rows flattened for long files) (End)")
        self.whole_button.clicked.connect(self.whole_file)
        self.whole_button.setShortcut("End")
        # the style's 80 px minimum of a push button is more than "Fit" needs: the window
        # then narrows to its tree + map + inspector minimum (966 px) with any file open
        self.fit_button.setMinimumWidth(self.fit_button.fontMetrics().horizontalAdvance("Fit") + 30)
        self.goto = QSpinBox()
        self.goto.setRange(0, 0)
        self.goto.setKeyboardTracking(False)
        self.goto.setToolTip("Go to a page number (Enter): scrolls to it and opens it in the inspector")
        self.goto.editingFinished.connect(lambda: self.go_to_page(self.goto.value()))
        self.status = QLabel("")
        # long highlight texts must not widen the window: elided by the layout, full text as tooltip
        self.status.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        # two rows, so the view stays narrow enough for the window's tree and inspector
        top = QHBoxLayout()
        top.setContentsMargins(4, 4, 4, 0)
        top.addWidget(QLabel("File:"))
        top.addWidget(self.file_combo, 1)
        top.addSpacing(8)
        top.addWidget(self.fit_button)
        top.addWidget(self.whole_button)
        top.addSpacing(8)
        self.goto_label = QLabel("Page:")
        top.addWidget(self.goto_label)
        top.addWidget(self.goto)
        bar = QHBoxLayout()
        bar.setContentsMargins(4, 2, 4, 0)
        bar.addWidget(QLabel("Colour by:"))
        bar.addWidget(self.mode_combo)
        bar.addWidget(self.fill_height)
        bar.addSpacing(12)
        bar.addWidget(self.status, 1)

        # map
        self.glw = pg.GraphicsLayoutWidget()
        self.glw.setBackground(theme.background())
        self.left_axis = ExtentAxis("left")
        self.bottom_axis = PageAxis("bottom")
        self.plot = self.glw.addPlot(row=0, col=0, axisItems={"left": self.left_axis, "bottom": self.bottom_axis})
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.invertY(True)
        theme.style_plot(self.plot)
        self.vb = self.plot.getViewBox()
        self.vb.setMouseEnabled(x=True, y=True)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setAutoDownsample(False)
        self.plot.addItem(self.image)
        self.grid: GridItem | None = None
        self.marker = pg.QtWidgets.QGraphicsRectItem(0, 0, 1, 1)
        mpen = QPen(QColor("#D50000"))
        mpen.setCosmetic(True)
        mpen.setWidthF(2.5)
        self.marker.setPen(mpen)
        self.marker.setBrush(QBrush(Qt.NoBrush))
        self.marker.setZValue(10)
        self.marker.setVisible(False)
        self.plot.addItem(self.marker)
        self.colorbar: pg.ColorBarItem | None = None
        self.vb.sigRangeChanged.connect(self._on_range)
        self.vb.sigRangeChangedManually.connect(lambda *_: setattr(self, "_user_moved", True))
        self.vb.sigResized.connect(self._on_vb_resized)
        self.glw.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self.glw.viewport().installEventFilter(self)
        self.glw.scene().sigMouseClicked.connect(self._on_mouse_clicked)

        self.legend = LegendTable()
        self.legend.itemSelectionChanged.connect(self._on_legend)
        self.legend.setContextMenuPolicy(Qt.ActionsContextMenu)
        copy_csv = QAction("Copy legend as CSV", self.legend)
        copy_csv.triggered.connect(lambda: QGuiApplication.clipboard().setText(self.legend_csv()))
        copy_pages = QAction("Copy page numbers of the highlighted pages", self.legend)
        copy_pages.triggered.connect(lambda: QGuiApplication.clipboard().setText(
            " ".join(str(p) for p in self.highlighted_pages()[:100000])))
        self.legend.addAction(copy_csv)
        self.legend.addAction(copy_pages)
        self.legend_title = QLabel("")
        self.legend_title.setWordWrap(True)
        lw = QWidget()
        ll = QVBoxLayout(lw)
        ll.setContentsMargins(4, 4, 4, 4)
        ll.addWidget(self.legend_title)
        ll.addWidget(self.legend, 1)
        self.hint = QLabel("Hover a page for its facts · click a page to inspect it · click a legend row "
                           "to highlight · wheel zooms, drag pans")
        self.hint.setStyleSheet("color: #757575")
        self.hint.setWordWrap(True)
        self.hint.setContentsMargins(4, 0, 4, 2)

        self.report = QSplitter(Qt.Horizontal)      # what export renders: map + legend
        self.report.addWidget(self.glw)
        self.report.addWidget(lw)
        self.report.setStretchFactor(0, 3)
        self.report.setStretchFactor(1, 1)
        self.report.setSizes([700, 340])

        # the page inspector is not part of this view's layout: the window shows it in its
        # right dock (attach_inspector); a view on its own keeps one for click_page to fill
        self.inspector = PageInspector(self)
        self.inspector.hide()

        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(top)
        lay.addLayout(bar)
        lay.addWidget(self.report, 1)
        lay.addWidget(self.hint)            # below the map and legend: not part of an export
        self._show_empty("No InnoDB file scanned")

    #: below this width the legend goes under the map (beside it, the map would be too narrow)
    LEGEND_BELOW = 760

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        below = self.width() < self.LEGEND_BELOW
        want = Qt.Vertical if below else Qt.Horizontal
        if self.report.orientation() != want:
            self.report.setOrientation(want)
            if below:
                h = max(200, self.report.height())
                self.report.setSizes([int(h * 0.7), h - int(h * 0.7)])
            else:
                w = max(300, self.report.width())
                self.report.setSizes([int(w * 0.68), w - int(w * 0.68)])

    def _set_status(self, text: str) -> None:
        self.status.setText(text)
        self.status.setToolTip(text)

    def attach_inspector(self, inspector: PageInspector) -> None:
        """Fill ``inspector`` (the window's, in its right dock) when a page is clicked."""
        if inspector is not self.inspector:
            self.inspector.deleteLater()
            self.inspector = inspector

    # -- view protocol ------------------------------------------------------------------
    def export_widget(self) -> QWidget:
        return self.report

    def set_target(self, text: str) -> None:
        """``--target``: a file path (or its end), optionally ``:index name``."""
        path, _, index = text.partition(":")
        for e in mapped_files(self.dataset) if self.dataset else []:
            if e.path == path or e.path.endswith(path):
                self._set_files([e], e)
                if index and self.data is not None:
                    for ix in self.data.section.get("indexes", []) or []:
                        names = {str(ix.get("name")), f"{ix.get('table')}.{ix.get('name')}"}
                        if index in names:
                            self.highlight_index(int(ix["index_id"]))
                            return
                    for code, name in self.data.index_names().items():
                        if name == index or name.endswith("." + index):
                            self.highlight_index(self.data.true_index_ids().get(code, code))
                            return
                return

    # -- progressive preview (while a scan reads the file) ----------------------------------
    def begin_preview(self, info: dict) -> None:
        """A scan starts reading an InnoDB file: show its extents, every page "not read yet"."""
        self.preview = engines.get(info.get("engine", "innodb")).preview_file(info)
        self.dataset = None
        self.root = None
        self.files = []
        self.file_combo.blockSignals(True)
        self._clear_files_combo()
        self.file_combo.addItem(f"{info['path']}  (reading {int(info['n_pages']):,} pages…)", info["path"])
        self.file_combo.setEnabled(False)
        self.file_combo.blockSignals(False)
        self.entry = None
        self.mode_id = "type"
        self._set_modes(list(MODES))
        self.show_file(self.preview.entry)

    def add_preview_chunk(self, chunk: dict) -> None:
        """Page headers of a chunk read by the scan: drawn now if nothing is drawn yet,
        else with the next repaint (chunks arriving faster are drawn together)."""
        if self.preview is None:
            return
        self.preview.add(int(chunk["start"]), chunk["types"], chunk["lsn"], chunk.get("names") or {})
        if self.preview.read == int(chunk["start"]) + len(chunk["types"]) and not self._preview_timer.isActive():
            first = getattr(self, "_preview_drawn_pages", 0) == 0
            self._preview_timer.start(0 if first else 60)

    def clear_preview(self, message: str = "No InnoDB file scanned") -> None:
        """The scan that fed the preview ended without a dataset (cancelled, failed)."""
        if self.preview is not None:
            self.preview = None
            self._preview_timer.stop()
            self._preview_drawn_pages = 0
            self._clear_files_combo()
            self._show_empty(message)

    def end_preview(self) -> None:
        if self.preview is not None:
            self._preview_timer.stop()
            self._draw_preview()

    def _draw_preview(self) -> None:
        p = self.preview
        if p is None or self.entry is not p.entry:
            return
        self._recolour()
        pct = 100.0 * p.read / max(1, p.n_pages)
        self.legend_title.setText(f"<b>{dict(MODES)[self.mode_id]}</b> — read {p.read:,} of "
                                  f"{p.n_pages:,} pages ({pct:.0f}%)<br><span style='color:#757575'>free "
                                  f"pages, indexes and fill follow when the scan has read the file</span>")
        self._set_status(f"reading page headers… {pct:.0f}%")
        self._preview_drawn_pages = p.read
        self.preview_drawn.emit(p.read)

    def set_dataset(self, dataset, root: Node) -> None:
        if self.preview is not None:
            self._set_status("")
            self.entry = None           # the scanned file replaces the preview even when it is the same
        self.preview = None
        self._preview_timer.stop()
        self._preview_drawn_pages = 0
        self.dataset = dataset
        self.root = root
        files = mapped_files(dataset)
        if not files:
            self.files = []
            self._clear_files_combo()
            self._show_empty("No InnoDB pages (no units to map) in this scan")
            return
        best = max(files, key=lambda e: (e.role == "tablespace", unit_count(e)))
        self._set_files(files, best)

    def select_node(self, node: Node) -> None:
        if self.dataset is None or node is None:
            return
        if node.kind == "index":
            fnode = node.parent
            entry = fnode.ref if fnode is not None else None
            if isinstance(entry, FileEntry) and _has_pages(entry):
                if entry is not self.entry:
                    self._set_files(self._scope_files(fnode.parent) or [entry], entry)
                iid = (node.ref or {}).get("index_id")
                if iid is not None:
                    self.highlight_index(int(iid))
            return
        if node.kind == "file":
            entry = node.ref
            if isinstance(entry, FileEntry) and _has_pages(entry):
                self._set_files(self._scope_files(node.parent) or [entry], entry)
                self.clear_highlight()
            return
        files = self._scope_files(node)
        if files:
            keep = self.entry if self.entry in files else max(files, key=lambda e: len(e.units))
            self._set_files(files, keep)
            self.clear_highlight()

    # -- files -------------------------------------------------------------------------
    def _scope_files(self, node: Node | None) -> list[FileEntry]:
        if node is None:
            return []
        out = []
        for n in node.walk():
            if n.kind == "file" and isinstance(n.ref, FileEntry) and _has_pages(n.ref):
                out.append(n.ref)
        return out

    def _set_files(self, files: list[FileEntry], current: FileEntry) -> None:
        self.files = list(files)
        self.file_combo.blockSignals(True)
        self._clear_files_combo()
        if len(self.files) > COMBO_ITEMS_MAX:
            # a list model naming each file when the list shows it: 100,000 combo items
            # would hold ~45 MB and take seconds to add
            self.file_combo.setModel(FileListModel(self.files, self.file_combo))
        else:
            for e in self.files:
                self.file_combo.addItem(file_label(e), e.path)
        self.file_combo.setCurrentIndex(self.files.index(current) if current in self.files else 0)
        self.file_combo.setEnabled(len(self.files) > 1)
        self.file_combo.blockSignals(False)
        if current is not self.entry:
            self.show_file(current)

    def _clear_files_combo(self) -> None:
        """The file list emptied (its own item model again if a FileListModel was set)."""
        if isinstance(self.file_combo.model(), FileListModel):
            self.file_combo.setModel(QStandardItemModel(self.file_combo))
        self.file_combo.clear()

    def _on_file_combo(self, i: int) -> None:
        if 0 <= i < len(self.files):
            self.show_file(self.files[i])

    def show_file(self, entry: FileEntry) -> None:
        self.entry = entry
        self.data = MapData(entry)
        self._set_modes(self.data.modes())
        unit = self.data.geometry.unit_name
        self.goto_label.setText(f"{unit.capitalize()}:")
        self.hint.setText(f"Hover a {unit} for its facts · click a {unit} to inspect it · click a legend row "
                          "to highlight · wheel zooms, drag pans")
        self.highlight_cat = None
        self.highlight_owner = None
        self.highlight_mask = None
        self.selected_page = None
        self.marker.setVisible(False)
        self.data.set_cols(self.best_cols())
        self._wrap_size = (self.data, (float(self.vb.width()), float(self.vb.height())))
        self._layout_grid()
        self.goto.blockSignals(True)
        self.goto.setRange(0, max(0, self.data.n_pages - 1))
        self.goto.blockSignals(False)
        self._update_title()
        self._recolour(reset_range=True)

    def _layout_grid(self) -> None:
        """Grid and axes for the map's current row width."""
        d = self.data
        if self.grid is not None:
            self.plot.removeItem(self.grid)
        self.grid = GridItem(d.rows, d.cols, theme.background())
        self.plot.addItem(self.grid)
        self.left_axis.extent_pages = d.cols
        self.left_axis.rows = d.rows
        self.left_axis.first_page_labels = d.cols != d.extent_pages
        self.bottom_axis.cols = d.cols

    def best_cols(self) -> int:
        """Cells a row for the current view size: the engine's row unit (an extent) when
        the file fills the view's height with square cells at that width (long files
        scroll); else the power-of-two multiple or fraction of it giving the largest
        square cells, so a 20-page file is a block of big cells, not a strip."""
        d = self.data
        if d is None:
            return 1
        w = max(50.0, float(self.vb.width() or 700))
        h = max(50.0, float(self.vb.height() or 500))
        ext = d.extent_pages
        if d.n_pages == 0 or math.ceil(d.n_pages / ext) * (w / (ext + 1)) >= h * 0.9:
            return ext
        best, best_cell = ext, 0.0
        c = ext
        while c > 1:
            c //= 2
        cands = []
        while c <= max(ext, d.n_pages) * 2:
            cands.append(c)
            c *= 2
        for c in cands:
            rows = math.ceil(d.n_pages / c)
            cell = min(w / (c + 1), h / (rows + 1))
            if cell > best_cell * 1.0001:
                best, best_cell = c, cell
        return best

    def _rewrap(self) -> bool:
        """Re-lay the map when the view's size calls for another row width."""
        d = self.data
        if d is None:
            return False
        size = (float(self.vb.width()), float(self.vb.height()))
        last = getattr(self, "_wrap_size", None)
        if last is not None and last[0] is d and abs(size[0] - last[1][0]) < 40 and abs(size[1] - last[1][1]) < 40:
            return False        # the new row width's own axis labels move the plot a few pixels: no flip-flop
        self._wrap_size = (d, size)
        cols = self.best_cols()
        if cols == d.cols:
            return False
        marker_page = self.selected_page
        d.set_cols(cols)
        self._layout_grid()
        self._update_title()
        self._redraw()
        if marker_page is not None:
            row, col = divmod(marker_page, d.cols)
            self.marker.setRect(QRectF(col, row, 1, 1))
        return True

    def _show_empty(self, msg: str) -> None:
        self.entry = None
        self.data = None
        self.image.clear()
        self.plot.setTitle(msg, color=theme.foreground(), size="11pt")
        self.legend.setRowCount(0)
        self.legend_title.setText("")
        self._set_status("")

    def _update_title(self) -> None:
        d = self.data
        e = self.entry
        sec = d.section
        unit, row = d.geometry.unit_name, d.geometry.row_name
        if d.logical:
            size = human_bytes(d.logical).replace(".0 ", " ")
            if d.physical != d.logical:
                size += f" (compressed to {human_bytes(d.physical).replace('.0 ', ' ')})"
            size = f"{size} {unit}s"
        else:
            size = f"{unit}s of varying size, in file order"
        extent_bytes = d.extent_pages * d.physical
        comp = sec.get("compression_algorithm") or ""
        extra = f"page_compressed {comp}" if comp else ""
        self.plot.setTitle(
            f"<b>{e.path}</b><br>{size}" + (f", {extra}" if extra else "") +
            f"<br>{d.n_pages:,} {unit}s = {human_bytes(e.apparent_bytes)} apparent, "
            f"{human_bytes(e.allocated_bytes)} allocated",
            color=theme.foreground(), size="10pt")
        # pyqtgraph fixes the title row at 30 px: room for the three lines
        fm_h = self.fontMetrics().height()
        h = 3 * int(fm_h * 1.15) + 6
        self.plot.titleLabel.setMaximumHeight(h)
        self.plot.layout.setRowFixedHeight(0, h)
        span = f" = {human_bytes(extent_bytes).replace('.0 ', ' ')}" if extent_bytes else ""
        if d.cols == d.extent_pages:
            self.plot.setLabel("left", f"{row} ({d.extent_pages} {unit}s{span})", color=theme.foreground())
            self.plot.setLabel("bottom", f"{unit} in {row}", color=theme.foreground())
        else:       # wrapped to fit the view: rows are labelled by their first unit
            self.plot.setLabel("left", f"first {unit} of the row ({d.cols} a row)", color=theme.foreground())
            self.plot.setLabel("bottom", f"{unit} in row", color=theme.foreground())

    # -- modes and colouring ---------------------------------------------------------------
    def _set_modes(self, modes: list[tuple[str, str]]) -> None:
        """The colour modes of the file shown (its engine's, with their labels)."""
        current = [(self.mode_combo.itemData(i), self.mode_combo.itemText(i)) for i in range(self.mode_combo.count())]
        if current == modes:
            return
        self.mode_combo.blockSignals(True)
        self.mode_combo.clear()
        for mid, label in modes:
            self.mode_combo.addItem(label, mid)
        ids = [m for m, _ in modes]
        if self.mode_id not in ids:
            self.mode_id = ids[0]
        self.mode_combo.setCurrentIndex(ids.index(self.mode_id))
        self.mode_combo.blockSignals(False)
        self.fill_height.setEnabled(self.mode_id in FILL_HEIGHT_MODES)

    def mode_label(self, mode: str) -> str:
        labels = dict(self.data.modes()) if self.data is not None else dict(MODES)
        return labels.get(mode, dict(MODES).get(mode, mode))

    def set_mode(self, mode: str) -> None:
        if mode not in dict(MODES) and not hasattr(MapData, f"_mode_{mode}"):
            raise ValueError(f"unknown colour mode {mode!r}")
        if self.data is not None and mode not in dict(self.data.modes()):
            return          # a mode the file's units do not have: the current one stays
        self.mode_id = mode
        self.fill_height.setEnabled(mode in FILL_HEIGHT_MODES)
        i = self.mode_combo.findData(mode)
        if i != self.mode_combo.currentIndex():
            self.mode_combo.blockSignals(True)
            self.mode_combo.setCurrentIndex(i)
            self.mode_combo.blockSignals(False)
        self.highlight_cat = None
        if self.highlight_owner is None:
            self.highlight_mask = None
        if self.data is not None:
            self._recolour()

    def _recolour(self, reset_range: bool = False) -> None:
        d = self.data
        if d is None:
            return
        # the old colours go before the new are made (a 10M-page map: 10-20 MB each)
        self.result = None
        self._rgba = None
        self.result = d.mode(self.mode_id)
        self.legend.blockSignals(True)
        self.legend.setHorizontalHeaderLabels(["category", f"{d.geometry.unit_name}s", "%", "stored"])
        self.legend.set_rows(self.result)
        self.legend.blockSignals(False)
        self.legend_title.setText(f"<b>{self.mode_label(self.mode_id)}</b> — {len(d.units):,} {d.geometry.unit_name}s")
        self._update_colorbar()
        self._redraw()
        if reset_range:
            self.fit()
        elif getattr(self, "_fitted", False) and not getattr(self, "_user_moved", False):
            self.fit()

    def fit(self) -> None:
        """Whole map in view, square cells, extent 0 at the top (long files: the first extents)."""
        d = self.data
        if d is None:
            return
        self._rewrap()
        self._fit_range()
        self._fitted = True
        self._user_moved = False

    def _fit_range(self) -> None:
        """Square cells across the full width, extent 0 at the top; long files scroll."""
        d = self.data
        if d is None:
            return
        ext = d.cols
        w = max(100.0, float(self.vb.width() or 700))
        h = max(100.0, float(self.vb.height() or 500))
        cell = w / (ext + 1)
        self.vb.setAspectLocked(False)
        if d.cols != d.extent_pages and (d.rows + 1) * cell > h:
            # a wrapped (small) file whose rows are the limit: all of it in view, square cells
            cell = h / (d.rows + 1)
            xspan = w / cell
            x0 = -0.5 - (xspan - (ext + 1)) / 2          # centred
            self.vb.setLimits(xMin=x0, xMax=x0 + xspan, yMin=-0.5, yMax=d.rows + 0.5,
                              minXRange=1, minYRange=1, maxXRange=xspan)
            self.vb.setRange(xRange=(x0, x0 + xspan), yRange=(-0.5, d.rows + 0.5), padding=0)
            return
        yspan = h / cell
        self.vb.setLimits(xMin=-0.5, xMax=ext + 0.5, yMin=-0.5, yMax=max(d.rows + 0.5, yspan - 0.5),
                          minXRange=min(4, ext + 1), minYRange=2, maxXRange=ext + 1)
        self.vb.setRange(xRange=(-0.5, ext + 0.5), yRange=(-0.5, yspan - 0.5), padding=0)

    def zoom(self, factor: float | None) -> None:
        """Keyboard zoom about the centre of the view (factor > 1: in); None: back to Fit."""
        if self.data is None:
            return
        if factor is None:
            self.fit()
            return
        self._user_moved = True
        self.vb.scaleBy((1.0 / factor, 1.0 / factor))

    def focus_goto(self) -> None:
        """Ctrl+G: the page number field focused with its text selected."""
        self.goto.setFocus()
        self.goto.selectAll()

    def show_extents(self, first: float, last: float) -> None:
        """Show extents [first, last) across the full width (stays put on resize)."""
        self._user_moved = True
        d = self.data
        if d is not None:
            self.vb.setRange(xRange=(-0.5, d.cols + 0.5), yRange=(first, last), padding=0)
        else:
            self.vb.setRange(yRange=(first, last), padding=0)

    def whole_file(self) -> None:
        """The whole file in view (rows flattened for long files)."""
        if self.data is not None:
            self.show_extents(-0.5, max(self.data.rows + 0.5, 2))

    def _on_vb_resized(self, *args) -> None:
        if getattr(self, "_fitted", False) and not getattr(self, "_user_moved", False):
            self._rewrap()
            self._fit_range()

    def _update_colorbar(self) -> None:
        if self.colorbar is not None:
            self.glw.removeItem(self.colorbar)
            self.colorbar = None
        cb = self.result.colorbar
        if cb is None:
            return
        cmap, lo, hi, label = cb
        if self.mode_id == "lsn":
            lo, hi = getattr(self.result, "lsn_range", (0.0, 1.0))
            label = "page LSN (bright = newest)"
        scale = 1.0
        for div, suffix in ((1e12, "× 10¹²"), (1e9, "× 10⁹"), (1e6, "× 10⁶"), (1e3, "× 10³")):
            if max(abs(lo), abs(hi)) >= div * 10:
                scale = div
                label += f" {suffix}"
                break
        if hi <= lo:
            hi = lo + 1
        bar = pg.ColorBarItem(values=(lo / scale, hi / scale), colorMap=pg.colormap.get(cmap),
                              interactive=False, width=18, colorMapMenu=False)
        ax = bar.axis
        ax.setWidth(52)
        ax.setTextPen(pg.mkPen(theme.foreground()))
        ax.setPen(pg.mkPen(theme.foreground()))
        ax.setLabel(label, color=theme.foreground())
        self.glw.addItem(bar, row=0, col=1)
        self.colorbar = bar

    def _mask(self) -> np.ndarray | None:
        if self.highlight_cat is not None and self.result is not None:
            res = self.result
            n = len(res.cidx)
            m = np.empty(n, dtype=bool)
            for sl in _slices(n):
                if res.cat is not None:
                    m[sl] = res.cat[sl] == self.highlight_cat
                else:
                    levels, bins = res.cat_from_cidx
                    m[sl] = (res.cidx[sl].astype(np.uint16) * bins // levels) == self.highlight_cat
            if self.highlight_mask is not None:
                m &= self.highlight_mask
            return m
        return self.highlight_mask

    def fill_height_active(self) -> bool:
        return (self.fill_height.isChecked() and self.mode_id in FILL_HEIGHT_MODES and self.data is not None
                and self.data.rows <= FILL_HEIGHT_MAX_ROWS)

    def _redraw(self) -> None:
        d = self.data
        self._rgba = None           # the old image's codes and mask go first
        if self.fill_height_active() or d.rows <= CELL_LIMIT_ROWS:
            rgba = d.rgba(self.result, self._mask(), theme.background())
            if self.fill_height_active():
                rgba = fill_height_image(rgba, d.cell_fill(), theme.background())
            self._rgba = rgba
        else:       # large maps: colour only the rows handed to the ImageItem
            self._rgba = CodedImage(*d.cell_codes(self.result, self._mask(), theme.background(), lazy_mask=True))
        if self.grid is not None:
            self.grid.setVisible(not self.fill_height_active())
        self._window = None
        self._update_window(force=True)
        self._trim_if_large()

    def _trim_if_large(self) -> None:
        """After work on a large map, its temporaries go back to the system (RSS stays
        near what the map holds: 1 byte of colour code a page)."""
        if self.data is not None and self.data.rows > CELL_LIMIT_ROWS:
            release_free_memory()

    def _on_range(self, *args) -> None:
        self._update_window()

    def _update_window(self, force: bool = False) -> None:
        """Hand the ImageItem the rows in view (plus a margin), stride-sampled to the screen."""
        if self._rgba is None:
            return
        rows = self.data.rows
        if rows <= CELL_LIMIT_ROWS:
            if force or self._window is None:
                self.image.setImage(self._rgba, autoLevels=False, levels=None, autoDownsample=False)
                self.image.setRect(QRectF(0, 0, self.data.cols, rows))
                self._window = (0, rows, 1)
            return
        (x0, x1), (y0, y1) = self.vb.viewRange()
        span = max(1.0, y1 - y0)
        px = max(50, int(self.vb.height() or 600))
        stride = max(1, int(span / px))
        r0 = max(0, int(y0 - span * 0.5))
        r1 = min(rows, int(math.ceil(y1 + span * 0.5)))
        r0 -= r0 % stride
        if not force and self._window is not None:
            w0, w1, ws = self._window
            if ws == stride and w0 <= max(0, int(y0)) and w1 >= min(rows, int(math.ceil(y1))):
                return
        sub = np.ascontiguousarray(self._rgba[r0:r1:stride])
        self.image.setImage(sub, autoLevels=False, levels=None, autoDownsample=False)
        self.image.setRect(QRectF(0, r0, self._rgba.shape[1], sub.shape[0] * stride))
        self._window = (r0, r1, stride)

    # -- highlight ------------------------------------------------------------------------
    def highlight_index(self, index_id: int) -> int:
        """Dim every page not owned by index ``index_id`` (its B-tree pages and the other
        pages of its segments, e.g. BLOBs); returns the highlighted page count."""
        if self.data is None:
            return 0
        d = self.data
        code = d.owner_code(index_id)
        self.highlight_owner = index_id
        self.highlight_mask = self._rgba = None     # the old mask and image go before the new are made
        self.highlight_mask = d.units["owner"] == code if code is not None else d.btree_mask(index_id)
        self.highlight_cat = None
        self.legend.blockSignals(True)
        self.legend.clearSelection()
        self.legend.blockSignals(False)
        self._redraw()
        n = int(self.highlight_mask.sum())
        nb = d.btree_count(index_id)
        name = d.index_names().get(code if code is not None else index_id, f"index {index_id}")
        extra = f" ({nb:,} B-tree pages, {n - nb:,} other pages of its segments)" if nb != n else ""
        self._set_status(f"highlighted: {name} — {n:,} page{'s' if n != 1 else ''}{extra}")
        self._trim_if_large()
        return n

    def highlighted_btree_count(self) -> int:
        """B-tree pages of the highlighted index (what the index's ``pages`` counts)."""
        if self.data is None or self.highlight_owner is None:
            return 0
        return self.data.btree_count(self.highlight_owner)

    def highlight_category(self, cat: int | None) -> int:
        self.highlight_cat = cat
        self._redraw()
        if cat is None:
            self._set_status("")
            return 0
        n = int((self._mask()).sum())
        self._set_status(f"highlighted: {self.result.labels[cat]} — {n:,} page{'s' if n != 1 else ''}")
        return n

    def clear_highlight(self) -> None:
        self.highlight_owner = None
        self.highlight_mask = None
        self.highlight_cat = None
        self.legend.blockSignals(True)
        self.legend.clearSelection()
        self.legend.blockSignals(False)
        self._set_status("")
        if self.data is not None:
            self._redraw()

    def legend_csv(self) -> str:
        """The legend as CSV (file, mode, category, pages, percent, stored bytes) for reports."""
        if self.result is None:
            return ""
        res = self.result
        total = max(1, int(res.counts.sum()))
        lines = ["file,mode,category,pages,percent,stored_bytes"]
        for i, lab in enumerate(res.labels):
            if res.counts[i] or res.keep_empty:
                q = lab.replace('"', '""')
                lines.append(f'"{self.entry.path}",{self.mode_id},"{q}",{int(res.counts[i])},'
                             f"{100.0 * res.counts[i] / total:.3f},{int(res.sizes[i])}")
        return "\n".join(lines) + "\n"

    def highlighted_pages(self) -> list[int]:
        """Page numbers of the highlighted pages (all pages when nothing is highlighted)."""
        if self.data is None:
            return []
        m = self._mask()
        idx = np.arange(len(self.data.units)) if m is None else np.nonzero(m)[0]
        if self.data.contiguous:
            return idx.tolist()
        return self.data.page_no[idx].tolist()

    def highlighted_count(self) -> int:
        m = self._mask()
        return len(self.data.units) if m is None else int(m.sum())

    def _on_legend(self) -> None:
        rows = self.legend.selectionModel().selectedRows()
        if not rows:
            self.highlight_category(None)
            return
        self.highlight_category(self.legend.cats[rows[0].row()])

    # -- hover and click --------------------------------------------------------------------
    def page_at_scene(self, pos) -> int | None:
        if self.data is None or not self.vb.sceneBoundingRect().contains(pos):
            return None
        p = self.vb.mapSceneToView(pos)
        col, row = int(math.floor(p.x())), int(math.floor(p.y()))
        if not (0 <= col < self.data.cols and 0 <= row < self.data.rows):
            return None
        page = row * self.data.cols + col
        return page if self.data.unit_at(page) is not None else None

    def page_center_in_widget(self, page: int):
        """Widget (self.glw viewport) coordinates of a page's cell centre (for tests)."""
        d = self.data
        row, col = divmod(page, d.cols)
        sp = self.vb.mapViewToScene(QPointF(col + 0.5, row + 0.5))
        return self.glw.mapFromScene(sp)

    def _on_mouse_moved(self, pos) -> None:
        page = self.page_at_scene(pos)
        if page is None:
            self._leave_page()
            return
        if page == self.hover_page:
            return
        self.hover_page = page
        self.last_tooltip = self.page_tooltip(page)
        # the tooltip is the image item's own: Qt's tooltip event (sent ~0.7 s after the mouse
        # stops) asks the scene for the item's tooltip and keeps it shown; a tooltip shown by
        # hand only would be closed by that event (the scene finds no item tooltip)
        self.image.setToolTip(self.last_tooltip)
        gp = self.glw.mapToGlobal(self.glw.mapFromScene(pos))
        QToolTip.showText(gp, self.last_tooltip, self.glw)
        self.unit_hovered.emit(self.page_status_line(page))

    def _leave_page(self) -> None:
        if self.hover_page is not None:
            QToolTip.hideText()
            self.image.setToolTip("")
            self.hover_page = None
            self.unit_hovered.emit("")

    def eventFilter(self, obj, event) -> bool:
        if obj is self.glw.viewport() and event.type() == QEvent.Leave:
            self._leave_page()
        return False

    def page_status_line(self, page: int) -> str:
        """The hovered page's facts on one line (the window's status bar shows it while
        the mouse rests on the page)."""
        f = self.page_facts(page)
        parts = [f"Page {f['page']:,} (extent {f['extent']:,})", short_type(f["type"])]
        if f["index"] is not None:
            parts.append(f"index {f['index']}" + (f" level {f['level']}" if f["level"] is not None else ""))
        if f["records"] is not None:
            parts.append(f"{f['records']:,} records")
        parts.append("Fill " + ("n/a" if f["fill"] is None else f"{100 * f['fill']:.1f}%"))
        parts.append(f"stored {f['stored']:,} B, allocated {f['allocated']:,} B")
        if f["flags"] & UNIT_FREE:
            parts.append("free")
        return " · ".join(parts)

    def _on_mouse_clicked(self, ev) -> None:
        if ev.button() != Qt.LeftButton:
            return
        page = self.page_at_scene(ev.scenePos())
        if page is not None:
            self.click_page(page)

    def go_to_page(self, page: int) -> None:
        """Scroll so the page is in view (its extent near the top) and inspect it."""
        d = self.data
        if d is None or d.unit_at(page) is None:
            return
        row = page // d.cols
        (_, _), (y0, y1) = self.vb.viewRange()
        span = y1 - y0
        if not (y0 <= row < y1 - 1):
            self.show_extents(max(-0.5, row - span * 0.25), max(-0.5, row - span * 0.25) + span)
        self.click_page(page)

    def click_page(self, page: int) -> None:
        """Select a page: mark it, show it in the inspector, select its index in the tree."""
        d = self.data
        i = d.unit_at(page)
        if i is None:
            return
        self.selected_page = page
        if self.goto.value() != page:
            self.goto.blockSignals(True)
            self.goto.setValue(page)
            self.goto.blockSignals(False)
        row, col = divmod(page, d.cols)
        self.marker.setRect(QRectF(col, row, 1, 1))
        self.marker.setVisible(True)
        self.inspector.show_page(self.entry, page, d.units[i], self.page_facts(page))
        self.page_clicked.emit(page)
        node = self.index_node(int(d.units[i]["owner"]))
        if node is not None:
            self.node_selected.emit(node)

    def index_node(self, index_id: int) -> Node | None:
        """The tree node of an index of the current file."""
        if self.root is None or index_id == NO_OWNER:
            return None
        for n in self.root.walk():
            if n.kind == "file" and n.ref is self.entry:
                for c in expand(n):
                    if c.kind == "index" and isinstance(c.ref, dict):
                        iid = int(c.ref.get("index_id", c.ref.get("id", -1)))
                        if iid == index_id or self.data.owner_code(iid) == index_id:
                            return c
        return None

    def page_facts(self, page: int) -> dict:
        d = self.data
        i = d.unit_at(page)
        u = d.units[i]
        kind = int(u["kind"])
        flags = int(u["flags"])
        owner = int(u["owner"])
        names = d.index_names()
        hole = int(d.hole_bytes_of(i))
        fill = float(u["fill"])
        facts = {
            "page": page, "extent": page // d.extent_pages, "in_extent": page % d.extent_pages,
            "offset": int(u["offset"]), "type_code": kind, "type": d.type_name(kind),
            "index_id": d.true_index_ids().get(owner, owner) if owner != NO_OWNER else None,
            "index": names.get(owner, f"index id {owner}") if owner != NO_OWNER else None,
            "level": d.fact("level", i), "records": d.fact("records", i),
            "fill": None if math.isnan(fill) else fill, "lsn": int(u["lsn"]),
            "stored": int(u["stored"]), "logical": int(u["logical"]), "physical": d.physical,
            "allocated": max(0, d.physical - hole), "hole": hole, "flags": flags,
        }
        if kind not in d.index_kinds():
            facts["level"] = facts["records"] = None
        hdr_id = d.fact("owner_id", i)
        facts["header_index_id"] = int(hdr_id) if hdr_id is not None and kind in d.index_kinds() else None
        payload = d.fact("payload_bytes", i)
        facts["payload"] = int(payload) if payload is not None and int(payload) > 0 else None
        for k in ("level", "records"):
            if facts[k] is not None:
                facts[k] = int(facts[k])
        return facts

    def page_tooltip(self, page: int) -> str:
        f = self.page_facts(page)
        fl = f["flags"]
        lines = [f"<b>Page {f['page']:,}</b> (extent {f['extent']:,}, page {f['in_extent']} in extent) "
                 f"@ offset {f['offset']:,}",
                 f"Type: {short_type(f['type'])} ({f['type_code']})"]
        if f["index"] is not None:
            s = f"Index: {f['index']}" + ("" if "(id" in f["index"] else f" (id {f['index_id']})")
            if f["level"] is not None:
                s += f", level {f['level']}"
            if f["records"] is not None:
                s += f", {f['records']:,} records"
            lines.append(s)
        elif f["level"] is not None:
            lines.append(f"B-tree page of index id {f['header_index_id']} (not owned: stale), level {f['level']}, "
                         f"{f['records']:,} records")
        lines.append("Fill: " + ("n/a" if f["fill"] is None else f"{100 * f['fill']:.1f}%"))
        lines.append(f"LSN: {f['lsn']:,}" if f["lsn"] else "LSN: 0 (never written)")
        if fl & UNIT_COMPRESSED:
            page = f["logical"] or f["physical"]
            pay = f"{f['payload']:,} B compressed in " if f.get("payload") else ""
            lines.append(f"Payload: {pay}{f['stored']:,} B stored of {human_bytes(page)} page "
                         f"({100.0 * f['stored'] / max(1, page):.1f}%)")
        else:
            lines.append(f"Payload: {f['stored']:,} B ({human_bytes(f['physical'])} page)")
        alloc = f"Allocated: {f['allocated']:,} B on disk"
        if f["hole"]:
            alloc += f" ({human_bytes(f['hole'])} hole)"
        lines.append(alloc)
        flags = [n for bit, n in ((UNIT_FREE, "free"), (UNIT_LEAF, "leaf"), (UNIT_COMPRESSED, "compressed"),
                                  (UNIT_BAD_CHECKSUM, "BAD CHECKSUM"), (UNIT_ENCRYPTED, "encrypted"),
                                  (UNIT_CORRUPT, "corrupt"), (UNIT_HOLE, "in hole"),
                                  (UNIT_HOLE_MISSING, "HOLE MISSING")) if fl & bit]
        if flags:
            lines.append("Flags: " + ", ".join(flags))
        return "<br>".join(lines)


def _has_pages(entry: FileEntry) -> bool:
    """A file with units whose engine lays them out on the map (``Engine.unit_geometry``)."""
    return unit_map_shows(entry)


#: file lists longer than this are shown through a FileListModel
COMBO_ITEMS_MAX = 2000


def file_label(e: FileEntry) -> str:
    """A file as the file list names it: its path and how many units it holds."""
    geo = engines.get(e.engine).unit_geometry(e)
    return f"{e.path}  ({len(e.units):,} {geo.unit_name}s)"


class FileListModel(QAbstractListModel):
    """The map's file list as a list model: each label made when the list shows it."""

    def __init__(self, files: list[FileEntry], parent=None):
        super().__init__(parent)
        self.files = files

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.files)

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid() or not 0 <= index.row() < len(self.files):
            return None
        e = self.files[index.row()]
        if role == Qt.DisplayRole:
            return file_label(e)
        if role == Qt.UserRole:
            return e.path
        return None


def mapped_files(dataset) -> list[FileEntry]:
    """The files of a dataset the unit map can draw."""
    if dataset is None:
        return []
    return [e for e in dataset.files if _has_pages(e)]


__all__ = ["ExtentMapView", "MapData", "MODES", "mapped_files", "fill_height_image"]

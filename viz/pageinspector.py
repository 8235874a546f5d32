"""The page inspector: one InnoDB page's header fields and a hex view whose
byte regions are coloured (FIL header, page header, records, free space, page
directory, FIL trailer; compressed payload and punched tail for
page-compressed pages).

The decoding is the parser's (``parsers.innodb``); this module only reads
the page's bytes and draws them.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QColor, QFontDatabase, QFontMetrics, QPainter
from PySide6.QtWidgets import (QAbstractItemView, QAbstractScrollArea, QHeaderView, QLabel,
                               QSplitter, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from dbxray.parsers.humanize import human_bytes
from dbxray.parsers.model import UNIT_COMPRESSED, FileEntry

REGION_COLOURS = {
    "FIL header": "#90CAF9",
    "page header": "#CE93D8",
    "FSEG header": "#B39DDB",
    "records": "#A5D6A7",
    "free space": "#EEEEEE",
    "page directory": "#FFCC80",
    "FIL trailer": "#64B5F6",
    "compressed payload": "#FFF59D",
    "padding": "#E0E0E0",
    "punched / unused": "#ECEFF1",
    "page body": "#DCEDC8",
    "checksum": "#64B5F6",
}
_SPARE = ["#FFAB91", "#80CBC4", "#F48FB1", "#C5E1A5", "#BCAAA4", "#B0BEC5"]


def region_colour(name: str) -> str:
    if name in REGION_COLOURS:
        return REGION_COLOURS[name]
    low = name.lower()
    for k, v in REGION_COLOURS.items():
        if k.lower() in low:
            return v
    return _SPARE[sum(map(ord, name)) % len(_SPARE)]


@dataclass
class PageDecode:
    """What the inspector shows of one page."""

    data: bytes
    fields: list[tuple[str, str, int | None]] = field(default_factory=list)   # (name, value, byte offset)
    regions: list[tuple[int, int, str]] = field(default_factory=list)         # [start, end) name
    note: str = ""


def read_page_bytes(entry: FileEntry, offset: int, size: int) -> bytes:
    try:
        from dbxray.parsers.fileio import ReadOnlyFile
        with ReadOnlyFile(entry.abspath) as f:
            return bytes(f.pread(offset, size))
    except Exception:
        try:
            with open(entry.abspath, "rb") as fh:
                fh.seek(offset)
                return fh.read(size)
        except OSError:
            return b""


#: byte offsets of the header fields the parser names (fil0types.h, page0page.h)
FIELD_OFFSETS = {
    "FIL_PAGE_SPACE_OR_CHKSUM": 0, "FIL_PAGE_OFFSET": 4, "FIL_PAGE_PREV": 8, "FIL_PAGE_NEXT": 12,
    "FIL_PAGE_LSN": 16, "FIL_PAGE_TYPE": 24, "FIL_PAGE_FILE_FLUSH_LSN": 26, "FIL_PAGE_SPACE_ID": 34,
    "PAGE_N_DIR_SLOTS": 38, "PAGE_HEAP_TOP": 40, "PAGE_N_HEAP": 42, "format": 42, "PAGE_FREE": 44,
    "PAGE_GARBAGE": 46, "PAGE_LAST_INSERT": 48, "PAGE_DIRECTION": 50, "PAGE_N_DIRECTION": 52,
    "PAGE_N_RECS": 54, "PAGE_MAX_TRX_ID": 56, "PAGE_LEVEL": 64, "PAGE_INDEX_ID": 66,
    "PAGE_BTR_SEG_LEAF": 74, "PAGE_BTR_SEG_TOP": 84,
}
_NOT_FIELDS = ("regions", "data", "raw")


def parser_decoder():
    """The InnoDB parser's one-page inspector (``inspect_page(entry, page_no)``), if present."""
    try:
        m = importlib.import_module("dbxray.parsers.innodb.scan")
    except ImportError:
        return None
    f = getattr(m, "inspect_page", None)
    return f if callable(f) else None


def _fmt(v) -> str:
    if isinstance(v, bool) or v is None:
        return "-" if v is None else str(v)
    if isinstance(v, int):
        return f"{v:,}" if abs(v) < 1 << 32 else f"{v:,} (0x{v:X})"
    if isinstance(v, (tuple, list)):
        return ", ".join(_fmt(x) for x in v)
    return str(v)


def _logical_bytes(entry: FileEntry, page_no: int, raw: bytes) -> bytes:
    try:
        from dbxray.parsers.innodb.payloads import unit_payload
        return unit_payload(entry, page_no)
    except Exception:
        return raw


def decode_page(entry: FileEntry, page_no: int, unit=None) -> PageDecode:
    """Header fields and byte regions of one page: the parser's inspector when the file
    was read by it (page-compressed pages are shown decompressed), else a FIL-level view."""
    sec = entry.sections.get("innodb") or {}
    logical = int(sec.get("page_size") or 16384)
    physical = int(sec.get("physical_page_size") or logical)
    offset = int(unit["offset"]) if unit is not None else page_no * physical
    raw = read_page_bytes(entry, offset, physical)
    dec = parser_decoder()
    if dec is not None and (entry.detail.get("innodb") or {}).get("page_map") is not None:
        try:
            info = dec(entry, page_no)
        except Exception as e:  # a parser failure is shown, not raised
            out = _fallback_decode(entry, raw, page_no, unit, logical, physical)
            out.note = f"parser inspector failed: {type(e).__name__}: {e}"
            return out
        data = _logical_bytes(entry, page_no, raw)
        out = PageDecode(data=data)
        for k, v in info.items():
            if k not in _NOT_FIELDS:
                out.fields.append((k, _fmt(v), FIELD_OFFSETS.get(k)))
        out.regions = [(int(a), int(b), str(n)) for a, b, n in info.get("regions", [])]
        if unit is not None and int(unit["flags"]) & UNIT_COMPRESSED and data != raw:
            out.note = (f"page_compressed: {int(info.get('payload_len') or 0):,} B payload in "
                        f"{int(info.get('stored_bytes') or 0):,} B stored; shown decompressed "
                        f"({len(data):,} B)")
        return out
    return _fallback_decode(entry, raw, page_no, unit, logical, physical)


def _fallback_decode(entry, data, page_no, unit, logical, physical) -> PageDecode:
    """FIL header/trailer, and the INDEX page header for B-tree pages, with the
    parser's field readers (used until the parser exposes its own inspector)."""
    from dbxray.parsers.innodb import fil, index
    out = PageDecode(data=data)
    if len(data) < fil.FIL_PAGE_DATA:
        out.note = "page is truncated"
        out.regions = [(0, len(data), "page body")]
        return out
    h = fil.parse_fil_header(data)
    names = entry.kind_names or {}
    out.fields += [("checksum", f"0x{h.checksum:08X}", 0), ("page number", f"{h.page_no:,}", 4),
                   ("previous page", "FIL_NULL" if h.prev == fil.FIL_NULL else f"{h.prev:,}", 8),
                   ("next page", "FIL_NULL" if h.next == fil.FIL_NULL else f"{h.next:,}", 12),
                   ("LSN", f"{h.lsn:,}", 16),
                   ("page type", f"{names.get(h.page_type, '')} ({h.page_type})".strip(), 24),
                   ("flush LSN / key version", f"{h.flush_lsn_or_key_version:,}", 26),
                   ("space id", f"{h.space_id:,}", 34)]
    compressed = unit is not None and int(unit["flags"]) & UNIT_COMPRESSED and physical == logical
    if compressed:
        stored = int(unit["stored"]) or physical
        hdr = 26 if h.page_type & 0x8000 else fil.FIL_PAGE_DATA
        out.regions = [(0, hdr, "FIL header"), (hdr, min(stored, physical), "compressed payload"),
                       (min(stored, physical), physical, "punched / unused")]
        out.fields.append(("payload", f"{stored:,} B of {physical:,}", None))
        out.note = "page_compressed: payload as stored on disk"
        return out
    kind = int(unit["kind"]) if unit is not None else h.page_type
    if kind in (fil.FIL_PAGE_INDEX, fil.FIL_PAGE_RTREE, fil.FIL_PAGE_TYPE_INSTANT, fil.FIL_PAGE_SDI) \
            and physical == logical:
        ih = index.parse_index_header(data)
        base = index.PAGE_HEADER
        out.fields += [("n_dir_slots", f"{ih.n_dir_slots:,}", base + 0), ("heap top", f"{ih.heap_top:,}", base + 2),
                       ("n_heap", f"{ih.n_heap:,}", base + 4),
                       ("format", "COMPACT" if ih.compact else "REDUNDANT", base + 4),
                       ("free", f"{ih.free:,}", base + 6), ("garbage", f"{ih.garbage:,} B", base + 8),
                       ("records", f"{ih.n_recs:,}", base + 16), ("max trx id", f"{ih.max_trx_id:,}", base + 18),
                       ("level", f"{ih.level}", base + 26), ("index id", f"{ih.index_id:,}", base + 28),
                       ("data size", f"{ih.data_size:,} B", None)]
        out.regions = index.page_regions(ih, logical)
        return out
    out.regions = [(0, fil.FIL_PAGE_DATA, "FIL header"), (fil.FIL_PAGE_DATA, physical - 8, "page body"),
                   (physical - 8, physical, "FIL trailer")]
    return out


class HexView(QAbstractScrollArea):
    """16 bytes a line (8 when the view is too narrow for 16, e.g. in a side dock),
    offset | hex | ASCII; each byte's background is its region's colour."""

    def __init__(self, parent=None):
        super().__init__(parent)
        f = QFontDatabase.systemFont(QFontDatabase.FixedFont)
        f.setPointSizeF(max(8.0, f.pointSizeF()))
        self.setFont(f)
        self.data = b""
        self.region_of = b""          # region index per byte
        self.regions: list[tuple[int, int, str]] = []
        self.colours: list[QColor] = []
        self.bpl = 16                 # bytes per line
        self._metrics()

    def _metrics(self) -> None:
        fm = QFontMetrics(self.font())
        self.cw = fm.horizontalAdvance("0")
        self.lh = fm.height() + 2
        self.ascent = fm.ascent()

    def set_page(self, data: bytes, regions: list[tuple[int, int, str]]) -> None:
        self.data = data
        self.regions = [r for r in regions if r[1] > r[0]]
        names = []
        for _, _, n in self.regions:
            if n not in names:
                names.append(n)
        self.names = names
        self.colours = [QColor(region_colour(n)) for n in names] + [QColor("#FFFFFF")]
        ridx = bytearray([len(names)]) * len(data)
        for s, e, n in self.regions:
            s, e = max(0, s), min(len(data), e)
            if e > s:
                ridx[s:e] = bytes([names.index(n)]) * (e - s)
        self.region_of = bytes(ridx)
        self.verticalScrollBar().setRange(0, max(0, self.n_lines() - self.visible_lines()))
        self.verticalScrollBar().setPageStep(self.visible_lines())
        self.verticalScrollBar().setValue(0)
        self.viewport().update()

    def region_at(self, offset: int) -> str | None:
        if 0 <= offset < len(self.region_of):
            i = self.region_of[offset]
            return self.names[i] if i < len(self.names) else None
        return None

    def n_lines(self) -> int:
        return (len(self.data) + self.bpl - 1) // self.bpl

    def visible_lines(self) -> int:
        return max(1, self.viewport().height() // self.lh)

    def line_width(self, bpl: int) -> int:
        """Pixels a line of ``bpl`` bytes needs (offset, hex, gap, ASCII)."""
        return self.cw * (8 + bpl * 3 + 2 + bpl) + self.cw

    def resizeEvent(self, ev) -> None:
        super().resizeEvent(ev)
        self.bpl = 16 if self.viewport().width() >= self.line_width(16) else 8
        self.verticalScrollBar().setRange(0, max(0, self.n_lines() - self.visible_lines()))
        self.verticalScrollBar().setPageStep(self.visible_lines())

    def sizeHint(self) -> QSize:
        return QSize(self.cw * 78 + 30, 300)

    def scroll_to(self, offset: int) -> None:
        self.verticalScrollBar().setValue(max(0, offset // self.bpl - 2))

    def paintEvent(self, ev) -> None:
        p = QPainter(self.viewport())
        p.setFont(self.font())
        p.fillRect(self.viewport().rect(), QColor("#FFFFFF"))
        first = self.verticalScrollBar().value()
        n = self.visible_lines() + 1
        cw, lh = self.cw, self.lh
        x_hex = cw * 8
        bpl = self.bpl
        half = bpl // 2
        x_asc = x_hex + cw * (bpl * 3 + 2)
        grey, ink = QColor("#757575"), QColor("#212121")
        for li in range(first, min(self.n_lines(), first + n)):
            y = (li - first) * lh
            base = li * bpl
            p.setPen(grey)
            p.drawText(4, y + self.ascent + 1, f"{base:06X}")
            chunk = self.data[base:base + bpl]
            for j, b in enumerate(chunk):
                ri = self.region_of[base + j]
                col = self.colours[ri]
                xh = x_hex + j * 3 * cw + (cw if j >= half else 0)
                gapw = cw * 4 if j == half - 1 and base + half < len(self.region_of) and \
                    self.region_of[base + half] == ri else cw * 3
                p.fillRect(QRect(xh - cw // 2, y, gapw, lh), col)
                p.fillRect(QRect(x_asc + j * cw, y, cw, lh), col)
                p.setPen(ink if b else grey)
                p.drawText(xh, y + self.ascent + 1, f"{b:02X}")
                p.drawText(x_asc + j * cw, y + self.ascent + 1, chr(b) if 32 <= b < 127 else "·")
        p.end()


class PageInspector(QWidget):
    """Header fields (table) + region legend + coloured hex view of one page."""

    def __init__(self, parent=None, orientation=Qt.Horizontal):
        super().__init__(parent)
        self.title = QLabel("<i>Click a page in the extent map to inspect it</i>")
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.note = QLabel("")
        self.note.setStyleSheet("color: #616161")
        self.note.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.fields = QTableWidget(0, 3)
        self.fields.setHorizontalHeaderLabels(["field", "value", "offset"])
        self.fields.verticalHeader().setVisible(False)
        self.fields.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.fields.setSelectionBehavior(QAbstractItemView.SelectRows)
        hh = self.fields.horizontalHeader()
        hh.setSectionResizeMode(0, QHeaderView.ResizeToContents)
        hh.setSectionResizeMode(1, QHeaderView.Stretch)
        hh.setSectionResizeMode(2, QHeaderView.ResizeToContents)
        self.fields.itemSelectionChanged.connect(self._on_field)
        self.legend = QLabel("")
        self.legend.setWordWrap(True)
        self.hex = HexView()
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(self.legend)
        rl.addWidget(self.hex, 1)
        split = QSplitter(orientation)
        split.addWidget(self.fields)
        split.addWidget(right)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        split.setSizes([300, 560] if orientation == Qt.Horizontal else [260, 420])
        self.split = split
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.title)
        lay.addWidget(self.note)
        lay.addWidget(split, 1)
        lay.addStretch(0)               # keeps the hint at the top while no page is shown
        self.decoded: PageDecode | None = None
        self.page_no: int | None = None
        self.facts: dict = {}
        self.split.setVisible(False)          # nothing to show until a page is clicked
        self.legend.setVisible(False)
        self.note.setVisible(False)

    def show_page(self, entry: FileEntry, page_no: int, unit=None, facts: dict | None = None) -> PageDecode:
        self.page_no = page_no
        self.split.setVisible(True)
        self.legend.setVisible(True)
        self.facts = dict(facts or {})
        dec = decode_page(entry, page_no, unit)
        self.decoded = dec
        kind = self.facts.get("type") or ""
        idx = self.facts.get("index")
        t = f"<b>Page {page_no:,}</b> of {entry.path}"
        if kind:
            t += f" — {kind}"
        if idx:
            t += f" — index {idx}"
        self.title.setText(t)
        self.note.setText(dec.note)
        self.note.setVisible(bool(dec.note))
        rows = list(dec.fields)
        if self.facts:
            f = self.facts
            rows.append(("— map facts —", "", None))
            if f.get("fill") is not None:
                rows.append(("fill", f"{100 * f['fill']:.1f}%", None))
            rows.append(("stored (payload)", f"{f.get('stored', 0):,} B", None))
            rows.append(("allocated on disk", f"{f.get('allocated', 0):,} B", None))
            if f.get("hole"):
                rows.append(("hole in page", f"{f['hole']:,} B", None))
        self.fields.setRowCount(len(rows))
        for r, (name, value, off) in enumerate(rows):
            self.fields.setItem(r, 0, QTableWidgetItem(str(name)))
            self.fields.setItem(r, 1, QTableWidgetItem(str(value)))
            it = QTableWidgetItem("" if off is None else f"{int(off)}")
            it.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
            it.setData(Qt.UserRole, off)
            self.fields.setItem(r, 2, it)
        self.fields.resizeRowsToContents()
        self.hex.set_page(dec.data, dec.regions)
        chips = []
        sizes: dict[str, int] = {}
        for s, e, n in dec.regions:
            sizes[n] = sizes.get(n, 0) + max(0, e - s)
        for n, sz in sizes.items():
            chips.append(f"<span style='background:{region_colour(n)};color:#212121'>&nbsp;{n}&nbsp;</span>"
                         f" {human_bytes(sz) if sz >= 1024 else f'{sz} B'}")
        self.legend.setText(" &nbsp; ".join(chips))
        return dec

    def field_value(self, name: str) -> str | None:
        for r in range(self.fields.rowCount()):
            if self.fields.item(r, 0).text() == name:
                return self.fields.item(r, 1).text()
        return None

    def _on_field(self) -> None:
        rows = self.fields.selectionModel().selectedRows()
        if rows:
            off = self.fields.item(rows[0].row(), 2).data(Qt.UserRole)
            if off is not None:
                self.hex.scroll_to(int(off))


__all__ = ["PageInspector", "HexView", "decode_page", "PageDecode", "region_colour"]

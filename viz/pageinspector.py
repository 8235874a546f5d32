"""The page inspector: one InnoDB page's header fields and a hex view whose
byte regions are coloured (FIL header, page header, records, free space, page
directory, FIL trailer; compressed payload and punched tail for
page-compressed pages).

The facts are the engine's (``Engine.inspect_unit``: for InnoDB
parsers/innodb/inspect.py); this module only draws them.
"""
from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QColor, QFontDatabase, QFontMetrics, QPainter
from PySide6.QtWidgets import (QAbstractItemView, QAbstractScrollArea, QHBoxLayout, QHeaderView, QLabel, QLineEdit,
                               QSplitter, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from dbxray.parsers.humanize import human_bytes
from dbxray.parsers import engines
from dbxray.parsers.engine import UnitInspection
from dbxray.parsers.model import FileEntry

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


def parse_offset(text: str) -> int | None:
    """An offset typed as decimal (``1234``) or hex (``0x4d2``, ``4d2h``, ``$4d2``)."""
    t = text.strip().lower().replace("_", "").replace(",", "")
    try:
        if t.startswith(("0x", "$")):
            return int(t.lstrip("$").removeprefix("0x"), 16)
        if t.endswith("h"):
            return int(t[:-1], 16)
        return int(t, 10)
    except ValueError:
        return None


def parse_pattern(text: str) -> bytes:
    """A search typed as hex bytes (``53 59 53``, ``0x5359``) or, failing that, as text (UTF-8)."""
    t = text.strip()
    h = t.lower().removeprefix("0x").replace(" ", "")
    if h and len(h) % 2 == 0 and all(c in "0123456789abcdef" for c in h) and (" " in t or t.lower().startswith("0x")
                                                                              or len(h) >= 4 and not t.isalpha()):
        return bytes.fromhex(h)
    return t.encode("utf-8")


def find_next(data: bytes, pattern: bytes, start: int) -> int:
    """Offset of ``pattern`` at or after ``start`` (wrapping to the start), or -1."""
    if not pattern:
        return -1
    i = data.find(pattern, max(0, start))
    return i if i >= 0 else data.find(pattern)


class HexView(QAbstractScrollArea):
    """16 bytes a line, as every hex editor (ImHex, ...): offset | hex | ASCII; each
    byte's background is its region's colour; a narrow view scrolls sideways.  A found
    match or a go-to offset is outlined."""

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
        self.mark: tuple[int, int] | None = None       # [start, end) outlined
        self.horizontalScrollBar().valueChanged.connect(lambda _: self.viewport().update())
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
        self.verticalScrollBar().setRange(0, max(0, self.n_lines() - self.visible_lines()))
        self.verticalScrollBar().setPageStep(self.visible_lines())
        hs = self.horizontalScrollBar()
        hs.setRange(0, max(0, self.line_width(self.bpl) + 8 - self.viewport().width()))
        hs.setPageStep(self.viewport().width())

    def mark_range(self, start: int, end: int) -> None:
        """Outline bytes [start, end) and scroll to them."""
        self.mark = (start, end)
        self.scroll_to(start)
        self.viewport().update()

    def sizeHint(self) -> QSize:
        return QSize(self.cw * 78 + 30, 300)

    def scroll_to(self, offset: int) -> None:
        self.verticalScrollBar().setValue(max(0, offset // self.bpl - 2))

    def paintEvent(self, ev) -> None:
        p = QPainter(self.viewport())
        p.setFont(self.font())
        p.fillRect(self.viewport().rect(), QColor("#FFFFFF"))
        p.translate(-self.horizontalScrollBar().value(), 0)
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
                if self.mark is not None and self.mark[0] <= base + j < self.mark[1]:
                    p.setPen(QColor("#D50000"))
                    p.drawRect(QRect(xh - cw // 2, y, cw * 3 - 1, lh - 1))
                    p.drawRect(QRect(x_asc + j * cw, y, cw - 1, lh - 1))
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
        self.goto_offset = QLineEdit()
        self.goto_offset.setPlaceholderText("offset (0x…)")
        self.goto_offset.setToolTip("Go to an offset in the page: decimal or hex (0x1f0), Enter")
        self.goto_offset.returnPressed.connect(self._on_goto_offset)
        self.find_box = QLineEdit()
        self.find_box.setPlaceholderText("find hex (53 59) or text")
        self.find_box.setToolTip("Find bytes in the page: hex pairs (\"53 59 53\", 0x5359) or text; Enter finds the next")
        self.find_box.returnPressed.connect(self._on_find)
        self.find_status = QLabel("")
        self.find_status.setStyleSheet("color: #616161")
        tools = QHBoxLayout()
        tools.setContentsMargins(0, 0, 0, 0)
        tools.addWidget(self.goto_offset, 1)
        tools.addWidget(self.find_box, 2)
        tools.addWidget(self.find_status)
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(self.legend)
        rl.addLayout(tools)
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
        self.decoded: UnitInspection | None = None
        self.page_no: int | None = None
        self.facts: dict = {}
        self.split.setVisible(False)          # nothing to show until a page is clicked
        self.legend.setVisible(False)
        self.note.setVisible(False)

    def show_page(self, entry: FileEntry, page_no: int, unit=None, facts: dict | None = None) -> UnitInspection:
        self.page_no = page_no
        self.split.setVisible(True)
        self.legend.setVisible(True)
        self.facts = dict(facts or {})
        dec = inspect_unit(entry, page_no, unit)
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
        self.hex.mark = None
        self.find_status.setText("")
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

    def _on_goto_offset(self) -> None:
        off = parse_offset(self.goto_offset.text())
        if off is None or not 0 <= off < len(self.hex.data):
            self.find_status.setText(f"offset out of the page (0–{max(0, len(self.hex.data) - 1)})")
            return
        self.find_status.setText(f"@ {off} = 0x{off:X}")
        self.hex.mark_range(off, off + 1)

    def _on_find(self) -> None:
        pattern = parse_pattern(self.find_box.text())
        start = self.hex.mark[0] + 1 if self.hex.mark is not None else 0
        i = find_next(self.hex.data, pattern, start)
        if i < 0:
            self.find_status.setText("not found")
            return
        self.find_status.setText(f"found @ {i} = 0x{i:X}")
        self.hex.mark_range(i, i + len(pattern))

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


def inspect_unit(entry: FileEntry, i: int, unit=None) -> UnitInspection:
    """The engine's facts of one unit (an empty inspection for an engine that has none)."""
    engine = engines.get(entry.engine)
    if engine is None:
        return UnitInspection(data=b"", note="no engine reads this file")
    return engine.inspect_unit(entry, i, unit)


__all__ = ["PageInspector", "HexView", "inspect_unit", "UnitInspection", "region_colour"]

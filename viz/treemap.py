"""A squarified treemap (Bruls, Huizing, van Wijk 2000) as a QGraphicsObject.

``squarify(values, x, y, w, h)`` is the pure layout (rectangles whose areas are
proportional to the values, aspect ratios close to 1).  :class:`TreemapItem`
draws a hierarchy of :class:`TreeBox` (database > table > column for
ClickHouse): every group gets a title strip, leaves are coloured by their
top-level group, labelled where the text fits and carry a tooltip.  It lives
in any QGraphicsScene (a plain QGraphicsView or a pyqtgraph ViewBox);
:class:`TreemapWidget` is a QGraphicsView that re-lays the map out to fill
itself whenever it is resized.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import (QGraphicsItem, QGraphicsObject, QGraphicsRectItem, QGraphicsScene,
                               QGraphicsSimpleTextItem, QGraphicsView)

from dbxray.parsers.humanize import human_bytes

from . import theme


@dataclass
class TreeBox:
    """One box of the map: a leaf (value) or a group (sum of its children)."""

    name: str
    value: float = 0.0
    children: list["TreeBox"] = field(default_factory=list)
    tooltip: str = ""
    payload: Any = None
    label: str | None = None         # text drawn in the box (default: name)

    @property
    def total(self) -> float:
        """Value of a leaf, sum of the leaves below a group (cached; call
        :meth:`invalidate` after changing values)."""
        t = self.__dict__.get("_total")
        if t is None:
            t = float(sum(c.total for c in self.children)) if self.children else float(max(self.value, 0.0))
            self.__dict__["_total"] = t
        return t

    def invalidate(self) -> None:
        self.__dict__.pop("_total", None)
        for c in self.children:
            c.invalidate()


# -- layout ------------------------------------------------------------------------

def _worst(row: list[float], side: float) -> float:
    s = sum(row)
    if s <= 0 or side <= 0:
        return float("inf")
    return max(max(side * side * r / (s * s), (s * s) / (side * side * r)) for r in row if r > 0)


def squarify(values: list[float], x: float, y: float, w: float, h: float) -> list[QRectF]:
    """Rectangles tiling (x, y, w, h), one per value, areas proportional to values.

    Values must be >= 0; zeros get empty rectangles.  Order is kept (callers
    sort descending for the best aspect ratios).
    """
    out = [QRectF(x, y, 0, 0) for _ in values]
    total = float(sum(v for v in values if v > 0))
    if total <= 0 or w <= 0 or h <= 0:
        return out
    scale = w * h / total
    items = [(i, v * scale) for i, v in enumerate(values) if v > 0]
    rx, ry, rw, rh = float(x), float(y), float(w), float(h)
    k = 0
    while k < len(items):
        side = min(rw, rh)
        row = [items[k]]
        k += 1
        while k < len(items):
            cand = row + [items[k]]
            if _worst([a for _, a in cand], side) <= _worst([a for _, a in row], side):
                row = cand
                k += 1
            else:
                break
        s = sum(a for _, a in row)
        if k >= len(items):          # last row takes the remainder exactly (no float drift)
            s = rw * rh
        if rw >= rh:                 # a column on the left of the remaining rectangle
            cw = s / rh if rh > 0 else 0.0
            yy = ry
            for n, (i, a) in enumerate(row):
                hh = a / cw if cw > 0 else 0.0
                if k >= len(items) and n == len(row) - 1:
                    hh = ry + rh - yy
                out[i] = QRectF(rx, yy, cw, hh)
                yy += hh
            rx += cw
            rw -= cw
        else:                        # a row along the top
            rh_ = s / rw if rw > 0 else 0.0
            xx = rx
            for n, (i, a) in enumerate(row):
                ww = a / rh_ if rh_ > 0 else 0.0
                if k >= len(items) and n == len(row) - 1:
                    ww = rx + rw - xx
                out[i] = QRectF(xx, ry, ww, rh_)
                xx += ww
            ry += rh_
            rh -= rh_
    return out


# -- drawing ---------------------------------------------------------------------------

class TreemapItem(QGraphicsObject):
    """A hierarchy drawn as nested squarified boxes inside ``rect``.

    After :meth:`set_tree`, ``self.leaf_rects`` maps every leaf (by identity,
    in order) to its rectangle and ``self.group_rects`` every group to its
    outer rectangle, for tests and hit lookups.  ``clicked(payload)`` is
    emitted when a box is clicked.
    """

    clicked = Signal(object)

    HEADER = 18.0       # title strip of a group (px)
    PAD = 2.0           # inner padding of a group

    def __init__(self, parent: QGraphicsItem | None = None):
        super().__init__(parent)
        self._rect = QRectF(0, 0, 400, 300)
        self.root: TreeBox | None = None
        self.leaf_rects: list[tuple[TreeBox, QRectF]] = []
        self.group_rects: list[tuple[TreeBox, QRectF, int]] = []   # (box, outer rect, depth)
        self.font = QFont()
        self.font.setPointSizeF(8.5)
        self.title_font = QFont(self.font)
        self.title_font.setBold(True)
        self._children: list[QGraphicsItem] = []
        self.highlight: Any = None
        self._hl_item: QGraphicsRectItem | None = None
        self._colour_depth = 0
        self._ncolour = 0

    # QGraphicsItem
    def boundingRect(self) -> QRectF:
        return QRectF(self._rect)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        pass

    def set_rect(self, rect: QRectF) -> None:
        self.prepareGeometryChange()
        self._rect = QRectF(rect)
        self._rebuild()

    def set_tree(self, root: TreeBox | None) -> None:
        self.root = root
        self._rebuild()

    # layout + items
    def _clear(self) -> None:
        scene = self.scene()
        for it in self._children:
            it.setParentItem(None)
            if scene is not None:
                scene.removeItem(it)
        self._children = []
        self.leaf_rects = []
        self.group_rects = []

    def _rebuild(self) -> None:
        hl = self.highlight
        self.set_highlight(None)
        self._clear()
        if self.root is None or self.root.total <= 0:
            return
        try:
            self._layout_all()
        finally:
            if hl is not None:
                self.set_highlight(hl)

    def _layout_all(self) -> None:
        fg = QColor(theme.foreground())
        self._frame_pens = (QPen(fg, 1.2), QPen(fg, 0.8))
        self._leaf_pen = QPen(QColor(theme.background()), 0.8)
        kids = [c for c in self.root.children if c.total > 0] if self.root.children else [self.root]
        kids.sort(key=lambda c: -c.total)
        # colour by the deepest group level above the leaves (tables, not the database)
        self._colour_depth = 1 if any(g.children for c in kids for g in c.children) else 0
        self._ncolour = 0
        rects = squarify([c.total for c in kids], self._rect.x(), self._rect.y(),
                         self._rect.width(), self._rect.height())
        for c, r in zip(kids, rects):
            self._place(c, r, 0, QColor("#546E7A"))

    def _place(self, box: TreeBox, r: QRectF, depth: int, colour: QColor) -> None:
        if r.width() <= 0.5 or r.height() <= 0.5:
            return
        if depth == self._colour_depth:
            colour = QColor(theme.CATEGORICAL[self._ncolour % len(theme.CATEGORICAL)])
            self._ncolour += 1
        if not box.children:
            self._leaf(box, r, colour)
            return
        self.group_rects.append((box, QRectF(r), depth))
        frame = QGraphicsRectItem(r, self)
        frame.setPen(self._frame_pens[0 if depth == 0 else 1])
        fill = colour.darker(135) if depth <= self._colour_depth else colour.lighter(130)
        frame.setBrush(QBrush(fill))
        frame.setToolTip(box.tooltip or box.name)
        frame.setData(0, box.payload)
        self._children.append(frame)
        header = self.HEADER if r.height() > 2 * self.HEADER and r.width() > 30 else 0.0
        if header:
            self._text(box.label or box.name, QRectF(r.x() + 3, r.y() + 1, r.width() - 6, header - 2),
                       self.title_font, _ink(fill), suffix=_human(box.total))
        inner = QRectF(r.x() + self.PAD, r.y() + header + (0 if header else self.PAD),
                       r.width() - 2 * self.PAD, r.height() - header - (self.PAD if header else 2 * self.PAD))
        kids = [c for c in box.children if c.total > 0]
        kids.sort(key=lambda c: -c.total)
        rects = squarify([c.total for c in kids], inner.x(), inner.y(), inner.width(), inner.height())
        for c, cr in zip(kids, rects):
            self._place(c, cr, depth + 1, colour)

    def _leaf(self, box: TreeBox, r: QRectF, colour: QColor) -> None:
        self.leaf_rects.append((box, QRectF(r)))
        item = QGraphicsRectItem(r, self)
        item.setPen(self._leaf_pen)
        shade = colour.lighter(105 + (len(self.leaf_rects) * 37) % 45)
        item.setBrush(QBrush(shade))
        item.setToolTip(box.tooltip or f"{box.name}: {_human(box.total)}")
        item.setData(0, box.payload)
        item.setAcceptHoverEvents(True)
        self._children.append(item)
        self._text(box.label or box.name, QRectF(r.x() + 2, r.y() + 1, r.width() - 4, r.height() - 2),
                   self.font, _ink(shade), suffix=_human(box.total), two_lines=True)

    def _text(self, text: str, r: QRectF, font: QFont, colour: QColor, suffix: str = "",
              two_lines: bool = False) -> None:
        """Draw ``text`` (and the size) inside r when it fits; nothing otherwise."""
        fm = QFontMetricsF(font)
        if r.height() < fm.height() or r.width() < fm.horizontalAdvance("W…"):
            return
        full = f"{text}  {suffix}" if suffix else text
        if two_lines and suffix and r.height() >= 2 * fm.height() and \
                fm.horizontalAdvance(text) <= r.width() and fm.horizontalAdvance(suffix) <= r.width():
            lines = [text, suffix]
        elif fm.horizontalAdvance(full) <= r.width():
            lines = [full]
        elif fm.horizontalAdvance(text) <= r.width():
            lines = [text]
        else:
            short = fm.elidedText(text, Qt.ElideRight, r.width())
            if len(short) < 4 or short == "…":
                return
            lines = [short]
        for n, line in enumerate(lines):
            t = QGraphicsSimpleTextItem(line, self)
            t.setFont(font)
            t.setBrush(QBrush(colour))
            t.setPos(r.x(), r.y() + n * fm.height())
            t.setAcceptedMouseButtons(Qt.NoButton)
            t.setAcceptHoverEvents(False)
            self._children.append(t)

    def set_highlight(self, payload: Any) -> QRectF | None:
        """Outline the box whose payload equals ``payload`` (None clears); its rect."""
        self.highlight = payload
        if getattr(self, "_hl_item", None) is not None:
            self._hl_item.setParentItem(None)
            if self.scene() is not None:
                self.scene().removeItem(self._hl_item)
            self._hl_item = None
        if payload is None:
            return None
        rect = next((r for b, r in self.leaf_rects if b.payload == payload), None)
        if rect is None:
            rect = next((r for b, r, _ in self.group_rects if b.payload == payload), None)
        if rect is None:
            return None
        # white under black: visible on every fill colour
        item = QGraphicsRectItem(rect.adjusted(1.5, 1.5, -1.5, -1.5), self)
        item.setPen(QPen(QColor("#FFFFFF"), 4))
        item.setBrush(Qt.NoBrush)
        item.setZValue(10)
        item.setAcceptedMouseButtons(Qt.NoButton)
        inner = QGraphicsRectItem(rect.adjusted(1.5, 1.5, -1.5, -1.5), item)
        inner.setPen(QPen(QColor("#000000"), 2))
        inner.setBrush(Qt.NoBrush)
        inner.setAcceptedMouseButtons(Qt.NoButton)
        self._hl_item = item
        return rect

    def payload_at(self, pos) -> Any:
        """Payload of the innermost box at a point (item coordinates)."""
        for box, r in self.leaf_rects:
            if r.contains(pos):
                return box.payload
        best = None
        for box, r, depth in self.group_rects:
            if r.contains(pos) and (best is None or depth > best[1]):
                best = (box.payload, depth)
        return best[0] if best else None

    def mousePressEvent(self, event) -> None:
        payload = self.payload_at(event.pos())
        if payload is not None:
            self.clicked.emit(payload)
            event.accept()
        else:
            event.ignore()


class TreemapWidget(QGraphicsView):
    """A QGraphicsView showing one TreemapItem that always fills the view."""

    clicked = Signal(object)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._scene = QGraphicsScene(self)     # keep a reference (QT_NOTES pitfall 4)
        self.setScene(self._scene)
        self.item = TreemapItem()
        self._scene.addItem(self.item)
        self.item.clicked.connect(self.clicked)
        self.setRenderHint(QPainter.Antialiasing, False)
        self.setRenderHint(QPainter.TextAntialiasing, True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setFrameShape(QGraphicsView.NoFrame)
        self.setBackgroundBrush(QBrush(QColor(theme.background())))
        self.setMinimumSize(200, 150)
        self._dirty = False

    def set_tree(self, root: TreeBox | None) -> None:
        """Show ``root``; laid out now when visible, else when first shown."""
        self.item.root = root
        self._dirty = True
        if self.isVisible():
            self.ensure_built()

    def ensure_built(self) -> None:
        """Lay the map out for the current size if the tree or the size changed."""
        vp = self.viewport().rect()
        r = QRectF(0, 0, max(vp.width() - 1, 10), max(vp.height() - 1, 10))
        if self._dirty or r != self.item.boundingRect():
            self._dirty = False
            self.item.set_rect(r)
        self._scene.setSceneRect(QRectF(0, 0, vp.width(), vp.height()))

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self.ensure_built()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.isVisible():
            self.ensure_built()


def _ink(fill: QColor) -> QColor:
    """Black or white text, whichever reads better on ``fill``."""
    lum = 0.299 * fill.redF() + 0.587 * fill.greenF() + 0.114 * fill.blueF()
    return QColor("#111111") if lum > 0.55 else QColor("#FFFFFF")


def _human(n: float) -> str:
    return human_bytes(int(n))

"""Holes: where each file stores data, where it has holes, and where the
engine should have punched holes that are not there.

Top: a banner when a file has lost its sparseness (allocated == apparent
although the engine punches holes in it, e.g. page_compressed InnoDB copied
without ``--sparse``).  Middle: one strip per file along its offset (every
pixel column shows the share of data, holes, unwritten and missing holes in
that slice of the file).  Bottom: apparent vs allocated vs expected bars per
file or per table.

Holes come from ``FileEntry.holes`` for every engine; the "expected" part
only where a parser gives it (``sections[...]['expected_hole_bytes']`` and
``UNIT_HOLE_MISSING`` units).
"""
from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFontMetrics, QImage, QPainter, QPen
from PySide6.QtWidgets import (QCheckBox, QComboBox, QHBoxLayout, QLabel, QScrollArea, QSizePolicy,
                               QSplitter, QToolTip, QVBoxLayout, QWidget)

from dbxray.parsers.humanize import axis_unit, human_bytes, percent, short_label
from dbxray.parsers import engines
from dbxray.parsers.model import FileEntry, expected_hole_bytes, missing_hole_units
from dbxray.parsers.units import as_ranges, covered_per_bin, missing_hole_ranges
from dbxray.parsers.tree import Node, place

from . import theme
from .textfit import BarText, fit_axis_width, needs_refit, place_bar_texts, rows_csv, wrap_title

DATA_COLOUR = theme.ALLOCATED
HOLE_COLOUR = theme.HOLES
UNWRITTEN_COLOUR = theme.UNWRITTEN
MISSING_COLOUR = theme.MISSING_HOLE
EXPECTED_COLOUR = theme.LOGICAL
LOST_FRACTION = 0.1     # a file keeping < 10 % of the holes it should have has lost its sparseness


def _total(r: np.ndarray) -> int:
    return int(r[:, 1].sum()) if len(r) else 0


#: the ranges of a file that has none: one shared, read-only (0, 2) array (the view keeps a
#: row for each of 100,000 files, most of them without holes)
NO_RANGES = np.zeros((0, 2), np.int64)
NO_RANGES.setflags(write=False)


def _ranges(ranges) -> np.ndarray:
    a = as_ranges(ranges) if len(ranges) else NO_RANGES
    return a if len(a) else NO_RANGES


@dataclass(slots=True)
class FileHoles:
    """One file's allocation facts, as the holes view draws them (ranges as (n, 2) arrays)."""

    entry: FileEntry
    apparent: int
    allocated: int
    holes: np.ndarray                     # every hole SEEK_HOLE/FIEMAP reported (entry.holes)
    unwritten: np.ndarray                 # the subset allocated but never written (fallocated)
    missing: np.ndarray                   # should be punched, are allocated
    expected_hole: int | None             # what the engine should have punched (None: unknown)
    hole_bytes: int = 0
    unwritten_bytes: int = 0
    missing_bytes: int = 0
    past_eof: int = 0                     # allocated beyond the size (XFS speculative preallocation)

    @property
    def written(self) -> int:
        """Allocated and written inside the size: what the engine's expectation is about
        (fallocated space and preallocation past EOF are shown on their own)."""
        return max(0, self.allocated - self.unwritten_bytes - self.past_eof)

    @property
    def lost_sparseness(self) -> bool:
        """The engine should have punched holes, and (almost) none are there."""
        if not self.expected_hole or self.expected_hole < max(4096, self.entry.fs_block):
            return False
        real = self.hole_bytes - self.unwritten_bytes
        return real < LOST_FRACTION * self.expected_hole and \
            self.written + self.unwritten_bytes >= self.apparent - self.expected_hole * LOST_FRACTION

    @property
    def expected_allocated(self) -> int | None:
        if self.expected_hole is None:
            return None
        return max(0, self.apparent - self.expected_hole)

    def bins(self, width: int) -> dict[str, np.ndarray]:
        """Bytes of data / hole / unwritten / missing in ``width`` equal slices of the file."""
        width = max(1, int(width))
        edges = (np.arange(width + 1, dtype=np.int64) * max(1, self.apparent)) // width
        lens = np.diff(edges)
        unw = covered_per_bin(self.unwritten, edges)
        hole = covered_per_bin(self.holes, edges) - unw          # unwritten ranges lie inside holes
        hole = np.clip(hole, 0, None)
        miss = covered_per_bin(self.missing, edges)
        data = np.clip(lens - hole - unw - miss, 0, None)
        return {"edges": edges, "len": lens, "hole": hole, "unwritten": unw, "missing": miss, "data": data}


def missing_ranges(entry: FileEntry) -> np.ndarray:
    """Byte ranges the engine should have punched but are allocated (parsers/units.py),
    with the unit size of the engine's geometry."""
    if not missing_hole_units(entry):        # most files: nothing to open
        return np.zeros((0, 2), np.int64)
    engine = engines.get(entry.engine)
    geo = engine.unit_geometry(entry) if engine is not None else None
    return missing_hole_ranges(entry, geo.unit_bytes if geo is not None else 0)


def file_holes(entry: FileEntry) -> FileHoles:
    holes = _ranges(entry.holes)
    unw = _ranges(entry.unwritten or ())
    miss = missing_ranges(entry)
    miss = miss if len(miss) else NO_RANGES
    return FileHoles(entry=entry, apparent=int(entry.apparent_bytes), allocated=int(entry.allocated_bytes),
                     holes=holes, unwritten=unw, missing=miss, expected_hole=expected_hole_bytes(entry),
                     hole_bytes=_total(holes), unwritten_bytes=_total(unw) or entry.unwritten_bytes,
                     missing_bytes=_total(miss), past_eof=entry.past_eof_bytes)


def nice_ticks(total: int, most: int) -> list[int]:
    """Round offsets (1-2-5 steps of the file's unit) from 0 to ``total``, at most ``most``+1."""
    if total <= 0:
        return [0]
    scale, _ = axis_unit(total)
    span = total / scale
    step = None
    for mag in (0.01, 0.1, 1, 10, 100, 1000):
        for m in (1, 2, 5):
            if span / (m * mag) <= most:
                step = m * mag
                break
        if step:
            break
    step = (step or span) * scale
    ticks = [int(round(i * step)) for i in range(int(total // step) + 1)]
    if total - ticks[-1] > step * 0.35:
        ticks.append(total)
    elif ticks[-1] != total:
        ticks[-1] = total
    return ticks


def _offset_label(v: float, scale: float, unit: str) -> str:
    x = v / scale
    return f"{x:.0f} {unit}" if x >= 100 or x == int(x) else f"{x:.1f} {unit}"


class HoleStrips(QWidget):
    """One strip per file along its offset, painted with QPainter (crisp in PNG and SVG)."""

    NAME_W = 250
    INFO_W = 330
    ROW_H = 62
    STRIP_H = 22

    clicked = Signal(object)      # the FileHoles of a clicked row

    def __init__(self, parent=None):
        super().__init__(parent)
        self.rows: list[FileHoles] = []
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
        self.setMouseTracking(True)
        self.last_tooltip = ""
        self.selected = None
        self.message = ""

    def set_selected(self, entry) -> None:
        self.selected = entry
        for i, r in enumerate(self.rows):
            if r.entry is entry:
                parent = self.parentWidget()
                while parent is not None and not isinstance(parent, QScrollArea):
                    parent = parent.parentWidget()
                if parent is not None:
                    parent.ensureVisible(10, 4 + i * self.ROW_H + self.ROW_H // 2, 10, self.ROW_H)
        self.update()

    def row_at(self, y: int) -> int | None:
        i = (y - 4) // self.ROW_H
        return i if 0 <= i < len(self.rows) else None

    #: the narrowest name and facts columns (a narrow window shrinks them to these)
    MIN_NAME_W = 120
    MIN_INFO_W = 170
    MIN_STRIP_W = 110

    def column_widths(self) -> tuple[int, int, int]:
        """(name, strip, facts) widths: NAME_W and INFO_W when there is room, shrunk
        together (down to MIN_*) so the strip keeps MIN_STRIP_W in a narrow view."""
        spare = self.width() - 24 - self.MIN_STRIP_W
        name_w, info_w = self.NAME_W, self.INFO_W
        if name_w + info_w > spare:
            k = max(spare, 0) / (name_w + info_w)
            name_w = max(self.MIN_NAME_W, int(name_w * k))
            info_w = max(self.MIN_INFO_W, int(info_w * k))
        return name_w, max(50, self.width() - name_w - info_w - 24), info_w

    def row_texts(self, fh: FileHoles) -> list[tuple[str, str]]:
        """(where, text) of a row's texts, whole: the name, engine and role, then the facts."""
        e = fh.entry
        line1 = f"{human_bytes(fh.allocated)} allocated of {human_bytes(fh.apparent)}"
        if fh.past_eof:
            line1 += f" (incl. {human_bytes(fh.past_eof)} past EOF)"
        holes_txt = f"holes {human_bytes(fh.hole_bytes)} ({percent(fh.hole_bytes, fh.apparent)})"
        if fh.unwritten_bytes:
            holes_txt += f", {human_bytes(fh.unwritten_bytes)} unwritten"
        out = [("name", e.path), ("kind", f"{e.engine or 'other'} · {e.role}"), ("facts", line1),
               ("facts", holes_txt)]
        if fh.lost_sparseness:
            out.append(("warn", f"⚠ sparseness lost: {human_bytes(fh.expected_hole)} expected"))
        elif fh.missing_bytes:
            out.append(("warn", f"⚠ {human_bytes(fh.missing_bytes)} of holes missing"))
        elif fh.expected_hole is not None:
            out.append(("facts", f"engine expects {human_bytes(fh.expected_hole)} of holes"))
        return out

    def slice_text(self, i: int, x: int) -> str | None:
        """What lies under pixel column ``x`` of row ``i``: the slice of the file in the
        strip, or the row's whole texts over its name and facts (cut in a narrow view)."""
        fh = self.rows[i]
        name_w, sw, _ = self.column_widths()
        col = x - (name_w + 8)
        if not 0 <= col < sw:
            return "<br>".join(f"<b>{html.escape(t)}</b>" if k == "name" else html.escape(t)
                               for k, t in self.row_texts(fh))
        b = fh.bins(sw)
        a, e = int(b["edges"][col]), int(b["edges"][col + 1])
        n = max(1, e - a)
        parts = [f"<b>{fh.entry.path}</b>", f"offset {a:,} – {e:,} ({human_bytes(a)} – {human_bytes(e)})"]
        for key, label in (("data", "data"), ("hole", "hole"), ("unwritten", "unwritten"),
                           ("missing", "missing hole (should be punched)")):
            v = int(b[key][col])
            if v:
                parts.append(f"{label}: {human_bytes(v)} ({100.0 * v / n:.0f}%)")
        return "<br>".join(parts)

    def mouseMoveEvent(self, ev) -> None:
        p = ev.position().toPoint()
        i = self.row_at(p.y())
        text = self.slice_text(i, p.x()) if i is not None else None
        if text:
            self.last_tooltip = text
            QToolTip.showText(ev.globalPosition().toPoint(), text, self)
        else:
            QToolTip.hideText()
        super().mouseMoveEvent(ev)

    def mousePressEvent(self, ev) -> None:
        i = self.row_at(ev.position().toPoint().y())
        if i is not None and ev.button() == Qt.LeftButton:
            self.clicked.emit(self.rows[i])
        super().mousePressEvent(ev)

    def set_rows(self, rows: list[FileHoles]) -> None:
        self.rows = rows
        self.setMinimumHeight(self.ROW_H * len(rows) + 8)
        self.updateGeometry()
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(900, self.ROW_H * max(1, len(self.rows)) + 8)

    def strip_width(self) -> int:
        return self.column_widths()[1]

    def strip_image(self, fh: FileHoles, width: int, height: int) -> QImage:
        b = fh.bins(width)
        lens = np.maximum(b["len"], 1).astype(np.float64)
        hd = np.rint(b["data"] / lens * height).astype(np.int32)
        hm = np.rint(b["missing"] / lens * height).astype(np.int32)
        hu = np.rint(b["unwritten"] / lens * height).astype(np.int32)
        y = np.arange(height)[::-1, None]           # 0 = bottom row
        cols = np.empty((height, width, 4), dtype=np.uint8)
        palette = np.array([QColor(c).getRgb() for c in (DATA_COLOUR, MISSING_COLOUR, UNWRITTEN_COLOUR,
                                                         HOLE_COLOUR)], dtype=np.uint8)
        sel = np.where(y < hd, 0, np.where(y < hd + hm, 1, np.where(y < hd + hm + hu, 2, 3)))
        cols[:] = palette[sel]
        img = QImage(cols.data, width, height, width * 4, QImage.Format_RGBA8888).copy()
        return img

    def paintEvent(self, ev) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.TextAntialiasing)
        fg = QColor(theme.foreground())
        grey = QColor("#757575")
        fm = QFontMetrics(self.font())
        name_w, sw, info_w = self.column_widths()
        x0 = name_w + 8
        #: (text drawn, whole text, its rectangle) of every row text painted, for the tests
        self.drawn_texts = []

        def text(rect: QRect, whole: str, colour: QColor, mode=Qt.ElideRight) -> None:
            shown = fm.elidedText(whole, mode, rect.width())
            p.setPen(colour)
            p.drawText(rect, Qt.AlignLeft | Qt.AlignVCenter, shown)
            self.drawn_texts.append((shown, whole, QRect(rect.x(), rect.y(), fm.horizontalAdvance(shown),
                                                         rect.height())))

        if not self.rows and self.message:
            p.setPen(fg)
            p.drawText(self.rect().adjusted(12, 12, -12, -12), Qt.AlignLeft | Qt.AlignTop | Qt.TextWordWrap,
                       self.message)
        for i, fh in enumerate(self.rows):
            top = 4 + i * self.ROW_H
            if not ev.rect().intersects(QRect(0, top, self.width(), self.ROW_H)):
                continue
            e = fh.entry
            if e is self.selected:
                p.fillRect(QRect(0, top, self.width(), self.ROW_H - 2), QColor(theme.ALLOCATED).lighter(185))
            texts = self.row_texts(fh)
            text(QRect(4, top + 4, name_w - 8, 18), texts[0][1], fg, Qt.ElideMiddle)
            text(QRect(4, top + 22, name_w - 8, 18), texts[1][1], grey)
            sy = top + 6
            img = self.strip_image(fh, sw, self.STRIP_H)
            p.drawImage(x0, sy, img)
            p.setPen(QPen(QColor("#9E9E9E")))
            p.drawRect(x0, sy, sw - 1, self.STRIP_H - 1)
            # offset ticks
            scale, unit = axis_unit(fh.apparent)
            p.setPen(grey)
            ticks = nice_ticks(fh.apparent, max(2, sw // 110))
            placed: list[tuple[int, int]] = []
            for v in [ticks[-1]] + ticks[:-1]:          # the end label first, never dropped
                x = x0 + int((sw - 1) * v / max(1, fh.apparent))
                label = _offset_label(v, scale, unit)
                w = fm.horizontalAdvance(label)
                tx = min(max(x - w // 2, x0), x0 + sw - w)
                if any(tx < b + 8 and tx + w + 8 > a for a, b in placed):
                    continue
                placed.append((tx, tx + w))
                p.drawLine(x, sy + self.STRIP_H, x, sy + self.STRIP_H + 3)
                p.drawText(tx, sy + self.STRIP_H + 4 + fm.ascent(), label)
            # facts on the right (cut with an ellipsis in a narrow view: whole in the tooltip)
            xi = x0 + sw + 10
            iw = max(10, min(info_w, self.width() - xi - 4))
            for j, (kind, t) in enumerate(texts[2:]):
                colour = fg if j == 0 else QColor(MISSING_COLOUR) if kind == "warn" else grey
                text(QRect(xi, top + 2 + 17 * j, iw, 18), t, colour)
            p.setPen(QPen(theme.qcolor(theme.foreground(), 45)))
            p.drawLine(0, top + self.ROW_H - 2, self.width(), top + self.ROW_H - 2)
        p.end()


def _swatch(colour: str, text: str) -> str:
    """A legend entry a wrapping label breaks before or after, never inside."""
    return (f"<span style='white-space:nowrap'><span style='background:{colour}'>&nbsp;&nbsp;&nbsp;&nbsp;</span>"
            f"&nbsp;{text.replace(' ', '&nbsp;')}</span>")


class HolesView(QWidget):
    """Banner, per-file strips along the offset, apparent/allocated/expected bars."""

    title = "Holes"
    view_id = "holes"
    #: the engine whose files this view draws (None: any dataset)
    engine = None
    node_selected = Signal(object)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.dataset = None
        self.root: Node | None = None
        self.scope: Node | None = None
        self.all_rows: list[FileHoles] = []
        self.rows: list[FileHoles] = []

        self.banner = QLabel("")
        self.banner.setWordWrap(True)
        self.banner.setTextFormat(Qt.RichText)
        self.banner.setStyleSheet("QLabel { background: #FDECEA; color: #B71C1C; border: 2px solid #E53935;"
                                  " border-radius: 4px; padding: 8px; font-weight: bold; }")
        self.banner.setVisible(False)
        self.summary = QLabel("")
        self.summary.setWordWrap(True)
        self.legend = QLabel(" &nbsp; ".join([
            _swatch(DATA_COLOUR, "data (allocated)"), _swatch(HOLE_COLOUR, "hole (not allocated)"),
            _swatch(UNWRITTEN_COLOUR, "unwritten (fallocated, allocated)"),
            _swatch(MISSING_COLOUR, "hole the engine should have punched, allocated")])
            + "<br><span style='color:#757575'>each pixel column is one slice of the file; its colours"
              " stack by the share of bytes in that slice</span>")
        self.legend.setWordWrap(True)
        self.only_holes = QCheckBox("Only files with holes")
        self.only_holes.setToolTip("Only files with holes or expected holes")
        self.only_holes.toggled.connect(lambda _: self._refresh())
        self.bars_by = QComboBox()
        self.bars_by.addItem("per table", "table")
        self.bars_by.addItem("per file", "file")
        self.bars_by.currentIndexChanged.connect(lambda _: self._draw_bars())
        self.bars_scale = QComboBox()
        self.bars_scale.addItem("% of apparent size", "pct")
        self.bars_scale.addItem("bytes", "bytes")
        self.bars_scale.currentIndexChanged.connect(lambda _: self._draw_bars())
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(self.only_holes)
        bar.addStretch(1)
        bar.addWidget(QLabel("Bars:"))
        bar.addWidget(self.bars_by)
        bar.addWidget(self.bars_scale)

        self.strips = HoleStrips()
        self.strips.clicked.connect(self._on_strip_clicked)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setWidget(self.strips)

        self.bars_widget = pg.PlotWidget(background=theme.background())
        self.plot = self.bars_widget.getPlotItem()
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.showGrid(x=True, y=False, alpha=0.25)
        theme.style_plot(self.plot)
        wrap_title(self.plot)
        # re-fit the bars' texts (and their number) when the chart changes size
        self._refit_timer = QTimer(self)
        self._refit_timer.setSingleShot(True)
        self._refit_timer.timeout.connect(self._maybe_redraw_bars)
        self.plot.getViewBox().sigResized.connect(lambda *_: self._refit_timer.start(10))
        self.bar_legend = QLabel(" &nbsp; ".join([
            _swatch(theme.APPARENT, "apparent size"), _swatch(DATA_COLOUR, "written (allocated)"),
            _swatch(UNWRITTEN_COLOUR, "unwritten (fallocated)"),
            _swatch(theme.PAST_EOF, "allocated past EOF (XFS trims it)"),
            _swatch(EXPECTED_COLOUR, "expected written (what the engine should leave after punching)")]))
        self.bar_legend.setContentsMargins(8, 2, 8, 2)
        self.bar_legend.setWordWrap(True)
        self.bar_rows: list[tuple[str, int, int, int | None, int, int]] = []

        top = QWidget()
        tl = QVBoxLayout(top)
        tl.setContentsMargins(6, 6, 6, 0)
        tl.addWidget(self.banner)
        tl.addWidget(self.summary)
        tl.addWidget(self.legend)
        tl.addLayout(bar)
        tl.addWidget(self.scroll, 1)
        bottom = QWidget()
        bl = QVBoxLayout(bottom)
        bl.setContentsMargins(0, 0, 0, 0)
        bl.setSpacing(0)
        bl.addWidget(self.bar_legend)
        bl.addWidget(self.bars_widget, 1)
        self.split = QSplitter(Qt.Vertical)
        self.split.addWidget(top)
        self.split.addWidget(bottom)
        self.split.setStretchFactor(0, 3)
        self.split.setStretchFactor(1, 2)
        self.split.setSizes([520, 340])
        self.split.splitterMoved.connect(lambda *_: self._maybe_redraw_bars())
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.split)
        self.summary.setText("No scan yet")

    # -- view protocol -------------------------------------------------------------------
    def set_dataset(self, dataset, root: Node) -> None:
        self.dataset = dataset
        self.root = root
        self.scope = None
        self.all_rows = [file_holes(e) for e in dataset.files if e.apparent_bytes > 0]
        self.only_holes.blockSignals(True)
        self.only_holes.setChecked(len(self.all_rows) > 40)
        self.only_holes.blockSignals(False)
        self._refresh()
        total = self.split.height()
        if total > 300:     # no strips to show: give the room to the bars
            top = 230 if not self.rows else int(total * 0.6)
            self.split.setSizes([top, total - top])

    def select_node(self, node: Node) -> None:
        if self.dataset is None or node is None:
            return
        if node.kind == "index":
            node = node.parent
        selected = None
        if node.kind == "file":
            selected = node.ref
            visible = any(r.entry is selected for r in self.rows)
            if visible:                  # keep the list, mark the file
                self.strips.set_selected(selected)
                return
            node = node.parent if node.parent is not None and node.parent.kind != "root" else node
        self.scope = None if node.kind == "root" else node
        self._refresh()
        self.strips.set_selected(selected)

    def set_target(self, text: str) -> None:
        for e in self.dataset.files if self.dataset else []:
            if e.path == text or e.path.endswith(text):
                self.scope = Node(name=e.path, kind="file", ref=e)
                self._refresh()
                return

    def export_widget(self) -> QWidget:
        return self

    # -- drawing -----------------------------------------------------------------------------
    def _scope_entries(self) -> set[int] | None:
        if self.scope is None:
            return None
        if self.scope.kind == "file":
            return {id(self.scope.ref)}
        return {id(n.ref) for n in self.scope.walk() if n.kind == "file"}

    def _refresh(self) -> None:
        scope = self._scope_entries()
        scoped = [r for r in self.all_rows if scope is None or id(r.entry) in scope]
        self.scoped_rows = scoped
        rows = scoped
        if self.only_holes.isChecked():
            rows = [r for r in rows if r.hole_bytes or r.expected_hole or r.missing_bytes]
        self.strips.message = ""
        if not rows and scoped:
            self.strips.message = (f"None of the {len(scoped)} files here has a hole, and no parser expects one: "
                                   f"every byte is allocated ({human_bytes(sum(r.allocated for r in scoped))} of "
                                   f"{human_bytes(sum(r.apparent for r in scoped))} apparent). "
                                   f"Apparent vs allocated per table below.")
        elif not scoped:
            self.strips.message = "No files"
        rows.sort(key=lambda r: (not r.lost_sparseness, not r.missing_bytes, -(r.hole_bytes + (r.expected_hole or 0)),
                                 -r.apparent, r.entry.path))
        self.rows = rows
        self.strips.set_rows(rows)
        lost = [r for r in self.all_rows if r.lost_sparseness and (scope is None or id(r.entry) in scope)]
        partial = [r for r in self.all_rows if r.missing_bytes and not r.lost_sparseness
                   and (scope is None or id(r.entry) in scope)]
        self._banner(lost, partial)
        app = sum(r.apparent for r in scoped)
        alloc = sum(r.allocated for r in scoped)
        hole = sum(r.hole_bytes for r in scoped)
        where = "" if self.scope is None else f" in {self.scope.name}"
        shown = "" if len(rows) == len(scoped) else f" ({len(rows)} with holes shown)"
        self.summary.setText(
            f"<b>{len(scoped)} file{'s' if len(scoped) != 1 else ''}{where}</b>{shown}: {human_bytes(alloc)} "
            f"allocated of {human_bytes(app)} apparent; holes {human_bytes(hole)} ({percent(hole, app)})")
        self._draw_bars()

    def _banner(self, lost: list[FileHoles], partial: list[FileHoles]) -> None:
        if not lost and not partial:
            self.banner.setVisible(False)
            self.banner.setText("")
            return
        parts = []
        if lost:
            names = ", ".join(r.entry.path for r in lost[:4]) + (f" and {len(lost) - 4} more" if len(lost) > 4 else "")
            should = sum(r.expected_hole or 0 for r in lost)
            parts.append(f"⚠ {len(lost)} file{'s have' if len(lost) > 1 else ' has'} lost {'their' if len(lost) > 1 else 'its'}"
                         f" sparseness: {names}. The engine punches holes in "
                         f"{'them' if len(lost) > 1 else 'it'} ({human_bytes(should)} should be unallocated) but "
                         f"allocated = apparent size. Probably copied or restored without keeping holes "
                         f"(cp --sparse=always, rsync -S, or rebuild the table to punch them again).")
        if partial:
            miss = sum(r.missing_bytes for r in partial)
            parts.append(f"⚠ {len(partial)} file{'s' if len(partial) > 1 else ''} with holes missing: "
                         f"{human_bytes(miss)} allocated that should be punched.")
        self.banner.setText("<br>".join(parts))
        self.banner.setVisible(True)

    def _on_strip_clicked(self, fh: FileHoles) -> None:
        """A clicked strip selects its file in the tree."""
        if self.root is None:
            return
        for n in self.root.walk():
            if n.kind == "file" and n.ref is fh.entry:
                self.node_selected.emit(n)
                return

    def lost_files(self) -> list[str]:
        return [r.entry.path for r in self.all_rows if r.lost_sparseness]

    def _bar_groups(self) -> list[tuple[str, int, int, int | None, int, int]]:
        """(name, apparent, written, expected written or None, unwritten, past EOF) per bar."""
        by = self.bars_by.currentData()
        rows = getattr(self, "scoped_rows", self.rows)
        if by == "file":
            out = [(r.entry.path, r.apparent, r.written, r.expected_allocated, r.unwritten_bytes, r.past_eof)
                   for r in rows]
        else:
            groups: dict[str, list] = {}
            for r in rows:
                db, table, _ = place(r.entry)
                key = (f"{db}.{table}" if db else table) if table else r.entry.path
                if not table and r.entry.role not in DATA_ROLES:
                    # small metadata files would dwarf the tables in the % scale: one row for all of them
                    key = "(other files)"
                g = groups.setdefault(key, [key, 0, 0, 0, True, 0, 0])
                g[1] += r.apparent
                g[2] += r.written
                g[5] += r.unwritten_bytes
                g[6] += r.past_eof
                ea = r.expected_allocated
                if ea is None:
                    g[4] = g[4] and False
                    g[3] += r.apparent
                else:
                    g[3] += ea
            out = [(g[0], g[1], g[2], g[3] if g[4] else None, g[5], g[6]) for g in groups.values()]
        out.sort(key=lambda t: -max(t[1], t[2] + t[4] + t[5]))
        self.bar_total = len(out)
        return out[:self.bar_limit()]

    def _draw_bars(self) -> None:
        self.plot.clear()
        self.bar_texts = []
        groups = self._bar_groups()
        self.bar_rows = groups
        for ax in ("left", "bottom"):
            self.plot.showAxis(ax, bool(groups))
        if not groups:
            self.plot.setTitle("No files", color=theme.foreground())
            return
        n = len(groups)
        y = np.arange(n)[::-1].astype(float)
        app = np.array([g[1] for g in groups], dtype=float)
        written = np.array([g[2] for g in groups], dtype=float)
        unw = np.array([g[4] for g in groups], dtype=float)
        past = np.array([g[5] for g in groups], dtype=float)
        alloc = written + unw + past
        exp = np.array([np.nan if g[3] is None else g[3] for g in groups], dtype=float)
        pct = self.bars_scale.currentData() == "pct"
        if pct:
            div = np.maximum(app, 1) / 100.0
            unit_label = "% of apparent size"
        else:
            scale, unit = axis_unit(max(app.max(), alloc.max(), 1))
            div = np.full(n, scale)
            unit_label = f"size ({unit})"
        # in % a tiny file can be 100x over its apparent size (one fs block for a few bytes):
        # bars stop at PCT_CAP, the labels keep the true figures
        cap = PCT_CAP if pct else np.inf
        # written, then unwritten (fallocated) inside the size, then preallocation past EOF:
        # each byte of allocation once, stacked
        specs = [("apparent", np.zeros(n), app, theme.APPARENT, 0.8),
                 ("written", np.zeros(n), written, DATA_COLOUR, 0.5),
                 ("unwritten", written, unw, theme.UNWRITTEN, 0.5),
                 ("past EOF", written + unw, past, theme.PAST_EOF, 0.5)]
        for name, x0, vals, colour, h in specs:
            if name != "apparent" and not vals.any():
                continue
            x0c = np.minimum(x0 / div, cap)
            item = pg.BarGraphItem(x0=x0c, y=y, height=h, width=np.minimum((x0 + vals) / div, cap) - x0c,
                                   brush=theme.qcolor(colour),
                                   pen=pg.mkPen(theme.qcolor(colour).darker(130)))
            self.plot.addItem(item)
        known = ~np.isnan(exp)
        if known.any():
            item = pg.BarGraphItem(x0=np.zeros(int(known.sum())), y=y[known], height=0.2,
                                   width=np.minimum(exp[known] / div[known], cap), brush=theme.qcolor(EXPECTED_COLOUR),
                                   pen=pg.mkPen(theme.qcolor(EXPECTED_COLOUR).darker(140)))
            self.plot.addItem(item)
        texts = []
        for i, (yy, g) in enumerate(zip(y, groups)):
            head = f"{human_bytes(g[2])} written of {human_bytes(g[1])}"
            over = f" (+{human_bytes(g[2] - g[3])} over expected)" if g[3] is not None and g[2] > g[3] + 4096 else ""
            rest = (f", {human_bytes(g[4])} unwritten" if g[4] else "") + \
                   (f", {human_bytes(g[5])} past EOF" if g[5] else "")
            variants = [head + over + rest, head + over, head, f"{human_bytes(g[2])} of {human_bytes(g[1])}"]
            bad = g[3] is not None and g[2] > g[3] * 1.1 + 4096
            texts.append(BarText(float(yy), float(min(max(g[1], alloc[i]) / div[i], cap)), list(dict.fromkeys(variants)),
                                 MISSING_COLOUR if bad else theme.foreground()))
        left = self.plot.getAxis("left")
        ticks = [(float(yy), short_label(g[0], 25, 15)) for yy, g in zip(y, groups)]
        left.setTicks([ticks])
        left.setWidth(fit_axis_width([t for _, t in ticks], self.font(), 220))
        bottom = self.plot.getAxis("bottom")
        bottom.setLabel(unit_label, color=theme.foreground())
        bottom.setTicks([[(float(t), f"{t}%") for t in range(0, 101, 20)]] if pct else None)
        by = "table" if self.bars_by.currentData() == "table" else "file"
        self.plot.setTitle(f"Apparent vs written vs expected written, per {by}"
                           + (f" ({len(groups)} largest of {self.bar_total})" if self.bar_total > len(groups) else ""),
                           color=theme.foreground(), size="10pt")
        xmax = float(min(np.max(np.maximum(app, alloc) / div), cap))
        self.plot.setXRange(0, place_bar_texts(self.plot, texts, xmax * (1.75 if pct else 1.5)), padding=0)
        self.bar_texts = texts
        self.plot.setYRange(-0.7, n - 0.3, padding=0)

    #: pixels a bar row needs for its value text not to touch its neighbours'
    ROW_PX = 18

    def bar_limit(self) -> int:
        """As many bars as have room for a readable label (18 px a row), 4 to 25."""
        h = self.plot.getViewBox().height() if self.bars_widget.isVisible() else 250
        return max(4, min(25, int(h / self.ROW_PX)))

    def resizeEvent(self, ev) -> None:
        super().resizeEvent(ev)
        self._maybe_redraw_bars()

    def _maybe_redraw_bars(self) -> None:
        if self.dataset is None:
            return
        if getattr(self, "_last_limit", None) != self.bar_limit() or \
                needs_refit(self.plot):
            self._last_limit = self.bar_limit()
            self._draw_bars()

    def chart_csv(self) -> str:
        """The strips' files and the bars as CSV, their texts whole (a narrow view cuts them)."""
        head = ["row", "name", "apparent_bytes", "allocated_bytes", "written_bytes", "unwritten_bytes",
                "hole_bytes", "expected_written_bytes", "expected_hole_bytes", "missing_hole_bytes",
                "past_eof_bytes", "text"]
        rows = []
        for r in self.rows:
            texts = self.strips.row_texts(r)
            rows.append(["file", r.entry.path, r.apparent, r.allocated, r.written, r.unwritten_bytes, r.hole_bytes,
                         "" if r.expected_allocated is None else r.expected_allocated,
                         "" if r.expected_hole is None else r.expected_hole, r.missing_bytes, r.past_eof,
                         " · ".join(t for _, t in texts[1:])])
        for g, t in zip(self.bar_rows, getattr(self, "bar_texts", [])):
            rows.append([f"bar per {self.bars_by.currentData()}", g[0], g[1], g[2] + g[4] + g[5], g[2], g[4], "",
                         "" if g[3] is None else g[3], "", "", g[5], t.full])
        return rows_csv(head, rows)

    # -- facts for tests and reports -----------------------------------------------------------
    def strip_totals(self, path: str, width: int = 800) -> dict[str, int]:
        for r in self.all_rows:
            if r.entry.path == path:
                b = r.bins(width)
                return {k: int(b[k].sum()) for k in ("data", "hole", "unwritten", "missing", "len")}
        raise KeyError(path)


#: longest bar in the % scale
PCT_CAP = 125.0

#: files that hold table data or engine state; the rest are grouped as "(other files)"
DATA_ROLES = ("tablespace", "system_tablespace", "redo_log", "undo", "doublewrite", "dictionary",
              "part_column_data")


__all__ = ["HolesView", "FileHoles", "file_holes", "missing_ranges"]

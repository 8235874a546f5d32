"""Texts that fit their chart: the value text after each bar (the x range leaves room for it,
a shorter wording or an ellipsis when the view is narrow), plot titles and their legends
that wrap onto as many lines as the plot's width needs, and the check that lists every text
of a view cut by an edge (the tests and the window's state dump use it).

An ellipsis is used only by views whose texts are whole in a tooltip and in their chart
CSV (``chart_csv``)."""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field

import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QFont, QFontMetricsF, QTextOption
from PySide6.QtWidgets import QGraphicsTextItem, QWidget

#: a bar keeps at least this share of the plot's width when its text is long
MIN_BAR_SHARE = 0.3
#: pixels between a bar's end and its text
GAP_PX = 3.0


@dataclass
class BarText:
    """The text after one bar: its end in data units, its wordings longest first."""

    y: float
    end: float
    variants: list[str]
    color: str = "#212121"
    font: QFont | None = None
    #: set by ``place_bar_texts``: the wording shown and the item drawing it
    shown: str = ""
    elided: bool = False
    item: pg.TextItem | None = field(default=None, repr=False)

    @property
    def full(self) -> str:
        return self.variants[0]


def _text_width(item: pg.TextItem) -> float:
    return float(item.textItem.boundingRect().width())


def place_bar_texts(plot: pg.PlotItem, texts: list[BarText], fallback_xmax: float,
                    min_bar_share: float = MIN_BAR_SHARE) -> float:
    """Add one TextItem per bar after its end and return the x range end (from 0) that
    keeps every text inside the plot: the longest wording that leaves the bars
    ``min_bar_share`` of the width, else the shortest one with an ellipsis (the whole
    text then in the item's tooltip).  The plot's current width in pixels is used; an
    unlaid-out plot (under 100 px) gets the longest wordings and ``fallback_xmax``."""
    vb = plot.getViewBox()
    width = float(vb.width())
    room = width * (1.0 - min_bar_share) - GAP_PX - 2
    xmax = max([t.end for t in texts] + [1e-12]) * 1.02
    for t in texts:
        item = pg.TextItem(t.variants[0], color=t.color, anchor=(0, 0.5))
        if t.font is not None:
            item.setFont(t.font)
        t.item, t.shown, t.elided = item, t.variants[0], False
        if width >= 100:
            for v in t.variants:
                item.setText(v)
                t.shown = v
                if _text_width(item) <= room:
                    break
            else:
                margin = 2 * item.textItem.document().documentMargin()
                fm = QFontMetricsF(item.textItem.font())
                short = fm.elidedText(t.variants[-1], Qt.ElideRight, max(room - margin - 2, 10.0))
                item.setText(short)
                t.shown, t.elided = short, True
            if t.shown != t.full:
                item.setToolTip(t.full)
            w = _text_width(item)
            xmax = max(xmax, t.end * width / max(width - w - GAP_PX - 2, 1.0))
        plot.addItem(item)
    plot.textfit_px = width
    if width < 100:
        xmax = max(xmax, fallback_xmax)
    for t in texts:
        t.item.setPos(t.end + GAP_PX * xmax / max(width, 1.0), t.y)
    return xmax


def fit_axis_width(labels: list[str], font: QFont, most: int, least: int = 60) -> int:
    """A left axis as wide as its widest tick label (``least`` to ``most`` px): the room a
    fixed wide axis took is left to the bars and their texts in narrow views."""
    fm = QFontMetricsF(font)
    widest = max((fm.horizontalAdvance(t) for t in labels), default=0.0)
    return int(max(least, min(most, widest + 16)))


def fit_legend_columns(legend: pg.LegendItem, max_width: float) -> int:
    """As many legend columns as fit ``max_width`` pixels (one row when there is room,
    down to one entry a row); returns the number of rows."""
    items = legend.items
    if not items:
        return 0
    spacing = legend.layout.horizontalSpacing()
    widths = [20 + spacing + label.itemRect().width() + spacing for _, label in items]
    for ncol in range(len(items), 0, -1):
        cols = [max(widths[i] for i in range(c, len(items), ncol)) for c in range(ncol)]
        if sum(cols) + 10 <= max_width or ncol == 1:
            break
    legend.setColumnCount(ncol)
    # the entries at their own widths (the grid keeps stretching them to a wider legend's
    # old size otherwise), then the legend as wide as they are
    pref = legend.layout.effectiveSizeHint(Qt.PreferredSize)
    legend.setGeometry(0, 0, pref.width(), pref.height())
    legend.layout.activate()
    legend.updateSize()
    return -(-len(items) // ncol)


def rows_csv(header: list[str], rows: list[list]) -> str:
    """A chart's data as CSV text (the views' ``chart_csv``): whole texts and raw figures."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


def needs_refit(plot: pg.PlotItem, slack: float = 2.0) -> bool:
    """True when the plot is now wider or narrower than when ``place_bar_texts`` fitted
    its texts (the layout settled after the drawing, or the window was resized)."""
    px = getattr(plot, "textfit_px", None)
    return px is not None and abs(float(plot.getViewBox().width()) - px) > slack


# -- titles that wrap -------------------------------------------------------------------------

def legend_html(parts: list[tuple[str, str]], swatch: str = "■") -> str:
    """Legend entries ("■ label" in its colour) that a wrapping title breaks between,
    never inside one."""
    return " &nbsp; ".join(f"<span style='white-space:nowrap'><span style='color:{c}'>{swatch}</span>"
                           f"&nbsp;{label.replace(' ', '&nbsp;')}</span>" for c, label in parts)


def wrap_title(plot: pg.PlotItem) -> None:
    """Make ``plot``'s title wrap to the width the layout gives it, its row as tall as
    the lines need: a long title or legend is never cut at the plot's edges (pyqtgraph
    gives the title one 30 px line and its text's width as the minimum width)."""
    lbl = plot.titleLabel
    item = lbl.item
    opt = QTextOption(Qt.AlignHCenter)
    opt.setWrapMode(QTextOption.WrapAtWordBoundaryOrAnywhere)
    item.document().setDefaultTextOption(opt)
    lbl.setMinimumWidth(10)
    lbl.updateMin = lambda: None
    original_set_title = plot.setTitle

    def relayout(*_args) -> None:
        if not lbl.isVisible():
            return
        avail = float(lbl.rect().width())
        item.setTextWidth(-1)
        natural = item.boundingRect().width()
        if avail > 20 and natural > avail:
            item.setTextWidth(avail)
        br = item.boundingRect()
        item.setPos((avail - br.width()) / 2 if avail > br.width() else 0.0, 0.0)
        h = int(br.height() + 0.999)
        if abs(plot.layout.rowMinimumHeight(0) - h) > 0.5 or abs(lbl.maximumHeight() - h) > 0.5:
            lbl.setMinimumHeight(h)
            lbl.setMaximumHeight(h)
            plot.layout.setRowFixedHeight(0, h)

    def set_title(title=None, **args) -> None:
        original_set_title(title, **args)
        relayout()

    lbl.resizeEvent = relayout
    plot.setTitle = set_title


# -- the check ----------------------------------------------------------------------------------

def _scene_rect_in_viewport(gv: pg.GraphicsView, rect: QRectF) -> QRectF:
    return QRectF(gv.mapFromScene(rect).boundingRect())


def _ink_rect(item) -> QRectF:
    """The scene rectangle of a text's lines, without its document's blank margin."""
    text = item.textItem if isinstance(item, pg.TextItem) else item
    m = text.document().documentMargin()
    return text.mapRectToScene(text.boundingRect().adjusted(m, m, -m, -m))


def cut_texts(widget: QWidget, tolerance: float = 1.0) -> list[str]:
    """Every text of ``widget``'s charts not wholly inside what it is drawn in: a value
    text outside its plot's data area, a title or legend outside its plot or outside the
    part of the chart the window shows (a scroll area's viewport counts; scrolling down
    does not cut, so only the left and right edges of a scrolled area are checked).
    Each as "text: why"; empty when everything fits."""
    out: list[str] = []
    views = ([widget] if isinstance(widget, pg.GraphicsView) else []) + widget.findChildren(pg.GraphicsView)
    for gv in views:
        if not gv.isVisible() or gv.width() < 2:
            continue
        vp = gv.viewport()
        shown = QRectF(vp.rect())
        # the horizontal part a scroll area (or any ancestor) leaves visible
        vis = vp.visibleRegion().boundingRect()
        if not vis.isEmpty():
            shown.setLeft(max(shown.left(), vis.left()))
            shown.setRight(min(shown.right(), vis.right() + 1))
        for item in gv.scene().items():
            if not item.isVisible():
                continue
            if isinstance(item, pg.TextItem):
                text = item.toPlainText().strip()
                if not text:
                    continue
                box = _scene_rect_in_viewport(gv, _ink_rect(item))
                vb = item.parentItem()
                while vb is not None and not isinstance(vb, pg.ViewBox):
                    vb = vb.parentItem()
                area = _scene_rect_in_viewport(gv, vb.sceneBoundingRect()) if vb is not None else shown
                _check(out, text, box, area, "its plot", tolerance)
                _check(out, text, box, shown, "the view", tolerance, vertical=False)
            elif isinstance(item, QGraphicsTextItem) and isinstance(item.parentItem(), pg.LabelItem):
                text = item.toPlainText().strip()
                label = item.parentItem()
                host = label.parentItem()
                if not text or host is None:
                    continue
                box = _scene_rect_in_viewport(gv, _ink_rect(item))
                _check(out, text, box, _scene_rect_in_viewport(gv, host.sceneBoundingRect()), "its chart",
                       tolerance)
                _check(out, text, box, shown, "the view", tolerance, vertical=False)
            elif isinstance(item, QGraphicsTextItem) and isinstance(item.parentItem(), pg.AxisItem):
                text = item.toPlainText().strip()
                axis = item.parentItem()
                if not text or not axis.isVisible():
                    continue
                box = _scene_rect_in_viewport(gv, _ink_rect(item))
                host = axis.parentItem() or axis
                _check(out, text, box, _scene_rect_in_viewport(gv, host.sceneBoundingRect()), "its chart",
                       tolerance, vertical=False)
                _check(out, text, box, shown, "the view", tolerance, vertical=False)
            elif isinstance(item, pg.LegendItem):
                box = _scene_rect_in_viewport(gv, item.sceneBoundingRect())
                text = " ".join(lbl.text for _, lbl in item.items)
                vb = item.parentItem()
                area = _scene_rect_in_viewport(gv, vb.sceneBoundingRect()) if vb is not None else shown
                _check(out, text, box, area, "its plot", tolerance)
    return out


def _check(out: list[str], text: str, box: QRectF, area: QRectF, where: str, tol: float,
           vertical: bool = True) -> None:
    bad = []
    if box.left() < area.left() - tol:
        bad.append(f"{area.left() - box.left():.0f} px past the left edge of {where}")
    if box.right() > area.right() + tol:
        bad.append(f"{box.right() - area.right():.0f} px past the right edge of {where}")
    if vertical and box.top() < area.top() - tol:
        bad.append(f"{area.top() - box.top():.0f} px above {where}")
    if vertical and box.bottom() > area.bottom() + tol:
        bad.append(f"{box.bottom() - area.bottom():.0f} px below {where}")
    if bad:
        out.append(f"{' '.join(text.split())[:80]!r}: " + ", ".join(bad))


def overlapping_texts(widget: QWidget, tolerance: float = 1.0) -> list[str]:
    """Pairs of value texts of one plot that overlap each other (unreadable)."""
    out = []
    views = ([widget] if isinstance(widget, pg.GraphicsView) else []) + widget.findChildren(pg.GraphicsView)
    for gv in views:
        if not gv.isVisible():
            continue
        items = [i for i in gv.scene().items() if isinstance(i, pg.TextItem) and i.isVisible()
                 and i.toPlainText().strip()]
        rects = [(i, _ink_rect(i).adjusted(tolerance, tolerance, -tolerance, -tolerance)) for i in items]
        for a in range(len(rects)):
            for b in range(a + 1, len(rects)):
                if rects[a][1].intersects(rects[b][1]):
                    out.append(f"{rects[a][0].toPlainText()!r} overlaps {rects[b][0].toPlainText()!r}")
    return out


__all__ = ["rows_csv", "BarText", "place_bar_texts", "fit_axis_width", "needs_refit", "fit_legend_columns", "legend_html", "wrap_title", "cut_texts", "overlapping_texts"]

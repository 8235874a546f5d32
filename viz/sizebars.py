"""Apparent vs allocated vs holes, one row per table (or file): the first
question a DBA asks of a data dir, drawn as horizontal bars for reports.  Each
byte is drawn once: inside the apparent size, written data, unwritten
(fallocated) space and unallocated holes; beyond it, allocation past EOF."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QVBoxLayout, QWidget

from dbxray.parsers.humanize import axis_unit, human_bytes
from dbxray.parsers.tree import Node

from . import theme


DATA_ROLES = ("tablespace", "system_tablespace", "redo_log", "undo", "dictionary", "part_column_data")


def size_rows(root: Node, limit: int = 25) -> list[Node]:
    """The largest tables (or loose files) of a tree, by apparent size; tables spread over
    files they share (a MyRocks table's indexes over SSTs) are left out: their bytes are the
    files' bytes again."""
    rows: list[Node] = []
    stack = [root]
    while stack:
        n = stack.pop()
        if n.kind == "spread":
            continue
        stack.extend(n.children)
        if n.kind == "table":
            rows.append(n)
        elif (n.kind == "file" and n.parent is not None and n.parent.kind in ("database", "engine")
              and getattr(n.ref, "role", None) in DATA_ROLES):
            rows.append(n)
    rows.sort(key=lambda n: -max(n.apparent, n.allocated))
    return rows[:limit]


class SizeBarsView(QWidget):
    """Horizontal bars: apparent (grey), and stacked on it written (blue), unwritten
    (pale), holes (amber), then allocation past EOF (purple)."""

    title = "Sizes"
    view_id = "sizes"
    #: the engine whose files this view draws (None: any dataset)
    engine = None

    def __init__(self, parent=None):
        super().__init__(parent)
        self.plot_widget = pg.PlotWidget(background=theme.background())
        self.plot = self.plot_widget.getPlotItem()
        self.plot.setMenuEnabled(False)
        self.plot.showGrid(x=True, y=False, alpha=0.25)
        theme.style_plot(self.plot)
        # one line in the bottom right corner, under the last bar (a free row is kept there):
        # stacked, it covered the value texts of the last bars when they were the longest
        self.legend = self.plot.addLegend(offset=(-10, -4), labelTextColor=theme.foreground(),
                                          brush=theme.qcolor(theme.background(), 220), colCount=5)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.plot_widget)
        self.rows: list[Node] = []
        self.plot.getViewBox().sigResized.connect(self._fit_x)

    def set_dataset(self, dataset, root: Node) -> None:
        """View protocol: redraw for a newly scanned dataset."""
        self.set_tree(root)

    def set_tree(self, root: Node) -> None:
        self.plot.clear()
        self.legend.clear()
        self.rows = size_rows(root)
        if not self.rows:
            self.plot.setTitle("No files", color=theme.foreground())
            return
        n = len(self.rows)
        y = np.arange(n)[::-1].astype(float)
        apparent = np.array([r.apparent for r in self.rows], dtype=float)
        allocated = np.array([r.allocated for r in self.rows], dtype=float)
        written = np.array([r.data for r in self.rows], dtype=float)
        unwritten = np.array([r.unwritten for r in self.rows], dtype=float)
        holes = np.array([r.unallocated for r in self.rows], dtype=float)
        past = np.array([r.past_eof for r in self.rows], dtype=float)
        scale, unit = axis_unit(max(apparent.max(), allocated.max(), 1))
        # each byte once: written, unwritten and holes stacked inside the apparent size
        # (a file's last block can make written a little larger: the bar stops at
        # written + unwritten + holes), allocation past EOF after it
        bars = [
            ("apparent", np.zeros(n), apparent, theme.APPARENT, 0.8),
            ("written", np.zeros(n), written, theme.ALLOCATED, 0.5),
            ("unwritten", written, unwritten, theme.UNWRITTEN, 0.5),
            ("holes", written + unwritten, holes, theme.HOLES, 0.5),
            ("past EOF", written + unwritten + holes, past, theme.PAST_EOF, 0.5),
        ]
        for name, x0, vals, colour, height in bars:
            if name in ("unwritten", "past EOF") and not vals.any():
                continue
            item = pg.BarGraphItem(x0=x0 / scale, y=y, height=height, width=vals / scale,
                                   brush=theme.qcolor(colour), pen=pg.mkPen(theme.qcolor(colour).darker(130)))
            self.plot.addItem(item)
            self.legend.addItem(item, name)
        ticks = [(float(yy), _label(r)) for yy, r in zip(y, self.rows)]
        left = self.plot.getAxis("left")
        left.setTicks([ticks])
        left.setWidth(190)
        self.plot.getAxis("bottom").setLabel(f"size ({unit})", color=theme.foreground())
        self.unit = unit
        for yy, r in zip(y, self.rows):
            txt = pg.TextItem(f"{human_bytes(r.allocated)} of {human_bytes(r.apparent)}",
                              color=theme.foreground(), anchor=(0, 0.5))
            txt.setPos(max(r.apparent, r.data + r.unwritten + r.unallocated + r.past_eof) / scale, yy)
            self.plot.addItem(txt)
        total_alloc = sum(r.allocated for r in self.rows)
        total_app = sum(r.apparent for r in self.rows)
        self.plot.setTitle(f"{n} largest: {human_bytes(total_alloc)} allocated of {human_bytes(total_app)}",
                           color=theme.foreground(), size="10pt")
        self.plot.titleLabel.setMinimumWidth(10)
        fm = self.fontMetrics()
        self._label_fit = [(max(r.apparent, r.data + r.unwritten + r.unallocated + r.past_eof) / scale,
                            fm.horizontalAdvance(f"{human_bytes(r.allocated)} of {human_bytes(r.apparent)}") + 12)
                           for r in self.rows]
        self._fit_x()

    def _fit_x(self, *args) -> None:
        """The x range wide enough for every bar's value text after it (it was cut at the right)."""
        fit = getattr(self, "_label_fit", None)
        if not fit:
            return
        vb = self.plot.getViewBox()
        if args and getattr(self, "_fitted_x", None) is not None:      # a resize: only if not zoomed
            (x0, x1), _ = vb.viewRange()
            if abs(x0) > 1e-9 or abs(x1 - self._fitted_x) > 1e-9 * max(1.0, x1):
                return
        px = max(float(vb.width()), 120.0)
        xmax = max(end / max(0.2, 1.0 - text_px / px) for end, text_px in fit)
        self.plot.setXRange(0, xmax, padding=0)
        self._fitted_x = vb.viewRange()[0][1]
        # the legend on as few lines as fit the plot's width, then room under the last bar for
        # it: r rows of n + r take its height
        cols = len(self.legend.items)
        while cols > 1:
            self.legend.setColumnCount(cols)
            if self.legend.boundingRect().width() + 24 <= px:
                break
            cols -= 1
        self.legend.setColumnCount(max(1, cols))
        n = len(self.rows)
        height = max(float(vb.height()), 60.0)
        legend = self.legend.boundingRect().height() + 8
        free = legend * n / max(height - legend, 1.0)
        self.plot.setYRange(-0.7 - free, n - 0.3, padding=0)


def _label(node: Node) -> str:
    name = node.name
    if node.kind == "table" and node.parent is not None and node.parent.kind == "database":
        name = f"{node.parent.name}.{node.name}"
    return name if len(name) <= 30 else name[:12] + "…" + name[-17:]


__all__ = ["SizeBarsView", "size_rows", "Qt"]

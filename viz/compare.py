"""Engine comparison view: the same table held in several schemas or engines (the same
name, or the same columns), side by side (parsers/compare.py computes the figures; this
view draws them): for the group chosen above the chart, per table, bytes per row as
allocated on disk and as information_schema's DATA_LENGTH + INDEX_LENGTH would say,
against the raw row size, with the figures in a table."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QHeaderView, QLabel, QSplitter, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from dbxray.parsers.compare import all_groups, twins
from dbxray.parsers.humanize import human_bytes

from . import theme

COLUMNS = ("table", "engine", "rows", "on disk", "allocated", "I_S rows", "I_S data", "I_S index",
           "bytes/row", "× raw row")


class CompareView(QWidget):
    """Bars: allocated bytes per row (blue) and information_schema's (grey) per table of the
    chosen group, the raw row size as a dashed line; below them the figures."""

    title = "Compare"
    view_id = "compare"
    engine = None

    def __init__(self, parent=None):
        super().__init__(parent)
        self.group_box = QComboBox()
        self.group_box.currentIndexChanged.connect(self._draw)
        bar = QHBoxLayout()
        bar.setContentsMargins(6, 4, 6, 0)
        bar.addWidget(QLabel("Tables held more than once:"))
        bar.addWidget(self.group_box, 1)
        self.plot_widget = pg.PlotWidget(background=theme.background())
        self.plot = self.plot_widget.getPlotItem()
        self.plot.setMenuEnabled(False)
        self.plot.showGrid(x=True, y=False, alpha=0.25)
        theme.style_plot(self.plot)
        # top right: the tables come smallest first, so the top rows' bars end early
        self.legend = self.plot.addLegend(offset=(-10, 10), labelTextColor=theme.foreground(),
                                          brush=theme.qcolor(theme.background(), 220))
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.table.setEditTriggers(QTableWidget.NoEditTriggers)
        split = QSplitter(Qt.Vertical)
        split.addWidget(self.plot_widget)
        split.addWidget(self.table)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(bar)
        lay.addWidget(split)
        self.groups = []           # the chosen group's rows, for compatibility: [[TwinRow, ...]]
        self.all_groups = []       # every TwinGroup (name groups first)

    @staticmethod
    def shows(dataset) -> bool:
        """Only a data dir that holds a table twice (by name or by columns) has anything to compare."""
        return bool(all_groups(dataset))

    def set_dataset(self, dataset, root) -> None:
        self.all_groups = all_groups(dataset)
        self.group_box.blockSignals(True)
        self.group_box.clear()
        for g in self.all_groups:
            how = "same name" if g.by == "name" else "same columns"
            label = g.name if g.by == "name" else g.name.replace("same columns ", "", 1)
            self.group_box.addItem(f"{label} — {how}, {len(g.rows)} tables")
        self.group_box.blockSignals(False)
        self.group_box.setEnabled(len(self.all_groups) > 1)
        self._draw(0)

    def set_target(self, target: str) -> None:
        """Show the group holding table ``db.table`` (or the group of that name)."""
        for k, g in enumerate(self.all_groups):
            if g.name == target or any(r.table == target for r in g.rows):
                self.group_box.setCurrentIndex(k)
                return
        raise KeyError(f"target {target!r} is in no comparison group")

    def _draw(self, index: int) -> None:
        self.plot.clear()
        self.legend.clear()
        self.table.setRowCount(0)
        group = self.all_groups[index] if 0 <= index < len(self.all_groups) else None
        rows = list(group.rows) if group is not None else []
        self.groups = [rows] if rows else []
        if not rows:
            self.plot.setTitle("No table is held in more than one schema or engine", color=theme.foreground())
            return
        n = len(rows)
        y = np.arange(n)[::-1].astype(float)
        alloc = np.array([r.bytes_per_row or 0.0 for r in rows])
        i_s = np.array([((r.is_data_length or 0) + (r.is_index_length or 0)) / r.rows
                        if r.rows and r.is_data_length is not None else 0.0 for r in rows])
        for name, vals, colour, off in (("allocated bytes / row", alloc, theme.ALLOCATED, 0.18),
                                        ("information_schema bytes / row", i_s, theme.APPARENT, -0.18)):
            item = pg.BarGraphItem(x0=np.zeros(n), y=y + off, height=0.34, width=vals,
                                   brush=theme.qcolor(colour), pen=pg.mkPen(theme.qcolor(colour).darker(130)))
            self.plot.addItem(item)
            self.legend.addItem(item, name)
        raws = sorted({r.raw_row_bytes for r in rows if r.raw_row_bytes})
        for raw in raws:
            self.plot.addItem(pg.InfiniteLine(pos=raw, angle=90, pen=pg.mkPen(theme.foreground(), style=Qt.DashLine)))
        if raws:
            self.legend.addItem(pg.PlotDataItem(pen=pg.mkPen(theme.foreground(), style=Qt.DashLine)),
                                "raw row " + " / ".join(f"{r:,.0f} B" for r in raws))
        left = self.plot.getAxis("left")
        left.setTicks([[(float(yy), f"{r.table} ({r.engine})") for yy, r in zip(y, rows)]])
        left.setWidth(220)
        self.plot.getAxis("bottom").setLabel("bytes per row", color=theme.foreground())
        small = n > 8
        for yy, r, a, b in zip(y, rows, alloc, i_s):
            if r.bytes_per_row is None:
                text = "rows not known" + (" (encrypted)" if any("encrypted" in x for x in r.notes) else "")
            else:
                text = f"{a:,.1f} B/row" + (f"  ×{r.ratio_to_raw:.2f} raw" if r.ratio_to_raw else "")
            txt = pg.TextItem(text, color=theme.foreground(), anchor=(0, 0.5))
            # past both bars when they are drawn close together (small), else past its own bar
            txt.setPos(float(max(a, b)) if small else float(a), float(yy) + (0.0 if small else 0.18))
            self.plot.addItem(txt)
            if not small and r.bytes_per_row is not None and r.is_data_length is not None:
                lab = pg.TextItem(f"I_S {b:,.1f} B/row", color=theme.foreground(), anchor=(0, 0.5))
                lab.setPos(float(b), float(yy) - 0.18)
                self.plot.addItem(lab)
        how = "same name" if group.by == "name" else "same columns"
        self.plot.setTitle(f"{group.name if group.by == 'name' else group.name.replace('same columns ', '', 1)}"
                           f" ({how}, {n} tables): bytes per row, smallest first"
                           if group.by == "columns" else f"{group.name} ({how}, {n} tables): bytes per row",
                           color=theme.foreground(), size="10pt")
        # room right of the longest bar for its label
        xmax = max(float(alloc.max()), float(i_s.max()), max(raws) if raws else 0.0) * 1.6
        self.plot.setXRange(0, xmax or 1.0, padding=0)
        self.plot.setYRange(-0.7, n - 0.3, padding=0)
        self.table.setRowCount(n)
        for k, r in enumerate(rows):
            cells = (r.table, r.engine, _n(r.rows), human_bytes(r.disk_bytes), human_bytes(r.allocated_bytes),
                     _n(r.is_table_rows), "-" if r.is_data_length is None else human_bytes(r.is_data_length),
                     "-" if r.is_index_length is None else human_bytes(r.is_index_length),
                     "-" if r.bytes_per_row is None else f"{r.bytes_per_row:,.1f}",
                     "-" if r.ratio_to_raw is None else f"{r.ratio_to_raw:.3f}")
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if r.notes or r.raw_source:
                    item.setToolTip("\n".join(r.notes + ([f"raw row: {r.raw_source}"] if r.raw_source else [])))
                self.table.setItem(k, c, item)


def _n(v) -> str:
    return "-" if v is None else f"{v:,}"


__all__ = ["CompareView", "twins"]

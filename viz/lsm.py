"""MyRocks / RocksDB LSM tree: one row per column family level, the SSTs' bytes on
disk against the raw key + value bytes they hold, with the codec the files were
written with (and, where it differs, what the options now give the level) and the
file count; the rows come from parsers/rocksdb/facts.py."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QVBoxLayout, QWidget

from dbxray.parsers.humanize import axis_unit, human_bytes
from dbxray.parsers.rocksdb.facts import LsmRow, lsm_rows
from dbxray.parsers.tree import Node

from . import theme
from .textfit import fit_legend_columns


def _text(r: LsmRow) -> str:
    codec = "+".join(r.written) or "?"
    if r.differs:
        codec += f" (options now: {r.configured})"
    files = f"{r.files} file" + ("s" if r.files != 1 else "")
    return f"{codec} · {files} · {human_bytes(r.file_bytes)} / {human_bytes(r.raw_bytes)} ({r.ratio:.1f}×)"


class LsmView(QWidget):
    """Horizontal bars per column family level: raw key+value bytes (pale) and the
    files on disk (the level's codec colour) drawn over them."""

    title = "LSM"
    view_id = "lsm"
    engine = "rocksdb"

    def __init__(self, parent=None):
        super().__init__(parent)
        self.plot_widget = pg.PlotWidget(background=theme.background())
        self.plot = self.plot_widget.getPlotItem()
        self.plot.setMenuEnabled(False)
        self.plot.showGrid(x=True, y=False, alpha=0.25)
        theme.style_plot(self.plot)
        # one row at the top right, where the short rows of small levels leave room
        self.legend = self.plot.addLegend(offset=(-10, 5), labelTextColor=theme.foreground(),
                                          brush=theme.qcolor(theme.background(), 220))
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.plot_widget)
        self.rows: list[LsmRow] = []
        self.plot.getViewBox().sigResized.connect(self._fit_x)

    @staticmethod
    def shows(dataset) -> bool:
        return bool(lsm_rows(dataset))

    def set_dataset(self, dataset, root: Node) -> None:
        self.plot.clear()
        self.legend.clear()
        self.rows = lsm_rows(dataset)
        if not self.rows:
            self.plot.setTitle("No RocksDB levels", color=theme.foreground())
            return
        n = len(self.rows)
        y = np.arange(n)[::-1].astype(float)
        raw = np.array([r.raw_bytes for r in self.rows], dtype=float)
        disk = np.array([r.file_bytes for r in self.rows], dtype=float)
        scale, unit = axis_unit(max(raw.max(), disk.max(), 1))
        raw_item = pg.BarGraphItem(x0=np.zeros(n), y=y, height=0.8, width=raw / scale,
                                   brush=theme.qcolor(theme.APPARENT), pen=pg.mkPen(theme.qcolor(theme.APPARENT).darker(130)))
        self.plot.addItem(raw_item)
        self.legend.addItem(raw_item, "raw key + value")
        codecs = sorted({"+".join(r.written) or "?" for r in self.rows})
        colours = {c: theme.CATEGORICAL[i % len(theme.CATEGORICAL)] for i, c in enumerate(codecs)}
        for c in codecs:
            m = np.array([("+".join(r.written) or "?") == c for r in self.rows])
            item = pg.BarGraphItem(x0=np.zeros(int(m.sum())), y=y[m], height=0.5, width=disk[m] / scale,
                                   brush=theme.qcolor(colours[c]), pen=pg.mkPen(theme.qcolor(colours[c]).darker(130)))
            self.plot.addItem(item)
            self.legend.addItem(item, f"on disk, {c}")
        self._legend_rows = fit_legend_columns(self.legend, self.plot.getViewBox().width() - 20)
        left = self.plot.getAxis("left")
        left.setTicks([[(float(yy), r.label) for yy, r in zip(y, self.rows)]])
        left.setWidth(150)
        self.plot.getAxis("bottom").setLabel(f"bytes ({unit})", color=theme.foreground())
        self._label_fit = []
        for yy, r in zip(y, self.rows):
            t = _text(r)
            txt = pg.TextItem(t, color=theme.foreground(), anchor=(0, 0.5))
            end = max(r.raw_bytes, r.file_bytes) / scale
            txt.setPos(end, yy)
            self.plot.addItem(txt)
            self._label_fit.append((end, QFontMetricsF(txt.textItem.font()).horizontalAdvance(t) + 30))
        total_disk = sum(r.file_bytes for r in self.rows)
        total_raw = sum(r.raw_bytes for r in self.rows)
        files = sum(r.files for r in self.rows)
        cfs = len({(r.directory, r.column_family) for r in self.rows})
        cf_word = "column families" if self.width() >= 700 else "CFs"
        self.plot.setTitle(f"{files} SSTs, {cfs} {cf_word}: {human_bytes(total_disk)} on disk, "
                           f"{human_bytes(total_raw)} raw", color=theme.foreground(), size="10pt")
        self.plot.titleLabel.setMinimumWidth(10)
        self._fit_x()
        self.n_rows = n
        self._fit_y()

    def _fit_y(self) -> None:
        """A free band at the top for the legend, as tall as its rows."""
        vb = self.plot.getViewBox()
        n = self.n_rows
        h = float(vb.height())
        legend_px = self.legend.height() + 10
        if h > 60 and legend_px < h * 0.8:
            # rows of (h - legend_px) pixels below the band: the band is legend_px of h
            top = (n + 0.4) * legend_px / (h - legend_px)
        else:
            top = 0.5 + 0.6 * self._legend_rows
        self.plot.setYRange(-0.7, n - 0.3 + top, padding=0)

    def _fit_x(self, *args) -> None:
        fit = getattr(self, "_label_fit", None)
        if not fit:
            return
        vb = self.plot.getViewBox()
        rows = fit_legend_columns(self.legend, vb.width() - 20)
        if rows != self._legend_rows:
            self._legend_rows = rows
            self._fit_y()
        px = max(float(vb.width()), 120.0)
        xmax = max(end / max(0.1, 1.0 - text_px / px) for end, text_px in fit)
        self.plot.setXRange(0, xmax, padding=0)


__all__ = ["LsmView"]

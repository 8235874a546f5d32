"""The type advisor's page of the ClickHouse Columns view: the selected column's
suggestions as before/after bars (the column now, each suggested type or codec chain
projected, its 95% interval as a whisker), and the selected table's numeric columns
as a chart of their size as each type the advisor projected (the field note's
UInt32 / UInt64 / Float32 / Float64 comparison).

The advice itself (compress/typeadvice.advise's JSON) is computed by the app in a
worker; this page asks for it (``advise_requested``) and draws what it is given.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from dbxray.parsers.humanize import axis_unit, human_bytes

from . import theme

NOW = "#90A4AE"
LOSSLESS = "#43A047"
LOSSY = "#FB8C00"
CODEC = "#1E88E5"
#: the types of the comparison chart, in this order (the field note's four first)
COMPARE_TYPES = ("UInt32", "UInt64", "Float32", "Float64", "UInt8", "Int8", "UInt16", "Int16", "Int32", "Int64")
SERIES = ("#1E88E5", "#43A047", "#FB8C00", "#8E24AA", "#E53935", "#00ACC1", "#6D4C41", "#3949AB")


def column_bars(advice: dict) -> list[tuple[str, int, tuple[int, int], str]]:
    """(label, bytes, interval, colour) of one column's advice: the column now first."""
    out = [(f"now: {advice['type']} {advice['current_codec']}", int(advice["current_bytes"]),
            (int(advice["current_bytes"]),) * 2, NOW)]
    for c in advice.get("candidates") or []:
        out.append((f"{c['type']}" + ("" if c["lossless"] else " (loses precision)")
                    + (" (parts would turn Compact)" if c.get("warning") else ""), int(c["projected_bytes"]),
                    tuple(c["projected_bytes_ci95"]), LOSSLESS if c["lossless"] else LOSSY))
    for c in advice.get("codec_candidates") or []:
        out.append((f"{c['type']} CODEC({c['codec']})", int(c["projected_bytes"]), tuple(c["projected_bytes_ci95"]),
                    CODEC))
    return out


def type_comparison(columns: list[dict]) -> tuple[list[str], dict[str, dict[str, int]]]:
    """(types, {column: {type: bytes}}) of a table's numeric columns: each column's size now
    (its own type) and as each type suggested for it (lossless or not)."""
    table: dict[str, dict[str, int]] = {}
    for a in columns:
        own = a["type"]
        if own not in COMPARE_TYPES or a.get("not_advised"):
            continue
        sizes = {own: int(a["current_bytes"])}
        for c in a.get("candidates") or []:
            if c["type"] in COMPARE_TYPES:
                sizes[c["type"]] = int(c["projected_bytes"])
        if len(sizes) > 1 or own in ("UInt32", "UInt64", "Float32", "Float64"):
            table[a["column"]] = sizes
    types = [t for t in COMPARE_TYPES if any(t in s for s in table.values())]
    return types, table


class TypeAdvicePage(QWidget):
    """The Types page: a button to run the advisor, then the two charts."""

    advise_requested = Signal(str, bool)    # the sample ("0.05" or "all"), codec chains too

    def __init__(self, parent=None):
        super().__init__(parent)
        self.advice: dict | None = None
        self.table_key: str | None = None
        self.column: str | None = None
        self.bars: list = []                 # what the column chart draws (tests read it)
        self.compare: tuple[list, dict] = ([], {})
        self.run_button = QPushButton("Advise types")
        self.run_button.clicked.connect(self._run)
        self.sample_combo = QComboBox()
        self.sample_combo.addItem("5% sample", "0.05")
        self.sample_combo.addItem("every value", "all")
        self.codecs_box = QCheckBox("codec chains")
        self.codecs_box.setChecked(True)
        self.codecs_box.setToolTip("Also project the codec chains each column would take least room with "
                                   "(slower: every chain is encoded)")
        self.status = QLabel("Types and codecs the columns' values would take least room with: run the "
                             "advisor (it decodes a sample of each column's blocks).")
        self.status.setWordWrap(True)
        self.status.setStyleSheet(f"color:{theme.foreground()}; padding:2px 8px;")
        top = QHBoxLayout()
        top.setContentsMargins(6, 2, 6, 0)
        top.addWidget(self.run_button)
        top.addWidget(self.sample_combo)
        top.addWidget(self.codecs_box)
        top.addWidget(self.status, 1)
        self.glw = pg.GraphicsLayoutWidget()
        self.glw.setBackground(theme.background())
        self.col_plot = self.glw.addPlot(row=0, col=0)
        self.cmp_plot = self.glw.addPlot(row=1, col=0)
        for p in (self.col_plot, self.cmp_plot):
            p.setMenuEnabled(False)
            p.hideButtons()
            p.setMouseEnabled(x=False, y=False)
            theme.style_plot(p)
        self.col_plot.showGrid(x=True, y=False, alpha=0.15)
        self.cmp_plot.showGrid(x=False, y=True, alpha=0.25)
        self.cmp_legend = self.cmp_plot.addLegend(offset=(-10, 10))
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addLayout(top)
        lay.addWidget(self.glw, 1)

    def _run(self) -> None:
        self.advise_requested.emit(self.sample_combo.currentData(), self.codecs_box.isChecked())

    # -- what the app calls ------------------------------------------------------------
    def set_running(self, running: bool) -> None:
        self.run_button.setEnabled(not running)
        if running:
            self.status.setText("Advising… (Cancel in the status bar stops it)")

    def set_progress(self, done: int, total: int, message: str) -> None:
        self.status.setText(f"Advising… {done} of {total} columns  {message}")

    def set_advice(self, advice: dict | None, message: str = "") -> None:
        self.advice = advice
        if advice is None:
            self.status.setText(message or "No advice")
        else:
            n = sum(len(a["candidates"]) + len(a.get("codec_candidates") or []) for a in advice["columns"])
            self.status.setText(f"{n} suggestions over {len(advice['columns'])} columns (sample "
                                f"{advice['sample']}, {advice['seconds']:.1f} s). {advice['warning']}.")
        self.redraw()

    def show(self, table_key: str | None, column: str | None) -> None:       # noqa: A003 -- the view's word
        self.table_key, self.column = table_key, column
        self.redraw()

    # -- drawing -----------------------------------------------------------------------
    def _table_columns(self) -> list[dict]:
        if not self.advice or not self.table_key:
            return []
        return [a for a in self.advice["columns"] if f"{a['database']}.{a['table']}" == self.table_key]

    def redraw(self) -> None:
        # no advice yet: no empty axes under the button and its hint, only the two once run
        self.glw.setVisible(self.advice is not None)
        cols = self._table_columns()
        a = next((c for c in cols if c["column"] == self.column), None)
        if a is None:       # the first column with a suggestion
            a = next((c for c in cols if c["candidates"] or c.get("codec_candidates")), None)
        self._draw_column(a)
        self._draw_compare(cols)

    def _draw_column(self, a: dict | None) -> None:
        p = self.col_plot
        p.clear()
        self.bars = column_bars(a) if a and not a.get("not_advised") else []
        if not a:
            _empty(p, "No column advice for this table yet" if self.advice else "")
            return
        if a.get("not_advised"):
            _empty(p, f"{a['column']}: {a['not_advised']}")
            return
        _axes(p, True)
        p.setTitle(f"{a['column']} ({a['type']}): now and as each suggestion, on disk")
        top = max([b[2][1] for b in self.bars] + [b[1] for b in self.bars] + [1])
        scale, unit = axis_unit(top)
        n = len(self.bars)
        ys = np.arange(n)[::-1].astype(float)
        widths = np.array([b[1] for b in self.bars], dtype=float) / scale
        brushes = [pg.mkBrush(b[3]) for b in self.bars]
        p.addItem(pg.BarGraphItem(x0=np.zeros(n), y=ys, height=0.6, width=widths, brushes=brushes, pens=[None] * n))
        lo = np.array([b[2][0] for b in self.bars], dtype=float) / scale
        hi = np.array([b[2][1] for b in self.bars], dtype=float) / scale
        p.addItem(pg.ErrorBarItem(x=widths, y=ys, left=np.maximum(widths - lo, 0), right=np.maximum(hi - widths, 0),
                                  beam=0.2, pen=pg.mkPen(theme.foreground(), width=1)))
        for y, b, w in zip(ys, self.bars, widths):
            t = pg.TextItem(f"{b[0]}  {human_bytes(b[1])}", color=theme.foreground(), anchor=(0, 0.5))
            t.setPos(0, y + 0.42)
            p.addItem(t)
        p.getAxis("left").setTicks([[]])
        p.setLabel("bottom", f"bytes ({unit})")
        p.setYRange(-0.6, n - 0.2 + 0.5, padding=0)
        p.setXRange(0, float(hi.max() if len(hi) else 1) * 1.15, padding=0)

    def _draw_compare(self, cols: list[dict]) -> None:
        p = self.cmp_plot
        p.clear()
        self.cmp_legend.clear()
        types, table = type_comparison(cols)
        self.compare = (types, table)
        if not types:
            _empty(p, "No integer or float columns advised in this table" if self.advice else "")
            return
        _axes(p, True)
        p.setTitle("The table's numeric columns as each type (now or projected)")
        top = max(v for s in table.values() for v in s.values())
        scale, unit = axis_unit(max(top, 1))
        k = len(table)
        w = 0.8 / max(k, 1)
        for j, (name, sizes) in enumerate(table.items()):
            xs = [i - 0.4 + w * (j + 0.5) for i, t in enumerate(types) if t in sizes]
            hs = [sizes[t] / scale for t in types if t in sizes]
            item = pg.BarGraphItem(x=xs, height=hs, width=w * 0.9, brush=pg.mkBrush(SERIES[j % len(SERIES)]),
                                   pen=None)
            p.addItem(item)
            self.cmp_legend.addItem(item, name)
        p.getAxis("bottom").setTicks([[(i, t) for i, t in enumerate(types)]])
        p.setLabel("left", f"bytes ({unit})")
        p.setXRange(-0.6, len(types) - 0.4, padding=0)
        p.setYRange(0, top / scale * 1.1, padding=0)
        p.getViewBox().setBackgroundColor(None)


def _axes(p, on: bool) -> None:
    """A plot's two axes shown (something drawn) or hidden (a title alone: no empty 0..1 axes)."""
    for side in ("left", "bottom"):      # an axis draws its grid lines too
        (p.showAxis if on else p.hideAxis)(side)


def _empty(p, title: str) -> None:
    """A plot holding only its title (why there is nothing to draw)."""
    p.setTitle(title)
    _axes(p, False)

"""What-if view: pick codecs and a sample, run (the window runs the job),
then see current vs projected bytes per codec with 95% error bars, a
ratio-vs-decode-speed scatter with the Pareto front, a table of numbers and
the advisor's DDL with a copy button.

The view only draws the JSON that :func:`compress.whatif.run_whatif` returns
(the ``dbxray whatif --json`` contract); running it is the window's job.
"""
from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QListWidget,
                               QListWidgetItem, QPushButton, QSizePolicy, QSplitter, QTableWidget,
                               QTableWidgetItem, QTabWidget, QVBoxLayout, QWidget)

from dbxray.parsers.humanize import axis_unit, human_bytes, human_speed, short_label

from . import theme
from .labelplace import label_collisions, place_labels
from .textfit import wrap_title

#: presets per engine present in the dataset
PRESETS = {
    "innodb": ["zlib:1", "zlib:6", "lz4", "lzma:6", "bzip2:9", "snappy", "zstd:3"],
    "tokudb": ["zlib:6", "lzma:6", "snappy", "lz4", "zstd:3"],
    "clickhouse": ["LZ4", "ZSTD(1)", "ZSTD(3)", "Delta(4),ZSTD(1)", "T64,ZSTD(1)", "Gorilla", "DoubleDelta"],
}
SAMPLES = [("1%", "0.01"), ("5%", "0.05"), ("10%", "0.1"), ("25%", "0.25"), ("all", "all")]


def pareto_front(ratio: np.ndarray, speed: np.ndarray) -> np.ndarray:
    """Indices of points not dominated (higher ratio and higher speed are better), by speed."""
    order = np.argsort(-speed, kind="stable")
    front, best = [], -np.inf
    for i in order:
        if ratio[i] > best:
            front.append(i)
            best = ratio[i]
    return np.array(front, dtype=int)


class WhatIfView(QWidget):
    """Codec what-if: controls on top, charts, numbers and advice below."""

    title = "What if"
    view_id = "whatif"
    #: the engine whose files this view draws (None: any dataset)
    engine = None
    #: draws what a light first scan leaves for later (ClickHouse blocks, ``Engine.deferred``):
    #: a headless export completes the scan before drawing it
    reads_deferred = True
    #: the advice table's verdict and DDL columns
    ADVICE_VERDICT, ADVICE_DDL = 3, 4
    run_requested = Signal(list, str)     # codec names, sample ("0.05" | "all")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.results: dict | None = None
        self.dataset = None
        # controls
        self.codec_list = QListWidget()
        self.codec_list.setMaximumHeight(56)
        self.codec_list.setFlow(QListWidget.LeftToRight)
        self.codec_list.setWrapping(True)
        self.custom = QLineEdit()
        self.custom.setPlaceholderText("more codecs, comma-free list: zstd:9 lz4hc:9 T64,LZ4")
        self.sample = QComboBox()
        for label, value in SAMPLES:
            self.sample.addItem(label, value)
        self.sample.setCurrentIndex(1)
        self.run_button = QPushButton("Run what-if")
        self.run_button.clicked.connect(self._request_run)
        self.target = QComboBox()
        self.target.currentIndexChanged.connect(self._on_target)
        self.model = QComboBox()
        self.model.setToolTip("storage model: the engine's own granularity, or filesystem compression")
        self.model.currentIndexChanged.connect(self._draw_target)
        self.status = QLabel("Choose codecs and run. Projections use the engine's own units and storage "
                             "granularity, with 95% confidence intervals.")
        self.status.setWordWrap(True)
        top = QHBoxLayout()
        top.addWidget(QLabel("Sample:"))
        top.addWidget(self.sample)
        top.addWidget(self.custom, 1)
        top.addWidget(self.run_button)
        # charts
        self.bars = pg.PlotWidget(background=theme.background())
        self.scatter = pg.PlotWidget(background=theme.background())
        for w in (self.bars, self.scatter):
            w.getPlotItem().setMenuEnabled(False)
            w.getPlotItem().showGrid(x=True, y=True, alpha=0.2)
            theme.style_plot(w.getPlotItem())
            wrap_title(w.getPlotItem())             # a long title wraps, never widens the view
        self.scatter_points = None            # (speed, ratio, names) of the drawn points
        self.scatter_label_items: list = []
        self._label_timer = QTimer(self)
        self._label_timer.setSingleShot(True)
        self._label_timer.timeout.connect(self.place_scatter_labels)
        self.bar_label_items: list = []          # (x, top of bar and interval, TextItem)
        self.hidden_bar_labels = 0
        self.hidden_scatter_names: list[str] = []
        self.unmeasured_codecs: list[str] = []
        self._bar_timer = QTimer(self)
        self._bar_timer.setSingleShot(True)
        self._bar_timer.timeout.connect(self.place_bar_labels)
        self.bars.getPlotItem().getViewBox().sigResized.connect(lambda *_: self._bar_timer.start(0))
        svb = self.scatter.getPlotItem().getViewBox()
        svb.sigResized.connect(lambda *_: self._label_timer.start(0))
        svb.sigRangeChanged.connect(lambda *_: self._label_timer.start(0))
        self.charts = QWidget()
        cl = QVBoxLayout(self.charts)
        cl.setContentsMargins(0, 0, 0, 0)
        self.chart_title = QLabel("")
        self.chart_title.setStyleSheet("font-weight: bold; font-size: 13px")
        self.chart_title.setWordWrap(True)          # a long file path wraps instead of widening the view
        self.chart_title.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        cl.addWidget(self.chart_title)
        row = QHBoxLayout()
        row.addWidget(self.bars, 3)
        row.addWidget(self.scatter, 2)
        cl.addLayout(row, 1)
        # numbers and advice
        self.table = QTableWidget(0, 9)
        self.table.setHorizontalHeaderLabels(["target", "codec", "model", "current", "projected", "95% CI",
                                              "compression saving", "compress MB/s", "decompress MB/s"])
        self.table.horizontalHeaderItem(6).setToolTip(
            "What the codec saves against the table rebuilt as it is (its DDL rebuilds the table): the "
            "free pages and unwritten space a rebuild alone reclaims are not counted ('-': a filesystem "
            "model, which keeps them)")
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.ElideMiddle)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.table.setSortingEnabled(True)
        self.advice = QTableWidget(0, 5)
        # the verdict ("tie within error with ...", the sample that would separate them) is a
        # column of its own, not only a tooltip (issue 17 item 2)
        self.advice.setHorizontalHeaderLabels(["target", "codec", "saving\n(95% interval)", "verdict", "DDL"])
        ah = self.advice.horizontalHeader()
        for c in range(3):
            ah.setSectionResizeMode(c, QHeaderView.ResizeToContents)
        ah.setSectionResizeMode(self.ADVICE_VERDICT, QHeaderView.Interactive)
        ah.resizeSection(self.ADVICE_VERDICT, 22 * self.fontMetrics().averageCharWidth())
        ah.setSectionResizeMode(self.ADVICE_DDL, QHeaderView.Stretch)
        self.advice.setWordWrap(True)               # the whole SQL, wrapped in its row
        self.advice.verticalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.copy_button = QPushButton("Copy DDL")
        self.copy_button.clicked.connect(self.copy_ddl)
        # numbers and advice each get the view's full width (tabs), not half of it
        self.lower = QTabWidget()
        self.lower.setDocumentMode(True)
        self.lower.addTab(self.table, "Results")
        adv = QWidget()
        al = QVBoxLayout(adv)
        al.setContentsMargins(0, 0, 0, 0)
        al.addWidget(self.advice)
        al.addWidget(self.copy_button, 0, Qt.AlignRight)
        self.lower.addTab(adv, "Advice")
        split = QSplitter(Qt.Vertical)
        split.addWidget(self.charts)
        split.addWidget(self.lower)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([420, 280])
        lay = QVBoxLayout(self)
        lay.addWidget(self.codec_list)
        lay.addLayout(top)
        tl = QHBoxLayout()
        tl.addWidget(QLabel("Target:"))
        tl.addWidget(self.target, 3)
        tl.addWidget(QLabel("Model:"))
        tl.addWidget(self.model, 1)
        lay.addLayout(tl)
        lay.addWidget(self.status)
        lay.addWidget(split, 1)

    # -- view protocol ----------------------------------------------------------
    def set_dataset(self, dataset, root) -> None:
        self.dataset = dataset
        self.codec_list.clear()
        seen = []
        for eng in dataset.engines:
            for c in PRESETS.get(eng, []):
                if c not in seen:
                    seen.append(c)
        for c in seen or PRESETS["innodb"]:
            item = QListWidgetItem(c)
            item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
            item.setCheckState(Qt.Checked)
            self.codec_list.addItem(item)
        self.results = None
        self.target.clear()
        self._clear_charts()

    def export_widget(self):
        return self.charts

    def set_target(self, text: str) -> None:
        i = self.target.findText(text)
        if i < 0:
            raise KeyError(f"target {text!r} not in the what-if results")
        self.target.setCurrentIndex(i)

    def select_node(self, node) -> None:
        if self.results is None:
            return
        names = []
        if getattr(node, "path", None):
            names.append(node.path)
        if node.kind == "table" and node.parent is not None:
            names.append(f"{node.parent.name}.{node.name}")
        for n in names:
            i = self.target.findText(n)
            if i >= 0:
                self.target.setCurrentIndex(i)
                return

    # -- running ----------------------------------------------------------------
    def selected_codecs(self) -> list[str]:
        out = [self.codec_list.item(i).text() for i in range(self.codec_list.count())
               if self.codec_list.item(i).checkState() == Qt.Checked]
        out += [c for c in self.custom.text().split() if c]
        return out

    def _request_run(self) -> None:
        codecs = self.selected_codecs()
        if not codecs:
            self.status.setText("Pick at least one codec.")
            return
        self.status.setText(f"Running {len(codecs)} codecs on a {self.sample.currentText()} sample…")
        self.run_requested.emit(codecs, self.sample.currentData())

    def set_running(self, running: bool, message: str | None = None) -> None:
        """Enable Run again when a run ends; ``message``: why it ended without results
        (cancelled, failed), replacing the "Running…" line."""
        self.run_button.setEnabled(not running)
        if message:
            self.status.setText(message)

    def set_results(self, results: dict | None) -> None:
        """Show a ``run_whatif`` result (the ``dbxray whatif --json`` document)."""
        self.results = results
        self.target.blockSignals(True)
        self.target.clear()
        if not results:
            self.target.blockSignals(False)
            self.status.setText("No what-if results (no engine data to re-encode).")
            return
        targets = results.get("targets", [])
        # the biggest targets first; shown first: the biggest of the first engine in the
        # registry's order (InnoDB before ClickHouse before TokuDB), not whichever file is biggest
        for t in sorted(targets, key=lambda t: -int(t.get("current_bytes", 0))):
            self.target.addItem(t["target"])
        first = default_target(targets)
        self.target.blockSignals(False)
        s = results.get("sample", {})
        self.status.setText(f"{len(targets)} targets; {sample_words(s)}. Filesystem block "
                            f"{results.get('fs_block')} B. Error bars: 95% confidence intervals (hover "
                            f"for how they are made).")
        self.status.setToolTip(f"The sample: {s['description']}." if s.get("description") else "")
        self._fill_table(targets)
        self._fill_advice(results.get("advice", []))
        self.lower.setTabText(0, f"Results ({self.table.rowCount()})")
        self.lower.setTabText(1, f"Advice ({self.advice.rowCount()})")
        if self.target.count():
            i = self.target.findText(first) if first else -1
            self.target.setCurrentIndex(max(0, i))
            self._on_target()

    # -- drawing ------------------------------------------------------------------
    def _clear_charts(self) -> None:
        self.bars.getPlotItem().clear()
        self.scatter.getPlotItem().clear()
        self.chart_title.setText("")
        self.table.setRowCount(0)
        self.advice.setRowCount(0)

    def _target(self) -> dict | None:
        if not self.results:
            return None
        name = self.target.currentText()
        return next((t for t in self.results.get("targets", []) if t["target"] == name), None)

    def _on_target(self) -> None:
        """Fill the model choice for the target (its engine model first), then draw."""
        t = self._target()
        self.model.blockSignals(True)
        self.model.clear()
        if t is not None:
            models: list[str] = []
            for r in t.get("results", []):
                if r.get("model", "") not in models:
                    models.append(r.get("model", ""))
            for m in models:
                self.model.addItem(model_label(m), m)
        self.model.blockSignals(False)
        self._draw_target()

    def _draw_target(self) -> None:
        t = self._target()
        bp, sp = self.bars.getPlotItem(), self.scatter.getPlotItem()
        bp.clear()
        sp.clear()
        self.scatter_label_items = []
        self.scatter_points = None
        self.bar_label_items = []
        self.hidden_scatter_names = []
        if t is None or not t.get("results"):
            return
        model = self.model.currentData() or ""
        res = sorted((r for r in t["results"] if r.get("model", "") == model or not model),
                     key=lambda r: r["projected_bytes"])
        if not res:
            return
        cur = float(t["current_bytes"])
        logical = float(t.get("logical_bytes") or 0)
        vals = np.array([r["projected_bytes"] for r in res], dtype=float)
        lo = np.array([(r.get("ci95") or [r["projected_bytes"]] * 2)[0] for r in res], dtype=float)
        hi = np.array([(r.get("ci95") or [r["projected_bytes"]] * 2)[1] for r in res], dtype=float)
        scale, unit = axis_unit(max(cur, vals.max(), hi.max(), 1))
        n = len(res)
        x = np.arange(n + 1, dtype=float)
        heights = np.concatenate([[cur], vals]) / scale
        colours = [theme.qcolor(theme.APPARENT)] + [theme.qcolor(theme.CATEGORICAL[i % len(theme.CATEGORICAL)])
                                                    for i in range(n)]
        bp.addItem(pg.BarGraphItem(x=x, height=heights, width=0.7, brushes=colours,
                                   pens=[pg.mkPen(c.darker(140)) for c in colours]))
        # the current bar's free pages and unwritten space (what a rebuild alone reclaims) drawn
        # on top of it in their own colour: a codec whose DDL rebuilds is compared with the rest
        sp_ = t.get("split") or {}
        reclaim = float(sp_.get("reclaimable_bytes") or 0)
        if reclaim > 0 and cur > 0:
            rc = theme.qcolor(theme.UNWRITTEN)
            top = pg.BarGraphItem(x=[0.0], y0=[(cur - reclaim) / scale], height=[reclaim / scale], width=0.7,
                                  brushes=[rc], pens=[pg.mkPen(rc.darker(150))])
            top.setToolTip(f"{human_bytes(reclaim)} of free pages and unwritten space: what a rebuild "
                           f"(OPTIMIZE TABLE) alone reclaims, not counted in any codec's saving"
                           if sp_.get("shrinks", True) else
                           f"{human_bytes(reclaim)} of free pages inside the file, not reclaimable: "
                           f"{sp_.get('shrink_note') or 'no statement shrinks this file'}; not counted in any "
                           f"codec's saving")
            bp.addItem(top)
            if any("compression_saving_bytes" in r for r in res):
                line = pg.InfiniteLine(pos=(cur - reclaim) / scale, angle=0,
                                       pen=pg.mkPen(theme.qcolor(theme.APPARENT).darker(160), width=1,
                                                    style=Qt.DashLine))
                line.setToolTip("rebuilt as it is: the codecs' savings are counted from here" if sp_.get("shrinks", True)
                                else "the pages in use: the codecs' savings are counted from here")
                bp.addItem(line)
        err = pg.ErrorBarItem(x=x[1:], y=vals / scale, top=(hi - vals) / scale, bottom=(vals - lo) / scale,
                              beam=0.25, pen=pg.mkPen(theme.foreground(), width=1.5))
        bp.addItem(err)
        labels = ["current"] + [f"{r['codec']}" for r in res]
        # each bar named above it with its change (two short lines), not on a crowded axis where
        # neighbouring names ran together ("currentlzma:6zstd:1")
        bp.getAxis("bottom").setTicks([[]])
        bp.getAxis("bottom").setStyle(showValues=False)
        bp.getAxis("left").setLabel(f"bytes on disk ({unit})", color=theme.foreground())
        tops = [float(max(h, (hi[i - 1] / scale) if i else h)) for i, h in enumerate(heights)]
        px_bar = max(bp.getViewBox().width(), 200.0) / (n + 1.2)
        widest = 0.0
        # the changes are the codecs' own: against the table rebuilt as it is where their DDL rebuilds it
        rebuilt = float((t.get("split") or {}).get("rebuilt_bytes") or 0)
        pct_base = rebuilt / scale if rebuilt and any("compression_saving_bytes" in r for r in res) \
            else heights[0]
        self.bar_label_items = []
        for i, h in enumerate(heights):
            pct = "" if i == 0 else f"{100 * (heights[i] / pct_base - 1):+.0f}%" if pct_base else ""
            name = short_label(labels[i], 12, 0)
            txt = pg.TextItem(html=f"<div style='text-align:center; color:{theme.foreground()}; font-size:9pt'>"
                                   f"{html.escape(pct or human_bytes(h * scale))}<br>{html.escape(name)}</div>",
                              anchor=(0.5, 1.0))
            txt.setPos(float(i), tops[i])
            bp.addItem(txt)
            self.bar_label_items.append((float(i), tops[i], txt))
            widest = max(widest, txt.textItem.boundingRect().width())
        margin = max(0.6, (widest + 8) / 2 / px_bar)         # the end bars' labels stay inside
        bp.setXRange(-margin, n + margin, padding=0)
        bp.setYRange(0, max(tops) * 1.4, padding=0)
        self.place_bar_labels()
        bp.setTitle("current vs projected (95% CI)" + (
            f"<br><span style='font-size:9pt'>light top: {human_bytes(reclaim)} free (a rebuild's)"
            f"{'; % vs dashed line' if pct_base != heights[0] else ''}</span>" if reclaim > 0 else ""),
            color=theme.foreground(), size="10pt")
        if reclaim > 0:                       # a second title line: pyqtgraph fixes the row at 30 px
            bp.titleLabel.setMaximumHeight(44)
            bp.layout.setRowFixedHeight(0, 44)
        # scatter: ratio vs decompress speed, Pareto front; codecs whose speed was not
        # measured (reference decoders, 'none') are named under the title, not drawn at 0
        base = logical or cur
        unmeasured = [r["codec"] for r in res if not r.get("decompress_mb_s")]
        drawn = [i for i, r in enumerate(res) if r.get("decompress_mb_s")]
        colours_drawn = [colours[i + 1] for i in drawn]
        res = [res[i] for i in drawn]
        n = len(res)
        ratio = np.array([base / max(r["projected_bytes"], 1) for r in res])
        speed = np.array([float(r["decompress_mb_s"]) for r in res])
        spots = [{"pos": (speed[i], ratio[i]), "brush": colours_drawn[i], "size": self.MARKER_PX,
                  "pen": pg.mkPen(colours_drawn[i].darker(150)), "data": res[i]["codec"]} for i in range(n)]
        # hovering a point names it (a plot too small for every name leaves some out)
        sp.addItem(pg.ScatterPlotItem(spots=spots, hoverable=True,
                                      tip=lambda x, y, data: f"{data}: ratio {y:.2f}, {x:,.0f} MB/s"))
        front = pareto_front(ratio, speed)
        if len(front) > 1:
            sp.plot(speed[front], ratio[front], pen=pg.mkPen(theme.MISSING_HOLE, width=1.5, style=Qt.DashLine))
        if n:
            span = max(speed.max() - speed.min(), speed.max() * 0.1, 1.0)
            x0, x1 = max(0.0, speed.min() - 0.08 * span), speed.max() + 0.45 * span     # room for labels
            rspan = max(ratio.max() - ratio.min(), ratio.max() * 0.05, 0.01)
            y0, y1 = ratio.min() - 0.1 * rspan, ratio.max() + 0.1 * rspan
            sp.setXRange(x0, x1, padding=0)
            sp.setYRange(y0, y1, padding=0)
            self.scatter_points = (speed, ratio, [short_label(r["codec"], 16, 0) for r in res])
            self.place_scatter_labels()
        sp.getAxis("bottom").setLabel("decompress MB/s", color=theme.foreground())
        sp.getAxis("left").setLabel("ratio (logical / projected)", color=theme.foreground())
        self.unmeasured_codecs = unmeasured
        sp.setToolTip("Speeds: one thread, the C library the engine links, on this target's sampled units."
                      + (f"\nNot measured (reference implementations here, or no codec): {', '.join(unmeasured)}"
                         if unmeasured else ""))
        self._scatter_title()
        sp = t.get("split") or {}
        reclaim = (f", reclaimable {human_bytes(sp['reclaimable_bytes'])} (rebuild)"
                   if sp.get("reclaimable_bytes") else "")
        breakable = html.escape(str(t["target"])).replace("/", "/\u200b").replace("_", "_\u200b")
        self.chart_title.setText(f"{breakable}<br><span style='font-weight: normal'>{t['engine']}, {model_label(model)}: "
                                 f"current {human_bytes(cur)}, logical {human_bytes(logical)}{reclaim}</span>")
        self.chart_title.setTextFormat(Qt.RichText)
        self.chart_title.setToolTip(f"{t['target']} ({t['engine']}, model {model_label(model)} = {model})")

    def _scatter_title(self) -> None:
        sp = self.scatter.getPlotItem()
        second = "(dashed: Pareto front)"
        if self.hidden_scatter_names:
            k = len(self.hidden_scatter_names)
            second = f"{k} name{'s' if k != 1 else ''} left out: hover a point"
        if self.unmeasured_codecs:
            second += (f"<br>speed not measured: "
                       f"{html.escape(short_label(', '.join(self.unmeasured_codecs), 48, 0))}")
        sp.setTitle(f"ratio vs decode speed<br>{second}", color=theme.foreground(), size="10pt")
        if self.unmeasured_codecs:                   # a third line: pyqtgraph fixes the title row at 30 px
            sp.titleLabel.setMaximumHeight(46)
            sp.layout.setRowFixedHeight(0, 46)

    def place_bar_labels(self) -> None:
        """Each bar's label (its change and codec) just above the bar and its error bar, moved
        up until it touches no other label and no bar (narrow bars: the labels stack), the y
        range as tall as the highest label needs; in pixels, placed again on resize."""
        vb = self.bars.getPlotItem().getViewBox()
        items = self.bar_label_items
        w_px, h_px = float(vb.width()), float(vb.height())
        if not items or w_px < 50 or h_px < 50:
            return
        ink = []
        for _x, _top, t in items:
            m = t.textItem.document().documentMargin()
            r = t.textItem.boundingRect()
            ink.append((r.width() - 2 * m, r.height() - 2 * m, m))
        # x margins that keep the end bars' labels inside: margin * px_per_bar >= half a label
        n = len(items) - 1
        half = max(ink[0][0], ink[-1][0]) / 2 + 3
        margin = max(0.6, half * n / max(w_px - 2 * half, 1.0))
        vb.setXRange(-margin, n + margin, padding=0)
        (x0, x1), _ = vb.viewRange()
        peak = max(top for _, top, _ in items) or 1.0
        top_value = peak * 1.1

        def px(xv):
            return (xv - x0) / (x1 - x0) * w_px

        for _ in range(12):          # the bars keep at least a quarter of the height
            def py(yv):
                return h_px - yv / top_value * h_px
            bars = [(px(x - 0.35), py(top), px(x + 0.35), h_px) for x, top, _ in items]
            boxes, ok = [], True
            for (x, top, _t), (w, h, _m) in zip(items, ink):
                bottom = py(top) - 3
                while True:
                    box = (px(x) - w / 2, bottom - h, px(x) + w / 2, bottom)
                    if box[1] < 0:
                        ok = False
                        break
                    if any(box[0] < b[2] + 2 and b[0] < box[2] + 2 and box[1] < b[3] + 2 and b[1] < box[3] + 2
                           for b in bars + boxes):
                        bottom -= 3
                        continue
                    break
                if not ok:
                    break
                boxes.append(box)
            if ok:
                break
            top_value *= 1.12
        vb.setYRange(0, top_value, padding=0)
        # a plot too narrow and short for every label: those that found no room are left out
        # (the Results tab has every figure)
        self.hidden_bar_labels = len(items) - len(boxes)
        for k, (x, _top, t) in enumerate(items):
            t.setVisible(k < len(boxes))
            if k < len(boxes):
                t.setPos(x, (h_px - (boxes[k][3] + ink[k][2])) / h_px * top_value)

    #: diameter of a scatter point's marker, pixels
    MARKER_PX = 12

    def place_scatter_labels(self) -> None:
        """Each point's name where it covers no marker and no other name (viz/labelplace.py),
        with a thin leader line when it had to move away from its point; placed again in
        pixels whenever the plot changes size or range."""
        sp = self.scatter.getPlotItem()
        vb = sp.getViewBox()
        for it in self.scatter_label_items:
            sp.removeItem(it)
        self.scatter_label_items = []
        if self.scatter_points is None:
            return
        speed, ratio, names = self.scatter_points
        box = vb.sceneBoundingRect()
        if box.width() < 20 or box.height() < 20:
            return
        pts = []
        for x, y in zip(speed, ratio):
            p = vb.mapViewToScene(QPointF(float(x), float(y)))
            pts.append((p.x() - box.left(), p.y() - box.top()))
        items, sizes, margins = [], [], []
        for name in names:
            ti = pg.TextItem(name, color=theme.foreground(), anchor=(0, 0))
            m = ti.textItem.document().documentMargin()
            r = ti.textItem.boundingRect()
            items.append(ti)
            margins.append(m)
            sizes.append((r.width() - 2 * m, r.height() - 2 * m))
        radius = self.MARKER_PX / 2 + 1
        placed = place_labels(pts, sizes, radius, (0.0, 0.0, box.width(), box.height()))
        self.hidden_scatter_names = [n for n, pl in zip(names, placed) if not pl.free]
        self._scatter_title()
        for ti, pl, m, (px, py) in zip(items, placed, margins, pts):
            if not pl.free:         # no room left in a small plot: the point's tooltip names it
                continue
            ti.setPos(vb.mapSceneToView(QPointF(box.left() + pl.x - m, box.top() + pl.y - m)))
            sp.addItem(ti)
            self.scatter_label_items.append(ti)
            if pl.leader:       # from the marker's edge to the nearest point of the name
                nx = min(max(px, pl.x), pl.x + pl.w)
                ny = min(max(py, pl.y), pl.y + pl.h)
                d = max(((nx - px) ** 2 + (ny - py) ** 2) ** 0.5, 1e-9)
                sx, sy = px + (nx - px) * radius / d, py + (ny - py) * radius / d
                a = vb.mapSceneToView(QPointF(box.left() + sx, box.top() + sy))
                b = vb.mapSceneToView(QPointF(box.left() + nx, box.top() + ny))
                line = pg.PlotDataItem([a.x(), b.x()], [a.y(), b.y()], pen=pg.mkPen("#9E9E9E", width=0.8))
                sp.addItem(line)
                self.scatter_label_items.append(line)

    def scatter_label_collisions(self) -> list[str]:
        """The drawn point names against the drawn markers and each other, in scene pixels
        (for the window's state dump; the tests measure the same on their own)."""
        sp = self.scatter.getPlotItem()
        vb = sp.getViewBox()
        scat = next((i for i in sp.items if isinstance(i, pg.ScatterPlotItem)), None)
        if scat is None:
            return []
        pts = [vb.mapViewToScene(QPointF(s.pos())) for s in scat.points()]
        boxes = []
        for t in (i for i in self.scatter_label_items if isinstance(i, pg.TextItem)):
            m = t.textItem.document().documentMargin()
            r = t.textItem.mapRectToScene(t.textItem.boundingRect().adjusted(m, m, -m, -m))
            boxes.append((r.left(), r.top(), r.right(), r.bottom()))
        return label_collisions([(p.x(), p.y()) for p in pts], boxes, self.MARKER_PX / 2)

    def _fill_table(self, targets: list[dict]) -> None:
        rows = [(t, r) for t in targets for r in t.get("results", [])]
        self.table.setSortingEnabled(False)
        self.table.setRowCount(len(rows))
        for i, (t, r) in enumerate(rows):
            ci = r.get("ci95") or [None, None]
            cells = [t["target"], r["codec"], model_label(r.get("model", "")), _num(t["current_bytes"]),
                     _num(r["projected_bytes"]),
                     f"{human_bytes(ci[0])} – {human_bytes(ci[1])}" if ci[0] is not None else "-",
                     _saving(r.get("compression_saving_bytes")),
                     _num(r.get("compress_mb_s"), speed=True), _num(r.get("decompress_mb_s"), speed=True)]
            for j, c in enumerate(cells):
                self.table.setItem(i, j, c if isinstance(c, QTableWidgetItem) else QTableWidgetItem(str(c)))
        self.table.setSortingEnabled(True)

    def _fill_advice(self, advice: list[dict]) -> None:
        self.advice.setRowCount(len(advice))
        for i, a in enumerate(advice):
            codec = "rebuild (codec stays)" if a.get("kind") == "rebuild" else a.get("codec", "")
            if a.get("kind") == "engine":
                codec = f"{a.get('engine_clause', '')} ({codec}, estimate)"
            saving = human_bytes(a.get("saving_bytes"))
            if a.get("saving_bytes_ci95"):
                lo, hi = a["saving_bytes_ci95"]
                saving += f"\n{human_bytes(lo)} – {human_bytes(hi)}"
            for j, c in enumerate([a.get("target", ""), codec, saving, a.get("verdict") or "", a.get("ddl", "")]):
                item = QTableWidgetItem(str(c))
                if a.get("verdict"):
                    item.setToolTip(str(a["verdict"]))
                self.advice.setItem(i, j, item)

    def copy_ddl(self) -> str:
        rows = {i.row() for i in self.advice.selectedIndexes()} or set(range(self.advice.rowCount()))
        col = self.ADVICE_DDL
        text = "\n".join(self.advice.item(r, col).text() for r in sorted(rows) if self.advice.item(r, col))
        QGuiApplication.clipboard().setText(text)
        return text


def sample_words(s: dict) -> str:
    """The sample in words for the view's status line (issue 17 item 4: "fraction 0.05 (528 of
    699 units)" was unexplained): what was re-encoded, what was known without encoding, and how
    the units were drawn; the JSON's whole ``description`` is the line's tooltip."""
    total = int(s.get("units_total") or 0)
    sampled = int(s.get("units_sampled") or 0)
    enc = int(s.get("units_encoded", sampled) or 0)
    known = max(0, sampled - enc)
    done = (f"{enc:,} of {total:,} units (pages, blocks, nodes) re-encoded"
            + (f", {known:,} more known without encoding (free, all-zero or never-compressed) and counted "
               f"exactly" if known else ""))
    if s.get("mode") == "all":
        return f"every unit: {done}; the projections are exact for each model"
    frac = float(s.get("fraction") or 0)
    pct = f"{frac:.0%}" if frac >= 0.01 else f"{frac:.2%}"
    return (f"a {pct} sample (seed {s.get('seed')}): {done}; drawn per owner (index, column, dictionary, "
            f"level), at least 2 units of each, so small owners are sampled above {pct}")


def _saving(v) -> QTableWidgetItem:
    """A saving cell ('-' where there is none), sorted by its number."""
    if v is None:
        return _NumItem(float("-inf"), "-")
    return _NumItem(float(v), human_bytes(v) if v >= 0 else "-" + human_bytes(-v))


class _NumItem(QTableWidgetItem):
    def __init__(self, value: float, text: str):
        super().__init__(text)
        self.value = value
        self.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)

    def __lt__(self, other):
        return self.value < getattr(other, "value", 0)


def _num(v, speed: bool = False) -> QTableWidgetItem:
    if speed:                          # '-': not measured (sorts below every measured speed)
        return _NumItem(-1.0 if v is None else float(v), human_speed(v))
    v = float(v or 0)
    return _NumItem(v, human_bytes(v))


_MODEL_WORDS = (
    (r"innodb_page_compressed", lambda m: "InnoDB page compression"),
    (r"innodb_page_compressed_(\d+)k_pages_approximation",
     lambda m: f"InnoDB page compression, {m[1]} KiB pages (approximation)"),
    (r"innodb_row_compressed_kbs(\d+)k_estimate",
     lambda m: f"ROW_FORMAT=COMPRESSED, KEY_BLOCK_SIZE={m[1]} (estimate)"),
    (r"innodb_from_rows_estimate", lambda m: "the rows as InnoDB pages (estimate)"),
    (r"innodb_row_compressed_kbs(\d+)k_from_rows_estimate",
     lambda m: f"the rows as ROW_FORMAT=COMPRESSED, KEY_BLOCK_SIZE={m[1]} (estimate)"),
    (r"myrocks_from_rows_estimate", lambda m: "the rows as MyRocks SSTs (estimate)"),
    (r"tokudb_from_rows_estimate", lambda m: "the rows as TokuDB (estimate)"),
    (r"clickhouse_blocks", lambda m: "ClickHouse compressed blocks"),
    (r"tokudb_partitions", lambda m: "TokuDB partitions"),
    (r"zfs_recordsize_(\d+)k_ashift(\d+)", lambda m: f"ZFS, recordsize {m[1]}K, ashift {m[2]}"),
    (r"btrfs_(\d+)k_extents", lambda m: f"btrfs, {m[1]} KiB extents"),
)


def model_label(name: str) -> str:
    """A storage model's name (compress/: ``innodb_page_compressed_64k_pages_approximation``)
    in words; an unknown name as it is."""
    import re
    for pattern, words in _MODEL_WORDS:
        m = re.fullmatch(pattern, name or "")
        if m:
            return words(m)
    return name


def default_target(targets: list[dict]) -> str | None:
    """The target shown first: the biggest one of the first engine (registry order) that has one."""
    from dbxray.parsers import engines
    order = {name: i for i, name in enumerate(engines.names())}
    if not targets:
        return None
    best = min(targets, key=lambda t: (order.get(t.get("engine"), len(order)), -int(t.get("current_bytes", 0))))
    return best["target"]



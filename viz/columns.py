"""ClickHouse column sizes: per table (or one part, or one partition), a row of
horizontal bars per column -- uncompressed, compressed, marks -- sorted by
size with the ratio and codec written on each; the block-size histogram of
the selected column; and a treemap of database > table > column sized by
compressed bytes.

The figures are the parser's (``dataset.sections["clickhouse"]``, named as
system.parts_columns / system.columns).  Compact parts: the engine reports 0
per column; the view draws the real split the parser computed from the marks
and says so.  Block sizes for the histogram come from
``dataset.facts["clickhouse"]`` (the parser's typed ClickHouseFacts); a saved scan has only the JSON's per-part
power-of-two histograms, which are summed instead.
"""
from __future__ import annotations

import math

from dataclasses import dataclass, field

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFont, QFontMetricsF
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QSizePolicy, QStackedWidget, QTabBar,
                               QVBoxLayout, QWidget)

from dbxray.parsers.humanize import axis_unit, human_bytes, short_label
from dbxray.parsers.tree import Node

from . import theme
from .treemap import TreeBox, TreemapWidget
from .textfit import BarText, fit_axis_width, needs_refit, place_bar_texts, rows_csv, wrap_title
from .typeadvice import TypeAdvicePage

UNCOMPRESSED = "#B0BEC5"
COMPRESSED = "#1E88E5"
COMPUTED = "#8E24AA"       # compact parts: computed split, engine says 0
MARKS = "#FFB300"
SELECTED_BAND = "#FFF59D"
ALL_BLOCKS = "#B0BEC5"

MODES = (("table", "Whole table (active parts)"), ("part", "One part"), ("partition", "One partition"))
MAX_ROWS = 40


# -- data (no Qt) -----------------------------------------------------------------------

@dataclass
class ColRow:
    """One column's figures in the chosen scope."""

    name: str
    type: str = ""
    compressed: int = 0
    uncompressed: int = 0
    marks: int = 0
    codec: str = ""
    blocks: int = 0
    computed: bool = False           # some figures from the compact-part split (engine reports 0)
    computed_bytes: int = 0          # part of ``compressed`` that comes from that split
    block_sizes: list = field(default_factory=list)
    #: counts over ``hist_edges`` from the scan JSON (what a saved scan has instead of sizes)
    hist: np.ndarray | None = None
    hist_edges: np.ndarray | None = None

    @property
    def ratio(self) -> float | None:
        return self.uncompressed / self.compressed if self.compressed else None


def ch_tables(dataset) -> list[dict]:
    sec = (getattr(dataset, "sections", None) or {}).get("clickhouse") or {}
    return list(sec.get("tables") or [])


def table_key(t: dict) -> str:
    return f"{t.get('database')}.{t.get('table')}"


def _declared(codec: str) -> str:
    c = (codec or "").strip()
    if c.startswith("CODEC(") and c.endswith(")"):
        c = c[6:-1]
    return c


def _top_codec(counts: dict) -> str:
    if not counts:
        return ""
    return ", ".join(k for k, _ in sorted(counts.items(), key=lambda kv: -kv[1])[:2])


def scope_parts(t: dict, mode: str, key: str | None) -> list[dict]:
    parts = t.get("parts") or []
    if mode == "part":
        return [p for p in parts if p.get("name") == key or p.get("path") == key][:1]
    active = [p for p in parts if p.get("active") == 1 or p.get("state") == "active"]
    if mode == "partition":
        return [p for p in active if str(p.get("partition_id")) == str(key)]
    return active


def is_log_table(t: dict) -> bool:
    """A Log-family table (TinyLog / Log / StripeLog): no parts, its data files in ``log_files``."""
    return t.get("log_files") is not None


def log_column_rows(dataset, t: dict) -> list[ColRow]:
    """Per-column figures of a Log-family table: the engine's compressed bytes (Log,
    TinyLog) or the computed split of data.bin (StripeLog, engine reports 0), and the
    uncompressed bytes from the block walk (the engine reports 0)."""
    facts = (getattr(dataset, "facts", None) or {}).get("clickhouse")
    blocks_of = facts.part_block_sizes(t.get("database"), t.get("table"), t.get("path")) if facts is not None else {}
    stripe = t.get("engine") == "StripeLog"
    out = []
    for c in t.get("columns") or []:
        comp = c.get("computed") or {}
        r = ColRow(c["name"], c.get("type", ""))
        r.compressed = int(comp.get("compressed_bytes", 0)) if stripe else int(c.get("compressed_bytes", 0))
        r.uncompressed = int(comp.get("uncompressed_bytes", 0))
        r.blocks = int(comp.get("blocks", 0))
        r.computed = True
        r.computed_bytes = r.compressed if stripe else 0
        r.codec = _declared(c.get("codec", "")) or f"default {_top_codec(c.get('codecs') or {})}".strip()
        r.block_sizes.extend(np.asarray(b) for b in blocks_of.get(c["name"], []) if b is not None)
        out.append(r)
    return out


def column_rows(dataset, t: dict, mode: str = "table", key: str | None = None) -> list[ColRow]:
    """Per-column figures of table ``t`` over the parts of the scope, DDL order."""
    if is_log_table(t):
        return log_column_rows(dataset, t)
    parts = scope_parts(t, mode, key)
    facts = (getattr(dataset, "facts", None) or {}).get("clickhouse")     # None in saved scans
    declared = {c["name"]: c for c in t.get("columns") or []}
    order = [c["name"] for c in t.get("columns") or []]
    rows: dict[str, ColRow] = {}
    codec_counts: dict[str, dict] = {}
    for p in parts:
        blocks_of = facts.part_block_sizes(t.get("database"), t.get("table"), p.get("path")) \
            if facts is not None else {}
        for c in p.get("columns") or []:
            name = c["name"]
            if name not in rows:
                rows[name] = ColRow(name, c.get("type", ""))
                if name not in order:
                    order.append(name)
            r = rows[name]
            # where the engine reports 0 (Compact parts) the parser's computed split stands in
            # (the same rule as the tree's, app/treemodel.py)
            comp = c.get("computed") if c.get("engine_reports_zero") else None
            if comp:
                r.computed = True
                r.compressed += int(comp.get("compressed_bytes", 0))
                r.computed_bytes += int(comp.get("compressed_bytes", 0))
                r.uncompressed += int(comp.get("uncompressed_bytes", 0))
                r.blocks += int(comp.get("blocks", 0))
                counts = comp.get("codecs") or {}
            else:
                r.compressed += int(c.get("compressed_bytes", 0))
                r.uncompressed += int(c.get("uncompressed_bytes", 0))
                r.marks += int(c.get("marks_bytes", 0))
                counts = c.get("codecs") or {}
                r.blocks += int(sum(counts.values()))
            cc = codec_counts.setdefault(name, {})
            for k, v in counts.items():
                cc[k] = cc.get(k, 0) + int(v)
            r.block_sizes.extend(np.asarray(b) for b in blocks_of.get(name, []) if b is not None)
            _add_json_hist(r, p, c)
    out = []
    for name in order:
        r = rows.get(name)
        if r is None:
            continue
        d = _declared(declared.get(name, {}).get("codec", ""))
        r.codec = d or (f"default {_top_codec(codec_counts.get(name, {}))}".strip())
        out.append(r)
    return out


def _add_json_hist(r: ColRow, part: dict, col: dict) -> None:
    """Add a part column's block-size histogram from the scan JSON (fixed power-of-two
    edges per part) to the row."""
    counts = col.get("block_size_histogram")
    edges = (part.get("block_size_histogram") or {}).get("edges")
    if not counts or not edges or len(counts) != len(edges) - 1:
        return
    e = np.asarray(edges, dtype=np.float64)
    c = np.asarray(counts, dtype=np.int64)
    if r.hist is None:
        r.hist, r.hist_edges = c.copy(), e
    elif r.hist_edges is not None and np.array_equal(r.hist_edges, e):
        r.hist += c


def json_histogram(rows: list[ColRow], sel: ColRow | None):
    """(edges, counts of all rows, counts of ``sel``) from the JSON histograms, cut to the
    occupied bins (at least 6); None when the rows have none."""
    hs = [r for r in rows if r.hist is not None and r.hist_edges is not None]
    if not hs:
        return None
    edges = hs[0].hist_edges
    hs = [r for r in hs if np.array_equal(r.hist_edges, edges)]
    total = np.sum([r.hist for r in hs], axis=0)
    nz = np.nonzero(total)[0]
    if not len(nz):
        return None
    lo, hi = int(nz[0]), int(nz[-1]) + 1
    if hi - lo < 6:
        lo = max(0, min(lo, len(total) - 6))
        hi = min(len(total), lo + 6)
    own = sel.hist if sel is not None and sel.hist is not None and np.array_equal(sel.hist_edges, edges) \
        else np.zeros_like(total)
    return edges[lo:hi + 1], total[lo:hi], own[lo:hi]


def _median_bin(edges: np.ndarray, counts: np.ndarray) -> str:
    """The bin holding the median block, as 'a–b'."""
    n = int(counts.sum())
    if not n:
        return "-"
    k = int(np.searchsorted(np.cumsum(counts), (n + 1) // 2))
    return f"{human_bytes(float(edges[k]))}–{human_bytes(float(edges[k + 1]))}"


def partitions_of(t: dict) -> list[str]:
    seen: list[str] = []
    for p in scope_parts(t, "table", None):
        pid = str(p.get("partition_id"))
        if pid not in seen:
            seen.append(pid)
    return seen


def block_histogram(sizes: np.ndarray, edges: np.ndarray) -> np.ndarray:
    if sizes is None or not len(sizes):
        return np.zeros(len(edges) - 1, dtype=np.int64)
    c, _ = np.histogram(np.asarray(sizes, dtype=np.float64), bins=edges)
    return c


def log2_edges(sizes: np.ndarray) -> np.ndarray:
    """Power-of-two bin edges covering every size (at least 6 bins)."""
    if sizes is None or not len(sizes):
        return 2.0 ** np.arange(10, 17)
    lo = int(np.floor(np.log2(max(float(np.min(sizes)), 1.0))))
    hi = int(np.floor(np.log2(max(float(np.max(sizes)), 1.0)))) + 1
    if hi - lo < 6:
        lo = max(0, hi - 6)
        hi = lo + 6
    return 2.0 ** np.arange(lo, hi + 1)


def treemap_tree(dataset, root_name: str = "ClickHouse") -> TreeBox:
    """database > table > column, sized by compressed bytes of the active parts
    (compact parts: the computed split)."""
    root = TreeBox(root_name)
    dbs: dict[str, TreeBox] = {}
    for t in ch_tables(dataset):
        db = str(t.get("database"))
        if db not in dbs:
            dbs[db] = TreeBox(db, payload=("database", db))
            root.children.append(dbs[db])
        rows = column_rows(dataset, t)
        tb = TreeBox(t.get("table", "?"), payload=("table", table_key(t), None))
        for r in rows:
            ratio = f"×{r.ratio:.2f}" if r.ratio else "-"
            note = ("" if not r.computed else f"\n({t.get('engine')} table: uncompressed bytes computed from the block "
                    f"headers, the engine reports 0)" if is_log_table(t)
                    else "\n(compact part: engine reports 0, size computed from marks)")
            tb.children.append(TreeBox(
                r.name, value=float(r.compressed), payload=("column", table_key(t), r.name),
                tooltip=(f"{table_key(t)}.{r.name}  {r.type}\ncodec {r.codec}\n"
                         f"compressed {human_bytes(r.compressed)} ({r.compressed:,} B)\n"
                         f"uncompressed {human_bytes(r.uncompressed)}  ratio {ratio}\n"
                         f"marks {human_bytes(r.marks)}, {r.blocks} blocks{note}")))
        tb.tooltip = (f"{table_key(t)}: {human_bytes(sum(r.compressed for r in rows))} compressed in "
                      f"{len(rows)} columns, {t.get('active_parts', 0)} active parts")
        dbs[db].children.append(tb)
    for d in dbs.values():
        d.tooltip = f"database {d.name}: {human_bytes(d.total)} compressed, {len(d.children)} tables"
    return root


# -- the view ---------------------------------------------------------------------------

class ColumnSizesView(QWidget):
    """Column sizes of ClickHouse tables (bars, block histogram, treemap)."""

    title = "Columns"
    view_id = "columns"
    #: the engine whose files this view draws (None: any dataset)
    engine = "clickhouse"
    node_selected = Signal(object)
    #: draws what a light first scan leaves for later (ClickHouse blocks, ``Engine.deferred``):
    #: a headless export completes the scan before drawing it
    reads_deferred = True
    #: the Types page asks the app to run the type advisor (the sample: "0.05" or "all"; codec chains)
    advise_requested = Signal(str, bool)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.dataset = None
        self.root: Node | None = None
        self.tables: list[dict] = []
        self.table: dict | None = None
        self.mode = "table"
        self.scope_key: str | None = None
        self.column: str | None = None
        self.rows: list[ColRow] = []
        self.shown: list[ColRow] = []
        self.hist_edges = np.zeros(0)
        self.hist_counts = np.zeros(0, dtype=np.int64)
        self.hist_all = np.zeros(0, dtype=np.int64)
        self._busy = False
        self._resize_timer = QTimer(self)
        self._resize_timer.setSingleShot(True)
        self._resize_timer.timeout.connect(self._refit)

        # controls
        # combos sized by a minimum contents length, not by their longest item, so the view
        # fits beside the window's tree and inspector (items show in full in the popup)
        self.table_combo = QComboBox()
        self.table_combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.table_combo.setMinimumContentsLength(16)
        self.table_combo.currentIndexChanged.connect(self._on_table)
        self.mode_combo = QComboBox()
        for m, label in MODES:
            self.mode_combo.addItem(label, m)
        self.mode_combo.currentIndexChanged.connect(self._on_mode)
        self.scope_combo = QComboBox()
        self.scope_combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.scope_combo.setMinimumContentsLength(12)
        self.scope_combo.currentIndexChanged.connect(self._on_scope)
        self.column_combo = QComboBox()
        self.column_combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.column_combo.setMinimumContentsLength(10)
        self.column_combo.currentIndexChanged.connect(self._on_column_combo)
        self.page_bar = QTabBar()
        self.page_bar.addTab("Columns")
        self.page_bar.addTab("Treemap")
        self.page_bar.addTab("Types")
        self.page_bar.currentChanged.connect(self._on_page)
        top = QHBoxLayout()
        top.setContentsMargins(6, 4, 6, 0)
        for w in (QLabel("Table"), self.table_combo, QLabel("Show"), self.mode_combo, self.scope_combo):
            top.addWidget(w)
        # the column picker and the Columns/Treemap switch: on the first row when the view is
        # wide, on a second row when it is narrow (beside the window's tree and inspector)
        self.column_box = QWidget()
        cb = QHBoxLayout(self.column_box)
        cb.setContentsMargins(0, 0, 0, 0)
        cb.addWidget(QLabel("Column"))
        cb.addWidget(self.column_combo)
        cb.addStretch(1)
        cb.addWidget(self.page_bar)
        self.top_row = top
        top.addWidget(self.column_box, 1)
        self.second_row = QWidget()
        top2 = QHBoxLayout(self.second_row)
        top2.setContentsMargins(6, 2, 6, 0)
        self.second_row.setVisible(False)
        self._two_rows = False

        # page 1: bars + histogram
        self.bars_page = QWidget()
        self.bars_page.setAutoFillBackground(True)
        pal = self.bars_page.palette()
        pal.setColor(self.bars_page.backgroundRole(), theme.qcolor(theme.background()))
        self.bars_page.setPalette(pal)
        self.heading = QLabel()
        self.heading.setTextFormat(Qt.RichText)
        self.heading.setWordWrap(True)
        self.heading.setStyleSheet(f"color:{theme.foreground()}; padding:4px 8px;")
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setStyleSheet("background:#FFF3E0; color:#6D4C41; border:1px solid #FFB74D;"
                                " border-radius:3px; padding:4px 8px; margin:0 8px;")
        self.note.setVisible(False)
        self.glw = pg.GraphicsLayoutWidget()
        self.glw.setBackground(theme.background())
        self.plot = self.glw.addPlot(row=0, col=0)
        self.hist = self.glw.addPlot(row=1, col=0)
        self.glw.ci.layout.setRowStretchFactor(0, 3)
        self.glw.ci.layout.setRowStretchFactor(1, 1)
        for p in (self.plot, self.hist):
            wrap_title(p)
            p.setMenuEnabled(False)
            p.hideButtons()
            theme.style_plot(p)
        self.plot.showGrid(x=True, y=False, alpha=0.15)
        self.plot.setMouseEnabled(x=False, y=False)
        self.hist.setMouseEnabled(x=False, y=False)
        self.hist.showGrid(x=False, y=True, alpha=0.25)
        self.plot.scene().sigMouseClicked.connect(self._on_plot_click)
        self.legend: list[tuple[str, str]] = []      # (colour, label), drawn in the heading
        bl = QVBoxLayout(self.bars_page)
        bl.setContentsMargins(0, 0, 0, 0)
        bl.setSpacing(2)
        bl.addWidget(self.heading)
        bl.addWidget(self.note)
        bl.addWidget(self.glw, 1)

        # page 2: treemap
        self.tree_page = QWidget()
        self.tree_page.setAutoFillBackground(True)
        self.tree_page.setPalette(pal)
        self.tree_heading = QLabel()
        self.tree_heading.setTextFormat(Qt.RichText)
        self.tree_heading.setStyleSheet(f"color:{theme.foreground()}; padding:4px 8px;")
        self.treemap = TreemapWidget()
        self.treemap.clicked.connect(self._on_treemap_click)
        tl = QVBoxLayout(self.tree_page)
        tl.setContentsMargins(0, 0, 0, 0)
        tl.setSpacing(2)
        tl.addWidget(self.tree_heading)
        tl.addWidget(self.treemap, 1)

        # page 3: the type advisor's suggestions (viz/typeadvice.py; the app runs it in a worker)
        self.advice_page = TypeAdvicePage()
        self.advice_page.advise_requested.connect(self.advise_requested)

        self.stack = QStackedWidget()
        self.stack.addWidget(self.bars_page)
        self.stack.addWidget(self.tree_page)
        self.stack.addWidget(self.advice_page)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addLayout(top)
        lay.addWidget(self.second_row)
        lay.addWidget(self.stack, 1)
        self._show_empty()

    # -- view protocol ---------------------------------------------------------------
    def set_dataset(self, dataset, root: Node) -> None:
        self.dataset = dataset
        self.root = root
        self.tables = ch_tables(dataset)
        self._busy = True
        self.table_combo.clear()
        for t in self.tables:
            self.table_combo.addItem(table_key(t))
        self._busy = False
        self.treemap.set_tree(treemap_tree(dataset) if self.tables else None)
        self.advice_page.set_advice(None, "Types and codecs the columns' values would take least room with: run "
                                          "the advisor (it decodes a sample of each column's blocks).")
        self._tree_heading()
        if not self.tables:
            self.table = None
            self._show_empty()
            return
        # the largest table first
        best = max(range(len(self.tables)), key=lambda i: self.tables[i].get("total_bytes") or 0)
        self.show_table(table_key(self.tables[best]))

    def select_node(self, node: Node) -> None:
        if not self.tables or node is None:
            return
        eng = node
        while eng is not None and eng.kind != "engine":
            eng = eng.parent
        if eng is None or eng.name != "ClickHouse":
            return
        if node.kind == "database":
            self.show_treemap()
            return
        tnode = node
        while tnode is not None and tnode.kind != "table":
            tnode = tnode.parent
        if tnode is None or tnode.parent is None:
            return
        key = f"{tnode.parent.name}.{tnode.name}"
        if node.kind == "table":
            same = self.table is not None and table_key(self.table) == key and self.mode == "table"
            self.show_table(key, column=self.column if same else None)   # keep a column picked in the treemap
        elif node.kind == "part":
            self.show_table(key, mode="part", scope=node.name.split("/")[0])
        elif node.kind == "column" and node.parent is not None and node.parent.kind == "part":
            self.show_table(key, mode="part", scope=node.parent.name.split("/")[0], column=node.name)
        elif node.kind == "file":
            sec = (getattr(node.ref, "sections", None) or {}).get("clickhouse") or {}
            part = sec.get("parent_part") or sec.get("part")
            self.show_table(key, mode="part" if part else "table", scope=part, column=sec.get("column"))

    def set_target(self, text: str) -> None:
        """"db.table", "db.table.column", optionally "@PART" or "@partition:ID";
        "treemap" for the treemap."""
        text = (text or "").strip()
        if text.lower().startswith("treemap"):
            self.show_treemap()
            return
        scope = None
        mode = "table"
        if "@" in text:
            text, scope = text.split("@", 1)
            mode = "part"
            if scope.startswith("partition:"):
                mode, scope = "partition", scope[len("partition:"):]
        keys = sorted((table_key(t) for t in self.tables), key=len, reverse=True)
        for k in keys:
            if text == k or text.startswith(k + "."):
                col = text[len(k) + 1:] or None
                self.show_table(k, mode=mode, scope=scope, column=col)
                return
        raise KeyError(f"target {text!r}: no such ClickHouse table (known: {', '.join(sorted(keys)[:8])}…)")

    def export_widget(self) -> QWidget:
        return self.stack.currentWidget()

    def report_targets(self) -> list[tuple[str, str]]:
        """(caption, target) of the images a report should hold: the treemap and
        the largest tables' columns (for ``dbxray report``)."""
        if not self.tables:
            return []
        out = [("Column treemap", "treemap")]
        for t in sorted(self.tables, key=lambda t: -(t.get("total_bytes") or 0))[:3]:
            out.append((f"Column sizes of {table_key(t)}", table_key(t)))
        return out

    # -- public actions ------------------------------------------------------------------
    def show_table(self, key: str, mode: str = "table", scope: str | None = None,
                   column: str | None = None) -> None:
        idx = next((i for i, t in enumerate(self.tables) if table_key(t) == key), None)
        if idx is None:
            return
        self._busy = True
        self.table_combo.setCurrentIndex(idx)
        self.table = self.tables[idx]
        self.mode = mode
        self.mode_combo.setCurrentIndex([m for m, _ in MODES].index(mode))
        self._fill_scope_combo()
        if mode != "table":
            keys = [self.scope_combo.itemData(i) for i in range(self.scope_combo.count())]
            if scope not in keys and keys:
                scope = keys[0]
            self.scope_key = scope
            if scope in keys:
                self.scope_combo.setCurrentIndex(keys.index(scope))
        else:
            self.scope_key = None
        self.column = column
        self._busy = False
        if self.stack.currentIndex() != 2:       # the Types page stays up while tables are picked
            self.page_bar.setCurrentIndex(0)
            self.stack.setCurrentIndex(0)
        self.advice_page.show(key, column)
        self._redraw()

    def show_treemap(self) -> None:
        self.page_bar.setCurrentIndex(1)
        self.stack.setCurrentIndex(1)
        self.treemap.ensure_built()

    def select_column(self, name: str | None) -> None:
        self.column = name
        self.advice_page.show(table_key(self.table) if self.table else None, name)
        self._redraw()

    def show_advice_page(self) -> None:
        self.page_bar.setCurrentIndex(2)
        self.stack.setCurrentIndex(2)

    # -- the type advisor (run by the app in a worker) ---------------------------------------
    def set_advice_running(self, running: bool) -> None:
        self.advice_page.set_running(running)

    def set_advice_progress(self, done: int, total: int, message: str) -> None:
        self.advice_page.set_progress(done, total, message)

    def set_advice(self, advice: dict | None, message: str = "") -> None:
        self.advice_page.set_advice(advice, message)

    # -- slots --------------------------------------------------------------------------------
    def _on_table(self, i: int) -> None:
        if self._busy or i < 0 or i >= len(self.tables):
            return
        self.show_table(table_key(self.tables[i]))

    def _on_mode(self, i: int) -> None:
        if self._busy or self.table is None:
            return
        self.show_table(table_key(self.table), mode=MODES[i][0], column=self.column)

    def _on_scope(self, i: int) -> None:
        if self._busy or self.table is None or i < 0:
            return
        self.show_table(table_key(self.table), mode=self.mode, scope=self.scope_combo.itemData(i),
                        column=self.column)

    def _on_column_combo(self, i: int) -> None:
        if self._busy or i < 0:
            return
        self.select_column(self.column_combo.itemData(i))

    def _on_page(self, i: int) -> None:
        self.stack.setCurrentIndex(i)
        if i == 1:
            self.treemap.ensure_built()

    def _on_treemap_click(self, payload) -> None:
        if not payload:
            return
        if payload[0] == "column":
            self.show_table(payload[1], column=payload[2])
        elif payload[0] == "table":
            self.show_table(payload[1])
        node = self._tree_node(payload)
        if node is not None:
            self.node_selected.emit(node)

    def _on_plot_click(self, ev) -> None:
        if not self.shown:
            return
        vb = self.plot.getViewBox()
        if not vb.sceneBoundingRect().contains(ev.scenePos()):
            return
        y = vb.mapSceneToView(ev.scenePos()).y()
        i = int(round(len(self.shown) - 1 - y))
        if 0 <= i < len(self.shown):
            name = self.shown[i].name
            self.select_column(None if name == self.column or name.startswith("(") else name)
            node = self._column_node(self.column)
            if node is not None:
                self.node_selected.emit(node)

    def _column_node(self, column: str | None) -> Node | None:
        """The tree node of the current selection: the column's .bin in the part shown
        (one-part mode), else the table."""
        if self.table is None:
            return None
        tnode = self._tree_node(("table", table_key(self.table), None))
        if tnode is None or column is None or self.mode != "part":
            return tnode
        part = next((c for c in tnode.children if c.kind == "part" and c.name.split("/")[0] == self.scope_key), None)
        if part is None:
            return tnode
        best = next((c for c in part.children if c.kind == "column" and c.name == column), None)
        if best is not None:       # the window's tree has column nodes
            return best
        for f in part.children:
            sec = (getattr(f.ref, "sections", None) or {}).get("clickhouse") or {}
            if f.kind == "file" and sec.get("column") == column:
                if sec.get("stream") == column:
                    return f
                best = best or f
        return best or part

    # -- drawing ---------------------------------------------------------------------------------
    def _tree_node(self, payload) -> Node | None:
        if self.root is None:
            return None
        key = payload[1] if payload[0] in ("table", "column") else None
        for n in self.root.walk():
            if payload[0] == "database" and n.kind == "database" and n.name == payload[1] and \
                    n.parent is not None and n.parent.name == "ClickHouse":
                return n
            if key and n.kind == "table" and n.parent is not None and f"{n.parent.name}.{n.name}" == key:
                return n
        return None

    def _fill_scope_combo(self) -> None:
        self.scope_combo.clear()
        t = self.table
        if t is None or self.mode == "table":
            self.scope_combo.setEnabled(False)
            self.scope_combo.addItem("all active parts", None)
            return
        self.scope_combo.setEnabled(True)
        if self.mode == "part":
            for p in t.get("parts") or []:
                state = "" if p.get("state") == "active" else f" ({p.get('state')})"
                self.scope_combo.addItem(f"{p['name']}{state} · {p.get('part_type', '')}", p["name"])
        else:
            for pid in partitions_of(t):
                n = len(scope_parts(t, "partition", pid))
                self.scope_combo.addItem(f"{pid} ({n} part{'s' if n != 1 else ''})", pid)

    def _show_empty(self) -> None:
        self.plot.clear()
        self.hist.clear()
        self.legend = []
        self.rows = self.shown = []
        self.heading.setText("<b>No ClickHouse tables in this scan</b>")
        self.note.setVisible(False)
        for c in (self.table_combo, self.mode_combo, self.scope_combo, self.column_combo):
            c.setEnabled(False)

    def _tree_heading(self) -> None:
        if not self.tables:
            self.tree_heading.setText("<b>No ClickHouse tables in this scan</b>")
            return
        total = self.treemap.item.root.total if self.treemap.item.root else 0
        dbs = {t.get("database") for t in self.tables}
        self.tree_heading.setText(
            f"<b>ClickHouse columns by compressed size</b> &nbsp; {len(dbs)} database"
            f"{'s' if len(dbs) != 1 else ''} &gt; {len(self.tables)} tables &gt; columns · "
            f"{human_bytes(total)} compressed in active parts · box area ∝ compressed bytes; hover for details, "
            f"click to open the table")

    def _redraw(self) -> None:
        t = self.table
        if t is None:
            self._show_empty()
            return
        self.treemap.item.set_highlight(("column", table_key(t), self.column) if self.column
                                        else ("table", table_key(t), None))
        for c in (self.table_combo, self.mode_combo, self.column_combo):
            c.setEnabled(True)
        self.rows = column_rows(self.dataset, t, self.mode, self.scope_key)
        names = [r.name for r in self.rows]
        if self.column not in names:
            self.column = None
        self._busy = True
        self.column_combo.clear()
        self.column_combo.addItem("(all columns)", None)
        for r in sorted(self.rows, key=lambda r: r.name):
            self.column_combo.addItem(r.name, r.name)
        if self.column:
            self.column_combo.setCurrentIndex(self.column_combo.findData(self.column))
        self._busy = False
        self._draw_bars()
        self._draw_hist()

    def _scope_text(self) -> str:
        t = self.table
        parts = scope_parts(t, self.mode, self.scope_key)
        if self.mode == "part":
            p = parts[0] if parts else {}
            return (f"part {p.get('name', '?')} ({p.get('part_type', '?')}, {p.get('state', '?')}, "
                    f"{p.get('rows', 0):,} rows)")
        if self.mode == "partition":
            return f"partition {self.scope_key}: {len(parts)} active part{'s' if len(parts) != 1 else ''}"
        if is_log_table(t):
            rows = t.get("total_rows") if t.get("total_rows") is not None else t.get("computed_rows")
            return f"{t.get('engine')} table, " + (f"{rows:,} rows" if rows is not None else "rows not known")
        return f"{len(parts)} active part{'s' if len(parts) != 1 else ''}, {t.get('total_rows', 0):,} rows"

    def _draw_bars(self) -> None:
        self.plot.clear()
        self.bar_texts = []
        self.legend = []
        rows = sorted(self.rows, key=lambda r: (-r.compressed, -r.uncompressed, r.name))
        cap = self._capacity()
        self._shown_cap = cap
        if len(rows) > cap:
            keep = rows[:cap - 1]
            sel = next((r for r in rows[cap - 1:] if r.name == self.column), None)
            if sel is not None:                  # the selected column always has its bar
                keep = rows[:cap - 2] + [sel]
            rest = [r for r in rows if r not in keep]
            other = ColRow(f"({len(rest)} smaller columns)", "", sum(r.compressed for r in rest),
                           sum(r.uncompressed for r in rest), sum(r.marks for r in rest), "",
                           sum(r.blocks for r in rest), any(r.computed for r in rest),
                           sum(r.computed_bytes for r in rest))
            rows = keep + [other]
        self.shown = rows
        comp_total = sum(r.compressed for r in self.rows)
        unc_total = sum(r.uncompressed for r in self.rows)
        marks_total = sum(r.marks for r in self.rows)
        shared_marks = sum(int(p.get("marks_bytes") or 0) for p in scope_parts(self.table, self.mode, self.scope_key)
                           if p.get("part_type") == "Compact")
        marks_txt = f"marks {human_bytes(marks_total)}"
        if shared_marks and not marks_total:
            marks_txt = f"marks {human_bytes(shared_marks)} (shared marks file{'s' if self.mode != 'part' else ''}, not split)"
        elif shared_marks:
            marks_txt = (f"marks {human_bytes(marks_total + shared_marks)} (of which {human_bytes(shared_marks)} "
                         f"in compact parts' shared marks files)")
        ratio = f"×{unc_total / comp_total:.2f}" if comp_total else "-"
        self.heading.setText(
            f"<b>{table_key(self.table)}</b> &nbsp; {self._scope_text()} · compressed "
            f"<b>{human_bytes(comp_total)}</b> of {human_bytes(unc_total)} uncompressed ({ratio}) · "
            f"{marks_txt} · {len(self.rows)} columns, largest first")
        computed = [r for r in self.rows if r.computed]
        if is_log_table(self.table):
            note = next((c.get("note") for c in self.table.get("columns") or [] if c.get("note")), "")
            engine = str(self.table.get("engine"))
            self.note.setText((note if note.startswith(engine) else f"{engine} table: {note}") + "."
                              + (" The purple bars are that split." if self.table.get("engine") == "StripeLog" else ""))
            self.note.setVisible(True)
        elif computed:
            self.note.setText(
                "Compact part" + ("s" if self.mode != "part" else "") + ": ClickHouse reports 0 bytes per column "
                "(system.parts_columns, system.columns) because all columns share one data.bin. The purple bars "
                "are the real split dbxray computed from the marks and block headers; marks are shared and "
                "not split.")
            self.note.setVisible(True)
        else:
            self.note.setVisible(False)
        n = len(rows)
        if not n:
            self.plot.setTitle("No columns in this scope", color=theme.foreground())
            return
        self.plot.setTitle(None)
        y = np.arange(n)[::-1].astype(float)
        comp = np.array([r.compressed for r in rows], dtype=float)
        unc = np.array([r.uncompressed for r in rows], dtype=float)
        marks = np.array([r.marks for r in rows], dtype=float)
        vmax = max(comp.max(), unc.max(), marks.max(), 1.0)
        scale, unit = axis_unit(vmax)
        if self.column is not None:
            sel = [i for i, r in enumerate(rows) if r.name == self.column]
            if sel:
                band = pg.BarGraphItem(x0=[0], y=[y[sel[0]]], height=[1.0], width=[vmax / scale * 2.2],
                                       brush=theme.qcolor(_band(), 200), pen=pg.mkPen(None))
                band.setZValue(-10)
                self.plot.addItem(band)
        cpart = np.array([r.computed_bytes for r in rows], dtype=float)
        epart = comp - cpart
        unc_item = pg.BarGraphItem(x0=np.zeros(n), y=y, height=0.8, width=unc / scale,
                                   brush=theme.qcolor(UNCOMPRESSED), pen=pg.mkPen(theme.qcolor(UNCOMPRESSED).darker(125)))
        self.plot.addItem(unc_item)
        self.legend.append((UNCOMPRESSED, "uncompressed"))
        #: name -> (BarGraphItem, indices into self.shown), for tests and hit lookups
        self.bar_graphs = {"uncompressed": (unc_item, np.arange(n))}
        self.scale = scale
        for x0, width, colour, label in ((np.zeros(n), epart, COMPRESSED, "compressed (on disk)"),
                                         (epart, cpart, COMPUTED, "compressed, StripeLog split of data.bin (computed)"
                                          if is_log_table(self.table) else "compressed in compact parts (computed)")):
            mask = width > 0
            if mask.any():
                it = pg.BarGraphItem(x0=x0[mask] / scale, y=y[mask] + 0.05, height=0.42,
                                     width=width[mask] / scale, brush=theme.qcolor(colour),
                                     pen=pg.mkPen(theme.qcolor(colour).darker(130)))
                self.plot.addItem(it)
                self.legend.append((colour, label))
                self.bar_graphs["computed" if colour == COMPUTED else "compressed"] = (it, np.flatnonzero(mask))
        if marks.any():
            mk = pg.BarGraphItem(x0=np.zeros(n), y=y - 0.3, height=0.14, width=np.maximum(marks / scale, 0),
                                 brush=theme.qcolor(MARKS), pen=pg.mkPen(theme.qcolor(MARKS).darker(130)))
            self.plot.addItem(mk)
            tiny = marks.max() < 0.01 * vmax
            self.legend.append((MARKS, "marks (too small to see: sizes in the text)" if tiny else "marks"))
            self.bar_graphs["marks"] = (mk, np.arange(n))
        font = QFont()
        font.setPointSizeF(8.0 if n > 24 else 8.5)
        fg = theme.foreground()
        self.bar_labels = []
        texts = []
        for yy, r in zip(y, rows):
            rt = f"×{r.ratio:.2f}" if r.ratio else "-"
            codec = f"  {r.codec}" if r.codec else ""
            mk = f"  · marks {human_bytes(r.marks)}" if r.marks else ""
            full = f"{human_bytes(r.compressed)} of {human_bytes(r.uncompressed)}  {rt}{codec}{mk}"
            variants = [full, f"{human_bytes(r.compressed)} of {human_bytes(r.uncompressed)}  {rt}{codec}",
                        f"{human_bytes(r.compressed)} of {human_bytes(r.uncompressed)}  {rt}",
                        f"{human_bytes(r.compressed)}  {rt}"]
            texts.append(BarText(float(yy), max(r.compressed, r.uncompressed) / scale,
                                 list(dict.fromkeys(variants)), fg, font))
            self.bar_labels.append(full)
        ticks = [(float(yy), short_label(r.name, 22, 5) + (f"  {short_label(r.type, 18, 5)}" if r.type else ""))
                 for yy, r in zip(y, rows)]
        left = self.plot.getAxis("left")
        left.setTicks([ticks])
        left.setStyle(tickFont=font)
        self.left_width = fit_axis_width([t for _, t in ticks], font, 230)
        left.setWidth(self.left_width)
        self.hist.getAxis("left").setWidth(self.left_width)      # the two charts' left edges aligned
        self.plot.getAxis("bottom").setLabel(f"bytes ({unit})", color=fg)
        self.unit = unit
        key = " &nbsp; ".join(f"<span style='color:{c}; font-size:13px'>■</span> {lbl}" for c, lbl in self.legend)
        self.heading.setText(self.heading.text() + f"<br>{key} &nbsp;·&nbsp; text: compressed of uncompressed, "
                             f"ratio, codec, marks")
        xmax = place_bar_texts(self.plot, texts, vmax / scale * 2.05)
        self.bar_texts = texts
        self.plot.setXRange(0, xmax, padding=0)
        self._resize_timer.start(0)       # re-fit the texts once the plot layout has settled
        self.plot.setYRange(-0.6, n - 0.4, padding=0)

    def row_px(self) -> int:
        """Pixels a bar row needs: one line of its value text's font."""
        font = QFont()
        font.setPointSizeF(8.5)
        return int(QFontMetricsF(font).lineSpacing() + 1.999)

    def chart_csv(self) -> str:
        """The bars' columns as CSV, their texts whole (a narrow view shortens them)."""
        head = ["table", "column", "type", "compressed_bytes", "uncompressed_bytes", "ratio", "codec", "marks_bytes",
                "blocks", "computed", "text"]
        key = table_key(self.table) if self.table is not None else ""
        rows = [[key, r.name, r.type, r.compressed, r.uncompressed, f"{r.ratio:.4f}" if r.ratio else "", r.codec,
                 r.marks, r.blocks, "yes" if r.computed else "", t.full]
                for r, t in zip(self.shown, getattr(self, "bar_texts", []))]
        return rows_csv(head, rows)

    def _capacity(self) -> int:
        """How many bar rows fit at a readable height (the rest are summed in one row): the
        plot's height over a text line, or before the layout has settled, an estimate from
        the charts' height."""
        h = self.plot.getViewBox().height()
        if h < 60:
            g = self.glw.height()
            if g < 200:
                return MAX_ROWS
            h = g * 0.75 - 70
        return int(max(4, min(MAX_ROWS, h // self.row_px())))

    def _refit(self) -> None:
        if self.table is not None and (self._capacity() != getattr(self, "_shown_cap", None) or
                                       needs_refit(self.plot)):
            self._draw_bars()
        self._hist_ticks()

    #: below this width the toolbar takes two rows
    TWO_ROWS_BELOW = 900

    def _place_toolbar(self) -> None:
        two = self.width() < self.TWO_ROWS_BELOW
        if two == self._two_rows:
            return
        self._two_rows = two
        if two:
            self.top_row.removeWidget(self.column_box)
            self.second_row.layout().addWidget(self.column_box)
        else:
            self.second_row.layout().removeWidget(self.column_box)
            self.top_row.addWidget(self.column_box, 1)
        self.second_row.setVisible(two)

    def minimumSizeHint(self):
        """Narrow enough for the two-row toolbar (the toolbar reflows below TWO_ROWS_BELOW)."""
        h = super().minimumSizeHint()
        h.setWidth(min(h.width(), 500))
        return h

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._place_toolbar()
        if self.table is not None and self.rows:
            self._resize_timer.start(10)

    def _hist_ticks(self) -> None:
        """Bin labels of the histogram, every ``step``-th one when the bins are narrower than
        their labels (they ran together: "64 B128 B256 B")."""
        edges = getattr(self, "hist_edges", None)
        if edges is None or len(edges) < 2:
            return
        nb = len(edges) - 1
        px = max(float(self.hist.getViewBox().width()), 100.0) / (nb + 0.2)
        widest = max(self.fontMetrics().horizontalAdvance(_pow2(edges[i])) for i in range(nb))
        step = max(1, math.ceil((widest + 8) / px))
        self.hist.getAxis("bottom").setTicks([[(float(i), _pow2(edges[i])) for i in range(0, nb, step)]])

    def _draw_hist(self) -> None:
        self.hist.clear()
        all_sizes = [b for r in self.rows for b in r.block_sizes]
        allv = np.concatenate(all_sizes) if all_sizes else np.zeros(0)
        sel = next((r for r in self.rows if r.name == self.column), None)
        selv = np.concatenate(sel.block_sizes) if sel is not None and sel.block_sizes else np.zeros(0)
        fg = theme.foreground()
        from_json = None if len(allv) else json_histogram(self.rows, sel)
        if not len(allv) and from_json is None:
            self.hist_edges = np.zeros(0)
            self.hist_counts = self.hist_all = np.zeros(0, dtype=np.int64)
            facts = (getattr(self.dataset, "facts", None) or {}).get("clickhouse")
            why = "being read (the blocks are walked after the first paint)" \
                if facts is not None and not facts.blocks_walked else "not available (no block data in this scan)"
            self.hist.setTitle(f"Block sizes: {why}", color=fg, size="9pt")
            return
        if from_json is not None:        # a saved scan: the per-part histograms of the JSON, summed
            edges, self.hist_all, own = from_json
            self.hist_counts = own if sel is not None else self.hist_all
        else:
            edges = log2_edges(allv)
            self.hist_all = block_histogram(allv, edges)
            self.hist_counts = block_histogram(selv, edges) if sel is not None else self.hist_all
        self.hist_edges = edges
        x = np.arange(len(edges) - 1, dtype=float)
        if sel is not None:
            b = pg.BarGraphItem(x=x, height=self.hist_counts, width=0.8, brush=theme.qcolor(COMPRESSED),
                                pen=pg.mkPen(theme.qcolor(COMPRESSED).darker(130)))
            self.hist.addItem(b)
            if from_json is not None:
                title = (f"Compressed block sizes of <b>{sel.name}</b>: {int(self.hist_counts.sum())} blocks "
                         f"(median in {_median_bin(edges, self.hist_counts)}); the table's {len(self.rows)} "
                         f"columns have {int(self.hist_all.sum())} blocks")
            else:
                med = human_bytes(float(np.median(selv))) if len(selv) else "-"
                title = (f"Compressed block sizes of <b>{sel.name}</b>: {len(selv)} blocks (median {med}, "
                         f"largest {human_bytes(float(selv.max())) if len(selv) else '-'}); the table's "
                         f"{len(self.rows)} columns have {len(allv)} blocks")
            ymax = max(1, int(self.hist_counts.max()) if len(self.hist_counts) else 1)
        else:
            a = pg.BarGraphItem(x=x, height=self.hist_all, width=0.8, brush=theme.qcolor(ALL_BLOCKS),
                                pen=pg.mkPen(theme.qcolor(ALL_BLOCKS).darker(125)))
            self.hist.addItem(a)
            ymax = int(self.hist_all.max())
            med = _median_bin(edges, self.hist_all) if from_json is not None else \
                human_bytes(float(np.median(allv)))
            title = (f"Compressed block sizes, all columns: {int(self.hist_all.sum())} blocks (median "
                     f"{'in ' if from_json is not None else ''}{med}); pick a column (click its bar) to see its own")
        self.hist.setTitle(title + " · each bin: from the size shown to twice it", color=fg, size="9pt")
        self._hist_ticks()
        bottom = self.hist.getAxis("bottom")
        bottom.setLabel("stored size of a compressed block", color=fg)
        self.hist.getAxis("left").setLabel("blocks", color=fg)
        self.hist.getAxis("left").setWidth(getattr(self, "left_width", 230))
        self.hist.setXRange(-0.6, len(edges) - 1.4, padding=0)
        self.hist.setYRange(0, max(ymax, 1) * 1.15, padding=0)
        step = _nice_step(max(ymax, 1) / 4)
        self.hist.getAxis("left").setTickSpacing(step, step)      # whole blocks only


def _nice_step(raw: float) -> int:
    """1, 2, 5, 10, 20, 50, ...: the smallest not below ``raw``."""
    mag = 1
    while True:
        for m in (1, 2, 5):
            if m * mag >= raw:
                return m * mag
        mag *= 10


def _band() -> str:
    """Background of the selected row: pale yellow, or a dark olive in dark mode."""
    return "#4A4520" if theme.is_dark() else SELECTED_BAND


def _pow2(v: float) -> str:
    v = int(v)
    for unit, s in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if v >= s:
            return f"{v // s} {unit}"
    return f"{v} B"


__all__ = ["ColumnSizesView", "column_rows", "treemap_tree", "ColRow", "QSizePolicy"]

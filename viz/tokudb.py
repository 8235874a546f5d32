"""TokuDB: what the dictionaries really take on disk against what
``SHOW TABLE STATUS`` / information_schema.TABLES report (the header's logical,
uncompressed estimate), per tree height, fragmentation, and the block table
drawn along each file.

Figures come from the TokuDB parser: ``entry.sections["tokudb"]`` (disk and
uncompressed bytes as ``tokuftdump --summary`` counts them, per height, used
and unused bytes), ``dataset.tables[...].info`` (the table's footprint and
the information_schema claim) and ``entry.facts`` (the parser's typed
TokuDBFileFacts: header estimates, the translation table's blocks classified by
what they hold, node shapes; not in saved scans).
"""
from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from dbxray.parsers.humanize import axis_unit, human_bytes, short_label
from dbxray.parsers.tree import Node

from . import theme
from .columns import _band
from .textfit import BarText, fit_axis_width, legend_html, needs_refit, place_bar_texts, rows_csv, wrap_title

REPORTED = "#B0BEC5"        # what SHOW TABLE STATUS says (logical, uncompressed)
UNCOMP = "#66BB6A"          # uncompressed node bytes (tokuftdump)
ON_DISK = "#1E88E5"         # bytes the tree's nodes take on disk
USED = "#1E88E5"
UNUSED = "#E53935"
TAIL = "#CFD8DC"
HOLE = "#FFB300"
SELECTED_BAND = "#FFF59D"

#: block strip categories: (key, label, colour)
STRIP_KINDS = [
    ("header", "header", "#616161"),
    ("translation", "translation table", "#8E24AA"),
    ("descriptor", "descriptor", "#D81B60"),
    ("h0", "leaf", "#1E88E5"),
    ("h1", "height 1", "#FB8C00"),
    ("h2", "height 2", "#43A047"),
    ("h3", "height ≥ 3", "#6D4C41"),
    ("rollback", "rollback log", "#00897B"),
    ("other", "other block", "#9E9E9E"),
]
STRIP_COLOUR = {k: c for k, _, c in STRIP_KINDS}
FREE_COLOUR = "#FFCDD2"
ROLE_ORDER = {"main": 0, "secondary_index": 1, "status": 2, "dictionary": 3, "directory": 4,
              "environment": 5, "rollback": 6}


# -- data (no Qt) -----------------------------------------------------------------------

@dataclass
class Dictionary:
    """One fractal-tree file as the view draws it."""

    path: str
    label: str
    table: str | None
    role: str
    disk_bytes: int = 0              # tree nodes on disk (tokuftdump --summary total_size)
    uncompressed_bytes: int = 0      # nodes uncompressed (total_uncompressed_size)
    reported: int | None = None      # header estimate = what information_schema adds up
    allocated: int = 0
    apparent: int = 0
    used: int = 0                    # bytes in use by blocks (tokuftdump --fragmentation used_size)
    unused: int = 0                  # gaps up to the last block (fragsizes)
    tail: int = 0                    # file bytes after the last block
    rows: int | None = None
    per_height: list = field(default_factory=list)
    holes: list = field(default_factory=list)
    entry: object = None
    #: height -> leaf entries (height 0) or buffered messages (internal nodes); empty in saved scans
    entries: dict = field(default_factory=dict)

    @property
    def in_table_status(self) -> bool:
        return self.role in ("main", "secondary_index")


@dataclass
class TableRow:
    key: str
    reported: int = 0
    data_length: int = 0
    index_length: int = 0
    disk_bytes: int = 0
    uncompressed_bytes: int = 0
    allocated: int = 0
    rows: int = 0
    files: list = field(default_factory=list)


def _label(entry, sec: dict) -> str:
    facts = entry.facts
    role = sec.get("role") or "dictionary"
    name = posixpath.basename(entry.path)
    if sec.get("table"):
        if role == "main":
            what = "main"
        elif role == "secondary_index":
            what = f"key {(facts.index if facts is not None else None) or '?'}"
        else:
            what = role
        return f"{sec['table']} · {what}"
    return name


def dictionaries(dataset) -> list[Dictionary]:
    """Every fractal-tree file the parser read, table dictionaries first."""
    out = []
    for e in getattr(dataset, "files", []) or []:
        if e.engine != "tokudb":        # another engine's file: its sections are not opened
            continue
        sec = (e.sections or {}).get("tokudb") or {}
        if "disk_bytes" not in sec:
            continue
        facts = e.facts
        if facts is not None and facts.header_numbytes is not None:
            reported = facts.header_numbytes
        else:       # saved scans: the JSON section's copy of the estimate
            est = sec.get("on_disk_numbytes")
            reported = int(est) if est is not None else None
        used = int(sec.get("bytes_in_use", 0))
        unused = int(sec.get("unused_bytes", 0))
        total = facts.blocks_total if facts is not None and facts.blocks_total is not None else used + unused
        d = Dictionary(
            path=e.path, label=_label(e, sec), table=sec.get("table"), role=sec.get("role") or "dictionary",
            disk_bytes=int(sec.get("disk_bytes", 0)), uncompressed_bytes=int(sec.get("uncompressed_bytes", 0)),
            reported=reported, allocated=int(e.allocated_bytes), apparent=int(e.apparent_bytes), used=used,
            unused=unused, tail=max(int(e.apparent_bytes) - total, 0),
            rows=facts.header_numrows if facts is not None and facts.header_numrows is not None else
            (int(sec["on_disk_numrows"]) if sec.get("on_disk_numrows") is not None else None),
            per_height=list(sec.get("per_height") or []), holes=list(e.holes or []), entry=e,
            entries=dict(facts.entries_per_height) if facts is not None else {})
        out.append(d)
    out.sort(key=lambda d: (d.table is None, d.table or "", ROLE_ORDER.get(d.role, 9), d.label))
    return out


def table_rows(dataset, dicts: list[Dictionary] | None = None) -> list[TableRow]:
    """Per table: the parser's info; for saved scans (no info) summed from the dictionaries."""
    out = []
    seen = set()
    for t in getattr(dataset, "tables", []) or []:
        if t.engine != "tokudb" or not (t.info or {}).get("information_schema"):
            continue
        seen.add(t.key)
        info = t.info or {}
        isch = info.get("information_schema") or {}
        out.append(TableRow(
            key=t.key, reported=int(isch.get("total_length", 0)), data_length=int(isch.get("data_length", 0)),
            index_length=int(isch.get("index_length", 0)), disk_bytes=int(info.get("disk_bytes", 0)),
            uncompressed_bytes=int(info.get("uncompressed_bytes", 0)),
            allocated=int(info.get("allocated_bytes", 0)), rows=int(isch.get("table_rows", 0)),
            files=list(t.files)))
    groups: dict[str, list[Dictionary]] = {}
    for d in dicts or []:
        if d.table and d.table not in seen:
            groups.setdefault(d.table, []).append(d)
    for key, ds_ in groups.items():
        data = sum(d.reported or 0 for d in ds_ if d.role == "main")
        index = sum(d.reported or 0 for d in ds_ if d.role == "secondary_index")
        out.append(TableRow(key=key, reported=data + index, data_length=data, index_length=index,
                            disk_bytes=sum(d.disk_bytes for d in ds_),
                            uncompressed_bytes=sum(d.uncompressed_bytes for d in ds_),
                            allocated=sum(d.allocated for d in ds_), files=[d.path for d in ds_]))
    out.sort(key=lambda r: r.key)
    return out


def _blocks(d: Dictionary):
    """The file's translation-table blocks by offset with their kinds (the parser's
    TokuDBFileFacts.blocks), or None (saved scans)."""
    facts = d.entry.facts if d.entry is not None else None
    return facts.blocks if facts is not None else None


def strip_blocks(d: Dictionary) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(offsets, sizes) per strip category for one file, from the translation table."""
    res = {k: (np.zeros(0), np.zeros(0)) for k, _, _ in STRIP_KINDS}
    blocks = _blocks(d)
    if blocks is None:
        return res
    res["header"] = (np.array([0.0]), np.array([float(min(d.entry.facts.header_bytes, d.apparent))]))
    for i, k in enumerate(d.entry.facts.block_kinds):
        m = blocks["kind"] == i
        if m.any():
            res[k] = (blocks["offset"][m].astype(np.float64), blocks["size"][m].astype(np.float64))
    return res


def block_at(d: Dictionary, offset: float) -> str | None:
    """A tooltip line for the block covering a file offset."""
    if offset < 0 or offset > d.apparent:
        return None
    blocks = _blocks(d)
    if blocks is None:
        return None
    facts = d.entry.facts
    if offset < facts.header_bytes:
        slot = facts.header_bytes // 2
        return f"header slot {int(offset // slot)} ({human_bytes(slot)}) at offset {int(offset // slot) * slot:,}"
    bns, offs, sizes = blocks["blocknum"], blocks["offset"], blocks["size"]
    i = int(np.searchsorted(offs, offset, side="right")) - 1
    if i < 0 or not offs[i] <= offset < offs[i] + sizes[i]:
        return f"unused space at offset {int(offset):,} (not in the translation table)"
    bn, off, size = int(bns[i]), int(offs[i]), int(sizes[i])
    kind = facts.block_kinds[int(blocks["kind"][i])]
    what = {"translation": "translation table", "descriptor": "descriptor"}.get(kind)
    if what is None:
        n = facts.nodes.get(bn)
        if n is not None:
            what = (f"{'leaf' if n.height == 0 else f'height {n.height}'} node, {n.n_children} "
                    f"{'basements' if n.height == 0 else 'children'}, uncompressed "
                    f"{human_bytes(n.serialize_size)}")
        else:
            what = "block"
    return f"block {bn}: {what}\noffset {off:,}, {human_bytes(size)} ({size:,} B) on disk"


# -- the view ---------------------------------------------------------------------------

class TokuDBView(QWidget):
    """TokuDB dictionaries: real size vs reported, heights, fragmentation, block strip."""

    title = "TokuDB"
    view_id = "tokudb"
    #: the engine whose files this view draws (None: any dataset)
    engine = "tokudb"
    node_selected = Signal(object)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.dataset = None
        self.root: Node | None = None
        self.dicts: list[Dictionary] = []
        self.tables: list[TableRow] = []
        self.selected: list[Dictionary] = []
        self.selection_key: str | None = None     # None = all; "table:db.t"; "file:path"
        self.footprint_rows: list = []
        self.bar_values: dict = {}
        self._busy = False
        self.strip_rows: list = []
        self.strip_scale = 1.0
        self._resize_timer = QTimer(self)
        self._resize_timer.setSingleShot(True)
        self._resize_timer.timeout.connect(self._refit)

        self.combo = QComboBox()
        self.combo.setMinimumContentsLength(34)
        self.combo.currentIndexChanged.connect(self._on_combo)
        top = QHBoxLayout()
        top.setContentsMargins(6, 4, 6, 0)
        top.addWidget(QLabel("Show"))
        top.addWidget(self.combo)
        top.addStretch(1)

        self.page = QWidget()
        self.page.setAutoFillBackground(True)
        pal = self.page.palette()
        pal.setColor(self.page.backgroundRole(), theme.qcolor(theme.background()))
        self.page.setPalette(pal)
        self.heading = QLabel()
        self.heading.setTextFormat(Qt.RichText)
        self.heading.setWordWrap(True)
        self.heading.setStyleSheet(f"color:{theme.foreground()}; padding:4px 8px;")
        self.glw = pg.GraphicsLayoutWidget()
        self.glw.setBackground(theme.background())
        self.foot = self.glw.addPlot(row=0, col=0, colspan=2)
        self.heights = self.glw.addPlot(row=1, col=0)
        self.frag = self.glw.addPlot(row=1, col=1)
        self.strip = self.glw.addPlot(row=2, col=0, colspan=2)
        lay = self.glw.ci.layout
        lay.setRowStretchFactor(0, 9)
        lay.setRowStretchFactor(1, 6)
        lay.setRowStretchFactor(2, 5)
        lay.setColumnStretchFactor(0, 2)
        lay.setColumnStretchFactor(1, 3)
        for p in (self.foot, self.heights, self.frag, self.strip):
            wrap_title(p)
            p.setMenuEnabled(False)
            p.hideButtons()
            p.setMouseEnabled(x=False, y=False)
            theme.style_plot(p)
        self.foot.showGrid(x=True, y=False, alpha=0.15)
        self.frag.showGrid(x=True, y=False, alpha=0.15)
        self.heights.showGrid(x=False, y=True, alpha=0.15)
        self.glw.scene().sigMouseClicked.connect(self._on_click)
        self.glw.scene().sigMouseMoved.connect(self._on_move)
        pl = QVBoxLayout(self.page)
        pl.setContentsMargins(0, 0, 0, 0)
        pl.setSpacing(0)
        pl.addWidget(self.heading)
        pl.addWidget(self.glw, 1)

        # the charts keep a readable height per row (labels never overlap); a short window scrolls
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QScrollArea.NoFrame)
        self.scroll.setWidget(self.page)
        lay2 = QVBoxLayout(self)
        lay2.setContentsMargins(0, 0, 0, 0)
        lay2.setSpacing(2)
        lay2.addLayout(top)
        lay2.addWidget(self.scroll, 1)
        self._draw()

    #: below this width the heights and fragmentation charts are stacked, not side by side
    STACK_BELOW = 820

    def _place_charts(self) -> None:
        stacked = self.width() < self.STACK_BELOW
        if stacked == getattr(self, "_stacked", False):
            return
        self._stacked = stacked
        ci = self.glw.ci
        for p in (self.frag, self.strip):
            ci.removeItem(p)
        lay = ci.layout
        if stacked:
            ci.addItem(self.frag, row=2, col=0, colspan=2)
            ci.addItem(self.strip, row=3, col=0, colspan=2)
            ci.removeItem(self.heights)
            ci.addItem(self.heights, row=1, col=0, colspan=2)
            for r, f in ((0, 9), (1, 5), (2, 6), (3, 5)):
                lay.setRowStretchFactor(r, f)
        else:
            ci.removeItem(self.heights)
            ci.addItem(self.heights, row=1, col=0)
            ci.addItem(self.frag, row=1, col=1)
            ci.addItem(self.strip, row=2, col=0, colspan=2)
            for r, f in ((0, 9), (1, 6), (2, 5), (3, 0)):
                lay.setRowStretchFactor(r, f)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._place_charts()
        if self.dicts:
            self.glw.setMinimumHeight(self.charts_min_height())
            self._resize_timer.start(10)

    def _refit(self) -> None:
        if self.dicts and (needs_refit(self.foot) or needs_refit(self.frag)):
            self._draw()

    # -- view protocol ---------------------------------------------------------------------
    def set_dataset(self, dataset, root: Node) -> None:
        self.dataset = dataset
        self.root = root
        self.dicts = dictionaries(dataset)
        self.tables = table_rows(dataset, self.dicts)
        self._busy = True
        self.combo.clear()
        self.combo.addItem("All TokuDB tables", None)
        for t in self.tables:
            self.combo.addItem(f"{t.key} (table)", f"table:{t.key}")
        for d in self.dicts:
            self.combo.addItem(f"    {d.label}   [{posixpath.basename(d.path)}]", f"file:{d.path}")
        self._busy = False
        self.select_key(None)

    def select_node(self, node: Node) -> None:
        if node is None or not self.dicts:
            return
        eng = node
        while eng is not None and eng.kind != "engine":
            eng = eng.parent
        if eng is None or eng.name != "TokuDB":
            return
        if node.kind == "file" and node.path:
            self.select_key(f"file:{node.path}")
        elif node.kind == "table" and node.parent is not None:
            self.select_key(f"table:{node.parent.name}.{node.name}")
        else:
            self.select_key(None)

    def set_target(self, text: str) -> None:
        """"db.table", a file path or name, or "" / "all"."""
        text = (text or "").strip()
        if not text or text.lower() == "all":
            self.select_key(None)
            return
        if any(t.key == text for t in self.tables):
            self.select_key(f"table:{text}")
            return
        for d in self.dicts:
            if text in (d.path, posixpath.basename(d.path), d.label):
                self.select_key(f"file:{d.path}")
                return
        raise KeyError(f"target {text!r}: no such TokuDB table or dictionary")

    def export_widget(self) -> QWidget:
        return self.page

    def report_targets(self) -> list[tuple[str, str]]:
        """(caption, target) of the images a report should hold: all tables, then each table."""
        if not self.dicts:
            return []
        return [("TokuDB: all tables", "all")] + [(f"TokuDB: {t.key}", t.key) for t in self.tables]

    def chart_csv(self) -> str:
        """The footprint and fragmentation bars as CSV, their texts whole (a narrow view
        shortens them)."""
        head = ["chart", "name", "path", "reported_bytes", "uncompressed_bytes", "disk_bytes", "allocated_bytes",
                "used_bytes", "unused_bytes", "tail_bytes", "text"]
        rows = []
        for r, t in zip(self.footprint_rows, getattr(self, "foot_texts", [])):
            if isinstance(r, TableRow):
                rows.append(["on disk vs SHOW TABLE STATUS", r.key, "", r.reported, r.uncompressed_bytes, r.disk_bytes,
                             r.allocated, "", "", "", t.full])
            else:
                rows.append(["on disk vs SHOW TABLE STATUS", r.label, r.path, "" if r.reported is None else r.reported,
                             r.uncompressed_bytes, r.disk_bytes, r.allocated, r.used, r.unused, r.tail, t.full])
        for d, t in zip(getattr(self, "frag_rows", []), getattr(self, "frag_texts", [])):
            rows.append(["fragmentation", d.label, d.path, "" if d.reported is None else d.reported,
                         d.uncompressed_bytes, d.disk_bytes, d.allocated, d.used, d.unused, d.tail, t.full])
        return rows_csv(head, rows)

    # -- selection ---------------------------------------------------------------------------
    def select_key(self, key: str | None) -> None:
        self.selection_key = key
        if key is None:
            self.selected = [d for d in self.dicts if d.table] or list(self.dicts)
        elif key.startswith("table:"):
            self.selected = [d for d in self.dicts if d.table == key[6:]]
        else:
            self.selected = [d for d in self.dicts if d.path == key[5:]]
        self._busy = True
        i = self.combo.findData(key)
        self.combo.setCurrentIndex(max(i, 0))
        self._busy = False
        self._draw()

    def _on_combo(self, i: int) -> None:
        if not self._busy and i >= 0:
            self.select_key(self.combo.itemData(i))

    def _file_node(self, path: str) -> Node | None:
        if self.root is None:
            return None
        for n in self.root.walk():
            if n.kind == "file" and n.path == path:
                return n
        return None

    def _on_click(self, ev) -> None:
        vb = self.foot.getViewBox()
        if not self.footprint_rows or not vb.sceneBoundingRect().contains(ev.scenePos()):
            return
        y = vb.mapSceneToView(ev.scenePos()).y()
        i = int(round(len(self.footprint_rows) - 1 - y))
        if 0 <= i < len(self.footprint_rows):
            row = self.footprint_rows[i]
            if isinstance(row, TableRow):
                self.select_key(f"table:{row.key}")
            else:
                self.select_key(f"file:{row.path}")
                node = self._file_node(row.path)
                if node is not None:
                    self.node_selected.emit(node)

    def _on_move(self, pos) -> None:
        vb = self.strip.getViewBox()
        tip = ""
        if self.strip_rows and vb.sceneBoundingRect().contains(pos):
            p = vb.mapSceneToView(pos)
            i = int(round(len(self.strip_rows) - 1 - p.y()))
            if 0 <= i < len(self.strip_rows):
                d = self.strip_rows[i]
                t = block_at(d, p.x() * self.strip_scale)
                if t:
                    tip = f"{d.label}\n{t}"
        self.glw.setToolTip(tip)

    # -- drawing -----------------------------------------------------------------------------
    def _draw(self) -> None:
        for p in (self.foot, self.heights, self.frag, self.strip):
            p.clear()
        self.strip_rows = []
        self.strip_scale = 1.0
        self.foot_texts, self.frag_texts = [], []
        if not self.dicts:
            self.heading.setText("<b>No TokuDB dictionaries in this scan</b>")
            self.combo.setEnabled(False)
            self.foot.setTitle(None)
            return
        self.combo.setEnabled(True)
        self._heading()
        self._draw_footprint()
        self._draw_heights()
        self._draw_frag()
        self._draw_strip()
        self.glw.setMinimumHeight(self.charts_min_height())
        self._resize_timer.start(0)       # re-fit the texts once the plot layout has settled

    #: pixels a labelled bar row needs (a label line and a gap)
    ROW_PX = 19

    def charts_min_height(self) -> int:
        """Height the four charts need for their labels not to overlap: footprint rows, the
        taller of heights and fragmentation, the block strip, each with its title and axis."""
        fm = self.fontMetrics().height()
        extra = 3 * fm + 40                     # title, legend line, axis labels
        foot = len(self.footprint_rows) * self.ROW_PX + extra
        mid = max(len(getattr(self, "frag_rows", [])) * self.ROW_PX, 120) + extra
        if getattr(self, "_stacked", False):
            mid += 160 + extra                  # the heights chart on its own row
        strip = len(self.strip_rows) * self.ROW_PX + extra
        return int(foot + mid + strip)

    def _heading(self) -> None:
        key = self.selection_key
        if key is not None and key.startswith("file:"):
            d = self.selected[0] if self.selected else None
            if d is None:
                self.heading.setText("")
                return
            rep = (f"reports <b>{human_bytes(d.reported)}</b> of logical data (header estimate"
                   f"{'' if d.in_table_status else '; a ' + d.role + ' dictionary is not counted by SHOW TABLE STATUS'})"
                   if d.reported is not None else "no header estimate")
            self.heading.setText(
                f"<b>{d.label}</b> &nbsp; <span style='color:#757575'>{d.path}</span><br>"
                f"Nodes take <b>{human_bytes(d.disk_bytes)}</b> on disk ({human_bytes(d.uncompressed_bytes)} "
                f"uncompressed); the file is {human_bytes(d.apparent)}, {human_bytes(d.allocated)} allocated; "
                f"the header {rep}.")
            return
        rows = self.tables if key is None else [t for t in self.tables if f"table:{t.key}" == key]
        rep = sum(t.reported for t in rows)
        disk = sum(t.disk_bytes for t in rows)
        alloc = sum(t.allocated for t in rows)
        what = f"{len(rows)} TokuDB table{'s' if len(rows) != 1 else ''}" if key is None else f"<b>{rows[0].key}</b>" \
            if rows else "?"
        if not alloc:
            verdict = ""
        elif rep > alloc:
            verdict = f"SHOW TABLE STATUS <b>overstates</b> the real footprint <b>{rep / alloc:.2f}×</b>."
        else:
            verdict = f"SHOW TABLE STATUS reports <b>{rep / alloc:.2f}×</b> the real footprint."
        self.heading.setText(
            f"{what}: SHOW TABLE STATUS / information_schema.TABLES report <b>{human_bytes(rep)}</b> "
            f"(Data_length + Index_length: logical, uncompressed); the files really take "
            f"<b style='color:{ON_DISK}'>{human_bytes(alloc)}</b> on disk ({human_bytes(disk)} in tree nodes). "
            f"{verdict}")

    def _draw_footprint(self) -> None:
        key = self.selection_key
        rows: list = []
        for t in self.tables:
            rows.append(t)
            rows.extend(d for d in self.dicts if d.table == t.key)
        if not rows:
            rows = list(self.dicts)
        self.footprint_rows = rows
        n = len(rows)
        y = np.arange(n)[::-1].astype(float)
        rep = np.array([(r.reported or 0) for r in rows], dtype=float)
        unc = np.array([r.uncompressed_bytes for r in rows], dtype=float)
        disk = np.array([r.disk_bytes for r in rows], dtype=float)
        alloc = np.array([r.allocated for r in rows], dtype=float)
        self.bar_values = {"labels": [r.key if isinstance(r, TableRow) else r.label for r in rows],
                           "reported": rep, "uncompressed": unc, "disk": disk, "allocated": alloc}
        vmax = max(rep.max(), unc.max(), disk.max(), alloc.max(), 1.0)
        scale, unit = axis_unit(vmax)
        sel_paths = {d.path for d in self.selected}
        if key is not None:
            for yy, r in zip(y, rows):
                hit = (isinstance(r, TableRow) and key == f"table:{r.key}") or \
                      (not isinstance(r, TableRow) and r.path in sel_paths)
                if hit:
                    band = pg.BarGraphItem(x0=[0], y=[yy], height=[1.0], width=[vmax / scale * 2.5],
                                           brush=theme.qcolor(_band(), 190), pen=pg.mkPen(None))
                    band.setZValue(-10)
                    self.foot.addItem(band)
        items = [
            (rep, REPORTED, 0.84, 0.0, "reported (logical)"),
            (unc, UNCOMP, 0.5, 0.0, "nodes uncompressed"),
            (disk, ON_DISK, 0.26, 0.0, "nodes on disk (true size)"),
        ]
        for vals, colour, h, dy, label in items:
            it = pg.BarGraphItem(x0=np.zeros(n), y=y + dy, height=h, width=vals / scale,
                                 brush=theme.qcolor(colour), pen=pg.mkPen(theme.qcolor(colour).darker(125)))
            self.foot.addItem(it)
        font = _row_font(self.foot, n, 8.5)
        bold = QFont(font)
        bold.setBold(True)
        fg = theme.foreground()
        self.foot_labels = []
        texts = []
        for yy, r, rv, dv, uv in zip(y, rows, rep, disk, unc):
            ratio = (f": {rv / r.allocated:.2f}×" if isinstance(r, TableRow) and r.allocated else "")
            if isinstance(r, TableRow):
                variants = [f"{human_bytes(r.allocated)} on disk vs {human_bytes(rv)} reported (Data "
                            f"{human_bytes(r.data_length)} + Index {human_bytes(r.index_length)}){ratio}",
                            f"{human_bytes(r.allocated)} on disk vs {human_bytes(rv)} reported{ratio}",
                            f"{human_bytes(r.allocated)} vs {human_bytes(rv)}{ratio}"]
            else:
                if r.reported is None:
                    claim, short = "no header estimate", "no estimate"
                elif r.in_table_status:
                    claim = f"reported {human_bytes(rv)}" + (f" ({rv / dv:.2f}× nodes on disk)" if dv else "")
                    short = f"reported {human_bytes(rv)}"
                else:
                    claim = f"header {human_bytes(rv)}, not in SHOW TABLE STATUS"
                    short = f"header {human_bytes(rv)}"
                variants = [f"nodes {human_bytes(dv)} on disk, {human_bytes(uv)} uncompressed · {claim}",
                            f"{human_bytes(dv)} on disk · {short}", f"{human_bytes(dv)} · {short}"]
            # the longest wording that leaves the bars 40% of the plot (narrow windows: a shorter one)
            texts.append(BarText(float(yy), max(rv, uv, dv) / scale, variants, fg,
                                 bold if isinstance(r, TableRow) else font))
            self.foot_labels.append(variants[0])
        xmax = place_bar_texts(self.foot, texts, vmax / scale * 2.2, min_bar_share=0.4)
        self.foot_texts = texts
        ticks = [(float(yy), (f"{r.key} (table)" if isinstance(r, TableRow) else "   " + short_label(r.label.split(" · ", 1)[-1], 26, 7)))
                 for yy, r in zip(y, rows)]
        left = self.foot.getAxis("left")
        left.setTicks([ticks])
        left.setStyle(tickFont=font)
        left.setWidth(fit_axis_width([t for _, t in ticks], font, 170))
        self.foot.getAxis("bottom").setLabel(f"bytes ({unit})", color=fg)
        key = legend_html([(c, lbl) for _, c, _, _, lbl in items])
        self.foot.setTitle(f"<b>On disk vs SHOW TABLE STATUS</b>: {key}", color=fg, size="9.5pt")
        self.foot.setXRange(0, xmax, padding=0)
        self.foot.setYRange(-0.6, n - 0.4, padding=0)

    def _draw_heights(self) -> None:
        fg = theme.foreground()
        agg: dict[int, dict] = {}
        for d in self.selected:
            for h in d.per_height:
                a = agg.setdefault(int(h["height"]), {"nodes": 0, "disk_bytes": 0, "uncompressed_bytes": 0,
                                                      "entries": 0})
                for k in ("nodes", "disk_bytes", "uncompressed_bytes"):
                    a[k] += int(h.get(k, 0))
                a["entries"] += d.entries.get(int(h["height"]), 0)
        self.height_values = agg
        if not agg:
            self.heights.setTitle("Per tree height: no nodes", color=fg, size="9pt")
            return
        hs = sorted(agg)
        x = np.arange(len(hs), dtype=float)
        disk = np.array([agg[h]["disk_bytes"] for h in hs], dtype=float)
        unc = np.array([agg[h]["uncompressed_bytes"] for h in hs], dtype=float)
        scale, unit = axis_unit(max(disk.max(), unc.max(), 1.0))
        a = pg.BarGraphItem(x=x - 0.18, height=disk / scale, width=0.34, brush=theme.qcolor(ON_DISK),
                            pen=pg.mkPen(theme.qcolor(ON_DISK).darker(125)))
        b = pg.BarGraphItem(x=x + 0.18, height=unc / scale, width=0.34, brush=theme.qcolor(UNCOMP),
                            pen=pg.mkPen(theme.qcolor(UNCOMP).darker(125)))
        self.heights.addItem(a)
        self.heights.addItem(b)
        top = max(disk.max(), unc.max()) / scale
        font = QFont()
        font.setPointSizeF(8.0)
        for xx, h in zip(x, hs):
            n = agg[h]["nodes"]
            txt = f"{n} node{'s' if n != 1 else ''}"
            if agg[h]["entries"]:
                txt += f"\n{agg[h]['entries']:,} {'entries' if h == 0 else 'buffered msgs'}"
            ti = pg.TextItem(txt, color=fg, anchor=(0.5, 1.0))
            ti.setFont(font)
            ti.setPos(xx, max(agg[h]["disk_bytes"], agg[h]["uncompressed_bytes"]) / scale + top * 0.02)
            self.heights.addItem(ti)
        self.heights.getAxis("bottom").setTicks([[(float(xx), "leaves (0)" if h == 0 else f"height {h}")
                                                  for xx, h in zip(x, hs)]])
        self.heights.getAxis("left").setLabel(unit, color=fg)
        self.heights.getAxis("left").setWidth(60)
        scope = self._scope_name()
        self.heights.setTitle(f"Per tree height ({scope}): " + legend_html([(ON_DISK, "on disk"), (UNCOMP, "uncompressed")]),
                              color=fg, size="9pt")
        self.heights.setXRange(-0.6, len(hs) - 0.4, padding=0)
        self.heights.setYRange(0, top * 1.7, padding=0)        # room for the two-line labels above the bars

    def _scope_name(self) -> str:
        key = self.selection_key
        if key is None:
            return "all tables"
        if key.startswith("table:"):
            return key[6:]
        return self.selected[0].label if self.selected else "?"

    def _draw_frag(self) -> None:
        fg = theme.foreground()
        rows = self.selected if len(self.selected) > 0 else self.dicts
        rows = [d for d in rows]
        n = len(rows)
        self.frag_rows = rows
        if not n:
            return
        y = np.arange(n)[::-1].astype(float)
        used = np.array([d.used for d in rows], dtype=float)
        unused = np.array([d.unused for d in rows], dtype=float)
        tail = np.array([d.tail for d in rows], dtype=float)
        scale, unit = axis_unit(max((used + unused + tail).max(), 1.0))
        x0 = np.zeros(n)
        for vals, colour in ((used, USED), (unused, UNUSED), (tail, TAIL)):
            it = pg.BarGraphItem(x0=x0 / scale, y=y, height=0.6, width=vals / scale, brush=theme.qcolor(colour),
                                 pen=pg.mkPen(theme.qcolor(colour).darker(125)))
            self.frag.addItem(it)
            x0 = x0 + vals
        font = _row_font(self.frag, n, 8.0)
        tot = used + unused + tail
        texts = []
        for yy, d, u, f, t in zip(y, rows, used, unused, tot):
            pct = 100.0 * f / (u + f) if u + f else 0.0
            texts.append(BarText(float(yy), t / scale, [f"{pct:.1f}% unused ({human_bytes(f)})", f"{pct:.1f}% unused",
                                                        f"{pct:.1f}%"], fg, font))
        xmax = place_bar_texts(self.frag, texts, tot.max() / scale * 1.45)
        self.frag_texts = texts
        left = self.frag.getAxis("left")
        ticks = [(float(yy), short_label(d.label, 30, 7)) for yy, d in zip(y, rows)]
        left.setTicks([ticks])
        left.setStyle(tickFont=font)
        left.setWidth(fit_axis_width([t for _, t in ticks], font, 170))
        self.frag.getAxis("bottom").setLabel(f"file bytes ({unit})", color=fg)
        self.frag.setTitle("Fragmentation: " + legend_html([(USED, "used"), (UNUSED, "unused"), ("#90A4AE", "file tail")]),
                           color=fg, size="9pt")
        self.frag.setXRange(0, xmax, padding=0)
        self.frag.setYRange(-0.6, n - 0.4, padding=0)

    def _draw_strip(self) -> None:
        fg = theme.foreground()
        rows = list(self.selected)
        self.strip_rows = rows
        n = len(rows)
        if not n:
            return
        length = max(d.apparent for d in rows)
        scale, unit = axis_unit(max(length, 1))
        self.strip_scale = scale
        y = np.arange(n)[::-1].astype(float)
        h = 0.7 if n > 1 else 0.6
        # the file up to its last block as free space, the tail after it, then the blocks on top
        ends = np.array([d.used + d.unused for d in rows], dtype=float)
        app = np.array([d.apparent for d in rows], dtype=float)
        ends = np.minimum(ends, app)
        free = pg.BarGraphItem(x0=np.zeros(n), y=y, height=h, width=ends / scale,
                               brush=theme.qcolor(FREE_COLOUR), pen=pg.mkPen(theme.qcolor("#E57373")))
        self.strip.addItem(free)
        tail = app - ends
        if (tail > 0).any():
            m = tail > 0
            ti = pg.BarGraphItem(x0=ends[m] / scale, y=y[m], height=h, width=tail[m] / scale,
                                 brush=theme.qcolor(TAIL), pen=pg.mkPen(theme.qcolor(TAIL).darker(120)))
            self.strip.addItem(ti)
        legend_kinds = []
        self.strip_counts: dict[str, int] = {}
        per_kind: dict[str, list] = {}
        for yy, d in zip(y, rows):
            for k, (offs, sizes) in strip_blocks(d).items():
                if len(offs):
                    per_kind.setdefault(k, []).append((np.full(len(offs), yy), offs, sizes))
        for k, _, colour in STRIP_KINDS:
            if k not in per_kind:
                continue
            ys = np.concatenate([a for a, _, _ in per_kind[k]])
            offs = np.concatenate([b for _, b, _ in per_kind[k]])
            sizes = np.concatenate([c for _, _, c in per_kind[k]])
            self.strip_counts[k] = len(offs)
            it = pg.BarGraphItem(x0=offs / scale, y=ys, height=h, width=sizes / scale, brush=theme.qcolor(colour),
                                 pen=pg.mkPen(theme.qcolor(colour).darker(140), width=0))
            self.strip.addItem(it)
            legend_kinds.append(k)
        hole_rows = [(yy, d) for yy, d in zip(y, rows) if d.holes]
        if hole_rows:
            hx, hw, hy = [], [], []
            for yy, d in hole_rows:
                for off, ln in d.holes:
                    hx.append(off)
                    hw.append(ln)
                    hy.append(yy - h / 2 - 0.08)
            it = pg.BarGraphItem(x0=np.array(hx) / scale, y=np.array(hy), height=0.12, width=np.array(hw) / scale,
                                 brush=theme.qcolor(HOLE), pen=pg.mkPen(None))
            self.strip.addItem(it)
        font = _row_font(self.strip, n, 8.0)
        left = self.strip.getAxis("left")
        ticks = [(float(yy), short_label(d.label, 30, 7)) for yy, d in zip(y, rows)]
        left.setTicks([ticks])
        left.setStyle(tickFont=font)
        left.setWidth(fit_axis_width([t for _, t in ticks], font, 170))
        self.strip.getAxis("bottom").setLabel(f"file offset ({unit})", color=fg)
        names = {k: lbl for k, lbl, _ in STRIP_KINDS}
        parts = [(STRIP_COLOUR[k], names[k]) for k in legend_kinds]
        parts.append(("#E57373", "free"))
        if (tail > 0).any():
            parts.append(("#90A4AE", "file tail"))
        legend = legend_html(parts)
        if hole_rows:
            legend += " &nbsp; " + legend_html([(HOLE, "hole")], swatch="▬")
        if not any(_blocks(d) is not None for d in rows):
            legend = "not in a saved scan (rescan the files to see the block table)"
        self.strip.setTitle(f"Blocks along the file: {legend}", color=fg, size="9pt")
        self.strip.setXRange(0, length / scale * 1.01, padding=0)
        self.strip.setYRange(-0.75, n - 0.3, padding=0)


def _row_font(plot, rows: int, pt: float) -> QFont:
    """A font that fits ``rows`` category rows in the plot's current height."""
    font = QFont()
    h = plot.getViewBox().height()
    if h > 20 and rows:
        pt = max(6.5, min(pt, h / rows * 0.62))
    font.setPointSizeF(pt)
    return font


__all__ = ["TokuDBView", "dictionaries", "table_rows", "strip_blocks", "Dictionary", "TableRow"]


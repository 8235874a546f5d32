"""Qt item model over :mod:`parsers.tree`: name, apparent, allocated, holes,
logical, errors, and for ClickHouse parts and columns the compressed,
uncompressed and marks bytes (``system.parts`` / ``system.parts_columns``);
sortable through a proxy (numbers sort as numbers)."""
from __future__ import annotations

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QBrush, QColor, QFont

from dbxray.parsers.humanize import human_bytes
from dbxray.parsers.tree import Node

COLUMNS = ("Name", "Apparent", "Allocated", "Holes", "Logical", "Errors", "Compressed", "Uncompressed", "Marks")
#: the model columns only ClickHouse parts and columns fill
CH_COLUMNS = (6, 7, 8)


def add_clickhouse_columns(root: Node, dataset) -> int:
    """Column nodes under each ClickHouse part node (engine > database > table >
    part > column), from the scan's ``clickhouse`` section; part nodes get the
    part's figures.  Sizes are the engine's (``system.parts_columns``); Compact
    parts, where the engine reports 0 per column, show the split computed from
    the marks (flagged).  Returns the number of column nodes added."""
    tables = ((getattr(dataset, "sections", None) or {}).get("clickhouse") or {}).get("tables") or []
    eng = next((c for c in root.children if c.kind == "engine" and c.name == "ClickHouse"), None)
    if eng is None or not tables:
        return 0
    added = 0
    for t in tables:
        db = next((c for c in eng.children if c.kind == "database" and c.name == t.get("database")), None)
        tnode = next((c for c in db.children if c.kind == "table" and c.name == t.get("table")), None) \
            if db is not None else None
        if tnode is None:
            continue
        parts = {c.name: c for c in tnode.children if c.kind == "part"}
        for p in t.get("parts") or []:
            pnode = parts.get(p.get("name"))
            if pnode is None:
                continue
            pnode.ch_sizes = (int(p.get("data_compressed_bytes") or 0), int(p.get("data_uncompressed_bytes") or 0),
                              int(p.get("marks_bytes") or 0), False)
            pnode.ref = {"part": p.get("name"), "table": f"{t.get('database')}.{t.get('table')}",
                         "part_type": p.get("part_type"), "rows": p.get("rows"), "marks": p.get("marks"),
                         "state": p.get("state"), "bytes_on_disk": p.get("bytes_on_disk")}
            _group_part_files(pnode)
            for c in p.get("columns") or []:
                n = pnode.child(str(c.get("name")), "column")
                comp = c.get("computed") if c.get("engine_reports_zero") else None
                if comp:
                    sizes = (int(comp.get("compressed_bytes") or 0), int(comp.get("uncompressed_bytes") or 0),
                             int(comp.get("marks_bytes_uncompressed") or 0), True)
                else:
                    sizes = (int(c.get("compressed_bytes") or 0), int(c.get("uncompressed_bytes") or 0),
                             int(c.get("marks_bytes") or 0), False)
                n.ch_sizes = sizes
                n.logical = sizes[1]
                n.apparent = sizes[0] + sizes[2]        # its bytes in the part's files
                n.ref = {"column": c.get("name"), "type": c.get("type"), "part": p.get("name"),
                         "part_type": p.get("part_type"), "table": f"{t.get('database')}.{t.get('table')}",
                         "codecs": c.get("codecs") or (comp or {}).get("codecs") or {},
                         "compressed_bytes": c.get("compressed_bytes"),
                         "uncompressed_bytes": c.get("uncompressed_bytes"), "marks_bytes": c.get("marks_bytes"),
                         "bytes_on_disk": c.get("bytes_on_disk"),
                         "engine_reports_zero": bool(c.get("engine_reports_zero"))}
                added += 1
    return added


def _group_part_files(pnode: Node) -> None:
    """A part's files under one "files" node, so its columns are its direct children."""
    files = [c for c in pnode.children if c.kind == "file"]
    if not files or any(c.kind == "group" for c in pnode.children):
        return
    g = Node(name=f"files ({len(files)})", kind="group", parent=pnode)
    for f in files:
        f.parent = g
    g.children = files
    for attr in ("apparent", "allocated", "holes", "logical", "errors"):
        setattr(g, attr, sum(getattr(f, attr) for f in files))
    pnode.children = [c for c in pnode.children if c.kind != "file"] + [g]
    pnode._index = {(c.name, c.kind): c for c in pnode.children}
SORT_ROLE = Qt.UserRole + 1
NODE_ROLE = Qt.UserRole + 2


class DatasetTreeModel(QAbstractItemModel):
    def __init__(self, root: Node | None = None, parent=None):
        super().__init__(parent)
        self._root = root or Node(name="", kind="root")

    def set_root(self, root: Node) -> None:
        self.beginResetModel()
        self._root = root
        self.endResetModel()

    def root(self) -> Node:
        return self._root

    @staticmethod
    def headers() -> tuple[str, ...]:
        return COLUMNS

    # -- structure ------------------------------------------------------------
    def _node(self, index: QModelIndex) -> Node:
        return index.internalPointer() if index.isValid() else self._root

    def index(self, row, column, parent=QModelIndex()):
        node = self._node(parent)
        if 0 <= row < len(node.children) and 0 <= column < len(COLUMNS):
            return self.createIndex(row, column, node.children[row])
        return QModelIndex()

    def parent(self, index):
        if not index.isValid():
            return QModelIndex()
        node = index.internalPointer()
        par = node.parent
        if par is None or par is self._root:
            return QModelIndex()
        grand = par.parent
        row = grand.children.index(par) if grand is not None else 0
        return self.createIndex(row, 0, par)

    def rowCount(self, parent=QModelIndex()):
        if parent.column() > 0:
            return 0
        return len(self._node(parent).children)

    def columnCount(self, parent=QModelIndex()):
        return len(COLUMNS)

    def headerData(self, section, orientation, role=Qt.DisplayRole):
        if orientation == Qt.Horizontal and role == Qt.DisplayRole:
            return COLUMNS[section]
        if orientation == Qt.Horizontal and role == Qt.TextAlignmentRole and section > 0:
            return int(Qt.AlignRight | Qt.AlignVCenter)
        return None

    def data(self, index, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        node: Node = index.internalPointer()
        col = index.column()
        ch = getattr(node, "ch_sizes", None)
        is_col = node.kind == "column"
        values = (node.name, node.apparent, node.allocated, node.holes, node.logical, node.errors) + \
            (tuple(ch[:3]) if ch else (None, None, None))
        if is_col:      # a column is not a file: its bytes in the part's files, no allocation of its own
            values = (node.name, node.apparent, None, None, node.logical, 0) + values[6:]
        if role == Qt.DisplayRole:
            if col == 0:
                return node.name
            if col == 5:
                return str(node.errors) if node.errors else ""
            v = values[col]
            if v is None:
                return ""
            return ("≈ " if ch and ch[3] and col in CH_COLUMNS else "") + human_bytes(v)
        if role == SORT_ROLE:
            if col == 0:
                return node.name.lower()
            v = values[col]
            return -1 if v is None else v
        if role == Qt.FontRole and is_col and ch and ch[3] and col in CH_COLUMNS:
            f = QFont()
            f.setItalic(True)
            return f
        if role == NODE_ROLE:
            return node
        if role == Qt.TextAlignmentRole and col > 0:
            return int(Qt.AlignRight | Qt.AlignVCenter)
        if role == Qt.ToolTipRole and ch is not None:
            c, u, m, computed = ch
            tip = f"{node.kind}: {node.name}"
            if is_col and isinstance(node.ref, dict):
                tip += f" ({node.ref.get('type')})\npart {node.ref.get('part')} of {node.ref.get('table')}"
            tip += f"\ncompressed {c:,} B\nuncompressed {u:,} B\nmarks {m:,} B"
            if u and c:
                tip += f"\nratio {u / c:.2f}×"
            if computed:
                tip += ("\nCompact part: system.parts_columns reports 0 B for each column;"
                        "\nthese figures split data.bin by the column marks (computed by dbxray)")
            return tip
        if role == Qt.ToolTipRole:
            tip = f"{node.kind}: {node.name}"
            if node.path:
                tip += f"\n{node.path}"
            tip += (f"\napparent {node.apparent:,} B\nallocated {node.allocated:,} B"
                    f"\nholes {node.holes:,} B\nlogical {node.logical:,} B")
            if node.errors:
                tip += f"\n{node.errors} error(s)"
            return tip
        if role == Qt.ForegroundRole and col == 5 and node.errors:
            return QBrush(QColor("#c62828"))
        return None


class TreeSortProxy(QSortFilterProxyModel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setSortRole(SORT_ROLE)
        self.setRecursiveFilteringEnabled(True)
        self.setFilterCaseSensitivity(Qt.CaseInsensitive)

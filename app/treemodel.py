"""Qt item model over :mod:`parsers.tree`: name, apparent, allocated, holes,
logical, errors, and for ClickHouse parts and columns the compressed,
uncompressed and marks bytes (``system.parts`` / ``system.parts_columns``).

Lazy, for data dirs of tens of thousands of tables: a parent's rows are handed to
the view in batches (Qt's ``canFetchMore`` / ``fetchMore``), and the model sorts and
filters its Node lists itself (numbers sort as numbers), so the first rows a view
shows are the first of the whole sorted list, not of the rows fetched so far.  No
per-row object is made beyond the tree's own Nodes."""
from __future__ import annotations

from PySide6.QtCore import QAbstractItemModel, QModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont

from typing import TYPE_CHECKING

from dbxray.parsers.humanize import human_bytes

if TYPE_CHECKING:       # parsers.tree imports every engine and numpy: not at start-up
    from dbxray.parsers.tree import Node


def _node_class():
    from dbxray.parsers.tree import Node
    return Node


class _EmptyRoot:
    """The root of no tree yet (a parsers Node would import the parsers before the window shows)."""
    name, kind, parent, path = "", "root", None, None

    def __init__(self):
        self.children: list = []
        self._index: dict = {}

    def find(self, name: str, kind: str):
        return self._index.get((name, kind))

    def walk(self):
        yield self

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
    g = _node_class()(name=f"files ({len(files)})", kind="group", parent=pnode)
    for f in files:
        f.parent = g
    g.children = files
    for attr in ("apparent", "allocated", "holes", "logical", "errors"):
        setattr(g, attr, sum(getattr(f, attr) for f in files))
    pnode.children = [c for c in pnode.children if c.kind != "file"] + [g]
    pnode._index = {(c.name, c.kind): c for c in pnode.children}
SORT_ROLE = Qt.UserRole + 1
NODE_ROLE = Qt.UserRole + 2
# roles as plain ints: Qt passes ints to data(), and each ``Qt.DisplayRole`` look-up costs
# ~4 µs in PySide6, which made data() 20 µs a call (a tree of 20,000 rows calls it millions of times)
_DISPLAY = int(Qt.ItemDataRole.DisplayRole)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole)
_FONT = int(Qt.ItemDataRole.FontRole)
_ALIGN = int(Qt.ItemDataRole.TextAlignmentRole)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole)
_SORT = int(SORT_ROLE)
_NODE = int(NODE_ROLE)
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_DESCENDING = Qt.SortOrder.DescendingOrder

#: columns a file listing does not know yet (holes, logical, errors)
_NOT_LISTED = (3, 4, 5)

#: rows a parent hands to the view at a time (more when the view scrolls to its end)
FETCH_BATCH = 500


def _values(node: Node) -> tuple:
    """The model columns of one node (None: empty cell)."""
    ch = getattr(node, "ch_sizes", None)
    if node.kind == "column":   # a column is not a file: its bytes in the part's files, no allocation of its own
        return (node.name, node.apparent, None, None, node.logical, 0) + \
            (tuple(ch[:3]) if ch else (None, None, None))
    return (node.name, node.apparent, node.allocated, node.holes, node.logical, node.errors) + \
        (tuple(ch[:3]) if ch else (None, None, None))


def sort_key(node: Node, column: int):
    """What a column sorts by: names without case, numbers as numbers (-1 for none)."""
    if column == 0:
        return node.name.lower()
    v = _values(node)[column]
    return -1 if v is None else v


class DatasetTreeModel(QAbstractItemModel):
    """The tree, sorted and filtered here, rows fetched lazily in ``batch`` steps."""

    def __init__(self, root: Node | None = None, parent=None, batch: int = FETCH_BATCH):
        super().__init__(parent)
        self._root = root if root is not None else _EmptyRoot()
        self.listing = False
        self._batch = max(1, int(batch))
        self._sort: tuple[int, Qt.SortOrder] | None = None
        self._filter = ""
        self._keep: set[int] | None = None     # ids of the nodes a filter keeps (None: all)
        self._clear()

    def _clear(self) -> None:
        self._shown: dict[int, tuple[Node, list[Node]]] = {}    # id(parent) -> (parent, rows in order)
        self._fetched: dict[int, int] = {}                       # id(parent) -> rows handed to the view
        self._row: dict[int, int] = {}                           # id(node) -> its row under its parent

    def set_root(self, root: Node, listing: bool = False) -> None:
        """Show ``root``'s tree; ``listing``: a file listing (stat's sizes only), whose
        holes, logical sizes and errors are not known yet and show empty."""
        self.beginResetModel()
        self._root = root
        self.listing = listing
        self._clear()
        if self._filter:
            self._keep = self._kept(self._filter)
        self.endResetModel()

    def root(self) -> Node:
        return self._root

    @staticmethod
    def headers() -> tuple[str, ...]:
        return COLUMNS

    # -- rows: sorted, filtered, fetched in batches ---------------------------------
    def _ordered(self, node: Node) -> list[Node]:
        if node.kind == "file":             # its index rows may be made on demand
            from dbxray.parsers.tree import expand
            children = expand(node)
        else:
            children = node.children
        kids = children if self._keep is None else [c for c in children if id(c) in self._keep]
        if self._sort is None:
            return list(kids)
        col, order = self._sort
        return sorted(kids, key=lambda n: sort_key(n, col), reverse=order == _DESCENDING)

    def _rows(self, node: Node) -> list[Node]:
        key = id(node)
        got = self._shown.get(key)
        if got is not None:
            return got[1]
        rows = self._ordered(node)
        self._shown[key] = (node, rows)
        for i, c in enumerate(rows):
            self._row[id(c)] = i
        self._fetched[key] = min(len(rows), self._batch)
        return rows

    def canFetchMore(self, parent=QModelIndex()) -> bool:
        if parent.column() > 0:
            return False
        node = self._node(parent)
        return len(self._rows(node)) > self._fetched[id(node)]

    def fetchMore(self, parent=QModelIndex()) -> None:
        node = self._node(parent)
        self._fetch_to(node, parent, self._fetched.get(id(node), 0) + self._batch)

    def _fetch_to(self, node: Node, parent: QModelIndex, count: int) -> None:
        rows = self._rows(node)
        have = self._fetched[id(node)]
        count = min(len(rows), count)
        if count > have:
            self.beginInsertRows(parent, have, count - 1)
            self._fetched[id(node)] = count
            self.endInsertRows()

    def expanded_keys(self, view) -> list[tuple]:
        """``node_key`` of every row ``view`` shows expanded."""
        out = []
        for node, _rows in self._shown.values():
            if node is self._root or node.parent is None:
                continue
            row = self._row.get(id(node))
            if row is None or row >= self._fetched.get(id(node.parent), 0):
                continue
            if view.isExpanded(self.createIndex(row, 0, node)):
                out.append(node_key(node))
        return out

    def fetched_rows(self, node: Node) -> int:
        """Rows of ``node`` handed to the view so far."""
        self._rows(node)
        return self._fetched[id(node)]

    def _path(self, node: Node) -> list[Node] | None:
        """``node`` and its ancestors below the root, nearest first; None when it is not in this tree."""
        path = []
        n = node
        while n is not None and n is not self._root:
            path.append(n)
            n = n.parent
        return path if n is self._root else None

    def index_of(self, node: Node, column: int = 0) -> QModelIndex:
        """The index of ``node`` (rows fetched up to it on the way); invalid when the
        filter hides it or it is not in this tree."""
        path = self._path(node)
        if path is None:
            return QModelIndex()
        idx = QModelIndex()
        parent = self._root
        for n in reversed(path):
            rows = self._rows(parent)
            row = self._row.get(id(n))
            if row is None or row >= len(rows) or rows[row] is not n:
                return QModelIndex()
            if row >= self._fetched[id(parent)]:
                self._fetch_to(parent, idx, row + 1)
            idx = self.createIndex(row, column if n is node else 0, n)
            parent = n
        return idx

    def _relayout(self, change) -> None:
        """Apply ``change`` (new sort, filter or nodes) to every list the view has seen,
        keeping the view's persistent indexes (expanded rows, selection) on their nodes."""
        self.layoutAboutToBeChanged.emit()
        old = self.persistentIndexList()
        held = [(i.internalPointer(), i.column()) for i in old]
        change()
        fetched = dict(self._fetched)
        seen = [node for node, _ in self._shown.values()]
        self._clear()
        for node in seen:
            n = len(self._rows(node))
            self._fetched[id(node)] = min(n, max(fetched.get(id(node), 0), self._batch))
        new = []
        for node, col in held:
            new.append(self._index_quiet(node, col))
        self.changePersistentIndexList(old, new)
        self.layoutChanged.emit()

    def _index_quiet(self, node: Node, column: int) -> QModelIndex:
        """``index_of`` inside a layout change: rows fetched up to the node without signals."""
        path = self._path(node)
        if path is None:
            return QModelIndex()
        parent = self._root
        row = 0
        for n in reversed(path):
            rows = self._rows(parent)
            row = self._row.get(id(n))
            if row is None or row >= len(rows) or rows[row] is not n:
                return QModelIndex()
            self._fetched[id(parent)] = max(self._fetched[id(parent)], row + 1)
            parent = n
        return self.createIndex(row, column, node)

    def sort(self, column: int, order=Qt.AscendingOrder) -> None:
        if not 0 <= column < len(COLUMNS):
            return

        def change():
            self._sort = (column, order)
        self._relayout(change)

    def set_filter(self, text: str) -> None:
        """Rows whose name holds ``text`` (any case) and their ancestors."""
        text = text.strip().lower()

        def change():
            self._filter = text
            self._keep = self._kept(text) if text else None
        self._relayout(change)

    def kept_count(self) -> int:
        """Rows the filter keeps (matches and their ancestors); every row without a filter."""
        if self._keep is not None:
            return len(self._keep)
        return sum(1 for _ in self._root.walk()) - 1

    def _kept(self, text: str) -> set[int]:
        keep: set[int] = set()
        for n in self._root.walk():
            if n is not self._root and text in n.name.lower():
                while n is not None and n is not self._root and id(n) not in keep:
                    keep.add(id(n))
                    n = n.parent
        return keep

    def refresh(self) -> None:
        """The tree's nodes changed in place (rows added, sizes grown): lists re-ordered,
        new rows shown, the view's expanded rows and selection kept."""
        def change():
            if self._filter:
                self._keep = self._kept(self._filter)
        self._relayout(change)

    # -- structure ------------------------------------------------------------
    def _node(self, index: QModelIndex) -> Node:
        return index.internalPointer() if index.isValid() else self._root

    def index(self, row, column, parent=QModelIndex()):
        node = self._node(parent)
        if 0 <= column < len(COLUMNS) and 0 <= row < self.fetched_rows(node):
            return self.createIndex(row, column, self._rows(node)[row])
        return QModelIndex()

    def parent(self, index):
        if not index.isValid():
            return QModelIndex()
        par = index.internalPointer().parent
        if par is None or par is self._root:
            return QModelIndex()
        return self.createIndex(self._row.get(id(par), 0), 0, par)

    def rowCount(self, parent=QModelIndex()):
        if parent.column() > 0:
            return 0
        return self.fetched_rows(self._node(parent))

    def hasChildren(self, parent=QModelIndex()):
        if parent.column() > 0:
            return False
        node = self._node(parent)
        if not node.children:
            if node.kind != "file":
                return False
            from dbxray.parsers.tree import LAZY_INDEXES
            if node.children is not LAZY_INDEXES:
                return False
        return bool(self._rows(node))

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
        if role == _DISPLAY:
            if col == 0:
                return node.name
            if self.listing and col in _NOT_LISTED:
                return ""
            v = _values(node)[col]
            if col == 5:
                return str(v) if v else ""
            if v is None:
                return ""
            ch = getattr(node, "ch_sizes", None)
            return ("≈ " if ch and ch[3] and col in CH_COLUMNS else "") + human_bytes(v)
        if role == _SORT:
            return sort_key(node, col)
        if role == _NODE:
            return node
        if role == _ALIGN:
            return _RIGHT if col > 0 else None
        if role == _TOOLTIP:
            return self._tooltip(node)
        if role == _FONT:
            ch = getattr(node, "ch_sizes", None)
            if node.kind == "column" and ch and ch[3] and col in CH_COLUMNS:
                f = QFont()
                f.setItalic(True)
                return f
            return None
        if role == _FOREGROUND and col == 5 and node.errors:
            return QBrush(QColor("#c62828"))
        return None

    @staticmethod
    def _tooltip(node: Node) -> str:
        ch = getattr(node, "ch_sizes", None)
        if ch is not None:
            c, u, m, computed = ch
            tip = f"{node.kind}: {node.name}"
            if node.kind == "column" and isinstance(node.ref, dict):
                tip += f" ({node.ref.get('type')})\npart {node.ref.get('part')} of {node.ref.get('table')}"
            tip += f"\ncompressed {c:,} B\nuncompressed {u:,} B\nmarks {m:,} B"
            if u and c:
                tip += f"\nratio {u / c:.2f}×"
            if computed:
                tip += ("\nCompact part: system.parts_columns reports 0 B for each column;"
                        "\nthese figures split data.bin by the column marks (computed by dbxray)")
            return tip
        tip = f"{node.kind}: {node.name}"
        if node.path:
            tip += f"\n{node.path}"
        tip += (f"\napparent {node.apparent:,} B\nallocated {node.allocated:,} B"
                f"\nholes {node.holes:,} B\nlogical {node.logical:,} B")
        if node.errors:
            tip += f"\n{node.errors} error(s)"
        return tip


class ListingTree:
    """The tree of a data dir's file listing (``app.workers.list_files`` rows), grown
    batch by batch while the scan reads the files: engine > database > table > file,
    with ``stat``'s apparent and allocated bytes rolled up as rows arrive."""

    def __init__(self, root_path: str):
        self.root = _node_class()(name=root_path, kind="root")
        self.files = 0

    def add(self, rows) -> None:
        for eng, db, table, part, name, path, apparent, allocated in rows:
            chain = [self.root]
            node = self.root.child(eng, "engine")
            chain.append(node)
            node = node.child(db, "database")
            chain.append(node)
            if table:
                node = node.child(table, "table")
                chain.append(node)
            if part:
                node = node.child(part, "part")
                chain.append(node)
            leaf = node.child(name, "file")
            leaf.path = path
            leaf.apparent, leaf.allocated = apparent, allocated
            for n in chain:
                n.apparent += apparent
                n.allocated += allocated
            self.files += 1

    def done(self) -> None:
        """Every file is listed: the rows' look-up indexes are let go (``Node.child`` and
        ``find`` make one again if needed; 100,000 files held ~11 MB of them)."""
        for n in self.root.walk():
            n._index = None


def node_key(node: Node) -> tuple:
    """A node's place in its tree as (name, kind) steps from the root (finds the same
    row in a tree built again)."""
    out = []
    while node.parent is not None:
        out.append((node.name, node.kind))
        node = node.parent
    return tuple(reversed(out))


def find_key(root: Node, key: tuple) -> Node | None:
    """The node at ``key`` (``node_key``) in ``root``'s tree, or None."""
    node = root
    for name, kind in key:
        nxt = node.find(name, kind)
        if nxt is None or nxt.parent is not node:
            nxt = next((c for c in node.children if c.name == name and c.kind == kind), None)
        if nxt is None:
            return None
        node = nxt
    return node

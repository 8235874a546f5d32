"""Qt item model over :mod:`parsers.tree`: name, apparent, allocated, holes,
logical, errors; sortable through a proxy (numbers sort as numbers)."""
from __future__ import annotations

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QBrush, QColor

from parsers.humanize import human_bytes
from parsers.tree import Node

COLUMNS = ("Name", "Apparent", "Allocated", "Holes", "Logical", "Errors")
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
        values = (node.name, node.apparent, node.allocated, node.holes, node.logical, node.errors)
        if role == Qt.DisplayRole:
            if col == 0:
                return node.name
            if col == 5:
                return str(node.errors) if node.errors else ""
            return human_bytes(values[col])
        if role == SORT_ROLE:
            return values[col] if col else node.name.lower()
        if role == NODE_ROLE:
            return node
        if role == Qt.TextAlignmentRole and col > 0:
            return int(Qt.AlignRight | Qt.AlignVCenter)
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

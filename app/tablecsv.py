"""Any table or tree the window shows, as CSV (as DB Browser for SQLite exports every
grid): the rows of a Qt item model with its header, a tree's rows flattened with each
row's place in the tree as the first column.  Plain data in, text out."""
from __future__ import annotations

import csv
import io

from PySide6.QtCore import QAbstractItemModel, QModelIndex, Qt


def model_rows(model: QAbstractItemModel, tree: bool = False, columns: list[int] | None = None,
               parent: QModelIndex = QModelIndex(), prefix: tuple[str, ...] = ()) -> list[list[str]]:
    """The displayed text of every row (every level of a tree, depth first, in the
    model's order: a sorting model gives the sorted order and only what its filter keeps;
    a lazy model is asked for all its rows first),
    of ``columns`` (default: all)."""
    out = []
    cols = columns if columns is not None else list(range(model.columnCount(parent)))
    while model.canFetchMore(parent):
        model.fetchMore(parent)
    for r in range(model.rowCount(parent)):
        cells = []
        for c in cols:
            v = model.index(r, c, parent).data(Qt.DisplayRole)
            cells.append("" if v is None else str(v))
        idx0 = model.index(r, 0, parent)
        place = prefix + (cells[0] if cells else "",)
        out.append(([" / ".join(place)] if tree else []) + cells)
        if tree and model.hasChildren(idx0):
            out.extend(model_rows(model, True, columns, idx0, place))
    return out


def model_header(model: QAbstractItemModel, tree: bool = False, columns: list[int] | None = None) -> list[str]:
    cols = columns if columns is not None else list(range(model.columnCount()))
    head = [str(model.headerData(c, Qt.Horizontal, Qt.DisplayRole) or "") for c in cols]
    return (["place in tree"] if tree else []) + head


def to_csv(header: list[str], rows: list[list[str]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


def model_csv(model: QAbstractItemModel, tree: bool = False, columns: list[int] | None = None) -> str:
    return to_csv(model_header(model, tree, columns), model_rows(model, tree, columns))


def view_columns(view) -> list[int]:
    """The columns a QTreeView / QTableView shows (hidden ones left out)."""
    return [c for c in range(view.model().columnCount()) if not view.isColumnHidden(c)]


def row_text(model: QAbstractItemModel, index: QModelIndex) -> str:
    """One row's displayed cells, tab-separated (what "Copy row" puts on the clipboard)."""
    parent = index.parent()
    return "\t".join(str(model.index(index.row(), c, parent).data(Qt.DisplayRole) or "")
                     for c in range(model.columnCount(parent)))

"""The dataset as a tree: engine > database > table > file / part / index.

Pure Python (no Qt): the window wraps it in a Qt item model, the CLI and the
report can walk it too.  Sizes roll up from the leaves.
"""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from .model import Dataset, FileEntry

ENGINE_LABELS = {"innodb": "InnoDB", "clickhouse": "ClickHouse", "tokudb": "TokuDB", None: "Other files"}
_PART_RE = re.compile(r"^.+?_\d+_\d+_\d+(?:_\d+)?$")
_TOKU_RE = re.compile(r"^_(?P<db>[^_]+)_(?P<table>.+?)_(?P<kind>main|status|key_.+?)_[0-9a-f]+_\d+_[0-9a-f]+(?:_B_\d+)?\.tokudb$")


@dataclass
class Node:
    """One row of the tree."""

    name: str
    kind: str                       # engine, database, table, part, file, index, group
    apparent: int = 0
    allocated: int = 0
    holes: int = 0
    logical: int = 0
    errors: int = 0
    path: str | None = None          # file path for file nodes
    ref: Any = None                  # FileEntry, index dict, ... for the views
    children: list["Node"] = field(default_factory=list)
    parent: "Node | None" = field(default=None, repr=False)
    _index: dict = field(default_factory=dict, repr=False)

    def child(self, name: str, kind: str) -> "Node":
        key = (name, kind)
        node = self._index.get(key)
        if node is None:
            node = Node(name=name, kind=kind, parent=self)
            self._index[key] = node
            self.children.append(node)
        return node

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()

    def roll_up(self) -> None:
        for c in self.children:
            c.roll_up()
        if self.children and self.kind not in ("file",):
            self.apparent = sum(c.apparent for c in self.children if c.kind != "index")
            self.allocated = sum(c.allocated for c in self.children if c.kind != "index")
            self.holes = sum(c.holes for c in self.children if c.kind != "index")
            self.logical = sum(c.logical for c in self.children if c.kind != "index")
            self.errors = sum(c.errors for c in self.children if c.kind != "index")
        self.children.sort(key=lambda n: (n.kind == "file", -n.allocated, n.name))


def logical_bytes(entry: FileEntry) -> int:
    """Decoded size of a file's contents where the parser knows it, else its apparent size."""
    if entry.units is not None and len(entry.units):
        return int(entry.units["logical"].sum(dtype="u8"))
    return int(entry.apparent_bytes)


def place(entry: FileEntry) -> tuple[str, str | None, str | None]:
    """(database, table, part) a file belongs to: from its parser, else from its path."""
    db, table, part = entry.database, entry.table, None
    parts = entry.path.split("/")
    if entry.engine == "clickhouse":
        for i in range(len(parts) - 1, -1, -1):
            if _PART_RE.match(parts[i]) and i < len(parts) - 1:
                part = "/".join(parts[i:-1])
                if db is None and i >= 1:
                    db, table = "(unnamed)", parts[i - 1]
                break
        if db is None:
            db = "(metadata)"
    elif entry.engine == "innodb":
        if db is None:
            if entry.role == "tablespace" and len(parts) >= 2:
                db = parts[-2]
            elif entry.role == "tablespace":
                db = "(files)"
            else:
                db = "(system)"
        if table is None and entry.role == "tablespace":
            stem = parts[-1].rsplit(".", 1)[0]
            table = stem.split("#P#")[0].split("#p#")[0]
    elif entry.engine == "tokudb":
        if db is None:
            m = _TOKU_RE.match(parts[-1])
            if m:
                db, table = m.group("db"), m.group("table")
            else:
                db = "(environment)"
    else:
        db = posixpath.dirname(entry.path) or "."
    return db, table, part


def build_tree(ds: Dataset) -> Node:
    """The tree of a dataset; file nodes carry their FileEntry in ``ref``."""
    root = Node(name=ds.root, kind="root")
    for entry in ds.files:
        eng = root.child(ENGINE_LABELS.get(entry.engine, str(entry.engine)), "engine")
        db, table, part = place(entry)
        parent = eng.child(db, "database")
        if table:
            parent = parent.child(table, "table")
        if part:
            parent = parent.child(part, "part")
        leaf = parent.child(posixpath.basename(entry.path) if (table or part) else entry.path, "file")
        leaf.path = entry.path
        leaf.ref = entry
        leaf.apparent = entry.apparent_bytes
        leaf.allocated = entry.allocated_bytes
        leaf.holes = entry.hole_bytes
        leaf.logical = logical_bytes(entry)
        leaf.errors = len(entry.errors)
        inno = entry.sections.get("innodb") or {}
        page = int(inno.get("physical_page_size") or inno.get("page_size") or 0)
        for ix in inno.get("indexes", []) or []:
            name = ix.get("name") or f"index {ix.get('index_id')}"
            n = leaf.child(name, "index")
            n.ref = ix
            n.apparent = n.allocated = int(ix.get("pages", 0)) * page
            n.logical = int(ix.get("pages", 0)) * int(inno.get("page_size") or page)
    root.roll_up()
    return root

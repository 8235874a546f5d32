"""The dataset as a tree: engine > database > table > file / part / index.

Pure Python (no Qt): the window wraps it in a Qt item model, the CLI and the
report can walk it too.  Sizes roll up from the leaves.
"""
from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any

from . import engines
from .model import Dataset, FileEntry


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
    """(database, table, part) a file belongs to: from its engine (its parser, else
    its path); a file of no engine sits under its directory."""
    engine = engines.get(entry.engine)
    if engine is None:
        return posixpath.dirname(entry.path) or ".", entry.table, None
    return engine.place(entry)


def build_tree(ds: Dataset) -> Node:
    """The tree of a dataset; file nodes carry their FileEntry in ``ref``."""
    root = Node(name=ds.root, kind="root")
    for entry in ds.files:
        engine = engines.get(entry.engine)
        eng = root.child(engines.label(entry.engine), "engine")
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
        for name, ref, allocated, logical in (engine.file_children(entry) if engine is not None else ()):
            n = leaf.child(name, "index")
            n.ref = ref
            n.apparent = n.allocated = allocated
            n.logical = logical
    root.roll_up()
    return root

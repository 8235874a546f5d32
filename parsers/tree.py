"""The dataset as a tree: engine > database > table > file / part / index.

Pure Python (no Qt): the window wraps it in a Qt item model, the CLI and the
report can walk it too.  Sizes roll up from the leaves.
"""
from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any

from . import engines
from .model import UNIT_FREE, Dataset, FileEntry, unit_count, units_logical_bytes


#: kinds whose bytes are not added to their parent's: an index row (its file counts its
#: pages) and a spread group (tables over files they share, counted by those files)
NOT_ADDED = ("index", "spread")
#: the name of an engine's spread group (Engine.spread_tables)
SPREAD_NAME = "tables (over shared files)"


#: the children of a node that has none: one shared empty tuple (a 100,000-file tree has
#: about 400,000 leaves; ``child`` gives a node a list of its own)
NO_CHILDREN: tuple = ()


class _Lazy(tuple):
    """Children not made yet (no rows until :func:`expand` makes them)."""


#: the children of a file row of a packed, settled scan (more files than
#: ``ScanContext.pack_sections_over``): its index rows are made by :func:`expand` when the
#: window shows them (100,000 files would hold 200,000-400,000 index rows, ~0.7 KB a file)
LAZY_INDEXES = _Lazy()


@dataclass(slots=True, eq=False)
class Node:
    """One row of the tree (slotted, leaves share one empty ``children``: a tree of
    100,000 tablespaces held 2.8 KB of row objects a file, now 0.7)."""

    name: str
    kind: str                       # engine, database, table, part, file, index, group, spread
    apparent: int = 0
    allocated: int = 0
    holes: int = 0                   # ranges holding no written data: unallocated holes and unwritten extents
    unwritten: int = 0               # the part of ``holes`` allocated by fallocate, never written
    past_eof: int = 0                # allocated beyond the file size (part of ``allocated``, outside ``apparent``)
    logical: int = 0
    errors: int = 0
    path: str | None = None          # file path for file nodes
    ref: Any = None                  # FileEntry, index dict, ... for the views
    children: list["Node"] = field(default=NO_CHILDREN)
    parent: "Node | None" = field(default=None, repr=False)
    #: ClickHouse part and column rows: the engine's own (compressed, uncompressed, ...) sizes,
    #: set where the window adds the column rows (app/treemodel.py)
    ch_sizes: tuple | None = field(default=None, repr=False)
    #: children by (name, kind), made with the first child
    _index: dict | None = field(default=None, repr=False)

    def child(self, name: str, kind: str) -> "Node":
        key = (name, kind)
        index = self._index
        if index is None:
            index = self._index = {(c.name, c.kind): c for c in self.children}
        node = index.get(key)
        if node is None:
            node = Node(name=name, kind=kind, parent=self)
            index[key] = node
            if type(self.children) is not list:
                self.children = list(self.children)
            self.children.append(node)
        return node

    def find(self, name: str, kind: str) -> "Node | None":
        """The child ``(name, kind)``, or None (through the children's index, made when
        first needed)."""
        if self.children is LAZY_INDEXES:
            expand(self)
        index = self._index
        if index is None:
            index = self._index = {(c.name, c.kind): c for c in self.children}
        return index.get((name, kind))

    @property
    def data(self) -> int:
        """Allocated and written bytes inside the size: allocated minus unwritten and past EOF."""
        return max(0, self.allocated - self.unwritten - self.past_eof)

    @property
    def unallocated(self) -> int:
        """Bytes inside the size with no block at all (holes that are not unwritten extents)."""
        return max(0, self.holes - self.unwritten)

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()

    def roll_up(self) -> None:
        """Sizes summed from the leaves, children sorted; the children's look-up index is
        let go (``child`` makes it again when a row is added later)."""
        self._index = None
        for c in self.children:
            c.roll_up()
        if self.children and self.kind not in ("file",):
            # index rows and spread groups show bytes their files already count
            counted = [c for c in self.children if c.kind not in NOT_ADDED]
            if not counted and self.kind == "table":
                counted = self.children          # a spread table: the sum of its index rows
            self.apparent = sum(c.apparent for c in counted)
            self.allocated = sum(c.allocated for c in counted)
            self.holes = sum(c.holes for c in counted)
            self.unwritten = sum(c.unwritten for c in counted)
            self.past_eof = sum(c.past_eof for c in counted)
            self.logical = sum(c.logical for c in counted)
            self.errors = sum(c.errors for c in counted)
        if self.children:
            self.children.sort(key=lambda n: (n.kind == "spread", n.kind == "file", -n.allocated, n.name))


def logical_bytes(entry: FileEntry) -> int:
    """Decoded size of a file's contents where the parser knows it, else its apparent size."""
    return units_logical_bytes(entry) if unit_count(entry) else int(entry.apparent_bytes)


def place(entry: FileEntry) -> tuple[str, str | None, str | None]:
    """(database, table, part) a file belongs to: from its engine (its parser, else
    its path); a file of no engine sits under its directory."""
    engine = engines.get(entry.engine)
    if engine is None:
        return posixpath.dirname(entry.path) or ".", entry.table, None
    return engine.place(entry)


def owned_units(entry: FileEntry) -> dict[int, int]:
    """Units in use per owner (``units["owner"]``, free units left out): an InnoDB index
    owns its B-tree pages and every other page of its segments (BLOB, LOB pages)."""
    u = entry.units
    if u is None or not len(u) or "owner" not in (u.dtype.names or ()):
        return {}
    import numpy as np
    out: dict[int, int] = {}
    for a in range(0, len(u), 1 << 18):      # a chunk at a time: a 10M-unit file's temporaries stay small
        owner = u["owner"][a:a + (1 << 18)]
        live = owner[((u["flags"][a:a + (1 << 18)] & UNIT_FREE) == 0) & (owner >= 0)]
        if len(live):
            vals, counts = np.unique(live, return_counts=True)
            for v, c in zip(vals, counts):
                out[int(v)] = out.get(int(v), 0) + int(c)
    return dict(sorted(out.items()))


def _unit_bytes(engine, entry: FileEntry) -> int:
    geo = engine.unit_geometry(entry) if engine is not None else None
    return int(geo.unit_bytes) if geo is not None and geo.unit_bytes else 0


def _index_rows(leaf: Node, entry: FileEntry, engine, table: str | None) -> None:
    """A file's index rows (``Engine.file_children``) under its row ``leaf``."""
    children = list(engine.file_children(entry)) if engine is not None else []
    tables = {ref.get("table") for _, ref, _, _ in children if isinstance(ref, dict) and ref.get("table")}
    qualify = len(tables) > 1 or (not table and bool(tables))     # ibdata1, shared tablespaces
    owned = owned_units(entry) if children else {}
    unit_bytes = _unit_bytes(engine, entry) if owned else 0
    for name, ref, allocated, logical in children:
        if qualify and isinstance(ref, dict) and ref.get("table") and "." not in name:
            name = f"{ref['table']}.{name}"
        n = leaf.child(name, "index")
        n.ref = ref
        iid = ref.get("index_id") if isinstance(ref, dict) else None
        more = owned.get(int(iid), 0) * unit_bytes if iid is not None and 0 <= int(iid) < 2 ** 31 else 0
        if more > allocated:
            # the index's segments hold more than its B-tree pages (BLOB/LOB pages, ...):
            # counted under it, as highlighting the index in the map shows them
            logical = logical * more // allocated if allocated else more
            allocated = more
        n.apparent = n.allocated = allocated
        n.logical = logical


def expand(node: Node):
    """``node``'s children, its index rows made first when the tree left them to be made
    on demand (:data:`LAZY_INDEXES`: a file of a packed, settled scan)."""
    if node.children is LAZY_INDEXES:
        node.children = NO_CHILDREN
        entry = node.ref
        engine = engines.get(entry.engine)
        _, table, part = place(entry)
        _index_rows(node, entry, engine, table or part)
        node.roll_up()
    return node.children


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
        if leaf.ref is not None and leaf.ref is not entry:
            # another file of the same place and name (two copies of a data dir under the
            # root): a row of its own, named by its path, not merged into the first one's
            leaf = parent.child(entry.path, "file")
        leaf.path = entry.path
        leaf.ref = entry
        leaf.apparent = entry.apparent_bytes
        leaf.allocated = entry.allocated_bytes
        leaf.holes = entry.hole_bytes
        leaf.unwritten = entry.unwritten_bytes
        leaf.past_eof = entry.past_eof_bytes
        leaf.logical = logical_bytes(entry)
        leaf.errors = len(entry.errors)
        if entry.settled() and engine is not None:
            leaf.children = LAZY_INDEXES            # made by ``expand`` when a view asks
        else:
            _index_rows(leaf, entry, engine, table)
    for name in ds.engines:
        engine = engines.get(name)
        rows = engine.spread_tables(ds) if engine is not None else []
        if not rows:
            continue
        group = root.child(engines.label(name), "engine").child(SPREAD_NAME, "spread")
        for db, table, indexes in rows:
            tnode = group.child(db, "database").child(table, "table")
            for iname, ref, allocated, logical in indexes:
                n = tnode.child(iname, "index")
                n.ref = ref
                n.apparent = n.allocated = allocated
                n.logical = logical
    root.roll_up()
    return root


_PLACE_LEVELS = {"database": 0, "table": 1, "part": 2}


def kind_label(node: Node) -> str:
    """A row's kind in words: the engine's name for the level a file is placed at
    (``Engine.place_kinds``: a MyRocks column family and LSM level, not a database and a
    table), else the row's kind."""
    level = _PLACE_LEVELS.get(node.kind)
    if level is None:
        return node.kind
    up = node.parent
    while up is not None and up.kind not in ("engine", "spread"):
        up = up.parent
    if up is None or up.kind != "engine":
        return node.kind
    engine = engines.by_label(up.name)
    return engine.place_kinds[level] if engine is not None else node.kind

"""The engine protocol: what one storage engine contributes to the parser layer.

An engine is one package under ``parsers/`` (``parsers/<name>/``) whose
``engine.py`` holds an :class:`Engine` instance named ``ENGINE``; the
registry (``parsers/engines.py``) lists those instances, one line each.
Everything above the parsers (the scan, detection, the tree, saved scans,
what-if sampling, the views) reaches an engine only through this protocol:

* identity: ``name`` (the JSON ``engine`` value), ``label`` (the tree's
  engine row), ``roles`` (the ``role`` values its files take);
* detection: :meth:`Engine.enter_dir` keeps per-directory state while the
  walk descends (a ClickHouse data path, a part folder), :meth:`Engine.claim_name`
  gives a role by a file's name and place, :meth:`Engine.claim_bytes` by its
  first and last bytes (head and tail, so formats known by a footer count);
* :meth:`Engine.analyze`: read the engine's files of a dataset into their
  units, sections and errors (and the dataset's tables);
* :meth:`Engine.place`: (database, table, part) of a file for the tree,
  :meth:`Engine.file_children`: rows below a file (InnoDB indexes), and
  :meth:`Engine.spread_tables`: tables spread over files they share (MyRocks);
* :meth:`Engine.unit_geometry`: how a file's units tile it (the unit map), the
  per-unit facts being ``FileEntry.unit_facts`` (typed, parsers/model.py);
* :meth:`Engine.preview_target` / :meth:`Engine.preview`: unit headers read in
  chunks before the scan ends (the map's progressive first paint);
* :meth:`Engine.inspect_unit`: one unit's fields and byte regions (the inspector);
* :meth:`Engine.unit_payload`: the decoded bytes of one unit (what-if sampling);
* :meth:`Engine.section_from_json` and :meth:`Engine.restore`: a saved scan's
  typed sections and derived figures rebuilt from its JSON (the round trip).

The compressor layer adds what-if targets, storage models and DDL per engine
(``compress/engines/``), the view layer the engine's own views
(``viz/registry.py``); both are keyed by ``name`` and optional: an engine with
only this part is detected, scanned, drawn in the generic views (sizes, holes,
unit map) and projected with the filesystem models.

No Qt, no compressor imports here (parsers/ is the bottom layer).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .model import Dataset, FileEntry, ScanContext, UnitGeometry


@dataclass
class UnitInspection:
    """What the inspector shows of one unit (a page, a block, a node)."""

    data: bytes                                                                  # the unit's bytes as shown
    fields: list[tuple[str, str, int | None]] = field(default_factory=list)     # (name, value, byte offset)
    regions: list[tuple[int, int, str]] = field(default_factory=list)           # [start, end) region name
    note: str = ""


class Engine:
    """Base of every engine: defaults that claim nothing and add nothing."""

    #: JSON ``engine`` value and registry key
    name: str = ""
    #: label of the engine's row in the tree
    label: str = ""
    #: roles the engine's files take (``model.ROLES`` lists them all)
    roles: tuple[str, ...] = ()
    #: order of name claims: lower first (engines that claim by place before name rules)
    claim_order: int = 100
    #: bytes of a lone file's start and end that :meth:`claim_bytes` needs (0: none)
    head_bytes: int = 0
    tail_bytes: int = 0

    # -- detection ---------------------------------------------------------
    def enter_dir(self, reldir: str, dirname: str, names: set[str], state: Any) -> Any:
        """This engine's walk state for directory ``reldir`` (``dirname``: its own
        name, ``names``: its entries), given the parent directory's state (None at
        the root)."""
        return state

    def claim_name(self, rel: str, state: Any) -> str | None:
        """Role of the file at ``rel`` (relative to the scan root) by its name and
        place (``state``: :meth:`enter_dir`'s value for its directory), or None."""
        return None

    def claim_bytes(self, head: bytes, tail: bytes) -> str | None:
        """Role of a file no engine claimed by name, from its first bytes and its last
        bytes, or None.  ``head`` / ``tail`` hold at least ``head_bytes`` /
        ``tail_bytes`` of them (the most any engine asks for; fewer when the file is
        shorter), so compare slices."""
        return None

    # -- scan ----------------------------------------------------------------
    def analyze(self, dataset: "Dataset", files: list["FileEntry"], ctx: "ScanContext") -> None:
        """Read ``files`` (this engine's files of ``dataset``)."""

    # -- tree ------------------------------------------------------------------
    #: what the three levels of :meth:`place` are, in words (the inspector's "Kind" of a row)
    place_kinds: tuple[str, str, str] = ("database", "table", "part")

    def place(self, entry: "FileEntry") -> tuple[str, str | None, str | None]:
        """(database, table, part) of a file: from its parser, else from its path."""
        return entry.database or "(files)", entry.table, None

    def file_children(self, entry: "FileEntry") -> list[tuple[str, Any, int, int]]:
        """Rows below a file's tree row: (name, ref, allocated bytes, logical bytes)."""
        return []

    def spread_tables(self, dataset: "Dataset") -> list[tuple[str, str, list[tuple[str, Any, int, int]]]]:
        """Tables whose rows share files with other tables (MyRocks: an SST holds many
        indexes), so the file rows cannot show them: (database, table, index rows as in
        :meth:`file_children`, summed over the table's files).  The tree shows them in a
        group of their own whose bytes are not added to the engine's (the files count them)."""
        return []

    # -- unit map ------------------------------------------------------------------
    def unit_geometry(self, entry: "FileEntry") -> "UnitGeometry | None":
        """How ``entry``'s units tile the file for the unit map (None: not drawn)."""
        return None

    # -- progressive first paint ------------------------------------------------
    def preview_target(self, path: str) -> str | None:
        """The file under ``path`` whose units can be shown before the scan ends, or None."""
        return None

    def preview(self, path: str, emit, is_cancelled, root: str | None = None) -> int:
        """Read ``path``'s unit headers in chunks, ``emit`` each (``{"kind": "begin"|"chunk"|"end", ...}``;
        "begin" names the engine); returns the units read."""
        raise NotImplementedError(f"{self.name}: no preview")

    def preview_file(self, info: dict):
        """The file a preview's "begin" message announces: an object with ``entry`` (a
        FileEntry the unit map draws), ``n_pages``, ``read`` and ``add(start, types, lsn,
        names)`` for each "chunk" message."""
        raise NotImplementedError(f"{self.name}: no preview")

    # -- inspector -----------------------------------------------------------------
    def inspect_unit(self, entry: "FileEntry", i: int, unit: Any = None) -> UnitInspection:
        """Header fields and byte regions of unit ``i`` (``unit``: its record, when known)."""
        return UnitInspection(data=b"", note=f"{self.label}: no unit inspector")

    # -- what-if sampling ----------------------------------------------------------
    def unit_payload(self, entry: "FileEntry", i: int, max_output: int) -> bytes:
        """Decoded bytes of unit ``i`` of ``entry`` (at most ``max_output``)."""
        raise NotImplementedError(f"{self.name}: units cannot be decoded")

    def reads_facts(self, entry: "FileEntry", ctx: "ScanContext") -> bool:
        """Whether this engine's :meth:`analyze` reads ``entry``'s allocation and holes itself
        (``parsers.filefacts.read_facts``, on every core where its workers read the file), so that
        the scan's serial first pass only stats it (size and allocated bytes) and marks it
        ``facts_pending``.  The engine must then read them before anything of the file is used.
        Only files of at least :attr:`facts_in_workers_from` bytes are left to it."""
        return False

    #: the size from which a file :meth:`reads_facts` says the engine reads is left to it
    #: (a small file's FIEMAP costs less here than another open in a worker)
    facts_in_workers_from: int = 1

    # -- work a light scan leaves for later ------------------------------------------
    def deferred(self, dataset: "Dataset") -> bool:
        """Whether this engine's part of ``dataset`` was read lightly (``ScanContext.block_walk``
        False) and a scan of this engine alone would read more (``parsers.scan.complete``)."""
        return False

    # -- saved scans -------------------------------------------------------------
    def section_from_json(self, data: Any) -> Any:
        """This engine's typed section (parsers/section.py) from a saved scan's
        ``files[].<name>``; the JSON as it is for an engine without typed sections."""
        return data

    def restore(self, dataset: "Dataset") -> None:
        """Rebuild what a live scan derives (table figures) from a saved scan's sections."""

    def __repr__(self) -> str:
        return f"<engine {self.name}>"

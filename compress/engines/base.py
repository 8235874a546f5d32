"""The what-if side of the engine protocol (parsers/engine.py names the rest).

An engine that can be projected has a module in ``compress/engines/`` with a
:class:`WhatIfEngine` instance named ``WHATIF``, listed in
``compress/engines/__init__.py``: which files (or which dataset-level objects)
are its targets, how to project them (its storage models), which codecs the
engine itself can write, and the DDL that gets there.  An engine without one
has no what-if targets (its files are still scanned, listed and drawn).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dbxray.parsers.model import Dataset, FileEntry

    from ..registry import Codec
    from ..targets import Run, Target


class WhatIfEngine:
    """Base: no targets, every codec available, no DDL."""

    #: the engine's name (parsers/engines.py)
    name: str = ""

    def wants_file(self, entry: "FileEntry") -> bool:
        """Whether ``entry`` is a target of its own (one per file: tablespaces, dictionaries)."""
        return False

    def file_target(self, run: "Run", entry: "FileEntry", codecs: list["Codec"]) -> "Target":
        raise NotImplementedError

    def file_cost(self, entry: "FileEntry") -> float:
        """How long building the target of ``entry`` takes, in any unit common to the engine's
        files (the file's bytes by default): the order in which the forked first pass hands the
        targets out, the costliest first (compress/whatif.py); never what a target is."""
        return float(entry.apparent_bytes or 0)

    def declined(self, entry: "FileEntry") -> str | None:
        """Why a file that holds a table's data is not a target (named in the result's
        ``not_projected``), or None: the file is not one the engine projects at all."""
        return None

    def wants_dataset(self, dataset: "Dataset") -> bool:
        """Whether the engine has dataset-level targets (ClickHouse tables and columns)."""
        return False

    def dataset_targets(self, run: "Run", dataset: "Dataset", codecs: list["Codec"]) -> list["Target"]:
        return []

    def available(self, codec: "Codec", layout: str | None = None) -> bool:
        """Whether the engine itself can write ``codec`` (advice is limited to those)."""
        return True

    def ddl(self, target: "Target", codec: "Codec", model: str) -> str:
        """The statement that would store ``target`` with ``codec`` under ``model``."""
        return ""

    def rebuild_ddl(self, target: "Target") -> str | None:
        """The statement that rebuilds ``target`` as it is (reclaiming its free space), or
        None when the engine has none."""
        return None

    def rebuild_verdict(self, group: list, reclaimable: int) -> str:
        """What the rebuild advice says it reclaims (``group``: the table's targets)."""
        free_pages = sum(int(t.split.detail.get("free_pages", 0)) for t in group if t.split is not None)
        return (f"reclaims up to {reclaimable:,} bytes of free pages ({free_pages:,}) and unwritten "
                f"space; the codec stays; the rebuilt file reserves free pages of its own (the last "
                f"extents of each index), so the gain is at most this")

    def advisable(self, target: "Target") -> bool:
        """Whether advice (DDL) can be given for ``target`` at all."""
        return True

    def combine_advice(self, entries: list[dict], targets: list["Target"]) -> list[dict]:
        """This engine's advice ``entries`` as a DBA should get them, where only the engine knows
        how they combine (``targets``: the engine's advisable targets): entries that set one
        option of one object together become one; as they are by default."""
        return entries

    def engine_change(self, target: "Target", codec: "Codec", model: str) -> tuple[str, str, float, int] | None:
        """For a result that estimates the table in another engine (a cross-engine model):
        the engine clause (``ENGINE=ROCKSDB``), the statement that converts the table, and the
        model's own error as checked against that engine (a fraction of the figure, and bytes
        the figure leaves out, such as reserved extents) which advice must clear besides the
        sampling interval. None: not such a result, or no advice from it."""
        return None


"""The engine registry: every engine the parser layer knows, in display order.

Adding an engine is one package ``parsers/<name>/`` with an ``engine.py``
holding ``ENGINE`` (an :class:`~dbxray.parsers.engine.Engine`) and one line here.
The functions below read :data:`ENGINES` at each call, so the registry is this
one tuple.
"""
from __future__ import annotations

from .archive.engine import ENGINE as ARCHIVE
from .aria.engine import ENGINE as ARIA
from .clickhouse.engine import ENGINE as CLICKHOUSE
from .csv.engine import ENGINE as CSV
from .engine import Engine
from .model import FileEntry, set_unit_map_rule
from .innodb.engine import ENGINE as INNODB
from .rocksdb.engine import ENGINE as ROCKSDB
from .myisam.engine import ENGINE as MYISAM
from .server.engine import ENGINE as SERVER
from .tokudb.engine import ENGINE as TOKUDB

#: every engine, in the order the scan reads them and the JSON lists them
ENGINES: tuple[Engine, ...] = (
    INNODB,
    CLICKHOUSE,
    TOKUDB,
    CSV,
    ROCKSDB,
    ARCHIVE,
    MYISAM,
    ARIA,
    SERVER,
)


def names() -> tuple[str, ...]:
    """The engines' names in registry order."""
    return tuple(e.name for e in ENGINES)


def get(name: str | None) -> Engine | None:
    """The engine called ``name``, or None (files no engine claimed)."""
    if name:
        for e in ENGINES:
            if e.name == name:
                return e
    return None


def claim_order() -> tuple[Engine, ...]:
    """The engines in the order their name claims are tried (engines that claim by place first)."""
    return tuple(sorted(ENGINES, key=lambda e: e.claim_order))


def label(name: str | None) -> str:
    """The tree label of an engine name (``Other files`` for none)."""
    if name is None:
        return "Other files"
    e = get(name)
    return e.label if e is not None else str(name)


def by_label(label: str) -> Engine | None:
    """The engine whose tree label is ``label``, or None."""
    for e in ENGINES:
        if e.label == label:
            return e
    return None


def draws_units(entry: FileEntry) -> bool:
    """Whether the unit map draws ``entry``: its engine gives a unit geometry for it."""
    engine = get(entry.engine)
    return engine is not None and engine.unit_geometry(entry) is not None


set_unit_map_rule(draws_units)

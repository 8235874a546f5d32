"""FULLTEXT auxiliary tables attached to their table and index (fts0fts.cc
fts_get_table_name / fts_write_object_id, fts0priv.h).

InnoDB names each FULLTEXT index's six auxiliary index tables
``FTS_<table id>_<index id>_INDEX_1..6`` and the table's common ones
``FTS_<table id>_CONFIG`` / ``_DELETED`` / ``_DELETED_CACHE`` / ``_BEING_DELETED`` /
``_BEING_DELETED_CACHE``, the ids as 16 hex digits.  The ids are looked up in
the data dictionary (SYS_TABLES / SYS_INDEXES of ibdata1): the aux files then
count as their table's, and each FULLTEXT index gets its aux files' bytes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

FTS_AUX_RE = re.compile(r"^fts_(?P<table>[0-9a-f]{16})_(?:(?P<index>[0-9a-f]{16})_index_(?P<n>\d+)|"
                        r"(?P<common>config|deleted|deleted_cache|being_deleted|being_deleted_cache))$",
                        re.IGNORECASE)


@dataclass
class FtsAux:
    """What an aux table's file name says."""

    table_id: int
    index_id: int | None          # None: a common aux table of the table
    part: str                     # "INDEX_1".."INDEX_6", "CONFIG", "DELETED", ...


def parse_fts_aux_name(stem: str) -> FtsAux | None:
    """The ids in an aux table's file name (without ``.ibd``), or None."""
    m = FTS_AUX_RE.match(stem)
    if m is None:
        return None
    if m.group("common"):
        return FtsAux(int(m.group("table"), 16), None, m.group("common").upper())
    return FtsAux(int(m.group("table"), 16), int(m.group("index"), 16), f"INDEX_{m.group('n')}")

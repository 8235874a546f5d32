"""ClickHouse targets for ``whatif``: one per column and one per table.

Units are the column's compressed blocks in every active part, decoded by
``parsers/clickhouse/payloads.py``; each is re-encoded with the target codec
as its own block (block boundaries and marks unchanged, see
:class:`compress.models.ClickHouseBlocks`).
"""
from __future__ import annotations

from .sources import SourceUnavailable, payload_module


def targets(run, dataset, codecs):
    """Column and table targets (filled in once the ClickHouse parser provides payloads)."""
    mod = payload_module("clickhouse")
    if not hasattr(mod, "column_blocks"):
        raise SourceUnavailable("clickhouse: parsers/clickhouse/payloads.py has no column_blocks yet")
    raise SourceUnavailable("clickhouse: column targets not wired yet")

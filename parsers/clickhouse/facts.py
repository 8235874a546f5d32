"""What the ClickHouse views draw beyond the JSON (typed; not in saved scans):
the stored size of every compressed block, per table, part and column, for the
block-size histograms."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class ClickHouseFacts:
    """``Dataset.facts["clickhouse"]``."""

    #: (database, table) -> part path (relative to the scan root) -> column -> block sizes per stream
    block_sizes: dict[tuple[str, str], dict[str, dict[str, list[np.ndarray]]]] = field(default_factory=dict)
    #: False: the scan read no MergeTree block header (``ScanContext.block_walk`` False; the
    #: window walks them after the first paint): no block sizes or codecs yet
    blocks_walked: bool = True

    def part_block_sizes(self, database: str | None, table: str | None, part_path: str | None) \
            -> dict[str, list[np.ndarray]]:
        """column -> stored block sizes (one array per stream) of one part; empty when unknown."""
        return self.block_sizes.get((database, table), {}).get(part_path, {})

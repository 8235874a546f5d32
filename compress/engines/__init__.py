"""The what-if engines: each engine's targets, storage models and DDL
(one module per engine, one line each here; see base.py)."""
from __future__ import annotations

from .archive import WHATIF as ARCHIVE
from .base import WhatIfEngine
from .aria import WHATIF as ARIA
from .clickhouse import WHATIF as CLICKHOUSE
from .innodb import WHATIF as INNODB
from .rocksdb import WHATIF as ROCKSDB
from .myisam import WHATIF as MYISAM
from .tokudb import WHATIF as TOKUDB

#: in the parser registry's order (parsers/engines.py)
WHATIF_ENGINES: tuple[WhatIfEngine, ...] = (
    INNODB,
    CLICKHOUSE,
    TOKUDB,
    ROCKSDB,
    ARCHIVE,
    MYISAM,
    ARIA,
)

_BY_NAME = {w.name: w for w in WHATIF_ENGINES}


def get(name: str | None) -> WhatIfEngine | None:
    return _BY_NAME.get(name) if name else None


__all__ = ["WHATIF_ENGINES", "WhatIfEngine", "get"]

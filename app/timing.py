"""When the window first showed what (for tests/benchmarks/bench_window.py and bug reports).

Enabled by ``DBXRAY_TIMING=FILE``: the window appends one line ``EVENT UNIX_TIME`` to FILE
when it first paints (``window``), first paints the tree with rows (``tree``), paints the
first scan's tree (``scanned``: the figures of a scan that may have left work for later, as
ClickHouse's block walk), paints the tree of a finished scan (``complete``: after that work),
and when a scan is cancelled (``cancelled``).  The
times are wall-clock, so a driver compares them with its own clock at process start."""
from __future__ import annotations

import os
import time

ENV = "DBXRAY_TIMING"


def mark(event: str) -> None:
    path = os.environ.get(ENV)
    if not path:
        return
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{event} {time.time():.6f}\n")
    except OSError:
        pass

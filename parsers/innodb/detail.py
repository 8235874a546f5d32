"""The per-file parser objects of a scanned InnoDB file (its PageMap and the per-page
arrays in ``FileEntry.detail["innodb"]``, parsers/innodb/scan.py ``fill_entry``): kept by
the scan within a memory budget, read again from the file when a reader asks for them.

A scan with ``ScanContext.detail_budget`` set (the window: tens of thousands of small
tablespaces would keep ~12 KB of page map objects each) keeps the page maps of the files
it reads first, up to that many bytes (estimated as measured: ~12 KB a file plus ~104 bytes a
page), and drops the rest once their JSON section, units and unit facts are made: what the
table, the tree and the maps draw.  The page inspector and the what-if's page payloads
(parsers/innodb/inspect.py, payloads.py) call :func:`innodb_detail`, which gives the kept
objects or builds them again from the file (the same ``build_page_map`` the scan ran, so
the same facts while the file is unchanged), keeping the last few rebuilt in a bounded
cache.  A file that changed since the scan (size, modification time, device or inode) is not re-read:
its units would no longer describe it.  Encrypted tablespaces always keep theirs (the
re-read would need the key file again).
"""
from __future__ import annotations

import os
from collections import OrderedDict
from dataclasses import replace
from typing import Any, Callable

from ..fileio import FileReadError
from ..model import FileEntry, ScanContext
from ..parallel import keeps_parser_objects
from .pagemap import PageMapError

#: estimated bytes of one file's page map objects: fixed part and per page (tracemalloc,
#: 2026-11-24: 12.0 KB for a 5-page tablespace; 94-103 bytes a page on 3,328-17,152 pages)
DETAIL_FIXED_BYTES = 12_000
DETAIL_PAGE_BYTES = 104
#: the window's budget for kept page maps (``ScanContext.detail_budget``)
WINDOW_DETAIL_BUDGET = 64 << 20
#: rebuilt page maps kept at most (bytes, estimated as above; the last one always)
REREAD_CACHE_BYTES = 64 << 20


class DetailUnavailable(Exception):
    """The page map of a file cannot be given (changed since the scan, unreadable)."""


def detail_cost(n_pages: int) -> int:
    """Estimated bytes of a page map of ``n_pages`` pages with its arrays."""
    return DETAIL_FIXED_BYTES + DETAIL_PAGE_BYTES * int(n_pages)


def keep_within_budget(entry: FileEntry, ctx: ScanContext, n_pages: int, encrypted: bool) -> None:
    """After a file's page map was made: keep it while the scan's budget allows, else
    drop it (it is read again on demand).  No budget: keep it, except in a fork server's
    worker (parsers/parallel.py), which keeps only what is kept whatever the budget
    (an encrypted file's)."""
    budget = getattr(ctx, "detail_budget", None)
    keep = keeps_parser_objects()          # False in a fork server's worker: none sent back
    if "innodb" not in entry.detail or (budget is None and keep):
        return
    cost = detail_cost(n_pages)
    if encrypted or (keep and ctx.detail_kept + cost <= budget):
        ctx.detail_kept += cost
        return
    del entry.detail["innodb"]
    entry.detail["innodb_stamp"] = _stamp(entry.abspath)


class _Dropped(dict):
    """The ``detail`` of a file whose page map was dropped while the file still had the
    size and modification time the scan first saw (``FileEntry.seen``, the stamp then):
    one shared, read-only dict for all of them (100,000 small tablespaces held one dict
    and one stamp each)."""

    def _refuse(self, *args, **kwargs):
        raise TypeError("a dropped page map's detail is shared: assign a dict of your own")

    __setitem__ = __delitem__ = update = setdefault = pop = popitem = clear = __ior__ = _refuse


DROPPED = _Dropped({"innodb_stamp": None})


def share_dropped(entry: FileEntry) -> None:
    """Once the scan is done with a file: a detail that only says the map was dropped
    becomes :data:`DROPPED` when the stamp is the file's ``seen``."""
    d = entry.detail
    if d is not DROPPED and len(d) == 1 and d.get("innodb_stamp", False) == entry.seen and entry.seen is not None:
        entry.detail = DROPPED


def _stamp(path: str) -> tuple[int, int, int, int] | None:
    """(size, mtime_ns, st_dev, st_ino) of ``path`` now: what ``FileEntry.seen`` holds."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_dev, st.st_ino


_cache: OrderedDict[tuple, tuple[dict[str, Any], int]] = OrderedDict()
_cache_bytes = 0


def innodb_detail(entry: FileEntry) -> dict[str, Any] | None:
    """The file's page map objects (``detail["innodb"]`` as the scan makes it): the kept
    ones, or built again from the file when the scan dropped them.  None when the file
    was not read as InnoDB; DetailUnavailable when it cannot be rebuilt faithfully."""
    det = entry.detail.get("innodb")
    if det is not None:
        return det
    if "innodb_stamp" not in entry.detail:
        return None
    stamp = entry.seen if entry.detail is DROPPED else entry.detail["innodb_stamp"]
    now = _stamp(entry.abspath)
    if now is None:
        raise DetailUnavailable(f"{entry.path}: cannot be read again (it was removed or is unreadable)")
    if stamp is not None and now != stamp:
        raise DetailUnavailable(f"{entry.path}: changed since the scan (size, modification time, or another file at "
                                f"its path); scan again")
    key = (entry.abspath, now)
    got = _cache.get(key)
    if got is not None:
        _cache.move_to_end(key)
        return got[0]
    det = _rebuild(entry)
    _remember(key, det)
    return det


#: reads one file into a FileEntry as the scan does (parsers/innodb/scan.py registers its
#: ``analyze_file`` when it is imported: it imports this module, so this one cannot import it)
_analyze: Callable[[FileEntry, ScanContext], Any] | None = None


def register_analyzer(analyze: Callable[[FileEntry, ScanContext], Any]) -> None:
    """The function that reads a file's page map into an entry (scan.py's analyze_file)."""
    global _analyze
    _analyze = analyze


def _rebuild(entry: FileEntry) -> dict[str, Any]:
    if _analyze is None:
        raise DetailUnavailable(f"{entry.path}: the InnoDB reader is not loaded")
    scratch = replace(entry, errors=[], warnings=[], sections={}, detail={}, units=None, unit_facts=None,
                      kind_names={}, owner_names={}, facts=None)
    try:
        _analyze(scratch, ScanContext(keep_units=True))
    except (PageMapError, FileReadError, OSError) as e:
        raise DetailUnavailable(f"{entry.path}: cannot be read again: {e}") from None
    det = scratch.detail.get("innodb")
    n = len(entry.units) if entry.units is not None else None
    if det is None or (n is not None and det["page_map"].n_pages != n):
        raise DetailUnavailable(f"{entry.path}: read again, it no longer matches the scan; scan again")
    return det


def _remember(key: tuple, det: dict[str, Any]) -> None:
    global _cache_bytes
    cost = detail_cost(det["page_map"].n_pages)
    _cache[key] = (det, cost)
    _cache_bytes += cost
    while len(_cache) > 1 and _cache_bytes > REREAD_CACHE_BYTES:
        _, (_, c) = _cache.popitem(last=False)
        _cache_bytes -= c


def clear_cache() -> None:
    """Forget every rebuilt page map."""
    global _cache_bytes
    _cache.clear()
    _cache_bytes = 0

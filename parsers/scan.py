"""One scan: detect files under a path, read their on-disk facts, let each
engine parser read what it owns.

Engine parsers plug in through the registry (parsers/engines.py): each
engine's ``analyze(dataset, files, ctx)`` fills the given :class:`FileEntry`
objects (units, sections, errors) and may add tables and top-level sections to
the dataset.  A parser failure is caught here and recorded against the files;
it never ends the scan.
"""
from __future__ import annotations

import os
import sys
from dataclasses import replace
from typing import Any

from . import mapguard
from . import engines
from .detect import Detected, detect
from .engine import Engine
from .model import Cancelled, Dataset, FileEntry, ScanContext
from .packing import settle
from .ranges import Ranges
from .filefacts import openable, read_facts, read_pending_facts, stat_facts

def _unique(messages: list[str]) -> list[str]:
    """Messages in their order, each once (the file layer and an engine may both
    report that a file cannot be opened)."""
    return list(dict.fromkeys(messages))


def recheck(ds: Dataset) -> None:
    """Warn about files that changed between their facts and the end of the scan
    (an engine may have read a different file than the one measured)."""
    for entry in ds.files:
        shrunk = mapguard.shrink_events(entry.abspath)
        if shrunk:
            mapguard.clear_events(entry.abspath)
            off, now = min(shrunk)
            msg = (f"{entry.path}: shrank to {now} bytes while it was read; bytes from offset {off} on "
                   f"read as zeros, so figures past that offset are not real")
            if msg not in entry.warnings:
                entry.warnings.append(msg)
        before = entry.seen
        if before is None:
            continue
        try:
            st = os.stat(entry.abspath)
        except OSError as e:
            entry.warnings.append(f"{entry.path}: disappeared during the scan ({e.strerror})")
            continue
        if st.st_size != before[0]:
            msg = f"{entry.path}: size changed during the scan ({before[0]} -> {st.st_size} bytes)"
        elif st.st_mtime_ns != before[1]:
            msg = f"{entry.path}: modified during the scan"
        else:
            continue
        if msg not in entry.warnings:
            entry.warnings.append(msg)


class _SharedEmpty(list):
    """An empty list of a file's messages (errors, warnings) after a big scan: one shared,
    read-only empty list (equal to ``[]``, as a saved scan reads it back)."""

    def _refuse(self, *args, **kwargs):
        raise TypeError("a file's empty list is shared after a big scan: assign a list of your own")

    append = extend = insert = remove = pop = clear = sort = reverse = _refuse
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse


#: the holes (and unwritten extents) of a file that has none, after a big scan: one empty
#: read-only Ranges, as the file layer lists them
NO_RANGES = Ranges()
#: the errors (and warnings) of a file that has none, after a big scan
NO_MESSAGES = _SharedEmpty()


def share_equal_facts(files: list[FileEntry]) -> None:
    """Once a big scan has ended: files whose filesystem facts are equal share one object
    (the small tables of a data dir mostly have the same sizes), the files of one
    database one database name, and files without holes, errors or warnings one empty list.
    Nothing changes either after the scan."""
    shared: dict[tuple, Any] = {}
    for entry in files:
        if not entry.holes:
            entry.holes = NO_RANGES
        if not entry.unwritten:
            entry.unwritten = NO_RANGES
        if not entry.errors:
            entry.errors = NO_MESSAGES
        if not entry.warnings:
            entry.warnings = NO_MESSAGES
        fs = entry.fs
        if fs is not None:
            key = tuple(getattr(fs, name) for name in fs.__slots__)
            entry.fs = fs = shared.setdefault(key, fs)
            if entry.fs_block == fs.block_size:
                entry.fs_block = fs.block_size
        if type(entry.database) is str:
            entry.database = sys.intern(entry.database)


def release_free_memory() -> None:
    """Hand the heap memory the scan's temporaries freed back to the system
    (glibc keeps freed large blocks for reuse otherwise: tens of MB after a
    10M-page scan).  A no-op where ``malloc_trim`` does not exist."""
    from .libc import libc
    trim = getattr(libc(), "malloc_trim", None)
    if trim is not None:
        trim(0)


def load_engine(engine: str) -> Engine | None:
    """The registered engine called ``engine``, or None."""
    return engines.get(engine)


def scan(path: str, ctx: ScanContext | None = None, detected: Detected | None = None) -> Dataset:
    """Scan ``path`` (a data dir, a part directory or one file).  ``detected``: what
    ``detect(path)`` found, when the caller has just listed it (the window's listing): the
    scan reads those files (its entries are the dataset's from here on) instead of walking
    ``path`` again."""
    ctx = ctx or ScanContext()
    if not os.path.lexists(path):
        raise FileNotFoundError(f"{path}: no such file or directory")
    found = detected if detected is not None else detect(path)
    ds = Dataset(root=found.root, files=found.files, errors=list(found.errors), engine_order=engines.names())
    only = ctx.engines
    if only is not None:      # the other engines' files are left out (unknown files may be claimed)
        ds.files = [f for f in ds.files if f.engine is None or f.engine in only]
    total = len(ds.files)
    by_name = {e.name: e for e in engines.ENGINES}
    try:
        for i, entry in enumerate(ds.files):
            if i % 64 == 0:
                ctx.check()
                ctx.report(i, total * 2, f"reading {entry.path}")
            owner = by_name.get(entry.engine) if entry.engine else None
            # (not a file stat cannot size, an empty one or one this process may not read: their
            # messages come from here, before the engine's own, as for every other file)
            if owner is not None and owner.reads_facts(entry, ctx) and stat_facts(entry) \
                    and entry.apparent_bytes >= max(1, owner.facts_in_workers_from) and openable(entry.abspath):
                # its engine's workers list its holes (FIEMAP) on every core: here only its sizes
                entry.facts_pending = True
                continue
            read_facts(entry, ctx.fs_block)
        done = total
        for engine in engines.names():
            files = ds.files_of(engine)
            if not files or (only is not None and engine not in only):
                continue
            ctx.check()
            module = load_engine(engine)
            if module is None:
                continue

            def sub_progress(d: int, t: int, msg: str, _base=done, _n=len(files)) -> None:
                frac = d / t if t else 1.0
                ctx.report(_base + int(frac * _n), total * 2, msg)

            sub = replace(ctx, progress=sub_progress)
            try:
                module.analyze(ds, files, sub)
            except Cancelled:
                raise
            except Exception as e:  # a parser bug must not end the scan
                import traceback          # only here: it brings linecache, tokenize, textwrap
                tb = traceback.extract_tb(e.__traceback__)[-1]
                ds.errors.append(f"{engine} parser failed: {type(e).__name__}: {e} "
                                 f"({os.path.basename(tb.filename)}:{tb.lineno})")
            done += len(files)
        for entry in ds.files:
            if entry.facts_pending:        # its engine did not get to it (a parser bug above)
                read_pending_facts(entry, ctx.fs_block)
        recheck(ds)
        for entry in ds.files:
            entry.errors[:] = _unique(entry.errors)
            entry.warnings[:] = _unique(entry.warnings)
        if ctx.pack_sections_over is not None and total > ctx.pack_sections_over:
            share_equal_facts(ds.files)
            if ctx.keep_units:
                # the window's big scan: every file's sections, units and unit facts packed
                # and settled, so that what the tree, the views and a what-if open is let go
                settle(ds.files)
        release_free_memory()
        ctx.report(total * 2, total * 2, "done")
    except Cancelled:
        ds.cancelled = True
        ds.errors.append("scan cancelled")
    return ds


def deferred_engines(ds: Dataset) -> tuple[str, ...]:
    """The engines whose part of ``ds`` a light scan left for later (``Engine.deferred``)."""
    return tuple(e.name for e in engines.ENGINES if ds.files_of(e.name) and e.deferred(ds))


def complete(ds: Dataset, path: str, ctx: ScanContext | None = None) -> Dataset | None:
    """What a light scan of ``path`` (``ds``, ``ScanContext.block_walk`` False) left out, read
    now: the deferred engines scan ``path`` again on their own with everything read, and the
    result is a new Dataset equal to a full scan's, made of ``ds``'s other files and facts and
    the new scan's files of those engines (``ds`` itself is not changed: a window keeps
    showing it meanwhile).  None when nothing was deferred or the scan was cancelled."""
    names = deferred_engines(ds)
    if not names:
        return None
    ctx = replace(ctx or ScanContext(), engines=names, block_walk=True)
    part = scan(path, ctx)
    if part.cancelled:
        return None
    return merge_engines(ds, part, names)


def merge_engines(ds: Dataset, part: Dataset, names: tuple[str, ...]) -> Dataset:
    """``ds`` with the files, tables and dataset-level sections of the engines ``names``
    (and the files they claimed) taken from ``part``, a scan of the same path by those
    engines alone; the other files are ``ds``'s own objects, in ``ds``'s order."""
    new = {f.path: f for f in part.files if f.engine in names}
    files = [new.pop(f.path, f) for f in ds.files]
    files += new.values()                          # appeared since: at the end

    def in_place(old: dict, src: dict) -> dict:
        """``old`` with the engines' keys from ``src``, in ``old``'s order (new keys last)."""
        out = {k: src[k] if k in names else v for k, v in old.items() if k not in names or k in src}
        out.update((k, v) for k, v in src.items() if k in names and k not in out)
        return out

    theirs = {(t.engine, t.database, t.name): t for t in part.tables if t.engine in names}
    tables = [theirs.pop((t.engine, t.database, t.name), t) for t in ds.tables
              if t.engine not in names or (t.engine, t.database, t.name) in theirs]
    out = Dataset(root=ds.root, files=files, engine_order=ds.engine_order, cancelled=ds.cancelled,
                  tables=tables + list(theirs.values()),
                  errors=list(dict.fromkeys(ds.errors + part.errors)),
                  warnings=list(dict.fromkeys(ds.warnings + part.warnings)),
                  sections=in_place(ds.sections, part.sections), facts=in_place(ds.facts, part.facts),
                  detail=in_place(ds.detail, part.detail))
    return out

"""Long jobs off the GUI thread: a QObject worker per job, moved to a QThread,
reporting progress and its result by signals, cancelled by a flag it polls."""
from __future__ import annotations

import threading
import time
import traceback
from typing import Any, Callable

from PySide6.QtCore import QObject, QThread, Signal, Slot

#: bytes of per-file parser objects (InnoDB page maps, ~12 KB for each small tablespace)
#: the window's scan keeps; past it they are read again when a file is inspected or sampled
#: (ScanContext.detail_budget): 20,000 small tablespaces would keep ~240 MB of them
DETAIL_BUDGET = 64 << 20
#: the window's scan of more files than this (of one engine) packs each file's sections,
#: units and unit facts once read, and settles them when the scan ends (parsers/packing.py):
#: 100,000 small tablespaces then hold a few hundred bytes a file instead of several KB
PACK_OVER = 20_000
#: the page-map budget of such a scan (8 MiB: about 600 small tablespaces' maps): a small tablespace's map is read again in a
#: millisecond or two when a view asks, and at 100,000 files every MB counts
DETAIL_BUDGET_PACKED = 8 << 20


class Job(QObject):
    """Runs ``fn(progress, is_cancelled)`` in its own thread.

    Signals: ``progress(done, total, message)``, ``finished(result)``,
    ``failed(message)``, ``cancelled()``; exactly one of the last three fires.
    """

    progress = Signal(int, int, str)
    #: intermediate results a view can draw before the job ends (e.g. page-map chunks)
    partial = Signal(object)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self, fn: Callable[[Callable, Callable], Any], name: str = "job"):
        super().__init__()
        self.fn = fn
        self.name = name
        self._cancel = threading.Event()
        self._thread: QThread | None = None

    def cancel(self) -> None:
        self._cancel.set()

    def is_cancelled(self) -> bool:
        return self._cancel.is_set()

    #: progress signals at most this often: a scan reporting every file posts events faster
    #: than the GUI thread handles them, and its event loop then never gets to timers and input
    PROGRESS_INTERVAL = 0.05

    def _report(self, done, total, message="") -> None:
        now = time.monotonic()
        if now - self._last_report >= self.PROGRESS_INTERVAL or (total and done >= total):
            self._last_report = now
            self.progress.emit(int(done), int(total), str(message))

    @Slot()
    def run(self) -> None:
        from dbxray.parsers.model import Cancelled
        self._last_report = 0.0
        try:
            result = self.fn(self._report, self.is_cancelled)
        except Cancelled:       # the work stopped because the user asked: not an error
            self.cancelled.emit()
        except Exception as e:  # reported in the window, never a crash
            tb = traceback.format_exc(limit=3)
            self.failed.emit(f"{self.name} failed: {type(e).__name__}: {e}\n{tb}")
        else:
            if self.is_cancelled():
                self.cancelled.emit()
            else:
                self.finished.emit(result)
        finally:
            if self._thread is not None:
                self._thread.quit()

    def start(self) -> QThread:
        """Start in a new QThread (kept referenced by this job)."""
        thread = QThread()
        thread.setObjectName(self.name)
        self._thread = thread
        self.moveToThread(thread)
        thread.started.connect(self.run)
        thread.start()
        return thread

    def wait(self, ms: int = 10000) -> bool:
        return self._thread.wait(ms) if self._thread is not None else True


def scan_job(path: str, preview: bool = True, keys=None, listing: bool = True) -> Job:
    """A job scanning ``path`` into a Dataset (or loading a saved scan).

    With ``listing``, the files under ``path`` are listed first (detection and a
    ``stat`` each: names, engine, database, table, apparent and allocated bytes) and
    emitted as ``partial`` batches ``{"kind": "files", "rows": [...]}``, so the tree
    shows every file within a second or two of opening a data dir of tens of
    thousands of tables, long before the scan has read them.
    With ``preview``, the first engine that has a file to preview under ``path``
    (InnoDB: the largest tablespace) reads its unit headers in growing chunks,
    each emitted as ``partial`` (``Engine.preview``), so the map fills in while
    the file is read; the full scan then reads it warm and replaces the preview.
    The result is ``(dataset, tree, has_columns)``: the tree (``parsers.tree.build_tree`` and the
    ClickHouse column rows) is built here, off the GUI thread.
    ``keys`` (a key file's KeyRing) decrypt encrypted pages in memory."""
    def fn(progress, is_cancelled):
        # the parsers (numpy, every engine) are imported here, in the job's thread
        from dbxray.parsers.model import Cancelled, ScanContext
        from dbxray.parsers.parallel import cpu_workers
        from dbxray.parsers.savedscan import is_saved_scan, load_saved_scan
        from dbxray.parsers.scan import scan
        if is_saved_scan(path):
            ds = load_saved_scan(path)
        else:
            found = list_files(path, job.partial.emit, is_cancelled) if listing else None
            listed = len(found.files) if found is not None else 0
            if preview:
                _preview(path, job.partial.emit, is_cancelled)
            budget = DETAIL_BUDGET_PACKED if listed > PACK_OVER else DETAIL_BUDGET
            # ClickHouse's blocks are walked after the first paint (complete_job): the window's
            # first scan reads what the engine's system tables report
            # every core: a data dir of thousands of tablespaces is read in a fork server's
            # workers (this process runs Qt's threads and must not fork: parsers/parallel.py)
            # the files listed are the files scanned (not walked a second time)
            ds = scan(path, ScanContext(progress=progress, is_cancelled=is_cancelled, keys=keys,
                                        detail_budget=budget, pack_sections_over=PACK_OVER, block_walk=False,
                                        workers=cpu_workers()), detected=found)
        if ds.cancelled:
            raise Cancelled()
        return ds, *dataset_tree(ds)

    job = Job(fn, name=f"scan {path}")
    return job


def complete_job(ds, path: str, keys=None) -> Job:
    """A job reading what the window's first scan of ``path`` left for later (the engines
    whose ``deferred`` is true: ClickHouse's block walk), into a new dataset equal to a full
    scan's (``parsers.scan.complete``); ``ds`` is not changed meanwhile.  The result is
    ``(dataset, tree, has_columns)`` as a scan job's, or None when nothing was left."""
    def fn(progress, is_cancelled):
        from dbxray.parsers.model import Cancelled, ScanContext
        from dbxray.parsers.scan import complete
        listed = len(ds.files)
        budget = DETAIL_BUDGET_PACKED if listed > PACK_OVER else DETAIL_BUDGET
        done = complete(ds, path, ScanContext(progress=progress, is_cancelled=is_cancelled, keys=keys,
                                              detail_budget=budget, pack_sections_over=PACK_OVER))
        if is_cancelled():
            raise Cancelled()
        return None if done is None else (done, *dataset_tree(done))

    return Job(fn, name=f"read blocks of {path}")


def dataset_tree(ds):
    """The window's tree of a dataset and whether it has ClickHouse column rows."""
    from dbxray.app.treemodel import add_clickhouse_columns
    from dbxray.parsers.tree import build_tree
    root = build_tree(ds)
    return root, add_clickhouse_columns(root, ds) > 0


#: the first listing batch is emitted after this many files or seconds (the first paint),
#: the next ones every LIST_BATCH_SECONDS (each makes the view lay the tree out again)
LIST_FIRST_FILES = 500
LIST_FIRST_SECONDS = 0.05
LIST_BATCH_SECONDS = 0.3


def list_files(path: str, emit, is_cancelled):
    """The files under ``path`` as tree rows, in batches: ``emit({"kind": "files",
    "rows": [(engine label, database, table, part, name, path, apparent, allocated)],
    "listed": n, "total": N})``, then ``{"kind": "files_end", "total": N}``.  Sizes are
    ``stat``'s (st_size, st_blocks x 512: what the scan reports for them too); a file
    that cannot be stat'ed is listed with zeros (the scan names its error).  Returns
    what ``detect(path)`` found (``parsers.detect.Detected``: the scan reads those files)."""
    import os
    import posixpath
    import time

    from dbxray.parsers import engines
    from dbxray.parsers.detect import detect
    from dbxray.parsers.model import Cancelled
    from dbxray.parsers.tree import place

    found = detect(path)
    total = len(found.files)
    rows: list[tuple] = []
    last = time.monotonic()
    first = True
    for i, entry in enumerate(found.files):
        if i % 256 == 0 and is_cancelled():
            raise Cancelled()
        try:
            st = os.stat(entry.abspath)
            apparent, allocated = st.st_size, st.st_blocks * 512
        except OSError:
            apparent = allocated = 0
        db, table, part = place(entry)
        name = posixpath.basename(entry.path) if (table or part) else entry.path
        rows.append((engines.label(entry.engine), db, table, part, name, entry.path, apparent, allocated))
        now = time.monotonic()
        if (len(rows) >= LIST_FIRST_FILES or now - last >= LIST_FIRST_SECONDS) if first \
                else now - last >= LIST_BATCH_SECONDS:
            emit({"kind": "files", "root": found.root, "rows": rows, "listed": i + 1, "total": total})
            rows, last, first = [], now, False
    emit({"kind": "files", "root": found.root, "rows": rows, "listed": total, "total": total})
    emit({"kind": "files_end", "total": total, "errors": list(found.errors)})
    return found


def _preview(path: str, emit, is_cancelled) -> None:
    """The first engine with a file to preview under ``path`` reads its unit headers.
    The preview is a first paint only: a file it cannot read (unreadable, damaged) ends
    the preview, and the scan proper lists that file's error and goes on with the rest."""
    from dbxray.parsers import engines
    from dbxray.parsers.fileio import FileReadError
    for engine in engines.ENGINES:
        try:
            target = engine.preview_target(path)
            if target is None:
                continue
            engine.preview(target, emit, is_cancelled, root=path)
        except (OSError, ValueError, FileReadError) as e:
            emit({"kind": "end", "error": f"{type(e).__name__}: {e}"})
        break

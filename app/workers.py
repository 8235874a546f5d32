"""Long jobs off the GUI thread: a QObject worker per job, moved to a QThread,
reporting progress and its result by signals, cancelled by a flag it polls."""
from __future__ import annotations

import threading
import traceback
from typing import Any, Callable

from PySide6.QtCore import QObject, QThread, Signal, Slot

from dbxray.parsers import engines
from dbxray.parsers.model import Cancelled


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

    @Slot()
    def run(self) -> None:
        try:
            result = self.fn(lambda d, t, m="": self.progress.emit(int(d), int(t), str(m)), self.is_cancelled)
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


def scan_job(path: str, preview: bool = True, keys=None) -> Job:
    """A job scanning ``path`` into a Dataset (or loading a saved scan).

    With ``preview``, the first engine that has a file to preview under ``path``
    (InnoDB: the largest tablespace) reads its unit headers in growing chunks,
    each emitted as ``partial`` (``Engine.preview``), so the map fills in while
    the file is read; the full scan then reads it warm and replaces the preview.
    ``keys`` (a key file's KeyRing) decrypt encrypted pages in memory."""
    from dbxray.parsers.model import ScanContext
    from dbxray.parsers.scan import scan

    def fn(progress, is_cancelled):
        from dbxray.parsers.savedscan import is_saved_scan, load_saved_scan
        if is_saved_scan(path):
            return load_saved_scan(path)
        if preview:
            _preview(path, job.partial.emit, is_cancelled)
        return scan(path, ScanContext(progress=progress, is_cancelled=is_cancelled, keys=keys))

    job = Job(fn, name=f"scan {path}")
    return job


def _preview(path: str, emit, is_cancelled) -> None:
    """The first engine with a file to preview under ``path`` reads its unit headers.
    The preview is a first paint only: a file it cannot read (unreadable, damaged) ends
    the preview, and the scan proper lists that file's error and goes on with the rest."""
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

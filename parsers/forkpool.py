"""The scan's worker processes: forked children fed tasks through pipes, each task's
result sent back pickled (``parsers/parallel.py`` ``each_file``).

What ``multiprocessing.Pool`` did for the scan, without what it costs a command's
start: its imports (socket, tempfile, subprocess, shutil, random: ~20 ms) and its
three threads.  The protocol is a frame per message, an 8-byte little-endian length
and a pickle; the parent keeps :data:`IN_FLIGHT` tasks queued at each worker, so a
worker starts its next task without waiting for the parent.

A task's function runs in the child as it would in the parent; an exception it raises
goes back pickled and is raised in the parent (its type kept where it pickles).  A
child that dies (killed, out of memory) is an error in the parent naming it.
:meth:`ForkPool.terminate` ends the children at once (Cancel, an exception), and a
child ignores SIGINT (the parent's Ctrl-C ends it)."""
from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import sys
from typing import Any, Callable, Iterable, Iterator

#: tasks sent ahead to each worker (one running, the next waiting in its pipe)
IN_FLIGHT = 2
#: no task is sent ahead once this many per worker are left: the last ones go to whichever
#: worker is idle first, never queued behind another worker's running task (which could
#: leave the other workers idle at the end while one still has two tasks to run)
TAIL_PER_WORKER = 2
_LEN = struct.Struct("<Q")


class WorkerDied(RuntimeError):
    """A worker process ended without sending its task's result."""


def _write_frame(fd: int, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_LEN.pack(len(data)) + data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _read_exact(fd: int, n: int) -> bytes | None:
    """``n`` bytes from ``fd``, or None at end of file before the first byte."""
    parts: list[bytes] = []
    got = 0
    while got < n:
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            if got == 0:
                return None
            raise EOFError(f"pipe closed after {got} of {n} bytes")
        parts.append(chunk)
        got += len(chunk)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _read_frame(fd: int) -> tuple[bool, Any]:
    """(True, the object) or (False, None) at end of file."""
    head = _read_exact(fd, _LEN.size)
    if head is None:
        return False, None
    (n,) = _LEN.unpack(head)
    body = _read_exact(fd, n)
    if body is None:
        raise EOFError("pipe closed inside a frame")
    return True, pickle.loads(body)


def _flush_std_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (AttributeError, ValueError, OSError):
            pass


def _child(run: Callable[[Any], Any], task_r: int, result_w: int) -> None:
    """A worker's loop: a task in, ``run(task)``'s result (or its exception) out, until the
    parent sends None or closes the pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            ok, task = _read_frame(task_r)
        except EOFError:
            return
        if not ok or task is None:
            return
        try:
            reply: tuple = (True, run(task))
        except BaseException as e:      # noqa: BLE001  (sent to the parent, which raises it)
            try:
                pickle.dumps(e)
                reply = (False, e)
            except Exception:
                reply = (False, RuntimeError(f"{type(e).__name__}: {e}"))
        _write_frame(result_w, reply)


def _send_ahead(queued: int, left: int, workers: int) -> bool:
    """Whether a worker with ``queued`` tasks sent (running or waiting) gets another of the
    ``left`` ones: always when it has none; ahead of time (hiding the parent's turn between
    a result and the next task) only while more than :data:`TAIL_PER_WORKER` per worker are left."""
    return queued == 0 or left > TAIL_PER_WORKER * workers


class ForkPool:
    """``workers`` forked children running ``run`` on the tasks :meth:`imap_unordered` gets.
    Fork it where forking is safe (one thread, no Qt: ``parallel.fork_safe``)."""

    def __init__(self, workers: int, run: Callable[[Any], Any]) -> None:
        self._procs: list[tuple[int, int, int]] = []       # (pid, task_w, result_r)
        try:
            for _ in range(max(1, workers)):
                self._procs.append(self._fork(run))
        except BaseException:
            self.terminate()
            raise

    def _fork(self, run: Callable[[Any], Any]) -> tuple[int, int, int]:
        _flush_std_streams()                             # else the child writes the parent's buffer again
        task_r, task_w = os.pipe()
        result_r, result_w = os.pipe()
        pid = os.fork()
        if pid == 0:                                     # the child
            code = 0
            try:
                os.close(task_w)
                os.close(result_r)
                for _pid, tw, rr in self._procs:         # the earlier children's pipes
                    os.close(tw)
                    os.close(rr)
                _child(run, task_r, result_w)
            except BaseException:                        # noqa: BLE001
                code = 1
            finally:
                _flush_std_streams()                     # what the child itself printed
                os._exit(code)                           # no atexit handlers of the parent
        os.close(task_r)
        os.close(result_w)
        return pid, task_w, result_r

    def imap_unordered(self, tasks: Iterable[Any]) -> Iterator[Any]:
        """Every task's result, in the order they finish; a task's exception raised here."""
        todo = list(tasks)
        todo.reverse()                                   # pop() takes them in order
        busy = {rr: 0 for _pid, _tw, rr in self._procs}
        by_fd = {rr: (pid, tw) for pid, tw, rr in self._procs}

        def died(rr: int) -> WorkerDied:
            pid = by_fd[rr][0]
            return WorkerDied(f"scan worker {pid} ended before sending its result{self._exit_note(pid)}")

        def feed(rr: int) -> None:
            while todo and busy[rr] < IN_FLIGHT and _send_ahead(busy[rr], len(todo), len(busy)):
                try:
                    _write_frame(by_fd[rr][1], todo.pop())
                except BrokenPipeError:
                    raise died(rr) from None
                busy[rr] += 1
            if not busy[rr]:
                poller.unregister(rr)                    # idle for good: its end of file is no news

        # poll, not select: the scan may hold more than 1,024 files open (parsers/fileio.py)
        poller = select.poll()
        for rr in busy:
            poller.register(rr, select.POLLIN)
            feed(rr)
        while any(busy.values()):
            for rr, _event in poller.poll():
                ok, reply = _read_frame(rr)
                if not ok:
                    raise died(rr)
                busy[rr] -= 1
                feed(rr)
                good, value = reply
                if not good:
                    raise value
                yield value

    @staticmethod
    def _exit_note(pid: int) -> str:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return ""
        if not done:
            return ""
        if os.WIFSIGNALED(status):
            return f" (killed by signal {os.WTERMSIG(status)})"
        return f" (exit status {os.WEXITSTATUS(status)})"

    def close(self) -> None:
        """Tell the children to stop and wait for them."""
        for _pid, tw, _rr in self._procs:
            try:
                _write_frame(tw, None)
            except OSError:
                pass
        self._reap(kill=False)

    def terminate(self) -> None:
        """End the children now and wait for them."""
        self._reap(kill=True)

    def _reap(self, kill: bool) -> None:
        procs, self._procs = self._procs, []
        for pid, tw, rr in procs:
            if kill:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            for fd in (tw, rr):
                try:
                    os.close(fd)
                except OSError:
                    pass
        for pid, _tw, _rr in procs:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass

    def __enter__(self) -> "ForkPool":
        return self

    def __exit__(self, *exc) -> None:
        if exc[0] is None:
            self.close()
        else:
            self.terminate()

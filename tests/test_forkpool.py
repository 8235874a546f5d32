"""parsers/forkpool.py: the scan's forked workers (every result once, a task's exception
raised in the parent with its type, a dead worker named, children reaped, nothing printed twice)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from dbxray.parsers.forkpool import ForkPool, WorkerDied


def _square(task):
    return task, task * task, os.getpid()


def _children_left() -> list[int]:
    out = []
    try:
        while True:
            pid, _ = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            out.append(pid)
    except ChildProcessError:
        pass
    return out


@pytest.mark.parametrize("workers,n", [(1, 5), (2, 40), (3, 2), (4, 0)])
def test_every_result_once_from_every_worker(workers, n):
    pool = ForkPool(workers, _square)
    got = list(pool.imap_unordered(range(n)))
    pool.close()
    assert sorted((t, sq) for t, sq, _pid in got) == [(t, t * t) for t in range(n)]
    assert all(pid != os.getpid() for _t, _sq, pid in got)
    if n >= 20 and workers > 1:
        assert len({pid for *_, pid in got}) > 1          # the work was shared
    assert _children_left() == []                          # close() reaped them all


def test_a_big_result_crosses_the_pipe():
    pool = ForkPool(2, lambda t: bytes([t]) * (3 << 20))    # more than a pipe holds
    got = sorted(pool.imap_unordered([1, 2, 3]))
    pool.close()
    assert got == [bytes([t]) * (3 << 20) for t in (1, 2, 3)]


class _Refused(ValueError):
    pass


def _fails_on_3(task):
    if task == 3:
        raise _Refused(f"task {task} refused")
    return task


def test_a_tasks_exception_is_raised_with_its_type():
    pool = ForkPool(2, _fails_on_3)
    with pytest.raises(_Refused, match="task 3 refused"):
        list(pool.imap_unordered(range(6)))
    pool.terminate()
    assert _children_left() == []


def _dies_on_2(task):
    if task == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return task


def test_a_dead_worker_is_an_error_naming_it():
    pool = ForkPool(1, _dies_on_2)
    with pytest.raises(WorkerDied, match=r"scan worker \d+ ended before sending its result"):
        list(pool.imap_unordered(range(4)))
    pool.terminate()
    assert _children_left() == []


def test_terminate_ends_busy_workers_at_once():
    import time
    pool = ForkPool(2, lambda t: time.sleep(30))
    it = pool.imap_unordered([1, 2])
    t = time.monotonic()
    pool.terminate()
    assert time.monotonic() - t < 5
    del it
    assert _children_left() == []


def test_nothing_the_parent_printed_is_printed_again():
    """Buffered output of the parent is flushed before forking: a child that exits does not
    write it a second time."""
    code = textwrap.dedent("""
        import sys
        from dbxray.parsers.forkpool import ForkPool
        sys.stdout.write("parent line\\n")          # buffered: stdout is a pipe
        pool = ForkPool(2, lambda t: sys.stdout.write(f"child {t}\\n") and t)   # buffered too
        print(sorted(pool.imap_unordered([1, 2, 3])))
        pool.close()
    """)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True,
                         env=env).stdout
    lines = out.splitlines()
    assert lines.count("parent line") == 1
    assert sorted(l for l in lines if l.startswith("child")) == ["child 1", "child 2", "child 3"]
    assert lines[-1] == "[1, 2, 3]"



def test_each_file_cancelled_mid_pool_ends_its_workers():
    """Cancel between two results of parallel.each_file's pool: Cancelled is raised in the
    caller, no worker is left running, and what came back before stays applied."""
    import time

    from dbxray.parsers import parallel
    from dbxray.parsers.model import Cancelled, FileEntry, ScanContext

    entries = [FileEntry(path=f"f{i}", abspath=f"/nonexistent/f{i}", apparent_bytes=1, allocated_bytes=1)
               for i in range(12)]

    def slow(entry):
        entry.errors.append(f"{entry.path}: read")
        if entry.path != "f0":
            time.sleep(0.5)

    seen = []
    ctx = ScanContext(workers=2, is_cancelled=lambda: bool(seen))
    t = time.monotonic()
    with pytest.raises(Cancelled):
        for i, entry in parallel.each_file(entries, slow, ctx):
            seen.append(i)
    assert seen == [0] and entries[0].errors == ["f0: read"]
    assert time.monotonic() - t < 5          # not 12 x 0.5 s: the workers were ended
    assert _children_left() == []


def test_no_task_is_queued_behind_another_near_the_end():
    from dbxray.parsers.forkpool import TAIL_PER_WORKER, _send_ahead
    workers = 2
    tail = TAIL_PER_WORKER * workers
    assert _send_ahead(0, 1, workers) and _send_ahead(0, tail, workers)      # an idle worker: always
    assert _send_ahead(1, tail + 1, workers)                                 # many left: one ahead
    assert not _send_ahead(1, tail, workers) and not _send_ahead(1, 1, workers)


def _pid_after(task):
    import time
    time.sleep(task)
    return os.getpid()


def test_the_last_tasks_go_to_the_idle_worker():
    # worker A: a long task; worker B: short ones. With tasks sent ahead to the end, the
    # last short task could wait behind A's long one; it must run on B, which is idle
    # first (every task still runs once: the pool's results are the tasks' own)
    pool = ForkPool(2, _pid_after)
    got = list(pool.imap_unordered([0.6, 0.0, 0.0, 0.0]))
    pool.close()
    assert len(got) == 4
    long_pid = got[-1]                  # the long task ends last
    assert got[:-1].count(long_pid) == 0, got

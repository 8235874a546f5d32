"""The end of a finished headless command without the interpreter's teardown.

When ``dbxray scan`` has written its output, CPython's own exit (``Py_FinalizeEx``) still
clears every module, runs the cyclic collector over the ~22,000 objects numpy and the
parsers' imports made and frees the heap object by object: 50-60 ms of a 0.3 s scan of the
13 plain files of the benchmark set on the 2-core machine (issue 22; measured with a probe
that stamps when ``main`` returns and when the process ends).  Nothing a command leaves is
kept by that work: the outputs are closed by ``with`` blocks, the forked workers are reaped,
and what must run at exit is registered with :mod:`atexit` (the payload readers' handles,
``weakref.finalize`` of temporary directories), which is run here first.  The process then
ends with :func:`os._exit`.  Where that cannot be known to be safe (another non-daemon thread
still running, a standard stream that does not flush, e.g. a closed pipe), nothing is done and
the caller exits the ordinary way, with the ordinary messages.
"""
from __future__ import annotations

import os
import sys


def _other_threads() -> bool:
    """Whether a non-daemon thread besides this one is alive (the interpreter would join it)."""
    threading = sys.modules.get("threading")       # never imported by a plain scan
    if threading is None:
        return False
    me = threading.current_thread()
    return any(t is not me and not t.daemon and t.is_alive() for t in threading.enumerate())


def exit_without_teardown(code: int) -> None:
    """End the process with exit status ``code`` after the :mod:`atexit` functions and a
    flush of stdout and stderr; returns (doing nothing else) when that is not safe."""
    if _other_threads():
        return
    import atexit
    atexit._run_exitfuncs()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):   # a closed pipe or stream: the ordinary exit reports it
        return
    os._exit(code & 0xFF)

"""The C library through ctypes, loaded once per process, for the few calls
Python's ``os`` module does not offer (sigaction with SA_SIGINFO, mmap over a
fixed address, malloc_trim, fallocate punch-hole)."""
from __future__ import annotations

import ctypes
import ctypes.util
import functools


@functools.lru_cache(maxsize=1)
def libc() -> ctypes.CDLL | None:
    """The process's C library (errno kept for ctypes.get_errno), or None."""
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None

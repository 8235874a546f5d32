"""The C library through ctypes, loaded once per process, for the few calls
Python's ``os`` module does not offer (sigaction with SA_SIGINFO, mmap over a
fixed address, malloc_trim, fallocate punch-hole)."""
from __future__ import annotations

import ctypes
import functools


@functools.lru_cache(maxsize=1)
def libc() -> ctypes.CDLL | None:
    """The process's C library (errno kept for ctypes.get_errno), or None: glibc by its
    soname, else the one ``ctypes.util.find_library`` finds (which imports subprocess and
    runs ldconfig: ~35 ms of every command's start when done first)."""
    try:
        return ctypes.CDLL("libc.so.6", use_errno=True)
    except OSError:
        pass
    from ctypes.util import find_library
    try:
        name = find_library("c")
        return ctypes.CDLL(name, use_errno=True) if name else None
    except OSError:
        return None

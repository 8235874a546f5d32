"""Survive files that shrink while they are memory-mapped.

Reading a page of a ``mmap`` that lies past the file's current end raises
SIGBUS, and a SIGBUS kills a Python process: another process truncating a
tablespace while dbxray reads it would end the scan (and the window).  The
JVM has the same problem with ``MappedByteBuffer`` and solves it the same
way: a SIGBUS handler that recognises addresses inside its own maps.

Here, on Linux, a handler installed with ``sigaction(SA_SIGINFO)`` looks the
faulting address up among the maps registered by :class:`parsers.fileio.
ReadOnlyFile`.  When it is one of ours, it maps anonymous zero pages
(``MAP_FIXED``) over the part of the map that lies past the file's new end,
records the event (file, offset, new size) and returns: the faulting read is
restarted and reads zeros.  The scan goes on, and ``parsers.scan.recheck``
turns the record into a warning that names the file and the offset from
which the figures are not real.  A SIGBUS at any other address gets the
previous disposition back (default: the process ends, as before).

Nothing here writes to a file: the zero pages are private anonymous memory.
Elsewhere (not Linux, or ctypes missing) :func:`install` returns False and
reads through maps are unguarded.
"""
from __future__ import annotations

import ctypes
import mmap
import os
import signal
import threading
import weakref
from dataclasses import dataclass, field

from .libc import libc as load_libc

PAGE = mmap.PAGESIZE

# <asm-generic/mman-common.h>, <bits/mman-linux.h>
PROT_READ = 0x1
MAP_PRIVATE = 0x02
MAP_FIXED = 0x10
MAP_ANONYMOUS = 0x20
MAP_FAILED = ctypes.c_void_p(-1).value
# <bits/sigaction.h>
SA_SIGINFO = 0x4
# siginfo_t on Linux (x86_64 and aarch64): int si_signo, si_errno, si_code,
# padding, then the union whose first member for SIGBUS is void *si_addr.
SI_ADDR_OFFSET = 16


@dataclass
class GuardedMap:
    """One registered map: where it lives in memory and what file it shows."""
    path: str
    fd: int
    base: int
    length: int
    #: (file offset of the faulting read, file size when it happened)
    faults: list[tuple[int, int]] = field(default_factory=list)
    patched_from: int | None = None     # offset from which the map now shows zeros
    ref: object = None                  # weak reference to the map; its callback forgets the range


class _Sigaction(ctypes.Structure):
    # struct sigaction in glibc on Linux: handler, sa_mask (1024 bits), sa_flags, sa_restorer
    _fields_ = [("sa_sigaction", ctypes.c_void_p),
                ("sa_mask", ctypes.c_ulong * (1024 // (8 * ctypes.sizeof(ctypes.c_ulong)))),
                ("sa_flags", ctypes.c_int),
                ("sa_restorer", ctypes.c_void_p)]


_HANDLER_T = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)

_lock = threading.Lock()
_maps: dict[int, GuardedMap] = {}          # base address -> map
_events: dict[str, list[tuple[int, int]]] = {}   # path -> faults, kept after the map closes
_state: dict = {"installed": None, "libc": None, "old": None, "handler": None}


def _supported() -> bool:
    # os.uname as platform.system() / machine() read it (the platform module costs ~2 ms of start)
    if os.name != "posix":
        return False
    u = os.uname()
    return u.sysname == "Linux" and u.machine in ("x86_64", "AMD64", "aarch64", "arm64")


def _on_sigbus(signum, info, _ctx) -> None:
    """The SIGBUS handler (runs on the faulting thread, in the middle of a read)."""
    addr = (ctypes.c_void_p.from_address(info + SI_ADDR_OFFSET).value or 0) if info else 0
    hit = None
    for gm in list(_maps.values()):
        if gm.base <= addr < gm.base + gm.length:
            hit = gm
            break
    libc = _state["libc"]
    if hit is None:
        # not ours: give the previous disposition back; the read faults again and gets it
        libc.sigaction(signal.SIGBUS, ctypes.byref(_state["old"]), None)
        return
    off = addr - hit.base
    try:
        now = os.fstat(hit.fd).st_size if hit.fd >= 0 else os.stat(hit.path).st_size
    except OSError:
        now = 0
    hit.faults.append((off, now))
    _events.setdefault(hit.path, []).append((off, now))
    if now > off:
        return        # the file grew back: the read is restarted and succeeds
    start = min(-(-now // PAGE) * PAGE, off - off % PAGE)
    end = -(-hit.length // PAGE) * PAGE
    res = libc.mmap(ctypes.c_void_p(hit.base + start), ctypes.c_size_t(end - start), PROT_READ,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, ctypes.c_long(0))
    if res is None or res == MAP_FAILED:
        libc.sigaction(signal.SIGBUS, ctypes.byref(_state["old"]), None)
        return
    hit.patched_from = start if hit.patched_from is None else min(start, hit.patched_from)


def install() -> bool:
    """Install the handler once per process; True when maps are guarded."""
    if _state["installed"] is not None:
        return _state["installed"]
    with _lock:
        if _state["installed"] is not None:
            return _state["installed"]
        ok = False
        if _supported():
            try:
                libc = load_libc()
                if libc is None:
                    raise OSError("no C library")
                libc.mmap.restype = ctypes.c_void_p
                libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                                      ctypes.c_int, ctypes.c_long]
                libc.sigaction.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
                handler = _HANDLER_T(_on_sigbus)
                act, old = _Sigaction(), _Sigaction()
                act.sa_sigaction = ctypes.cast(handler, ctypes.c_void_p).value
                act.sa_flags = SA_SIGINFO
                if libc.sigaction(signal.SIGBUS, ctypes.byref(act), ctypes.byref(old)) == 0:
                    _state.update(libc=libc, old=old, handler=handler)
                    ok = True
            except (OSError, AttributeError, TypeError):
                ok = False
        _state["installed"] = ok
        return ok


def register(path: str, fd: int, mm: mmap.mmap) -> GuardedMap | None:
    """Guard the map ``mm`` of ``path``; None when guarding is unavailable."""
    if not install():
        return None
    import numpy as np
    view = np.frombuffer(mm, dtype=np.uint8, count=1)
    base = int(view.__array_interface__["data"][0])
    del view                     # an exported buffer would keep mm from closing
    gm = GuardedMap(path=os.path.abspath(path), fd=fd, base=base, length=len(mm))
    with _lock:
        _maps[base] = gm
    # forget the range only once the map is really gone (numpy views may outlive close())
    gm.ref = weakref.ref(mm, lambda _r, base=base, gm=gm: _forget(base, gm))
    return gm


def blank(mm: mmap.mmap, ranges: list[tuple[int, int]]) -> int:
    """Map anonymous zero pages over every whole memory page of ``mm`` that lies
    inside one of the file ``ranges`` (offset, length): reads there see zeros and
    never fault the file in.  Over a hole of a tmpfs file a read fault would
    allocate the page (shmem fills holes on fault), over any hole it would put a
    page of zeros in the page cache.  Returns the bytes blanked; 0 when blanking
    is unavailable (then reads go to the file)."""
    if not install() or not ranges:
        return 0
    import numpy as np
    view = np.frombuffer(mm, dtype=np.uint8, count=1)
    base = int(view.__array_interface__["data"][0])
    del view
    libc, done = _state["libc"], 0
    for off, ln in ranges:
        a = -(-off // PAGE) * PAGE
        b = min((off + ln) // PAGE * PAGE, -(-len(mm) // PAGE) * PAGE)
        if b <= a:
            continue
        res = libc.mmap(ctypes.c_void_p(base + a), ctypes.c_size_t(b - a), PROT_READ,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, ctypes.c_long(0))
        if res is None or res == MAP_FAILED:
            return 0
        done += b - a
    return done


def _forget(base: int, gm: GuardedMap) -> None:
    with _lock:
        if _maps.get(base) is gm:
            del _maps[base]


def release_fd(gm: GuardedMap | None) -> None:
    """The file's descriptor is closing: look the size up by path from now on."""
    if gm is not None:
        gm.fd = -1


def shrink_events(path: str) -> list[tuple[int, int]]:
    """(offset read, file size then) for every read of ``path`` past its end."""
    return list(_events.get(os.path.abspath(path), ()))


def add_events(path: str, events: list[tuple[int, int]]) -> None:
    """Record reads past the end that another process made of ``path`` (a scan's
    worker process, parsers/parallel.py), as if made here."""
    if events:
        _events.setdefault(os.path.abspath(path), []).extend(events)


def take_events() -> dict[str, list[tuple[int, int]]]:
    """Every file's reads past its end recorded so far, forgotten here (a worker
    process hands them to the scan's process: parsers/parallel.py)."""
    out = dict(_events)
    _events.clear()
    return out


def clear_events(path: str) -> None:
    _events.pop(os.path.abspath(path), None)

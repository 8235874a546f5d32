"""Decoded bytes of ARCHIVE units for the compressor layer (what-if sampling).

A span of deflate data cannot be inflated on its own (deflate blocks are not
byte aligned and refer back 32 KiB), so a span's bytes come from inflating
the data region from its start (stream.py :class:`Inflater`).  The inflater
is kept on the entry after each call: the sampler asks in ascending order
within a round, so a round costs one pass over the file.  The sampler's
threads may ask at once: the kept inflaters are taken and given back under a
lock, each used by one thread (a thread that finds none at or before its span
starts a new one)."""
from __future__ import annotations

import threading

from ..codecs.general import DecodeError
from ..fileio import ReadOnlyFile
from ..model import FileEntry
from .scan import KIND_HEADER
from .stream import Inflater

_CURSORS = "archive_inflaters"
_LOCK = threading.Lock()
#: inflaters kept per file (one per sampling thread is enough)
MAX_CURSORS = 4


class PayloadError(DecodeError):
    """A unit's bytes could not be produced; the message names file and offset."""


def unit_payload(entry: FileEntry, i: int, max_output: int) -> bytes:
    """Unit ``i``'s bytes: the header unit as stored, a data span inflated."""
    if entry.units is None or not 0 <= i < len(entry.units):
        raise PayloadError(f"{entry.path}: no unit {i}")
    u = entry.units[i]
    off, stored, logical = int(u["offset"]), int(u["stored"]), int(u["logical"])
    where = f"{entry.path} @ offset {off}"
    if logical > max_output:
        raise PayloadError(f"{where}: unit of {logical} bytes is over the cap of {max_output}")
    h = entry.detail.get("azio_header")
    with ReadOnlyFile(entry.abspath) as f:
        if int(u["kind"]) == KIND_HEADER:
            return f.pread(off, stored)
        if h is None:
            raise PayloadError(f"{where}: the header was not read")
        span = i - 1                              # units[0] is the header
        with _LOCK:
            kept = entry.detail.setdefault(_CURSORS, [])
            usable = [c for c in kept if c.unit <= span]
            inf = max(usable, key=lambda c: c.unit) if usable else None
            if inf is not None:
                kept.remove(inf)
        if inf is None:
            inf = Inflater(h, f.size, count_rows=False)
        while inf.unit < span and not inf.done:
            inf.step(f)
        if inf.unit != span or inf.done:
            raise PayloadError(f"{where}: the stream ends before this span")
        data = inf.step(f, collect=True)
        if inf.walk.error is not None:
            raise PayloadError(f"{entry.path} @ offset {inf.walk.error.offset}: {inf.walk.error}")
        with _LOCK:
            kept = entry.detail.setdefault(_CURSORS, [])
            kept.append(inf)
            if len(kept) > MAX_CURSORS:
                kept.remove(min(kept, key=lambda c: c.unit))
    if len(data) != logical:
        raise PayloadError(f"{where}: inflated {len(data)} bytes, the scan found {logical}")
    return data

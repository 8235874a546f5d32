"""Integer encodings of PerconaFT's on-disk structures.

Source: PerconaFT ``ft/serialize/wbuf.h`` / ``rbuf.h``.  32-bit integers are
little-endian (``wbuf_int``), except a few header fields written in network order
(``wbuf_network_int``).  64-bit integers written with ``wbuf_ulonglong`` are two
little-endian 32-bit words, **high word first** (offset 0x006A3000 is stored as
``00 00 00 00 00 30 6a 00``).  Signed -1 / -2 are all-ones words.
"""
from __future__ import annotations

import struct

_U32 = struct.Struct("<I")
_U32BE = struct.Struct(">I")
_HILO = struct.Struct("<II")


class FormatError(Exception):
    """A structure could not be read; carries the file offset where it went wrong."""

    def __init__(self, message: str, offset: int | None = None):
        self.offset = offset
        super().__init__(message)


def u32(buf, off: int) -> int:
    """Little-endian u32 (``rbuf_int``)."""
    return _U32.unpack_from(buf, off)[0]


def u32be(buf, off: int) -> int:
    """Big-endian u32 (``rbuf_network_int``)."""
    return _U32BE.unpack_from(buf, off)[0]


def u64(buf, off: int) -> int:
    """Unsigned 64-bit as two LE 32-bit words, high first (``rbuf_ulonglong``)."""
    hi, lo = _HILO.unpack_from(buf, off)
    return (hi << 32) | lo


def s64(buf, off: int) -> int:
    """Signed 64-bit in the hi/lo layout (block offsets: -1 free, -2 unused)."""
    v = u64(buf, off)
    return v - (1 << 64) if v >= (1 << 63) else v

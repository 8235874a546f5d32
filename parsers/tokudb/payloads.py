"""Decompressed payloads of TokuDB units (node partitions) for the compressor
layer, which re-encodes them to project sizes under other codecs.

A unit (see ``scan.py``) is one partition sub-block: u32 compressed size C,
u32 uncompressed size U, C payload bytes starting with the method byte,
u32 x1764.  ``unit_payload`` re-reads that sub-block from the file (read-only)
and decodes it with the codec its method byte names.
"""
from __future__ import annotations

import struct

from ..codecs.general import DEFAULT_MAX_OUTPUT, DecodeError
from ..fileio import ReadOnlyFile
from ..model import FileEntry
from .methods import decompress
from .node import SUB_BLOCK_OVERHEAD
from .x1764 import x1764


class PayloadError(DecodeError):
    """A unit's payload could not be produced; the message names file and offset."""


def unit_payload(entry: FileEntry, i: int, max_output: int = DEFAULT_MAX_OUTPUT,
                 verify: bool = True) -> bytes:
    """Unit ``i``'s decompressed bytes (a basement node or message buffer, as the
    engine compresses it: partition-type byte, contents, inner x1764).

    Raises PayloadError (a DecodeError) naming the file and offset when the
    sub-block's header disagrees with the unit, its checksum fails (verify),
    it decodes wrongly, or it would exceed ``max_output``.
    """
    if entry.units is None or not 0 <= i < len(entry.units):
        raise PayloadError(f"{entry.path}: no unit {i}")
    u = entry.units[i]
    off, stored, logical = int(u["offset"]), int(u["stored"]), int(u["logical"])
    where = f"{entry.path} @ offset {off}"
    if logical > max_output:
        raise PayloadError(f"{where}: unit of {logical} bytes is over the cap of {max_output}")
    with ReadOnlyFile(entry.abspath) as f:
        raw = f.pread(off, stored)
    if len(raw) != stored or stored < SUB_BLOCK_OVERHEAD + 1:
        raise PayloadError(f"{where}: sub-block truncated ({len(raw)} of {stored} bytes)")
    c, n = struct.unpack_from("<II", raw, 0)
    if c + SUB_BLOCK_OVERHEAD != stored or n != logical:
        raise PayloadError(f"{where}: sub-block header ({c}, {n}) does not match the unit")
    if verify and x1764(raw[:8 + c]) != int.from_bytes(raw[8 + c:12 + c], "little"):
        raise PayloadError(f"{where}: sub-block checksum mismatch")
    try:
        return decompress(raw[8:8 + c], n, max_output)
    except DecodeError as e:
        raise PayloadError(f"{where}: {e}") from None

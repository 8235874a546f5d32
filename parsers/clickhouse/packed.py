"""Packed archives of a part: ``skp_idx.packed`` and ``statistics.packed``
(src/IO/PackedFilesWriter.cpp / PackedFilesReader; fixtures/clickhouse/FORMAT_NOTES.md section 7).

Layout: UInt8 version, UInt64 count, then per entry varint name length +
name, UInt64 offset, UInt64 size and, with version 1, UInt64 uncompressed
size (0 for marks entries); the payloads follow back to back.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from .varint import VarintError, read_string_binary

MAX_ENTRIES = 100_000


class PackedError(Exception):
    def __init__(self, message: str, offset: int | None = None):
        self.offset = offset
        super().__init__(message)


@dataclass(frozen=True)
class PackedEntry:
    """One file inside a packed archive."""

    name: str
    offset: int
    size: int
    uncompressed_size: int | None


def read_packed_directory(buf: bytes, offset: int = 0) -> tuple[int, list[PackedEntry]]:
    """Reads the directory of a packed archive: (version, entries)."""
    if len(buf) < offset + 9:
        raise PackedError("too short for a packed archive header", offset)
    version = buf[offset]
    if version > 1:
        raise PackedError(f"unknown packed archive version {version}", offset)
    (count,) = struct.unpack_from("<Q", buf, offset + 1)
    if count > MAX_ENTRIES or count > len(buf):
        raise PackedError(f"claims {count} entries in {len(buf)} bytes", offset + 1)
    pos = offset + 9
    entries = []
    for _ in range(count):
        try:
            raw, pos = read_string_binary(buf, pos, max_len=4096)
        except VarintError as e:
            raise PackedError(str(e), e.offset) from None
        need = 24 if version == 1 else 16
        if pos + need > len(buf):
            raise PackedError("entry truncated", pos)
        off, size = struct.unpack_from("<QQ", buf, pos)
        usize = struct.unpack_from("<Q", buf, pos + 16)[0] if version == 1 else None
        pos += need
        if off + size > len(buf):
            raise PackedError(f"entry {raw.decode('utf-8', 'replace')} runs past the archive end", pos - need)
        entries.append(PackedEntry(raw.decode("utf-8", "replace"), off, size, usize))
    return version, entries

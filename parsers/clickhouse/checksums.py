"""``checksums.txt`` of a part: the list of its files with sizes and hashes.

Layout (src/Storages/MergeTree/MergeTreeDataPartChecksum.cpp,
``MergeTreeDataPartChecksums::read``): a text line
``checksums format version: N\\n`` then

* version 2: text, ``<count> files:\\n`` then per file the name and tab
  indented ``size:``, ``hash:``, ``compressed:`` lines (readV2);
* version 3: binary (readV3): varint count, then per file varint name length
  + name, varint size, 16-byte hash, UInt8 is_compressed, and when that is 1
  varint uncompressed size + 16-byte uncompressed hash;
* version 4: the version 3 body as one compressed stream (readV4), whose
  method byte says LZ4 or ZSTD (26.x writes ZSTD);
* version 5: "minimalistic" checksums kept in ZooKeeper, never a part file.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .blocks import BlockError, read_stream
from .varint import VarintError, read_string_binary, read_varuint

HEADER = b"checksums format version: "
MAX_ENTRIES = 1_000_000
MAX_BODY = 64 << 20


class ChecksumsError(Exception):
    """checksums.txt could not be read; ``offset`` is in the file (or body)."""

    def __init__(self, message: str, offset: int | None = None):
        self.offset = offset
        super().__init__(message)


@dataclass(frozen=True)
class ChecksumEntry:
    """One file listed in checksums.txt (MergeTreeDataPartChecksum)."""

    name: str
    file_size: int
    file_hash: bytes                      # 16 bytes as stored (low64, high64 LE)
    is_compressed: bool
    uncompressed_size: int | None = None
    uncompressed_hash: bytes | None = None


@dataclass
class Checksums:
    """checksums.txt: format version, body method and entries by name."""

    version: int
    body_method: int | None               # method byte of the v4 body, None for v2/v3
    files: dict[str, ChecksumEntry] = field(default_factory=dict)

    @property
    def total_size(self) -> int:
        """Sum of the listed sizes: the engine's ``bytes_on_disk``."""
        return sum(e.file_size for e in self.files.values())


def read_checksums_entry(buf: bytes, offset: int) -> tuple[ChecksumEntry, int]:
    """Reads one binary (v3) checksums entry at ``offset``; returns it and the next offset."""
    raw, pos = read_string_binary(buf, offset, max_len=4096)
    name = raw.decode("utf-8", "replace")
    size, pos = read_varuint(buf, pos)
    if pos + 17 > len(buf):
        raise ChecksumsError(f"entry '{name}' truncated", pos)
    fhash = bytes(buf[pos:pos + 16])
    flag = buf[pos + 16]
    pos += 17
    if flag > 1:
        raise ChecksumsError(f"entry '{name}': is_compressed byte is {flag}, not 0 or 1", pos - 1)
    if flag:
        usize, pos = read_varuint(buf, pos)
        if pos + 16 > len(buf):
            raise ChecksumsError(f"entry '{name}' truncated", pos)
        uhash = bytes(buf[pos:pos + 16])
        pos += 16
        return ChecksumEntry(name, size, fhash, True, usize, uhash), pos
    return ChecksumEntry(name, size, fhash, False), pos


def read_checksums_v3(body: bytes, offset: int = 0) -> dict[str, ChecksumEntry]:
    """Reads a binary (v3) checksums body: varint count then the entries."""
    try:
        count, pos = read_varuint(body, offset)
        if count > MAX_ENTRIES or count > len(body):
            raise ChecksumsError(f"claims {count} entries in a {len(body)}-byte body", offset)
        files: dict[str, ChecksumEntry] = {}
        for _ in range(count):
            entry, pos = read_checksums_entry(body, pos)
            files[entry.name] = entry
    except VarintError as e:
        raise ChecksumsError(str(e), e.offset) from None
    if pos != len(body):
        raise ChecksumsError(f"{len(body) - pos} bytes left after {count} entries", pos)
    return files


_V2_ENTRY = re.compile(
    rb"(?P<name>[^\n]*)\n\tsize: (?P<size>\d+)\n\thash: (?P<h1>\d+) (?P<h2>\d+)\n\tcompressed: (?P<c>[01])"
    rb"(?:\n\tuncompressed size: (?P<us>\d+)\n\tuncompressed hash: (?P<u1>\d+) (?P<u2>\d+))?\n")


def read_checksums_v2(text: bytes, offset: int) -> dict[str, ChecksumEntry]:
    """Reads a text (v2) checksums body: ``<n> files:`` then one record per file."""
    m = re.compile(rb"(\d+) files:\n").match(text, offset)
    if not m:
        raise ChecksumsError("expected '<n> files:' line", offset)
    count = int(m.group(1))
    pos = m.end()
    files: dict[str, ChecksumEntry] = {}
    for _ in range(min(count, MAX_ENTRIES)):
        e = _V2_ENTRY.match(text, pos)
        if not e:
            raise ChecksumsError("malformed text entry", pos)

        def h(a, b):
            return int(a).to_bytes(8, "little") + int(b).to_bytes(8, "little")
        name = e.group("name").decode("utf-8", "replace")
        if e.group("c") == b"1" and e.group("us") is not None:
            files[name] = ChecksumEntry(name, int(e.group("size")), h(e.group("h1"), e.group("h2")), True,
                                        int(e.group("us")), h(e.group("u1"), e.group("u2")))
        else:
            files[name] = ChecksumEntry(name, int(e.group("size")), h(e.group("h1"), e.group("h2")), False)
        pos = e.end()
    return files


def parse_checksums(data: bytes, max_body: int = MAX_BODY) -> Checksums:
    """Reads a whole checksums.txt file (any version the engine reads)."""
    if not data.startswith(HEADER):
        raise ChecksumsError("does not start with 'checksums format version: '", 0)
    nl = data.find(b"\n", len(HEADER), len(HEADER) + 12)
    digits = data[len(HEADER):nl] if nl > 0 else b""
    if not digits.isdigit():
        raise ChecksumsError("bad format version line", len(HEADER))
    version = int(digits)
    body_at = nl + 1
    if version == 4:
        try:
            body = read_stream(memoryview(data)[body_at:], max_body)
        except BlockError as e:
            off = body_at + (e.offset or 0)
            raise ChecksumsError(f"compressed body: {str(e).rsplit(' (offset', 1)[0]}", off) from None
        method = data[body_at + 16] if len(data) > body_at + 16 else None
        try:
            files = read_checksums_v3(body)
        except ChecksumsError as e:
            raise ChecksumsError(f"decompressed body: {e} (at body offset {e.offset})", body_at) from None
        return Checksums(4, method, files)
    if version == 3:
        return Checksums(3, None, _v3_at(data, body_at))
    if version == 2:
        return Checksums(2, None, read_checksums_v2(data, body_at))
    if version == 1:
        raise ChecksumsError("checksums format version 1 has no file list (too old)", len(HEADER))
    raise ChecksumsError(f"unknown checksums format version {version}", len(HEADER))


def _v3_at(data: bytes, body_at: int) -> dict[str, ChecksumEntry]:
    try:
        return read_checksums_v3(data[body_at:])
    except ChecksumsError as e:
        raise ChecksumsError(str(e), body_at + (e.offset or 0)) from None

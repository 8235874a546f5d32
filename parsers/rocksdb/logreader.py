"""The log file format shared by the MANIFEST and the WAL (RocksDB db/log_format.h,
db/log_reader.cc ``Reader::ReadRecord``, ``ReadPhysicalRecord``).

32 KiB blocks of physical records: ``checksum fixed32 (masked crc32c of type and
payload), length fixed16, type byte`` (7 bytes; the recyclable types 5-8 add the log
number, 11 bytes), then the payload. A logical record is one FULL record or a
FIRST, MIDDLE..., LAST chain. Fewer than 7 bytes left in a block are zero padding."""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Iterator

import google_crc32c

from .trailer import crc32c_mask

kBlockSize = 32768
kHeaderSize = 7
kRecyclableHeaderSize = 11
kZeroType, kFullType, kFirstType, kMiddleType, kLastType = 0, 1, 2, 3, 4
kRecyclableFullType, kRecyclableFirstType, kRecyclableMiddleType, kRecyclableLastType = 5, 6, 7, 8
#: log_format.h kSetCompressionType / kUserDefinedTimestampSizeType (newer WALs; skipped)
kSetCompressionType = 9
kUserDefinedTimestampSizeType = 10
kMaxRecordType = 10
_FULL = {kFullType, kRecyclableFullType}
_FIRST = {kFirstType, kRecyclableFirstType}
_MIDDLE = {kMiddleType, kRecyclableMiddleType}
_LAST = {kLastType, kRecyclableLastType}


@dataclass
class LogProblem:
    message: str
    offset: int


def iter_records(buf, problems: list[LogProblem] | None = None,
                 verify_checksums: bool = True) -> Iterator[tuple[int, bytes]]:
    """(file offset of the first fragment, payload) of every logical record; bad
    fragments are reported to ``problems`` and skipped (what the reader's kSkipAnyCorruptedRecords does)."""
    n = len(buf)
    pos = 0
    scratch: list[bytes] = []
    start = -1
    while pos < n:
        left = kBlockSize - pos % kBlockSize
        if left < kHeaderSize:
            pos += left
            continue
        if pos + kHeaderSize > n:
            if any(buf[pos:n]) and problems is not None:
                problems.append(LogProblem(f"{n - pos} bytes of a record header cut short at the end", pos))
            break
        crc, length, rtype = struct.unpack_from("<IHB", buf, pos)
        if rtype == kZeroType and length == 0 and crc == 0:
            pos += left                       # preallocated / padding: rest of the block is zero
            continue
        hsize = kRecyclableHeaderSize if kRecyclableFullType <= rtype <= kRecyclableLastType else kHeaderSize
        if rtype > kMaxRecordType:
            if problems is not None:
                problems.append(LogProblem(f"unknown record type {rtype}", pos))
            pos += left
            scratch, start = [], -1
            continue
        end = pos + hsize + length
        if end > n or hsize + length > left:
            if problems is not None:
                problems.append(LogProblem(f"record of {length} bytes runs past its block or the file", pos))
            pos += left
            scratch, start = [], -1
            continue
        payload = bytes(buf[pos + hsize:end])
        if verify_checksums:
            got = crc32c_mask(google_crc32c.value(bytes(buf[pos + 6:pos + hsize]) + payload))
            if got != crc:
                if problems is not None:
                    problems.append(LogProblem("record checksum mismatch", pos))
                pos += left               # its length may be the damaged part: drop the block (as log_reader.cc)
                scratch, start = [], -1
                continue
        here = pos
        pos = end
        if rtype in (kSetCompressionType, kUserDefinedTimestampSizeType):
            continue
        if rtype in _FULL:
            if scratch and problems is not None:
                problems.append(LogProblem("a record chain ended without its LAST fragment", start))
            scratch, start = [], -1
            yield here, payload
        elif rtype in _FIRST:
            if scratch and problems is not None:
                problems.append(LogProblem("a record chain ended without its LAST fragment", start))
            scratch, start = [payload], here
        elif rtype in _MIDDLE:
            if scratch:
                scratch.append(payload)
            elif problems is not None:
                problems.append(LogProblem("MIDDLE fragment without a FIRST", here))
        elif rtype in _LAST:
            if scratch:
                scratch.append(payload)
                yield start, b"".join(scratch)
            elif problems is not None:
                problems.append(LogProblem("LAST fragment without a FIRST", here))
            scratch, start = [], -1

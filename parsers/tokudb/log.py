"""Recovery log files ``log<12 digits>.tokulog<version>``: framing, version,
entries and checksums (fields of each entry are not decoded).

Source: PerconaFT ``ft/logger/logger.cc`` and ``logcursor.cc``
(``toku_read_logmagic``: ``tokulogg`` + big-endian u32 version),
``ft/logger/logger.h`` (TOKU_LOG_VERSION_24..29) and the entry writer
generated from ``ft/logger/logformat.cc``: every entry is::

    u32 length L (little-endian, the whole entry)
    u8  command letter (logformat.cc: 'x' begin_checkpoint, 'I' enq_insert, ...)
    u64 LSN (two LE 32-bit words, high first)
    the entry's fields
    u32 x1764 of everything from the length word to the last field
    u32 L again
"""
from __future__ import annotations

import re
import struct
from collections import Counter
from dataclasses import dataclass, field

from .wire import u32be, u64
from .x1764 import x1764

LOG_MAGIC = b"tokulogg"
# logger.h: TOKU_LOG_VERSION_24 .. TOKU_LOG_VERSION_29 (= FT_LAYOUT_VERSION)
TOKU_LOG_MIN_SUPPORTED_VERSION = 24
TOKU_LOG_VERSION = 29
LOG_HEADER_SIZE = 12
#: smallest entry: length, command, LSN, checksum, length
MIN_ENTRY = 4 + 1 + 8 + 4 + 4
MAX_FRAMES = 100_000
LOG_NAME_RE = re.compile(r"^log(?P<index>\d+)\.tokulog(?P<version>\d+)$")

# logformat.cc: logtypes[] command letters
LOG_COMMANDS = {
    "c": "local_txn_checkpoint", "x": "begin_checkpoint", "X": "end_checkpoint", "f": "fassociate",
    "s": "xstillopen", "p": "xstillopenprepared", "b": "xbegin", "C": "xcommit", "P": "xprepare",
    "q": "xabort", "F": "fcreate", "O": "fopen", "e": "fclose", "U": "fdelete", "n": "frename",
    "I": "enq_insert", "i": "enq_insert_no_overwrite", "E": "enq_delete_any",
    "m": "enq_insert_multiple", "M": "enq_delete_multiple", "T": "comment", "0": "shutdown",
    "l": "load", "h": "hot_index", "u": "enq_update", "B": "enq_updatebroadcast",
    "D": "change_fdescriptor",
}


@dataclass
class LogFile:
    """A recovery log as framed on disk."""

    version: int | None
    entries: int = 0
    bad_checksums: int = 0
    first_lsn: int | None = None
    last_lsn: int | None = None
    commands: Counter = field(default_factory=Counter)
    end_offset: int = 0                  # first byte not part of a whole entry
    clean_shutdown: bool = False
    #: (offset, length, command, LSN, checksum) of the first MAX_FRAMES entries
    frames: list[tuple[int, int, str, int, int]] = field(default_factory=list)
    errors: list[tuple[int, str]] = field(default_factory=list)


def read_log_header(buf, offset: int = 0) -> int:
    """The log version after the ``tokulogg`` magic (big-endian u32)."""
    head = bytes(buf[offset:offset + LOG_HEADER_SIZE])
    if len(head) < LOG_HEADER_SIZE or head[:8] != LOG_MAGIC:
        raise ValueError(f"not a TokuDB log (magic {head[:8]!r})")
    return u32be(head, 8)


def read_log_entry(buf, offset: int, end: int) -> tuple[int, str, int, bool, int]:
    """Read one entry's framing at ``offset``: (length, command, LSN, checksum ok, stored checksum).

    Raises ValueError when the framing is broken (length out of range, the
    two length words differ)."""
    if offset + 4 > end:
        raise ValueError("truncated entry length")
    n = struct.unpack_from("<I", bytes(buf[offset:offset + 4]))[0]
    if n < MIN_ENTRY or offset + n > end:
        raise ValueError(f"entry length {n} out of range ({end - offset} bytes left)")
    e = bytes(buf[offset:offset + n])
    if struct.unpack_from("<I", e, n - 4)[0] != n:
        raise ValueError(f"entry length {n} not repeated at its end")
    crc = struct.unpack_from("<I", e, n - 8)[0]
    return n, chr(e[4]), u64(e, 5), x1764(e[:n - 8]) == crc, crc


def read_log(buf, size: int) -> LogFile:
    """Frame every entry of a log file; stops at the first broken framing (a
    torn tail after a crash is normal and reported, not fatal)."""
    try:
        version = read_log_header(buf)
    except ValueError as e:
        lf = LogFile(None)
        lf.errors.append((0, str(e)))
        return lf
    lf = LogFile(version)
    if not TOKU_LOG_MIN_SUPPORTED_VERSION <= version <= TOKU_LOG_VERSION:
        lf.errors.append((8, f"unknown log version {version}"))
        return lf
    p = LOG_HEADER_SIZE
    while p < size:
        try:
            n, cmd, lsn, ok, crc = read_log_entry(buf, p, size)
        except ValueError as e:
            lf.errors.append((p, f"log entry {lf.entries}: {e}"))
            break
        if len(lf.frames) < MAX_FRAMES:
            lf.frames.append((p, n, cmd, lsn, crc))
        lf.entries += 1
        lf.commands[LOG_COMMANDS.get(cmd, f"unknown({cmd!r})")] += 1
        if lf.first_lsn is None:
            lf.first_lsn = lsn
        lf.last_lsn = lsn
        if not ok:
            lf.bad_checksums += 1
            lf.errors.append((p, f"log entry {lf.entries - 1} ({LOG_COMMANDS.get(cmd, cmd)}) checksum mismatch"))
        lf.clean_shutdown = cmd == "0"
        p += n
    lf.end_offset = p
    return lf

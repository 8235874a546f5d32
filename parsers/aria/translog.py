"""The header of an Aria log file ``aria_log.NNNNNNNN`` (storage/maria/ma_loghandler.c
translog_write_file_header): maria_trans_file_magic (``fe fe 0b 01 MARIALOG``, 12
bytes), a timestamp (8), TRANSLOG_VERSION_ID (4), the server version (4, MYSQL_VERSION_ID:
101119 is 10.11.19), server id (4), TRANSLOG_PAGE_SIZE - 1 (2), the file number (3) and
the max LSN (7), all little endian; the log's pages of TRANSLOG_PAGE_SIZE follow (their
records are not read)."""
from __future__ import annotations

from dataclasses import dataclass

from .state import lsn_korr

MARIA_TRANS_FILE_MAGIC = b"\xfe\xfe\x0b\x01MARIALOG"
LOG_HEADER_DATA_SIZE = 12 + 8 + 4 + 4 + 4 + 2 + 3 + 7


@dataclass(frozen=True)
class LogHeader:
    timestamp: int
    maria_version: int
    server_version: int
    server_id: int
    page_size: int
    file_number: int
    max_lsn: int


def read_log_header(buf: bytes) -> LogHeader:
    """ValueError (message, offset) when the header is cut or not Aria's."""
    if len(buf) < LOG_HEADER_DATA_SIZE:
        raise ValueError(f"log header cut: {len(buf)} of {LOG_HEADER_DATA_SIZE} bytes", len(buf))
    if buf[:12] != MARIA_TRANS_FILE_MAGIC:
        raise ValueError(f"magic {buf[:12].hex()} ({MARIA_TRANS_FILE_MAGIC.hex()} expected): not an Aria log", 0)
    le = lambda o, n: int.from_bytes(buf[o:o + n], "little")   # noqa: E731
    return LogHeader(timestamp=le(12, 8), maria_version=le(20, 4), server_version=le(24, 4), server_id=le(28, 4),
                     page_size=le(32, 2) + 1, file_number=le(34, 3), max_lsn=lsn_korr(buf, 37))

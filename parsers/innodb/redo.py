"""InnoDB redo log headers: format, creator, start LSN and checkpoints.

Layouts:

* MariaDB 10.8+ (``log_t::FORMAT_10_8`` = "Phys", MariaDB log0log.h; encrypted logs
  of 10.11.15+ carry 0xf09f979d, log0recv.cc): file header in the first 512 bytes
  (format, start LSN at 8, creator at 16, with innodb_encrypt_log the key id and
  key version at 48 and 52 (log0crypt.cc log_crypt_write_header), CRC-32C of bytes
  0..508 at 508), checkpoint blocks (in clear, also when the log is encrypted) at ``CHECKPOINT_1`` = 4096 and
  ``CHECKPOINT_2`` = 8192 (checkpoint LSN, end LSN, CRC-32C of 0..60 at 60),
  records from ``START_OFFSET`` = 12288 (log0log.cc log_t::write_checkpoint).
* MySQL 5.7 / 8.0 before 8.0.30 and MariaDB 10.2-10.7 (mysql-server
  log0constants.h, MariaDB log0log.h): 512-byte blocks, header block 0, checkpoint
  blocks at ``LOG_CHECKPOINT_1`` = 512 and ``LOG_CHECKPOINT_2`` = 1536 with
  ``LOG_CHECKPOINT_NO`` 0, ``LOG_CHECKPOINT_LSN`` 8, ``LOG_CHECKPOINT_OFFSET`` 16,
  ``LOG_CHECKPOINT_LOG_BUF_SIZE`` 24 and the block checksum (CRC-32C of the
  first 508 bytes) at 508.
* MySQL 8.0.30+ ``#innodb_redo/#ib_redoN`` (log0constants.h): same 512-byte
  blocks; header with ``LOG_HEADER_LOG_UUID`` at 4 and ``LOG_HEADER_FLAGS`` at 48;
  checkpoint blocks hold only ``LOG_CHECKPOINT_LSN`` at 8.  Spare files
  (``#ib_redoN_tmp``) are all zeros.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from ..fileio import FileReadError, ReadOnlyFile

OS_FILE_LOG_BLOCK_SIZE = 512

# -- log0constants.h (MySQL) / log0log.h (MariaDB) ---------------------------------
LOG_HEADER_FORMAT = 0
LOG_HEADER_LOG_UUID = 4          # MySQL 8.0.30+; MariaDB/5.7: LOG_HEADER_SUBFORMAT
LOG_HEADER_SUBFORMAT = 4
LOG_HEADER_START_LSN = 8
LOG_HEADER_CREATOR = 16
LOG_HEADER_CREATOR_END = LOG_HEADER_CREATOR + 32
LOG_HEADER_FLAGS = LOG_HEADER_CREATOR_END
LOG_CHECKPOINT_1 = OS_FILE_LOG_BLOCK_SIZE
LOG_ENCRYPTION = 2 * OS_FILE_LOG_BLOCK_SIZE
LOG_CHECKPOINT_2 = 3 * OS_FILE_LOG_BLOCK_SIZE
LOG_FILE_HDR_SIZE = 4 * OS_FILE_LOG_BLOCK_SIZE
LOG_CHECKPOINT_NO = 0
LOG_CHECKPOINT_LSN = 8
LOG_CHECKPOINT_OFFSET = 16
LOG_CHECKPOINT_LOG_BUF_SIZE = 24
LOG_CHECKPOINT_END_LSN = OS_FILE_LOG_BLOCK_SIZE - 16     # MariaDB 10.2-10.7
LOG_BLOCK_CHECKSUM = 4           # from the end of the block
LOG_NO_CHECKSUM_MAGIC = 0xDEADBEEF

# MySQL log0types.h enum class Log_format
MYSQL_FORMATS = {
    0: "LEGACY (before 5.7.9)",
    1: "VERSION_5_7_9",
    2: "VERSION_8_0_1",
    3: "VERSION_8_0_3",
    4: "VERSION_8_0_19",
    5: "VERSION_8_0_28",
    6: "VERSION_8_0_30",
}
# MariaDB log0log.h log_t::FORMAT_*
FORMAT_3_23 = 0
FORMAT_10_2 = 1
FORMAT_10_3 = 103
FORMAT_10_4 = 104
FORMAT_ENCRYPTED = 1 << 31
FORMAT_10_5 = 0x50485953
FORMAT_10_8 = 0x50687973
#: the on-disk id of an encrypted 10.8-layout log from MariaDB 10.11.15, 11.4.9, 11.8.4, 12.1.2
#: (MDEV-36024, log_t::FORMAT_ENC_10_8 there); earlier 10.8+ servers keep FORMAT_10_8 and mark
#: encryption by the key id after the creator (log0recv.cc log_t::find_header)
FORMAT_ENC_10_8 = 0xF09F979D
MARIADB_FORMATS = {
    FORMAT_10_2: "FORMAT_10_2", FORMAT_10_3: "FORMAT_10_3", FORMAT_10_4: "FORMAT_10_4",
    FORMAT_10_5: "FORMAT_10_5", FORMAT_10_8: "FORMAT_10_8",
}
#: log0crypt.cc log_crypt_write_header, at LOG_HEADER_CREATOR_END: key id, key version,
#: 16-byte crypt message, 4-byte nonce
LOG_CRYPT_KEY_ID = 0
LOG_CRYPT_KEY_VERSION = 4
# MariaDB 10.8+ (log0log.h log_t)
CHECKPOINT_1 = 4096
CHECKPOINT_2 = 8192
START_OFFSET = 12288
HEADER_CRC = 508                 # log_t::header_write: CRC-32C of bytes 0..508
CHECKPOINT_CRC = 60              # log_t::write_checkpoint: CRC-32C of bytes 0..60


class RedoError(Exception):
    """A redo log header could not be read; the message names file and offset."""


def _crc32c_table() -> list[int]:
    poly = 0x82F63B78            # Castagnoli, reflected
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C = _crc32c_table()


def crc32c(data: bytes, crc: int = 0) -> int:
    """CRC-32C (Castagnoli) as ut0crc32 / my_crc32c compute it; for header-sized inputs only."""
    crc ^= 0xFFFFFFFF
    t = _CRC32C
    for b in data:
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


@dataclass
class Checkpoint:
    """One checkpoint block of a redo log header."""

    offset: int
    lsn: int
    valid: bool                    # checksum matches (and the block is not empty)
    checkpoint_no: int | None = None
    lsn_offset: int | None = None  # LOG_CHECKPOINT_OFFSET: byte offset of lsn in the log files
    log_buf_size: int | None = None
    end_lsn: int | None = None
    checksum: str = "crc32c"       # "crc32c", "none" (LOG_NO_CHECKSUM_MAGIC) or "bad"

    def to_json(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass
class RedoHeader:
    """The header of one redo log file."""

    path: str
    size: int
    format: int
    format_name: str
    vendor: str                    # "MariaDB", "MySQL" or "" (unused / unknown)
    creator: str
    start_lsn: int | None
    header_checksum: str           # "crc32c", "none", "bad" or "n/a"
    encrypted: bool = False
    log_uuid: int | None = None
    key_id: int | None = None          # MariaDB 10.8+ encrypted: LOG_DEFAULT_ENCRYPTION_KEY (1)
    key_version: int | None = None
    flags: int | None = None
    subformat: int | None = None
    unused: bool = False           # all-zero header (spare #ib_redoN_tmp, ib_logfile1 of 8.0)
    checkpoints: list[Checkpoint] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def checkpoint_lsn(self) -> int | None:
        """LSN of the latest valid checkpoint, None when there is none."""
        good = [c.lsn for c in self.checkpoints if c.valid]
        return max(good) if good else None

    def to_json(self) -> dict:
        out = {
            "kind": "redo_log",
            "format": self.format,
            "format_name": self.format_name,
            "vendor": self.vendor,
            "creator": self.creator,
            "start_lsn": self.start_lsn,
            "header_checksum": self.header_checksum,
            "encrypted": self.encrypted,
            "unused": self.unused,
            "checkpoint_lsn": self.checkpoint_lsn,
            "checkpoints": [c.to_json() for c in self.checkpoints],
            "file_bytes": self.size,
        }
        for k in ("log_uuid", "flags", "subformat", "key_id", "key_version"):
            v = getattr(self, k)
            if v is not None:
                out[k] = v
        if self.errors:
            out["errors"] = list(self.errors)
        return out


def _block_checksum(block: bytes) -> str:
    """State of a 512-byte log block's checksum (log_block_calc_checksum_crc32)."""
    stored = struct.unpack_from(">I", block, OS_FILE_LOG_BLOCK_SIZE - LOG_BLOCK_CHECKSUM)[0]
    if stored == LOG_NO_CHECKSUM_MAGIC:
        return "none"
    return "crc32c" if stored == crc32c(block[:OS_FILE_LOG_BLOCK_SIZE - LOG_BLOCK_CHECKSUM]) else "bad"


def _creator(block: bytes) -> str:
    raw = block[LOG_HEADER_CREATOR:LOG_HEADER_CREATOR_END].split(b"\0", 1)[0]
    return raw.decode("latin-1")


def read_checkpoint_10_8(block: bytes, offset: int) -> Checkpoint:
    """One MariaDB 10.8+ checkpoint block (log_t::write_checkpoint): LSN, end LSN, CRC at 60."""
    lsn, end_lsn = struct.unpack_from(">QQ", block, 0)
    stored = struct.unpack_from(">I", block, CHECKPOINT_CRC)[0]
    ok = stored == crc32c(block[:CHECKPOINT_CRC]) and lsn != 0
    return Checkpoint(offset=offset, lsn=lsn, valid=ok, end_lsn=end_lsn, checksum="crc32c" if ok else "bad")


def read_checkpoint_block(block: bytes, offset: int, fmt: int, mariadb: bool) -> Checkpoint:
    """One 512-byte checkpoint block (log0constants.h LOG_CHECKPOINT_*) of the older layouts."""
    state = _block_checksum(block)
    if fmt == 6 and not mariadb:                   # MySQL 8.0.30+: only the LSN
        lsn = struct.unpack_from(">Q", block, LOG_CHECKPOINT_LSN)[0]
        return Checkpoint(offset=offset, lsn=lsn, valid=state != "bad" and lsn != 0, checksum=state)
    no, lsn, off, buf = struct.unpack_from(">QQQQ", block, LOG_CHECKPOINT_NO)
    cp = Checkpoint(offset=offset, lsn=lsn, valid=state != "bad" and lsn != 0, checkpoint_no=no,
                    lsn_offset=off, log_buf_size=buf, checksum=state)
    if mariadb:
        cp.end_lsn = struct.unpack_from(">Q", block, LOG_CHECKPOINT_END_LSN)[0]
    return cp


def parse_redo_header(head: bytes, path: str = "", size: int | None = None) -> RedoHeader:
    """Parse the redo header from the first bytes of a log file (at least 512 bytes)."""
    size = len(head) if size is None else size
    if len(head) < OS_FILE_LOG_BLOCK_SIZE:
        raise RedoError(f"{path} @ offset 0: truncated redo log header ({len(head)} bytes, need "
                        f"{OS_FILE_LOG_BLOCK_SIZE})")
    block0 = head[:OS_FILE_LOG_BLOCK_SIZE]
    fmt = struct.unpack_from(">I", block0, LOG_HEADER_FORMAT)[0]
    if not any(block0):
        return RedoHeader(path, size, 0, "unused (all-zero header)", "", "", None, "n/a", unused=True)
    creator = _creator(block0)
    base = fmt & ~FORMAT_ENCRYPTED
    encrypted = bool(fmt & FORMAT_ENCRYPTED) and base in MARIADB_FORMATS
    key_id = key_version = None
    if fmt == FORMAT_ENC_10_8 or base == FORMAT_10_8:
        if fmt == FORMAT_ENC_10_8:
            base = FORMAT_10_8
        kid, kver = struct.unpack_from(">II", block0, LOG_HEADER_CREATOR_END + LOG_CRYPT_KEY_ID)
        if fmt == FORMAT_ENC_10_8 or kid:       # log_t::find_header: a key id after the creator
            encrypted = True
            key_id, key_version = kid, kver
    if base == FORMAT_10_8:
        h = RedoHeader(path, size, fmt, ("MariaDB FORMAT_ENC_10_8" if fmt == FORMAT_ENC_10_8 else "MariaDB FORMAT_10_8")
                       + (" (encrypted)" if encrypted else ""),
                       "MariaDB", creator, struct.unpack_from(">Q", block0, LOG_HEADER_START_LSN)[0],
                       "crc32c" if struct.unpack_from(">I", block0, HEADER_CRC)[0] == crc32c(block0[:HEADER_CRC])
                       else "bad", encrypted=encrypted, key_id=key_id, key_version=key_version)
        if encrypted and not key_version:
            h.errors.append(f"{path} @ offset {LOG_HEADER_CREATOR_END + LOG_CRYPT_KEY_VERSION}: encrypted redo log "
                            f"with key version 0 (log_crypt_read_header would fail)")
        if h.header_checksum == "bad":
            h.errors.append(f"{path} @ offset 0: redo header checksum mismatch")
        for off in (CHECKPOINT_1, CHECKPOINT_2):
            if len(head) < off + 64:
                h.errors.append(f"{path} @ offset {off}: truncated before the checkpoint block")
                continue
            h.checkpoints.append(read_checkpoint_10_8(head[off:off + 64], off))
        return h
    mariadb = creator.startswith("MariaDB") or base in (FORMAT_10_3, FORMAT_10_4, FORMAT_10_5)
    if mariadb:
        name = "MariaDB " + MARIADB_FORMATS.get(base, f"format {base}")
        vendor = "MariaDB"
    elif fmt in MYSQL_FORMATS:
        name = "MySQL " + MYSQL_FORMATS[fmt]
        vendor = "MySQL"
    else:
        raise RedoError(f"{path} @ offset 0: unknown redo log format {fmt:#x} (creator {creator!r})")
    start_lsn = struct.unpack_from(">Q", block0, LOG_HEADER_START_LSN)[0]
    h = RedoHeader(path, size, fmt, name + (" (encrypted)" if encrypted else ""), vendor, creator, start_lsn,
                   _block_checksum(block0), encrypted=encrypted)
    if vendor == "MySQL" and fmt == 6:
        h.log_uuid = struct.unpack_from(">I", block0, LOG_HEADER_LOG_UUID)[0]
        h.flags = struct.unpack_from(">I", block0, LOG_HEADER_FLAGS)[0]
    else:
        h.subformat = struct.unpack_from(">I", block0, LOG_HEADER_SUBFORMAT)[0]
    if h.header_checksum == "bad":
        h.errors.append(f"{path} @ offset 0: redo header block checksum mismatch")
    for off in (LOG_CHECKPOINT_1, LOG_CHECKPOINT_2):
        if len(head) < off + OS_FILE_LOG_BLOCK_SIZE:
            h.errors.append(f"{path} @ offset {off}: truncated before the checkpoint block")
            continue
        blk = head[off:off + OS_FILE_LOG_BLOCK_SIZE]
        if not any(blk):
            continue                       # ib_logfile1..N carry no checkpoints
        h.checkpoints.append(read_checkpoint_block(blk, off, fmt, mariadb))
    return h


def read_redo_header(path: str, display: str | None = None) -> RedoHeader:
    """Read the header of one redo log file (ib_logfile*, #ib_redo*), read-only."""
    name = display or path
    try:
        with ReadOnlyFile(path) as f:
            head = f.pread(0, START_OFFSET)
            size = f.size
    except FileReadError as e:
        raise RedoError(f"{name}: {str(e).split(': ', 1)[-1]}") from None
    return parse_redo_header(head, name, size)

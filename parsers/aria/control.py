"""``aria_log_control`` (storage/maria/ma_control_file.c): the create-time part
(CF_MAGIC_STRING ``fe fe 0c``, version, the uuid tables carry in their base info, the
sizes of both parts, the Aria block size, a checksum) and the changeable part (checksum,
LSN of the last checkpoint, number of the last log file, max transaction id, recovery
failures); both checksums are my_checksum (zlib's CRC-32) of their part, little endian."""
from __future__ import annotations

import zlib
from dataclasses import dataclass

from .state import lsn_korr

CF_MAGIC_STRING = b"\xfe\xfe\x0c"
CF_MIN_SIZE = 26 + 4 * 2 + 7 + 4
CF_MAX_SIZE = 512


@dataclass(frozen=True)
class ControlFile:
    version: int
    uuid: str
    block_size: int
    checkpoint_lsn: int
    last_logno: int
    max_trid: int | None
    recovery_failures: int | None
    head_checksum_ok: bool
    checksum_ok: bool


def read_control(buf: bytes) -> ControlFile:
    """The control file in ``buf`` (ValueError naming the offset: ``err.args[1]``)."""
    if len(buf) < CF_MIN_SIZE or len(buf) > CF_MAX_SIZE:
        raise ValueError(f"control file of {len(buf)} bytes ({CF_MIN_SIZE}..{CF_MAX_SIZE} expected)", len(buf))
    if buf[:3] != CF_MAGIC_STRING:
        raise ValueError(f"magic {buf[:4].hex()} (fefe0c expected): not an Aria control file", 0)
    ct = int.from_bytes(buf[20:22], "little")
    ch = int.from_bytes(buf[22:24], "little")
    if ct < 30 or ch < 15 or ct + ch != len(buf):
        raise ValueError(f"part sizes {ct} + {ch} do not add up to the file's {len(buf)} bytes", 20)
    c = buf[ct:]
    return ControlFile(
        version=buf[3], uuid=buf[4:20].hex(), block_size=int.from_bytes(buf[24:26], "little"),
        checkpoint_lsn=lsn_korr(c, 4), last_logno=int.from_bytes(c[11:15], "little"),
        max_trid=int.from_bytes(c[15:21], "little") if ch >= 21 else None,
        recovery_failures=c[21] if ch >= 22 else None,
        head_checksum_ok=zlib.crc32(buf[:ct - 4]) == int.from_bytes(buf[ct - 4:ct], "little"),
        checksum_ok=zlib.crc32(c[4:ch]) == int.from_bytes(c[:4], "little"))

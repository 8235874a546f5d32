"""The ``.par`` partition file (MariaDB/server sql/ha_partition.cc
``create_handler_file`` writes it, ``read_par_file`` reads it): 32-bit little
endian words:

====================================  =============================================
PAR_WORD_SIZE x 0 (offset 0)          length of the file in words
PAR_CHECKSUM_OFFSET (4)               checksum: the XOR of all words is 0
PAR_NUM_PARTS_OFFSET (8)              tot_parts (partitions, or subpartitions)
PAR_ENGINES_OFFSET (12)               one legacy_db_type byte per partition, padded to words
then                                  u4 length of the name part
then                                  names, NUL-terminated, in file-name encoding
                                      (``p0``, or ``p0#SP#p0sp0`` for a subpartition)
after the counted words (MariaDB)     per partition (not subpartition) a u4 length and its CONNECTION
                                      string (``create_handler_file`` /
                                      ``read_par_file``: m_connect_string)
====================================  =============================================
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from .frm import LEGACY_DB_TYPES

PAR_WORD_SIZE = 4
PAR_CHECKSUM_OFFSET = 4
PAR_NUM_PARTS_OFFSET = 8
PAR_ENGINES_OFFSET = 12


class ParError(ValueError):
    """The .par cannot be read; ``offset`` is where it goes wrong."""

    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.offset = offset


@dataclass(frozen=True)
class Par:
    """One .par file."""

    words: int
    checksum_ok: bool
    partitions: tuple[str, ...]
    engine_types: tuple[int, ...]     # legacy_db_type per partition
    connect_strings: tuple[str, ...] = ()

    @property
    def engines(self) -> tuple[str, ...]:
        """The partitions' engines by name (a dynamic engine's number is only valid while its
        server runs: named ``dynamic engine N``, the .frm names it)."""
        return tuple(LEGACY_DB_TYPES.get(t, f"dynamic engine {t}") for t in self.engine_types)


def read_par(buf: bytes) -> Par:
    """The .par in ``buf`` (the whole file); ParError naming the offset when damaged."""
    if len(buf) < 16:
        raise ParError(f"file of {len(buf)} bytes, at least 16 expected", len(buf))
    words = struct.unpack_from("<I", buf, 0)[0]
    if words * PAR_WORD_SIZE > len(buf) or words < 4:
        raise ParError(f"length word says {words} words ({words * PAR_WORD_SIZE} bytes), the file has "
                       f"{len(buf)} bytes", 0)
    chk = 0
    for (w,) in struct.iter_unpack("<I", buf[:words * PAR_WORD_SIZE]):
        chk ^= w
    parts = struct.unpack_from("<I", buf, PAR_NUM_PARTS_OFFSET)[0]
    part_words = (parts + PAR_WORD_SIZE - 1) // PAR_WORD_SIZE
    name_len_at = PAR_ENGINES_OFFSET + PAR_WORD_SIZE * part_words
    if name_len_at + 4 > len(buf):
        raise ParError(f"{parts} partitions do not fit a file of {len(buf)} bytes", PAR_NUM_PARTS_OFFSET)
    name_len = struct.unpack_from("<I", buf, name_len_at)[0]
    if words != part_words + (name_len + PAR_WORD_SIZE - 1) // PAR_WORD_SIZE + 4:
        raise ParError(f"name part of {name_len} bytes does not match the file's {words} words", name_len_at)
    names = buf[name_len_at + 4:name_len_at + 4 + name_len].split(b"\0")[:parts]
    if len(names) != parts:
        raise ParError(f"{len(names)} partition names for {parts} partitions", name_len_at + 4)
    pos, connect = words * PAR_WORD_SIZE, []
    top = len(dict.fromkeys(n.split(b"#SP#")[0] for n in names))   # one string per partition, not subpartition
    for _ in range(top if pos < len(buf) else 0):
        if pos + 4 > len(buf):
            raise ParError("connect string length cut short", pos)
        n = struct.unpack_from("<I", buf, pos)[0]
        if pos + 4 + n > len(buf):
            raise ParError(f"connect string of {n} bytes past the end of the file", pos)
        connect.append(buf[pos + 4:pos + 4 + n].decode("utf-8", "replace"))
        pos += 4 + n
    return Par(words=words, checksum_ok=chk == 0, connect_strings=tuple(connect),
               partitions=tuple(n.decode("utf-8", "replace") for n in names),
               engine_types=tuple(buf[PAR_ENGINES_OFFSET:PAR_ENGINES_OFFSET + parts]))

"""The keys of a table's ``.frm``: each key's flags and parts (the column, its byte length in
the key), read from the key information segment as sql/table.cc
``TABLE_SHARE::init_from_binary_frm_image`` reads it (FRM_VER + 3 and later: per key 8 bytes
of flags, length, part count, algorithm, block size; per part 9 bytes of field number,
record offset + 1, part flags, key type, length), the names after them (frm.py
``read_key_names``)."""
from __future__ import annotations

import struct
from dataclasses import dataclass

from .frm import FRM_HEADER_SIZE, FRM_MAGIC, FRM_VER, FrmError, read_key_names

#: sql/table.cc FIELD_NR_MASK: the field number's bits of a key part's first word
FIELD_NR_MASK = 16383
#: include/my_base.h HA_NOSAME (stored inverted in the .frm: init_from_binary_frm_image XORs it)
HA_NOSAME = 1
#: the name the server gives the primary key
PRIMARY_KEY_NAME = "PRIMARY"


@dataclass(frozen=True)
class FrmKeyPart:
    """A key part: its column (0-based field number) and the bytes of it the key holds."""

    field: int
    record_offset: int
    length: int
    flags: int


@dataclass(frozen=True)
class FrmKey:
    name: str
    flags: int
    parts: tuple[FrmKeyPart, ...]

    @property
    def unique(self) -> bool:
        return bool(self.flags & HA_NOSAME)

    @property
    def primary(self) -> bool:
        return self.name == PRIMARY_KEY_NAME


def read_frm_keys(buf: bytes) -> tuple[FrmKey, ...]:
    """The keys of the ``.frm`` in ``buf`` (the whole file); FrmError with the offset for a
    segment that does not hold them."""
    if buf[:2] != FRM_MAGIC or len(buf) < FRM_HEADER_SIZE:
        raise FrmError("not a binary .frm", 0)
    version = buf[2]
    if version < FRM_VER + 3:
        raise FrmError(f"frm version {version}: keys read from {FRM_VER + 3} on", 2)
    key_pos, key_len = struct.unpack_from("<HxxxxxxH", buf, 6)
    if key_len == 0xFFFF:
        key_len = struct.unpack_from("<I", buf, 47)[0]
    names = read_key_names(buf, key_pos, key_len, version)
    seg = buf[key_pos:key_pos + key_len]
    pos = 6
    keys = []
    for name in names:
        if pos + 8 > len(seg):
            raise FrmError("key definitions run past the key information segment", key_pos + pos)
        flags = struct.unpack_from("<H", seg, pos)[0] ^ HA_NOSAME
        n_parts = seg[pos + 4]
        pos += 8
        parts = []
        for _ in range(n_parts):
            if pos + 9 > len(seg):
                raise FrmError("key parts run past the key information segment", key_pos + pos)
            nr, off = struct.unpack_from("<HH", seg, pos)
            parts.append(FrmKeyPart(field=(nr & FIELD_NR_MASK) - 1, record_offset=off - 1,
                                    length=struct.unpack_from("<H", seg, pos + 7)[0], flags=seg[pos + 4]))
            pos += 9
        keys.append(FrmKey(name, flags, tuple(parts)))
    return tuple(keys)

"""A MyISAM row's checksum and the table's (storage/myisam/mi_checksum.c ``mi_checksum``,
``mi_static_checksum``; mi_open.c ``setup_functions`` picks one): the state's ``checksum``
(.MYI, MI_STATE_INFO) is the sum of every live row's, modulo 2^32, which myisamchk compares
("Record checksum is not the same as checksum stored in the index file", mi_check.c
chk_data_link). ``my_checksum`` is zlib's CRC-32 (mysys/checksum.c).

* ``mi_checksum``: over the columns in record order (MI_COLUMNDEF), a NULL one skipped when
  the table has HA_OPTION_NULL_FIELDS; a BLOB its data (the length before the pointer in the
  record, the bytes it points to), a VARCHAR its value behind its 1 or 2 length bytes, any
  other column its bytes in the record;
* ``mi_static_checksum``: the whole record.
A packed (myisampack) table uses ``mi_checksum`` when the table had packed records, null
fields or a VARCHAR, else ``mi_static_checksum``.
"""
from __future__ import annotations

import zlib

from .state import HA_OPTION_NULL_FIELDS, HA_OPTION_PACK_RECORD

#: include/myisampack.h en_fieldtype
FIELD_BLOB = 4
FIELD_VARCHAR = 8
#: the blob pointer after a BLOB's length bytes in the record (portable_sizeof_char_ptr)
PORTABLE_SIZEOF_CHAR_PTR = 8
MASK32 = 0xFFFFFFFF


def uses_mi_checksum(options: int, columns: list[tuple[int, int]]) -> bool:
    """setup_functions for a compressed table: mi_checksum (True) or mi_static_checksum."""
    return bool(options & (HA_OPTION_PACK_RECORD | HA_OPTION_NULL_FIELDS)) or \
        any(t == FIELD_VARCHAR for t, _ in columns)


def mi_checksum(rec: bytes, columns: list[tuple[int, int]], nulls: list[tuple[int, int]],
                blobs: dict[int, bytes], null_fields: bool) -> int:
    """One record's mi_checksum (``blobs``: each BLOB's bytes by its column's record offset)."""
    crc = 0
    pos = 0
    for (kind, length), (null_bit, null_pos) in zip(columns, nulls):
        if null_fields and null_bit and rec[null_pos] & null_bit:
            pos += length
            continue
        if kind == FIELD_BLOB:
            data = blobs.get(pos, b"")
        elif kind == FIELD_VARCHAR:
            pack = 1 if length - 1 < 256 else 2
            n = rec[pos] if pack == 1 else int.from_bytes(rec[pos:pos + 2], "little")
            data = rec[pos + pack:pos + pack + n]
        else:
            data = rec[pos:pos + length]
        crc = zlib.crc32(data, crc)
        pos += length
    return crc


def mi_static_checksum(rec: bytes) -> int:
    return zlib.crc32(rec)

"""The columns of a ``.frm`` and the record they make: the forminfo block, the screens, the
field records, the names, the ENUM/SET intervals and the comments, read as MariaDB/server
sql/table.cc ``TABLE_SHARE::init_from_binary_frm_image`` reads them (sql/unireg.cc
``create_frm_image`` / ``pack_fields`` and sql/field.cc ``Column_definition_attributes::
frm_pack_basic`` / ``frm_pack_charset`` write them; the pack_flag bits are sql/field.h's
FIELDFLAG_*).

Layout (little endian):

* header byte 4: u2 length of the extra2 segment; the u4 right after it (at 64 + that
  length) is the **forminfo** offset.  forminfo (FRM_FORMINFO_SIZE 288 bytes): 46 the table
  comment length (255: long, in the extra segment), 258 u2 fields, 260 u2 screens length,
  268 u2 names length, 270 u2 interval count, 272 u2 interval parts, 274 u2 intervals
  length, 282 u2 null fields, 284 u2 comments length, 286 u2 vcol screen length;
* after forminfo: the screens (skipped), then one field record per column
  (17 bytes since FRM_VER + 2; 11 before): 3 u2 length (bytes: CHAR(12) in utf8mb4 is 48),
  5 u3 recpos (the field's offset in the record + 1), 8 u2 pack_flag, 10 unireg_check (low 7
  bits: Field::utype), 11 the collation number's high byte, 12 interval number (ENUM/SET, 1-based),
  13 the real field type (include/mysql_com.h enum_field_types), 14 the collation number's
  low byte (GEOMETRY: the geometry type), 15 u2 comment length;
* then the names (``\\xff`` before and after each, a 0 at the end), the intervals (each:
  its separator byte, the values each followed by it, a 0; values of a ucs2/utf16/utf32
  column in hex), the comments, the vcol screen.

The record (``reclength`` bytes, header 16): the null bytes first (``null_field_first``: the
header's byte 32 is 0 since 3.23), a reserved bit 0 unless HA_OPTION_PACK_RECORD (header 30,
bit 0), then one bit per nullable column in column order, a non-char BIT column's odd bits
before its null bit moves on; each column at ``recpos - 1``.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from .charsets import Collation, collation
from .frm import FRM_HEADER_SIZE, FRM_MAGIC, FRM_VER, FRM_VER_EXPRESSSIONS, VIEW_MAGIC, FrmError, _extra2

FRM_FORMINFO_SIZE = 288
#: sql/table.h (extra2_frm_value_type)
EXTRA2_GIS = 2
EXTRA2_FIELD_FLAGS = 129
EXTRA2_FIELD_DATA_TYPE_INFO = 130
#: include/my_base.h
HA_OPTION_PACK_RECORD = 1
#: sql/field.h FIELDFLAG_*
FIELDFLAG_DECIMAL = 1
FIELDFLAG_BINARY = 1
FIELDFLAG_NUMBER = 2
FIELDFLAG_ZEROFILL = 4
FIELDFLAG_PACK = 120
FIELDFLAG_INTERVAL = 256
FIELDFLAG_BITFIELD = 512
FIELDFLAG_BLOB = 1024
FIELDFLAG_GEOM = 2048
FIELDFLAG_TREAT_BIT_AS_CHAR = 4096
FIELDFLAG_LONG_DECIMAL = 8192
FIELDFLAG_NO_DEFAULT = 16384
FIELDFLAG_MAYBE_NULL = 32768
FIELDFLAG_PACK_SHIFT = 3
FIELDFLAG_DEC_SHIFT = 8
FIELDFLAG_MAX_DEC = 63
NOT_FIXED_DEC = 39
#: include/mysql_com.h enum enum_field_types -> the name SQL gives it
MYSQL_TYPE_DECIMAL, MYSQL_TYPE_TINY, MYSQL_TYPE_SHORT, MYSQL_TYPE_LONG = 0, 1, 2, 3
MYSQL_TYPE_FLOAT, MYSQL_TYPE_DOUBLE, MYSQL_TYPE_NULL, MYSQL_TYPE_TIMESTAMP = 4, 5, 6, 7
MYSQL_TYPE_LONGLONG, MYSQL_TYPE_INT24, MYSQL_TYPE_DATE, MYSQL_TYPE_TIME = 8, 9, 10, 11
MYSQL_TYPE_DATETIME, MYSQL_TYPE_YEAR, MYSQL_TYPE_NEWDATE, MYSQL_TYPE_VARCHAR = 12, 13, 14, 15
MYSQL_TYPE_BIT, MYSQL_TYPE_TIMESTAMP2, MYSQL_TYPE_DATETIME2, MYSQL_TYPE_TIME2 = 16, 17, 18, 19
MYSQL_TYPE_VARCHAR_COMPRESSED, MYSQL_TYPE_BLOB_COMPRESSED = 140, 141
MYSQL_TYPE_NEWDECIMAL, MYSQL_TYPE_ENUM, MYSQL_TYPE_SET = 246, 247, 248
MYSQL_TYPE_TINY_BLOB, MYSQL_TYPE_MEDIUM_BLOB, MYSQL_TYPE_LONG_BLOB, MYSQL_TYPE_BLOB = 249, 250, 251, 252
MYSQL_TYPE_VAR_STRING, MYSQL_TYPE_STRING, MYSQL_TYPE_GEOMETRY = 253, 254, 255
#: sql/field.h Field::utype values that name something
UNIREG_CHECKS = {0: "NONE", 15: "NEXT_NUMBER", 18: "TIMESTAMP_OLD_FIELD", 21: "TIMESTAMP_DN_FIELD",
                 22: "TIMESTAMP_UN_FIELD", 23: "TIMESTAMP_DNUN_FIELD", 24: "TMYSQL_COMPRESSED"}
#: sql/sql_type_geom.h / sql/table.h enum geometry_types
GEOMETRY_TYPES = {0: "geometry", 1: "point", 2: "linestring", 3: "polygon", 4: "multipoint",
                  5: "multilinestring", 6: "multipolygon", 7: "geometrycollection"}
_INT_TYPES = {MYSQL_TYPE_TINY: ("tinyint", 1, 3), MYSQL_TYPE_SHORT: ("smallint", 2, 5),
              MYSQL_TYPE_INT24: ("mediumint", 3, 7), MYSQL_TYPE_LONG: ("int", 4, 10),
              MYSQL_TYPE_LONGLONG: ("bigint", 8, 19)}
_BLOB_NAMES = {1: "tiny", 2: "", 3: "medium", 4: "long"}
_BLOB_LENGTH_BYTES = {MYSQL_TYPE_TINY_BLOB: 1, MYSQL_TYPE_BLOB: 2, MYSQL_TYPE_MEDIUM_BLOB: 3, MYSQL_TYPE_LONG_BLOB: 4,
                      MYSQL_TYPE_GEOMETRY: 4, MYSQL_TYPE_BLOB_COMPRESSED: 4}
#: a blob field's record bytes: its length bytes + portable_sizeof_char_ptr (8)
PORTABLE_SIZEOF_CHAR_PTR = 8
#: strings/decimal.c dig2bytes
_DIG2BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)
#: sql-common/my_time.c: bytes of the fractional seconds of the MariaDB 5.3 (hires) formats
_SEC_PART_BYTES = (0, 1, 1, 2, 2, 3, 3)
#: sql/sql_const.h: MAX_DATETIME_WIDTH, MIN_TIME_WIDTH (temporal_dec's intlen)
MAX_DATETIME_WIDTH, MIN_TIME_WIDTH = 19, 10
#: data types a plugin names (EXTRA2_FIELD_DATA_TYPE_INFO) and their record bytes
#: (plugin/type_inet, plugin/type_uuid)
PLUGIN_TYPE_BYTES = {"inet6": 16, "inet4": 4, "uuid": 16}


def decimal_bin_size(precision: int, scale: int) -> int:
    """strings/decimal.c decimal_bin_size: the bytes of a DECIMAL(precision, scale)."""
    intg = precision - scale
    return intg // 9 * 4 + _DIG2BYTES[intg % 9] + scale // 9 * 4 + _DIG2BYTES[scale % 9]


@dataclass(frozen=True)
class FrmField:
    """One column of a ``.frm`` (a field record and what it refers to)."""

    index: int
    name: str
    real_type: int                   # enum_field_types as the .frm stores it (byte 13)
    length: int                      # the field record's u2 length (bytes for strings)
    pack_flag: int
    unireg_check: int
    record_offset: int               # in the record (recpos - 1)
    pack_length: int                 # the column's bytes in the record
    collation_number: int = 0        # 0 for numbers and dates (GEOMETRY: 0, its type in geometry_type)
    collation: Collation | None = None
    null_byte: int | None = None     # offset of its null bit's byte in the record (None: NOT NULL)
    null_bit: int = 0
    bit_byte: int | None = None      # a BIT column's odd bits: their byte and first bit in the null bytes
    bit_bit: int = 0
    interval: tuple[str, ...] = ()   # ENUM / SET values
    decimals: int = 0
    geometry_type: int | None = None
    data_type_info: str | None = None   # a plugin type's name (inet6, uuid)
    comment: str = ""
    stored: bool = True              # False: a virtual column (no bytes in the engine's row)
    #: sql/field.h field_visibility_t: VISIBLE 0, INVISIBLE_USER 1, INVISIBLE_SYSTEM 2 (system
    #: versioning's row_start / row_end when not declared), INVISIBLE_FULL 3
    visibility: int = 0

    @property
    def nullable(self) -> bool:
        return bool(self.pack_flag & FIELDFLAG_MAYBE_NULL)

    @property
    def unsigned(self) -> bool:
        return not self.pack_flag & FIELDFLAG_DECIMAL

    @property
    def zerofill(self) -> bool:
        return bool(self.pack_flag & FIELDFLAG_ZEROFILL)

    @property
    def blob_length_bytes(self) -> int:
        """A BLOB/TEXT/GEOMETRY column's length bytes (Field_blob packlength: the real type
        names it; GEOMETRY and a compressed blob: 4)."""
        return _BLOB_LENGTH_BYTES.get(self.real_type, 0)

    @property
    def is_blob(self) -> bool:
        return self.real_type in (MYSQL_TYPE_TINY_BLOB, MYSQL_TYPE_BLOB, MYSQL_TYPE_MEDIUM_BLOB,
                                  MYSQL_TYPE_LONG_BLOB, MYSQL_TYPE_GEOMETRY, MYSQL_TYPE_BLOB_COMPRESSED)

    @property
    def is_varchar(self) -> bool:
        return self.real_type in (MYSQL_TYPE_VARCHAR, MYSQL_TYPE_VARCHAR_COMPRESSED)

    @property
    def is_char(self) -> bool:
        """CHAR / BINARY: a fixed-width string (not ENUM/SET, not a plugin type)."""
        return self.real_type == MYSQL_TYPE_STRING and self.data_type_info is None

    @property
    def varchar_length_bytes(self) -> int:
        """The 1 or 2 length bytes before a VARCHAR's value in the record (Field_varchar)."""
        return 1 if self.pack_length - 1 < 256 else 2

    @property
    def mbmaxlen(self) -> int | None:
        return self.collation.mbmaxlen if self.collation else None

    @property
    def char_length(self) -> int | None:
        """Characters of a string column (CHARACTER_MAXIMUM_LENGTH), None for others or an
        unknown collation."""
        octets = self.octet_length
        if octets is None or self.collation is None:
            return None
        if self.is_blob:
            return octets                   # TEXT: information_schema gives its bytes
        return octets // self.collation.mbmaxlen

    @property
    def octet_length(self) -> int | None:
        """Bytes of a string column at most (CHARACTER_OCTET_LENGTH)."""
        if self.is_blob and self.real_type != MYSQL_TYPE_GEOMETRY:
            return (1 << (8 * self.blob_length_bytes)) - 1
        if self.is_varchar or self.is_char:
            return self.length
        if self.real_type in (MYSQL_TYPE_ENUM, MYSQL_TYPE_SET):
            return self.length
        return None

    @property
    def precision(self) -> int | None:
        """NUMERIC_PRECISION (DECIMAL's from its display length: my_decimal_length_to_precision)."""
        if self.real_type in _INT_TYPES:
            return _INT_TYPES[self.real_type][2] + (1 if self.real_type == MYSQL_TYPE_LONGLONG and self.unsigned
                                                    else 0)
        if self.real_type == MYSQL_TYPE_NEWDECIMAL:
            return self.length - (1 if self.decimals else 0) - (0 if self.unsigned or not self.length else 1)
        if self.real_type == MYSQL_TYPE_FLOAT:
            return 12
        if self.real_type == MYSQL_TYPE_DOUBLE:
            return 22
        if self.real_type == MYSQL_TYPE_BIT:
            return self.length
        return None

    @property
    def scale(self) -> int | None:
        """NUMERIC_SCALE: integers 0, DECIMAL its decimals, FLOAT/DOUBLE theirs when fixed."""
        if self.real_type in _INT_TYPES:
            return 0
        if self.real_type in (MYSQL_TYPE_NEWDECIMAL, MYSQL_TYPE_DECIMAL):
            return self.decimals
        if self.real_type in (MYSQL_TYPE_FLOAT, MYSQL_TYPE_DOUBLE):
            return None if self.decimals == NOT_FIXED_DEC else self.decimals
        return None

    @property
    def data_type(self) -> str:
        """The type's name as information_schema.COLUMNS.DATA_TYPE gives it."""
        t = self.real_type
        if self.data_type_info:
            return self.data_type_info
        if t in _INT_TYPES:
            return _INT_TYPES[t][0]
        binary = self.collation is not None and self.collation.binary
        if t in (MYSQL_TYPE_NEWDECIMAL, MYSQL_TYPE_DECIMAL):
            return "decimal"
        if t == MYSQL_TYPE_GEOMETRY:
            return GEOMETRY_TYPES.get(self.geometry_type or 0, "geometry")
        if self.is_blob:
            return _BLOB_NAMES.get(self.blob_length_bytes, "") + ("blob" if binary else "text")
        if self.is_varchar:
            return "varbinary" if binary else "varchar"
        if t == MYSQL_TYPE_STRING:
            return "binary" if binary else "char"
        return {MYSQL_TYPE_FLOAT: "float", MYSQL_TYPE_DOUBLE: "double", MYSQL_TYPE_NULL: "null",
                MYSQL_TYPE_TIMESTAMP: "timestamp", MYSQL_TYPE_TIMESTAMP2: "timestamp", MYSQL_TYPE_DATE: "date",
                MYSQL_TYPE_NEWDATE: "date", MYSQL_TYPE_TIME: "time", MYSQL_TYPE_TIME2: "time",
                MYSQL_TYPE_DATETIME: "datetime", MYSQL_TYPE_DATETIME2: "datetime", MYSQL_TYPE_YEAR: "year",
                MYSQL_TYPE_BIT: "bit", MYSQL_TYPE_ENUM: "enum", MYSQL_TYPE_SET: "set",
                MYSQL_TYPE_VAR_STRING: "varchar"}.get(t, f"type {t}")

    @property
    def datetime_precision(self) -> int | None:
        if self.real_type in (MYSQL_TYPE_TIMESTAMP, MYSQL_TYPE_TIMESTAMP2, MYSQL_TYPE_DATETIME,
                              MYSQL_TYPE_DATETIME2, MYSQL_TYPE_TIME, MYSQL_TYPE_TIME2):
            return self.decimals
        return None

    @property
    def column_type(self) -> str:
        """The type as information_schema.COLUMNS.COLUMN_TYPE writes it."""
        name = self.data_type
        t = self.real_type
        if t in _INT_TYPES:
            out = f"{name}({self.length})"
        elif t in (MYSQL_TYPE_NEWDECIMAL, MYSQL_TYPE_DECIMAL):
            out = f"decimal({self.precision},{self.decimals})"
        elif t in (MYSQL_TYPE_FLOAT, MYSQL_TYPE_DOUBLE):
            out = name if self.decimals == NOT_FIXED_DEC else f"{name}({self.length},{self.decimals})"
        elif self.is_varchar or self.is_char:
            out = f"{name}({self.char_length})"
        elif t in (MYSQL_TYPE_ENUM, MYSQL_TYPE_SET):
            out = name + "(" + ",".join("'" + v.replace("'", "''") + "'" for v in self.interval) + ")"
        elif self.datetime_precision:
            out = f"{name}({self.decimals})"
        elif t in (MYSQL_TYPE_BIT, MYSQL_TYPE_YEAR):
            out = f"{name}({self.length})"
        else:
            out = name
        if t in _INT_TYPES or t in (MYSQL_TYPE_NEWDECIMAL, MYSQL_TYPE_DECIMAL, MYSQL_TYPE_FLOAT, MYSQL_TYPE_DOUBLE):
            out += " unsigned" if self.unsigned else ""
            out += " zerofill" if self.zerofill else ""
        return out


@dataclass(frozen=True)
class FrmColumns:
    """The columns of a table's ``.frm`` and its record's shape."""

    fields: tuple[FrmField, ...]
    reclength: int
    null_bytes: int
    null_fields: int
    db_create_options: int
    table_collation: Collation | None = None
    row_type: int = 0                # sql/handler.h enum row_type (header byte 40)

    @property
    def pack_record(self) -> bool:
        """HA_OPTION_PACK_RECORD: the table's rows are packed (Dynamic); no reserved null bit."""
        return bool(self.db_create_options & HA_OPTION_PACK_RECORD)

    def names(self) -> list[str]:
        return [f.name for f in self.fields]


def _typelibs(seg: bytes, count: int, at: int) -> tuple[list[tuple[bytes, ...]], int]:
    """``count`` TYPELIBs from ``seg`` (sql/table.cc fix_type_pointers): each its separator,
    values each followed by it, then a 0; an empty one is a lone 0.  The libs and the bytes read."""
    libs, pos = [], 0
    for _ in range(count):
        if pos >= len(seg):
            raise FrmError(f"typelib {len(libs) + 1} of {count} runs past its segment", at + pos)
        sep = seg[pos]
        if sep == 0:
            libs.append(())
            pos += 1
            continue
        values = []
        p = pos + 1
        while True:
            q = seg.find(bytes([sep]), p)
            end0 = seg.find(b"\0", p)
            if q < 0 or (end0 >= 0 and end0 < q and sep != 0):
                break
            values.append(seg[p:q])
            p = q + 1
            if p < len(seg) and seg[p] == 0:
                break
        if p >= len(seg) or seg[p] != 0:
            raise FrmError(f"typelib {len(libs) + 1} of {count} has no end mark", at + p)
        libs.append(tuple(values))
        pos = p + 1
    return libs, pos


def _field_type_infos(raw: bytes | None, fields: int, at: int) -> dict[int, str]:
    """EXTRA2_FIELD_DATA_TYPE_INFO (table.cc Field_data_type_info_array::parse): pairs of a
    net-length field number and a net-length type name."""
    out: dict[int, str] = {}
    if not raw:
        return out
    pos = 0

    def netlen() -> int:
        nonlocal pos
        b = raw[pos]
        if b < 251:
            pos += 1
            return b
        n = {252: 2, 253: 3, 254: 8}.get(b)
        if n is None or pos + 1 + n > len(raw):
            raise FrmError("bad length in the field data type info", at + pos)
        v = int.from_bytes(raw[pos + 1:pos + 1 + n], "little")
        pos += 1 + n
        return v

    while pos < len(raw):
        nr = netlen()
        n = netlen()
        if nr >= fields or pos + n > len(raw) or not n:
            raise FrmError(f"field data type info for field {nr} of {fields} is bad", at + pos)
        out[nr] = raw[pos:pos + n].decode("utf-8", "replace")
        pos += n
    return out


def _pack_length(real_type: int, length: int, pack_flag: int, decimals: int, interval_values: int,
                 type_info: str | None) -> int:
    """A column's bytes in the record (sql/field.h each Field's pack_length)."""
    t = real_type
    if type_info:
        if type_info in PLUGIN_TYPE_BYTES:
            return PLUGIN_TYPE_BYTES[type_info]
    if t in _INT_TYPES:
        return _INT_TYPES[t][1]
    if t == MYSQL_TYPE_NEWDECIMAL:
        unsigned = not pack_flag & FIELDFLAG_DECIMAL
        precision = length - (1 if decimals else 0) - (0 if unsigned or not length else 1)
        return decimal_bin_size(precision, decimals)
    if t in (MYSQL_TYPE_DECIMAL, MYSQL_TYPE_STRING, MYSQL_TYPE_VAR_STRING):
        return length
    if t in (MYSQL_TYPE_VARCHAR, MYSQL_TYPE_VARCHAR_COMPRESSED):
        return length + (1 if length < 256 else 2)
    if t in _BLOB_LENGTH_BYTES:
        return _BLOB_LENGTH_BYTES[t] + PORTABLE_SIZEOF_CHAR_PTR
    if t == MYSQL_TYPE_ENUM:
        return 1 if interval_values < 256 else 2
    if t == MYSQL_TYPE_SET:
        n = (interval_values + 7) // 8
        return 8 if n > 4 else n
    if t == MYSQL_TYPE_BIT:
        return (length + 7) // 8 if pack_flag & FIELDFLAG_TREAT_BIT_AS_CHAR else length // 8
    fixed = {MYSQL_TYPE_FLOAT: 4, MYSQL_TYPE_DOUBLE: 8, MYSQL_TYPE_NULL: 0, MYSQL_TYPE_YEAR: 1,
             MYSQL_TYPE_DATE: 4, MYSQL_TYPE_NEWDATE: 3,
             MYSQL_TYPE_TIMESTAMP2: 4 + (decimals + 1) // 2, MYSQL_TYPE_DATETIME2: 5 + (decimals + 1) // 2,
             MYSQL_TYPE_TIME2: 3 + (decimals + 1) // 2}
    if t in fixed:
        return fixed[t]
    sec = _SEC_PART_BYTES[min(decimals, 6)]
    if t == MYSQL_TYPE_TIMESTAMP:
        return 4 + sec
    if t == MYSQL_TYPE_DATETIME:
        return 5 + sec if decimals else 8
    if t == MYSQL_TYPE_TIME:
        return 3 + sec
    raise ValueError(t)


def read_frm_columns(buf: bytes, path: str = "") -> FrmColumns:
    """The columns of the ``.frm`` in ``buf`` (the whole file); FrmError (with ``path`` in its
    message and the offset) for a view, a cut file, an unknown format or field type."""
    where = f"{path}: " if path else ""

    def err(message: str, offset: int) -> FrmError:
        return FrmError(where + message, offset)

    if buf.startswith(VIEW_MAGIC):
        raise err("a view: its columns are its query's, not stored in the .frm", 0)
    if buf[:2] != FRM_MAGIC:
        raise err(f"magic {buf[:2].hex(' ') or '(none)'}: not a binary .frm", 0)
    if len(buf) < FRM_HEADER_SIZE + FRM_FORMINFO_SIZE:
        raise err(f"{len(buf)} bytes: shorter than the header and forminfo", len(buf))
    version = buf[2]
    if not FRM_VER + 3 <= version <= FRM_VER_EXPRESSSIONS:
        raise err(f"frm version {version}: only {FRM_VER + 3}..{FRM_VER_EXPRESSSIONS} (MySQL 4.1 and later) read", 2)
    if buf[32] != 0:
        raise err("a .frm from before MySQL 3.23 (null fields not first)", 32)
    e2len = struct.unpack_from("<H", buf, 4)[0]
    if FRM_HEADER_SIZE + e2len + 4 > len(buf):
        raise err(f"extra2 segment of {e2len} bytes past the end of the file", 4)
    try:
        e2 = _extra2(buf, e2len)
    except FrmError as e:
        raise err(str(e), e.offset) from None
    fpos = struct.unpack_from("<I", buf, FRM_HEADER_SIZE + e2len)[0]
    if not fpos or fpos + FRM_FORMINFO_SIZE > len(buf):
        raise err(f"forminfo at {fpos} (+{FRM_FORMINFO_SIZE}) past the end of the file ({len(buf)} bytes)",
                  FRM_HEADER_SIZE + e2len)
    forminfo = buf[fpos:fpos + FRM_FORMINFO_SIZE]
    (fields,) = struct.unpack_from("<H", forminfo, 258)
    (screens,) = struct.unpack_from("<H", forminfo, 260)
    n_length, interval_count, interval_parts, int_length = struct.unpack_from("<HHHH", forminfo, 268)
    null_fields, com_length, vcol_length = struct.unpack_from("<HHH", forminfo, 282)
    db_create_options = struct.unpack_from("<H", buf, 30)[0]
    reclength = struct.unpack_from("<H", buf, 16)[0]
    field_pack_length = 17
    disk = fpos + FRM_FORMINFO_SIZE
    strpos = disk + screens
    names_at = strpos + fields * field_pack_length
    end = names_at + n_length + int_length + com_length + vcol_length
    if end > len(buf):
        raise err(f"{fields} field records, names, intervals and comments end at {end}, past the end of the "
                  f"file ({len(buf)} bytes)", strpos)
    names, used = _typelibs(buf[names_at:names_at + n_length], 1, names_at)
    names_list = [n.decode("utf-8", "replace") for n in names[0]]
    if len(names_list) != fields:
        raise err(f"{len(names_list)} field names for {fields} fields", names_at)
    ints_at = names_at + n_length
    intervals, _ = _typelibs(buf[ints_at:ints_at + int_length], interval_count, ints_at)
    if sum(len(v) + 1 for v in intervals) != interval_parts:           # unireg.cc: count + 1 each
        raise err(f"{sum(len(v) for v in intervals)} interval values in {interval_count} intervals, the forminfo "
                  f"says {interval_parts} parts", ints_at)
    comment_pos = ints_at + int_length
    infos = _field_type_infos(e2.get(EXTRA2_FIELD_DATA_TYPE_INFO), fields, FRM_HEADER_SIZE)
    flags = e2.get(EXTRA2_FIELD_FLAGS)
    if flags is not None and len(flags) != fields:
        raise err(f"{len(flags)} field flags for {fields} fields", FRM_HEADER_SIZE)
    table_coll = collation((buf[41] << 8) | buf[38])
    null_pos = 0
    null_bit = 0 if db_create_options & HA_OPTION_PACK_RECORD else 1
    out: list[FrmField] = []
    vcol_fields = _vcol_field_numbers(buf[end - vcol_length:end], version) if vcol_length else {}
    for i in range(fields):
        at = strpos + i * field_pack_length
        rec = buf[at:at + field_pack_length]
        length = struct.unpack_from("<H", rec, 3)[0]
        recpos = int.from_bytes(rec[5:8], "little")
        pack_flag = struct.unpack_from("<H", rec, 8)[0]
        unireg = rec[10] & 127
        interval_nr = rec[12]
        real_type = rec[13]
        comment_length = struct.unpack_from("<H", rec, 15)[0]
        info = infos.get(i)
        geometry_type = None
        coll_nr = rec[14] | (rec[11] << 8)
        if real_type == MYSQL_TYPE_GEOMETRY:
            geometry_type, coll_nr = rec[14], BINARY_COLLATION_NR
        decimals = 0
        if real_type in (MYSQL_TYPE_NEWDECIMAL, MYSQL_TYPE_DECIMAL, MYSQL_TYPE_FLOAT, MYSQL_TYPE_DOUBLE):
            decimals = (pack_flag >> FIELDFLAG_DEC_SHIFT) & FIELDFLAG_MAX_DEC
            pack_flag &= ~(FIELDFLAG_MAX_DEC << FIELDFLAG_DEC_SHIFT)
        elif real_type in (MYSQL_TYPE_TIMESTAMP, MYSQL_TYPE_TIMESTAMP2, MYSQL_TYPE_DATETIME, MYSQL_TYPE_DATETIME2):
            decimals = length - MAX_DATETIME_WIDTH - 1 if length > MAX_DATETIME_WIDTH else 0
        elif real_type in (MYSQL_TYPE_TIME, MYSQL_TYPE_TIME2):
            decimals = length - MIN_TIME_WIDTH - 1 if length > MIN_TIME_WIDTH else 0
        if interval_nr > len(intervals):
            raise err(f"field {names_list[i]!r} names interval {interval_nr} of {len(intervals)}", at + 12)
        coll = collation(coll_nr) if coll_nr and _has_charset(real_type, info) else None
        values = intervals[interval_nr - 1] if interval_nr else ()
        if values and coll is not None and coll.mbminlen > 1:
            values = tuple(bytes.fromhex(v.decode("ascii", "replace")) for v in values)
        text_values = tuple(v.decode(_py_codec(coll), "replace") for v in values)
        try:
            pack_length = _pack_length(real_type, length, pack_flag, decimals, len(values), info)
        except ValueError:
            raise err(f"field {names_list[i]!r}: unknown field type {real_type}", at + 13) from None
        if recpos < 1 or recpos - 1 + pack_length > reclength:
            raise err(f"field {names_list[i]!r} at record offset {recpos - 1} (+{pack_length}) outside the "
                      f"record of {reclength} bytes", at + 5)
        comment = buf[comment_pos:comment_pos + comment_length].decode("utf-8", "replace")
        comment_pos += comment_length
        bit_byte = None
        bit_bit = 0
        nullable = bool(pack_flag & FIELDFLAG_MAYBE_NULL)
        nb, nbit = (null_pos, null_bit) if nullable else (None, 0)
        if real_type == MYSQL_TYPE_BIT and not pack_flag & FIELDFLAG_TREAT_BIT_AS_CHAR:
            # Field_bit: its odd bits after its null bit (sql/field.cc make_field)
            bit_byte, bit_bit = null_pos, null_bit
            if nullable:
                bit_bit += 1
                if bit_bit > 7:
                    bit_byte, bit_bit = bit_byte + 1, 0
            null_bit += length & 7
            if null_bit > 7:
                null_pos, null_bit = null_pos + 1, null_bit - 8
        if nullable:
            null_bit = (null_bit + 1) & 7
            if not null_bit:
                null_pos += 1
        stored = vcol_fields.get(i, True)
        out.append(FrmField(index=i, name=names_list[i], real_type=real_type, length=length, pack_flag=pack_flag,
                            unireg_check=unireg, record_offset=recpos - 1, pack_length=pack_length,
                            collation_number=coll_nr if real_type != MYSQL_TYPE_GEOMETRY else 0, collation=coll,
                            null_byte=nb, null_bit=nbit, bit_byte=bit_byte, bit_bit=bit_bit, interval=text_values,
                            decimals=decimals, geometry_type=geometry_type, data_type_info=info, comment=comment,
                            stored=stored, visibility=(flags[i] & VISIBILITY_MASK) if flags else 0))
    null_bytes = null_pos + (null_bit + 7) // 8
    return FrmColumns(fields=tuple(out), reclength=reclength, null_bytes=null_bytes, null_fields=null_fields,
                      db_create_options=db_create_options, table_collation=table_coll, row_type=buf[40])


BINARY_COLLATION_NR = 63
#: sql/field.h enum_vcol_info_type: the generated column kinds (VCOL_GENERATED_VIRTUAL 0, _STORED 1)
VCOL_GENERATED_VIRTUAL, VCOL_GENERATED_STORED = 0, 1
FRM_VCOL_NEW_HEADER_SIZE = 6


def _vcol_field_numbers(seg: bytes, version: int) -> dict[int, bool]:
    """Generated columns in the vcol screen (10.2+, table.cc parse_vcol_defs: type, u2 field
    number, u2 expression length, name length, name, expression): field -> stored or not."""
    out: dict[int, bool] = {}
    if version < FRM_VER_EXPRESSSIONS:
        return out
    pos = 0
    while pos + FRM_VCOL_NEW_HEADER_SIZE <= len(seg):
        typ = seg[pos]
        nr, expr_len = struct.unpack_from("<HH", seg, pos + 1)
        name_len = seg[pos + 5]
        if typ == VCOL_GENERATED_VIRTUAL:
            out[nr] = False
        elif typ == VCOL_GENERATED_STORED:
            out[nr] = True
        pos += FRM_VCOL_NEW_HEADER_SIZE + name_len + expr_len
    return out


#: EXTRA2_FIELD_FLAGS: the low bits are the column's visibility (table.cc f_visibility)
VISIBILITY_MASK = 3
INVISIBLE_SYSTEM = 2


def _has_charset(real_type: int, type_info: str | None) -> bool:
    """Whether the field record's collation bytes mean a collation: strings, blobs, ENUM/SET
    (numbers and dates carry the table's number there, unused)."""
    return type_info is None and real_type in (
        MYSQL_TYPE_STRING, MYSQL_TYPE_VAR_STRING, MYSQL_TYPE_VARCHAR, MYSQL_TYPE_VARCHAR_COMPRESSED,
        MYSQL_TYPE_TINY_BLOB, MYSQL_TYPE_BLOB, MYSQL_TYPE_MEDIUM_BLOB, MYSQL_TYPE_LONG_BLOB,
        MYSQL_TYPE_BLOB_COMPRESSED, MYSQL_TYPE_ENUM, MYSQL_TYPE_SET, MYSQL_TYPE_DECIMAL)


def _py_codec(coll: Collation | None) -> str:
    if coll is None:
        return "utf-8"
    return {"latin1": "cp1252", "utf8mb3": "utf-8", "utf8mb4": "utf-8", "ascii": "ascii", "binary": "latin-1",
            "ucs2": "utf-16-be", "utf16": "utf-16-be", "utf16le": "utf-16-le", "utf32": "utf-32-be"}.get(
        coll.charset, "latin-1")

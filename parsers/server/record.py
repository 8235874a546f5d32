"""The values of one row in the server's record format (``TABLE::record[0]``), the layout a
``.frm`` describes (frmfields.py) and a MyISAM Fixed row (storage/myisam/mi_statrec.c
``_mi_write_static_record`` writes the record as it is) or an Aria STATIC_RECORD row
stores: the null bytes, then each column at its offset and pack length (sql/field.h):
numbers and dates at their width, CHAR padded with spaces to its full width in bytes,
VARCHAR behind its 1 or 2 length bytes (Field_varchar; the bytes after its value are left as
they were), BLOB/TEXT as length bytes and a pointer (not in a stored row: a table with one
is never Fixed)."""
from __future__ import annotations

from dataclasses import dataclass

from .frmfields import (_INT_TYPES, MYSQL_TYPE_DATETIME2, MYSQL_TYPE_GEOMETRY, MYSQL_TYPE_NEWDECIMAL, FrmColumns,
                         FrmField)


class RecordError(ValueError):
    """A row that does not fit its columns; ``offset`` is the byte in the row."""

    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.offset = offset


@dataclass(frozen=True)
class Value:
    """One column of a row: None for NULL, else its bytes as the record holds them (a VARCHAR
    its value without the length bytes; BIT its full bytes, odd bits left in the null bytes)."""

    field: FrmField
    data: bytes | None


def is_null(rec: bytes, f: FrmField) -> bool:
    return f.null_byte is not None and bool(rec[f.null_byte] >> f.null_bit & 1)


def record_values(rec: bytes, cols: FrmColumns, blobs: dict[int, bytes] | None = None) -> list[Value]:
    """Each stored column's value in the record ``rec`` (``cols.reclength`` bytes); BLOB/TEXT
    values from ``blobs`` (the unpacked blobs by their column's record offset: a packed row's),
    without it a BLOB column is an error (its value is not in the record)."""
    if len(rec) < cols.reclength:
        raise RecordError(f"row of {len(rec)} bytes, the table's record is {cols.reclength}", len(rec))
    out = []
    for f in cols.fields:
        if not f.stored:
            continue
        if is_null(rec, f):
            out.append(Value(f, None))
            continue
        at = f.record_offset
        if f.is_blob:
            if blobs is None:
                raise RecordError(f"column {f.name!r} is a BLOB: its value is not in the record", at)
            out.append(Value(f, blobs.get(at, b"")))
        elif f.is_varchar:
            nb = f.varchar_length_bytes
            n = int.from_bytes(rec[at:at + nb], "little")
            if n > f.pack_length - nb:
                raise RecordError(f"VARCHAR {f.name!r} of {n} bytes, at most {f.pack_length - nb}", at)
            out.append(Value(f, bytes(rec[at + nb:at + nb + n])))
        else:
            out.append(Value(f, bytes(rec[at:at + f.pack_length])))
    return out


_FIXED, _LENGTH = 0, 1


def pack_plan(cols: FrmColumns) -> tuple:
    """How :func:`unpack_row` reads each stored column (worked out once per table):
    (field, null byte or -1, null bit, how, bytes: the pack length or the length bytes, CHAR)."""
    plan = []
    for f in cols.fields:
        if not f.stored:
            continue
        if f.is_char or f.is_varchar:
            width = f.pack_length if f.is_char else f.pack_length - f.varchar_length_bytes
            how, n = _LENGTH, 2 if width > 255 else 1
        elif f.is_blob:
            how, n = _LENGTH, f.blob_length_bytes
        else:
            how, n = _FIXED, f.pack_length
        plan.append((f, -1 if f.null_byte is None else f.null_byte, f.null_bit, how, n, f.is_char))
    return tuple(plan)


def unpack_row(packed: bytes, cols: FrmColumns, plan: tuple | None = None) -> list[Value]:
    """Each stored column's value in a row packed as ha_archive.cc ``pack_row`` packs it (the
    record's null bytes, then every non-NULL column's ``Field::pack``, sql/field.cc): CHAR its
    bytes with trailing spaces dropped behind a length byte (two when the column is over 255
    bytes), VARCHAR behind one or two length bytes likewise, BLOB/TEXT behind its length bytes,
    the others at their pack length.  CHAR comes back padded to its width, as the record holds
    it; RecordError when the row is cut or longer than its columns.  ``plan``: :func:`pack_plan`
    of ``cols``, when many rows are read."""
    nb = cols.null_bytes
    if len(packed) < nb:
        raise RecordError(f"packed row of {len(packed)} bytes, shorter than its {nb} null bytes", len(packed))
    pos = nb
    out = []
    end = len(packed)
    for f, null_byte, null_bit, how, n, char in plan or pack_plan(cols):
        if null_byte >= 0 and packed[null_byte] >> null_bit & 1:
            out.append(Value(f, None))
            continue
        if how == _LENGTH:
            size = packed[pos] if n == 1 else int.from_bytes(packed[pos:pos + n], "little")
            pos += n
        else:
            size = n
        if pos + size > end:
            raise RecordError(f"column {f.name!r} ({size} bytes at {pos}) runs past the packed row of {end}", pos)
        data = packed[pos:pos + size]
        pos += size
        out.append(Value(f, data.ljust(f.pack_length, b" ") if char else data))
    if pos != end:
        raise RecordError(f"packed row of {end} bytes, its columns end at {pos}", pos)
    return out


#: strings/decimal.c dig2bytes, and the digits a partial word of n bytes holds
_DIG2BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)
DIG_PER_DEC1 = 9


def decimal_text(data: bytes, precision: int, scale: int) -> str:
    """A DECIMAL's binary form (strings/decimal.c bin2decimal: big-endian words of 9 digits,
    a partial word first and last, the sign bit of the first byte flipped, a negative number's
    bytes inverted) as SQL prints it."""
    b = bytearray(data)
    negative = not b[0] & 0x80
    b[0] ^= 0x80
    if negative:
        b = bytearray(x ^ 0xFF for x in b)
    intg = precision - scale
    pos = 0
    digits = ""

    def take(n_digits: int) -> str:
        nonlocal pos
        n = _DIG2BYTES[n_digits] if n_digits < DIG_PER_DEC1 else 4
        v = int.from_bytes(b[pos:pos + n], "big")
        pos += n
        return str(v).zfill(n_digits)

    if intg % DIG_PER_DEC1:
        digits += take(intg % DIG_PER_DEC1)
    for _ in range(intg // DIG_PER_DEC1):
        digits += take(DIG_PER_DEC1)
    frac = ""
    for _ in range(scale // DIG_PER_DEC1):
        frac += take(DIG_PER_DEC1)
    if scale % DIG_PER_DEC1:
        frac += take(scale % DIG_PER_DEC1)
    whole = digits.lstrip("0") or "0"
    text = whole + ("." + frac if scale else "")
    return "-" + text if negative and text.strip("0.") else text


def datetime2_text(data: bytes, decimals: int) -> str:
    """A DATETIME(n) of MariaDB 10.1+'s MySQL 5.6 format (sql-common/my_time.c
    my_datetime_packed_from_binary: 40 bits big-endian less 0x8000000000: year*13+month (17
    bits), day (5), hour (5), minute (6), second (6); then the fraction's bytes)."""
    v = int.from_bytes(data[:5], "big") - 0x8000000000
    ym, day = v >> 22 & 0x1FFFF, v >> 17 & 31
    hour, minute, second = v >> 12 & 31, v >> 6 & 63, v & 63
    text = f"{ym // 13:04d}-{ym % 13:02d}-{day:02d} {hour:02d}:{minute:02d}:{second:02d}"
    if decimals:
        frac = int.from_bytes(data[5:], "big", signed=True)
        text += "." + str(frac * 10 ** (6 - 2 * ((decimals + 1) // 2))).zfill(6)[:decimals]
    return text


def formatter(f: FrmField):
    """The function giving a value of column ``f`` as SQL prints it (SELECT ... INTO OUTFILE, a
    TSV field) from its bytes: integers, DECIMAL, DATETIME(n), CHAR (trailing spaces dropped, as
    the server gives a CHAR back), VARCHAR and TEXT; ValueError for another type."""
    t = f.real_type
    if t in _INT_TYPES:
        signed = not f.unsigned
        return lambda b: str(int.from_bytes(b, "little", signed=signed))
    if t == MYSQL_TYPE_NEWDECIMAL:
        precision, scale = f.precision or 0, f.decimals
        return lambda b: decimal_text(b, precision, scale)
    if t == MYSQL_TYPE_DATETIME2:
        dec = f.decimals
        return lambda b: datetime2_text(b, dec)
    codec = "utf-8" if f.collation is None or f.collation.charset.startswith("utf8") else "latin-1"
    if f.is_char:
        return lambda b: b.rstrip(b" ").decode(codec, "replace")
    if f.is_varchar or (f.is_blob and t != MYSQL_TYPE_GEOMETRY):
        return lambda b: b.decode(codec, "replace")
    raise ValueError(f"column {f.name!r}: no text form for type {f.data_type} here")


def value_text(v: Value) -> str | None:
    """:func:`formatter`'s text of one value (None for NULL)."""
    return None if v.data is None else formatter(v.field)(v.data)

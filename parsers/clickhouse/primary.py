"""Primary index (``primary.idx`` / ``primary.cidx``): one entry per mark, the
PRIMARY KEY values of the granule's first row (the final mark: of the last
row) written back to back in RowBinary (MergeTreeDataPartWriterOnDisk.cpp
``calculateAndSerializePrimaryIndex``; fixtures/clickhouse/FORMAT_NOTES.md section 5).

Only the key types whose RowBinary layout is fixed and simple are decoded
(integers, floats, Date, DateTime, String, FixedString, UUID-less); others
stop the decode with a clear message.
"""
from __future__ import annotations

import datetime as _dt
import re
import struct

from .columns import parse_type, split_top_level
from .varint import VarintError, read_string_binary

_FIXED = {"UInt8": "<B", "UInt16": "<H", "UInt32": "<I", "UInt64": "<Q", "Int8": "<b", "Int16": "<h",
          "Int32": "<i", "Int64": "<q", "Float32": "<f", "Float64": "<d", "Bool": "<B", "Date": "<H",
          "Date32": "<i", "DateTime": "<I", "IPv4": "<I", "Enum8": "<b", "Enum16": "<h"}

# key expressions whose result type is known from the function alone
_FUNC_TYPES = {
    "toStartOfHour": "DateTime", "toStartOfMinute": "DateTime", "toStartOfFiveMinutes": "DateTime",
    "toStartOfFifteenMinutes": "DateTime", "toStartOfTenMinutes": "DateTime", "toStartOfDay": "DateTime",
    "toDateTime": "DateTime", "toDate": "Date", "toStartOfMonth": "Date", "toMonday": "Date",
    "toStartOfWeek": "Date", "toStartOfYear": "Date", "toStartOfQuarter": "Date", "toYYYYMM": "UInt32",
    "toYYYYMMDD": "UInt32", "toYear": "UInt16", "cityHash64": "UInt64", "intHash64": "UInt64",
    "intHash32": "UInt32", "sipHash64": "UInt64", "xxHash64": "UInt64",
}


class PrimaryIndexError(Exception):
    def __init__(self, message: str, offset: int | None = None):
        self.offset = offset
        super().__init__(message)


def key_expressions(expr: str) -> list[str]:
    """The key expressions of a PRIMARY KEY / ORDER BY clause."""
    expr = expr.strip()
    if expr.startswith("(") and expr.endswith(")"):
        inner = expr[1:-1]
        depth = 0
        balanced = True
        for ch in inner:
            depth += ch == "("
            depth -= ch == ")"
            if depth < 0:
                balanced = False
                break
        if balanced:
            expr = inner
    return [e.strip().strip("`") for e in split_top_level(expr) if e.strip() and e.strip() != "tuple()"]


def key_types(exprs: list[str], column_types: dict[str, str]) -> list[str | None]:
    """Type of each key expression: a column's type, a known function's result, else None."""
    out: list[str | None] = []
    for e in exprs:
        if e in column_types:
            out.append(column_types[e])
            continue
        m = re.match(r"^(\w+)\(", e)
        out.append(_FUNC_TYPES.get(m.group(1)) if m else None)
    return out


def _fmt_datetime(v: int) -> str:
    return (_dt.datetime(1970, 1, 1) + _dt.timedelta(seconds=v)).strftime("%Y-%m-%d %H:%M:%S")


def read_key_value(buf: bytes, offset: int, type_name: str):
    """Reads one RowBinary key value of ``type_name`` at ``offset``; returns (value, next offset)."""
    t = parse_type(type_name)
    name = t.name
    if name == "LowCardinality" and t.args:
        return read_key_value(buf, offset, t.args[0].raw)
    if name in ("String",):
        try:
            raw, pos = read_string_binary(buf, offset, max_len=1 << 24)
        except VarintError as e:
            raise PrimaryIndexError(str(e), e.offset) from None
        return raw.decode("utf-8", "replace"), pos
    if name == "FixedString":
        n = int(re.search(r"\((\d+)\)", type_name).group(1))
        if offset + n > len(buf):
            raise PrimaryIndexError("FixedString runs past the end", offset)
        return buf[offset:offset + n].decode("utf-8", "replace"), offset + n
    fmt = _FIXED.get(name)
    if fmt is None:
        raise PrimaryIndexError(f"key type {type_name} is not decoded", offset)
    size = struct.calcsize(fmt)
    if offset + size > len(buf):
        raise PrimaryIndexError(f"{type_name} value runs past the end", offset)
    (v,) = struct.unpack_from(fmt, buf, offset)
    if name == "DateTime":
        v = _fmt_datetime(v)
    elif name == "Date":
        v = (_dt.date(1970, 1, 1) + _dt.timedelta(days=v)).isoformat()
    return v, offset + size


def read_primary_index(buf: bytes, types: list[str], max_rows: int = 10_000_000) -> list[list]:
    """Decodes every entry of a primary index with the given key types."""
    rows: list[list] = []
    pos = 0
    while pos < len(buf):
        if len(rows) >= max_rows:
            raise PrimaryIndexError(f"more than {max_rows} entries", pos)
        row = []
        for t in types:
            v, pos = read_key_value(buf, pos, t)
            row.append(v)
        rows.append(row)
    return rows

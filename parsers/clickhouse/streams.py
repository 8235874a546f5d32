"""Streams of a part: which ``.bin`` / marks file holds which column and
substream, and how the engine counts them.

Stream names come from ``columns_substreams.txt`` when the part has it (26.x
writes it for every part); otherwise they are derived from the column type as
ISerialization::enumerateStreams does (src/DataTypes/Serializations/*):
``.null`` (Nullable), ``.size<N>`` (Array offsets, level N), ``.size``
(String with_size_stream), ``.dict`` (LowCardinality), ``.sparse.idx``
(Sparse), ``%2E``-joined Tuple/Map elements, and a Nested column's offsets
``<nested>.size0`` shared by all its columns.

File names: a stream name is escaped with escapeForFileName
(src/Common/escapeForFileName.cpp: keep ``[A-Za-z0-9_]``, the rest ``%XX``),
and when longer than ``max_file_name_length`` (default 127) and
``replace_long_file_name_to_hash`` is on, replaced by the hex SipHash128 of
the name (MergeTreeData.cpp ``replaceFileNameToHashIfNeeded``).

Accounting (system.parts_columns): a stream listed for several columns (a
Nested ``n.size0``) counts for the first column only.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

from .columns import Column, ColumnsError, TypeNode, parse_type

# MergeTreeSettings.h defaults (manifest merge_tree_setting_defaults)
max_file_name_length = 127

_SAFE = re.compile(rb"[A-Za-z0-9_]")


def escape_for_file_name(name: str) -> str:
    """escapeForFileName: ``[A-Za-z0-9_]`` kept, every other byte as ``%XX``."""
    out = []
    for b in name.encode("utf-8"):
        c = chr(b)
        if c.isascii() and (c.isalnum() or c == "_"):
            out.append(c)
        else:
            out.append(f"%{b:02X}")
    return "".join(out)


def unescape_for_file_name(name: str) -> str:
    """unescapeForFileName: ``%XX`` back to bytes."""
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), name)


# -- SipHash (src/Common/SipHash.h, the engine's 128-bit variant) -------------
_M64 = (1 << 64) - 1


def _rotl(x: int, b: int) -> int:
    return ((x << b) | (x >> (64 - b))) & _M64


def _sip_rounds(v0, v1, v2, v3, n):
    for _ in range(n):
        v0 = (v0 + v1) & _M64
        v1 = _rotl(v1, 13) ^ v0
        v0 = _rotl(v0, 32)
        v2 = (v2 + v3) & _M64
        v3 = _rotl(v3, 16) ^ v2
        v0 = (v0 + v3) & _M64
        v3 = _rotl(v3, 21) ^ v0
        v2 = (v2 + v1) & _M64
        v1 = _rotl(v1, 17) ^ v2
        v2 = _rotl(v2, 32)
    return v0, v1, v2, v3


def sip_hash128(data: bytes) -> tuple[int, int]:
    """SipHash-2-4 with zero keys and the engine's 128-bit finish: (low64, high64)."""
    v0, v1, v2, v3 = 0x736F6D6570736575, 0x646F72616E646F6D, 0x6C7967656E657261, 0x7465646279746573
    n = len(data)
    full = n - n % 8
    for i in range(0, full, 8):
        m = int.from_bytes(data[i:i + 8], "little")
        v3 ^= m
        v0, v1, v2, v3 = _sip_rounds(v0, v1, v2, v3, 2)
        v0 ^= m
    tail = bytearray(data[full:]) + bytes(8 - (n - full))
    tail[7] = n & 0xFF
    m = int.from_bytes(tail, "little")
    v3 ^= m
    v0, v1, v2, v3 = _sip_rounds(v0, v1, v2, v3, 2)
    v0 ^= m
    v2 ^= 0xFF
    v0, v1, v2, v3 = _sip_rounds(v0, v1, v2, v3, 4)
    return v0 ^ v1, v2 ^ v3


def hashed_file_name(stream: str) -> str:
    """The hex name the engine uses for a stream whose name is too long."""
    lo, hi = sip_hash128(stream.encode("utf-8"))
    return f"{hi:016x}{lo:016x}"


def stream_file_candidates(stream: str) -> list[str]:
    """File name stems (without extension) a stream may be stored under."""
    out = [stream]
    if len(stream) > max_file_name_length:
        out.append(hashed_file_name(stream))
    return out


# -- streams from a type (parts without columns_substreams.txt) ---------------
def type_streams(prefix: str, t: TypeNode, array_level: int = 0, nested_prefix: str | None = None,
                 depth: int = 0) -> list[str]:
    """Stream names of one column of type ``t`` whose escaped name is ``prefix``.

    String yields both ``.size`` and the data stream; the caller keeps the
    ones present on disk (single_stream vs with_size_stream).
    """
    if depth > 32:
        raise ColumnsError(f"type nested too deeply for {prefix}")
    name = t.name
    if name == "Nullable" and t.args:
        return [prefix + ".null"] + type_streams(prefix, t.args[0], array_level, None, depth + 1)
    if name == "LowCardinality":
        return [prefix + ".dict", prefix]
    if name == "Array" and t.args:
        sizes = (nested_prefix if (nested_prefix and array_level == 0) else prefix) + f".size{array_level}"
        return [sizes] + type_streams(prefix, t.args[0], array_level + 1, None, depth + 1)
    if name == "Map" and len(t.args) == 2:
        out = [prefix + f".size{array_level}"]
        out += type_streams(prefix + "%2Ekeys", t.args[0], array_level + 1, None, depth + 1)
        out += type_streams(prefix + "%2Evalues", t.args[1], array_level + 1, None, depth + 1)
        return out
    if name in ("Tuple", "Nested") and t.args:
        out = []
        for i, (sub, en) in enumerate(zip(t.args, t.elem_names or (None,) * len(t.args))):
            elem = en if en is not None else str(i + 1)
            out += type_streams(prefix + "%2E" + escape_for_file_name(elem), sub, array_level, None, depth + 1)
        return out
    if name == "String":
        return [prefix + ".size", prefix]
    return [prefix]


def derive_streams(col: Column, kind: str = "Default") -> list[str]:
    """Stream names of a column from its name and type (fallback)."""
    t = parse_type(col.type)
    nested_prefix = None
    if "." in col.name and t.name == "Array":
        # a column of a Nested structure shares the offsets of <nested>.size0
        nested_prefix = escape_for_file_name(col.name.split(".", 1)[0])
    prefix = escape_for_file_name(col.name)
    out = type_streams(prefix, t, 0, nested_prefix)
    if kind == "Sparse":
        out = [prefix + ".sparse.idx"] + out
    return out


@dataclass
class StreamRef:
    """One stream of a part: which column it belongs to and where it is stored."""

    stream: str                 # stream name as the engine writes it (escaped)
    column: str                 # owning column (unescaped)
    column_index: int           # position of the owning column in columns.txt
    substream: str              # suffix after the column's own prefix ("", ".size0", ".null", ...)
    file_stem: str | None       # file name without extension, None when absent
    counted: bool = True        # False for a shared stream already counted for an earlier column


def substream_suffix(stream: str, column: str) -> str:
    """The part of a stream name after the escaped column name ('' for the main stream)."""
    prefix = escape_for_file_name(column)
    if stream.startswith(prefix):
        return stream[len(prefix):]
    nested = escape_for_file_name(column.split(".", 1)[0])
    if stream.startswith(nested):
        return stream[len(nested):]
    return stream


def map_streams(columns: list[Column], substreams: dict[str, list[str]] | None,
                present: set[str], kinds: dict[str, str] | None = None) -> tuple[list[StreamRef], list[str]]:
    """Every stream of every column, with the engine's counting rule.

    ``present`` is the set of ``.bin`` file stems found in the part.  Returns
    the stream refs (in column order) and the problems found (messages).
    """
    refs: list[StreamRef] = []
    problems: list[str] = []
    seen: set[str] = set()
    for ci, col in enumerate(columns):
        if substreams is not None and col.name in substreams:
            names = substreams[col.name]
            explicit = True
        else:
            try:
                names = derive_streams(col, (kinds or {}).get(col.name, "Default"))
            except ColumnsError as e:
                problems.append(f"column {col.name}: {e}")
                names = [escape_for_file_name(col.name)]
            explicit = False
        for s in names:
            stem = next((c for c in stream_file_candidates(s) if c in present), None)
            if stem is None and not explicit:
                continue          # a derived alternative not written by this engine version
            ref = StreamRef(s, col.name, ci, substream_suffix(s, col.name), stem, s not in seen)
            seen.add(s)
            refs.append(ref)
    return refs, problems


def claimed_stems(refs: list[StreamRef]) -> set[str]:
    return {r.file_stem for r in refs if r.file_stem}


def stem_of(filename: str, ext: str) -> str:
    return filename[: -len(ext)] if filename.endswith(ext) else os.path.splitext(filename)[0]

"""Part column lists: ``columns.txt``, ``columns_substreams.txt``,
``serialization.json``, and ClickHouse type names.

* columns.txt (src/Storages/MergeTree/IMergeTreeDataPart.cpp, NamesAndTypesList::readText):
  ``columns format version: 1\\n<N> columns:\\n`` then one line
  ``\\`name\\` Type`` per column.
* columns_substreams.txt (new in 26.x, ColumnsSubstreams::readText):
  ``columns substreams version: 1\\n<N> columns:\\n`` then per column
  ``<k> substreams for column \\`name\\`:\\n`` and k tab-indented stream names
  (already escaped for file names).
* serialization.json: per column ``kind`` (Default / Sparse) and counts.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field


class ColumnsError(Exception):
    """A column list file could not be parsed; ``offset`` is a byte offset in it."""

    def __init__(self, message: str, offset: int | None = None):
        self.offset = offset
        super().__init__(message)


@dataclass(frozen=True)
class Column:
    """One column of a part: name (unescaped) and type text."""

    name: str
    type: str


def _unquote_backticks(s: str) -> str:
    """The name inside `...` with backslash escapes undone."""
    out = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            nxt = s[i + 1]
            out.append({"n": "\n", "t": "\t", "0": "\0"}.get(nxt, nxt))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


_BQ = r"`((?:[^`\\]|\\.)*)`"
_COLUMNS_HDR = re.compile(r"columns format version: (\d+)\n(\d+) columns:\n")
_COLUMN_LINE = re.compile(_BQ + r" ([^\n]*)\n")


def parse_columns_txt(data: bytes) -> list[Column]:
    """Reads columns.txt: version line, count line, one `name` Type line per column."""
    text = data.decode("utf-8", "replace")
    m = _COLUMNS_HDR.match(text)
    if not m:
        raise ColumnsError("expected 'columns format version: 1' and '<N> columns:' lines", 0)
    if m.group(1) != "1":
        raise ColumnsError(f"unknown columns format version {m.group(1)}", 0)
    count = int(m.group(2))
    pos = m.end()
    out: list[Column] = []
    for _ in range(count):
        c = _COLUMN_LINE.match(text, pos)
        if not c:
            raise ColumnsError(f"column {len(out) + 1} of {count}: expected a `name` Type line",
                               len(text[:pos].encode()))
        out.append(Column(_unquote_backticks(c.group(1)), c.group(2)))
        pos = c.end()
    return out


_SUB_HDR = re.compile(r"columns substreams version: (\d+)\n(\d+) columns:\n")
_SUB_COL = re.compile(r"(\d+) substreams for column " + _BQ + r":\n")
_SUB_LINE = re.compile(r"\t([^\n]*)\n")


def parse_columns_substreams(data: bytes) -> dict[str, list[str]]:
    """Reads columns_substreams.txt: column name -> its stream names in order."""
    text = data.decode("utf-8", "replace")
    m = _SUB_HDR.match(text)
    if not m:
        raise ColumnsError("expected 'columns substreams version: 1' and '<N> columns:' lines", 0)
    if m.group(1) != "1":
        raise ColumnsError(f"unknown columns substreams version {m.group(1)}", 0)
    pos = m.end()
    out: dict[str, list[str]] = {}
    for _ in range(int(m.group(2))):
        c = _SUB_COL.match(text, pos)
        if not c:
            raise ColumnsError("expected '<k> substreams for column `name`:'", len(text[:pos].encode()))
        pos = c.end()
        streams = []
        for _ in range(int(c.group(1))):
            s = _SUB_LINE.match(text, pos)
            if not s:
                raise ColumnsError("expected a tab-indented stream name", len(text[:pos].encode()))
            streams.append(s.group(1))
            pos = s.end()
        out[_unquote_backticks(c.group(2))] = streams
    return out


@dataclass
class SerializationInfo:
    """serialization.json: version and per-column kind (Default / Sparse)."""

    version: int | None = None
    kinds: dict[str, str] = field(default_factory=dict)
    string_with_size_stream: bool | None = None
    #: ``propagate_types_serialization_versions_to_nested_types``: Strings inside
    #: Array/Tuple/Map use the same serialization version
    propagate_to_nested: bool = False
    #: per column: num_defaults (the engine's exact count when ``exact_num_defaults``)
    num_defaults: dict[str, int] = field(default_factory=dict)


def parse_serialization_json(data: bytes) -> SerializationInfo:
    """Reads serialization.json (compact JSON)."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ColumnsError(f"not JSON: {e}", getattr(e, "pos", None)) from None
    if not isinstance(doc, dict):
        raise ColumnsError("not a JSON object", 0)
    info = SerializationInfo(version=doc.get("version"))
    for col in doc.get("columns") or []:
        if isinstance(col, dict) and "name" in col:
            info.kinds[str(col["name"])] = str(col.get("kind", "Default"))
            if isinstance(col.get("num_defaults"), int):
                info.num_defaults[str(col["name"])] = col["num_defaults"]
    tsv = doc.get("types_serialization_versions")
    if isinstance(tsv, dict) and "string" in tsv:
        info.string_with_size_stream = str(tsv["string"]) in ("1", "with_size_stream")
    info.propagate_to_nested = bool(doc.get("propagate_types_serialization_versions_to_nested_types", False))
    return info


# -- type names ---------------------------------------------------------------
@dataclass(frozen=True)
class TypeNode:
    """A parsed ClickHouse type: ``name(args)``; Tuple elements may be named."""

    name: str
    args: tuple["TypeNode", ...] = ()
    elem_names: tuple[str | None, ...] = ()
    raw: str = ""


def split_top_level(s: str, sep: str = ",") -> list[str]:
    """Splits at ``sep`` outside parentheses, quotes and backticks."""
    parts, depth, cur, quote = [], 0, [], None
    i = 0
    while i < len(s):
        c = s[i]
        if quote:
            cur.append(c)
            if c == "\\" and i + 1 < len(s):
                cur.append(s[i + 1])
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in "'`\"":
            quote = c
            cur.append(c)
        elif c == "(":
            depth += 1
            cur.append(c)
        elif c == ")":
            depth -= 1
            cur.append(c)
        elif c == sep and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    if cur or parts:
        parts.append("".join(cur).strip())
    return parts


_IDENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*|`(?:[^`\\]|\\.)*`)\s+(.+)$", re.S)
_NON_TYPE_ARGS = {"Enum8", "Enum16", "Enum", "DateTime", "DateTime64", "Decimal", "Decimal32", "Decimal64",
                  "Decimal128", "Decimal256", "FixedString", "AggregateFunction",
                  "SimpleAggregateFunction", "Time64", "Object", "JSON", "Dynamic", "Variant"}


def parse_type(text: str, depth: int = 0) -> TypeNode:
    """Parses a type name such as ``Array(Tuple(a UInt32, b String))``."""
    text = text.strip()
    if depth > 64:
        raise ColumnsError(f"type nested too deeply: {text[:80]}")
    p = text.find("(")
    if p < 0 or not text.endswith(")"):
        return TypeNode(text, raw=text)
    name = text[:p].strip()
    inner = text[p + 1:-1]
    if name in _NON_TYPE_ARGS and name != "Variant":
        return TypeNode(name, raw=text)
    args, names = [], []
    for item in split_top_level(inner):
        m = _IDENT.match(item) if name in ("Tuple", "Nested") else None
        if m and not m.group(2).startswith("("):
            nm = m.group(1)
            names.append(_unquote_backticks(nm[1:-1]) if nm.startswith("`") else nm)
            args.append(parse_type(m.group(2), depth + 1))
        else:
            names.append(None)
            args.append(parse_type(item, depth + 1))
    return TypeNode(name, tuple(args), tuple(names), raw=text)

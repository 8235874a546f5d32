"""Table metadata ``.sql`` files: the ``ATTACH TABLE`` / ``ATTACH DATABASE``
statements the engine stores under ``metadata/`` (DatabaseOnDisk.cpp writes
them with formatted AST; Atomic tables carry ``UUID '...'``).

Parsed: columns (name, type, DEFAULT kind, CODEC(...)), projections and
indices by name, ENGINE, PARTITION BY, PRIMARY KEY, ORDER BY, SAMPLE BY,
TTL, SETTINGS.  A statement that does not parse raises :class:`DDLError`
with the byte offset where it went wrong.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .columns import split_top_level


class DDLError(Exception):
    def __init__(self, message: str, offset: int | None = None):
        self.offset = offset
        super().__init__(message)


@dataclass
class ColumnDef:
    """One column of the table DDL."""

    name: str
    type: str
    default_kind: str = ""
    default_expression: str = ""
    codec: str = ""            # "CODEC(Delta(2), LZ4)" as system.columns shows it, "" when none
    comment: str = ""


@dataclass
class TableDef:
    """A parsed ``ATTACH TABLE`` statement."""

    uuid: str | None
    columns: list[ColumnDef] = field(default_factory=list)
    indices: list[str] = field(default_factory=list)
    projections: list[str] = field(default_factory=list)
    engine: str = ""
    engine_full: str = ""
    partition_by: str = ""
    primary_key: str = ""
    order_by: str = ""
    sample_by: str = ""
    ttl: str = ""
    settings: dict[str, str] = field(default_factory=dict)


@dataclass
class DatabaseDef:
    """A parsed ``ATTACH DATABASE`` statement."""

    uuid: str | None
    engine: str


_DB_RE = re.compile(r"^\s*(?:ATTACH|CREATE)\s+DATABASE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\S+)"
                    r"(?:\s+UUID\s+'([0-9a-fA-F-]+)')?(?:\s+ENGINE\s*=\s*(\w+))?", re.S | re.I)


def parse_database_sql(text: str) -> DatabaseDef:
    """Reads ``ATTACH DATABASE _ UUID '...' ENGINE = Atomic``."""
    m = _DB_RE.match(text)
    if not m:
        raise DDLError("not an ATTACH DATABASE statement", 0)
    return DatabaseDef(m.group(2), m.group(3) or "Ordinary")


_TABLE_HEAD = re.compile(r"^\s*(?:ATTACH|CREATE)\s+(?:TABLE|MATERIALIZED\s+VIEW|VIEW|DICTIONARY)\s+"
                         r"(?:IF\s+NOT\s+EXISTS\s+)?(`(?:[^`\\]|\\.)*`|[^\s(]+)"
                         r"(?:\s+UUID\s+'([0-9a-fA-F-]+)')?\s*", re.S | re.I)
_COLUMN_KEYWORDS = re.compile(r"\s(DEFAULT|MATERIALIZED|ALIAS|EPHEMERAL|CODEC|COMMENT|TTL|STATISTICS|SETTINGS|"
                              r"NOT\s+NULL|NULL|PRIMARY\s+KEY)\b", re.I)
_CLAUSES = ("PARTITION BY", "PRIMARY KEY", "ORDER BY", "SAMPLE BY", "TTL", "SETTINGS", "COMMENT")


def _matching_paren(text: str, start: int) -> int:
    """Offset of the ')' closing the '(' at ``start``, quotes respected."""
    depth = 0
    quote = None
    i = start
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in "'`\"":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise DDLError("unbalanced parentheses", start)


def _top_level_find(text: str, words: tuple[str, ...]) -> list[tuple[int, str]]:
    """Positions of clause keywords at depth 0 outside quotes."""
    hits = []
    depth = 0
    quote = None
    i = 0
    upper = text.upper()
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in "'`\"":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif depth == 0 and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            for w in words:
                if upper.startswith(w, i):
                    end = i + len(w)
                    if end >= len(text) or not (text[end].isalnum() or text[end] == "_"):
                        hits.append((i, w))
                        break
        i += 1
    return hits


def _unquote_ident(s: str) -> str:
    s = s.strip()
    if s.startswith("`") and s.endswith("`"):
        return re.sub(r"\\(.)", r"\1", s[1:-1])
    return s


def parse_column_def(item: str) -> ColumnDef:
    """Reads one column definition: name, type, then DEFAULT/CODEC/COMMENT..."""
    item = item.strip()
    m = re.match(r"(`(?:[^`\\]|\\.)*`|[A-Za-z_][A-Za-z0-9_.]*)\s+", item)
    if not m:
        raise DDLError(f"column definition without a name: {item[:60]!r}")
    name = _unquote_ident(m.group(1))
    rest = item[m.end():]
    # the type runs up to the first column keyword at depth 0
    hits = _top_level_find(" " + rest, ("DEFAULT", "MATERIALIZED", "ALIAS", "EPHEMERAL", "CODEC", "COMMENT",
                                        "TTL", "STATISTICS", "SETTINGS", "NOT NULL", "NULL", "PRIMARY KEY"))
    hits = [(p - 1, w) for p, w in hits if p > 0]
    type_end = hits[0][0] if hits else len(rest)
    col = ColumnDef(name, rest[:type_end].strip())
    if not col.type:
        raise DDLError(f"column {name} has no type")
    for k, (p, w) in enumerate(hits):
        end = hits[k + 1][0] if k + 1 < len(hits) else len(rest)
        body = rest[p + len(w):end].strip()
        if w in ("DEFAULT", "MATERIALIZED", "ALIAS", "EPHEMERAL"):
            col.default_kind, col.default_expression = w, body
        elif w == "CODEC":
            col.codec = "CODEC" + body
        elif w == "COMMENT":
            col.comment = body.strip("'")
    return col


def parse_table_sql(text: str) -> TableDef:
    """Reads an ``ATTACH TABLE _ UUID '...' (columns) ENGINE = ... `` statement."""
    m = _TABLE_HEAD.match(text)
    if not m:
        raise DDLError("not an ATTACH TABLE statement", 0)
    t = TableDef(uuid=m.group(2))
    pos = m.end()
    if pos < len(text) and text[pos] == "(":
        close = _matching_paren(text, pos)
        for item in split_top_level(text[pos + 1:close]):
            if not item:
                continue
            word = item.split(None, 1)[0].upper()
            if word == "INDEX":
                t.indices.append(_unquote_ident(item.split()[1]))
            elif word == "PROJECTION":
                t.projections.append(_unquote_ident(item.split()[1]))
            elif word in ("CONSTRAINT", "PRIMARY"):
                continue
            else:
                try:
                    t.columns.append(parse_column_def(item))
                except DDLError as e:
                    off = text.find(item, pos)
                    raise DDLError(str(e), off if off >= 0 else pos) from None
        pos = close + 1
    rest = text[pos:]
    em = re.match(r"\s*ENGINE\s*=\s*(\w+)", rest, re.I)
    if not em:
        raise DDLError("no ENGINE clause after the column list", pos)
    t.engine = em.group(1)
    after = rest[em.end():]
    base = pos + em.end()
    if after.startswith("("):
        close = _matching_paren(after, 0)
        engine_args = after[:close + 1]
        after = after[close + 1:]
        base += close + 1
    else:
        engine_args = ""
    hits = _top_level_find(after, _CLAUSES)
    t.engine_full = (t.engine + engine_args + " " + after.strip()).strip()
    for k, (p, w) in enumerate(hits):
        end = hits[k + 1][0] if k + 1 < len(hits) else len(after)
        body = after[p + len(w):end].strip()
        if w == "PARTITION BY":
            t.partition_by = body
        elif w == "PRIMARY KEY":
            t.primary_key = body
        elif w == "ORDER BY":
            t.order_by = body
        elif w == "SAMPLE BY":
            t.sample_by = body
        elif w == "TTL":
            t.ttl = body
        elif w == "SETTINGS":
            for kv in split_top_level(body):
                if "=" in kv:
                    k_, v_ = kv.split("=", 1)
                    t.settings[k_.strip()] = v_.strip().strip("'")
    first_clause = hits[0][0] if hits else len(after)
    junk = after[:first_clause].strip()
    if junk:
        raise DDLError(f"unexpected text after ENGINE: {junk[:60]!r}", base)
    return t


def key_text(clause: str) -> str:
    """A key clause (ORDER BY / PRIMARY KEY / PARTITION BY of the stored .sql) as
    system.tables shows it (``sorting_key``, ``primary_key``): the engine prints the
    key's expression list (src/Storages/KeyDescription.cpp, ``expression_list_ast``;
    src/Storages/System/StorageSystemTables.cpp), so a tuple ``(a, b)`` loses its
    parentheses (``a, b``), ``tuple()`` is empty, and one parenthesised expression
    keeps them as the .sql has them (``(id)``: the fixture manifest's ``codecs``
    table, ClickHouse 26.9)."""
    text = clause.strip()
    if text.replace(" ", "") == "tuple()":
        return ""
    if text.startswith("(") and text.endswith(")"):
        depth = 0
        for i, ch in enumerate(text):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and i < len(text) - 1:
                return text           # "(a) + (b)": not one parenthesised list
        items = [x.strip() for x in split_top_level(text[1:-1])]
        if len(items) >= 2:
            return ", ".join(items)
    return text

"""The scan's JSON written as a stream: file by file, never the whole document in
memory (``dbxray scan --json`` on 100,000 files is hundreds of MB of text).

:func:`write_dataset` writes exactly the bytes ``json.dumps(ds.to_json(), indent=1)``
gives (the contract's layout is unchanged), from the same per-file objects
(``FileEntry.to_json``), one file at a time.  :func:`encode_indented` is that
layout's encoder (the standard library's is pure Python when it indents), so that
files can also be encoded ahead, in worker processes (``parsers/parallel.py``), and
only joined here (``encoded``: file index -> text).

:func:`write_summary` writes the ``--summary`` document (``resources/scan.schema.json``
``summary``): per file its sizes, counts and engine facts without per-page or
per-extent lists, per table its files summed, one line per file or table.
"""
from __future__ import annotations

import itertools
import json
import math
from json.encoder import encode_basestring_ascii as _str
from typing import Any, Callable, Iterable, Iterator, TextIO

from .model import Dataset, FileEntry

_int = int.__repr__
_float = float.__repr__


def _floatstr(v: float) -> str:
    if v != v:
        return "NaN"
    if v == math.inf:
        return "Infinity"
    if v == -math.inf:
        return "-Infinity"
    return _float(v)


def _key(k) -> str:
    """A dict key as json.dumps writes it (non-string keys converted as it converts them)."""
    if isinstance(k, str):
        return _str(k)
    if k is True:
        return '"true"'
    if k is False:
        return '"false"'
    if k is None:
        return '"null"'
    if isinstance(k, int):
        return _str(_int(k))
    if isinstance(k, float):
        return _str(_floatstr(k))
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(k).__name__}")


def _enc(v: Any, ind: str, out: list) -> None:
    """Append ``v`` as json.dumps(indent=1) writes it at the nesting ``ind`` (spaces)."""
    if isinstance(v, str):
        out.append(_str(v))
    elif v is None:
        out.append("null")
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif isinstance(v, int):
        out.append(_int(v))
    elif isinstance(v, float):
        out.append(_floatstr(v))
    elif isinstance(v, dict):
        if not v:
            out.append("{}")
            return
        inner = ind + " "
        sep = ",\n" + inner
        out.append("{\n" + inner)
        first = True
        for k, x in v.items():
            if not first:
                out.append(sep)
            first = False
            out.append(_key(k))
            out.append(": ")
            _enc(x, inner, out)
        out.append("\n" + ind + "}")
    elif isinstance(v, (list, tuple)):
        if not v:
            out.append("[]")
            return
        inner = ind + " "
        sep = ",\n" + inner
        rows = _int_rows(v, inner, sep)
        if rows is not None:
            out.append("[\n" + inner + rows + "\n" + ind + "]")
            return
        out.append("[\n" + inner)
        first = True
        for x in v:
            if not first:
                out.append(sep)
            first = False
            _enc(x, inner, out)
        out.append("\n" + ind + "]")
    elif type(v) is _Pairs:
        out.append(_pairs_text(v.pairs, ind))
    else:
        raise TypeError(f"Object of type {type(v).__name__} is not JSON serializable")


class _Pairs:
    """A file's (offset, length) pairs (holes, unwritten extents) left as they are until
    :func:`_enc` writes them (``FileEntry.to_json(pairs=_Pairs)``): no list of lists made."""
    __slots__ = ("pairs",)

    def __init__(self, pairs) -> None:
        self.pairs = pairs


def _pairs_text(pairs, ind: str) -> str:
    """``[[offset, length], ...]`` as json.dumps(indent=1) writes it at nesting ``ind``,
    with one %-format of all the numbers (a third of the time of one f-string a pair)."""
    if not len(pairs):
        return "[]"
    inner = ind + " "
    inner2 = inner + " "
    one = "[\n" + inner2 + "%d,\n" + inner2 + "%d\n" + inner + "]"
    body = (",\n" + inner).join([one] * len(pairs)) % tuple(itertools.chain.from_iterable(pairs))
    return "[\n" + inner + body + "\n" + ind + "]"


def _int_rows(v: list | tuple, inner: str, sep: str) -> str | None:
    """The items of a list of ints, or of [int, int] pairs (a file's holes and extents),
    joined as :func:`_enc` writes them one by one (None: not such a list)."""
    t0 = type(v[0])
    if t0 is int:
        if all(type(x) is int for x in v):
            return sep.join(map(_int, v))
        return None
    if t0 is not list and t0 is not tuple:
        return None
    if not all((type(x) is list or type(x) is tuple) and len(x) == 2 and type(x[0]) is int
               and type(x[1]) is int for x in v):
        return None
    inner2 = inner + " "
    open_, mid, close = "[\n" + inner2, ",\n" + inner2, "\n" + inner + "]"
    return sep.join(f"{open_}{_int(a)}{mid}{_int(b)}{close}" for a, b in v)


def encode_indented(v: Any, ind: str = "") -> str:
    """``v`` as ``json.dumps(v, indent=1)`` writes it, its lines after the first
    indented by ``ind`` more (the same text as nested at that depth)."""
    out: list[str] = []
    _enc(v, ind, out)
    return "".join(out)


def encode_file(entry: FileEntry) -> str:
    """One file's object as it stands in ``"files": [...]`` (two spaces deep)."""
    return "  " + encode_indented(entry.to_json(pairs=_Pairs), "  ")


def _top_items(ds: Dataset, files_json: Any) -> list[tuple[str, Any]]:
    """The top-level keys in ``Dataset.to_json``'s order, ``files`` standing for the list."""
    return list(ds.to_json(files=files_json).items())


_FILES = object()


def write_dataset(ds: Dataset, fh: TextIO, encoded: Callable[[int], str | None] | None = None,
                  chunk: int = 1 << 20) -> None:
    """Write ``json.dumps(ds.to_json(), indent=1) + "\\n"`` to ``fh`` file by file
    (``encoded(i)``: file ``i``'s text made ahead, or None to encode it here)."""
    buf: list[str] = []
    size = 0
    fh.write("{")
    first = True
    for key, value in _top_items(ds, _FILES):
        fh.write(("\n " if first else ",\n ") + _str(key) + ": ")
        first = False
        if value is not _FILES:
            fh.write(encode_indented(value, " "))
            continue
        if not ds.files:
            fh.write("[]")
            continue
        fh.write("[\n")
        for i, entry in enumerate(ds.files):
            text = encoded(i) if encoded is not None else None
            if text is None:
                text = encode_file(entry)
            if i:
                buf.append(",\n")
            buf.append(text)
            size += len(text)
            if size >= chunk:
                fh.write("".join(buf))
                buf.clear()
                size = 0
        fh.write("".join(buf))
        buf.clear()
        fh.write("\n ]")
    fh.write("\n}\n")


# -- --summary -------------------------------------------------------------------------

def file_summary(entry: FileEntry) -> dict[str, Any]:
    """One file without per-page or per-extent lists: sizes, counts, errors, warnings, and
    its engine section's scalar facts (``Engine.summary``-free: every number, string and
    bool of the section's first level, lists and objects left out except their counts)."""
    out: dict[str, Any] = {
        "path": entry.path, "engine": entry.engine, "role": entry.role,
        "database": entry.database, "table": entry.table,
        "apparent_bytes": int(entry.apparent_bytes), "allocated_bytes": int(entry.allocated_bytes),
        "hole_bytes": int(entry.hole_bytes), "unwritten_bytes": int(entry.unwritten_bytes),
        "errors": list(entry.errors), "warnings": list(entry.warnings),
    }
    for name, section in entry.sections_view().items():
        if isinstance(section, dict):
            out[name] = section_summary(section)
    return out


def section_summary(section: dict) -> dict[str, Any]:
    """A section's first-level scalars, its small objects of scalars (page type counts,
    the checksum algorithm), and for each list its length (``<key>_count``)."""
    out: dict[str, Any] = {}
    for k, v in section.items():
        if v is None or isinstance(v, (str, int, float, bool)):
            out[k] = v
        elif isinstance(v, (list, tuple)):
            out[f"{k}_count"] = len(v)
        elif isinstance(v, dict):
            small = {kk: (vv if vv is None or isinstance(vv, (str, int, float, bool)) else len(vv))
                     for kk, vv in v.items() if vv is None or isinstance(vv, (str, int, float, bool, list, tuple))}
            if small:
                out[k] = small
    return out


def table_summaries(ds: Dataset) -> list[dict[str, Any]]:
    """Per table (``Dataset.tables``): its files' sizes summed."""
    return list(iter_table_summaries(ds))


def iter_table_summaries(ds: Dataset) -> Iterator[dict[str, Any]]:
    """:func:`table_summaries` one table at a time (the writer's: 100,000 tables' objects
    are never held at once)."""
    for t in ds.tables:
        entries = [e for e in (ds.file(p) for p in t.files) if e is not None]
        yield {
            "engine": t.engine, "database": t.database, "table": t.name, "files": len(t.files),
            "apparent_bytes": sum(int(e.apparent_bytes) for e in entries),
            "allocated_bytes": sum(int(e.allocated_bytes) for e in entries),
            "hole_bytes": sum(int(e.hole_bytes) for e in entries),
            "errors": sum(len(e.errors) for e in entries),
        }


def write_summary(ds: Dataset, fh: TextIO, reads: str, lines: Iterable[str] | None = None) -> None:
    """The ``--summary`` document: one line per file and per table (compact JSON)."""
    dumps = json.JSONEncoder(separators=(",", ":")).encode
    head = {"tool": "dbxray", "schema_version": 1, "kind": "summary", "reads": reads,
            "root": ds.root, "engines": ds.engines}
    fh.write("{" + dumps(head)[1:-1] + ',\n"files":[')
    for i, entry in enumerate(ds.files):
        fh.write(("\n" if i == 0 else ",\n") + dumps(file_summary(entry)))
    fh.write('\n],\n"tables":[')
    for i, t in enumerate(iter_table_summaries(ds)):
        fh.write(("\n" if i == 0 else ",\n") + dumps(t))
    tail: dict[str, Any] = {
        "totals": {"files": len(ds.files), "apparent_bytes": sum(int(e.apparent_bytes) for e in ds.files),
                   "allocated_bytes": sum(int(e.allocated_bytes) for e in ds.files),
                   "hole_bytes": sum(int(e.hole_bytes) for e in ds.files),
                   "errors": sum(len(e.errors) for e in ds.files) + len(ds.errors),
                   "warnings": sum(len(e.warnings) for e in ds.files) + len(ds.warnings)},
        "errors": list(ds.errors), "warnings": list(ds.warnings),
    }
    fh.write("\n]," + dumps(tail)[1:] + "\n")

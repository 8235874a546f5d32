"""``sizes.json`` of a Log-family table: the file sizes the engine recorded after
its last completed write (src/Storages/FileChecker.cpp, ``FileChecker::save`` /
``load``).

Layout: ``{"clickhouse":{"<escaped file name>":{"size":"<decimal>"},...}}`` (the
root key was ``"yandex"`` in older releases and is still read); names are
escaped with escapeForFileName (``a%2Ebin``), sizes are decimal strings.  The
engine truncates a file longer than its recorded size when it attaches the
table (``FileChecker::repair``) and counts the recorded sizes in
``system.tables.total_bytes`` (``getTotalSize``) and, per column, in
``system.columns.data_compressed_bytes`` (StorageLog::getColumnSizes).
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from .logfiles import SIZES_FILE_NAME  # noqa: F401 (its name)
from .streams import unescape_for_file_name



class FileCheckerError(Exception):
    """sizes.json could not be read; ``offset`` is a byte offset in it when known."""

    def __init__(self, message: str, offset: int | None = None):
        self.offset = offset
        super().__init__(message)


@dataclass
class FileSizes:
    """The recorded size of each file (unescaped name -> bytes) and the root key found."""

    sizes: dict[str, int]
    root_key: str

    @property
    def total(self) -> int:
        """FileChecker::getTotalSize: the sum of the recorded sizes."""
        return sum(self.sizes.values())


def read_sizes_json(data: bytes) -> FileSizes:
    """Parses sizes.json as FileChecker::load does (whitespace ignored)."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise FileCheckerError(f"sizes.json is not UTF-8: {e.reason}", e.start) from None
    except json.JSONDecodeError as e:
        raise FileCheckerError(f"sizes.json does not parse: {e.msg}", e.pos) from None
    if not isinstance(doc, dict):
        raise FileCheckerError("sizes.json is not a JSON object", 0)
    key = "clickhouse" if "clickhouse" in doc else "yandex" if "yandex" in doc else None
    if key is None or not isinstance(doc[key], dict):
        raise FileCheckerError('sizes.json has no "clickhouse" (or "yandex") object', 0)
    sizes: dict[str, int] = {}
    for name, value in doc[key].items():
        size = value.get("size") if isinstance(value, dict) else None
        try:
            n = int(size)
        except (TypeError, ValueError):
            raise FileCheckerError(f"sizes.json: file {name!r} has no integer size ({size!r})") from None
        if n < 0:
            raise FileCheckerError(f"sizes.json: file {name!r} has a negative size ({n})")
        sizes[unescape_for_file_name(name)] = n
    return FileSizes(sizes, key)

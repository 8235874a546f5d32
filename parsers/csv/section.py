"""``files[].csv`` of the JSON, typed (parsers/section.py)."""
from __future__ import annotations

from ..section import Key, Section


class CsvDataSection(Section):
    """A ``.CSV`` data file: its rows as the engine reads them."""

    rows: int = Key("complete rows (line ends)")
    row_bytes: int = Key()
    trailing_bytes: int = Key("a row cut short")
    crlf_rows: int = Key()
    role: str = Key('"data"')


class CsvMetaSection(Section):
    """A ``.CSM`` meta file (ha_tina.cc)."""

    version: int = Key()
    rows: int = Key("the engine's own count: SHOW TABLE STATUS Rows")
    dirty: bool = Key("the crashed bit")
    header_ok: bool = Key()
    role: str = Key('"meta"')


def section_from_json(data: dict) -> Section:
    """The typed section of a saved scan's ``files[].csv``."""
    return (CsvMetaSection if data.get("role") == "meta" else CsvDataSection).from_json(data)

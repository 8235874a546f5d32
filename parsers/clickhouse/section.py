"""The ClickHouse parts of the JSON, typed (parsers/section.py): ``files[].clickhouse``
(the part a file belongs to, and for a stream or a compressed file its blocks) and
the dataset's ``clickhouse`` object (the tables, named as system.parts /
system.parts_columns / system.columns name their fields: parsers/clickhouse/README.md)."""
from __future__ import annotations

from ..section import Key, Section


class ClickHouseFileSection(Section):
    """One file of a part."""

    part: str = Key("part name")
    part_state: str = Key("active / outdated / detached / ...")
    part_type: str = Key("Wide / Compact")
    parent_part: str = Key("the part a projection part belongs to")
    column: str = Key("the column a stream holds")
    stream: str = Key()
    substream: str | None = Key()
    blocks: int = Key("compressed blocks")
    compressed_bytes: int = Key()
    uncompressed_bytes: int = Key()
    codecs: dict = Key("codec chain -> blocks")
    marks_file: str | None = Key()
    marks: int | None = Key()
    checksums_verified: bool = Key("every block's CityHash128 checked")


class ClickHouseSection(Section):
    """The dataset's ``clickhouse`` object."""

    tables: list = Key("tables with parts and columns (parsers/clickhouse/README.md)")

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
    table_engine: str = Key("Log-family files: TinyLog / Log / StripeLog")
    recorded_size: int | None = Key("Log-family files: the size sizes.json records")


class ClickHouseSubcolumn(Section):
    """system.parts_columns subcolumns.* of one column."""

    name: str = Key()
    type: str = Key()
    serialization: str = Key()
    bytes_on_disk: int = Key()
    compressed_bytes: int = Key()
    uncompressed_bytes: int = Key()
    marks_bytes: int = Key()


class ClickHousePartColumn(Section):
    """One column of one part: system.parts_columns."""

    nested = {"subcolumns": ClickHouseSubcolumn}

    name: str = Key()
    type: str = Key()
    serialization_kind: str = Key()
    compressed_bytes: int = Key("column_data_compressed_bytes (0 in Compact parts, as the engine)")
    uncompressed_bytes: int = Key()
    marks_bytes: int = Key()
    bytes_on_disk: int = Key()
    codecs: dict = Key("codec chain -> blocks")
    block_size_histogram: list = Key()
    column_position: int = Key()
    substreams: list = Key()
    filenames: list = Key()
    subcolumns: list | None = Key()
    streams: list = Key("Wide parts: the column's streams")
    engine_reports_zero: bool = Key("Compact parts")
    computed: dict = Key("Compact parts: the split of data.bin by the column marks")
    note: str = Key()


class ClickHousePart(Section):
    """One part: system.parts (and system.detached_parts)."""

    name: str = Key()
    partition_id: str | None = Key()
    part_type: str = Key()
    active: int = Key()
    state: str = Key()
    rows: int = Key()
    marks: int = Key()
    bytes_on_disk: int = Key()
    data_compressed_bytes: int = Key()
    data_uncompressed_bytes: int = Key()
    marks_bytes: int = Key()
    primary_key_size: int = Key()
    files: int = Key()
    secondary_indices_compressed_bytes: int = Key()
    secondary_indices_uncompressed_bytes: int = Key()
    secondary_indices_marks_bytes: int = Key()
    folder_bytes: int = Key()
    checksums_bytes: int = Key("detached parts: the checksums.txt sum (bytes_on_disk of an attached part)")
    path: str = Key()
    marks_file_extension: str | None = Key()
    default_compression_codec: str | None = Key()
    checksums_format_version: int | None = Key()
    checksums_body_method: str | None = Key()
    min_block_number: int = Key()
    max_block_number: int = Key()
    level: int = Key()
    projections: list = Key()
    columns: list = Key("ClickHousePartColumn")
    metadata_version: int | None = Key()
    statistics: list | None = Key()
    statistics_contents: dict = Key()
    block_size_histogram: dict = Key()
    partition: object = Key()
    minmax: object = Key()
    projection_parts: list = Key("ClickHousePart of each projection")


ClickHousePart.nested = {"columns": ClickHousePartColumn, "projection_parts": ClickHousePart}


class ClickHouseTableColumn(Section):
    """One column of a table over its active parts: system.columns."""

    name: str = Key()
    type: str = Key()
    compressed_bytes: int = Key()
    uncompressed_bytes: int = Key()
    marks_bytes: int = Key()
    codec: str = Key("CODEC(...) of the DDL")
    codecs: dict = Key()
    default_kind: str = Key()
    compact_parts_computed: dict = Key()
    computed: dict = Key("Log family: compressed_bytes, uncompressed_bytes, blocks from the block walk")
    note: str = Key()


class ClickHouseLogFile(Section):
    """One data file of a Log-family table (TinyLog / Log / StripeLog)."""

    file: str = Key()
    stream: str = Key()
    column: str | None = Key()
    size: int | None = Key("real size")
    recorded_size: int | None = Key("sizes.json")
    blocks: int = Key()
    compressed_bytes: int = Key()
    uncompressed_bytes: int = Key()
    codecs: dict = Key()
    marks: int | None = Key("Log: marks of this file in __marks.mrk")


class ClickHouseTable(Section):
    """One table: system.tables figures, parts and columns."""

    nested = {"parts": ClickHousePart, "columns": ClickHouseTableColumn, "log_files": ClickHouseLogFile}

    database: str = Key()
    table: str = Key()
    uuid: str | None = Key()
    engine: str = Key()
    path: str | None = Key()
    metadata_path: str | None = Key()
    database_engine: str | None = Key()
    format_version: str | None = Key()
    partition_key: str = Key()
    sorting_key: str = Key()
    primary_key: str = Key()
    settings: dict = Key()
    projections: list = Key()
    indices: list = Key()
    active_parts: int = Key()
    total_rows: int = Key()
    total_bytes: int = Key()
    parts: list = Key("ClickHousePart")
    columns: list = Key("ClickHouseTableColumn")
    errors: list = Key()
    log_files: list = Key("Log family: ClickHouseLogFile of each data file")
    marks_count: int | None = Key("Log: marks (INSERT blocks) in __marks.mrk")
    index_blocks: int | None = Key("StripeLog: blocks listed by index.mrk")
    computed_rows: int | None = Key("TinyLog: rows from the first stream's uncompressed bytes")
    total_rows_note: str = Key()
    notes: list = Key("Log family: what could not be read without the DDL")


class ClickHouseSection(Section):
    """The dataset's ``clickhouse`` object."""

    nested = {"tables": ClickHouseTable}

    tables: list = Key("ClickHouseTable (parsers/clickhouse/README.md)")

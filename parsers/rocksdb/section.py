"""``files[].rocksdb`` and the dataset's ``rocksdb`` section of the JSON, typed
(parsers/section.py)."""
from __future__ import annotations

from ..section import Key, Section


class RocksIndexStats(Section):
    """One index's figures in one SST (MyRocks ``__indexstats__``: ROCKSDB_INDEX_FILE_MAP)."""

    index_number: int = Key()
    cf_id: int = Key()
    rows: int = Key("NUM_ROWS")
    data_size: int = Key("DATA_SIZE: raw user key + value bytes, not disk bytes")
    disk_bytes: int = Key("the collector's own on-disk estimate (actual_disk_size)")
    entry_deletes: int = Key()
    entry_singledeletes: int = Key()
    entry_merges: int = Key()
    entry_others: int = Key()


class RocksSstSection(Section):
    """An SST file: footer, properties, blocks, and its place in the LSM tree."""

    role: str = Key('"sst"')
    format_version: int = Key()
    checksum_type: str = Key("crc32c / xxhash / xxhash64 / xxh3 / none")
    column_family: str | None = Key("from the properties (the MANIFEST's when they lack it)")
    column_family_id: int | None = Key()
    level: int | None = Key("LSM level from the MANIFEST; null when the file is not live")
    live: bool | None = Key("listed by the MANIFEST (null: no MANIFEST read)")
    compression: str = Key("SST file compression algo, as written")
    compression_options: str = Key()
    data_blocks: int = Key("# data blocks")
    entries: int = Key("# entries")
    deletions: int = Key()
    merge_operands: int = Key()
    range_deletions: int = Key()
    raw_key_bytes: int = Key()
    raw_value_bytes: int = Key()
    data_block_bytes: int = Key("data block size (stored, with trailers)")
    index_block_bytes: int = Key("the index size property")
    filter_block_bytes: int = Key()
    index_type: str = Key()
    block_compression: dict = Key("compression as written -> data blocks")
    stored_data_bytes: int = Key("data blocks as stored, without trailers")
    uncompressed_data_bytes: int | None = Key("data blocks once decoded (from their declared sizes)")
    meta_blocks: list = Key("metaindex entries")
    comparator: str = Key()
    creation_time: int = Key()
    file_creation_time: int = Key()
    original_file_number: int = Key()
    db_id: str = Key()
    db_session_id: str = Key()
    checksums_verified: bool = Key("every block's trailer checksum computed and compared")
    index_stats: list = Key("MyRocks __indexstats__ per index")

    nested = {"index_stats": RocksIndexStats}


class RocksFileSection(Section):
    """A MANIFEST, OPTIONS, WAL or environment file of a RocksDB directory."""

    role: str = Key()
    manifest_in_use: bool = Key("CURRENT names this MANIFEST")
    version_edits: int = Key()
    live_files: int = Key()
    column_families: list = Key()
    rocksdb_version: str = Key("OPTIONS: the RocksDB that wrote it")
    latest: bool = Key("OPTIONS: the newest options file (the one in effect)")
    records: int = Key("WAL records")


class RocksLevel(Section):
    """One level of one column family: what is really there."""

    column_family: str = Key()
    level: int = Key()
    files: int = Key()
    file_bytes: int = Key()
    data_block_bytes: int = Key()
    raw_key_bytes: int = Key()
    raw_value_bytes: int = Key()
    entries: int = Key()
    compression: list = Key("as written (SST property), every codec found")
    data_blocks_by_compression: dict = Key("block trailers: codec -> data blocks")
    configured: str | None = Key("what the OPTIONS say this level gets (GetCompressionType)")


class RocksColumnFamily(Section):
    name: str = Key()
    id: int = Key()
    reverse: bool | None = Key("MyRocks reverse-ordered CF (rev:)")
    compression: str | None = Key("OPTIONS compression")
    compression_per_level: list | None = Key()
    bottommost_compression: str | None = Key()
    dynamic_level_bytes: bool | None = Key()
    num_levels: int | None = Key()
    block_size: int | None = Key()
    format_version: int | None = Key()
    level_plan: str | None = Key("configured codec of every level")


class RocksIndex(Section):
    """A MyRocks index: its table, column family and figures over the live SSTs."""

    index_number: int = Key()
    table: str = Key("db.table")
    partition: str | None = Key()
    name: str = Key("the index name (.frm key order; 'HIDDEN_PK_ID' for the hidden key)")
    index_type: str = Key()
    column_family: str = Key()
    kv_format_version: int = Key()
    rows: int = Key("sum of __indexstats__ rows over live SSTs (LSM versions included, as the engine counts)")
    data_size: int = Key("raw key + value bytes (ROCKSDB_INDEX_FILE_MAP.DATA_SIZE)")
    disk_bytes: int = Key("the engine's own on-disk estimate, summed")
    entry_deletes: int = Key("delete markers still in the live SSTs (space a compaction can reclaim)")
    entry_singledeletes: int = Key()
    sst_files: list = Key()
    levels: list = Key()


class RocksDatasetSection(Section):
    """The dataset's ``rocksdb`` section: one entry per RocksDB directory."""

    path: str = Key()
    manifest: str | None = Key()
    options_file: str | None = Key()
    rocksdb_version: str | None = Key()
    comparator: str | None = Key()
    column_families: list = Key()
    levels: list = Key()
    indexes: list = Key()
    obsolete_ssts: list = Key("SST files on disk the MANIFEST does not list")
    missing_ssts: list = Key("SST files the MANIFEST lists that are not on disk")

    nested = {"column_families": RocksColumnFamily, "levels": RocksLevel, "indexes": RocksIndex}


def section_from_json(data: dict) -> Section:
    return (RocksSstSection if data.get("role") == "sst" else RocksFileSection).from_json(data)


class RocksSection(Section):
    """The dataset's ``rocksdb`` section."""

    directories: list = Key("one entry per RocksDB directory (MyRocks: #rocksdb)")

    nested = {"directories": RocksDatasetSection}

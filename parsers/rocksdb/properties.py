"""The ``rocksdb.properties`` meta block (RocksDB table/meta_blocks.cc
``ReadTablePropertiesHelper``, table/table_properties.cc ``TablePropertiesNames``,
include/rocksdb/table_properties.h).

A block of (name, value) entries: the predefined numeric properties are varint64s,
the predefined strings raw; every other entry is a user-collected property (MyRocks'
``__indexstats__``, the block-based table's index type ...), kept as bytes."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from .block import BlockError, _rv, block_layout

#: TablePropertiesNames: the predefined varint64 properties, by their attribute here
UINT64_PROPERTIES = {
    "rocksdb.original.file.number": "orig_file_number",
    "rocksdb.data.size": "data_size",
    "rocksdb.index.size": "index_size",
    "rocksdb.index.partitions": "index_partitions",
    "rocksdb.top-level.index.size": "top_level_index_size",
    "rocksdb.index.key.is.user.key": "index_key_is_user_key",
    "rocksdb.index.value.is.delta.encoded": "index_value_is_delta_encoded",
    "rocksdb.filter.size": "filter_size",
    "rocksdb.raw.key.size": "raw_key_size",
    "rocksdb.raw.value.size": "raw_value_size",
    "rocksdb.num.data.blocks": "num_data_blocks",
    "rocksdb.num.entries": "num_entries",
    "rocksdb.num.filter_entries": "num_filter_entries",
    "rocksdb.deleted.keys": "num_deletions",
    "rocksdb.merge.operands": "num_merge_operands",
    "rocksdb.num.range-deletions": "num_range_deletions",
    "rocksdb.format.version": "format_version",
    "rocksdb.fixed.key.length": "fixed_key_len",
    "rocksdb.column.family.id": "column_family_id",
    "rocksdb.creation.time": "creation_time",
    "rocksdb.oldest.key.time": "oldest_key_time",
    "rocksdb.file.creation.time": "file_creation_time",
    "rocksdb.slow.compression.estimated.data.size": "slow_compression_estimated_data_size",
    "rocksdb.fast.compression.estimated.data.size": "fast_compression_estimated_data_size",
    "rocksdb.tail.start.offset": "tail_start_offset",
    "rocksdb.user.defined.timestamps.persisted": "user_defined_timestamps_persisted",
    "rocksdb.key.largest.seqno": "key_largest_seqno",
    "rocksdb.key.smallest.seqno": "key_smallest_seqno",
}
#: the predefined string properties
STRING_PROPERTIES = {
    "rocksdb.creating.db.identity": "db_id",
    "rocksdb.creating.session.identity": "db_session_id",
    "rocksdb.creating.host.identity": "db_host_id",
    "rocksdb.filter.policy": "filter_policy_name",
    "rocksdb.column.family.name": "column_family_name",
    "rocksdb.comparator": "comparator_name",
    "rocksdb.merge.operator": "merge_operator_name",
    "rocksdb.prefix.extractor.name": "prefix_extractor_name",
    "rocksdb.property.collectors": "property_collectors_names",
    "rocksdb.compression": "compression_name",
    "rocksdb.compression_options": "compression_options",
}
#: user-collected keys that are the same counters (InternalKeyPropertiesCollector)
_ALSO_USER = ("rocksdb.deleted.keys", "rocksdb.merge.operands")
#: table/block_based/block_based_table_factory.h: BlockBasedTablePropertyNames::kIndexType (fixed32)
kIndexType = "rocksdb.block.based.table.index.type"
#: BlockBasedTableOptions::IndexType
INDEX_TYPES = {0: "binary_search", 1: "hash_search", 2: "two_level_index_search",
               3: "binary_search_with_first_key"}
#: table_properties.h TablePropertiesCollectorFactory's column family id for "unknown"
kUnknownColumnFamily = 0x7FFFFFFF


class PropertiesError(Exception):
    def __init__(self, message: str, offset: int = 0):
        self.offset = offset
        super().__init__(message)


@dataclass
class TableProperties:
    orig_file_number: int = 0
    data_size: int = 0
    index_size: int = 0
    index_partitions: int = 0
    top_level_index_size: int = 0
    index_key_is_user_key: int = 0
    index_value_is_delta_encoded: int = 0
    filter_size: int = 0
    raw_key_size: int = 0
    raw_value_size: int = 0
    num_data_blocks: int = 0
    num_entries: int = 0
    num_filter_entries: int = 0
    num_deletions: int = 0
    num_merge_operands: int = 0
    num_range_deletions: int = 0
    format_version: int = 0
    fixed_key_len: int = 0
    column_family_id: int = kUnknownColumnFamily
    creation_time: int = 0
    oldest_key_time: int = 0
    file_creation_time: int = 0
    slow_compression_estimated_data_size: int = 0
    fast_compression_estimated_data_size: int = 0
    tail_start_offset: int = 0
    user_defined_timestamps_persisted: int = 0
    key_largest_seqno: int = 0
    key_smallest_seqno: int = 0
    db_id: str = ""
    db_session_id: str = ""
    db_host_id: str = ""
    filter_policy_name: str = ""
    column_family_name: str = ""
    comparator_name: str = ""
    merge_operator_name: str = ""
    prefix_extractor_name: str = ""
    property_collectors_names: str = ""
    compression_name: str = ""
    compression_options: str = ""
    #: every other entry, raw
    user_collected: dict[str, bytes] = field(default_factory=dict)
    #: the names found in the block (so absent properties are told from zero ones)
    present: set[str] = field(default_factory=set)

    @property
    def index_type(self) -> int:
        v = self.user_collected.get(kIndexType)
        return struct.unpack("<I", v)[0] if v is not None and len(v) == 4 else 0

    @property
    def index_type_name(self) -> str:
        return INDEX_TYPES.get(self.index_type, f"unknown({self.index_type})")


#: the predefined properties by their names' bytes: (attribute, is a varint64)
_BY_NAME = {**{k.encode(): (v, True, k) for k, v in UINT64_PROPERTIES.items()},
            **{k.encode(): (v, False, k) for k, v in STRING_PROPERTIES.items()}}
_ALSO_USER_B = frozenset(k.encode() for k in _ALSO_USER)


def read_properties(data: bytes) -> TableProperties:
    """The properties of a ``rocksdb.properties`` block's (uncompressed) contents: its
    entries walked in one loop (the per-file hot path of a data dir of small SSTs)."""
    try:
        end = block_layout(data).restarts_offset
    except BlockError as e:
        raise PropertiesError(f"properties block: {e}", e.offset) from None
    b = data if isinstance(data, bytes) else bytes(data)
    kw: dict = {}
    user: dict[str, bytes] = {}
    present: set[str] = set()
    by_name = _BY_NAME
    also_user = _ALSO_USER_B
    key = b""
    pos = 0
    while pos < end:
        start = pos
        try:
            shared, non_shared, vlen = b[pos], b[pos + 1], b[pos + 2]
            if (shared | non_shared | vlen) < 128:
                pos += 3                      # a header past ``end`` fails the fit test below
            else:
                shared, pos = _rv(b, pos)
                non_shared, pos = _rv(b, pos)
                vlen, pos = _rv(b, pos)
        except (IndexError, BlockError):
            raise PropertiesError(f"properties block: entry header at {start} runs past the entries",
                                  start) from None
        vpos = pos + non_shared
        if vpos + vlen > end or shared > len(key):
            raise PropertiesError(f"properties block: entry (shared {shared}, non-shared {non_shared}, "
                                  f"value {vlen}) does not fit", start)
        key = key[:shared] + b[pos:vpos] if shared else b[pos:vpos]
        pos = vpos + vlen
        known = by_name.get(key)
        if known is None:
            name = key.decode("utf-8", "replace")
            present.add(name)
            user[name] = b[vpos:pos]
            continue
        attr, is_int, name = known
        present.add(name)
        if not is_int:
            kw[attr] = b[vpos:pos].decode("utf-8", "replace")
        elif vlen and b[vpos] < 128:
            kw[attr] = b[vpos]
        else:
            try:
                kw[attr] = _rv(b[vpos:pos], 0)[0]
            except (IndexError, BlockError) as e:
                raise PropertiesError(f"property {name}: varint cut short ({e})") from None
        if key in also_user:
            user[name] = b[vpos:pos]
    return TableProperties(**kw, user_collected=user, present=present)

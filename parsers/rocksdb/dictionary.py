"""MyRocks' data dictionary: the ``__system__`` column family's records (MariaDB
storage/rocksdb/rdb_datadic.h ``Rdb_key_def::DATA_DICT_TYPE``, rdb_datadic.cc
``Rdb_dict_manager``, ``Rdb_tbl_def::put_dict``; properties_collector.cc
``Rdb_index_stats::materialize``).

Every key starts with a big-endian 4-byte dictionary type:

* 1 DDL_ENTRY_INDEX_START_NUMBER: ``db.table[#P#part]`` -> version u16, then
  (cf id u32, index number u32) per index, in the table's key order (the hidden
  primary key last);
* 2 INDEX_INFO: (cf id, index number) -> version u16, index type u8
  (1 primary, 2 secondary, 3 hidden primary), kv format version u16, index flags
  u32, TTL duration u64 (rdb_datadic.cc ``add_or_update_index_cf_mapping``);
* 3 CF_DEFINITION: cf id -> version u16, flags u32 (1 reverse, 4 per partition);
* 6 INDEX_STATISTICS: (cf id, index number) -> the stats the server last saved;
* 7 MAX_INDEX_ID, 9 AUTO_INC, 20 TABLE_VERSION (MariaDB).

User data keys of every other column family start with their index number (u32 BE).
Records are read newest first: an internal key's last 8 bytes hold (sequence << 8 | type)."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

DDL_ENTRY_INDEX_START_NUMBER = 1
INDEX_INFO = 2
CF_DEFINITION = 3
BINLOG_INFO_INDEX_NUMBER = 4
DDL_DROP_INDEX_ONGOING = 5
INDEX_STATISTICS = 6
MAX_INDEX_ID = 7
DDL_CREATE_INDEX_ONGOING = 8
AUTO_INC = 9
TABLE_VERSION = 20
END_DICT_INDEX_ID = 255
#: Rdb_key_def::INDEX_TYPE
INDEX_TYPES = {1: "primary", 2: "secondary", 3: "hidden primary"}
#: CF_DEFINITION flags
REVERSE_CF_FLAG = 1
PER_PARTITION_CF_FLAG = 4
#: db/dbformat.h ValueType
kTypeDeletion, kTypeValue, kTypeMerge, kTypeSingleDeletion = 0x0, 0x1, 0x2, 0x7
kTypeRangeDeletion = 0xF
VALUE_TYPES = {0x0: "delete", 0x1: "value", 0x2: "merge", 0x7: "single delete", 0xF: "range delete",
               0x10: "blob index", 0x13: "delete with timestamp", 0x16: "wide column entity"}
#: properties_collector.h Rdb_index_stats versions
INDEX_STATS_VERSION_INITIAL = 1
INDEX_STATS_VERSION_ENTRY_TYPES = 2


class DictionaryError(Exception):
    pass


@dataclass
class IndexDef:
    index_number: int
    cf_id: int
    table: str = ""              # db.table
    partition: str | None = None
    ordinal: int = 0             # position in the table's key order
    index_type: int = 0
    kv_format_version: int = 0
    index_flags: int = 0
    ttl_duration: int = 0

    @property
    def type_name(self) -> str:
        return INDEX_TYPES.get(self.index_type, f"type {self.index_type}")


@dataclass
class IndexStats:
    """One index's figures from an SST's ``__indexstats__`` (Rdb_index_stats)."""

    cf_id: int
    index_number: int
    data_size: int               # raw user key + value bytes
    rows: int
    actual_disk_size: int        # the collector's own on-disk estimate
    entry_deletes: int = 0
    entry_single_deletes: int = 0
    entry_merges: int = 0
    entry_others: int = 0
    distinct_keys_per_prefix: list[int] = field(default_factory=list)


def read_index_stats(value: bytes) -> list[IndexStats]:
    """Rdb_index_stats::unmaterialize: version u16 BE, then per index cf u32, index
    u32, data_size, rows, actual_disk_size, n prefixes (u64 BE each), [version 2: four
    entry-type counters], the distinct keys per prefix."""
    if len(value) < 2:
        raise DictionaryError("__indexstats__ shorter than its version")
    version = struct.unpack_from(">H", value, 0)[0]
    if version not in (INDEX_STATS_VERSION_INITIAL, INDEX_STATS_VERSION_ENTRY_TYPES):
        raise DictionaryError(f"__indexstats__ version {version} is not known")
    p = 2
    out: list[IndexStats] = []
    head = 8 + 8 * (4 + (4 if version >= 2 else 0))
    while p < len(value):
        if p + head > len(value):
            raise DictionaryError(f"__indexstats__ entry cut short at byte {p}")
        cf, idx = struct.unpack_from(">II", value, p)
        p += 8
        data_size, rows, disk, nprefix = struct.unpack_from(">QQQQ", value, p)
        p += 32
        counters = [0, 0, 0, 0]
        if version >= 2:
            counters = list(struct.unpack_from(">QQQQ", value, p))
            p += 32
        if nprefix > 4096 or p + 8 * nprefix > len(value):
            raise DictionaryError(f"__indexstats__ entry with {nprefix} key prefixes does not fit")
        prefixes = list(struct.unpack_from(f">{nprefix}Q", value, p))
        p += 8 * nprefix
        out.append(IndexStats(cf, idx, data_size, rows, disk, *counters, prefixes))
    return out


@dataclass
class Dictionary:
    tables: dict[str, list[IndexDef]] = field(default_factory=dict)     # "db.table#P#p" -> indexes
    indexes: dict[int, IndexDef] = field(default_factory=dict)          # by index number
    cf_flags: dict[int, int] = field(default_factory=dict)
    max_index_id: int = 0
    saved_stats: dict[int, IndexStats] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def split_table_name(full: str) -> tuple[str, str, str | None]:
    """(database, table, partition) of a DDL entry's ``db.table[#P#part[#SP#sub]]``."""
    db, _, rest = full.partition(".")
    table, sep, part = rest.partition("#P#")
    return db, table, (part if sep else None)


def build_dictionary(records: dict[bytes, tuple[int, int, bytes]]) -> Dictionary:
    """The dictionary from the ``__system__`` CF's newest record per user key
    (``records``: user key -> (sequence, value type, value))."""
    d = Dictionary()
    infos: dict[int, tuple[int, int, int, int]] = {}
    for key, (_, vtype, value) in sorted(records.items()):
        if vtype != kTypeValue or len(key) < 4:
            continue
        dtype = struct.unpack_from(">I", key, 0)[0]
        try:
            if dtype == DDL_ENTRY_INDEX_START_NUMBER:
                name = key[4:].decode("utf-8", "replace")
                db, table, part = split_table_name(name)
                if (len(value) - 2) % 8:
                    raise DictionaryError(f"DDL entry of {name} has {len(value)} bytes")
                defs = []
                for k in range((len(value) - 2) // 8):
                    cf, idx = struct.unpack_from(">II", value, 2 + 8 * k)
                    defs.append(IndexDef(idx, cf, f"{db}.{table}", part, k))
                d.tables[name] = defs
            elif dtype == INDEX_INFO and len(key) == 12:
                cf, idx = struct.unpack_from(">II", key, 4)
                ver, itype, kv = struct.unpack_from(">HBH", value, 0)
                flags = struct.unpack_from(">I", value, 5)[0] if len(value) >= 9 else 0
                ttl = struct.unpack_from(">Q", value, 9)[0] if len(value) >= 17 else 0
                infos[idx] = (itype, kv, flags, ttl)
            elif dtype == CF_DEFINITION and len(key) == 8:
                cf = struct.unpack_from(">I", key, 4)[0]
                d.cf_flags[cf] = struct.unpack_from(">I", value, 2)[0] if len(value) >= 6 else 0
            elif dtype == MAX_INDEX_ID and len(value) >= 6:
                d.max_index_id = struct.unpack_from(">I", value, 2)[0]
            elif dtype == INDEX_STATISTICS:
                for st in read_index_stats(value):
                    d.saved_stats[st.index_number] = st
        except (struct.error, DictionaryError) as e:
            d.problems.append(f"dictionary record {key[:4].hex()}…: {e}")
    for defs in d.tables.values():
        for ix in defs:
            info = infos.get(ix.index_number)
            if info is not None:
                ix.index_type, ix.kv_format_version, ix.index_flags, ix.ttl_duration = info
            d.indexes[ix.index_number] = ix
    return d

"""The ``.frm`` table definition: which engine a table belongs to
(MariaDB/server sql/unireg.cc ``create_frm_image`` writes it, sql/table.cc
``dd_frm_type`` / ``open_table_def`` / ``Extra2_info::read`` read it).

Header (FRM_HEADER_SIZE 64 bytes, little endian):

====  ==================================================================
0     0xfe 0x01 (``is_binary_frm_header``); a view is text, ``TYPE=VIEW\\n``
2     FRM_VER (6) + 3, + 4 with true VARCHAR (FRM_VER_TRUE_VARCHAR 10), + 5 with
      expressions (FRM_VER_EXPRESSSIONS 11, MariaDB 10.2+): sql/unireg.h
3     legacy_db_type (sql/handler.h ``enum legacy_db_type``)
4     u2 length of the extra2 segment that follows the header (MariaDB)
6     u2 key information position
14    u2 key info length (0xffff: u4 at 47)
16    u2 reclength (the default record)
51    u4 MYSQL_VERSION_ID of the server that wrote it
55    u4 length of the extra segment after the default record
61    default_part_db_type: the partitions' legacy_db_type
====  ==================================================================

extra2 (at 64): ``type, length`` records (length one byte, or 0 and a u2 of at
least 256): EXTRA2_TABLEDEF_VERSION 0 (the table's 16-byte id),
EXTRA2_DEFAULT_PART_ENGINE 1 (the partitions' engine by name, for engines
without a fixed legacy type) and others.  The extra segment at
``record_offset + reclength`` holds the connect string (u2 + bytes) and the
engine name (u2 + bytes: how ``dd_frm_type`` names engines of type
DB_TYPE_UNKNOWN or >= DB_TYPE_FIRST_DYNAMIC, e.g. ROCKSDB), then the
partition clause (u4 + text).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

FRM_HEADER_SIZE = 64
FRM_MAGIC = b"\xfe\x01"
VIEW_MAGIC = b"TYPE=VIEW\n"
FRM_VER = 6
FRM_VER_EXPRESSSIONS = FRM_VER + 5
EXTRA2_TABLEDEF_VERSION = 0
EXTRA2_DEFAULT_PART_ENGINE = 1
NAME_CHAR_LEN = 64

#: MariaDB sql/handler.h enum legacy_db_type -> the engine's name (as SHOW ENGINES spells it)
LEGACY_DB_TYPES = {
    6: "MEMORY", 9: "MyISAM", 10: "MRG_MyISAM", 12: "InnoDB", 15: "EXAMPLE", 16: "ARCHIVE", 17: "CSV",
    18: "FEDERATED", 19: "BLACKHOLE", 20: "partition", 21: "BINLOG", 22: "ONLINE_ALTER", 23: "PBXT",
    28: "PERFORMANCE_SCHEMA", 41: "S3", 42: "Aria", 43: "TokuDB", 44: "SEQUENCE",
}
DB_TYPE_UNKNOWN = 0
DB_TYPE_PARTITION_DB = 20
DB_TYPE_FIRST_DYNAMIC = 45
DB_TYPE_DEFAULT = 127


class FrmError(ValueError):
    """The .frm cannot be read; ``offset`` is where it goes wrong."""

    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.offset = offset


@dataclass(frozen=True)
class Frm:
    """What a .frm says of its table's storage."""

    view: bool
    frm_version: int = 0
    legacy_db_type: int = 0
    mysql_version: int = 0
    engine_name: str | None = None         # the extra segment's name (plugin engines, "partition")
    default_part_db_type: int = 0
    part_engine_name: str | None = None    # EXTRA2_DEFAULT_PART_ENGINE
    partition_clause: str | None = None
    #: the keys' names in key order (the key information segment); empty when it cannot be read
    key_names: tuple[str, ...] = ()

    @property
    def partitioned(self) -> bool:
        return self.legacy_db_type == DB_TYPE_PARTITION_DB or self.engine_name == "partition"

    @property
    def engine(self) -> str:
        """The table's engine as information_schema names it (a partitioned table: its partitions')."""
        if self.view:
            return "VIEW"
        if self.partitioned:
            return (self.part_engine_name or LEGACY_DB_TYPES.get(self.default_part_db_type)
                    or f"legacy type {self.default_part_db_type}")
        return (LEGACY_DB_TYPES.get(self.legacy_db_type) or self.engine_name
                or f"legacy type {self.legacy_db_type}")


def _extra2(buf: bytes, length: int) -> dict[int, bytes]:
    """extra2 records (Extra2_info::read), FrmError on a record that runs past the segment."""
    out: dict[int, bytes] = {}
    pos, end = FRM_HEADER_SIZE, FRM_HEADER_SIZE + length
    if length and buf[pos:pos + 1] == b"/":            # an old .frm had '/' there
        return out
    while pos + 3 <= end:
        typ = buf[pos]
        n = buf[pos + 1]
        pos += 2
        if not n:
            n = struct.unpack_from("<H", buf, pos)[0]
            pos += 2
        if not n or pos + n > end:
            raise FrmError(f"extra2 record of type {typ} ({n} bytes) runs past the extra2 segment", pos)
        out.setdefault(typ, buf[pos:pos + n])
        pos += n
    return out


#: sql/unireg.h NAMES_SEP_CHAR: each key name follows one
NAMES_SEP_CHAR = 0xFF


def read_key_names(buf: bytes, key_pos: int, key_len: int, version: int) -> tuple[str, ...]:
    """The key names of the key information segment (sql/table.cc ``open_binary_frm``):
    the key count (one byte, or 15 bits when the first has its top bit), then per key
    8 bytes (flags, length, parts, algorithm, block size; 4 before FRM_VER + 3) and 9 per
    key part (7 before FRM_VER + 1), then the names, each after a 0xff, ended by a 0."""
    seg = buf[key_pos:key_pos + key_len]
    if len(seg) < 6:
        raise FrmError("key information segment shorter than its 6-byte header", key_pos)
    keys = ((seg[1] << 7) | (seg[0] & 0x7F)) if seg[0] & 0x80 else seg[0]
    new_frm_ver = version - FRM_VER
    key_head = 8 if new_frm_ver >= 3 else 4
    part_len = 9 if new_frm_ver >= 1 else 7
    pos = 6
    for _ in range(keys):
        if pos + key_head > len(seg):
            raise FrmError("key definitions run past the key information segment", key_pos + pos)
        parts = seg[pos + 4] if new_frm_ver >= 3 else seg[pos + 2]
        pos += key_head + parts * part_len
    end = seg.find(b"\0", pos)
    names = [n.decode("utf-8", "replace") for n in seg[pos:end if end >= 0 else len(seg)].split(b"\xff") if n]
    if len(names) != keys:
        raise FrmError(f"{len(names)} key names for {keys} keys", key_pos + pos)
    return tuple(names)


def read_frm(buf: bytes) -> Frm:
    """The .frm in ``buf`` (the whole file)."""
    if buf.startswith(VIEW_MAGIC):
        return Frm(view=True)
    if buf[:2] != FRM_MAGIC:
        raise FrmError(f"magic {buf[:2].hex(' ') or '(none)'} is neither fe 01 nor TYPE=VIEW: not a .frm", 0)
    if len(buf) < FRM_HEADER_SIZE:
        raise FrmError(f"header cut short: {len(buf)} of {FRM_HEADER_SIZE} bytes", len(buf))
    version, dbt, e2len = buf[2], buf[3], struct.unpack_from("<H", buf, 4)[0]
    if not FRM_VER <= version <= FRM_VER_EXPRESSSIONS:
        raise FrmError(f"frm version {version} (known: {FRM_VER}..{FRM_VER_EXPRESSSIONS}): unknown format", 2)
    if FRM_HEADER_SIZE + e2len > len(buf):
        raise FrmError(f"extra2 segment of {e2len} bytes past the end of the file", 4)
    e2 = _extra2(buf, e2len)
    key_pos, key_len, reclength = struct.unpack_from("<HxxxxxxHH", buf, 6)
    if key_len == 0xFFFF:
        key_len = struct.unpack_from("<I", buf, 47)[0]
    mysql_version, n_length = struct.unpack_from("<II", buf, 51)
    engine_name = partition_clause = None
    if n_length:
        pos = key_pos + key_len + reclength
        end = pos + n_length
        if end > len(buf):
            raise FrmError(f"extra segment [{pos}, +{n_length}) past the end of the file ({len(buf)} bytes)", 55)
        conn = struct.unpack_from("<H", buf, pos)[0]
        pos += 2 + conn
        if pos + 2 < end:
            n = struct.unpack_from("<H", buf, pos)[0]
            if n <= NAME_CHAR_LEN and pos + 2 + n <= end:
                engine_name = buf[pos + 2:pos + 2 + n].decode("utf-8", "replace") or None
            pos += 2 + n
            if pos + 4 <= end:
                m = struct.unpack_from("<I", buf, pos)[0]
                if m and pos + 4 + m <= end:
                    partition_clause = buf[pos + 4:pos + 4 + m].rstrip(b"\0").decode("utf-8", "replace")
    part = e2.get(EXTRA2_DEFAULT_PART_ENGINE)
    try:
        key_names = read_key_names(buf, key_pos, key_len, version)
    except FrmError:
        key_names = ()                                 # the engine figures stand without them
    return Frm(view=False, frm_version=version, legacy_db_type=dbt, mysql_version=mysql_version, key_names=key_names,
               engine_name=engine_name, default_part_db_type=buf[61],
               part_engine_name=part.decode("utf-8", "replace") if part else None,
               partition_clause=partition_clause)

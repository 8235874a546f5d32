"""The ``.MAI`` header of an Aria table, as storage/maria/ma_open.c reads it
(_ma_state_info_read, _ma_base_info_read; struct MARIA_STATE_INFO and MARIA_BASE_INFO of
maria_def.h).  Numbers are big endian (``mi_*korr``), LSNs 7 bytes (lsn_korr: 3-byte
log file number, 4-byte offset, little endian).

File header (24 bytes): file_version (magic ``fe fe 09``), options, header_length,
state_info_length, base_info_length, base_pos, key_parts, unique_key_parts, keys,
uniques, not_used, fulltext_keys, data_file_type (STATIC_RECORD 0, DYNAMIC_RECORD 1,
COMPRESSED_RECORD 2, BLOCK_RECORD 3, NO_RECORD 4), org_data_file_type.
State (MARIA_STATE_INFO_SIZE = 215 bytes plus the key roots and analysis figures):
open_count, changed, create_rename_lsn, is_of_horizon, skip_redo_lsn, records, del,
split, dellink, first_bitmap_with_space, key_file_length, data_file_length, empty,
key_empty, auto_increment, checksum, create_trid, status, update_count, sortkey, then
key_root[keys], key_del and the analysis figures.  Base (MARIA_BASE_INFO_SIZE = 135
bytes) at base_pos: uuid, keystart, max file lengths, records, reloc, mean_row_length,
reclength, pack_reclength, min/max_pack_length, min_block_length, fields, ...,
extra_options (MA_EXTRA_OPTIONS_ENCRYPTED), null_bytes, ..., block_size,
rec_reflength, key_reflength, keys, auto_key, born_transactional, ...

maria_status (ma_info.c) gives information_schema ``TABLE_ROWS`` = records,
``DATA_LENGTH`` = data_file_length, ``INDEX_LENGTH`` = key_file_length and
``DATA_FREE`` = empty, all from this state.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..myisam.state import HA_OPTION_COMPRESS_RECORD, HeaderError, be, option_names  # noqa: F401 (shared names)

MARIA_FILE_MAGIC = b"\xfe\xfe\x09"           # maria_file_magic (ma_static.c)
HEADER_SIZE = 24
MARIA_STATE_INFO_SIZE = 24 + 2 + 7 * 3 + 4 + 11 * 8 + 4 * 4 + 8 + 3 * 4 + 5 * 8
_KEYS_OFF = MARIA_STATE_INFO_SIZE - 60      # key_root[] follows the fixed state (155 + state_diff_length)
MARIA_BASE_INFO_SIZE = 16 + 5 * 8 + 6 * 4 + 11 * 2 + 6 + 5 * 2 + 1 + 16
MARIA_MAX_KEY = 128
MA_EXTRA_OPTIONS_ENCRYPTED = 1

STATIC_RECORD, DYNAMIC_RECORD, COMPRESSED_RECORD, BLOCK_RECORD, NO_RECORD = 0, 1, 2, 3, 4
DATA_FILE_TYPES = {STATIC_RECORD: "STATIC_RECORD", DYNAMIC_RECORD: "DYNAMIC_RECORD",
                   COMPRESSED_RECORD: "COMPRESSED_RECORD", BLOCK_RECORD: "BLOCK_RECORD", NO_RECORD: "NO_RECORD"}
#: SHOW TABLE STATUS Row_format of each (ha_maria.cc get_row_type)
ROW_FORMATS = {STATIC_RECORD: "Fixed", DYNAMIC_RECORD: "Dynamic", COMPRESSED_RECORD: "Compressed",
               BLOCK_RECORD: "Page", NO_RECORD: "Fixed"}

# maria_def.h state.changed bits
STATE_CRASHED = 2
STATE_CRASHED_ON_REPAIR = 4
STATE_MOVED = 512
STATE_IN_REPAIR = 1024


def lsn_korr(buf, off: int) -> int:
    """A 7-byte LSN (ma_loghandler.h lsn_korr): file number << 32 | offset."""
    return (int.from_bytes(buf[off:off + 3], "little") << 32) | int.from_bytes(buf[off + 3:off + 7], "little")


def lsn_text(lsn: int) -> str:
    return f"({lsn >> 32},{lsn & 0xFFFFFFFF:#x})"


@dataclass
class MaiHeader:
    """The ``.MAI`` header: file header, state and base info."""

    file_version: int
    options: int
    header_length: int
    state_info_length: int
    base_info_length: int
    base_pos: int
    key_parts: int
    unique_key_parts: int
    keys: int
    uniques: int
    fulltext_keys: int
    data_file_type: int
    org_data_file_type: int
    open_count: int = 0
    changed: int = 0
    create_rename_lsn: int = 0
    is_of_horizon: int = 0
    skip_redo_lsn: int = 0
    records: int = 0
    deleted: int = 0
    split: int = 0
    dellink: int = 0
    first_bitmap_with_space: int = 0
    key_file_length: int = 0
    data_file_length: int = 0
    empty: int = 0
    key_empty: int = 0
    auto_increment: int = 0
    checksum: int = 0
    create_trid: int = 0
    key_root: list[int] = field(default_factory=list)
    key_del: int = 0
    keystart: int = 0
    reclength: int = 0
    pack_reclength: int = 0
    min_pack_length: int = 0
    fields: int = 0
    min_block_length: int = 0
    fixed_not_null_fields: int = 0
    max_field_lengths: int = 0
    null_bytes: int = 0
    original_null_bytes: int = 0
    pack_bytes: int = 0
    blobs: int = 0
    extra_options: int = 0
    block_size: int = 0
    rec_reflength: int = 0
    key_reflength: int = 0
    born_transactional: bool = False
    cut: tuple[str, int] | None = None
    state_read: bool = False
    base_read: bool = False
    #: a Compressed table's column lengths in the .MAI's column order (parsers/aria/scan.py
    #: fills it from blockrow.read_layout; empty: not read)
    column_lengths: list[int] = field(default_factory=list)
    #: an encrypted table's crypt data and, with a key file's key, its decryptor
    #: (parsers/aria/pagecrypt.py, filled by parsers/aria/scan.py; memory only)
    crypt: Any = field(default=None, repr=False)
    decryptor: Any = field(default=None, repr=False)

    @property
    def row_format(self) -> str:
        return ROW_FORMATS.get(self.data_file_type, f"type {self.data_file_type}")

    @property
    def crashed(self) -> bool:
        return bool(self.changed & (STATE_CRASHED | STATE_CRASHED_ON_REPAIR))

    @property
    def encrypted(self) -> bool:
        return bool(self.extra_options & MA_EXTRA_OPTIONS_ENCRYPTED)

    @property
    def keypage_header(self) -> int:
        """Bytes before the keys of an index page (ma_open.c: LSN and TRANSID when
        transactional, then KEYPAGE_KEYID_SIZE, KEYPAGE_FLAG_SIZE, KEYPAGE_USED_SIZE; an
        encrypted table's the key version too, and an LSN even when not transactional:
        ma_crypt.c ma_crypt_get_index_page_header_space)."""
        crypt = (4 if self.born_transactional else 7 + 4) if self.encrypted else 0
        return (7 + 6 if self.born_transactional else 0) + 1 + 1 + 2 + crypt

    @property
    def crypt_header_space(self) -> int:
        """share->crypt_page_header_space: the key version's bytes in each data page header."""
        return 4 if self.encrypted else 0


def read_header(buf) -> MaiHeader:
    """Read the header at the start of ``buf``: HeaderError when the 24-byte file header
    is cut or not Aria's; the state and base as far as ``buf`` holds them (``cut``)."""
    if len(buf) < HEADER_SIZE:
        raise HeaderError(f"file of {len(buf)} bytes: the {HEADER_SIZE}-byte file header is cut", len(buf))
    if bytes(buf[:3]) != MARIA_FILE_MAGIC:
        raise HeaderError(f"not an Aria index file: magic {bytes(buf[:4]).hex()} (fefe09 expected)", 0)
    h = MaiHeader(
        file_version=buf[3], options=be(buf, 4, 2), header_length=be(buf, 6, 2),
        state_info_length=be(buf, 8, 2), base_info_length=be(buf, 10, 2), base_pos=be(buf, 12, 2),
        key_parts=be(buf, 14, 2), unique_key_parts=be(buf, 16, 2), keys=buf[18], uniques=buf[19],
        fulltext_keys=buf[21], data_file_type=buf[22], org_data_file_type=buf[23])
    if len(buf) < _KEYS_OFF:
        h.cut = (f"state cut at byte {len(buf)} (it takes {_KEYS_OFF} bytes)", len(buf))
        return h
    h.open_count = be(buf, 24, 2)
    h.changed = be(buf, 26, 2)
    h.create_rename_lsn, h.is_of_horizon, h.skip_redo_lsn = (lsn_korr(buf, 28 + 7 * i) for i in range(3))
    (h.records, h.deleted, h.split, h.dellink, h.first_bitmap_with_space, h.key_file_length,
     h.data_file_length, h.empty, h.key_empty, h.auto_increment, h.checksum, h.create_trid) = (
        be(buf, 49 + 8 * i, 8) for i in range(12))
    h.state_read = True
    p = _KEYS_OFF + max(h.state_info_length - MARIA_STATE_INFO_SIZE, 0)
    if len(buf) < p + 8 * h.keys + 8:
        h.cut = (f"key roots cut at byte {len(buf)} (they end at {p + 8 * h.keys + 8})", len(buf))
        return h
    h.key_root = [be(buf, p + 8 * i, 8) for i in range(h.keys)]
    h.key_del = be(buf, p + 8 * h.keys, 8)
    b = h.base_pos
    if len(buf) < b + MARIA_BASE_INFO_SIZE:
        h.cut = (f"base info cut at byte {len(buf)} (it ends at {b + MARIA_BASE_INFO_SIZE})", len(buf))
        return h
    h.keystart = be(buf, b + 16, 8)
    h.reclength = be(buf, b + 60, 4)
    h.pack_reclength = be(buf, b + 64, 4)
    h.min_pack_length = be(buf, b + 68, 4)
    h.min_block_length = be(buf, b + 76, 4)
    h.fields = be(buf, b + 80, 2)
    h.fixed_not_null_fields = be(buf, b + 82, 2)
    h.max_field_lengths = be(buf, b + 86, 2)
    h.null_bytes, h.original_null_bytes = be(buf, b + 92, 2), be(buf, b + 94, 2)
    h.pack_bytes, h.blobs = be(buf, b + 108, 2), be(buf, b + 110, 2)
    h.extra_options = be(buf, b + 90, 2)
    h.block_size = be(buf, b + 100, 2)
    h.rec_reflength, h.key_reflength = buf[b + 102], buf[b + 103]
    h.born_transactional = bool(buf[b + 106])
    h.base_read = True
    return h


def check_header(h: MaiHeader, index_size: int) -> list[tuple[str, int]]:
    """What maria_open refuses and counts no table can have: (message, field offset)."""
    out: list[tuple[str, int]] = []
    if h.keys > MARIA_MAX_KEY:
        out.append((f"keys {h.keys} > MARIA_MAX_KEY {MARIA_MAX_KEY}", 18))
    if h.data_file_type not in DATA_FILE_TYPES:
        out.append((f"data_file_type {h.data_file_type} unknown", 22))
    if h.base_pos < HEADER_SIZE or h.base_pos > h.header_length:
        out.append((f"base_pos {h.base_pos} outside the header of {h.header_length} bytes", 12))
    if h.base_read:
        b = h.base_pos
        if h.block_size < 1024 or h.block_size > 32768 or h.block_size & (h.block_size - 1):
            out.append((f"block_size {h.block_size}: a power of two from 1024 to 32768 expected", b + 100))
        if h.keystart > 65535 or h.rec_reflength > 8:
            out.append((f"keystart {h.keystart}, rec_reflength {h.rec_reflength}: maria_open calls such a "
                        f"table crashed", b + 16))
        if h.key_file_length < h.keystart:
            out.append((f"key_file_length {h.key_file_length} < keystart {h.keystart}", 89))
        for i, root in enumerate(h.key_root):
            if root != 0xFFFFFFFFFFFFFFFF and not h.keystart <= root < max(h.key_file_length, index_size):
                out.append((f"key_root[{i}] {root} outside the index pages [{h.keystart}, {h.key_file_length})",
                            _KEYS_OFF + max(h.state_info_length - MARIA_STATE_INFO_SIZE, 0) + 8 * i))
    if h.data_file_type == BLOCK_RECORD:
        per_row, what = 1, "1 byte"                                  # a row needs at least its directory entry
        if h.base_read and h.block_size:
            # at most MAX_ROWS_PER_PAGE (255) rows on each page but the bitmap pages
            if h.records > 255 * max(h.data_file_length // h.block_size - 1, 0):
                out.append((f"records {h.records} > 255 rows on each of the {h.data_file_length // h.block_size} "
                            f"pages of data_file_length {h.data_file_length}", 49))
            per_row = 0
    elif h.data_file_type == DYNAMIC_RECORD:
        per_row, what = 20, "20 bytes"
    elif h.data_file_type == STATIC_RECORD:
        per_row, what = max(h.pack_reclength, 1), f"{max(h.pack_reclength, 1)} bytes"
    else:
        per_row, what = 1, "1 byte"
    if per_row and (h.records + h.deleted) * per_row > h.data_file_length:
        out.append((f"records {h.records} + deleted {h.deleted} rows of at least {what} cannot fit "
                    f"data_file_length {h.data_file_length}", 49))
    if h.empty > h.data_file_length:
        out.append((f"empty {h.empty} > data_file_length {h.data_file_length}", 105))
    return out

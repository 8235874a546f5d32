"""The ``.MYI`` header of a MyISAM table: the file header, the state and the base
info, then the key definitions, as storage/myisam/mi_open.c reads them
(mi_state_info_read, mi_n_base_info_read, mi_keydef_read; the struct MI_STATE_INFO
of myisamdef.h).  Every number is big endian (the ``mi_*korr`` macros).

File header (24 bytes): file_version (magic ``fe fe 07 01``), options, header_length
(the whole header: state + base + key definitions), state_info_length, base_info_length,
base_pos, key_parts, unique_key_parts, keys, uniques, language, max_block_size_index,
fulltext_keys, not_used.  State (MI_STATE_INFO_SIZE = 176 bytes plus the key roots, the
delete links and rec_per_key_part): open_count, changed, sortkey, records, del, split,
dellink, key_file_length, data_file_length, empty, key_empty, auto_increment, checksum,
process, unique, status, update_count, then key_root[keys], key_del[max_block_size_index]
and the analysis figures.  Base (MI_BASE_INFO_SIZE = 100 bytes) at base_pos: keystart
(where the key blocks begin), max file lengths, records/reloc (MAX_ROWS), mean_row_length,
reclength, pack_reclength, min/max_pack_length, min_block_length, fields, pack_fields,
rec_reflength, key_reflength, keys, auto_key, pack_bits, blobs, max_key_block_length,
max_key_length.  Key definitions (MI_KEYDEF_SIZE = 12 bytes, each followed by its
segments, HA_KEYSEG_SIZE = 18 bytes): keysegs, key_alg, flag, block_length, keylength,
minlength, maxlength.  The header ends with a column definition per field
(mi_recinfo_read, MI_COLUMNDEF_SIZE = 7 bytes: type, length, null_bit, null_pos), the
record's layout; a myisampack'ed file's columns are unpacked to these lengths.

ha_myisam::info gives information_schema ``TABLE_ROWS`` = records, ``DATA_LENGTH`` =
data_file_length, ``INDEX_LENGTH`` = key_file_length, ``DATA_FREE`` = empty (the bytes
of deleted rows: what OPTIMIZE TABLE gives back) through mi_status (mi_info.c).
"""
from __future__ import annotations

from dataclasses import dataclass, field

MYISAM_FILE_MAGIC = b"\xfe\xfe\x07"          # myisam_file_magic (mi_static.c), 4th byte the version
HEADER_SIZE = 24                            # sizeof(MI_STATE_INFO.header)
MI_STATE_INFO_SIZE = 24 + 14 * 8 + 7 * 4 + 2 * 2 + 8
MI_BASE_INFO_SIZE = 5 * 8 + 8 * 4 + 4 + 4 * 2 + 16
MI_KEYDEF_SIZE = 2 + 5 * 2
HA_KEYSEG_SIZE = 6 + 2 * 2 + 4 * 2
MI_UNIQUEDEF_SIZE = 2 + 1 + 1
MI_COLUMNDEF_SIZE = 2 + 2 + 1 + 2
MI_MAX_KEY = 64                             # myisam.h (MI_MAX_KEY = HA_MAX_POSSIBLE_KEY)
HA_MAX_KEY_SEG = 32
MI_MIN_KEY_BLOCK_LENGTH = 1024              # key pointers count in these (_mi_kpos)
MI_MAX_KEY_BLOCK_LENGTH = 16384

# my_base.h table options (state.header.options)
HA_OPTION_PACK_RECORD = 1
HA_OPTION_PACK_KEYS = 2
HA_OPTION_COMPRESS_RECORD = 4
HA_OPTION_TMP_TABLE = 16
HA_OPTION_CHECKSUM = 32
HA_OPTION_DELAY_KEY_WRITE = 64
HA_OPTION_RELIES_ON_SQL_LAYER = 512
HA_OPTION_NULL_FIELDS = 1024
HA_OPTION_PAGE_CHECKSUM = 2048
HA_OPTION_TEMP_COMPRESS_RECORD = 1 << 15
OPTION_NAMES = {
    HA_OPTION_PACK_RECORD: "PACK_RECORD", HA_OPTION_PACK_KEYS: "PACK_KEYS",
    HA_OPTION_COMPRESS_RECORD: "COMPRESS_RECORD", HA_OPTION_TMP_TABLE: "TMP_TABLE",
    HA_OPTION_CHECKSUM: "CHECKSUM", HA_OPTION_DELAY_KEY_WRITE: "DELAY_KEY_WRITE",
    HA_OPTION_RELIES_ON_SQL_LAYER: "RELIES_ON_SQL_LAYER", HA_OPTION_NULL_FIELDS: "NULL_FIELDS",
    HA_OPTION_PAGE_CHECKSUM: "PAGE_CHECKSUM", HA_OPTION_TEMP_COMPRESS_RECORD: "TEMP_COMPRESS_RECORD",
}

# myisamdef.h state.changed bits
STATE_CHANGED = 1
STATE_CRASHED = 2
STATE_CRASHED_ON_REPAIR = 4

# my_base.h key flags: keys of these kinds are stored packed (mi_open.c setup_key_functions)
HA_NOSAME = 1
HA_PACK_KEY = 2
HA_VAR_LENGTH_KEY = 8
HA_BINARY_PACK_KEY = 32
HA_FULLTEXT = 128
HA_SPATIAL = 1024
HA_KEY_ALG_RTREE = 2


class HeaderError(ValueError):
    """The header cannot be read; ``offset`` is where it goes wrong."""

    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.offset = offset


def be(buf: bytes, off: int, n: int) -> int:
    """The big-endian unsigned number of ``n`` bytes at ``off`` (mi_uintNkorr)."""
    return int.from_bytes(buf[off:off + n], "big")


def option_names(options: int) -> list[str]:
    return [name for bit, name in OPTION_NAMES.items() if options & bit]


@dataclass(frozen=True)
class KeyDef:
    """One key (index) definition (MI_KEYDEF as mi_keydef_read reads it)."""

    keysegs: int
    key_alg: int
    flag: int
    block_length: int        # bytes of each of this key's blocks
    keylength: int           # the longest key, with the row pointer
    minlength: int
    maxlength: int

    @property
    def packed(self) -> bool:
        """Keys stored with prefix or length packing (not a fixed stride)."""
        return bool(self.flag & (HA_BINARY_PACK_KEY | HA_VAR_LENGTH_KEY))


@dataclass
class MyiHeader:
    """The ``.MYI`` header: file header, state, base info and key definitions."""

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
    language: int
    max_block_size_index: int
    fulltext_keys: int
    # state
    open_count: int = 0
    changed: int = 0
    records: int = 0
    deleted: int = 0            # state.del: deleted rows
    split: int = 0
    dellink: int = 0
    key_file_length: int = 0
    data_file_length: int = 0
    empty: int = 0              # bytes of deleted rows / blocks in the data file
    key_empty: int = 0          # bytes of deleted key blocks
    auto_increment: int = 0
    checksum: int = 0
    key_root: list[int] = field(default_factory=list)
    key_del: list[int] = field(default_factory=list)
    create_time: int = 0
    check_time: int = 0
    # base
    keystart: int = 0
    max_data_file_length: int = 0
    max_key_file_length: int = 0
    reclength: int = 0
    pack_reclength: int = 0
    min_pack_length: int = 0
    max_pack_length: int = 0
    min_block_length: int = 0
    fields: int = 0
    rec_reflength: int = 0
    key_reflength: int = 0
    base_keys: int = 0
    blobs: int = 0
    max_key_block_length: int = 0
    max_key_length: int = 0
    keydefs: list[KeyDef] = field(default_factory=list)
    #: each column's (type, length) from the column definitions (empty: not read, or their
    #: lengths do not make reclength)
    columns: list[tuple[int, int]] = field(default_factory=list)
    #: each column's (null_bit, null_pos) beside ``columns`` (MI_COLUMNDEF)
    column_nulls: list[tuple[int, int]] = field(default_factory=list)
    #: where the header is cut (message, offset): the fields before it are read, the rest are 0
    cut: tuple[str, int] | None = None
    state_read: bool = False        # the state's counts were read
    base_read: bool = False         # the base info was read

    @property
    def row_format(self) -> str:
        """SHOW TABLE STATUS Row_format (ha_myisam::info: Compressed, Dynamic, Fixed)."""
        if self.options & HA_OPTION_COMPRESS_RECORD:
            return "Compressed"
        if self.options & HA_OPTION_PACK_RECORD:
            return "Dynamic"
        return "Fixed"

    @property
    def crashed(self) -> bool:
        return bool(self.changed & (STATE_CRASHED | STATE_CRASHED_ON_REPAIR))


_KEYS_OFF = MI_STATE_INFO_SIZE - 52         # key_root[] follows the fixed state (124 + state_diff_length)


def read_header(buf: bytes) -> MyiHeader:
    """Read the header at the start of ``buf``: HeaderError when the 24-byte file header
    is cut or not MyISAM's; the state, base and key definitions as far as ``buf`` holds
    them (``cut`` says where it ends)."""
    if len(buf) < HEADER_SIZE:
        raise HeaderError(f"file of {len(buf)} bytes: the {HEADER_SIZE}-byte file header is cut", len(buf))
    if buf[:3] != MYISAM_FILE_MAGIC:
        raise HeaderError(f"not a MyISAM index file: magic {buf[:4].hex()} (fefe07 expected)", 0)
    h = MyiHeader(
        file_version=buf[3], options=be(buf, 4, 2), header_length=be(buf, 6, 2),
        state_info_length=be(buf, 8, 2), base_info_length=be(buf, 10, 2), base_pos=be(buf, 12, 2),
        key_parts=be(buf, 14, 2), unique_key_parts=be(buf, 16, 2), keys=buf[18], uniques=buf[19],
        language=buf[20], max_block_size_index=buf[21], fulltext_keys=buf[22])
    need = _KEYS_OFF
    if len(buf) < need:
        h.cut = (f"state cut at byte {len(buf)} (it takes {need} bytes)", len(buf))
        return h
    p = HEADER_SIZE
    h.open_count = be(buf, p, 2)
    h.changed = buf[p + 2]
    p += 4
    (h.records, h.deleted, h.split, h.dellink, h.key_file_length, h.data_file_length, h.empty,
     h.key_empty, h.auto_increment, h.checksum) = (be(buf, p + 8 * i, 8) for i in range(10))
    h.state_read = True
    diff = h.state_info_length - MI_STATE_INFO_SIZE      # state_diff_length
    p = _KEYS_OFF + max(diff, 0)
    roots_end = p + 8 * h.keys + 8 * h.max_block_size_index
    if len(buf) < roots_end:
        h.cut = (f"key roots cut at byte {len(buf)} (they end at {roots_end})", len(buf))
        return h
    h.key_root = [be(buf, p + 8 * i, 8) for i in range(h.keys)]
    p += 8 * h.keys
    h.key_del = [be(buf, p + 8 * i, 8) for i in range(h.max_block_size_index)]
    p += 8 * h.max_block_size_index
    if len(buf) >= p + 36:
        h.create_time = be(buf, p + 20, 8)
        h.check_time = be(buf, p + 36, 8) if len(buf) >= p + 44 else 0
    b = h.base_pos
    if len(buf) < b + MI_BASE_INFO_SIZE:
        h.cut = (f"base info cut at byte {len(buf)} (it ends at {b + MI_BASE_INFO_SIZE})", len(buf))
        return h
    h.keystart, h.max_data_file_length, h.max_key_file_length = (be(buf, b + 8 * i, 8) for i in range(3))
    q = b + 40
    (_mean, h.reclength, h.pack_reclength, h.min_pack_length, h.max_pack_length, h.min_block_length,
     h.fields, _pack_fields) = (be(buf, q + 4 * i, 4) for i in range(8))
    q += 32
    h.rec_reflength, h.key_reflength, h.base_keys = buf[q], buf[q + 1], buf[q + 2]
    q += 4
    h.blobs = be(buf, q + 2, 2)
    h.max_key_block_length = be(buf, q + 4, 2)
    h.max_key_length = be(buf, q + 6, 2)
    h.base_read = True
    p = b + MI_BASE_INFO_SIZE                        # mi_n_base_info_read reads a fixed size
    for k in range(h.keys):
        if len(buf) < p + MI_KEYDEF_SIZE:
            h.cut = (f"key definition {k} cut at byte {len(buf)}", len(buf))
            return h
        kd = KeyDef(keysegs=buf[p], key_alg=buf[p + 1], flag=be(buf, p + 2, 2), block_length=be(buf, p + 4, 2),
                    keylength=be(buf, p + 6, 2), minlength=be(buf, p + 8, 2), maxlength=be(buf, p + 10, 2))
        h.keydefs.append(kd)
        p += MI_KEYDEF_SIZE + kd.keysegs * HA_KEYSEG_SIZE
    h.columns = read_columns(buf, h)
    if h.columns:
        start = h.header_length - h.fields * MI_COLUMNDEF_SIZE
        h.column_nulls = [(buf[p + 4], be(buf, p + 5, 2)) for p in range(start, h.header_length, MI_COLUMNDEF_SIZE)]
    return h


def read_columns(buf: bytes, h: MyiHeader) -> list[tuple[int, int]]:
    """The (type, length) of each column: the last ``fields`` MI_COLUMNDEF_SIZE entries of the
    header (mi_create.c writes them after the key and unique definitions); empty when the
    header is cut or their lengths do not add up to the record length."""
    start = h.header_length - h.fields * MI_COLUMNDEF_SIZE
    if not h.fields or start < h.base_pos + MI_BASE_INFO_SIZE or len(buf) < h.header_length:
        return []
    cols = [(int.from_bytes(buf[p:p + 2], "big", signed=True), be(buf, p + 2, 2))
            for p in range(start, h.header_length, MI_COLUMNDEF_SIZE)]
    return cols if sum(n for _, n in cols) == h.reclength else []


def check_header(h: MyiHeader, index_size: int) -> list[tuple[str, int]]:
    """What mi_open refuses (its sanity checks) and counts no table can have: (message,
    offset of the field) for each."""
    out: list[tuple[str, int]] = []
    if h.keys > MI_MAX_KEY:
        out.append((f"keys {h.keys} > MI_MAX_KEY {MI_MAX_KEY}", 18))
    if h.key_parts > MI_MAX_KEY * HA_MAX_KEY_SEG:
        out.append((f"key_parts {h.key_parts} > {MI_MAX_KEY * HA_MAX_KEY_SEG}", 14))
    if h.base_pos < HEADER_SIZE or h.base_pos > h.header_length:
        out.append((f"base_pos {h.base_pos} outside the header of {h.header_length} bytes", 12))
    if not h.base_read:
        return out
    if h.keystart > 65535 or h.rec_reflength > 8 or h.key_reflength > 7:
        out.append((f"keystart {h.keystart}, rec_reflength {h.rec_reflength}, key_reflength "
                    f"{h.key_reflength}: mi_open calls such a table crashed", h.base_pos))
    if h.keystart < h.header_length:
        out.append((f"keystart {h.keystart} inside the header of {h.header_length} bytes", h.base_pos))
    if h.key_file_length < h.keystart:
        out.append((f"key_file_length {h.key_file_length} < keystart {h.keystart}", 60))
    for i, kd in enumerate(h.keydefs):
        if kd.block_length < MI_MIN_KEY_BLOCK_LENGTH or kd.block_length > MI_MAX_KEY_BLOCK_LENGTH \
                or kd.block_length % MI_MIN_KEY_BLOCK_LENGTH:
            out.append((f"key {i}: block_length {kd.block_length} is not a multiple of "
                        f"{MI_MIN_KEY_BLOCK_LENGTH} up to {MI_MAX_KEY_BLOCK_LENGTH}", 0))
    for i, root in enumerate(h.key_root):
        if root != 0xFFFFFFFFFFFFFFFF and not h.keystart <= root < max(h.key_file_length, index_size):
            out.append((f"key_root[{i}] {root} outside the key blocks [{h.keystart}, {h.key_file_length})",
                        _KEYS_OFF + max(h.state_info_length - MI_STATE_INFO_SIZE, 0) + 8 * i))
    # counts no table can have: every row takes at least this many bytes of the data file
    if h.options & HA_OPTION_COMPRESS_RECORD:
        per_row = 1
    elif h.options & HA_OPTION_PACK_RECORD:
        per_row = 20                                 # MI_MIN_BLOCK_LENGTH (mi_dynrec.c)
    else:
        per_row = max(h.pack_reclength, 1)
    if (h.records + h.deleted) * per_row > h.data_file_length:
        out.append((f"records {h.records} + deleted {h.deleted} rows of at least {per_row} bytes cannot fit "
                    f"data_file_length {h.data_file_length}", HEADER_SIZE + 4))
    if h.empty > h.data_file_length:
        out.append((f"empty {h.empty} > data_file_length {h.data_file_length}", HEADER_SIZE + 4 + 48))
    if h.key_empty > h.key_file_length:
        out.append((f"key_empty {h.key_empty} > key_file_length {h.key_file_length}", HEADER_SIZE + 4 + 56))
    return out

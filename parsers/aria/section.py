"""``files[].aria`` of the JSON, typed (parsers/section.py)."""
from __future__ import annotations

from ..section import Key, Section


class AriaIndexSection(Section):
    """A ``.MAI`` file: its header (ma_open.c) and index pages."""

    role: str = Key('"index"')
    file_version: int = Key("4th byte of the magic fe fe 09")
    options: list = Key("HA_OPTION_* names")
    row_format: str = Key("Page / Dynamic / Fixed / Compressed (SHOW TABLE STATUS)")
    data_file_type: str = Key("BLOCK_RECORD, DYNAMIC_RECORD, STATIC_RECORD, COMPRESSED_RECORD")
    transactional: bool = Key("base.born_transactional")
    encrypted: bool = Key("MA_EXTRA_OPTIONS_ENCRYPTED (pages not read)")
    block_size: int = Key()
    records: int = Key("state.records: TABLE_ROWS")
    deleted: int = Key("state.del")
    data_file_length: int = Key("DATA_LENGTH")
    key_file_length: int = Key("INDEX_LENGTH")
    empty: int = Key("DATA_FREE")
    key_empty: int = Key()
    auto_increment: int = Key()
    open_count: int = Key("not 0: not closed (crash, or copied while open)")
    changed: int = Key("state.changed bits")
    crashed: bool = Key()
    create_rename_lsn: str = Key("(log file, offset)")
    is_of_horizon: str = Key()
    create_trid: int = Key()
    keys: int = Key()
    keystart: int = Key()
    key_roots: list = Key("state.key_root per key (null: empty)")
    pages: int = Key("index pages")
    leaf_pages: int = Key()
    node_pages: int = Key()
    deleted_pages: int = Key()
    per_key: dict = Key("key number -> pages, leaf_pages, node_pages")
    checksum: dict = Key("algorithm, bad_pages (page numbers), no_crc_pages")


class AriaDataSection(Section):
    """A ``.MAD`` file."""

    role: str = Key('"data"')
    row_format: str = Key()
    pages: int = Key("BLOCK_RECORD pages")
    page_types: dict = Key("page type name -> pages")
    rows: int = Key("rows found in the file (HEAD page directory entries; Dynamic: first blocks); null: "
                    "encrypted pages not decrypted")
    decrypted: bool = Key("an encrypted table's pages decrypted with the key file's key (ma_crypt.c); null: "
                          "not encrypted")
    empty_page_bytes: int = Key("EMPTY_SPACE of HEAD and TAIL pages")
    unallocated_pages: int = Key()
    checksum: dict = Key("algorithm, bad_pages (page numbers), no_crc_pages")
    deleted_blocks: int = Key("Dynamic: deleted blocks")
    deleted_rows: int = Key("Fixed: deleted rows")
    deleted_bytes: int = Key("Dynamic/Fixed: bytes of deleted rows or blocks")
    row_bytes: int = Key()
    data_bytes: int = Key()
    packed_bytes: int = Key("bytes of the packed rows, their lengths included (Compressed)")
    decoded_bytes: int = Key("the rows unpacked: rows x reclength + their blobs (Compressed)")
    blob_bytes: int = Key("bytes of the unpacked blobs (Compressed)")
    walked_bytes: int = Key()
    complete: bool = Key()
    pack: dict = Key("aria_pack header (Compressed): version, header_length, trees ..., columns (each one's "
                     "pack type, tree and length)")


class AriaLogSection(Section):
    """``aria_log.NNNNNNNN``: the header of the transaction log file."""

    role: str = Key('"log"')
    file_number: int = Key()
    page_size: int = Key()
    maria_version: int = Key()
    server_version: int = Key("MYSQL_VERSION_ID of the server that wrote it")
    server_id: int = Key()
    timestamp: int = Key("microseconds since the epoch")


class AriaControlSection(Section):
    """``aria_log_control``."""

    role: str = Key('"control"')
    version: int = Key()
    uuid: str = Key("the uuid Aria tables of this server carry")
    block_size: int = Key()
    checkpoint_lsn: str = Key("(log file, offset) of the last checkpoint")
    last_log_number: int = Key()
    max_trid: int = Key()
    recovery_failures: int = Key()
    checksums_ok: bool = Key()


_BY_ROLE = {"index": AriaIndexSection, "data": AriaDataSection, "log": AriaLogSection,
            "control": AriaControlSection}


def section_from_json(data: dict) -> Section:
    """The typed section of a saved scan's ``files[].aria``."""
    return _BY_ROLE.get(data.get("role"), AriaDataSection).from_json(data)

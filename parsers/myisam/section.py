"""``files[].myisam`` of the JSON, typed (parsers/section.py)."""
from __future__ import annotations

from ..section import Key, Section


class MyisamIndexSection(Section):
    """A ``.MYI`` file: its header (mi_open.c) and key blocks."""

    role: str = Key('"index"')
    file_version: int = Key("4th byte of the magic fe fe 07")
    options: list = Key("HA_OPTION_* names of state.header.options")
    row_format: str = Key("Fixed / Dynamic / Compressed, as SHOW TABLE STATUS says")
    records: int = Key("state.records: TABLE_ROWS")
    deleted: int = Key("state.del: deleted rows")
    data_file_length: int = Key("state: DATA_LENGTH")
    key_file_length: int = Key("state: INDEX_LENGTH")
    empty: int = Key("state: bytes of deleted rows, DATA_FREE (what OPTIMIZE TABLE gives back)")
    key_empty: int = Key("state: bytes of deleted key blocks")
    auto_increment: int = Key()
    open_count: int = Key("not 0: the table was not closed (a crash, or copied while open)")
    changed: int = Key("state.changed bits (STATE_CRASHED = 2)")
    crashed: bool = Key()
    keys: int = Key()
    key_parts: int = Key()
    keystart: int = Key("offset of the first key block")
    key_roots: list = Key("state.key_root per key (null: empty)")
    reclength: int = Key("row length in memory")
    pack_reclength: int = Key("bytes of a stored fixed-length row")
    rec_reflength: int = Key()
    key_reflength: int = Key()
    key_block_lengths: list = Key("block_length per key")
    blocks: int = Key("key blocks (in use and deleted)")
    leaf_blocks: int = Key()
    node_blocks: int = Key()
    deleted_blocks: int = Key("key blocks in the key_del chains")
    deleted_block_bytes: int = Key()
    per_key: list = Key("per key: root, block_length, blocks, levels, entries (fixed-stride keys only)")


class MyisamDataSection(Section):
    """A ``.MYD`` file: its rows as the engine stores them."""

    role: str = Key('"data"')
    row_format: str = Key()
    rows: int = Key("live rows found in the file")
    deleted_rows: int = Key("deleted fixed-length rows (Fixed)")
    deleted_blocks: int = Key("deleted blocks (Dynamic)")
    deleted_bytes: int = Key("bytes of deleted rows / blocks: what OPTIMIZE TABLE gives back")
    row_blocks: int = Key("blocks holding row data (Dynamic)")
    row_bytes: int = Key("bytes of those blocks, headers included")
    data_bytes: int = Key("bytes of row data in them")
    trailing_bytes: int = Key("bytes after the last whole row (Fixed)")
    packed_bytes: int = Key("bytes of the packed rows, their lengths included (Compressed)")
    decoded_bytes: int = Key("the rows unpacked: rows x reclength + their blobs (Compressed)")
    blob_bytes: int = Key("bytes of the unpacked blobs (Compressed)")
    walked_bytes: int = Key("bytes the block walk covered")
    complete: bool = Key("the walk reached data_file_length")
    record_checksum: dict = Key("Compressed MyISAM: stored (the .MYI state's checksum), computed (every row unpacked, "
                                "mi_checksum.c), function; computed null with why when not recomputed")
    pack: dict = Key("myisampack header (Compressed): version, header_length, min/max_pack_length, trees ..., "
                     "columns (each one's pack type, tree and length)")


def section_from_json(data: dict) -> Section:
    """The typed section of a saved scan's ``files[].myisam``."""
    return (MyisamIndexSection if data.get("role") == "index" else MyisamDataSection).from_json(data)

"""``files[].innodb`` of the JSON, typed (parsers/section.py): a paged file's
figures (tablespaces, ibdata1, undo), and the system facts (TRX_SYS, dictionary
header, doublewrite, redo header and checkpoints) of the files that have them;
a redo log has the system facts only."""
from __future__ import annotations

from ..section import Key, Section


class InnoDBIndex(Section):
    """One index of a tablespace, its figures from the pages."""

    index_id: int = Key("PAGE_INDEX_ID")
    name: str = Key("from the file's SDI, the data dictionary or SYS_INDEXES")
    table: str | None = Key()
    root_page: int | None = Key()
    pages: int = Key("live B-tree pages")
    leaf_pages: int = Key()
    levels: int = Key()
    records: int | None = Key("records in the leaf pages (None: some were not decoded, see undecoded_pages)")
    fill_ratio: float | None = Key("data bytes / usable bytes of its pages")
    undecoded_pages: int = Key("page-compressed pages of the index a light scan did not decode (the default "
                               "`dbxray scan` of MariaDB page compression: their index and leaf level are from "
                               "the segment owning their extent; records and fill come with --full)")
    lobs: int = Key("MySQL 8 LOBs of the index (files that have them)")
    lob_pages: int = Key()


class InnoDBSection(Section):
    nested = {"indexes": InnoDBIndex}

    space_id: int = Key("FSP_SPACE_ID of page 0")
    fsp_flags: int = Key("FSP_SPACE_FLAGS as stored")
    page_size: int = Key("logical page size")
    physical_page_size: int = Key("bytes a page takes in the file (KEY_BLOCK_SIZE for ROW_FORMAT=COMPRESSED)")
    pages: int = Key()
    page_compressed: bool = Key()
    compression_algorithm: str | None = Key()
    page_types: dict = Key("engine constant name -> pages (page-compressed pages under their original type)")
    page_compressed_pages: int = Key()
    compressed_payload_bytes: int | None = Key("None: a page left undecoded does not state its payload length")
    undecoded_pages: int = Key("page-compressed pages a light scan did not decode (files that have them)")
    expected_hole_bytes: int = Key("what the engine should have punched at this filesystem block size")
    hole_bytes: int = Key("what really is unallocated")
    checksum: dict = Key("{algorithm, bad_pages}")
    indexes: list = Key("[{index_id, name, table, root_page, pages, leaf_pages, levels, records, fill_ratio}]")
    lobs: dict = Key("MySQL 8 LOB chains (files that have them)")
    tablespace: dict = Key("{name, shared, tables, names_from} (tablespace files)")
    encryption: dict = Key("MariaDB crypt data of page 0 and page counts (files that have crypt data): "
                           "{scheme, min_key_version, key_id, encryption, crypt_data_offset, algorithm, "
                           "encrypted_pages, unencrypted_pages, key_versions, decrypted_pages, index_facts}")
    doublewrite: dict = Key("ibdata1's doublewrite area: {blocks [[first page, pages]], segment_id, reserved_pages "
                            "(the segment's never-written fragment pages), reserved_zero_pages, slots, written_slots, "
                            "copies [{slot_page, space_id, page_no, type}]}; a MySQL 8 .dblwr file: {kind, file_id, "
                            "page_size, segments, slots, batch_slots, single_page_slots, written_slots, "
                            "bad_checksum_slots, trailing_bytes, copies [{slot, space_id, page_no, type, lsn, "
                            "page_size, checksum_ok}]}")
    fts: dict = Key("FULLTEXT aux tablespaces: {table, table_id, index_id, index, aux} from the file name's ids")
    fulltext: dict = Key("a table with FULLTEXT indexes, in its own file: {indexes [{index_id, name, aux_tables, "
                         "aux_bytes, aux_allocated_bytes, aux_pages}], common {the same for CONFIG, DELETED...}}")
    system: dict = Key("TRX_SYS, dictionary header, doublewrite, redo header and checkpoints")

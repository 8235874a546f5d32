"""``files[].archive`` of the JSON, typed (parsers/section.py)."""
from __future__ import annotations

from ..section import Key, Section


class ArchiveSection(Section):
    """An ``.ARZ`` data file: its azio header (azlib.h) and what inflating its data found."""

    version: int = Key("azio version (3: ha_archive.cc ARCHIVE_VERSION)")
    minor_version: int = Key()
    block_size: int = Key("AZ_BLOCK_POS x 1024 (AZ_BUFSIZE_WRITE)")
    state: str = Key("AZ_DIRTY_POS: clean / dirty / saved / crashed")
    header_rows: int = Key("rows the header records: SHOW TABLE STATUS Rows, I_S TABLE_ROWS")
    auto_increment: int = Key()
    forced_flushes: int = Key()
    check_point: int = Key("file length at the last flush")
    header_shortest_row: int = Key("shortest row written, its 4-byte length included")
    header_longest_row: int = Key("longest row written, its 4-byte length included")
    frm_offset: int = Key("the table's .frm copy (azwrite_frm)")
    frm_length: int = Key()
    frm_matches_file: bool = Key("the copy equals the table's .frm beside it (null: no .frm there)")
    comment_offset: int = Key()
    comment_length: int = Key()
    data_start: int = Key("AZ_START_POS: first byte of the deflate data")
    compressed_bytes: int = Key("file bytes from data_start to the end (deflate streams and their trailers)")
    uncompressed_bytes: int = Key("the row stream's bytes, inflated (each row with its 4-byte length)")
    members: int = Key("deflate streams (one per time the table was opened for writing)")
    rows: int = Key("rows counted in the row stream (ha_archive.cc unpack_row framing)")
    rows_match_header: bool = Key()
    shortest_row: int = Key("shortest row found, its 4-byte length included")
    longest_row: int = Key("longest row found, its 4-byte length included")
    spans: int = Key("units: the 32 KiB file spans azread reads (AZ_BUFSIZE_READ)")
    complete: bool = Key("the whole data region was inflated (false: an error stopped it)")


def section_from_json(data: dict) -> Section:
    """The typed section of a saved scan's ``files[].archive``."""
    return ArchiveSection.from_json(data)

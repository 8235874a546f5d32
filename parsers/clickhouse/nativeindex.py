"""``index.mrk`` of a StripeLog table: the index of the Native blocks in
``data.bin`` (src/Formats/IndexForNativeFormat.cpp ``IndexOfBlockForNativeFormat::read``,
written by src/Formats/NativeWriter.cpp through a CompressedWriteBuffer:
src/Storages/StorageStripeLog.cpp ``saveIndices``).

The decompressed index is, per INSERTed block::

    VarUInt num_columns, VarUInt num_rows
    per column: String name, String type,
                UInt64 offset_in_compressed_file, UInt64 offset_in_decompressed_block

NativeWriter finishes the compressed block before each column (``next()``), so a
column's data starts a compressed block of data.bin at offset_in_compressed_file
(offset_in_decompressed_block is 0) and runs to the next column's mark.
``system.tables.total_rows`` of a StripeLog is the sum of num_rows.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from .logfiles import DATA_FILE_NAME, INDEX_FILE_NAME  # noqa: F401 (their names)
from .varint import VarintError, read_string_binary, read_varuint

_U64 = struct.Struct("<Q")
#: a block of more columns than this is taken as damage, not data
MAX_COLUMNS = 1 << 16


class NativeIndexError(Exception):
    """The index could not be read; ``offset`` is in the decompressed index."""

    def __init__(self, message: str, offset: int | None = None):
        self.offset = offset
        super().__init__(message)


@dataclass
class IndexColumn:
    """One column of one block: its name, type and mark in data.bin."""

    name: str
    type: str
    offset_in_compressed_file: int
    offset_in_decompressed_block: int


@dataclass
class IndexBlock:
    """IndexOfBlockForNativeFormat: one INSERTed block."""

    num_rows: int
    columns: list[IndexColumn] = field(default_factory=list)


def read_native_index(buf: bytes) -> list[IndexBlock]:
    """Every block of a decompressed index.mrk."""
    blocks: list[IndexBlock] = []
    pos = 0
    try:
        while pos < len(buf):
            start = pos
            ncols, pos = read_varuint(buf, pos)
            nrows, pos = read_varuint(buf, pos)
            if ncols > MAX_COLUMNS:
                raise NativeIndexError(f"block of {ncols} columns (over {MAX_COLUMNS})", start)
            b = IndexBlock(nrows)
            for _ in range(ncols):
                name, pos = read_string_binary(buf, pos, 1 << 16)
                typ, pos = read_string_binary(buf, pos, 1 << 16)
                if pos + 16 > len(buf):
                    raise NativeIndexError("column mark runs past the end of the index", pos)
                off_c, = _U64.unpack_from(buf, pos)
                off_d, = _U64.unpack_from(buf, pos + 8)
                pos += 16
                b.columns.append(IndexColumn(name.decode("utf-8", "replace"), typ.decode("utf-8", "replace"),
                                             off_c, off_d))
            blocks.append(b)
    except VarintError as e:
        raise NativeIndexError(str(e), e.offset) from None
    return blocks

"""Block payloads on demand: the decompressed bytes of one unit, and the
units that hold one column of a table (for the compressor layer, which
re-encodes them to project sizes).

Decoding uses the codec layer (``parsers.codecs.ch_block.decompress_block``,
every ClickHouse codec and Multiple chains, output capped); the scan itself
never reads payloads.
"""
from __future__ import annotations

import atexit

import numpy as np

from ..codecs.general import DEFAULT_MAX_OUTPUT, DecodeError
from ..fileio import FileReadError, HandleCache, ReadOnlyFile
from ..model import Dataset, FileEntry

ENGINE = "clickhouse"
#: file descriptors kept open by read_unit_bytes: the type advisor reads a column's blocks a
#: run of one part's file after another, so each file is opened (and its holes listed) once,
#: not once a block (open, map and hole listing were 6x the reads themselves)
MAX_OPEN_FILES = 16
#: the opener is looked up here at each open (tests count the opens)
_HANDLES = HandleCache(MAX_OPEN_FILES, opener=lambda path: ReadOnlyFile(path))
atexit.register(_HANDLES.close)


def close_handles() -> None:
    """Close every cached handle (they are reopened on the next read)."""
    _HANDLES.close()


class PayloadError(Exception):
    """A block's bytes could not be read or decoded; names file and offset."""


def read_unit_bytes(entry: FileEntry, i: int) -> bytes:
    """The stored bytes of block ``i`` of a ``.bin`` entry (checksum + header + payload)."""
    if entry.units is None or not 0 <= i < len(entry.units):
        raise PayloadError(f"{entry.path}: no block {i}")
    off = int(entry.units["offset"][i])
    n = int(entry.units["stored"][i])
    try:
        data = _HANDLES.pread(entry.abspath, off, n)
    except FileReadError as e:
        raise PayloadError(str(e)) from None
    except OSError as e:
        raise PayloadError(f"{entry.path}: cannot read: {e.strerror or e}") from None
    if len(data) != n:
        raise PayloadError(f"{entry.path} @ offset {off}: truncated: wanted {n} bytes, read {len(data)}")
    return data


def unit_payload(entry: FileEntry, i: int, max_output: int = DEFAULT_MAX_OUTPUT) -> bytes:
    """Block ``i`` of a ``.bin`` entry, decompressed (every codec, chains peeled)."""
    from ..codecs.ch_block import decompress_block
    block = read_unit_bytes(entry, i)
    try:
        out = decompress_block(block, max_output=max_output)
    except DecodeError as e:
        raise PayloadError(f"{entry.path} @ offset {int(entry.units['offset'][i])}: {e}") from None
    if len(out) != int(entry.units["logical"][i]):
        raise PayloadError(f"{entry.path} @ offset {int(entry.units['offset'][i])}: decoded {len(out)} bytes, "
                           f"header says {int(entry.units['logical'][i])}")
    return out


def column_blocks(dataset: Dataset, db: str, table: str, column: str,
                  include_inactive: bool = False, files: list[FileEntry] | None = None) -> list[tuple[FileEntry, int]]:
    """Every (entry, block index) of a ``.bin`` file holding data of ``column`` in the table's
    active parts (projections, outdated and detached parts left out unless
    ``include_inactive``), or in a Log-family table's data files, in file then offset order.
    ``files``: the files to look in (default every file of the dataset)."""
    out: list[tuple[FileEntry, int]] = []
    for f in dataset.files if files is None else files:
        if f.engine != ENGINE or f.database != db or f.table != table or f.units is None:
            continue
        if f.role not in ("part_column_data", "table_data"):
            continue          # compressed marks / primary.cidx units are owned by a column too
        sec = f.sections.get(ENGINE, {})
        if f.role == "part_column_data" and not include_inactive and (
                sec.get("part_state") != "active" or "parent_part" in sec):
            continue
        ids = [k for k, v in f.owner_names.items() if v == column]
        if not ids:
            continue
        owners = f.units["owner"]
        hit = np.isin(owners, ids).nonzero()[0]
        hit = hit[np.argsort(f.units["offset"][hit], kind="stable")]
        out.extend((f, i) for i in hit.tolist())
    out.sort(key=lambda fi: fi[0].path)           # stable: each file's blocks stay in offset order
    return out

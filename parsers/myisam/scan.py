"""MyISAM entry point: ``analyze(dataset, files, ctx)`` reads every ``.MYI`` header
and key blocks and walks every ``.MYD``; a table's figures are those ha_myisam::info
gives information_schema (from the ``.MYI`` state: mi_info.c mi_status), beside what the
data file itself holds."""
from __future__ import annotations

import posixpath

import numpy as np

from ..fileio import FileReadError, ReadOnlyFile
from ..model import Dataset, FileEntry, ScanContext, UnitFacts, empty_units
from ..tablefiles import table_of
from . import dynrec, keyblocks, staticrec
from . import packrec, rowchecksum
from .packrec import MYISAM_PACK_FILE_MAGIC, HEAD_LENGTH, PackError, read_pack_header
from .section import MyisamDataSection, MyisamIndexSection
from .names import DATA_EXT, INDEX_EXT
from .state import (HA_OPTION_COMPRESS_RECORD, HA_OPTION_NULL_FIELDS, HA_OPTION_PACK_RECORD, HeaderError, MyiHeader,
                    check_header,
                    option_names, read_header)

HA_OFFSET_ERROR = 0xFFFFFFFFFFFFFFFF
#: a compressed file whose rows are not walked (no column definitions, unreadable trees) is
#: shown in units of this many bytes
PACKED_UNIT = 1 << 20
#: a compressed file's first rows unpacked in the scan, as a check of its trees (at most this
#: many, and up to this many bytes of them)
CHECK_ROWS, CHECK_BYTES = 1000, 1 << 18
#: rows unpacked at most to recompute a packed table's checksum (a scan at depth "full")
CHECKSUM_ROWS = 200_000
#: the state's checksum in the .MYI (MI_STATE_INFO: header, open count, 9 eight-byte fields before it)
STATE_CHECKSUM_OFFSET = 24 + 4 + 9 * 8
#: zero bytes written after a compressed file's rows, past data_file_length, for the memory
#: map (myisamdef.h MEMMAP_EXTRA_MARGIN; mi_check.c write_data_suffix)
MEMMAP_EXTRA_MARGIN = 7
PACK_KIND_NAMES = {0: "PACK_HEADER (Huffman trees)", 1: "PACKED_ROWS"}


def read_whole(f: ReadOnlyFile):
    """The file's bytes as a bytes-like object (the hole-safe map, else one read)."""
    mm = f.mmap()
    if mm is not None and f.hole_safe_map:
        return mm
    return f.pread(0, f.size)


def report_state(entry: FileEntry, h, size: int, check, crashed_note: str = "") -> list[tuple[str, int]]:
    """The findings of an index file's state header (MyISAM's or Aria's: the same
    open_count / changed / key_file_length fields, mi_open.c and ma_open.c) as the
    entry's errors and warnings; returns ``check(h, size)``'s problems."""
    if h.cut:
        entry.add_error(h.cut[0], h.cut[1])
    problems = check(h, size) if h.state_read else []
    for msg, off in problems:
        entry.add_error(msg, off)
    if h.open_count:
        entry.warnings.append(f"{entry.path} @ offset 24: open_count {h.open_count}: the table was not closed "
                              f"(a crash, or copied while the server had it open); the state may be stale")
    if h.crashed:
        entry.warnings.append(f"{entry.path} @ offset 26: state.changed {h.changed:#x}: marked crashed{crashed_note}")
    if h.state_read and size < h.key_file_length:
        entry.add_error(f"file ends at {size}, the state's key_file_length is {h.key_file_length}: truncated", size)
    return problems


def _index(entry: FileEntry, ctx: ScanContext) -> MyiHeader | None:
    try:
        with ReadOnlyFile(entry.abspath) as f:
            buf = read_whole(f)
            size = f.size
            h = _index_from(entry, buf, size)
            changed = f.changed()
    except FileReadError as e:
        entry.add_error(str(e).split(": ", 1)[-1], e.offset)
        return None
    if changed:
        entry.warnings.append(changed)
    return h


def _index_from(entry: FileEntry, buf, size: int) -> MyiHeader | None:
    entry.database, entry.table = table_of(entry)
    try:
        h = read_header(buf)
    except HeaderError as e:
        entry.add_error(str(e), e.offset)
        return None
    problems = report_state(entry, h, size, check_header, " (the server refuses it until REPAIR TABLE)")
    kb = None
    sane = h.base_read and h.cut is None and not any("keystart" in m or "block_length" in m for m, _ in problems)
    if sane and h.keys:
        kb = keyblocks.read_key_blocks(buf, h)
        for msg, off in kb.problems[:20]:
            entry.add_error(msg, off)
        entry.units = kb.units
        entry.unit_facts = UnitFacts(level=kb.level, records=kb.records)
        entry.kind_names = dict(keyblocks.KIND_NAMES)
        entry.owner_names = {k: f"key {k}" for k in range(h.keys)}
    else:
        hdr = min(h.keystart if h.base_read and h.keystart else h.header_length, size) or size
        units = empty_units(2 if size > hdr else 1)
        units[0]["offset"], units[0]["stored"], units[0]["logical"] = 0, hdr, hdr
        if size > hdr:
            units[1]["offset"], units[1]["kind"] = hdr, keyblocks.KIND_UNREACHED
            units[1]["stored"] = units[1]["logical"] = min(size - hdr, 0xFFFFFFFF)
        entry.units = units
        entry.kind_names = dict(keyblocks.KIND_NAMES)
    sec = MyisamIndexSection(
        role="index", file_version=h.file_version, options=option_names(h.options), row_format=h.row_format)
    if h.state_read:
        sec.update(records=h.records, deleted=h.deleted, data_file_length=h.data_file_length,
                   key_file_length=h.key_file_length, empty=h.empty, key_empty=h.key_empty,
                   auto_increment=h.auto_increment, open_count=h.open_count, changed=h.changed,
                   crashed=h.crashed)
    sec.update(keys=h.keys, key_parts=h.key_parts)
    if h.base_read:
        sec.update(keystart=h.keystart,
                   key_roots=[None if r == HA_OFFSET_ERROR else r for r in h.key_root],
                   reclength=h.reclength, pack_reclength=h.pack_reclength, rec_reflength=h.rec_reflength,
                   key_reflength=h.key_reflength, key_block_lengths=[kd.block_length for kd in h.keydefs])
    if kb is not None:
        sec.update(blocks=kb.blocks, leaf_blocks=kb.leaf_blocks, node_blocks=kb.node_blocks,
                   deleted_blocks=kb.deleted_blocks, deleted_block_bytes=kb.deleted_bytes, per_key=kb.per_key)
    entry.sections["myisam"] = MyisamIndexSection(**{k: sec[k] for k in MyisamIndexSection.keys_in_order()
                                                      if k in sec})
    entry.detail["myisam_header"] = h
    return h


def _data(entry: FileEntry, h: MyiHeader | None, ctx: ScanContext) -> None:
    entry.database, entry.table = table_of(entry)
    try:
        with ReadOnlyFile(entry.abspath) as f:
            buf = read_whole(f)
            size = f.size
            _data_from(entry, h, buf, size, ctx)
            changed = f.changed()
    except FileReadError as e:
        entry.add_error(str(e).split(": ", 1)[-1], e.offset)
        return
    if changed:
        entry.warnings.append(changed)


def _data_from(entry: FileEntry, h: MyiHeader | None, buf, size: int, ctx: ScanContext) -> None:
    if h is None or not h.state_read:
        packed = bytes(buf[:3]) == MYISAM_PACK_FILE_MAGIC
        entry.warnings.append(f"{entry.path}: no readable .MYI state beside it: the rows are not counted"
                              + (" (a myisampack-compressed file by its magic)" if packed else ""))
        return
    end = h.data_file_length
    if size < end:
        entry.add_error(f"file ends at {size}, the state's data_file_length is {end}: truncated (rows past "
                        f"{size} are lost)", size)
    elif size > end and not (h.options & HA_OPTION_COMPRESS_RECORD and size - end <= MEMMAP_EXTRA_MARGIN
                             and not any(bytes(buf[end:size]))):
        entry.warnings.append(f"{entry.path} @ offset {end}: {size - end} bytes past the state's "
                              f"data_file_length (written after the state was last saved)")
    fmt = h.row_format
    sec = MyisamDataSection(role="data", row_format=fmt)
    if h.options & HA_OPTION_COMPRESS_RECORD:
        packed_rows(entry, sec, h, buf, size, end, ctx)
    elif h.options & HA_OPTION_PACK_RECORD:
        w = dynrec.walk(buf, min(end, size), check=ctx.check)
        if w.error:
            entry.add_error(w.error[0], w.error[1])
        sec.update(rows=w.rows, deleted_blocks=w.deleted_blocks, deleted_bytes=w.deleted_bytes,
                   row_blocks=w.row_blocks, row_bytes=w.row_bytes, data_bytes=w.data_bytes,
                   walked_bytes=w.walked_to, complete=w.complete and size >= end)
        entry.units, entry.kind_names = w.units, dict(dynrec.KIND_NAMES)
        if w.complete and size >= end:
            _compare(entry, h, w.rows, w.deleted_blocks, w.deleted_bytes, blocks=True)
    else:
        arr = np.frombuffer(buf, dtype=np.uint8, count=min(end, size)) if size else np.zeros(0, np.uint8)
        r = staticrec.count_rows(arr, h.pack_reclength, min(end, size))
        sec.update(rows=r.rows, deleted_rows=r.deleted, deleted_bytes=r.deleted_bytes,
                   trailing_bytes=r.trailing_bytes, complete=size >= end and not r.trailing_bytes)
        if r.trailing_bytes:
            entry.add_error(f"{r.trailing_bytes} bytes after the last whole row of {h.pack_reclength} bytes",
                            min(end, size) - r.trailing_bytes)
        entry.units, entry.kind_names = r.units, dict(staticrec.KIND_NAMES)
        if size >= end:
            _compare(entry, h, r.rows, r.deleted, r.deleted_bytes, blocks=False)
    entry.sections["myisam"] = sec


def pack_facts(ph) -> dict:
    """The pack header as the section's ``pack``."""
    return {"version": ph.version, "header_length": ph.header_length, "min_pack_length": ph.min_pack_length,
            "max_pack_length": ph.max_pack_length, "elements": ph.elements,
            "intervall_length": ph.intervall_length, "trees": ph.trees, "ref_length": ph.ref_length,
            "rec_reflength": ph.rec_reflength}


def _packed_units(hl: int, stop: int) -> np.ndarray:
    """The header and the rest in PACKED_UNIT pieces (the rows not walked)."""
    n = 1 + max(0, -(-(stop - hl) // PACKED_UNIT))
    units = empty_units(n)
    units[0]["offset"], units[0]["stored"], units[0]["logical"] = 0, min(hl, stop), min(hl, stop)
    starts = hl + np.arange(n - 1, dtype=np.int64) * PACKED_UNIT
    units["offset"][1:] = starts
    units["stored"][1:] = units["logical"][1:] = np.minimum(PACKED_UNIT, stop - starts)
    units["kind"][1:] = 1
    return units


def _record_checksum(entry: FileEntry, sec, h, info, buf, rows_at, stop: int, ctx: ScanContext) -> None:
    """A packed MyISAM table's checksum recomputed from every row (rowchecksum.py) against the
    .MYI state's, as myisamchk compares them; at depth "full" and up to CHECKSUM_ROWS rows."""
    use_mi = rowchecksum.uses_mi_checksum(h.options, h.columns)
    out = {"stored": int(h.checksum) & rowchecksum.MASK32, "computed": None,
           "function": "mi_checksum" if use_mi else "mi_static_checksum"}
    sec.record_checksum = out
    if ctx.depth != "full":
        out["why"] = "not recomputed: a headers-only scan"
        return
    if len(rows_at) > CHECKSUM_ROWS:
        out["why"] = f"not recomputed: {len(rows_at):,} rows, more than {CHECKSUM_ROWS:,}"
        return
    total = 0
    null_fields = bool(h.options & HA_OPTION_NULL_FIELDS)
    for k, off in enumerate(rows_at):
        if k % 4096 == 0:
            ctx.check()
        r = packrec.row_at(buf, int(off), info.header.version, info.blobs, stop)
        try:
            rec, blobs = packrec.unpack_row(info, bytes(buf[r.data_offset:r.data_offset + r.rec_len]), r.blob_len)
        except ValueError as e:
            out["why"] = f"not recomputed: row at {r.offset} not unpacked ({e})"
            return
        total += rowchecksum.mi_checksum(rec, h.columns, h.column_nulls, blobs, null_fields) if use_mi \
            else rowchecksum.mi_static_checksum(rec)
    out["computed"] = total & rowchecksum.MASK32
    if out["computed"] != out["stored"]:
        entry.add_error(f"record checksum {out['computed']:#010x} of the unpacked rows ({out['function']}, "
                        f"mi_checksum.c) is not the .MYI state's {out['stored']:#010x} (myisamchk: \"Record "
                        f"checksum is not the same as checksum stored in the index file\"; the state's checksum "
                        f"is at .MYI offset {STATE_CHECKSUM_OFFSET}; which row from here on holds the change is "
                        f"not known)", int(rows_at[0]) if len(rows_at) else 0)


def packed_rows(entry: FileEntry, sec, h, buf, size: int, end: int, ctx: ScanContext,
                magic: bytes = MYISAM_PACK_FILE_MAGIC, compare=None, lengths: list[int] | None = None,
                null_bytes: int = 0) -> None:
    """A compressed data file (myisampack / aria_pack): its pack header and trees read
    (packrec.read_pack_info), its rows walked (one unit each) and the first ones (CHECK_ROWS,
    CHECK_BYTES) unpacked as a check of the trees; without the index's column definitions only
    the header is read."""
    compare = compare or _compare
    stop = min(end, size)
    if lengths is None:
        lengths = [n for _, n in getattr(h, "columns", [])]
    if not lengths:
        try:
            ph = read_pack_header(bytes(buf[:HEAD_LENGTH]), magic)
        except ValueError as e:
            entry.add_error(str(e), 0)
            ph = None
        entry.units, entry.kind_names = _packed_units(ph.header_length if ph else 0, stop), dict(PACK_KIND_NAMES)
        if ph:
            sec.pack = pack_facts(ph)
        entry.warnings.append(f"{entry.path}: the index's column definitions are not read: the packed rows are "
                              f"not walked")
        return
    try:
        info = packrec.read_pack_info(buf, lengths, bool(h.blobs), magic, null_bytes)
    except PackError as e:
        entry.add_error(str(e), e.offset)
        try:
            sec.pack = pack_facts(read_pack_header(bytes(buf[:HEAD_LENGTH]), magic))
        except ValueError:
            pass
        entry.units, entry.kind_names = _packed_units(0, stop), dict(PACK_KIND_NAMES)
        return
    sec.pack = pack_facts(info.header)
    sec.pack["columns"] = [{"type": c.type_name, "pack_type": c.pack_type, "space_length_bits": c.space_length_bits,
                            "tree": c.tree, "length": c.length} for c in info.columns]
    w = packrec.walk(buf, info.header, info.blobs, info.reclength, end, size, check=ctx.check)
    if w.error:
        entry.add_error(w.error[0], w.error[1])
    rows_at = w.units["offset"][w.units["kind"] == packrec.KIND_ROW]
    checked = 0
    for off in rows_at[:CHECK_ROWS]:
        r = packrec.row_at(buf, int(off), info.header.version, info.blobs, stop)
        if r.rec_len + r.blob_len > CHECK_BYTES:
            break
        try:
            packrec.unpack_row(info, bytes(buf[r.data_offset:r.data_offset + r.rec_len]), r.blob_len)
        except ValueError as e:
            entry.add_error(f"row not unpacked with the trees: {e}", r.offset)
            break
        checked += r.rec_len
        if checked >= CHECK_BYTES:
            break
    complete = w.complete and size >= end
    sec.update(rows=w.rows, packed_bytes=w.packed_bytes, decoded_bytes=w.record_bytes + w.blob_bytes,
               blob_bytes=w.blob_bytes, walked_bytes=w.walked_to, complete=complete)
    entry.units, entry.kind_names = w.units, dict(packrec.KIND_NAMES)
    if complete and magic == MYISAM_PACK_FILE_MAGIC and getattr(h, "column_nulls", None) and h.state_read:
        _record_checksum(entry, sec, h, info, buf, rows_at, stop, ctx)
    if complete:
        compare(entry, h, w.rows, 0, 0, blocks=True)


def _compare(entry, h: MyiHeader, rows: int, deleted: int, deleted_bytes: int, blocks: bool) -> None:
    """The data file against the state: a difference means the state is stale or damaged."""
    if rows != h.records:
        entry.warnings.append(f"{entry.path}: {rows} rows in the data file, the state says {h.records}")
    if deleted_bytes != h.empty:
        entry.warnings.append(f"{entry.path}: {deleted_bytes} bytes of deleted {'blocks' if blocks else 'rows'} "
                              f"in the data file, the state's empty says {h.empty}")
    if not blocks and deleted != h.deleted:
        entry.warnings.append(f"{entry.path}: {deleted} deleted rows in the data file, the state says {h.deleted}")


def table_info(entries: list[FileEntry]) -> dict:
    """A table's figures from its files' sections: information_schema's as ha_myisam::info
    computes them, and what the data file holds."""
    idx = next((e.sections.get("myisam") for e in entries if e.path.endswith(INDEX_EXT)), None) or {}
    dat = next((e.sections.get("myisam") for e in entries if e.path.endswith(DATA_EXT)), None) or {}
    return {
        "row_format": idx.get("row_format"),
        "table_rows": idx.get("records"),           # TABLE_ROWS
        "data_length": idx.get("data_file_length"),  # DATA_LENGTH
        "index_length": idx.get("key_file_length"),  # INDEX_LENGTH
        "data_free": idx.get("empty"),               # DATA_FREE
        "deleted_rows": idx.get("deleted"),
        "rows": dat.get("rows"),                     # live rows found in the data file
        "deleted_bytes": dat.get("deleted_bytes"),   # what OPTIMIZE TABLE gives back
        "data_bytes": sum(e.apparent_bytes for e in entries if e.path.endswith(DATA_EXT)),
        "index_bytes": sum(e.apparent_bytes for e in entries if e.path.endswith(INDEX_EXT)),
        "allocated_bytes": sum(e.allocated_bytes for e in entries),
    }


def analyze(dataset: Dataset, files: list[FileEntry], ctx: ScanContext) -> None:
    """Read every MyISAM file handed over by the scan (index first: the data file needs its state)."""
    groups: dict[tuple[str, str, str], list[FileEntry]] = {}
    for e in files:
        folder = posixpath.dirname(e.path)
        db, name = table_of(e)
        groups.setdefault((folder, db, name), []).append(e)
    total = len(files)
    done = 0
    for (_folder, db, name), entries in sorted(groups.items()):
        ctx.check()
        idx = [e for e in entries if e.path.endswith(INDEX_EXT)]
        dat = [e for e in entries if e.path.endswith(DATA_EXT)]
        h = None
        for e in idx:
            ctx.report(done, total, f"reading {e.path}")
            h = _index(e, ctx)
            done += 1
        for e in dat:
            ctx.report(done, total, f"reading {e.path}")
            _data(e, h, ctx)
            done += 1
        t = dataset.table("myisam", db, name)
        t.files = [e.path for e in entries]
        t.info = table_info(entries)
    ctx.report(total, total, "myisam done")

"""Aria entry point: ``analyze(dataset, files, ctx)`` reads every ``.MAI`` header and
index pages, every ``.MAD`` (BLOCK_RECORD pages with their CRCs, or the dynamic /
static / packed formats it shares with MyISAM), and the log and control files.  A
table's figures are maria_status's (ma_info.c) from the ``.MAI`` state, beside what
the data file holds."""
from __future__ import annotations

import posixpath

import numpy as np

from ..fileio import FileReadError, ReadOnlyFile
from ..model import Dataset, FileEntry, ScanContext, UnitFacts, empty_units
from ..myisam import dynrec, staticrec
from ..myisam.packrec import MARIA_PACK_FILE_MAGIC
from ..myisam.scan import MEMMAP_EXTRA_MARGIN, packed_rows, read_whole, report_state
from ..tablefiles import table_of
from ..myisam.state import HeaderError, option_names
from . import blockrec, blockrow, keypages, pagecrypt
from .names import CONTROL_NAME, DATA_EXT, INDEX_EXT, LOG_NAME
from .control import read_control
from .section import AriaControlSection, AriaDataSection, AriaIndexSection, AriaLogSection
from .state import (BLOCK_RECORD, COMPRESSED_RECORD, DATA_FILE_TYPES, DYNAMIC_RECORD, STATIC_RECORD, MaiHeader,
                    check_header, lsn_text, read_header)
from .translog import LOG_HEADER_DATA_SIZE, read_log_header

HA_OFFSET_ERROR = 0xFFFFFFFFFFFFFFFF
CRC_ALGORITHM = "crc32 seeded with the page number (ma_pagecrc.c)"


def _open(entry: FileEntry, fn):
    try:
        with ReadOnlyFile(entry.abspath) as f:
            out = fn(f)
            changed = f.changed()
    except FileReadError as e:
        entry.add_error(str(e).split(": ", 1)[-1], e.offset)
        return None
    if changed:
        entry.warnings.append(changed)
    return out


def _index_from(entry: FileEntry, buf, size: int, ctx: ScanContext) -> MaiHeader | None:
    entry.database, entry.table = table_of(entry)
    try:
        h = read_header(buf)
    except HeaderError as e:
        entry.add_error(str(e), e.offset)
        return None
    problems = report_state(entry, h, size, check_header)
    kp = None
    plain = _decrypt_index(entry, h, buf, size, ctx) if h.encrypted and h.base_read and h.cut is None else None
    if h.base_read and h.cut is None and not any(o == h.base_pos + 100 for _m, o in problems):
        kp = keypages.read_key_pages(plain if plain is not None else buf, size, h, ctx.verify_checksums,
                                     decrypted=plain is not None)
        for msg, off in kp.problems[:20]:
            entry.add_error(msg, off)
        for p in kp.bad_crc_pages[:20]:
            entry.add_error(f"index page {p}: CRC does not match (ma_pagecrc.c)", p * h.block_size)
        entry.units = kp.units
        entry.unit_facts = UnitFacts(level=kp.level)
        entry.owner_names = {k: f"key {k}" for k in range(h.keys)}
    else:
        units = empty_units(1)
        units[0]["stored"] = units[0]["logical"] = size
        entry.units = units
    entry.kind_names = dict(keypages.KIND_NAMES)
    sec = AriaIndexSection(role="index", file_version=h.file_version, options=option_names(h.options),
                           row_format=h.row_format,
                           data_file_type=DATA_FILE_TYPES.get(h.data_file_type, str(h.data_file_type)))
    if h.base_read:
        sec.transactional = h.born_transactional
        sec.encrypted = h.encrypted
        sec.block_size = h.block_size
    if h.state_read:
        sec.records, sec.deleted = h.records, h.deleted
        sec.data_file_length, sec.key_file_length = h.data_file_length, h.key_file_length
        sec.empty, sec.key_empty, sec.auto_increment = h.empty, h.key_empty, h.auto_increment
        sec.open_count, sec.changed, sec.crashed = h.open_count, h.changed, h.crashed
        sec.create_rename_lsn, sec.is_of_horizon = lsn_text(h.create_rename_lsn), lsn_text(h.is_of_horizon)
        sec.create_trid = h.create_trid
    sec.keys = h.keys
    if h.base_read:
        sec.keystart = h.keystart
        sec.key_roots = [None if r == HA_OFFSET_ERROR else r for r in h.key_root]
    if kp is not None:
        sec.pages, sec.leaf_pages, sec.node_pages = kp.pages, kp.leaf_pages, kp.node_pages
        sec.deleted_pages = kp.deleted_pages
        sec.per_key = {str(k): v for k, v in sorted(kp.per_key.items())}
        sec.checksum = {"algorithm": CRC_ALGORITHM if ctx.verify_checksums and (plain is not None or
                                                                                not h.encrypted) else None,
                        "bad_pages": list(kp.bad_crc_pages), "no_crc_pages": kp.no_crc_pages}
    entry.sections["aria"] = sec
    entry.detail["aria_header"] = h
    if h.base_read and h.data_file_type == COMPRESSED_RECORD and h.cut is None:
        try:
            h.column_lengths = [c.length for c in blockrow.read_layout(buf, h).columns]
        except (HeaderError, blockrow.BlockRowError) as e:
            entry.add_error(f"column definitions: {e}", e.offset)
    return h


#: pages decrypted per AES batch
DECRYPT_BATCH = 2048
#: pages tried with each algorithm (the key file plugin's, not in the files) before one is taken
PROBE_PAGES = 8


def _key_message(entry: FileEntry, h: MaiHeader, first: int, what: str, keys) -> None:
    """The warning for encrypted pages that are not decrypted (no key file, no key 1)."""
    crypt = f", crypt data at .MAI offset {h.crypt.offset}" if h.crypt is not None else ""
    why = ("no key file given (--keyfile)" if keys is None else
           f"the key file has no key id {pagecrypt.ENCRYPTION_KEY_SYSTEM_DATA} (its ids: {keys.ids})")
    entry.warnings.append(f"{entry.path} @ offset {first}: encrypted pages (Aria, ma_crypt.c: key id "
                          f"{pagecrypt.ENCRYPTION_KEY_SYSTEM_DATA}{crypt}) not decrypted: {why}; {what}")


def _decryptor(entry: FileEntry, h: MaiHeader, ctx: ScanContext, first: int, what: str):
    """The table's decryptor (kept on ``h`` for its data file), or None with a warning."""
    if h.crypt is None:
        return None
    if h.decryptor is None:
        key = ctx.keys.key(pagecrypt.ENCRYPTION_KEY_SYSTEM_DATA) if ctx.keys is not None else None
        if key is None:
            _key_message(entry, h, first, what, ctx.keys)
            return None
        h.decryptor = pagecrypt.AriaDecryptor(h.crypt, pagecrypt.pagecrypt.page_key(key, h.crypt.iv),
                                              pagecrypt.ENCRYPTION_KEY_SYSTEM_DATA)
    return h.decryptor


def _decrypt_index(entry: FileEntry, h: MaiHeader, buf, size: int, ctx: ScanContext):
    """The ``.MAI`` with its index pages decrypted (pagecrypt.py), or None (warning/error said)."""
    try:
        h.crypt = pagecrypt.read_crypt_data(buf, h.header_length)
    except pagecrypt.AriaCryptError as e:
        entry.add_error(str(e), e.offset)
        return None
    bs = h.block_size
    start, end = h.keystart, min(max(h.key_file_length, h.keystart), size)
    n = max(0, (end - start) // bs) if bs else 0
    dec = _decryptor(entry, h, ctx, start, "index pages counted from their clear headers, CRCs not checked")
    if dec is None or not n:
        return None
    arr = np.frombuffer(buf, dtype=np.uint8, count=start + n * bs)[start:].reshape(n, bs)
    page_no = np.arange(start // bs, start // bs + n, dtype=np.int64)
    hdr = h.keypage_header
    from . import pagecrc

    def ok(plain, k):
        used = (int(plain[k, hdr - 2]) << 8) | int(plain[k, hdr - 1])
        return hdr <= used <= bs - pagecrc.CRC_SIZE and \
            pagecrc.check(plain[k], int(page_no[k]), used) != pagecrc.BAD
    live = np.flatnonzero(arr[:, hdr - 4] != keypages.MARIA_DELETE_KEY_NR)[:PROBE_PAGES]
    for algo in pagecrypt.pagecrypt.ALGORITHMS:
        dec.algorithm = algo
        plain = dec.key_pages(arr[live], page_no[live], hdr)
        if all(ok(plain, k) for k in range(len(live))):
            break
    else:
        entry.add_error(f"key id {dec.key_id} of the key file does not decrypt index page {int(page_no[live[0]])} "
                        f"(its CRC does not match after AES_CBC or AES_CTR: another key?); index pages counted "
                        f"from their clear headers, CRCs not checked", int(page_no[live[0]]) * bs)
        h.decryptor = None
        return None
    out = np.frombuffer(buf, dtype=np.uint8, count=size).copy()
    body = out[start:start + n * bs].reshape(n, bs)
    for a in range(0, n, DECRYPT_BATCH):
        body[a:a + DECRYPT_BATCH] = dec.key_pages(arr[a:a + DECRYPT_BATCH], page_no[a:a + DECRYPT_BATCH], hdr)
    return out


def _decrypt_data(entry: FileEntry, h: MaiHeader, buf, size: int, ctx: ScanContext):
    """The ``.MAD`` with its HEAD, TAIL and BLOB pages decrypted (pagecrypt.py; bitmap pages are
    not encrypted), or None (a warning or an error says why)."""
    bs = h.block_size
    n = size // bs
    arr = np.frombuffer(buf, dtype=np.uint8, count=n * bs).reshape(n, bs) if n else np.zeros((0, bs), np.uint8)
    idx = np.arange(n, dtype=np.int64)
    enc = np.flatnonzero((idx % blockrec.pages_covered(bs) != 0) & arr.any(axis=1)) if n else idx
    first = int(enc[0]) * bs if len(enc) else 0
    dec = _decryptor(entry, h, ctx, first, "pages and their types counted from their clear headers; rows (the "
                     "page directories are encrypted), CRCs and row contents not read") if h.crypt else None
    if dec is None:
        if h.crypt is None:
            entry.warnings.append(f"{entry.path} @ offset {first}: encrypted pages not decrypted: the .MAI's crypt "
                                  f"data was not read")
        return None
    if not len(enc):
        return np.frombuffer(buf, dtype=np.uint8, count=size).copy()
    probe = enc[:PROBE_PAGES]
    algo = pagecrypt.choose_algorithm(dec, arr[probe], probe)
    if algo is None:
        entry.add_error(f"key id {dec.key_id} of the key file does not decrypt page {int(probe[0])} (its CRC does "
                        f"not match after AES_CBC or AES_CTR: another key?); rows not read", int(probe[0]) * bs)
        return None
    dec.algorithm = algo
    out = np.frombuffer(buf, dtype=np.uint8, count=size).copy()
    pages = out[:n * bs].reshape(n, bs)
    for a in range(0, len(enc), DECRYPT_BATCH):
        if a and a % (DECRYPT_BATCH * 16) == 0:
            ctx.check()
        sel = enc[a:a + DECRYPT_BATCH]
        pages[sel] = dec.data_pages(arr[sel], sel)
    entry.detail["aria_decryptor"] = dec
    return out


def _data_from(entry: FileEntry, h: MaiHeader | None, buf, size: int, ctx: ScanContext) -> None:
    entry.database, entry.table = table_of(entry)
    if h is None or not h.state_read:
        entry.warnings.append(f"{entry.path}: no readable .MAI state beside it: the rows are not counted")
        return
    end = h.data_file_length
    if size < end:
        entry.add_error(f"file ends at {size}, the state's data_file_length is {end}: truncated", size)
    elif size > end and not (h.data_file_type == COMPRESSED_RECORD and size - end <= MEMMAP_EXTRA_MARGIN
                             and not any(bytes(buf[end:size]))):
        entry.warnings.append(f"{entry.path} @ offset {end}: {size - end} bytes past the state's "
                              f"data_file_length")
    sec = AriaDataSection(role="data", row_format=h.row_format)
    t = h.data_file_type
    if t == BLOCK_RECORD:
        if not h.base_read or not h.block_size:
            entry.warnings.append(f"{entry.path}: block size unknown (the .MAI base info is cut)")
            return
        plain = _decrypt_data(entry, h, buf, size, ctx) if h.encrypted else None
        bp = blockrec.read_pages(plain if plain is not None else buf, size, h.block_size, ctx.verify_checksums,
                                 h.encrypted, ctx.check, decrypted=plain is not None)
        for p in bp.bad_crc_pages[:20]:
            entry.add_error(f"page {p}: CRC does not match (ma_pagecrc.c)", p * h.block_size)
        if len(bp.bad_crc_pages) > 20:
            entry.add_error(f"{len(bp.bad_crc_pages) - 20} more pages with a CRC that does not match")
        for p in bp.bad_type_pages[:20]:
            entry.add_error(f"page {p}: page type {int(buf[p * h.block_size + 7]) & 7} is none of Aria's",
                            p * h.block_size + 7)
        if bp.trailing_bytes:
            entry.add_error(f"{bp.trailing_bytes} bytes after the last whole page of {h.block_size}",
                            size - bp.trailing_bytes)
        sec.update(pages=bp.pages, page_types=bp.by_type, rows=bp.rows if plain is not None or not h.encrypted else None,
                   empty_page_bytes=bp.empty_bytes, unallocated_pages=bp.unallocated_pages,
                   checksum={"algorithm": CRC_ALGORITHM if ctx.verify_checksums and (plain is not None or
                                                                                      not h.encrypted) else None,
                             "bad_pages": list(bp.bad_crc_pages), "no_crc_pages": bp.no_crc_pages})
        if h.encrypted:
            sec.update(decrypted=plain is not None)
        entry.units, entry.kind_names = bp.units, dict(blockrec.KIND_NAMES)
        entry.unit_facts = UnitFacts(records=bp.records)
        if (plain is not None or not h.encrypted) and size >= end and bp.rows != h.records and not bp.bad_crc_pages:
            entry.warnings.append(f"{entry.path}: {bp.rows} rows on the HEAD pages, the state says {h.records}")
    elif t == DYNAMIC_RECORD:
        w = dynrec.walk(buf, min(end, size), check=ctx.check)
        if w.error:
            entry.add_error(w.error[0], w.error[1])
        sec.update(rows=w.rows, deleted_blocks=w.deleted_blocks, deleted_bytes=w.deleted_bytes,
                   row_bytes=w.row_bytes, data_bytes=w.data_bytes, walked_bytes=w.walked_to,
                   complete=w.complete and size >= end)
        entry.units, entry.kind_names = w.units, dict(dynrec.KIND_NAMES)
        if w.complete and size >= end and w.rows != h.records:
            entry.warnings.append(f"{entry.path}: {w.rows} rows in the data file, the state says {h.records}")
    elif t == STATIC_RECORD:
        arr = np.frombuffer(buf, dtype=np.uint8, count=min(end, size)) if size else np.zeros(0, np.uint8)
        r = staticrec.count_rows(arr, h.pack_reclength, min(end, size))
        sec.update(rows=r.rows, deleted_rows=r.deleted, deleted_bytes=r.deleted_bytes,
                   complete=size >= end and not r.trailing_bytes)
        entry.units, entry.kind_names = r.units, dict(staticrec.KIND_NAMES)
    elif t == COMPRESSED_RECORD:
        def compare(entry, h, rows, *_args, **_kw):
            if rows != h.records:
                entry.warnings.append(f"{entry.path}: {rows} rows in the data file, the state says {h.records}")
        packed_rows(entry, sec, h, buf, size, end, ctx, MARIA_PACK_FILE_MAGIC, compare, lengths=h.column_lengths,
                    null_bytes=h.null_bytes)
    entry.sections["aria"] = sec


def _log(entry: FileEntry, f: ReadOnlyFile) -> None:
    try:
        lh = read_log_header(f.pread(0, LOG_HEADER_DATA_SIZE))
    except ValueError as e:
        entry.add_error(e.args[0], e.args[1])
        return
    entry.sections["aria"] = AriaLogSection(role="log", file_number=lh.file_number, page_size=lh.page_size,
                                            maria_version=lh.maria_version, server_version=lh.server_version,
                                            server_id=lh.server_id, timestamp=lh.timestamp)


def _control(entry: FileEntry, f: ReadOnlyFile) -> None:
    try:
        c = read_control(f.pread(0, 513))
    except ValueError as e:
        entry.add_error(e.args[0], e.args[1])
        return
    if not (c.head_checksum_ok and c.checksum_ok):
        entry.add_error("checksum of the " + ("create-time" if not c.head_checksum_ok else "changeable")
                        + " part does not match (ma_control_file.c: the server refuses to start)", 0)
    entry.sections["aria"] = AriaControlSection(
        role="control", version=c.version, uuid=c.uuid, block_size=c.block_size,
        checkpoint_lsn=lsn_text(c.checkpoint_lsn), last_log_number=c.last_logno, max_trid=c.max_trid,
        recovery_failures=c.recovery_failures, checksums_ok=c.head_checksum_ok and c.checksum_ok)


def table_info(entries: list[FileEntry]) -> dict:
    """A table's figures from its files' sections: information_schema's (maria_status) and
    what the data file holds."""
    idx = next((e.sections.get("aria") for e in entries if e.path.endswith(INDEX_EXT)), None) or {}
    dat = next((e.sections.get("aria") for e in entries if e.path.endswith(DATA_EXT)), None) or {}
    ck = [(e.sections.get("aria") or {}).get("checksum") or {} for e in entries]
    return {
        "row_format": idx.get("row_format"),
        "transactional": idx.get("transactional"),
        "table_rows": idx.get("records"),            # TABLE_ROWS
        "data_length": idx.get("data_file_length"),  # DATA_LENGTH
        "index_length": idx.get("key_file_length"),  # INDEX_LENGTH
        "data_free": idx.get("empty"),               # DATA_FREE
        "rows": dat.get("rows"),                     # rows found in the data file
        "deleted_bytes": dat.get("deleted_bytes"),
        "empty_page_bytes": dat.get("empty_page_bytes"),
        "bad_crc_pages": sum(len(c.get("bad_pages") or []) for c in ck),
        "data_bytes": sum(e.apparent_bytes for e in entries if e.path.endswith(DATA_EXT)),
        "index_bytes": sum(e.apparent_bytes for e in entries if e.path.endswith(INDEX_EXT)),
        "allocated_bytes": sum(e.allocated_bytes for e in entries),
    }


def analyze(dataset: Dataset, files: list[FileEntry], ctx: ScanContext) -> None:
    """Read every Aria file handed over by the scan."""
    groups: dict[tuple[str, str, str], list[FileEntry]] = {}
    total = len(files)
    done = 0
    for e in files:
        base = posixpath.basename(e.path)
        if base == CONTROL_NAME or LOG_NAME.match(base):
            ctx.report(done, total, f"reading {e.path}")
            _open(e, (lambda f, e=e: _control(e, f)) if base == CONTROL_NAME else (lambda f, e=e: _log(e, f)))
            done += 1
            continue
        db, name = table_of(e)
        groups.setdefault((posixpath.dirname(e.path), db, name), []).append(e)
    for (_folder, db, name), entries in sorted(groups.items()):
        ctx.check()
        h = None
        for e in entries:
            if e.path.endswith(INDEX_EXT):
                ctx.report(done, total, f"reading {e.path}")
                h = _open(e, lambda f, e=e: _index_from(e, read_whole(f), f.size, ctx))
                done += 1
        for e in entries:
            if e.path.endswith(DATA_EXT):
                ctx.report(done, total, f"reading {e.path}")
                _open(e, lambda f, e=e: _data_from(e, h, read_whole(f), f.size, ctx))
                done += 1
        t = dataset.table("aria", db, name)
        t.files = [e.path for e in entries]
        t.info = table_info(entries)
    ctx.report(total, total, "aria done")

"""InnoDB engine entry point: ``analyze(dataset, files, ctx)`` fills every
InnoDB data file's units (one per page), kind and owner names, the JSON
section ``innodb`` and the per-page arrays the views use.

Redo logs are left to the redo reader (``redo.py``); names come from
``names.py`` (SDI / ibdata1 dictionary) when it is present, else from the
file path.
"""
from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..arrays import distinct
from .. import parallel
from ..fileio import FileReadError, ReadOnlyFile
from ..model import (UNIT_BAD_CHECKSUM, UNIT_COMPRESSED, UNIT_CORRUPT, UNIT_ENCRYPTED, UNIT_FREE, UNIT_HOLE,
                     UNIT_HOLE_MISSING, UNIT_LEAF, Cancelled, Dataset, FileEntry, ScanContext, UnitFacts,
                     empty_units)

from .punch import kept_granularity, punch_block
from ..units import expected_hole_per_page, hole_bytes_per_unit
from .fil import FIL_NULL, FIL_PAGE_COMPRESSED, LOB_FIRST_TYPES, LOB_TYPES
from .fsp import FSP_HEADER_OFFSET, FSP_SPACE_FLAGS, decode_fsp_flags
from .index import PAGE_HEAP_NO_COMPACT, empty_free_space
from . import names as names_module
from .fts import parse_fts_aux_name
from .section import InnoDBIndex, InnoDBSection
from .pagemap import PageMap, PageMapError, build_page_map
from .detail import innodb_detail, keep_within_budget, register_analyzer, share_dropped

if TYPE_CHECKING:
    # read where a file needs them (MySQL 8 LOBs, doublewrite files): not every start
    from .dblwr import DblwrFile
    from .lob import Lob

PAGED_ROLES = ("tablespace", "system_tablespace", "undo")
PARTITION_RE = re.compile(r"^(?P<table>.+?)#[pP]#(?P<part>.+)$")
#: owner codes for index ids that do not fit the int32 owner field
_BIG_OWNER_BASE = -2


def names_from_path(path: str) -> tuple[str | None, str | None, str | None]:
    """(database, table, partition) from ``db/table.ibd`` / ``db/t#P#p0.ibd``."""
    parts = path.split("/")
    base = parts[-1]
    stem = base.rsplit(".", 1)[0] if "." in base else base
    db = parts[-2] if len(parts) >= 2 else None
    m = PARTITION_RE.match(stem)
    if m:
        return db, m.group("table"), m.group("part")
    return db, stem, None


def analyze(dataset: Dataset, files: list[FileEntry], ctx: ScanContext) -> None:
    """Read every InnoDB file of ``files`` (see module doc)."""
    names = None
    try:
        names = names_module.resolve_names(files)
    except Cancelled:
        raise
    except Exception as e:  # their bug must not cost the page map
        dataset.errors.append(f"innodb names: {type(e).__name__}: {e}")
    # what the dictionary could not name (encrypted SDI, space ids claimed by files of
    # different servers): a warning on the file it names, else on the dataset
    by_path = {f.path: f for f in files}
    for msg in getattr(names, "errors", None) or []:
        path = msg.split(" ", 1)[0].rstrip(":")
        target = by_path.get(path)
        if target is not None and any(msg.endswith(e.split(": ", 1)[-1]) for e in target.errors):
            continue            # the file's own error already says it (e.g. cannot open): once is enough
        (target.warnings if target is not None else dataset.warnings).append(f"innodb names: {msg}")
    paged = [f for f in files if f.role in PAGED_ROLES]
    total = len(paged)
    wctx = parallel.worker_context(ctx)
    ctx.report(0, total, "innodb pages")
    # a partial of a module-level function: it pickles, so a process that must not fork
    # (the window) reads thousands of files in a fork server's workers (parsers/parallel.py)
    one = functools.partial(_analyze_one, ctx=wctx, names=names)
    light = getattr(ctx, "owners_only", False) and not (ctx.verify_checksums and getattr(ctx, "depth", "full") == "full")
    cost = scan_cost_light if light else scan_cost
    for k, entry in parallel.each_file(paged, one, ctx, keep_detail=("innodb_naming",), cost=cost):
        ctx.report(k + 1, total, f"innodb pages: {entry.path}")
        _assign_table(dataset, entry, names)
        entry.detail.pop("innodb_naming", None)         # its only reader is _assign_table
        if not entry.detail:
            entry.detail = {}                           # an emptied dict keeps its table
        elif entry.role == "tablespace":
            share_dropped(entry)
    _attach_fts(dataset, paged, names)
    _read_doublewrite_files(files, ctx)
    for entry in files:
        if entry.role in ("system_tablespace", "redo_log", "undo"):
            try:
                info = names_module.system_info(entry)
            except Cancelled:
                raise
            except Exception as e:
                entry.add_error(f"system facts: {type(e).__name__}: {e}")
                continue
            if info:
                entry.detail["innodb_system"] = info
                # into the JSON too: TRX_SYS, dictionary header, doublewrite, redo header
                entry.sections.setdefault("innodb", InnoDBSection()).system = info
    ctx.report(total, total, "innodb done")


#: files from this size on have their FSP flags read to weigh their scan (:func:`scan_cost`)
COST_PROBE_BYTES = 4 << 20
#: what reading a byte of a page_compressed file costs next to a plain one (every page
#: decoded, not only its header read), and of a bzip2 one (measured on the bench set,
#: 54.5 MB files: plain 3-17 ms, page_compressed 40-110 ms, bzip2 0.7 s on two threads)
COST_PAGE_COMPRESSED = 15.0
COST_BZIP2 = 150.0
#: the same when only the fragment extents' pages are decoded (ScanContext.owners_only, the
#: default `dbxray scan` and the what-if; bench set, one process: plain 4-7 ms, page_compressed
#: 10-19 ms, bzip2 31 ms, its 37 fragment pages decoded whole)
COST_PAGE_COMPRESSED_LIGHT = 3.0
COST_BZIP2_LIGHT = 6.0


def scan_cost_light(entry: FileEntry) -> float:
    """:func:`scan_cost` of a scan that decodes only the fragment extents' pages."""
    return scan_cost(entry, light=True)


def scan_cost(entry: FileEntry, light: bool = False) -> float:
    """The expected work of :func:`analyze_file` on ``entry``, in plain bytes read: its
    size, weighed by what page 0's FSP flags say of its pages (page_compressed, and the
    algorithm where full_crc32 stores it).  Lets the workers start the costliest files
    first (parsers/parallel.py); a file that cannot be read weighs its size."""
    size = float(entry.apparent_bytes)
    if size < COST_PROBE_BYTES:
        return size
    try:
        fd = os.open(entry.abspath, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return size
    try:
        raw = os.pread(fd, 4, FSP_HEADER_OFFSET + FSP_SPACE_FLAGS)
    except OSError:
        return size
    finally:
        os.close(fd)
    if len(raw) < 4:
        return size
    flags = decode_fsp_flags(int.from_bytes(raw, "big"))
    if not flags.valid or not flags.page_compressed:
        return size
    if flags.compression_algorithm == "bzip2":
        return size * (COST_BZIP2_LIGHT if light else COST_BZIP2)
    return size * (COST_PAGE_COMPRESSED_LIGHT if light else COST_PAGE_COMPRESSED)


def _analyze_one(entry: FileEntry, *, ctx: ScanContext, names) -> None:
    """One paged file's page map into ``entry``; its read errors recorded on it."""
    if entry.facts_pending:
        from ..filefacts import read_pending_facts
        read_pending_facts(entry, ctx.fs_block)
    try:
        analyze_file(entry, ctx, names)
    except Cancelled:
        raise
    except (PageMapError, FileReadError) as e:
        entry.add_error(str(e).split(": ", 1)[-1] if isinstance(e, FileReadError) else str(e))
    except OSError as e:
        entry.add_error(f"cannot read: {e.strerror or e}")


def _decode(name: str) -> str:
    """Undo MySQL's @xxxx filename encoding for comparisons."""
    return re.sub(r"@([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), name).lower()


@dataclass(slots=True)
class FileNaming:
    """Names of one paged file: its table (or general tablespace) and its index ids."""

    database: str | None = None
    table: str | None = None
    partition: str | None = None
    index_names: dict[int, tuple[str, str]] = field(default_factory=dict)   # index id -> (table, index)
    source: str = "path"                 # "own SDI" | "dictionary" | "path"
    shared: bool = False                 # general tablespace (several tables possible), mysql.ibd
    tablespace: str | None = None
    tables: list[str] = field(default_factory=list)

    def label(self) -> str | None:
        if not self.table:
            return None
        out = f"{self.database}.{self.table}" if self.database else self.table
        return out + (f"#P#{self.partition}" if self.partition else "")


def _split_full(full: str) -> tuple[str | None, str, str | None]:
    """"db.table#P#p0" -> (db, table, partition)."""
    db, rest = full.split(".", 1) if "." in full else (None, full)
    m = PARTITION_RE.match(rest)
    if m:
        return db, m.group("table"), m.group("part")
    return db, rest, None


def _stem(path: str) -> str:
    base = path.rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[0] if "." in base else base


def _dictionary_name(entry: FileEntry, space_id: int | None, names) -> str | None:
    """The dictionary's "db.table" for this file's space id, when it agrees with
    the file's own name (unrelated files of different servers in one folder can
    share space ids; a dictionary entry naming another table is not used)."""
    if names is None or space_id is None:
        return None
    full = getattr(names, "tables", {}).get(space_id)
    if not full or "." not in full:
        return None
    if entry.role == "tablespace":
        _, ptable, ppart = names_from_path(entry.path)
        _, dtable, _ = _split_full(full)
        if ptable and _decode(dtable) != _decode(ptable) and not entry.path.endswith(".ibt"):
            if not any("dictionary names space id" in w for w in entry.warnings):
                entry.warnings.append(f"{entry.path}: dictionary names space id {space_id} {full!r}, "
                                      f"which is not this file's table; names taken from the path")
            return None
    return full


def _dd_space(entry: FileEntry, space_id: int | None, names):
    """mysql.ibd's dictionary entry for this file's space id, when its tablespace name is this
    file's (``db/table[#p#part]`` for file-per-table, the file name for general tablespaces)."""
    if names is None or space_id is None or not hasattr(names, "dictionary_for"):
        return None
    dd = names.dictionary_for(entry.path)
    ds = dd.spaces.get(space_id) if dd is not None else None
    if ds is None:
        return None
    if entry.role != "tablespace":
        return ds
    parts = entry.path.split("/")
    stem = _decode(_stem(entry.path))
    name = _decode(ds.name)
    if "/" in name:
        db, table = name.split("/", 1)
        return ds if len(parts) >= 2 and _decode(parts[-2]) == db and table == stem else None
    return ds if name == stem else None


def file_naming(entry: FileEntry, space_id: int | None, names, shared_flag: bool = False) -> FileNaming:
    """Names of one file: its own SDI first (MySQL 8), then the space-id-keyed dictionary
    maps (ibdata1 SYS_TABLES/SYS_INDEXES, every file's SDI), then the path.

    A shared tablespace (FSP_FLAGS_POS_SHARED in the file, or the dictionary says so: MySQL
    general tablespaces such as ``ts1.ibd``, mysql.ibd) may hold several tables: its file name is
    the tablespace's, not a table's, so the path check of file-per-table files does not apply;
    its indexes are named by the tables the dictionary gives them."""
    fn = FileNaming()
    own = getattr(names, "by_file", {}).get(entry.path) if names is not None else None
    dict_shared = getattr(names, "shared", {}) if names is not None else {}
    fn.shared = bool(shared_flag or (own is not None and own.shared) or (space_id in dict_shared))
    fn.tablespace = (own.tablespace if own is not None and own.tablespace else None) or dict_shared.get(space_id)
    if own is not None and space_id is not None:
        for (sp, iid), v in own.indexes.items():
            if sp == space_id:
                fn.index_names[iid] = v
        if fn.index_names:
            fn.source = "own SDI"
    # MySQL 8: the dictionary tables of the data directory's mysql.ibd, when they name this file
    ddspace = _dd_space(entry, space_id, names)
    if ddspace is not None:
        fn.shared = fn.shared or ddspace.shared
        fn.tablespace = fn.tablespace or ddspace.name
        added = False
        for iid, v in ddspace.indexes.items():
            if iid not in fn.index_names:
                fn.index_names[iid] = v
                added = True
        if added and fn.source == "path":
            fn.source = "mysql.ibd"
    global_ok = False
    if names is not None and space_id is not None:
        if entry.role != "tablespace":
            global_ok = True
        elif fn.shared:
            # a shared tablespace is named as its file (ts1 -> ts1.ibd); another server's
            # tablespace with the same space id is not this file
            tsname = dict_shared.get(space_id)
            global_ok = tsname is None or _decode(tsname.rsplit("/", 1)[-1]) == _decode(_stem(entry.path))
        elif (own is not None and own.tables) or (ddspace is not None and ddspace.tables):
            global_ok = False                 # the file's own SDI names it: another server's
        else:                                 # file with the same space id must not
            global_ok = _dictionary_name(entry, space_id, names) is not None
    if global_ok:
        added = False
        for (sp, iid), v in getattr(names, "indexes", {}).items():
            if sp == space_id and iid not in fn.index_names:
                fn.index_names[iid] = v
                added = True
        if added and fn.source == "path":
            fn.source = "dictionary"
    if entry.role != "tablespace":
        return fn
    if fn.shared:
        fn.tables = sorted({t for t, _ in fn.index_names.values()})
        if own is not None:
            fn.tables = sorted(set(fn.tables) | set(own.tables))
        if ddspace is not None:
            fn.tables = sorted(set(fn.tables) | set(ddspace.tables))
        if len(fn.tables) == 1:
            fn.database, fn.table, fn.partition = _split_full(fn.tables[0])
        else:
            ts = fn.tablespace.rsplit("/", 1)[-1] if fn.tablespace else _stem(entry.path)
            fn.database, fn.table, fn.partition = None, ts, None
        return fn
    full = None
    if own is not None and len(own.tables) == 1:
        full = own.tables[0]
    elif ddspace is not None and len(ddspace.tables) == 1:
        full = ddspace.tables[0]
    elif global_ok:
        full = names.tables.get(space_id)
    if full and "." in full:
        fn.database, fn.table, fn.partition = _split_full(full)
        fn.tables = [full]
        return fn
    db, table, part = names_from_path(entry.path)
    if db is None and entry.abspath:       # a lone file: its directory is the database
        db = os.path.basename(os.path.dirname(os.path.abspath(entry.abspath))) or None
    fn.database, fn.table, fn.partition = db, table, part
    return fn


def _table_name(entry: FileEntry, space_id: int | None, names) -> tuple[str | None, str | None, str | None]:
    """(database, table, partition) of a tablespace file."""
    fn = entry.detail.get("innodb_naming") or file_naming(entry, space_id, names)
    return fn.database, fn.table, fn.partition


def _assign_table(dataset: Dataset, entry: FileEntry, names) -> None:
    sec = entry.sections.get("innodb") or {}
    db, table, part = _table_name(entry, sec.get("space_id"), names)
    if entry.role == "tablespace" and table:
        entry.database = db
        entry.table = table
        t = dataset.table("innodb", db or "", table)
        if entry.path not in t.files:
            t.files.append(entry.path)
        if part:
            t.info.setdefault("partitions", []).append(part)


def _read_doublewrite_files(files: list[FileEntry], ctx: ScanContext) -> None:
    """MySQL 8.0.20+ ``#ib_<page size>_<n>.dblwr`` files (dblwr.py): each written slot's
    page (space, page number, type, LSN, checksum) in ``doublewrite``.  The zip size of a
    copy's tablespace comes from the scanned tablespaces beside the file; File::s_n_pages
    (batch slots) from the size of an even-numbered sibling file."""
    dblwr_files = [e for e in files if e.role == "doublewrite"]
    if not dblwr_files:
        return
    from .dblwr import DblwrError, parse_dblwr_name, read_dblwr
    dblwr_files = [e for e in dblwr_files if parse_dblwr_name(_base(e.path))]
    read: list[tuple[FileEntry, DblwrFile]] = []
    for entry in dblwr_files:
        ctx.check()
        here = os.path.dirname(entry.path)
        zip_sizes = {}
        for e in files:
            sec = e.sections_view().get("innodb")
            if sec is None or e.role not in PAGED_ROLES or (here and not e.path.startswith(here + "/")):
                continue
            sid, phys = sec.get("space_id"), sec.get("physical_page_size")
            if sid is not None and phys:
                zip_sizes[int(sid)] = int(phys)
        try:
            with ReadOnlyFile(entry.abspath) as f:
                read.append((entry, read_dblwr(f, _base(entry.path), zip_sizes, ctx.check)))
        except (DblwrError, FileReadError) as e:
            entry.add_error(str(e).split(": ", 1)[-1] if isinstance(e, FileReadError) else str(e))
        except OSError as e:
            entry.add_error(f"cannot read: {e.strerror or e}")
    for entry, d in read:
        here = os.path.dirname(entry.path)
        evens = [o.slots for e, o in read if os.path.dirname(e.path) == here and o.page_size == d.page_size
                 and not o.for_lru]
        sec = entry.sections.setdefault("innodb", InnoDBSection())
        sec.doublewrite = d.to_json(min(evens) if evens else None)
        bad = [c for c in d.copies if c["checksum_ok"] is False]
        if bad:
            entry.warnings.append(f"{entry.path}: {len(bad)} doublewrite slot(s) fail their checksum (first: slot "
                                  f"{bad[0]['slot']}, a copy of space {bad[0]['space_id']} page {bad[0]['page_no']}): "
                                  f"recovery would not use them")


def _base(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _attach_fts(dataset: Dataset, paged: list[FileEntry], names) -> None:
    """FULLTEXT aux tablespaces (fts.py) under the table whose id their name holds, and
    per FULLTEXT index (and the table's common aux tables) their files, bytes and pages
    in the table's own file's section (``fulltext``).  The ids come from SYS_TABLES /
    SYS_INDEXES (MariaDB, MySQL 5.7) or the indexes' se_private_data in SDI and mysql.ibd
    (MySQL 8).  Aux tables of a table id no dictionary names stay unattached (said so), and
    a FULLTEXT index whose table is here but none of its aux tables is named."""
    table_ids = getattr(names, "table_ids", None) or {}
    index_ids = getattr(names, "index_ids", None) or {}
    groups: dict[str, dict] = {}
    for entry in paged:
        if entry.role != "tablespace":
            continue
        aux = parse_fts_aux_name(_stem(entry.path))
        if aux is None:
            continue
        parent = table_ids.get(aux.table_id)
        if parent is None:
            sec = entry.sections.get("innodb")
            if sec is not None:
                sec.fts = {"table": None, "table_id": aux.table_id, "index_id": aux.index_id, "index": None,
                           "aux": aux.part}
            if table_ids:
                entry.warnings.append(f"{entry.path}: FULLTEXT aux table of table id {aux.table_id} "
                                      f"(0x{aux.table_id:x}), which the data dictionary here "
                                      f"({getattr(names, 'source', '') or 'none'}) does not name; not attached")
            continue
        db, table, _ = _split_full(parent)
        old = next((t for t in dataset.tables if t.engine == "innodb" and entry.path in t.files), None)
        if old is not None and (old.database, old.name) != (db or "", table):
            old.files.remove(entry.path)
            if not old.files:
                dataset.tables.remove(old)
        entry.database, entry.table = db, table
        t = dataset.table("innodb", db or "", table)
        if entry.path not in t.files:
            t.files.append(entry.path)
        iname = index_ids.get(aux.index_id, (None, None))[1] if aux.index_id is not None else None
        sec = entry.sections.get("innodb")
        if sec is not None:
            sec.fts = {"table": parent, "table_id": aux.table_id, "index_id": aux.index_id, "index": iname,
                       "aux": aux.part}
        g = groups.setdefault(parent, {}).setdefault(aux.index_id, {
            "index_id": aux.index_id, "name": iname, "aux_tables": 0, "aux_bytes": 0, "aux_allocated_bytes": 0,
            "aux_pages": 0})
        g["aux_tables"] += 1
        g["aux_bytes"] += int(entry.apparent_bytes)
        g["aux_allocated_bytes"] += int(entry.allocated_bytes)
        g["aux_pages"] += int((sec or {}).get("pages") or 0)
    for parent, by_index in groups.items():
        db, table, _ = _split_full(parent)
        owner = next((e for e in paged if e.role == "tablespace" and e.table == table and e.database == db and
                      parse_fts_aux_name(_stem(e.path)) is None and "innodb" in e.sections), None)
        fulltext = {"indexes": [v for k, v in sorted(by_index.items(), key=lambda kv: kv[0] or -1) if k is not None],
                    "common": by_index.get(None)}
        dataset.table("innodb", db or "", table).info["fulltext"] = fulltext
        if owner is not None:
            owner.sections["innodb"].fulltext = fulltext
    for iid, (tid, parent, iname) in sorted((getattr(names, "fulltext", None) or {}).items()):
        if iid in groups.get(parent, {}):
            continue
        db, table, _ = _split_full(parent)
        owner = next((e for e in paged if e.role == "tablespace" and e.table == table and e.database == db and
                      parse_fts_aux_name(_stem(e.path)) is None and "innodb" in e.sections), None)
        if owner is not None:
            # MySQL 8 writes the aux file names in lower case, MariaDB and MySQL 5.7 in upper case
            aux_name = f"FTS_{tid:016x}_{iid:016x}_INDEX_1..6"
            if "sdi" in (owner.sections["innodb"].get("tablespace") or {}).get("names_from", "").lower():
                aux_name = aux_name.lower()
            owner.warnings.append(f"{owner.path}: FULLTEXT index {iname} (index id {iid}) of {parent} (table id "
                                  f"{tid}): none of its aux tables ({aux_name}) is here")


def analyze_file(entry: FileEntry, ctx: ScanContext, names=None) -> PageMap | None:
    """Build the page map of one file and fill ``entry``."""
    with ReadOnlyFile(entry.abspath) as f:
        if f.size == 0:
            entry.add_error("empty file: no pages")
            return None
        # the holes the scan listed a moment ago (read_facts), when the file is the same
        f.adopt_holes(entry.holes, entry.seen, entry.unwritten)
        full = getattr(ctx, "depth", "full") == "full"
        pm = build_page_map(f, entry.path, verify_checksums=ctx.verify_checksums and full, check=ctx.check,
                            holes=entry.holes, keys=getattr(ctx, "keys", None),
                            exact_payload=getattr(ctx, "exact_payload", True),
                            owners_only=getattr(ctx, "owners_only", False))
        changed = f.changed()
        if changed:
            entry.errors.append(changed)
        lobs = read_lobs(f, pm, ctx.check) if pm.flavor == "mysql" and full else None
    for msg, off in pm.errors:
        entry.add_error(msg, off)
    for w in pm.warnings:
        entry.warnings.append(f"{entry.path}: {w}")
    zu = pm.zero_in_use if pm.zero_in_use is not None else []
    if len(zu):
        msg = (f"{len(zu)} page(s) are all zero but the extent map marks them in use "
               f"(pages {', '.join(str(int(i)) for i in zu[:8])}{', ...' if len(zu) > 8 else ''})")
        if entry.role == "tablespace":
            entry.add_error("page " + str(int(zu[0])) + ": " + msg, int(zu[0]) * pm.physical)
        else:   # the system tablespace keeps allocated, never written pages (seen in MariaDB 10.11)
            entry.warnings.append(f"{entry.path}: {msg}")
    for algo, count in pm.undecoded.items():
        entry.warnings.append(f"{entry.path}: {algo}: not decoded ({count} page_compressed pages; "
                              f"payload lengths from the page headers, original page types unknown)")
    if pm.encrypted.any():
        if pm.crypt is not None and pm.crypt.crypt is not None:
            why = "no key file given" if getattr(ctx, "keys", None) is None else "not decrypted (see errors)"
            entry.warnings.append(f"{entry.path}: {int(pm.encrypted.sum())} encrypted pages (key id "
                                  f"{pm.crypt.crypt.key_id}; {why}): page types from their clear headers, "
                                  f"index facts unknown (encrypted)")
        else:
            entry.warnings.append(f"{entry.path}: {int(pm.encrypted.sum())} encrypted pages (shown as encrypted, not decrypted)")
    fill_entry(entry, pm, names, fs_block=ctx.fs_block or entry.fs_block or 4096, lobs=lobs, lob_chains=full,
               unit_arrays=getattr(ctx, "keep_units", True))
    if not full:
        entry.sections["innodb"]["checksum"]["verified"] = False
    keep_within_budget(entry, ctx, pm.n_pages, pm.crypt is not None or bool(pm.encrypted.any()))
    return pm


def read_lobs(f: ReadOnlyFile, pm: PageMap, check=None) -> list[Lob] | None:
    """Follow every MySQL 8 LOB / ZLOB of the file from its first pages (None when it has none).
    Pages are read as the engine sees them: MySQL COMPRESSION= pages decompressed; encrypted
    and corrupt pages are not read (a LOB reaching one records an error)."""
    unreadable = pm.encrypted | pm.corrupt
    firsts = np.nonzero(_IS_LOB_FIRST[pm.kind] & ~unreadable)[0]
    if not len(firsts):
        return None
    physical, logical = pm.physical, pm.logical
    from .lob import LobError, follow_lob
    from .pagecomp import PageDecodeError, decode_mysql_page

    def read_page(p: int) -> bytes:
        if unreadable[p]:
            raise LobError(f"page {p} is {'encrypted' if pm.encrypted[p] else 'corrupt'}; not read")
        try:
            raw = f.read_exact(p * physical, physical)
        except FileReadError as e:
            raise LobError(f"page {p}: {str(e).split(': ', 1)[-1]}") from None
        if pm.compressed[p] and int(pm.type[p]) == FIL_PAGE_COMPRESSED:
            try:
                return decode_mysql_page(raw, logical).page
            except PageDecodeError as e:
                raise LobError(f"page {p}: {e}") from None
        return raw

    out = []
    for k, p in enumerate(firsts.tolist()):
        if check is not None and k % 1024 == 0:
            check()
        out.append(follow_lob(read_page, p, pm.n_pages))
    return out


def _owner_codes(pm: PageMap) -> tuple[np.ndarray, dict[int, int]]:
    """int32 owner code per page and index id -> code."""
    codes: dict[int, int] = {}
    nxt = _BIG_OWNER_BASE
    for iid in distinct(pm.owner_index[pm.owned]):
        iid = int(iid)
        if iid < 2 ** 31:
            codes[iid] = iid
        else:
            codes[iid] = nxt
            nxt -= 1
    owner = np.full(pm.n_pages, -1, dtype=np.int32)
    if codes:
        keys = np.fromiter(codes.keys(), dtype=np.uint64)
        vals = np.fromiter(codes.values(), dtype=np.int64)
        order = np.argsort(keys)
        keys, vals = keys[order], vals[order]
        sel = np.nonzero(pm.owned)[0]
        pos = np.searchsorted(keys, pm.owner_index[sel])
        owner[sel] = vals[pos]
    return owner, codes


#: page kind (uint16) -> whether it is a LOB page / a LOB's first page (one lookup per
#: page instead of np.isin's sort: per-file Python time counts at 20,000 files)
_IS_LOB = np.zeros(1 << 16, dtype=bool)
_IS_LOB[list(LOB_TYPES)] = True
_IS_LOB_FIRST = np.zeros(1 << 16, dtype=bool)
_IS_LOB_FIRST[list(LOB_FIRST_TYPES)] = True


def _lob_facts(entry: FileEntry, pm: PageMap, lobs: list[Lob] | None):
    """(per-page first page of its LOB, {index id: (lobs, pages)}, the file's "lobs" JSON)."""
    n = pm.n_pages
    lob_types = _IS_LOB[pm.kind]
    if not lobs and not lob_types.any():
        return None, {}, None
    from .lob import page_lob_owner
    lobs = lobs or []
    live = [lob for lob in lobs if not pm.free[lob.first_page]]
    freed = [lob for lob in lobs if pm.free[lob.first_page]]
    owner_page = page_lob_owner(live + freed, n)
    per_index: dict[int, list[int]] = {}
    for lob in live:
        if pm.owned[lob.first_page]:
            got = per_index.setdefault(int(pm.owner_index[lob.first_page]), [0, 0])
            got[0] += 1
            got[1] += lob.n_pages
    unreached = lob_types & (owner_page < 0)
    in_use = unreached & ~pm.free
    errors = [e for lob in live for e in lob.errors]      # a freed first page's lists are stale
    for msg in errors[:8]:
        entry.warnings.append(f"{entry.path}: {msg}")
    if len(errors) > 8:
        entry.warnings.append(f"{entry.path}: {len(errors)} LOB chain problems in all")
    if in_use.any():
        pages = np.nonzero(in_use)[0]
        entry.warnings.append(f"{entry.path}: {len(pages)} LOB page(s) in use that no LOB first page reaches "
                              f"(pages {', '.join(str(int(i)) for i in pages[:8])}{', ...' if len(pages) > 8 else ''})")
    facts = {
        "count": len(live), "pages": sum(lob.n_pages for lob in live),
        "bytes": sum(lob.length for lob in live),
        "compressed": sum(1 for lob in live if lob.compressed),
        "compressed_bytes": sum(lob.zlength for lob in live if lob.compressed),
        "old_versions": sum(lob.versions for lob in live),
        "freed": len(freed), "freed_pages": sum(lob.n_pages for lob in freed),
        "unreached_pages": int(unreached.sum()), "unreached_in_use_pages": int(in_use.sum()),
        "errors": len(errors),
    }
    return owner_page, per_index, facts


def fill_entry(entry: FileEntry, pm: PageMap, names=None, fs_block: int = 4096,
               lobs: list[Lob] | None = None, lob_chains: bool = True, unit_arrays: bool = True) -> None:
    """Units, kind/owner names, the JSON section and the view arrays of one file
    (``lob_chains=False``: the LOB chains were not followed, so nothing is said of them;
    ``unit_arrays=False``: the JSON section, errors and warnings only, no units, owner codes
    or per-page arrays: what the command line writes)."""
    n, physical, logical = pm.n_pages, pm.physical, pm.logical
    offsets = np.arange(n, dtype=np.int64) * physical
    is_index = pm.is_index_kind(pm.kind) & ~pm.encrypted & ~pm.corrupt
    if pm.doublewrite is not None and pm.doublewrite.any():
        is_index &= ~pm.doublewrite          # copies in the doublewrite buffer, not live indexes
    codes: dict[int, int] = {}
    if unit_arrays:
        units = empty_units(n)
        units["offset"] = offsets
        units["stored"] = pm.stored
        units["logical"] = logical
        units["kind"] = pm.kind
        units["lsn"] = pm.lsn
        units["fill"] = pm.fill
        owner, codes = _owner_codes(pm)
        units["owner"] = owner
        flags = np.zeros(n, dtype=np.uint16)
        flags[pm.compressed] |= UNIT_COMPRESSED
        flags[pm.free] |= UNIT_FREE
        flags[pm.encrypted] |= UNIT_ENCRYPTED
        flags[pm.corrupt] |= UNIT_CORRUPT
        if pm.checksum_checked:
            flags[~pm.checksum_ok] |= UNIT_BAD_CHECKSUM
        flags[is_index & (pm.level == 0)] |= UNIT_LEAF

    # holes: really unallocated bytes per page against what the engine should have punched
    real = hole_bytes_per_unit(entry.holes, offsets, physical)
    expected = np.zeros(n, dtype=np.int64)
    pc_pages = pm.compressed & (pm.stored < physical)
    st_blksize = int(entry.fs.st_blksize) if entry.fs is not None else fs_block
    block, rule = punch_block(pm.flavor, st_blksize, physical)
    keep = kept_granularity(pm.flavor, st_blksize, physical, fs_block)
    if entry.fs is not None and (pc_pages.any() or pm.flags.page_compressed):
        entry.fs.engine_block, entry.fs.engine_block_rule = block, rule
    if keep is not None and pc_pages.any():
        expected[pc_pages] = expected_hole_per_page(pm.stored[pc_pages], physical, keep)
    if keep is not None and pm.flavor == "mariadb" and (pm.flags.page_compressed or pm.compressed.any()):
        # MariaDB punches freed pages of page_compressed tablespaces whole
        punched_free = (pm.free | pm.zero) & ~pm.compressed
        punched_free[0] = False
        expected[punched_free] = physical
    missing = (expected > 0) & (real < expected)
    if unit_arrays:
        flags[real > 0] |= UNIT_HOLE
        flags[missing] |= UNIT_HOLE_MISSING
        units["flags"] = flags
        entry.units = units
    kinds, kind_counts = pm.kind_counts()
    entry.kind_names = pm.kind_names(kinds)

    space_id = pm.fsp.space_id if pm.fsp else int(pm.space_id[0]) if n else None
    naming = file_naming(entry, space_id, names, shared_flag=pm.flavor == "mysql" and pm.flags.shared)
    entry.detail["innodb_naming"] = naming
    index_names = naming.index_names
    table_label = naming.label() if entry.role == "tablespace" else None

    lob_owner_page, lob_per_index, lob_json = _lob_facts(entry, pm, lobs) if lob_chains else (None, {}, None)
    owner_names: dict[int, str] = {}
    indexes_json: list[dict[str, Any]] = []
    live_index = is_index & ~pm.free
    vals = pm.index_id[live_index]
    if len(vals) > 1:       # runs of one index: the first of each run is enough to know which occur
        vals = vals[np.concatenate(([True], vals[1:] != vals[:-1]))]
    ids = sorted(set(vals.tolist()) | set(pm.roots))
    cap_old, cap_new = empty_free_space(logical)
    # pages a segment owns that the scan did not decode (ScanContext.owners_only): in their
    # index by the segment.  The top segment holds only non-leaf pages, the leaf segment the
    # leaf pages and the BLOB pages (btr_page_alloc at level 0, btr0btr.cc / btr0cur.cc).  A
    # leaf of a tree of more than one leaf (the one-leaf tree's is its root, a fragment page,
    # decoded) links to a neighbour: FIL_PAGE_PREV or FIL_PAGE_NEXT is a page number (never
    # 0, the FSP header's); a BLOB page links to none (fsp_apply_init_file_page sets both to
    # FIL_NULL, older servers left them 0; fsp0fsp.cc).  Records and fill are then unknown
    # (None) and ``undecoded_pages`` says how many pages of the index were not decoded.
    skipped = pm.skipped if pm.skipped is not None and pm.skipped.any() else None
    if skipped is not None:
        skipped = skipped & pm.owned & ~pm.free
        in_leaf_seg = np.isin(pm.seg_id, np.fromiter(pm.leaf_segments, np.uint64, len(pm.leaf_segments)))
        linked = ((pm.prev != FIL_NULL) & (pm.prev != 0)) | ((pm.next != FIL_NULL) & (pm.next != 0))
        skipped_leaf = skipped & in_leaf_seg & linked
        skipped = skipped & (~in_leaf_seg | linked)          # BLOB pages are not B-tree pages
    for iid in ids:
        sel = live_index & (pm.index_id == np.uint64(iid))
        npages = int(sel.sum())
        leaf = sel & (pm.level == 0)
        n_skipped = n_skipped_leaf = 0
        if skipped is not None:
            mine = pm.owner_index == np.uint64(iid)
            n_skipped = int(np.count_nonzero(skipped & mine))
            n_skipped_leaf = int(np.count_nonzero(skipped_leaf & mine))
        tname, iname = (None, None)
        got = index_names.get(iid)
        if got:
            tname, iname = got
        if iname is None:
            iname = "SDI" if iid == 0xFFFFFFFFFFFFFFFF else f"index {iid}"
        if tname is None:
            tname = table_label
        n_compact = int(np.count_nonzero(pm.n_heap[sel] & PAGE_HEAP_NO_COMPACT))
        cap = n_compact * cap_new + (npages - n_compact) * cap_old
        fill_ratio = float(np.maximum(pm.data_size[sel], 0).sum() / cap) if npages and not n_skipped else None
        indexes_json.append(InnoDBIndex.of({
            "index_id": iid, "name": iname, "table": tname, "root_page": pm.roots.get(iid),
            "pages": npages + n_skipped, "leaf_pages": int(leaf.sum()) + n_skipped_leaf,
            "levels": int(pm.level[sel].max()) + 1 if npages else 0,
            "records": None if n_skipped else int(pm.n_recs[leaf].astype(np.int64).sum()),
            "fill_ratio": round(fill_ratio, 6) if fill_ratio is not None else None,
        }))
        if n_skipped:
            indexes_json[-1]["undecoded_pages"] = n_skipped
        if lob_json is not None:
            n_lobs, n_lob_pages = lob_per_index.get(iid, (0, 0))
            indexes_json[-1]["lobs"] = n_lobs
            indexes_json[-1]["lob_pages"] = n_lob_pages
        code = codes.get(iid)
        if code is not None:
            owner_names[code] = f"{tname}.{iname}" if tname else iname
    if owner_names:
        entry.owner_names = owner_names

    page_types: dict[str, int] = {}
    names_by_kind = entry.kind_names
    for k, c in zip(kinds, kind_counts):
        page_types[names_by_kind[k]] = c
    comp_sel = pm.compressed
    # a skipped page's payload length is known where its header states it (lz4, lzo, snappy,
    # the older layout), not where only its stream's end gives it (full_crc32 zlib, lzma, bzip2)
    unknown_payload = pm.skipped is not None and bool((pm.skipped & (pm.payload_len == 0)).any())
    section = InnoDBSection(**{
        "space_id": space_id,
        "fsp_flags": pm.flags.raw,
        "page_size": logical,
        "physical_page_size": physical,
        "pages": n,
        "page_compressed": bool(pm.flags.page_compressed or comp_sel.any()),
        "compression_algorithm": pm.compression_algorithm,
        "page_types": page_types,
        "page_compressed_pages": int(comp_sel.sum()),
        "compressed_payload_bytes": None if unknown_payload else int(pm.payload_len[comp_sel].astype(np.int64).sum()),
        "expected_hole_bytes": int(expected.sum()),
        "hole_bytes": int(entry.hole_bytes),
        "checksum": {"algorithm": pm.checksum_algorithm if pm.checksum_checked else None,
                     "bad_pages": [int(i) for i in np.nonzero(~pm.checksum_ok)[0]] if pm.checksum_checked else []},
        "indexes": indexes_json,
    })
    if pm.skipped is not None and pm.skipped.any():
        section.undecoded_pages = int(np.count_nonzero(pm.skipped))
    if lob_json is not None:
        section.lobs = lob_json
    if pm.crypt is not None:
        section.encryption = pm.crypt.to_json(n)
    if pm.doublewrite_area is not None:
        section.doublewrite = pm.doublewrite_area
    if entry.role == "tablespace":
        section.tablespace = {"name": naming.tablespace, "shared": naming.shared,
                                 "tables": naming.tables, "names_from": naming.source}
    entry.sections["innodb"] = section
    if pm.checksum_checked:
        bad = np.nonzero(~pm.checksum_ok)[0]
        for i in bad[:8]:
            entry.add_error(f"page {int(i)}: checksum mismatch ({pm.checksum_algorithm or 'unknown algorithm'})",
                            int(i) * physical)
        if len(bad) > 8:
            entry.add_error(f"{len(bad)} pages with a bad checksum in all")
    if missing.any():
        lost = int((expected - np.minimum(real, expected))[missing].sum())
        entry.warnings.append(
            f"{entry.path}: {int(missing.sum())} page-compressed page(s) keep {lost} bytes allocated that the "
            f"server punches out (it rounds each compressed page to {keep}-byte blocks: {block} by its rule "
            f"on this {entry.fs.type if entry.fs is not None else 'filesystem'}, st_blksize {st_blksize}, "
            f"filesystem block {fs_block}, and frees the rest of the page): sparseness lost, typically "
            f"a copy or restore that did not keep holes (cp --sparse=never, rsync without -S, some backup "
            f"tools); `fallocate --dig-holes` on a stopped server or a table rebuild gives them back")
    if not unit_arrays:
        return
    entry.unit_facts = UnitFacts(owner_id=pm.index_id, level=pm.level, records=pm.n_recs,
                                 payload_bytes=pm.payload_len, hole_bytes=real.astype(np.uint32),
                                 expected_hole_bytes=expected.astype(np.uint32),
                                 key_version=pm.crypt.key_version if pm.crypt is not None else None)
    entry.detail["innodb"] = {
        "page_map": pm,
        "page_no": pm.page_no, "space_id": pm.space_id, "prev": pm.prev, "next": pm.next,
        "level": pm.level, "records": pm.n_recs, "index_id": pm.index_id, "type": pm.type,
        "payload_len": pm.payload_len, "hole_bytes": real.astype(np.uint32),
        "expected_hole_bytes": expected.astype(np.uint32),
        "seg_id": pm.seg_id, "data_size": pm.data_size, "original_type": pm.original_type,
        "flavor": pm.flavor, "fsp_header": pm.fsp, "fsp_flags": pm.flags,
        "segments": pm.segments, "extent_map": pm.extent_map,
        "zblob_chains": _zblob_chains(pm) if pm.flags.zip_size else [],
        "lobs": lobs or [], "lob_first_page": lob_owner_page,
    }


def _zblob_chains(pm: PageMap) -> list:
    """The ROW_FORMAT=COMPRESSED file's ZBLOB chains (zip.py, imported for such files only)."""
    from .zip import zblob_chains
    return zblob_chains(pm.kind, pm.next)


def inspect_page(entry: FileEntry, page_no: int) -> dict[str, Any]:
    """Inspector: one page's header fields and byte regions (decoded when page-compressed)."""
    from .pagemap import page_header_fields
    from .payloads import unit_payload
    det = innodb_detail(entry) or {}
    pm: PageMap | None = det.get("page_map")
    raw = unit_payload(entry, page_no)
    flavor = pm.flavor if pm else "mysql"
    logical = pm.logical if pm else len(raw)
    out = page_header_fields(raw, flavor, logical)
    if pm is not None and 0 <= page_no < pm.n_pages:
        out["stored_bytes"] = int(pm.stored[page_no])
        out["payload_len"] = int(pm.payload_len[page_no])
        out["free"] = bool(pm.free[page_no])
        out["segment"] = int(pm.seg_id[page_no])
        out["checksum_ok"] = bool(pm.checksum_ok[page_no])
        out["kind"] = entry.kind_names.get(int(pm.kind[page_no]), str(int(pm.kind[page_no])))
        owner = det.get("lob_first_page")
        if owner is not None and owner[page_no] >= 0:
            first = int(owner[page_no])
            lob = next((x for x in det.get("lobs") or [] if x.first_page == first), None)
            if lob is not None:
                out["lob"] = {"first_page": first, "length": lob.length, "pages": lob.n_pages,
                              "compressed": lob.compressed, "freed": bool(pm.free[first]),
                              "index_id": int(pm.owner_index[first]) if pm.owned[first] else None}
    return out


register_analyzer(analyze_file)

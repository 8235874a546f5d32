"""Table and index names for InnoDB space ids and index ids, and facts about
system files.

* MariaDB and MySQL 5.7: the SYS_TABLES / SYS_INDEXES B-trees of ibdata1
  (:mod:`sysdict`).
* MySQL 8.0+: the SDI of every tablespace (:mod:`sdi`), mysql.ibd included;
  a partitioned table's SDI sits in one partition's file and names the space
  ids of all its partitions.
* A lone .ibd without either shows index ids only (empty maps, no error).

``system_info`` gives JSON-able facts for ibdata1 (TRX_SYS, dictionary header,
doublewrite, undo), redo log files and undo tablespaces.
"""
from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..model import FileEntry
from .fil import FIL_PAGE_TYPE_FSP_HDR
from .fsp import FSP_FLAGS_POS_SHARED  # general tablespaces, mysql.ibd, innodb_system (MySQL)
from .fsp import FSP_HEADER_OFFSET, decode_fsp_flags
from .fil import parse_fil_header as read_fil_header
from .sysfile import PageError, SpaceFile

if TYPE_CHECKING:
    # the dictionary readers are imported where a file needs them (a MariaDB .ibd needs
    # none): together ~10 ms of every command's start
    from . import ddtables, sdi, sysdict

#: dict0dict.h / dict0boot.h (MySQL): change buffer index id = DICT_IBUF_ID_MIN + space id
DICT_IBUF_ID_MIN = 0xFFFFFFFF00000000
IBUF_SPACE_ID = 0
#: ibuf0ibuf.cc ibuf_init_at_db_start: the change buffer's in-memory table and index names
IBUF_NAMES = ("innodb_change_buffer", "CLUST_IND")
SYSTEM_TABLESPACE_NAME = "innodb_system"
#: dict0mem.h DICT_TF2_USE_FILE_PER_TABLE (SYS_TABLES.MIX_LEN): the table has its own .ibd; a table
#: with a non-zero space and without it lives in a shared (MySQL 5.7 general) tablespace
DICT_TF2_USE_FILE_PER_TABLE = 16
#: dict0mem.h: SYS_INDEXES.TYPE bit of a FULLTEXT index
DICT_FTS = 32

_IBDATA_RE = re.compile(r"^ibdata(\d+)$", re.IGNORECASE)
_FILENAME_HEX_RE = re.compile(r"@([0-9a-fA-F]{4})")


@dataclass
class FileNames:
    """What one tablespace file's own SDI says about it (MySQL 8): preferred over the
    space-id-keyed maps, which files of different servers in one folder can clash in."""

    path: str
    space_id: int | None
    tablespace: str | None                              # dd::Tablespace name ("ts1", "mysql", "db/t1")
    shared: bool                                        # general tablespace / mysql.ibd / innodb_system
    tables: list[str] = field(default_factory=list)     # "db.table" (partitions: "db.table#P#p0")
    indexes: dict[tuple[int, int], tuple[str, str]] = field(default_factory=dict)


@dataclass
class Names:
    tables: dict[int, str]                              # space_id -> "db.table" (partitions: "db.table#P#p0")
    indexes: dict[tuple[int, int], tuple[str, str]]     # (space_id, index_id) -> ("db.table", index name)
    source: str                                         # "ibdata1 SYS_TABLES/SYS_INDEXES", "SDI", ...
    errors: list[str] = field(default_factory=list)
    #: shared tablespaces (MySQL general tablespaces, mysql.ibd, 5.7 general tablespaces from
    #: SYS_TABLES): space id -> tablespace name (None when the dictionary does not store it)
    shared: dict[int, str | None] = field(default_factory=dict)
    #: file path -> names from that file's own SDI
    by_file: dict[str, FileNames] = field(default_factory=dict)
    #: directory of a mysql.ibd ("" for the root) -> what its dictionary tables say per space id
    dd: dict[str, ddtables.DdNames] = field(default_factory=dict)
    #: InnoDB table and index ids (FULLTEXT aux tables name their owner by these ids): from
    #: SYS_TABLES / SYS_INDEXES, or (MySQL 8) the indexes' se_private_data in SDI / mysql.ibd
    table_ids: dict[int, str] = field(default_factory=dict)              # table id -> "db.table"
    index_ids: dict[int, tuple[str, str]] = field(default_factory=dict)  # index id -> ("db.table", index name)
    #: FULLTEXT indexes: index id -> (table id, "db.table", index name)
    fulltext: dict[int, tuple[int, str, str]] = field(default_factory=dict)

    def dictionary_for(self, path: str) -> ddtables.DdNames | None:
        """The mysql.ibd dictionary of the data directory holding ``path`` (nearest above it)."""
        best = None
        for d, dd in self.dd.items():
            if (d == "" or path.startswith(d + "/")) and (best is None or len(d) > len(best[0])):
                best = (d, dd)
        return best[1] if best else None


def decode_filename(name: str) -> str:
    """Undo MySQL's filename-safe encoding of the @xxxx (4 hex digits) form, e.g. x@0024y -> x$y."""
    return _FILENAME_HEX_RE.sub(lambda m: chr(int(m.group(1), 16)), name)


def innodb_table_name(name: str) -> str:
    """"db/table" as InnoDB stores it -> "db.table" (system tables without a db stay as they are)."""
    if "/" in name:
        db, tbl = name.split("/", 1)
        return f"{decode_filename(db)}.{decode_filename(tbl)}"
    return name


def _is_first_ibdata(entry: FileEntry) -> bool:
    """ibdataN by name (the lowest N is the one holding page 0..7 of the system tablespace)."""
    m = _IBDATA_RE.match(os.path.basename(entry.path))
    return bool(m)


def _ibdata_key(entry: FileEntry) -> int:
    m = _IBDATA_RE.match(os.path.basename(entry.path))
    return int(m.group(1)) if m else 1 << 30


def names_from_dictionary(d: sysdict.Dictionary, names: Names) -> None:
    """Fill ``names`` from SYS_TABLES / SYS_INDEXES rows."""
    from . import sysdict
    by_id = d.table_by_id()
    per_space: dict[int, list[str]] = {}
    for t in d.tables:
        names.table_ids[t.id] = innodb_table_name(t.name)
        if t.space != 0:
            names.tables[t.space] = innodb_table_name(t.name)
            per_space.setdefault(t.space, []).append(innodb_table_name(t.name))
            if not t.mix_len & DICT_TF2_USE_FILE_PER_TABLE:
                names.shared.setdefault(t.space, None)
    for space, tnames in per_space.items():
        if len(tnames) > 1:                      # several tables in one space: a general tablespace
            names.shared.setdefault(space, None)
            names.tables[space] = f"space {space}"
    for tid, (tname, iname) in sysdict.SYSTEM_INDEXES.items():
        names.indexes[(0, tid)] = (tname, iname)
    for i in d.indexes:
        t = by_id.get(i.table_id)
        if t is None:
            names.errors.append(f"SYS_INDEXES row {i.name!r} (index id {i.id}) names table id {i.table_id}, "
                                f"which SYS_TABLES does not have")
            continue
        names.indexes[(i.space, i.id)] = (innodb_table_name(t.name), i.name)
        names.index_ids[i.id] = (innodb_table_name(t.name), i.name)
        if i.type & DICT_FTS:
            names.fulltext[i.id] = (t.id, innodb_table_name(t.name), i.name)


def file_names_from_sdi(info: sdi.SdiInfo) -> FileNames:
    """The names one file's own SDI gives: its tablespace, tables and index ids (all spaces its
    table records name: a partitioned table's SDI names the space ids of every partition)."""
    own = [ts for ts in info.tablespaces if ts.space_id is None or ts.space_id == info.space_id]
    ts = own[0] if own else (info.tablespaces[0] if info.tablespaces else None)
    fn = FileNames(path=info.path, space_id=info.space_id, tablespace=ts.name if ts else None,
                   shared=bool(ts is not None and ts.flags is not None and ts.flags >> FSP_FLAGS_POS_SHARED & 1))
    for t in info.tables:
        for i in t.indexes:
            if i.id is None:
                continue                         # partitioned table: ids are on the partitions
            space = i.space_id if i.space_id is not None else info.space_id
            if space is None:
                continue
            tname = t.full_name + (f"#P#{i.partition}" if i.partition else "")
            fn.indexes[(space, i.id)] = (tname, i.name)
            if space == info.space_id and tname not in fn.tables:
                fn.tables.append(tname)
    return fn


def ids_from_sdi(t: sdi.SdiTable, names: Names) -> None:
    """The InnoDB table and index ids of one dd::Table (each index's se_private_data
    ``id=..;table_id=..``; a FULLTEXT index has them too, with root FIL_NULL: its data is
    in the aux tables).  Partitions have their own table ids and no FULLTEXT index."""
    from . import sdi
    for i in t.indexes:
        if i.id is None or i.table_id is None or i.partition:
            continue
        names.table_ids[i.table_id] = t.full_name
        names.index_ids[i.id] = (t.full_name, i.name)
        if i.type == sdi.DD_INDEX_FULLTEXT:
            names.fulltext[i.id] = (i.table_id, t.full_name, i.name)


def names_from_sdi(infos: list[sdi.SdiInfo], names: Names) -> None:
    """Fill ``names`` from the SDI tables and tablespaces of MySQL 8 files."""
    per_space: dict[int, set[str]] = {}
    space_names: dict[int, str] = {}
    claimed: dict[int, list[str]] = {}
    for info in infos:
        fn = file_names_from_sdi(info)
        names.by_file[info.path] = fn
        if fn.shared and info.space_id is not None:
            names.shared[info.space_id] = fn.tablespace
        for ts in info.tablespaces:
            if ts.space_id is not None:
                name = innodb_table_name(ts.name)
                if space_names.get(ts.space_id, name) != name:
                    claimed.setdefault(ts.space_id, [space_names[ts.space_id]]).append(name)
                space_names[ts.space_id] = name
        for (space, iid), (tname, iname) in fn.indexes.items():
            names.indexes[(space, iid)] = (tname, iname)
            per_space.setdefault(space, set()).add(tname)
        for t in info.tables:
            ids_from_sdi(t, names)
    for space, tnames in per_space.items():
        if len(tnames) == 1:
            names.tables[space] = next(iter(tnames))
        else:                                    # general tablespace, mysql.ibd: several tables
            names.tables[space] = space_names.get(space, f"space {space}")
    for space, n in space_names.items():
        names.tables.setdefault(space, n)
    if claimed:
        shown = ", ".join(f"{sp} ({' / '.join(v[:3])})" for sp, v in sorted(claimed.items())[:10])
        names.errors.append(f"{len(claimed)} space id(s) are claimed by more than one tablespace "
                            f"(files of different servers?); their names are ambiguous: {shown}"
                            + (" ..." if len(claimed) > 10 else ""))


_VALID_PAGE_SIZES = (1024, 2048, 4096, 8192, 16384, 32768, 65536)


def _may_have_sdi(abspath: str) -> bool:
    """False when page 0's FSP flags (a 58-byte read) say the file has no SDI to read
    (MariaDB full_crc32, no SDI flag) and would open without error: the check
    ``SpaceFile`` and the loop below make, without mapping the file (a data dir of
    20,000 MariaDB tablespaces spent 66 us a file here).  True when in doubt."""
    try:
        fd = os.open(abspath, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return True
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return True
        head = os.pread(fd, FSP_HEADER_OFFSET + 20, 0)
    except OSError:
        return True
    finally:
        os.close(fd)
    if len(head) < FSP_HEADER_OFFSET + 20:
        return True
    flags = decode_fsp_flags(int.from_bytes(head[FSP_HEADER_OFFSET + 16:FSP_HEADER_OFFSET + 20], "big"))
    if flags.physical_page_size not in _VALID_PAGE_SIZES:
        return True
    return not (flags.full_crc32 or not flags.sdi)


def resolve_names(files: list[FileEntry]) -> Names:
    """Map space ids and index ids to names from ibdata1 and/or the SDI of the given files."""
    names = Names({}, {}, "", [])
    sources = []
    ibdata = sorted((f for f in files if f.engine in (None, "innodb") and _is_first_ibdata(f)), key=_ibdata_key)
    if ibdata:
        first = ibdata[0]
        try:
            with SpaceFile(first.abspath, first.path) as space:
                ptype = read_fil_header(space.page(0)).page_type
                if ptype != FIL_PAGE_TYPE_FSP_HDR:
                    names.errors.append(f"{first.path} page 0: not an FSP header page (page type {ptype})")
                elif space.space_id == 0:
                    names.tables[0] = SYSTEM_TABLESPACE_NAME
                    # the change buffer tree lives in ibdata1 up to MariaDB 10.11 and in MySQL 8
                    names.indexes[(IBUF_SPACE_ID, DICT_IBUF_ID_MIN + IBUF_SPACE_ID)] = IBUF_NAMES
                    from . import sysdict
                    d = sysdict.read_dictionary(space)
                    names.errors.extend(d.errors)
                    if d.has_sys_tables:
                        names_from_dictionary(d, names)
                        sources.append(f"{os.path.basename(first.path)} SYS_TABLES/SYS_INDEXES")
                else:
                    names.errors.append(f"{first.path} page 0: space id {space.space_id}, not the system tablespace")
        except PageError as e:
            names.errors.append(str(e))
    infos = []
    sdi_files = [f for f in files if f.engine in (None, "innodb") and f.path.lower().endswith(".ibd")]
    if ibdata:
        sdi_files.insert(0, ibdata[0])      # MySQL 8 ibdata1 has an SDI too (tables in innodb_system)
    for f in sdi_files:
        if not _may_have_sdi(f.abspath):
            continue
        try:
            with SpaceFile(f.abspath, f.path) as space:
                fl = space.flags
                if fl is None or fl.full_crc32 or not fl.sdi:
                    continue
                from . import ddtables, sdi
                info = sdi.read_sdi(space)
                if os.path.basename(f.path).lower() == "mysql.ibd" and info.records:
                    # MySQL 8 data dictionary tables: names of files whose own SDI cannot be read
                    try:
                        dd = ddtables.read_dd_names(space, info)
                    except (ddtables.DdError, ValueError, TypeError, KeyError, AttributeError) as e:
                        names.errors.append(f"{f.path}: data dictionary tables not read: {e}")
                    else:
                        names.errors.extend(dd.errors)
                        if dd.spaces:
                            names.dd[os.path.dirname(f.path)] = dd
                        names.table_ids.update(dd.table_ids)
                        names.index_ids.update(dd.index_ids)
                        names.fulltext.update(dd.fulltext)
        except PageError as e:
            names.errors.append(str(e))
            continue
        names.errors.extend(info.errors)
        infos.append(info)
    if infos:
        names_from_sdi(infos, names)
        if any(i.records for i in infos):
            sources.append("SDI")
    if names.dd:
        sources.append("mysql.ibd dictionary")
    names.source = " + ".join(sources)
    return names


def _ibdata_info(entry: FileEntry) -> dict:
    errors: list[str] = []
    out: dict = {"kind": "system_tablespace"}
    try:
        with SpaceFile(entry.abspath, entry.path) as space:
            out.update(space_id=space.space_id, page_size=space.physical, pages=space.n_pages,
                       fsp_flags=space.flags.raw if space.flags else None)
            if space.space_id != 0:
                errors.append(f"{entry.path} page 0: space id {space.space_id}; only the first system "
                              f"tablespace file holds TRX_SYS and the dictionary header")
            else:
                from . import sysdict, trxsys
                d = sysdict.read_dictionary(space)
                errors.extend(d.errors)
                out["dictionary_header"] = d.header.to_json() if d.header else None
                out["dictionary"] = ({"source": "SYS_TABLES/SYS_INDEXES", "tables": len(d.tables),
                                      "indexes": len(d.indexes), "columns": len(d.columns),
                                      "fields": len(d.fields), "deleted_rows": d.deleted_rows}
                                     if d.has_sys_tables else
                                     {"source": "none (MySQL 8.0+ keeps the data dictionary in mysql.ibd)"})
                out.update(trxsys.system_tablespace_info(space, errors))
    except PageError as e:
        errors.append(str(e))
    out["errors"] = errors
    return out


def _mysql_ibd_info(entry: FileEntry) -> dict:
    errors: list[str] = []
    out: dict = {"kind": "data_dictionary_tablespace"}
    try:
        with SpaceFile(entry.abspath, entry.path) as space:
            from . import sdi
            info = sdi.read_sdi(space)
            out.update(space_id=space.space_id, page_size=space.physical, pages=space.n_pages,
                       sdi_root_page=info.root_page, sdi_records=len(info.records),
                       sdi_tables=len(info.tables),
                       mysqld_version_ids=sorted({t.mysqld_version_id for t in info.tables
                                                  if t.mysqld_version_id is not None}))
            errors.extend(info.errors)
    except PageError as e:
        errors.append(str(e))
    out["errors"] = errors
    return out


def _undo_info(entry: FileEntry) -> dict:
    errors: list[str] = []
    out: dict = {"kind": "undo_tablespace"}
    try:
        with SpaceFile(entry.abspath, entry.path) as space:
            from . import trxsys
            out.update(trxsys.undo_tablespace_info(space, errors))
    except PageError as e:
        errors.append(str(e))
    out["errors"] = errors
    return out


def system_info(entry: FileEntry) -> dict | None:
    """JSON-able facts for ibdata1, mysql.ibd, redo logs and undo tablespaces; None for other files."""
    base = os.path.basename(entry.path)
    if entry.role == "redo_log" and entry.engine in (None, "innodb"):
        from . import redo
        try:
            return redo.read_redo_header(entry.abspath, entry.path).to_json()
        except redo.RedoError as e:
            return {"kind": "redo_log", "errors": [str(e)]}
    if entry.role == "undo" and entry.engine in (None, "innodb"):
        return _undo_info(entry)
    if _is_first_ibdata(entry):
        return _ibdata_info(entry)
    if base.lower() == "mysql.ibd":
        return _mysql_ibd_info(entry)
    return None

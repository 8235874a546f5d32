"""Server files entry point: ``analyze(dataset, files, ctx)`` reads each ``.frm``
(frm.py) and ``.par`` (par.py), ``db.opt`` and the environment files, and names
each file's database, table and the table's engine."""
from __future__ import annotations

import os
import posixpath

from ..fileio import FileReadError, ReadOnlyFile
from ..model import Dataset, FileEntry, ScanContext
from .frm import FrmError, read_frm
from .names import DB_OPT, ENVIRONMENT, FRM_EXT, PAR_EXT, TMP_FILE_PREFIX, base
from .par import ParError, read_par
from .section import DbOptSection, EnvironmentSection, FrmSection, ParSection

#: the most of a definition file read (a .frm is at most FRM_MAX_SIZE, 1 MiB in MariaDB 10.11; a .par a few KiB)
MAX_DEFINITION = 4 << 20
#: environment files whose text is shown when shorter than this
MAX_TEXT = 4096


def place_of(entry: FileEntry) -> tuple[str | None, str | None]:
    """(database, table) of a server file: the database folder, and the file's stem for
    table and partition definitions."""
    name = base(entry.path)
    folder = posixpath.dirname(entry.path) or os.path.dirname(entry.abspath)
    db = os.path.basename(folder) or None
    if name.endswith((FRM_EXT, PAR_EXT)):
        return db, name.rsplit(".", 1)[0]
    if name == DB_OPT:
        return db, None
    return None, None


def _read(entry: FileEntry) -> bytes | None:
    try:
        with ReadOnlyFile(entry.abspath) as f:
            if f.size > MAX_DEFINITION:
                entry.add_error(f"{f.size} bytes: larger than any definition file ({MAX_DEFINITION}), not read")
                return None
            return f.pread(0, f.size)
    except FileReadError as e:
        entry.add_error(str(e).split(": ", 1)[-1])
        return None


def _frm(entry: FileEntry) -> FrmSection | None:
    buf = _read(entry)
    if buf is None:
        return None
    try:
        frm = read_frm(buf)
    except FrmError as e:
        entry.add_error(str(e), e.offset)
        return None
    leftover = base(entry.path).startswith(TMP_FILE_PREFIX)
    if leftover:
        entry.warnings.append(f"{entry.path}: a #sql table definition: left by an interrupted ALTER TABLE or a "
                              f"crash (the server's DDL recovery removes it)")
    if frm.view:
        return FrmSection(kind="frm", table_engine="VIEW", view=True, leftover=leftover or None)
    return FrmSection(kind="frm", table_engine=frm.engine, view=False, frm_version=frm.frm_version,
                      legacy_db_type=frm.legacy_db_type, engine_name=frm.engine_name,
                      partitioned=frm.partitioned, partition_clause=frm.partition_clause,
                      mysql_version=frm.mysql_version, leftover=leftover or None)


def _par(entry: FileEntry, frm_engine: str | None) -> ParSection | None:
    buf = _read(entry)
    if buf is None:
        return None
    try:
        par = read_par(buf)
    except ParError as e:
        entry.add_error(str(e), e.offset)
        return None
    if not par.checksum_ok:
        entry.add_error("checksum: the XOR of the file's words is not 0 (read_par_file refuses it)", 4)
    engines = list(par.engines)
    known = sorted(set(e for e in engines if not e.startswith("dynamic engine")))
    engine = frm_engine or (known[0] if len(known) == 1 else None)
    return ParSection(kind="par", table_engine=engine, partitions=list(par.partitions), engines=engines,
                      checksum_ok=par.checksum_ok)


def _db_opt(entry: FileEntry) -> DbOptSection | None:
    buf = _read(entry)
    if buf is None:
        return None
    opts = {}
    for line in buf.decode("utf-8", "replace").splitlines():
        k, sep, v = line.partition("=")
        if sep:
            opts[k.strip()] = v.strip()
    return DbOptSection(kind="db_opt", default_character_set=opts.get("default-character-set"),
                        default_collation=opts.get("default-collation"), comment=opts.get("comment"))


def _environment(entry: FileEntry) -> EnvironmentSection:
    name = base(entry.path)
    role, what, engine = ENVIRONMENT.get(name, (None, None, None))
    if what is None:
        what = ("the server's process id file" if name.endswith(".pid") else
                "a #sql file: left by an interrupted ALTER TABLE, OPTIMIZE or a crash" if entry.role == "leftover"
                else "a server file")
    text = None
    if engine is None and entry.apparent_bytes and entry.apparent_bytes < MAX_TEXT:
        buf = _read(entry)
        if buf is not None:
            try:
                text = buf.decode("utf-8").strip() or None
            except UnicodeDecodeError:
                text = None
    return EnvironmentSection(kind="environment", what=what, of_engine=engine, text=text)


def analyze(dataset: Dataset, files: list[FileEntry], ctx: ScanContext) -> None:
    """Read every server file handed over by the scan."""
    total = len(files)
    frm_engine: dict[str, str] = {}
    order = sorted(files, key=lambda e: not e.path.endswith(FRM_EXT))      # .frm first: .par asks it
    for k, entry in enumerate(order):
        ctx.check()
        if k % 64 == 0:
            ctx.report(k, total, f"reading {entry.path}")
        entry.database, entry.table = place_of(entry)
        name = base(entry.path)
        if name.endswith(FRM_EXT):
            sec = _frm(entry)
            if sec is not None:
                frm_engine[entry.path[: -len(FRM_EXT)]] = sec.table_engine
        elif name.endswith(PAR_EXT):
            sec = _par(entry, frm_engine.get(entry.path[: -len(PAR_EXT)]))
        elif name == DB_OPT:
            sec = _db_opt(entry)
        else:
            sec = _environment(entry)
        if sec is not None:
            entry.sections["server"] = sec
    ctx.report(total, total, "server files done")

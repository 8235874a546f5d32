"""A ClickHouse data directory: databases, tables and their part folders.

Layout (src/Databases/DatabaseAtomic.cpp, DatabaseOrdinary.cpp; fixtures/clickhouse/FORMAT_NOTES.md section 1):

* ``metadata/<db>.sql``: ``ATTACH DATABASE _ UUID '...' ENGINE = Atomic``
  (or ``Ordinary``);
* ``metadata/<db>/<table>.sql`` (for Atomic a symlink ``metadata/<db>`` ->
  ``store/<3 hex>/<db uuid>``): ``ATTACH TABLE _ UUID '<table uuid>' ...``;
* Atomic table data: ``store/<first 3 hex of uuid>/<uuid>/``, linked from
  ``data/<db>/<table>``; Ordinary table data: ``data/<db>/<table>/`` directly;
* in a table folder: ``format_version.txt``, ``detached/`` and one folder per
  part.  A part covered by another part of the table (same partition, wider
  block range, level not lower: MergeTreePartInfo::contains) is outdated:
  left on disk until cleanup and not counted by the engine.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from ..fileio import FileReadError, ReadOnlyFile
from .ddl import DDLError, DatabaseDef, TableDef, parse_database_sql, parse_table_sql
from .part import Part, parse_part_name, read_part
from .streams import escape_for_file_name, unescape_for_file_name


@dataclass
class Issue:
    """A problem found outside a part: the absolute path, message and offset."""

    path: str | None
    message: str
    offset: int | None = None


@dataclass
class TableInfo:
    """One table: where its metadata and data are, its DDL and parts."""

    database: str
    name: str
    uuid: str | None = None
    db_engine: str | None = None
    metadata_path: str | None = None      # absolute path of the .sql
    data_path: str | None = None          # absolute real path of the table folder
    ddl: TableDef | None = None
    format_version: str | None = None
    parts: list[Part] = field(default_factory=list)      # active and outdated
    detached: list[Part] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)
    log: object | None = None             # a Log-family table's LogTable (logtable.py)

    @property
    def engine(self) -> str:
        return self.ddl.engine if self.ddl else ""

    @property
    def index_granularity(self) -> int:
        try:
            return int((self.ddl.settings if self.ddl else {}).get("index_granularity", 8192))
        except ValueError:
            return 8192


def _read_text(path: str, limit: int = 4 << 20) -> str:
    with ReadOnlyFile(path) as f:
        if f.size > limit:
            raise FileReadError(path, f"{f.size} bytes, over the {limit}-byte limit for a .sql file")
        return f.read_exact(0, f.size).decode("utf-8", "replace")


def _looks_like_stub(path: str) -> bool:
    try:
        if os.path.getsize(path) > 4096:
            return False
        with open(path, "rb") as f:
            text = f.read(4096)
    except OSError:
        return False
    return b"\n" not in text.strip() and (text.startswith(b"../") or text.startswith(b"/"))


def resolve_link_stub(path: str) -> str | None:
    """A symlink that a copy turned into a small text file holding its target
    (``../store/1f6/<uuid>``): the directory it names, or None."""
    if os.path.islink(path) or not os.path.isfile(path) or not _looks_like_stub(path):
        return None
    with open(path, "rb") as f:
        target = f.read(4096).decode("utf-8", "replace").strip()
    full = os.path.normpath(os.path.join(os.path.dirname(path), target))
    return full if os.path.isdir(full) else None


def find_datadir(root: str, max_up: int = 4) -> str | None:
    """The ClickHouse path (holding metadata/ and store/ or data/) at or above ``root``."""
    cur = os.path.abspath(root if os.path.isdir(root) else os.path.dirname(root))
    for _ in range(max_up + 1):
        if os.path.isdir(os.path.join(cur, "metadata")) and (
                os.path.isdir(os.path.join(cur, "store")) or os.path.isdir(os.path.join(cur, "data"))):
            return cur
        parent = os.path.dirname(cur)
        if parent == cur:
            break
        cur = parent
    return None


def read_metadata(datadir: str) -> tuple[dict[str, TableInfo], list[Issue]]:
    """Tables declared under ``datadir/metadata``, keyed by the real path of their data folder."""
    tables: dict[str, TableInfo] = {}
    issues: list[Issue] = []
    meta = os.path.join(datadir, "metadata")
    try:
        names = sorted(os.listdir(meta))
    except OSError as e:
        return tables, [Issue(meta, f"cannot list: {e.strerror}")]
    dbs: dict[str, DatabaseDef | None] = {}
    for n in names:
        p = os.path.join(meta, n)
        if n.endswith(".sql") and os.path.isfile(p):
            db = unescape_for_file_name(n[:-4])
            try:
                dbs[db] = parse_database_sql(_read_text(p))
            except DDLError as e:
                issues.append(Issue(p, f"database metadata does not parse: {e}", e.offset))
                dbs[db] = None
            except (FileReadError, OSError) as e:
                issues.append(Issue(p, str(e).split(": ", 1)[-1]))
                dbs[db] = None
    table_dirs: dict[str, str] = {}
    for n in names:
        p = os.path.join(meta, n)
        if os.path.islink(p) and not os.path.exists(p):
            issues.append(Issue(p, f"broken symlink to {os.readlink(p)}"))
            continue
        target = resolve_link_stub(p)
        if target is not None:
            table_dirs[unescape_for_file_name(n)] = target
        elif os.path.isdir(p):
            table_dirs[unescape_for_file_name(n)] = p
    # an Atomic database keeps its table .sql files in store/<3>/<db uuid>/
    for db, dbdef in dbs.items():
        if db not in table_dirs and dbdef and dbdef.uuid:
            cand = os.path.join(datadir, "store", dbdef.uuid[:3], dbdef.uuid)
            if os.path.isdir(cand):
                table_dirs[db] = cand
            else:
                issues.append(Issue(os.path.join(meta, escape_for_file_name(db) + ".sql"),
                                    f"database {db}: its table metadata folder {cand} is missing"))
    for db, p in sorted(table_dirs.items()):
        dbdef = dbs.get(db)
        try:
            sqls = sorted(x for x in os.listdir(p) if x.endswith(".sql"))
        except OSError as e:
            issues.append(Issue(p, f"cannot list: {e.strerror}"))
            continue
        for s in sqls:
            sp = os.path.join(p, s)
            tname = unescape_for_file_name(s[:-4])
            t = TableInfo(db, tname, db_engine=dbdef.engine if dbdef else None, metadata_path=sp)
            text = ""
            try:
                text = _read_text(sp)
                t.ddl = parse_table_sql(text)
                t.uuid = t.ddl.uuid
            except DDLError as e:
                t.issues.append(Issue(sp, f"table metadata does not parse: {e}", e.offset))
                m = re.search(r"\bUUID\s+'([0-9a-fA-F-]{36})'", text)
                t.uuid = m.group(1) if m else None
            except (FileReadError, OSError) as e:
                t.issues.append(Issue(sp, str(e).split(": ", 1)[-1]))
            if t.uuid and t.uuid != "00000000-0000-0000-0000-000000000000":
                dpath = os.path.join(datadir, "store", t.uuid[:3], t.uuid)
            else:
                dpath = os.path.join(datadir, "data", escape_for_file_name(db), escape_for_file_name(tname))
            t.data_path = os.path.realpath(dpath)
            tables[t.data_path] = t
    return tables, issues


def data_links(datadir: str) -> tuple[dict[str, tuple[str, str]], list[Issue]]:
    """``data/<db>/<table>`` entries: real path -> (db, table); broken links reported."""
    out: dict[str, tuple[str, str]] = {}
    issues: list[Issue] = []
    data = os.path.join(datadir, "data")
    if not os.path.isdir(data):
        return out, issues
    for db in sorted(os.listdir(data)):
        dp = os.path.join(data, db)
        if not os.path.isdir(dp):
            continue
        try:
            tnames = sorted(os.listdir(dp))
        except OSError as e:
            issues.append(Issue(dp, f"cannot list: {e.strerror}"))
            continue
        for t in tnames:
            tp = os.path.join(dp, t)
            if os.path.islink(tp) and not os.path.exists(tp):
                issues.append(Issue(tp, f"broken symlink to {os.readlink(tp)}: the table's data is not there"))
                continue
            stub = resolve_link_stub(tp)
            if stub is not None:
                out[os.path.realpath(stub)] = (unescape_for_file_name(db), unescape_for_file_name(t))
            elif os.path.isfile(tp) and _looks_like_stub(tp):
                issues.append(Issue(tp, "symlink stored as a text file points at a missing folder"))
            elif os.path.isdir(tp):
                out[os.path.realpath(tp)] = (unescape_for_file_name(db), unescape_for_file_name(t))
    return out, issues


def part_dirs(dirs: set[str]) -> list[str]:
    """The part folders among directories that hold ClickHouse files."""
    out = []
    for d in sorted(dirs):
        base = os.path.basename(d)
        if base.endswith(".proj"):
            parent = os.path.dirname(d)
            if parse_part_name(os.path.basename(parent)) is not None or parent in dirs:
                continue          # read with its parent part
        out.append(d)
    return out


def mark_outdated(parts: list[Part]) -> None:
    """Marks parts covered by another part of the same table as outdated."""
    named = [p for p in parts if p.info is not None]
    for p in named:
        for q in named:
            if q is not p and q.info.contains(p.info) and q.info != p.info:
                p.state = "outdated"
                break

"""Find what is under a path: which engine each file belongs to and its role.

Detection is by name and place first (data directory layouts), then by a
magic sniff of the first bytes for lone files with unusual names.  Unknown
files are listed with role ``other``: never an error.  Symlinked directories
are followed once (ClickHouse ``data/<db>/<table>`` links into ``store/``),
never into a loop and never twice into the same real directory.
"""
from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field

from .model import FileEntry

# ClickHouse part directory names: <partition>_<min>_<max>_<level>[_<mutation>]
CH_PART_RE = re.compile(r"^(?P<partition>.+?)_(?P<min>\d+)_(?P<max>\d+)_(?P<level>\d+)(?:_(?P<mutation>\d+))?$")

INNODB_REDO_RE = re.compile(r"^(ib_logfile\d+|#ib_redo\d+(_tmp)?|ib_redo\d+)$")
INNODB_UNDO_RE = re.compile(r"^(undo_?\d+|.*\.ibu)$")
TOKU_LOG_RE = re.compile(r"^log\d+\.tokulog\d+$")

CH_MARK_EXT = (".mrk", ".mrk2", ".mrk3", ".mrk4", ".cmrk", ".cmrk2", ".cmrk3", ".cmrk4")
CH_PART_META = {
    "columns.txt", "count.txt", "checksums.txt", "serialization.json", "columns_substreams.txt",
    "default_compression_codec.txt", "metadata_version.txt", "partition.dat", "txn_version.txt",
    "uuid.txt", "ttl.txt", "statistics.packed", "skp_idx.packed", "delete-on-destroy.txt",
    "frozen.txt", "metadata_version", "marks.packed",
}


@dataclass
class Detected:
    """Files found under a root, with engine and role assigned."""

    root: str
    files: list[FileEntry] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _sniff(abspath: str) -> str | None:
    """Engine of a lone file from its first bytes, or None."""
    try:
        fd = os.open(abspath, os.O_RDONLY)
    except OSError:
        return None
    try:
        head = os.pread(fd, 64, 0)
    except OSError:
        return None
    finally:
        os.close(fd)
    if head[:8] == b"tokudata":
        return "tokudb"
    if head[:8] == b"tokulogg":
        return "tokudb-log"
    if len(head) >= 38:
        # InnoDB FIL header: page 0 has page number 0 and type FSP_HDR (8)
        page_no = int.from_bytes(head[4:8], "big")
        page_type = int.from_bytes(head[24:26], "big")
        if page_no == 0 and page_type == 8:
            return "innodb"
    return None


def classify(relpath: str, abspath: str, in_ch_part: bool, ch_root: bool,
             ch_rel: str | None = None) -> tuple[str | None, str]:
    """(engine, role) of one file from its name and place.

    ``ch_rel`` is the path relative to the enclosing ClickHouse data path
    (the directory holding ``metadata/`` and ``store/`` or ``data/``).
    """
    name = relpath.rsplit("/", 1)[-1]
    lower = name.lower()
    parts = (ch_rel if ch_rel is not None else relpath).split("/")
    # -- ClickHouse ---------------------------------------------------------
    if in_ch_part:
        if lower.endswith(".bin"):
            return "clickhouse", "part_column_data"
        if lower.endswith(CH_MARK_EXT):
            return "clickhouse", "marks"
        if lower in ("primary.idx", "primary.cidx"):
            return "clickhouse", "primary_index"
        return "clickhouse", "part_metadata"
    if ch_root:
        if lower.endswith(".sql") and parts[0] in ("metadata", "metadata_dropped", "store"):
            return "clickhouse", "table_metadata"
        if lower == "format_version.txt":
            return "clickhouse", "part_metadata"
        if parts[0] in ("metadata", "data", "store", "detached"):
            # e.g. data/<db>/<table> links kept as text by a copy that lost symlinks
            return "clickhouse", "other"
    # -- InnoDB -------------------------------------------------------------
    if re.match(r"^ibdata\d+$", lower) or lower == "mysql.ibd":
        return "innodb", "system_tablespace"
    if lower in ("ibtmp1",):
        return "innodb", "tablespace"
    if INNODB_REDO_RE.match(name) or (len(parts) >= 2 and parts[-2] == "#innodb_redo"):
        return "innodb", "redo_log"
    if lower.endswith(".ibu") or re.match(r"^undo_\d+$", lower) or re.match(r"^undo\d{3}$", lower):
        return "innodb", "undo"
    if re.match(r"^#ib_\d+_\d+\.dblwr$", lower) or lower == "ib_doublewrite":
        return "innodb", "doublewrite"
    if lower.endswith(".ibd") or lower.endswith(".ibt"):
        return "innodb", "tablespace"
    # -- TokuDB -------------------------------------------------------------
    if lower.endswith(".tokudb") or lower == "tokudb.directory":
        return "tokudb", "dictionary"
    if lower == "tokudb.environment" or lower.startswith("__tokudb_lock_dont_delete_me"):
        return "tokudb", "engine_environment"
    if lower == "tokudb.rollback":
        return "tokudb", "undo"
    if TOKU_LOG_RE.match(lower):
        return "tokudb", "redo_log"
    # -- lone files by magic --------------------------------------------------
    engine = _sniff(abspath)
    if engine == "tokudb":
        return "tokudb", "dictionary"
    if engine == "tokudb-log":
        return "tokudb", "redo_log"
    if engine == "innodb":
        return "innodb", "tablespace"
    return None, "other"


def is_ch_part_dir(names: set[str]) -> bool:
    """A ClickHouse part directory holds checksums.txt and columns.txt."""
    return "checksums.txt" in names and "columns.txt" in names


def detect(root: str) -> Detected:
    """Walk ``root`` (a directory or one file) and classify every file.

    Paths in the result are relative to ``root`` (for a single file, to its
    directory).  Unreadable directories, broken links and loops are reported
    in ``errors`` and skipped.
    """
    root = os.path.abspath(root)
    out = Detected(root=root)
    try:
        st = os.stat(root)
    except OSError as e:
        out.errors.append(f"{root}: {e.strerror}")
        return out
    if not stat.S_ISDIR(st.st_mode):
        base = os.path.dirname(root)
        out.root = base
        name = os.path.basename(root)
        engine, role = classify(name, root, False, False)
        out.files.append(FileEntry(path=name, abspath=root, engine=engine, role=role))
        return out

    visited: set[tuple[int, int]] = set()
    _walk(root, "", out, None, False, visited, set(), depth=0)
    out.files.sort(key=lambda f: f.path)
    return out


def _listdir(path: str, out: Detected) -> list[str]:
    try:
        return os.listdir(path)
    except OSError as e:
        out.errors.append(f"{path}: cannot list directory: {e.strerror}")
        return []


def is_ch_data_path(names: set[str]) -> bool:
    """A ClickHouse data path holds metadata/ beside store/ or data/."""
    return "metadata" in names and ("store" in names or "data" in names)


def _walk(absdir: str, reldir: str, out: Detected, ch_base: str | None, in_part: bool,
          visited: set, real_files: set, depth: int) -> None:
    """Walk one directory; ``ch_base`` is the rel path of the enclosing ClickHouse data path."""
    try:
        st = os.stat(absdir)
    except OSError as e:
        out.errors.append(f"{absdir}: {e.strerror}")
        return
    key = (st.st_dev, st.st_ino)
    if key in visited:
        return            # a loop, or a second link to a directory already walked
    visited.add(key)
    if depth > 64:
        out.errors.append(f"{absdir}: directory nesting deeper than 64 levels, not descended")
        return
    names = sorted(_listdir(absdir, out))
    nameset = set(names)
    if ch_base is None and is_ch_data_path(nameset):
        ch_base = reldir
    # a part folder that lost checksums.txt / columns.txt is still a part (named as one, inside a data path)
    here_part = in_part or is_ch_part_dir(nameset) or (
        ch_base is not None and bool(CH_PART_RE.match(os.path.basename(absdir)))
        and any(n.endswith((".bin",) + CH_MARK_EXT) or n in CH_PART_META for n in names))
    for name in names:
        abspath = os.path.join(absdir, name)
        rel = f"{reldir}/{name}" if reldir else name
        try:
            lst = os.lstat(abspath)
        except OSError as e:
            out.errors.append(f"{abspath}: {e.strerror}")
            continue
        is_link = stat.S_ISLNK(lst.st_mode)
        if is_link:
            try:
                tst = os.stat(abspath)
            except OSError as e:
                msg = "symlink loop" if e.errno == 40 else f"broken symlink ({e.strerror})"
                out.errors.append(f"{rel}: {msg}")
                continue
            if stat.S_ISDIR(tst.st_mode):
                # ClickHouse data/<db>/<table> -> store/...: walked once, through the real dir
                real = os.path.realpath(abspath)
                if real.startswith(out.root + os.sep):
                    continue
                _walk(abspath, rel, out, ch_base, here_part, visited, real_files, depth + 1)
                continue
            lst = tst
        if stat.S_ISDIR(lst.st_mode):
            _walk(abspath, rel, out, ch_base, here_part, visited, real_files, depth + 1)
            continue
        if not stat.S_ISREG(lst.st_mode):
            continue
        fkey = (lst.st_dev, lst.st_ino)
        if fkey in real_files:
            continue        # a hard link or symlink to a file already listed
        real_files.add(fkey)
        ch_rel = None
        if ch_base is not None:
            ch_rel = rel[len(ch_base) + 1:] if ch_base else rel
        engine, role = classify(rel, abspath, here_part, ch_base is not None, ch_rel)
        out.files.append(FileEntry(path=rel, abspath=abspath, engine=engine, role=role, is_symlink=is_link))

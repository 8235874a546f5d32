"""Find what is under a path: which engine each file belongs to and its role.

Detection is by name and place first (data directory layouts), then by a
magic sniff of the first and last bytes for lone files with unusual names;
both are the engines' own (``Engine.enter_dir`` / ``claim_name`` /
``claim_bytes``, parsers/engine.py), tried in the registry's claim order.  Unknown
files are listed with role ``other``: never an error.  Symlinked directories
are followed once (ClickHouse ``data/<db>/<table>`` links into ``store/``),
never into a loop and never twice into the same real directory.
"""
from __future__ import annotations

import gc
import os
import stat
from dataclasses import dataclass, field
from typing import Any

from . import engines
from .model import FileEntry

@dataclass
class Detected:
    """Files found under a root, with engine and role assigned."""

    root: str
    files: list[FileEntry] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _sniff(abspath: str) -> tuple[str | None, str]:
    """(engine, role) of a file no engine claimed by name, from its first and
    last bytes (each engine says how many it needs)."""
    found = engines.ENGINES
    need_head = max(e.head_bytes for e in found)
    need_tail = max(e.tail_bytes for e in found)
    try:
        fd = os.open(abspath, os.O_RDONLY)
    except OSError:
        return None, "other"
    try:
        head = os.pread(fd, need_head, 0) if need_head else b""
        tail = b""
        if need_tail:
            size = os.fstat(fd).st_size
            tail = os.pread(fd, min(need_tail, size), max(0, size - need_tail))
    except OSError:
        return None, "other"
    finally:
        os.close(fd)
    for engine in found:
        role = engine.claim_bytes(head, tail)
        if role is not None:
            return engine.name, role
    return None, "other"


def classify(relpath: str, abspath: str, states: dict[str, Any] | None = None,
             order: tuple | None = None) -> tuple[str | None, str]:
    """(engine, role) of one file: by name and place first (each engine in its
    claim order, ``states``: the engines' walk states of its directory), then
    by magic."""
    states = states or {}
    for engine in order or engines.claim_order():
        role = engine.claim_name(relpath, states.get(engine.name))
        if role is not None:
            return engine.name, role
    return _sniff(abspath)


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
        engine, role = classify(name, root)
        out.files.append(FileEntry(path=name, abspath=root, engine=engine, role=role))
        return out

    visited: set[tuple[int, int]] = set()
    # the walk makes an entry and a few lists a file and no cycle: the collector's passes
    # over the growing list are paused meanwhile (0.1-0.3 s of a 20,000-file walk), and
    # resumed only if they ran before (another thread may have paused them too)
    collecting = gc.isenabled()
    gc.disable()
    try:
        _walk(root, "", out, {}, visited, set(), depth=0, order=engines.claim_order())
    finally:
        if collecting:
            gc.enable()
    out.files.sort(key=lambda f: f.path)
    return out


def _listdir(path: str, out: Detected) -> list[str]:
    try:
        return os.listdir(path)
    except OSError as e:
        out.errors.append(f"{path}: cannot list directory: {e.strerror}")
        return []


def _walk(absdir: str, reldir: str, out: Detected, states: dict[str, Any],
          visited: set, real_files: set, depth: int, order: tuple) -> None:
    """Walk one directory; ``states``: each engine's walk state of the parent directory."""
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
    dirname = os.path.basename(absdir)
    states = {e.name: e.enter_dir(reldir, dirname, nameset, states.get(e.name)) for e in engines.ENGINES}
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
                _walk(abspath, rel, out, states, visited, real_files, depth + 1, order)
                continue
            lst = tst
        if stat.S_ISDIR(lst.st_mode):
            _walk(abspath, rel, out, states, visited, real_files, depth + 1, order)
            continue
        if not stat.S_ISREG(lst.st_mode):
            continue
        fkey = (lst.st_dev, lst.st_ino)
        if fkey in real_files:
            continue        # a hard link or symlink to a file already listed
        real_files.add(fkey)
        engine, role = classify(rel, abspath, states, order)
        out.files.append(FileEntry(path=rel, abspath=abspath, engine=engine, role=role, is_symlink=is_link))

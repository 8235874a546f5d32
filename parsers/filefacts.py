"""A file's sizes, allocation and holes as the scan reads them before any engine does
(stat, FIEMAP or SEEK_HOLE: never a byte of data), and the same for a file whose engine
reads them in its own workers (``Engine.reads_facts``, ``FileEntry.facts_pending``)."""
from __future__ import annotations

import os

from .fileio import FileReadError, ReadOnlyFile, fs_block_size
from .model import FileEntry


def read_facts(entry: FileEntry, fs_block: int | None = None) -> None:
    """Fill apparent / allocated bytes and holes of one file (never reads data)."""
    try:
        with ReadOnlyFile(entry.abspath) as f:
            entry.apparent_bytes = f.size
            entry.allocated_bytes = f.allocated_bytes
            entry.holes = f.holes()
            entry.unwritten = f.unwritten()
            entry.fs = f.fs_facts()
            entry.seen = (f.size, f.stat.st_mtime_ns, f.stat.st_dev, f.stat.st_ino)
            msg = f.changed()
            if msg:
                entry.warnings.append(msg)
            if f.size == 0 and entry.role not in ("engine_environment", "other"):
                entry.warnings.append(f"{entry.path}: empty file (0 bytes)")
    except FileReadError as e:
        entry.errors.append(f"{entry.path}: {str(e).split(': ', 1)[-1]}")
        stat_facts(entry)
    except OSError as e:
        entry.errors.append(f"{entry.path}: {e.strerror or e}")
        stat_facts(entry)
    entry.fs_block = fs_block or (entry.fs.block_size if entry.fs is not None else fs_block_size(entry.abspath))


def read_pending_facts(entry: FileEntry, fs_block: int | None = None) -> None:
    """:func:`read_facts` of a file whose engine took them on (``FileEntry.facts_pending``),
    as the scan's first pass would have: the first thing its engine does with the file."""
    if entry.facts_pending:
        entry.facts_pending = False
        entry.apparent_bytes = entry.allocated_bytes = 0
        read_facts(entry, fs_block)


def stat_facts(entry: FileEntry) -> bool:
    """Sizes of a file that cannot be opened (no read permission): ``stat`` needs none,
    so its apparent size (st_size) and allocated bytes (st_blocks x 512) are still known;
    its holes are not (FIEMAP/SEEK_HOLE need an open file)."""
    try:
        st = os.stat(entry.abspath)
    except OSError:
        return False
    entry.apparent_bytes = st.st_size
    entry.allocated_bytes = st.st_blocks * 512
    return True


def openable(abspath: str) -> bool:
    """Whether this process may open ``abspath`` for reading (an open and a close: what
    ``ReadOnlyFile`` will do, so root, ACLs and the rest decide as they will then)."""
    try:
        fd = os.open(abspath, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    os.close(fd)
    return True

"""Corrupt-input targets: every engine file of a fixture folder, the CI subset, and copies that keep holes."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .common import FIXTURE_FOLDERS, SKIP_ROLES


@dataclass
class Target:
    engine: str
    role: str
    abspath: str          # the (sparse copy of the) fixture file
    rel: str              # path relative to the fixtures root, for reports
    context: str | None   # ClickHouse part directory scanned around it, else None

    def to_json(self) -> dict:
        return self.__dict__.copy()


def _is_part_dir(d: str) -> bool:
    return os.path.isfile(os.path.join(d, "checksums.txt")) and os.path.isfile(os.path.join(d, "columns.txt"))


def find_targets(root: str | Path) -> list[Target]:
    """Every non-empty engine file under the fixture folders of ``root``."""
    from dbxray.parsers.detect import detect
    root = str(root)
    out: list[Target] = []
    for folder in FIXTURE_FOLDERS:
        top = os.path.join(root, folder)
        if not os.path.isdir(top):
            continue
        found = detect(top)
        for f in found.files:
            if not f.engine or f.role in SKIP_ROLES or f.is_symlink:
                continue
            try:
                if os.path.getsize(f.abspath) == 0:
                    continue
            except OSError:
                continue
            ctx = None
            if f.engine == "clickhouse":
                d = os.path.dirname(f.abspath)
                if not _is_part_dir(d):
                    continue          # format_version.txt and the like: not part files
                ctx = d
            out.append(Target(f.engine, f.role, f.abspath, f"{folder}/{f.path}", ctx))
    out.sort(key=lambda t: t.rel)
    return out


def _kind(t: Target) -> str:
    """A category for picking the CI subset: engine, role, file-name suffix."""
    name = os.path.basename(t.abspath)
    suffix = name.rsplit(".", 1)[-1] if "." in name else name
    if t.engine == "tokudb" and t.role == "redo_log":
        suffix = "tokulog"
    if t.engine == "innodb" and t.role == "redo_log":
        suffix = "redo"
    return f"{t.engine}/{t.role}/{suffix}"


def ci_subset(targets: list[Target], per_kind: int = 2) -> list[Target]:
    """A deterministic subset: the first, and a spread of the others, of each kind."""
    by: dict[str, list[Target]] = {}
    for t in targets:
        by.setdefault(_kind(t), []).append(t)
    out = []
    for kind in sorted(by):
        ts = by[kind]
        picks = {0}
        if len(ts) > 1 and per_kind > 1:
            step = max(1, len(ts) // per_kind)
            picks.update(range(step, len(ts), step))
        out.extend(ts[i] for i in sorted(picks)[:per_kind])
    return out


def sparse_copyfile(src: str, dst: str) -> None:
    """Copy data ranges only (holes stay holes), then set the size."""
    sfd = os.open(src, os.O_RDONLY)
    try:
        size = os.fstat(sfd).st_size
        dfd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            pos = 0
            while pos < size:
                try:
                    data = os.lseek(sfd, pos, os.SEEK_DATA)
                except OSError:
                    break
                hole = os.lseek(sfd, data, os.SEEK_HOLE)
                off = data
                while off < hole:
                    chunk = os.pread(sfd, min(1 << 20, hole - off), off)
                    if not chunk:
                        break
                    os.pwrite(dfd, chunk, off)
                    off += len(chunk)
                pos = hole
            os.ftruncate(dfd, size)
        finally:
            os.close(dfd)
    finally:
        os.close(sfd)


def sparse_copytree(src: str, dst: str) -> None:
    os.makedirs(dst, exist_ok=True)
    for name in os.listdir(src):
        s, d = os.path.join(src, name), os.path.join(dst, name)
        if os.path.islink(s):
            os.symlink(os.readlink(s), d)
        elif os.path.isdir(s):
            sparse_copytree(s, d)
        elif os.path.isfile(s):
            sparse_copyfile(s, d)

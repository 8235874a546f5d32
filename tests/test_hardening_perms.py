"""Permissions and links (issue 8, reliability): unreadable files and
directories, symlink loops and broken links are reported (naming the path)
and skipped; the rest of the scan goes on.

The tests run as root, which reads everything, so "unreadable" is simulated
by making ``os.open`` / ``open`` / ``os.listdir`` / ``os.scandir`` raise
PermissionError for the chosen paths.
"""
from __future__ import annotations

import builtins
import errno
import os

import pytest

import hardening_util as hu
from dbxray.parsers.scan import scan


def _deny(monkeypatch, denied: set[str], dirs: set[str] = frozenset()) -> None:
    denied = {os.path.abspath(p) for p in denied}
    dirs = {os.path.abspath(p) for p in dirs}

    def blocked(path) -> bool:
        try:
            p = os.path.abspath(os.fsdecode(path))
        except TypeError:
            return False
        return p in denied or os.path.realpath(p) in denied

    def err(path):
        return PermissionError(errno.EACCES, "Permission denied", os.fsdecode(path))

    real_open, real_bopen, real_listdir, real_scandir = os.open, builtins.open, os.listdir, os.scandir

    def os_open(path, flags, mode=0o777, *, dir_fd=None):
        if dir_fd is None and blocked(path):
            raise err(path)
        return real_open(path, flags, mode, dir_fd=dir_fd)

    def b_open(file, *a, **kw):
        if isinstance(file, (str, bytes, os.PathLike)) and blocked(file):
            raise err(file)
        return real_bopen(file, *a, **kw)

    def listdir(path="."):
        if os.path.abspath(os.fsdecode(path)) in dirs:
            raise err(path)
        return real_listdir(path)

    def scandir(path="."):
        if os.path.abspath(os.fsdecode(path)) in dirs:
            raise err(path)
        return real_scandir(path)
    monkeypatch.setattr(os, "open", os_open)
    monkeypatch.setattr(builtins, "open", b_open)
    monkeypatch.setattr(os, "listdir", listdir)
    monkeypatch.setattr(os, "scandir", scandir)


def _no_crash(ds) -> None:
    assert not [e for e in ds.errors if "parser failed" in e], ds.errors
    fails, _ = hu.check_dataset(ds, "")
    # skipped paths (loops, broken links) are not listed, so the checker cannot
    # match their names: a dataset error must still start with a path
    fails = [f for f in fails if not (f.startswith("dataset error names no file: ")
                                      and f.split(": ", 2)[1].strip())]
    assert not fails, fails


def _engine_dir(root, engine: str, tmp_path) -> tuple[str, list[str]]:
    """A copy of a small data dir of the engine, and its engine files."""
    if engine == "innodb":
        src = os.path.join(root, "innodb", "16k", "fx")
    elif engine == "tokudb":
        src = os.path.join(root, "tokudb", "datadir")
    else:
        t = max((t for t in hu.find_targets(root) if t.engine == "clickhouse" and t.context),
                key=lambda t: len(os.listdir(t.context)))
        src = t.context
    dst = str(tmp_path / os.path.basename(src))
    hu.sparse_copytree(src, dst)
    ds = scan(dst)
    files = [f.abspath for f in ds.files if f.engine == engine and f.apparent_bytes > 0
             and f.role not in ("other", "engine_environment")]
    return dst, files


@pytest.mark.parametrize("engine", ["innodb", "tokudb", "clickhouse"])
def test_unreadable_file_is_reported_and_skipped(engine, sparse_fixtures, tmp_path, monkeypatch):
    root, files = _engine_dir(sparse_fixtures, engine, tmp_path)
    before = {f.path: f for f in scan(root).files}
    denied = files[len(files) // 2]
    _deny(monkeypatch, {denied})
    ds = scan(root)
    _no_crash(ds)
    name = os.path.relpath(denied, root)
    entry = ds.file(name)
    assert entry is not None, "an unreadable file is still listed"
    assert any(name in e and ("ermission" in e or "cannot open" in e) for e in entry.errors), entry.errors
    # the rest of the scan went on: the other files kept their units
    for f in ds.files:
        if f.path != name and before[f.path].units is not None and len(before[f.path].units):
            assert f.units is not None and len(f.units), f"{f.path} lost its units"


def test_every_file_unreadable(sparse_fixtures, tmp_path, monkeypatch):
    root, files = _engine_dir(sparse_fixtures, "tokudb", tmp_path)
    _deny(monkeypatch, set(files))
    ds = scan(root)
    _no_crash(ds)
    for p in files:
        e = ds.file(os.path.relpath(p, root))
        assert e is not None and e.errors


def test_unreadable_directory_is_reported_and_skipped(sparse_fixtures, tmp_path, monkeypatch):
    src = os.path.join(sparse_fixtures, "innodb", "datadir16k")
    dst = tmp_path / "dd"
    hu.sparse_copytree(src, str(dst))
    sub = next(p for p in dst.iterdir() if p.is_dir())
    _deny(monkeypatch, set(), dirs={str(sub)})
    ds = scan(str(dst))
    _no_crash(ds)
    assert any(sub.name in e and "ermission" in e for e in ds.errors), ds.errors
    assert any(f.path == "ibdata1" and f.units is not None for f in ds.files)


def test_unreadable_single_file_argument(sparse_fixtures, tmp_path, monkeypatch):
    t = next(t for t in hu.find_targets(sparse_fixtures) if t.abspath.endswith(".tokudb"))
    p = tmp_path / "x.tokudb"
    hu.sparse_copyfile(t.abspath, str(p))
    _deny(monkeypatch, {str(p)})
    ds = scan(str(p))
    _no_crash(ds)
    assert ds.files[0].errors and "x.tokudb" in ds.files[0].errors[0]


def test_symlink_loops_are_reported_and_skipped(sparse_fixtures, tmp_path):
    d = tmp_path / "loops"
    hu.sparse_copytree(os.path.join(sparse_fixtures, "tokudb", "datadir"), str(d / "toku"))
    (d / "toku" / "self").symlink_to(".")                      # directory loop
    (d / "up").mkdir()
    (d / "up" / "root").symlink_to("../..")                    # back to an ancestor
    (d / "a.ibd").symlink_to("b.ibd")                          # a <-> b: ELOOP
    (d / "b.ibd").symlink_to("a.ibd")
    (d / "me.tokudb").symlink_to("me.tokudb")                  # itself
    (d / "gone.ibd").symlink_to("nowhere.ibd")                 # broken
    ds = scan(str(d))
    _no_crash(ds)
    errs = "\n".join(ds.errors + [e for f in ds.files for e in f.errors])
    for name in ("a.ibd", "b.ibd", "me.tokudb"):
        assert any(name in e and "loop" in e for e in ds.errors), (name, ds.errors)
    assert "gone.ibd" in errs
    paths = [f.path for f in ds.files]
    assert len(paths) == len(set(paths))
    assert sum(p.endswith("tokudb.directory") for p in paths) == 1   # walked once, not via the loops
    assert all(f.units is not None for f in ds.files if f.path.endswith(".tokudb"))


def test_symlinked_file_into_a_loop_and_a_fifo(tmp_path):
    """Special files are skipped (a FIFO would block a reader forever)."""
    d = tmp_path / "special"
    d.mkdir()
    os.mkfifo(d / "t.ibd")
    os.mkfifo(d / "log000000000001.tokulog29")
    (d / "ok.tokudb").write_bytes(b"tokudata" + bytes(8184))
    ds = scan(str(d))
    _no_crash(ds)
    assert [f.path for f in ds.files] == ["ok.tokudb"]

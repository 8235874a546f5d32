"""Read-only, proved: a full scan, what-if and report over every fixture
folder leave every file's bytes, size, mtime and allocation unchanged, and no
file under the data dir is ever opened for writing."""
import builtins
import hashlib
import io
import os

import pytest

FOLDERS = ["innodb", "innodb-public", "innodb-mysql", "clickhouse/datadir", "tokudb"]


def _state(root):
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames:
            p = os.path.join(dirpath, name)
            if os.path.islink(p):
                continue
            st = os.stat(p)
            h = hashlib.sha256()
            with io.open(p, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
            out[p] = (h.hexdigest(), st.st_size, st.st_mtime_ns, st.st_blocks)
    return out


WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def spy_writes(monkeypatch, root: str) -> list:
    """Every open of a file under ``root`` for writing (os.open flags, open() modes), listed
    until ``monkeypatch.undo()``."""
    writes = []
    real_os_open, real_open = os.open, builtins.open

    def spy_os_open(path, flags, *a, **k):
        if str(os.fspath(path)).startswith(root) and flags & WRITE_FLAGS:
            writes.append((path, flags))
        return real_os_open(path, flags, *a, **k)

    def spy_open(file, mode="r", *a, **k):
        if isinstance(file, (str, bytes, os.PathLike)) and str(os.fspath(file)).startswith(root) \
                and any(c in mode for c in "wax+"):
            writes.append((file, mode))
        return real_open(file, mode, *a, **k)

    monkeypatch.setattr(os, "open", spy_os_open)
    monkeypatch.setattr(builtins, "open", spy_open)
    return writes


@pytest.mark.parametrize("folder", FOLDERS)
def test_scan_whatif_report_never_write(folder, sparse_fixtures, tmp_path, monkeypatch, qapp):
    from dbxray.app.report import write_report
    from dbxray.compress.whatif import run_whatif
    from dbxray.parsers.scan import scan

    root = str(sparse_fixtures / folder)
    before = _state(root)
    writes = spy_writes(monkeypatch, root)
    ds = scan(root)
    run_whatif(ds, ["zlib:6", "lz4"], sample="0.02", seed=1)
    write_report(ds, str(tmp_path / "r.html"), whatif_sample=None)
    monkeypatch.undo()
    assert writes == []
    assert _state(root) == before

"""parsers.innodb.payloads.page_bytes: one cached read-only handle per file (bounded LRU).

Checked on the MariaDB 16k fixtures (temp sparse copies): every page's bytes equal the file's
bytes at page_no * physical; one open per file however many pages are read; never more than
MAX_OPEN_FILES handles, evicted ones closed; handles are O_RDONLY; a replaced or truncated
file is reopened / reported, not read stale."""
from __future__ import annotations

import fcntl
import os
import shutil

import pytest

from dbxray.parsers.innodb import payloads
from dbxray.parsers.innodb.scan import analyze_file
from dbxray.parsers.detect import detect
from dbxray.parsers.model import ScanContext


@pytest.fixture()
def entries(sparse_fixtures, tmp_path):
    src = sparse_fixtures / "innodb" / "16k" / "fx"
    files = sorted(p for p in src.iterdir() if p.suffix == ".ibd")[:payloads.MAX_OPEN_FILES + 3]
    for p in files:
        shutil.copyfile(p, tmp_path / p.name)
    out = []
    for e in detect(str(tmp_path)).files:
        if e.path.endswith(".ibd"):
            analyze_file(e, ScanContext())
            out.append(e)
    payloads.close_handles()
    yield out
    payloads.close_handles()


class _Counting(payloads.ReadOnlyFile):
    opened: list = []

    def __init__(self, path):
        super().__init__(path)
        _Counting.opened.append(self)


def test_pages_equal_file_bytes_and_one_open_per_file(entries, monkeypatch):
    monkeypatch.setattr(payloads, "ReadOnlyFile", _Counting)
    _Counting.opened = []
    e = entries[0]
    pm = e.detail["innodb"]["page_map"]
    raw = open(e.abspath, "rb").read()
    for i in range(pm.n_pages):
        assert payloads.page_bytes(e, i) == raw[i * pm.physical:(i + 1) * pm.physical]
    assert pm.n_pages > 5 and len(_Counting.opened) == 1
    fd = _Counting.opened[0].fd
    assert fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDONLY
    payloads.close_handles()
    assert _Counting.opened[0].fd == -1 and payloads._HANDLES.open_paths() == []


def test_bounded_and_evicted_handles_closed(entries, monkeypatch):
    monkeypatch.setattr(payloads, "ReadOnlyFile", _Counting)
    _Counting.opened = []
    assert len(entries) > payloads.MAX_OPEN_FILES
    for e in entries:
        payloads.page_bytes(e, 0)
        assert len(payloads._HANDLES.open_paths()) <= payloads.MAX_OPEN_FILES
    n_evicted = len(entries) - payloads.MAX_OPEN_FILES
    assert [h.fd for h in _Counting.opened[:n_evicted]] == [-1] * n_evicted
    assert all(h.fd >= 0 for h in _Counting.opened[n_evicted:])
    # the most recently used stay; reading one of them again opens nothing
    payloads.page_bytes(entries[-1], 1)
    assert len(_Counting.opened) == len(entries)
    # the least recently used was evicted: reading it again reopens it
    payloads.page_bytes(entries[0], 1)
    assert len(_Counting.opened) == len(entries) + 1


def test_replaced_and_truncated_files(entries, tmp_path):
    e = entries[0]
    pm = e.detail["innodb"]["page_map"]
    first = payloads.page_bytes(e, 1)
    other = open(entries[1].abspath, "rb").read()
    tmp = tmp_path / "replacement"
    tmp.write_bytes(other)
    os.replace(tmp, e.abspath)                      # another inode under the same path
    assert payloads.page_bytes(e, 1) == other[pm.physical:2 * pm.physical] != first
    os.truncate(e.abspath, pm.physical + 100)       # page 1 cut short
    with pytest.raises(payloads.PayloadError, match=rf"{e.path}: page 1 truncated \(100 of {pm.physical} bytes\)"):
        payloads.page_bytes(e, 1)
    os.unlink(e.abspath)
    with pytest.raises(payloads.PayloadError, match=rf"{e.path}: page 0: cannot read"):
        payloads.page_bytes(e, 0)

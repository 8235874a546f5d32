"""Sections packed while a big scan runs (parsers/packing.py, FileEntry.pack_sections):
the command line's scan of more than ``PACK_SECTIONS_OVER`` files keeps each file's
sections as a few bytes; the JSON, the summary and every reader see the same sections
as a scan that kept them as objects.  And the end-of-scan recheck sees InnoDB files
changed during a command-line scan (their read time was dropped with the parser's
objects before)."""
from __future__ import annotations

import io
import os
import shutil

import pytest

import pickle

from dbxray.parsers import jsonout
from dbxray.parsers import model as model_mod
from dbxray.parsers.model import FileEntry, ScanContext
from dbxray.parsers.packing import PackedSections, SectionPacker
from dbxray.parsers.scan import scan


def _raw(entry: FileEntry):
    """What the entry holds (the ``sections`` property would open it)."""
    return model_mod._SECTIONS_SLOT.__get__(entry, FileEntry)


@pytest.fixture(scope="module")
def scans(sparse_fixtures):
    root = sparse_fixtures / "innodb" / "16k"
    kw = dict(workers=1, keep_units=False)
    plain = scan(str(root), ScanContext(**kw))
    packed = scan(str(root), ScanContext(pack_sections_over=0, **kw))
    return plain, packed


def test_every_read_file_is_packed_and_small(scans):
    plain, packed = scans
    innodb = [e for e in packed.files if e.engine == "innodb" and e.role in ("tablespace", "system_tablespace")]
    assert len(innodb) >= 20
    raw = [_raw(e) for e in innodb]
    assert all(type(r) is PackedSections for r in raw), [type(r).__name__ for r in raw]
    # past the first files (the dictionary's samples, kept LZ4 alone) the blobs use the dictionary
    with_dict = [r for r in raw if r.dictionary]
    assert with_dict, "no file packed against the dictionary"
    for r, e in zip(raw, innodb):
        if r.dictionary:
            assert len(r.blob) < len(pickle.dumps(e.sections_view(), 5)) / 2


def test_json_and_summary_are_the_same_as_unpacked(scans):
    plain, packed = scans
    a, b = io.StringIO(), io.StringIO()
    jsonout.write_dataset(plain, a)
    jsonout.write_dataset(packed, b)
    assert a.getvalue() == b.getvalue()
    a, b = io.StringIO(), io.StringIO()
    jsonout.write_summary(plain, a, reads="x")
    jsonout.write_summary(packed, b, reads="x")
    assert a.getvalue() == b.getvalue()
    # writing opened nothing for good: the files are still packed
    assert all(type(_raw(e)) is PackedSections for e in packed.files if e.engine == "innodb" and e.role == "tablespace")


def test_reading_sections_opens_them_and_changes_stay(scans):
    plain, packed = scans
    e = next(e for e in packed.files if e.engine == "innodb" and e.role == "tablespace")
    p = next(f for f in plain.files if f.path == e.path)
    assert type(_raw(e)) is PackedSections
    sec = e.sections["innodb"]
    assert type(sec) is type(p.sections["innodb"]) and sec == p.sections["innodb"]
    assert type(_raw(e)) is dict                       # opened once, kept open
    sec.pages = sec.pages + 1                          # a later step's change is not lost
    assert e.sections["innodb"]["pages"] == p.sections["innodb"]["pages"] + 1
    sec.pages -= 1


def test_packer_round_trip_of_different_sections():
    packer = SectionPacker()
    data = [{"x": {"i": i, "name": f"t{i}", "list": list(range(i % 7))}} for i in range(40)]
    blobs = [packer.pack(d) for d in data]
    assert [b.open() for b in blobs] == data
    assert not blobs[0].dictionary and blobs[-1].dictionary and blobs[-1].packer is packer
    assert packer.pack({"other": "shape entirely", "n": [1.5, None, True]}).open() == \
        {"other": "shape entirely", "n": [1.5, None, True]}


def test_command_line_recheck_sees_an_innodb_file_modified_during_the_scan(sparse_fixtures, tmp_path):
    src = sparse_fixtures / "innodb" / "16k" / "fx"
    root = tmp_path / "fx"
    shutil.copytree(src, root)
    victim = sorted(root.glob("*.ibd"))[0]
    touched = []

    def progress(done, total, msg):
        if not touched and msg.startswith("innodb pages"):
            st = victim.stat()
            os.utime(victim, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
            touched.append(msg)

    ds = scan(str(root), ScanContext(workers=1, keep_units=False, progress=progress))
    assert touched
    e = next(e for e in ds.files if e.abspath == str(victim))
    assert any("modified during the scan" in w for w in e.warnings), e.warnings


def test_sections_that_do_not_pickle_stay_as_they_are():
    e = FileEntry(path="x", abspath="/nonexistent/x")
    e.sections["engine"] = {"hook": lambda: 1}
    e.pack_sections(SectionPacker())
    assert type(_raw(e)) is dict and callable(e.sections["engine"]["hook"])

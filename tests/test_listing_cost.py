"""What a big data dir's listing costs (issue 22: the window's tree at 20,000 tables): the
walk pauses the garbage collector and leaves it as it found it, a new FileEntry raises no
exception inside its own __init__, InnoDB's names are claimed as before, and the window's
scan reads the files its listing found instead of walking the directory again."""
from __future__ import annotations

import gc
import os
import pickle
import sys

import pytest

from dbxray.parsers import detect as detect_mod
from dbxray.parsers.detect import detect
from dbxray.parsers.innodb.engine import ENGINE as INNODB
from dbxray.parsers.model import PACKED, FileEntry
from dbxray.parsers.scan import scan


def _tree(root, n=30):
    for k in range(n):
        d = root / f"db{k % 3}"
        d.mkdir(exist_ok=True)
        (d / f"t{k}.ibd").write_bytes(b"\0" * 100)
    (root / "ibdata1").write_bytes(b"\0" * 100)


def test_the_walk_pauses_the_collector_and_restores_it(tmp_path, monkeypatch):
    _tree(tmp_path)
    seen = []
    real_walk = detect_mod._walk

    def walk(*args, **kwargs):
        seen.append(gc.isenabled())
        return real_walk(*args, **kwargs)

    monkeypatch.setattr(detect_mod, "_walk", walk)
    assert gc.isenabled()
    found = detect(str(tmp_path))
    assert len(found.files) == 31 and seen[0] is False and gc.isenabled()
    gc.disable()                     # paused by someone else: left paused
    try:
        detect(str(tmp_path))
        assert not gc.isenabled()
    finally:
        gc.enable()

    def broken(*args, **kwargs):
        raise OSError("gone")

    monkeypatch.setattr(detect_mod, "_walk", broken)
    with pytest.raises(OSError):
        detect(str(tmp_path))
    assert gc.isenabled()            # resumed on the way out of an error too


def test_a_new_entry_raises_nothing_in_its_init_and_packs_as_before():
    raised = []

    def trace(frame, event, arg):
        if event == "exception" and frame.f_code.co_filename.endswith("model.py"):
            raised.append((frame.f_code.co_name, arg[0].__name__))
        return trace

    sys.settrace(trace)
    try:
        e = FileEntry(path="db/t.ibd", abspath="/x/db/t.ibd", sections={"innodb": {"pages": 3}})
    finally:
        sys.settrace(None)
    assert raised == []
    assert e.sections == {"innodb": {"pages": 3}} and e.units is None and e.packed is None
    back = pickle.loads(pickle.dumps(e))        # the slots come back one by one: still equal
    assert back == e and back.sections == {"innodb": {"pages": 3}}
    from dbxray.parsers.packing import SectionPacker
    e.pack_sections(SectionPacker())
    assert e.packed is not None
    from dbxray.parsers.model import _SECTIONS_SLOT
    assert _SECTIONS_SLOT.__get__(e, FileEntry) is PACKED          # the slot holds the marker
    assert e.sections == {"innodb": {"pages": 3}}             # opened when read
    e.sections = {"innodb": {"pages": 4}}                     # set while packed: the rest opened first
    assert e.sections == {"innodb": {"pages": 4}} and e.owner_names is not PACKED


@pytest.mark.parametrize("rel, role", [
    ("ibdata1", "system_tablespace"), ("ibdata12", "system_tablespace"), ("mysql.ibd", "system_tablespace"),
    ("ibtmp1", "tablespace"), ("ib_logfile0", "redo_log"), ("#innodb_redo/#ib_redo7", "redo_log"),
    ("#innodb_redo/x.ibd", "redo_log"), ("undo_001", "undo"), ("undo001", "undo"), ("undo_1", "undo"),
    ("x.ibu", "undo"), ("#ib_16384_0.dblwr", "doublewrite"), ("ib_doublewrite", "doublewrite"),
    ("db/t.ibd", "tablespace"), ("db/T.IBD", "tablespace"), ("db/t.ibt", "tablespace"),
    ("undo01", None), ("ibdata", None), ("db/t.frm", None), ("#ib_1_x.dblwr", None), ("undo_1x", None),
])
def test_innodb_names_are_claimed_as_before(rel, role):
    assert INNODB.claim_name(rel, None) == role


def test_the_window_scan_reads_the_files_its_listing_found(tmp_path, monkeypatch):
    from dbxray.app import workers
    _tree(tmp_path, 6)
    emitted = []
    found = workers.list_files(str(tmp_path), emitted.append, lambda: False)
    assert len(found.files) == 7 and emitted[-1]["kind"] == "files_end" and emitted[-1]["total"] == 7
    walks = []
    monkeypatch.setattr("dbxray.parsers.scan.detect", lambda p: walks.append(p) or detect(p))
    ds = scan(str(tmp_path), detected=found)
    assert walks == [] and ds.files == found.files and ds.files[0] is found.files[0]
    alone = scan(str(tmp_path))
    assert walks == [str(tmp_path)]
    assert [(f.path, f.engine, f.role, f.apparent_bytes, f.errors) for f in ds.files] == \
        [(f.path, f.engine, f.role, f.apparent_bytes, f.errors) for f in alone.files]
    assert ds.errors == alone.errors

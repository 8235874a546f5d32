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
    """What the entry holds for its sections (the ``sections`` property would open it):
    the file's packed blob when they are in it."""
    s = model_mod._SECTIONS_SLOT.__get__(entry, FileEntry)
    return model_mod._PACKED_SLOT.__get__(entry, FileEntry) if s is model_mod.PACKED else s


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


# --- the window's scan: units, unit facts and owner names packed too, settled at the end ---

def _slots(entry: FileEntry):
    """What the entry holds for its sections, units, unit facts and owner names (the
    file's packed blob for those in it)."""
    return [model_mod._PACKED_SLOT.__get__(entry, FileEntry) if v is model_mod.PACKED else v
            for v in (slot.__get__(entry, FileEntry) for slot in model_mod._PACKED_SLOTS)]


def _same_array(a, b) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and a.dtype == b.dtype
                                         and a.tobytes() == b.tobytes())


@pytest.fixture(scope="module")
def window_scans(sparse_fixtures):
    root = sparse_fixtures / "innodb" / "16k"
    plain = scan(str(root), ScanContext(workers=1, detail_budget=0))
    packed = scan(str(root), ScanContext(workers=1, detail_budget=0, pack_sections_over=0))
    return plain, packed


def test_window_scan_packs_and_settles_every_read_file(window_scans):
    plain, packed = window_scans
    paged = [e for e in packed.files if e.engine == "innodb" and e.role == "tablespace"]
    assert len(paged) >= 20
    for e in paged:
        sec, units, facts, owners = _slots(e)
        assert type(sec) is PackedSections and sec.packer.settled and e.settled()
        assert type(units) is PackedSections and type(facts) is PackedSections, e.path
        assert type(owners) is PackedSections or not e.owner_names


def test_window_scan_reads_the_same_values_and_leaves_them_packed(window_scans):
    plain, packed = window_scans
    by_path = {e.path: e for e in plain.files}
    n = 0
    for e in packed.files:
        p = by_path[e.path]
        assert e.sections == p.sections, e.path
        assert _same_array(e.units, p.units), e.path
        assert (e.unit_facts is None) == (p.unit_facts is None), e.path
        if p.unit_facts is not None:
            for name in model_mod._FACT_NAMES:
                assert _same_array(getattr(e.unit_facts, name), getattr(p.unit_facts, name)), (e.path, name)
        assert dict(e.owner_names) == dict(p.owner_names), e.path
        assert e.fs == p.fs and e.database == p.database and e.table == p.table
        n += e.engine == "innodb" and e.role == "tablespace"
        # settled: reading opened a copy, the file still holds its packed bytes
        if e.engine == "innodb" and e.role == "tablespace":
            assert [type(v) for v in _slots(e)[:3]] == [PackedSections] * 3, e.path
    assert n >= 20
    # an opened array is a writable copy of its own: changing it changes nothing kept
    e = next(e for e in packed.files if e.engine == "innodb" and e.role == "tablespace")
    u = e.units
    assert u.flags.writeable
    u["kind"][:] = 0xFFFF
    from dbxray.parsers.packing import clear_cache
    clear_cache()
    assert not (e.units["kind"] == 0xFFFF).all()


def test_window_tree_of_a_packed_scan_is_the_same(window_scans):
    from dbxray.parsers.tree import LAZY_INDEXES, build_tree, expand
    plain, packed = window_scans
    a, b = build_tree(plain), build_tree(packed)
    # a packed file's index rows are made when a view asks for them
    lazy = [n for n in b.walk() if n.kind == "file" and n.children is LAZY_INDEXES]
    assert len(lazy) >= 20 and not [n for n in b.walk() if n.kind == "index"]
    assert all(type(_slots(e)[0]) is PackedSections for e in packed.files
               if e.engine == "innodb" and e.role == "tablespace")
    row = lazy[0]
    name, kind = next((c.name, c.kind) for c in next(n for n in a.walk() if n.path == row.path).children)
    assert row.find(name, kind) is not None and row.children is not LAZY_INDEXES      # find makes them
    for n in lazy:
        expand(n)
    rows_a = [(n.kind, n.name, n.apparent, n.allocated, n.holes, n.logical, n.errors) for n in a.walk()]
    rows_b = [(n.kind, n.name, n.apparent, n.allocated, n.holes, n.logical, n.errors) for n in b.walk()]
    assert rows_a == rows_b
    refs = [(x.ref, y.ref) for x, y in zip(a.walk(), b.walk()) if x.kind == "index"]
    assert refs and all(x == y for x, y in refs)


def test_big_scans_share_equal_filesystem_facts(window_scans):
    plain, packed = window_scans
    fs = [e.fs for e in packed.files if e.fs is not None]
    distinct = {id(f) for f in fs}
    assert len(distinct) < len(fs)
    groups: dict = {}
    for f in fs:
        groups.setdefault(tuple(getattr(f, k) for k in f.__slots__), set()).add(id(f))
    assert all(len(ids) == 1 for ids in groups.values())
    # an unpacked scan keeps one object per file
    assert len({id(e.fs) for e in plain.files if e.fs is not None}) == len([e for e in plain.files if e.fs])


def test_big_scans_share_one_empty_hole_list(window_scans):
    from dbxray.parsers.scan import NO_RANGES
    plain, packed = window_scans
    assert all(e.holes is NO_RANGES for e in packed.files if not e.holes)
    assert NO_RANGES == [] and not NO_RANGES
    from dbxray.parsers.scan import NO_MESSAGES
    assert all(e.errors is NO_MESSAGES for e in packed.files if not e.errors)
    assert [e.errors for e in plain.files] == [e.errors for e in packed.files]
    assert all(type(e.fs_block) is int and e.fs_block == p.fs_block for e, p in zip(packed.files, plain.files))
    with pytest.raises(TypeError):
        NO_RANGES.append((0, 1))
    # an unpacked scan's files keep lists of their own (the file layer's read-only Ranges)
    assert all(isinstance(e.holes, list) and e.holes is not NO_RANGES for e in plain.files)
    assert [e.holes for e in plain.files] == [list(e.holes) for e in packed.files]


def test_tree_model_makes_lazy_index_rows_when_shown(qtbot, window_scans):
    from dbxray.app.treemodel import DatasetTreeModel
    from dbxray.parsers.tree import LAZY_INDEXES, build_tree
    plain, packed = window_scans
    root = build_tree(packed)
    model = DatasetTreeModel(root)
    row = next(n for n in root.walk() if n.kind == "file" and n.children is LAZY_INDEXES
               and n.ref.path == "fx/t_dynamic.ibd")
    index = model.index_of(row)
    assert index.isValid() and model.hasChildren(index)            # the expander before the rows exist
    model.fetchMore(index)
    names = [model.data(model.index(i, 0, index)) for i in range(model.rowCount(index))]
    want = [c.name for c in next(n for n in build_tree(plain).walk() if n.path == row.path).children]
    assert names == want and len(names) >= 1


def test_listing_lets_its_row_indexes_go_when_done(qtbot):
    from dbxray.app.treemodel import ListingTree
    lt = ListingTree("/x")
    lt.add([("InnoDB", f"db{i % 3}", f"t{i}", None, f"t{i}.ibd", f"db{i % 3}/t{i}.ibd", 98304, 98304)
            for i in range(30)])
    lt.done()
    assert all(n._index is None for n in lt.root.walk())
    db = lt.root.find("InnoDB", "engine").find("db1", "database")
    assert db is not None and db.find("t4", "table").find("t4.ibd", "file").allocated == 98304
    lt.add([("InnoDB", "db1", "t99", None, "t99.ibd", "db1/t99.ibd", 1, 1)])   # rows still add
    assert db.find("t99", "table") is not None and db.allocated == 10 * 98304 + 1


def test_two_copies_of_a_table_are_two_tree_rows(tmp_path, sparse_fixtures):
    from dbxray.parsers.tree import build_tree
    src = sparse_fixtures / "innodb" / "16k" / "fx" / "t_blob.ibd"
    for copy in ("a", "b"):
        (tmp_path / copy / "fx").mkdir(parents=True)
        shutil.copy(src, tmp_path / copy / "fx" / "t_blob.ibd")
    ds = scan(str(tmp_path), ScanContext(workers=1))
    root = build_tree(ds)
    files = [n for n in root.walk() if n.kind == "file"]
    assert sorted(n.path for n in files) == ["a/fx/t_blob.ibd", "b/fx/t_blob.ibd"]
    assert {id(n.ref) for n in files} == {id(e) for e in ds.files}
    assert root.apparent == sum(e.apparent_bytes for e in ds.files) == 2 * src.stat().st_size


def test_what_every_file_is_asked_does_not_open_a_packed_file(window_scans, monkeypatch):
    """The tree and the views ask every file of a dataset its unit count, logical bytes,
    missing-hole units, expected hole bytes and whether the unit map shows it: a packed
    file answers from the summary kept beside its blob (a window over 20,000 tablespaces
    opened every blob two or three times on the GUI thread), the same as the open values."""
    plain, packed = window_scans
    by_path = {e.path: e for e in plain.files}
    readers = (model_mod.unit_count, model_mod.units_logical_bytes, model_mod.missing_hole_units,
               model_mod.expected_hole_bytes, model_mod.unit_map_shows)
    want = {e.path: [r(e) for r in readers] for e in plain.files}
    assert sum(w[0] for w in want.values()) > 0 and any(w[4] for w in want.values())
    assert any(w[3] for w in want.values())             # expected hole bytes stated somewhere
    from dbxray.parsers import packing
    opened = []
    monkeypatch.setattr(packing.PackedSections, "open", lambda self: opened.append(self) or None)
    got = {e.path: [r(e) for r in readers] for e in packed.files}
    assert got == want and not opened
    from dbxray.parsers.tree import logical_bytes
    assert [logical_bytes(e) for e in packed.files] == [logical_bytes(by_path[e.path]) for e in packed.files]
    assert not opened

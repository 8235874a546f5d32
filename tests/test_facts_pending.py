"""Files whose engine reads their allocation and holes in its own workers
(``Engine.reads_facts``: InnoDB's paged files on more than one core): the scan's serial
first pass only stats them, and what they end with is what the serial pass gave before
(parsers/scan.py ``read_pending_facts``, parsers/innodb/engine.py)."""
from __future__ import annotations

import subprocess

import pytest

from dbxray.parsers import engines
from dbxray.parsers import scan as scan_module
from dbxray.parsers.innodb import scan as innodb_scan
from dbxray.parsers.model import ScanContext
from dbxray.parsers.filefacts import read_facts
from dbxray.parsers.scan import scan


@pytest.fixture()
def many_page_compressed(sparse_fixtures, tmp_path):
    """Ten page-compressed tablespaces with their punched holes (a pool is used from 8 files)."""
    fx = sparse_fixtures / "innodb" / "16k" / "fx"
    names = sorted(p.name for p in fx.glob("t_pc_*.ibd"))
    assert len(names) >= 5
    out = tmp_path / "d"
    out.mkdir()
    for k in range(10):
        src = fx / names[k % len(names)]
        # cp --sparse=always: the copy's zero blocks (the punched page tails) are holes again
        subprocess.run(["cp", "--sparse=always", str(src), str(out / f"t{k}.ibd")], check=True)
    return out


@pytest.fixture()
def from_any_size(monkeypatch):
    """The fixtures' tablespaces are 20 pages: left to InnoDB's workers from any size."""
    monkeypatch.setattr(engines.get("innodb"), "facts_in_workers_from", 1)


def _facts(ds):
    return {f.path: (f.apparent_bytes, f.allocated_bytes, f.holes, f.unwritten, f.seen, f.fs_block,
                     f.errors, f.warnings) for f in ds.files}


def test_engine_reads_facts_in_its_workers_as_the_serial_pass_did(many_page_compressed, from_any_size):
    one = scan(str(many_page_compressed), ScanContext(workers=1))
    two = scan(str(many_page_compressed), ScanContext(workers=2))
    assert not any(f.facts_pending for f in one.files + two.files)
    assert _facts(one) == _facts(two)
    assert sum(1 for f in two.files if f.holes) >= 8          # the punched page tails are there
    assert [f.to_json() for f in one.files] == [f.to_json() for f in two.files]
    # and what read_facts alone says of each file
    for f in two.files:
        if f.engine == "innodb":
            fresh = type(f)(path=f.path, abspath=f.abspath, engine=f.engine, role=f.role)
            read_facts(fresh)
            assert (fresh.apparent_bytes, fresh.allocated_bytes, fresh.holes) == \
                (f.apparent_bytes, f.allocated_bytes, f.holes), f.path


def test_only_paged_innodb_files_on_more_than_one_core_are_left_to_the_engine():
    e = engines.get("innodb")
    from dbxray.parsers.model import FileEntry
    ts = FileEntry(path="t.ibd", abspath="/nonexistent/t.ibd", engine="innodb", role="tablespace")
    redo = FileEntry(path="ib_logfile0", abspath="/nonexistent/ib_logfile0", engine="innodb", role="redo_log")
    assert e.reads_facts(ts, ScanContext(workers=2)) and not e.reads_facts(ts, ScanContext(workers=1))
    assert not e.reads_facts(redo, ScanContext(workers=2))
    assert not any(x.reads_facts(ts, ScanContext(workers=2)) for x in engines.ENGINES if x.name != "innodb")


def _pending_read(monkeypatch) -> list:
    """Make InnoDB's analysis fail (a parser bug) and note the files whose facts the scan
    then reads at its end."""
    def broken(dataset, files, ctx):
        raise RuntimeError("boom")
    monkeypatch.setattr(innodb_scan, "analyze", broken)
    seen = []
    real = scan_module.read_pending_facts

    def noting(entry, fs_block=None):
        if entry.facts_pending:
            seen.append(entry.path)
        real(entry, fs_block)
    monkeypatch.setattr(scan_module, "read_pending_facts", noting)
    return seen


def test_small_files_are_not_left_to_the_engine(many_page_compressed, monkeypatch):
    seen = _pending_read(monkeypatch)
    ds = scan(str(many_page_compressed), ScanContext(workers=2))
    assert any("innodb parser failed" in e for e in ds.errors)
    assert seen == []                       # 320 KiB each: under facts_in_workers_from
    assert any(f.holes for f in ds.files)


def test_pending_facts_are_read_when_the_engine_fails(many_page_compressed, monkeypatch, from_any_size):
    seen = _pending_read(monkeypatch)
    ds = scan(str(many_page_compressed), ScanContext(workers=2))
    assert sorted(seen) == sorted(f.path for f in ds.files if f.engine == "innodb")
    assert any("innodb parser failed" in e for e in ds.errors)
    assert not any(f.facts_pending for f in ds.files)
    holes = {f.path: f.holes for f in ds.files}
    assert any(holes.values())
    for f in ds.files:
        fresh = type(f)(path=f.path, abspath=f.abspath, engine=f.engine, role=f.role)
        read_facts(fresh)
        assert (fresh.holes, fresh.allocated_bytes) == (f.holes, f.allocated_bytes), f.path

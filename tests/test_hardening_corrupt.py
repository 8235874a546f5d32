"""Corrupt-input matrix (issue 8, reliability): truncations and bit flips of
every engine's fixture files, each scanned in a time-boxed worker.

CI runs a deterministic subset (two files of each engine/role/suffix kind,
the quick mutation list); ``DBXRAY_HARDENING_FULL=1`` runs every engine file
of every fixture folder with the full mutation list (about 20 minutes on two
cores).  The figures are printed (``pytest -s`` shows them) and written to
``artifacts/hardening_corrupt.json``.  See tests/hardening_util.py for what
counts as a failure.
"""
from __future__ import annotations

import json
import os

import pytest

import hardening_util as hu
from parsers.model import Dataset, FileEntry

FULL = os.environ.get("DBXRAY_HARDENING_FULL") == "1"


def _report(s: hu.Summary, artifacts_dir, name: str) -> None:
    print("\n" + s.figures())
    for f in s.failures[:40]:
        print(f"  FAIL {f['file']}: {f['case']}: {f['reasons'][0]}")
    (artifacts_dir / name).write_text(json.dumps(
        {"figures": s.figures(), "targets": s.targets, "cases": s.cases, "failures": s.failures,
         "by_engine": s.by_engine, "lost_partial": s.lost_partial}, indent=1))


def test_matrix_covers_every_engine_and_role(sparse_fixtures):
    targets = hu.find_targets(sparse_fixtures)
    kinds = {hu._kind(t) for t in targets}
    for must in ("innodb/tablespace/ibd", "innodb/system_tablespace/ibdata1", "innodb/redo_log/redo",
                 "clickhouse/part_column_data/bin", "clickhouse/marks/mrk2", "clickhouse/marks/cmrk2",
                 "clickhouse/primary_index/idx", "clickhouse/primary_index/cidx",
                 "clickhouse/part_metadata/txt", "tokudb/dictionary/tokudb", "tokudb/dictionary/directory",
                 "tokudb/redo_log/tokulog", "tokudb/undo/rollback", "tokudb/engine_environment/environment"):
        assert must in kinds, must
    names = {os.path.basename(t.abspath) for t in targets}
    assert {"checksums.txt", "columns.txt"} <= names
    sub = hu.ci_subset(targets)
    assert {hu._kind(t) for t in sub} == kinds
    assert sub == hu.ci_subset(targets)          # deterministic


def test_mutations_hit_headers_units_and_payloads(sparse_fixtures):
    t = next(t for t in hu.find_targets(sparse_fixtures) if t.rel.endswith(".bin"))
    with open(t.abspath, "rb") as f:
        data = f.read()
    muts = hu.plan_mutations(t, len(data), None, data[:65536], full=True)
    whys = {m.why for m in muts}
    assert {"inside the header", "mid-block", "compressed size 2 GiB", "decompressed size 2 GiB",
            "compressed payload", "codec byte", "header"} <= whys
    assert any(m.op == "trunc" for m in muts) and any(m.op == "flip" for m in muts)
    assert muts == hu.plan_mutations(t, len(data), None, data[:65536], full=True)


def test_checker_counts_caught_crashes_and_unnamed_errors():
    ds = Dataset(root="/x/part", files=[FileEntry(path="a.bin", abspath="/x/part/a.bin")])
    ds.errors.append("clickhouse parser failed: IndexError: boom (blocks.py:1)")
    ds.files[0].errors.append("something is wrong")
    fails, facts = hu.check_dataset(ds, "a.bin")
    assert len(fails) == 2 and facts["errors"] == 2
    ds = Dataset(root="/x/part", files=[FileEntry(path="a.bin", abspath="/x/part/a.bin")])
    ds.files[0].add_error("bad block", offset=12)
    assert hu.check_dataset(ds, "a.bin") == ([], {"errors": 1, "located": 1})


@pytest.mark.skipif(FULL, reason="the full matrix runs instead")
def test_corrupt_matrix_ci_subset(sparse_fixtures, artifacts_dir):
    targets = hu.ci_subset(hu.find_targets(sparse_fixtures))
    s = hu.run_matrix(targets, full=False, jobs=2)
    _report(s, artifacts_dir, "hardening_corrupt_ci.json")
    assert s.cases > 300
    assert set(s.by_engine) == {"innodb", "clickhouse", "tokudb"}
    assert not s.failures, f"{len(s.failures)} failing cases, first: {s.failures[0]}"


@pytest.mark.skipif(not FULL, reason="set DBXRAY_HARDENING_FULL=1 for the full matrix (~20 min)")
def test_corrupt_matrix_full(sparse_fixtures, artifacts_dir):
    targets = hu.find_targets(sparse_fixtures)
    s = hu.run_matrix(targets, full=True, jobs=os.cpu_count() or 2)
    _report(s, artifacts_dir, "hardening_corrupt_full.json")
    assert s.targets == len(targets) and s.cases > 10 * len(targets)
    assert not s.failures, f"{len(s.failures)} failing cases, first: {s.failures[0]}"

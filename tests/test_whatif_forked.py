"""A sampled what-if builds its first pass's file targets in forked processes when the files are
worth it (compress/whatif.py ``forked_first_pass``, ``_build_forked``): each target in a fresh run
of its own, on one thread, what it leaves added in target order; its second pass then estimates
them in forked processes too (``_estimate_forked``), each from where its calls start in the
first pass's memory.  The JSON is the one process's,
speeds aside (they are measurements), on fixtures of every engine that has file targets."""
from __future__ import annotations

import json

import pytest

import dbxray.compress.whatif as whatif
from dbxray.parsers import parallel
from dbxray.parsers.model import ScanContext
from dbxray.parsers.scan import scan

SPEEDS = {"compress_mb_s", "decompress_mb_s"}


def _strip(x):
    if isinstance(x, dict):
        return {k: _strip(v) for k, v in x.items() if k not in SPEEDS}
    if isinstance(x, list):
        return [_strip(v) for v in x]
    return x


def _run(ds, monkeypatch, forked: bool, **kw) -> dict:
    calls, second = [], []
    real, real_second = whatif._build_forked, whatif._estimate_forked

    def counted(*a, **k):
        calls.append(1)
        return real(*a, **k)

    def counted_second(*a, **k):
        second.append(1)
        return real_second(*a, **k)

    with monkeypatch.context() as m:
        m.setattr(whatif, "_build_forked", counted)
        m.setattr(whatif, "_estimate_forked", counted_second)
        if forked:
            # every dataset of two file targets, two workers, the pool even for small files
            m.setattr(whatif, "forked_first_pass",
                      lambda work, n, cancel: sum(e is not None for _w, e in work) >= 2 and parallel.fork_safe())
            m.setattr(whatif, "workers", lambda: 2)
            m.setattr(parallel, "MIN_FILES", 0)
            m.setattr(parallel, "MIN_BYTES", 0)
        else:
            m.setattr(whatif, "forked_first_pass", lambda work, n, cancel: False)
        out = whatif.run_whatif(ds, ["zstd:3", "lz4"], **kw)
    assert bool(calls) == forked
    assert bool(second) == forked       # the second pass forked too, after the first
    return json.loads(json.dumps(out))


@pytest.mark.parametrize("folder,kw", [
    ("innodb", {}),
    ("innodb", {"sample": "0.2", "seed": 3}),
    ("innodb", {"target_error": 0.05}),
    ("innodb-mysql", {}),
    ("tokudb", {}),
])
def test_forked_first_pass_gives_the_same_json(fixtures_root, monkeypatch, folder, kw):
    if not parallel.fork_safe():
        pytest.skip("this process may not fork (more than one thread)")
    ds = scan(str(fixtures_root / folder), ScanContext(verify_checksums=False))
    assert sum(1 for e in ds.files if e.units is not None and len(e.units)) >= 2
    one = _run(ds, monkeypatch, False, **kw)
    forked = _run(ds, monkeypatch, True, **kw)
    assert _strip(forked) == _strip(one)
    assert forked["sample"]["units_encoded"] > 0


def test_forked_first_pass_only_where_it_pays(fixtures_root):
    ds = scan(str(fixtures_root / "innodb"), ScanContext(verify_checksums=False))
    from dbxray.compress import engines as whatif_engines
    work = [(whatif_engines.get(e.engine), e) for e in ds.files if whatif_engines.get(e.engine) is not None]
    assert not whatif.forked_first_pass(work, 1, None)                  # one core
    assert not whatif.forked_first_pass(work, 2, lambda: False)         # a cancel hook to poll
    assert not whatif.forked_first_pass(work[:1], 2, None)              # one file
    small = sum(int(e.apparent_bytes) for _w, e in work) < whatif.FORK_MIN_BYTES
    assert whatif.forked_first_pass(work, 2, None) is (not small and parallel.fork_safe()
                                                       and max(int(e.apparent_bytes) for _w, e in work) * 2
                                                       <= sum(int(e.apparent_bytes) for _w, e in work))


def test_results_in_target_order_whatever_order_they_come():
    got = list(whatif._in_order(iter([(3, "c"), (1, "a"), (4, "d"), (2, "b")]), [1, 2, 3, 4]))
    assert got == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]


def test_costliest_files_first(fixtures_root):
    """InnoDB weighs a page-compressed file by its codec: an lzma tablespace before a plain one
    of the same size (the order the forked first pass hands targets out in, never a result)."""
    from dbxray.compress.engines.innodb import WHATIF
    ds = scan(str(fixtures_root / "innodb" / "16k" / "fx"), ScanContext(verify_checksums=False))
    by = {e.path.rsplit("/", 1)[-1]: e for e in ds.files}
    lzma, plain = by["t_pc_lzma.ibd"], by["t_dynamic.ibd"]
    per_byte = lambda e: WHATIF.file_cost(e) / max(1, int(e.apparent_bytes))   # noqa: E731
    assert per_byte(lzma) > per_byte(plain) == 1.0

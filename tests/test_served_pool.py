"""A process that must not fork (the window, which runs Qt's threads) reads thousands of
files in a fork server's workers (parsers/parallel.py ``use_served_pool``): the same
dataset as one process reads, and the arrays sent back through the fast reducer intact."""
from __future__ import annotations

import io
import pickle

import numpy as np
import pytest

from fixtures_util import fixtures_dir
from dbxray.parsers import jsonout, parallel
from dbxray.parsers.innodb.detail import innodb_detail
from dbxray.parsers.model import ScanContext
from dbxray.parsers.scan import scan


def _json(ds) -> str:
    buf = io.StringIO()
    jsonout.write_dataset(ds, buf)
    return buf.getvalue()


@pytest.fixture(scope="module")
def datadir():
    root = fixtures_dir()
    if root is None:
        pytest.skip("fixtures missing")
    return root / "innodb" / "datadir16k"


def test_served_pool_reads_what_one_process_reads(datadir, monkeypatch):
    serial = scan(str(datadir), ScanContext(workers=1, block_walk=False))
    monkeypatch.setattr(parallel, "fork_safe", lambda: False)         # as in the window
    monkeypatch.setattr(parallel, "MIN_FILES_SERVED", 4)
    calls = []
    orig = parallel._each_file_served
    monkeypatch.setattr(parallel, "_each_file_served", lambda *a, **k: calls.append(1) or orig(*a, **k))
    served = scan(str(datadir), ScanContext(workers=2, block_walk=False))
    assert calls, "the fork server's pool was not used"
    assert _json(served) == _json(serial)
    paged = [f for f in serial.files if f.engine == "innodb" and f.units is not None]
    assert len(paged) >= 6
    for a in paged:
        b = served.file(a.path)
        assert a.units.dtype == b.units.dtype and a.units.tobytes() == b.units.tobytes()
        assert a.unit_facts.records.tolist() == b.unit_facts.records.tolist()
        # the workers send no page map back: it is read again on demand, the same
        assert "innodb" not in b.detail
        pa, pb = innodb_detail(a)["page_map"], innodb_detail(b)["page_map"]
        for name in ("type", "lsn", "index_id", "level", "n_recs", "free", "owner_index"):
            assert np.array_equal(getattr(pa, name), getattr(pb, name)), (a.path, name)


def test_unpicklable_work_is_read_here(monkeypatch):
    """A closure cannot go to another interpreter: the files are read in this process."""
    monkeypatch.setattr(parallel, "fork_safe", lambda: False)
    monkeypatch.setattr(parallel, "MIN_FILES_SERVED", 1)
    entries = [object()] * 3
    ctx = ScanContext(workers=2)
    assert not parallel.use_served_pool(entries, ctx, lambda e: None)
    assert parallel.use_served_pool(entries, ctx, print)
    assert not parallel.use_served_pool(entries, ScanContext(workers=1), print)
    monkeypatch.setattr(parallel, "fork_safe", lambda: True)          # the command line forks instead
    assert not parallel.use_served_pool(entries, ctx, print)


@pytest.mark.parametrize("arr", [
    np.arange(7, dtype=np.uint32),
    np.zeros((3, 4), dtype=">u8"),
    np.array(5.5),
    np.zeros(4, dtype=[("a", "<u2"), ("b", ">i8"), ("c", "V3")]),
    np.zeros(0, dtype=np.float32),
    np.arange(20, dtype=np.int16)[::3],                 # not contiguous: numpy's own way
    np.array([{"x": 1}, None], dtype=object),           # objects: numpy's own way
])
def test_array_reducer_round_trip(arr):
    buf = io.BytesIO()
    pk = pickle.Pickler(buf, pickle.HIGHEST_PROTOCOL)
    pk.dispatch_table = {np.ndarray: parallel._reduce_array}     # as ForkingPickler.register does
    pk.dump(arr)
    back = pickle.loads(buf.getvalue())
    assert back.dtype == arr.dtype and back.shape == arr.shape
    assert pickle.dumps(back.tolist()) == pickle.dumps(arr.tolist())
    if arr.dtype != object and arr.size:
        back.flat[0] = back.flat[-1]                      # writable, as an unpickled array is

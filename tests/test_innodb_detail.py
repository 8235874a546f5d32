"""Page maps kept within a budget and read again on demand (parsers/innodb/detail.py):
the window's scan of a big data dir drops the per-file parser objects past its budget;
the inspector and the what-if's page payloads then rebuild them from the file, with the
same results as a scan that kept them, and refuse a file changed since the scan."""
from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

from dbxray.parsers.innodb import detail as detail_mod
from dbxray.parsers.innodb.detail import DetailUnavailable, detail_cost, innodb_detail
from dbxray.parsers.innodb.inspect import inspect_unit
from dbxray.parsers.innodb.payloads import PayloadError, unit_payload
from dbxray.parsers.model import ScanContext
from dbxray.parsers.scan import scan


@pytest.fixture(scope="module")
def both(sparse_fixtures):
    """The 16k fixture folder scanned twice: keeping every page map, and with a budget
    that keeps only the first file's."""
    root = sparse_fixtures / "innodb" / "16k" / "fx"
    full = scan(str(root), ScanContext())
    first = next(e for e in full.files if e.engine == "innodb" and e.units is not None)
    budget = detail_cost(len(first.units))
    light = scan(str(root), ScanContext(detail_budget=budget))
    return full, light


def _innodb(ds):
    return {e.path: e for e in ds.files if e.engine == "innodb" and e.units is not None}


def test_budget_drops_page_maps_past_it_and_keeps_everything_else(both):
    full, light = both
    kept = [p for p, e in _innodb(light).items() if "innodb" in e.detail]
    dropped = [p for p, e in _innodb(light).items() if "innodb" not in e.detail]
    assert len(kept) >= 1 and len(dropped) >= 10, (kept, dropped)
    assert all("innodb" in e.detail for e in _innodb(full).values())
    # the JSON, units and unit facts do not depend on what was kept
    assert light.to_json() == full.to_json()
    for path, e in _innodb(light).items():
        f = _innodb(full)[path]
        assert e.units.tobytes() == f.units.tobytes()          # (fill is NaN where undefined)
        assert np.array_equal(e.unit_facts.records, f.unit_facts.records)


def test_dropped_page_maps_are_rebuilt_with_the_same_facts(both):
    full, light = both
    detail_mod.clear_cache()
    checked = 0
    for path, e in _innodb(light).items():
        if "innodb" in e.detail:
            continue
        f = _innodb(full)[path]
        det, ref = innodb_detail(e), f.detail["innodb"]
        for key in ("page_no", "type", "level", "records", "index_id", "payload_len", "hole_bytes", "data_size"):
            assert np.array_equal(det[key], ref[key]), (path, key)
        pm, pr = det["page_map"], ref["page_map"]
        assert np.array_equal(pm.checksum_ok, pr.checksum_ok) and np.array_equal(pm.stored, pr.stored)
        for i in sorted({0, 3, len(e.units) - 1} & set(range(len(e.units)))):
            a, b = inspect_unit(e, i, e.units[i]), inspect_unit(f, i, f.units[i])
            assert (a.fields, a.regions, a.data, a.note) == (b.fields, b.regions, b.data, b.note), (path, i)
            assert unit_payload(e, i) == unit_payload(f, i)
        checked += 1
    assert checked >= 10
    # rebuilt once, then served from the bounded cache
    e = next(e for e in _innodb(light).values() if "innodb" not in e.detail)
    assert innodb_detail(e) is innodb_detail(e)


def test_rebuild_cache_is_bounded(both, monkeypatch):
    _, light = both
    detail_mod.clear_cache()
    dropped = [e for e in _innodb(light).values() if "innodb" not in e.detail]
    monkeypatch.setattr(detail_mod, "REREAD_CACHE_BYTES", detail_cost(1))
    for e in dropped:
        innodb_detail(e)
    assert len(detail_mod._cache) == 1          # the last one only
    detail_mod.clear_cache()


def test_a_file_changed_since_the_scan_is_not_read_again(tmp_path, sparse_fixtures):
    src = sparse_fixtures / "innodb" / "16k" / "fx"
    root = tmp_path / "d"
    root.mkdir()
    for name in ("t_compact.ibd", "t_dynamic.ibd"):
        shutil.copy(src / name, root / name)
    ds = scan(str(root), ScanContext(detail_budget=0))
    entries = _innodb(ds)
    assert all("innodb" not in e.detail for e in entries.values())
    # a dropped map's detail is one shared, read-only dict whose stamp is the file's ``seen``
    assert all(e.detail is detail_mod.DROPPED for e in entries.values())
    with pytest.raises(TypeError):
        entries["t_compact.ibd"].detail["x"] = 1
    e = entries["t_dynamic.ibd"]
    st = os.stat(e.abspath)
    os.utime(e.abspath, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))    # touched after the scan
    detail_mod.clear_cache()
    with pytest.raises(DetailUnavailable, match="t_dynamic.ibd: changed since the scan"):
        innodb_detail(e)
    with pytest.raises(PayloadError, match="changed since the scan"):
        unit_payload(e, 3)
    got = inspect_unit(e, 3, e.units[3])          # a FIL-level view, saying why
    assert "changed since the scan" in got.note and got.fields
    os.remove(entries["t_compact.ibd"].abspath)
    with pytest.raises(DetailUnavailable, match="t_compact.ibd: cannot be read again"):
        innodb_detail(entries["t_compact.ibd"])


def test_no_budget_keeps_every_page_map(tmp_path, sparse_fixtures):
    root = tmp_path / "d"
    root.mkdir()
    shutil.copy(sparse_fixtures / "innodb" / "16k" / "fx" / "t_compact.ibd", root / "t_compact.ibd")
    ctx = ScanContext()
    ds = scan(str(root), ctx)
    assert all("innodb" in e.detail for e in _innodb(ds).values()) and ctx.detail_kept == 0

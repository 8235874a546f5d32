"""The inspector's facts of MyISAM and Aria units (Engine.inspect_unit): header fields
at their byte offsets, regions that tile the unit, the page CRC re-checked."""
from __future__ import annotations

import pytest

from dbxray.parsers import engines
from dbxray.parsers.scan import scan


@pytest.fixture(scope="module")
def ds(sparse_fixtures):
    return scan(str(sparse_fixtures / "mariadb" / "datadir" / "misc"))


def _inspect(ds, path, i):
    e = ds.file(path)
    r = engines.get(e.engine).inspect_unit(e, i)
    assert r.data and r.regions[0][0] == 0 and r.regions[-1][1] == len(r.data) == int(e.units["stored"][i])
    assert all(a[1] == b[0] for a, b in zip(r.regions, r.regions[1:]))          # the regions tile the unit
    return {name: (value, off) for name, value, off in r.fields}, [n for _a, _b, n in r.regions]


def test_aria_pages(ds):
    f, regions = _inspect(ds, "aria_page.MAD", 3)
    assert f["PAGE_TYPE"] == ("1 (HEAD_PAGE)", 7) and f["DIR_COUNT"][1] == 8 and f["EMPTY_SPACE"][1] == 10
    assert f["CRC"][0].endswith("(matches)") and regions == ["page header", "rows and free space", "directory",
                                                              "CRC"]
    f, regions = _inspect(ds, "aria_page.MAI", 3)
    assert f["key number"] == ("0", 13) and f["flag"] == ("1 (node)", 14) and f["bytes used"] == ("76", 15)
    assert f["CRC"][0].endswith("(matches)") and regions == ["page header", "keys", "free space", "CRC"]
    f, regions = _inspect(ds, "aria_dyn.MAD", 5)
    assert f["block type"] == ("3 (first part)", 0) and regions == ["block header", "row data"]


def test_myisam_blocks(ds):
    f, regions = _inspect(ds, "myisam_dyn.MYI", 3)
    assert f["bytes used"] == ("548", 0) and f["node"] == ("yes", 0) and f["key"][0] == "0"
    assert regions == ["block header", "keys", "free space"]
    f, _ = _inspect(ds, "myisam_fixed.MYD", 1)
    assert f["first byte"][0].endswith("(row in use)")

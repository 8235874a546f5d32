"""ClickHouse column files on the generic unit map (issue 14: an engine's units drawn with
no view of its own): every ``*.bin`` of the fixture's parts is mapped, its blocks coloured
by the codec of their method byte, their column, ratio and checksum, with the figures the
parser read (system.parts_columns truth is checked in test_clickhouse_parts_columns)."""
from __future__ import annotations

import collections

import pytest

from dbxray.parsers.scan import scan
from dbxray.viz.extentmap import MapData, mapped_files


@pytest.fixture(scope="module")
def ds(fixtures_root):
    return scan(str(fixtures_root / "clickhouse"))


def test_every_column_file_is_mapped(ds):
    mapped = {e.path for e in mapped_files(ds) if e.engine == "clickhouse"}
    bins = {e.path for e in ds.files if e.engine == "clickhouse" and e.role == "part_column_data"
            and e.units is not None and len(e.units)}
    assert bins and mapped == bins
    # marks and primary indexes have units of their own but are not blocks: not on the map
    assert not [e for e in mapped_files(ds) if e.engine == "clickhouse" and e.role != "part_column_data"]


def test_modes_are_the_blocks_facts(ds):
    files = [e for e in mapped_files(ds) if e.engine == "clickhouse"]
    compact = max(files, key=lambda e: len(e.owner_names))        # a Compact part: one data.bin, many columns
    for e in (compact, max(files, key=lambda e: len(e.units))):
        d = MapData(e)
        assert d.n_pages == len(e.units) and not d.geometry.unit_bytes
        t = d.mode("type")
        want = collections.Counter(e.kind_names[int(k)] for k in e.units["kind"])
        assert dict(zip(t.labels, t.counts.tolist())) == dict(want)
        assert sum(t.sizes.tolist()) == int(e.units["stored"].astype("int64").sum())
        ck = d.mode("checksum")
        assert sum(ck.counts.tolist()) == len(e.units)
    cols = MapData(compact).mode("index")
    # the columns by name (the owner codes are the parser's own, not shown)
    assert len(cols.labels) >= 2 and set(cols.labels) <= set(compact.owner_names.values())

"""Marks and primary index read offline vs the engine (mergeTreeIndex, SQL read-back)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from dbxray.parsers.clickhouse.part import read_primary_index
from dbxray.parsers.clickhouse.primary import key_expressions, key_types, read_primary_index as decode_index
from dbxray.parsers.scan import scan


@pytest.fixture(scope="module")
def manifest(fixtures_root):
    return json.loads((fixtures_root / "clickhouse" / "manifest.json").read_text())


@pytest.fixture(scope="module")
def results(sparse_fixtures):
    ds = scan(str(sparse_fixtures / "clickhouse" / "datadir"))
    return {r.info.name: r for r in ds.detail["clickhouse"]["tables"]}


def test_wide_marks_equal_mergetreeindex(results, manifest):
    pairs = rows_checked = 0
    for name, mt in manifest["tables"].items():
        parts = {p.name: p for p in results[name].info.parts}
        for pname, mi in mt["marks_from_mergeTreeIndex"].items():
            part = parts[pname]
            if part.part_type != "Wide":
                continue
            streams = {s.ref.stream: s for s in part.streams}
            for stream, expected in mi["marks"].items():
                if all(x == [None, None] for x in expected):
                    assert stream not in streams     # Map/Tuple: no stream of their own
                    continue
                m = streams[stream].marks
                assert m.offsets[:, 0, :].tolist() == expected, (name, pname, stream)
                pairs += len(expected)
                if m.rows is not None:
                    assert m.rows.tolist() == mi["rows_in_granule"], (name, pname, stream)
                    rows_checked += 1
                else:   # non-adaptive .mrk: no rows column, no final mark
                    assert len(m) == len(mi["rows_in_granule"])
    assert pairs > 1000 and rows_checked > 200


def test_compact_marks_rows(results, manifest):
    n = 0
    for name, mt in manifest["tables"].items():
        parts = {p.name: p for p in results[name].info.parts}
        for pname, mi in mt["marks_from_mergeTreeIndex"].items():
            part = parts[pname]
            if part.part_type != "Compact":
                continue
            m = part.compact.marks
            assert m.rows.tolist() == mi["rows_in_granule"]
            # every mark pair points at a block start of data.bin (or its end)
            starts = set(part.compact.blocks.offsets.tolist()) | {part.compact.bin_size}
            assert set(np.unique(m.offsets[:, :, 0]).tolist()) <= starts
            n += 1
    assert n == 12


def test_marks_count_and_flavours(results, manifest):
    seen = set()
    for name, mt in manifest["tables"].items():
        parts = {p.name: p for p in results[name].info.parts}
        for mp in mt["system_parts"]:
            part = parts[mp["name"]]
            assert part.marks_count == mp["marks"]
            seen.add(part.marks_extension)
    assert seen == {".cmrk2", ".mrk2", ".mrk", ".cmrk", ".cmrk4", ".cmrk3", ".mrk4", ".mrk3"}


def test_primary_index_equals_sql_readback(results, manifest):
    n = 0
    for name, mt in manifest["tables"].items():
        info = results[name].info
        ddl = info.ddl
        exprs = key_expressions(ddl.primary_key or ddl.order_by)
        assert exprs == [k for k, _ in mt["primary_key_types"]]
        types = key_types(exprs, {c.name: c.type for c in ddl.columns})
        assert types == [t for _, t in mt["primary_key_types"]]
        parts = {p.name: p for p in info.parts}
        for pname, exp in mt["primary_index_expected"].items():
            raw = read_primary_index(parts[pname])
            assert decode_index(raw, types) == exp["rows"], (name, pname)
            n += 1
    assert n == 35

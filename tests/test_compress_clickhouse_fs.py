"""Filesystem comparisons for ClickHouse tables (issue 6: "Filesystem
compression of the raw files, as a comparison: ZFS ... and btrfs"): every
file of the table's active parts, cut in 128 KiB records per file, checked
against the engine's own file lists (manifest ``system_parts[].file_list``)."""
from __future__ import annotations

import json

import pytest

from fixtures_util import fixtures_dir
from dbxray.parsers.scan import scan
from dbxray.compress.whatif import run_whatif

TABLE = "seed_nq_mostly1"


@pytest.fixture(scope="module")
def setup():
    root = fixtures_dir()
    assert root is not None, "fixtures missing"
    man = json.loads((root / "clickhouse" / "manifest.json").read_text())
    ds = scan(str(root / "clickhouse" / "datadir"))
    res = run_whatif(ds, ["none", "zstd:3", "zlib:6"], sample="all", larger_pages=False)
    return man, res


def _roundup(n: int, k: int) -> int:
    return -(-n // k) * k


def test_zfs_and_btrfs_without_compression_equal_the_engine_file_lists(setup):
    man, res = setup
    parts = [p for p in man["tables"][TABLE]["system_parts"] if p["active"]]
    assert parts and not any(p["projections"] for p in parts)
    sizes = [f["size"] for p in parts for f in p["file_list"]]
    # a record per started 128 KiB of each file, rounded to the 4 KiB sector (ashift 12)
    expect = sum(_roundup(min(131072, s - o), 4096) for s in sizes for o in range(0, s, 131072))
    t = next(t for t in res["targets"] if t["target"] == f"fx.{TABLE}")
    got = {r["model"]: r for r in t["results"] if r["codec"] == "none"}
    assert got["zfs_recordsize_128k_ashift12"]["projected_bytes"] == expect
    assert got["btrfs_128k_extents"]["projected_bytes"] == expect
    assert got["zfs_recordsize_128k_ashift12"]["ci95"] == [expect, expect]      # --sample all: exact


def test_compressed_filesystem_projections_are_below_the_raw_size(setup):
    _, res = setup
    tables = [t for t in res["targets"] if t["target"].count(".") == 1]
    assert len(tables) >= 10
    for t in tables:
        by = {(r["codec"], r["model"]): r["projected_bytes"] for r in t["results"]}
        raw = by[("none", "zfs_recordsize_128k_ashift12")]
        for codec in ("zstd:3", "zlib:6"):
            for model in ("zfs_recordsize_128k_ashift12", "btrfs_128k_extents"):
                assert 0 < by[(codec, model)] <= raw, (t["target"], codec, model)
    # the advisor never proposes a filesystem for a ClickHouse column or table
    assert not [a for a in res["advice"] if "zfs" in str(a.get("model")) or "btrfs" in str(a.get("model"))]

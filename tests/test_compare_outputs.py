"""tests/tools/compare_outputs.py: speed-dependent advice is masked, sizes are not."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "tools"))
import compare_outputs as co  # noqa: E402


def _entry(codec, choice, projected, mbs):
    return {"target": "t", "kind": "codec", "codec": codec, "projected_bytes": projected,
            "saving_bytes": 1000 - projected, "choice": choice, "model": "m", "decompress_mb_s": mbs}


def _diff(a, b):
    out: list[str] = []
    co.diff(co.untimed(a), co.untimed(b), "", out)
    return out


def test_merged_and_split_picks_compare_equal():
    # Run 1: zstd:9 is the smallest and also decodes fastest: one merged entry.
    merged = {"advice": [_entry("zstd:9", "smallest, fastest_decode_within_5pct", 600, 960.0)]}
    # Run 2: zstd:3 measured faster this time: two entries.
    split = {"advice": [_entry("zstd:9", "smallest", 600, 950.0),
                        _entry("zstd:3", "fastest_decode_within_5pct", 610, 1035.0)]}
    assert _diff(merged, split) == []


def test_a_changed_size_is_still_a_difference():
    a = {"advice": [_entry("zstd:9", "smallest", 600, 950.0)]}
    b = {"advice": [_entry("zstd:9", "smallest", 601, 950.0)]}
    out = _diff(a, b)
    assert any("projected_bytes" in line for line in out)


def test_a_missing_smallest_pick_is_a_difference():
    a = {"advice": [_entry("zstd:9", "smallest", 600, 950.0)]}
    b = {"advice": [_entry("zstd:3", "fastest_decode_within_5pct", 610, 1035.0)]}
    assert _diff(a, b)


def test_other_advice_is_compared_whole():
    a = {"advice": [{"target": "t", "kind": "type", "choice": "narrower", "ddl": "A"}]}
    b = {"advice": [{"target": "t", "kind": "type", "choice": "narrower", "ddl": "B"}]}
    assert any("ddl" in line for line in _diff(a, b))

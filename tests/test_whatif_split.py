"""The split of a target's bytes (issue 17 item 1): per-range allocation against a byte-by-byte
count, the advisor's rebuild line and its thresholds, compression-only savings in the advice."""
from __future__ import annotations

import numpy as np
import pytest

from dbxray.compress import advisor
from dbxray.compress.estimate import Estimate
from dbxray.compress.sources import allocated_in
from dbxray.compress.targets import Result, Split, Target
from dbxray.parsers.model import FileEntry


@pytest.mark.parametrize("seed", range(20))
def test_allocated_in_equals_a_byte_count(seed):
    rng = np.random.default_rng(seed)
    size = 64 * 1024
    holes, unwritten = [], []
    at = 0
    while at < size:
        at += int(rng.integers(0, 9000))
        n = int(rng.integers(1, 9000))
        if at + n > size:
            break
        holes.append((at, n))
        if rng.random() < 0.5:          # part of the hole is an unwritten (allocated) extent
            a = at + int(rng.integers(0, n))
            unwritten.append((a, int(rng.integers(1, at + n - a + 1))))
        at += n
    allocated = np.ones(size, dtype=bool)
    for o, n in holes:
        allocated[o:o + n] = False
    for o, n in unwritten:
        allocated[o:o + n] = True
    e = FileEntry("f", "/nonexistent/f", apparent_bytes=size, holes=holes, unwritten=unwritten)
    page = int(rng.choice([1024, 4096, 16384]))
    offs = np.arange(0, size, page, dtype=np.int64)
    lens = np.full(len(offs), page, dtype=np.int64)
    got = allocated_in(e, offs, lens)
    want = np.array([allocated[o:o + page].sum() for o in offs])
    assert (got == want).all()


def _target(name, current, reclaimable, projected, codec="zlib:6"):
    est = Estimate(projected, projected * 0.95, projected * 1.05, 1.0, 10, 10, 100)
    t = Target(name, "innodb", current, current, current_codec="none", primary_model="innodb_page_compressed",
               info={"database": "db", "table": name.split(".")[0], "role": "tablespace", "layout": "full_crc32"})
    t.results.append(Result(codec, "innodb_page_compressed", est, 100.0, 500.0, rebuilds=True))
    t.split = Split(current - reclaimable - 65536, 65536, reclaimable)
    return t


def test_rebuild_line_and_compression_only_saving():
    t = _target("big.ibd", 40 << 20, 30 << 20, 4 << 20)
    adv = advisor.advise([t])
    rebuild = [a for a in adv if a["kind"] == "rebuild"]
    codec = [a for a in adv if a["kind"] == "codec"]
    assert len(rebuild) == 1 and rebuild[0]["ddl"] == "OPTIMIZE TABLE `db`.`big`;"
    assert rebuild[0]["saving_bytes"] == 30 << 20 and rebuild[0]["projected_bytes"] == 10 << 20
    assert len(codec) == 1 and codec[0]["compared_with"] == "rebuilt"
    assert codec[0]["saving_bytes"] == (10 << 20) - (4 << 20)        # not 36 MiB: the free space is the rebuild's


def test_no_codec_advice_when_only_the_free_space_would_shrink():
    # 8 MiB file of which 6 MiB free; the codec would write 2.1 MiB for the 2 MiB in use: only the rebuild
    t = _target("mostly_free.ibd", 8 << 20, 6 << 20, int(2.1 * (1 << 20)))
    adv = advisor.advise([t])
    assert [a["kind"] for a in adv] == ["rebuild"]


@pytest.mark.parametrize("reclaimable", [512 << 10, 1 << 20])
def test_small_free_space_is_not_worth_a_rebuild(reclaimable):
    # under 1 MiB, or under 10% of the table (1 MiB of a 20 MiB table)
    t = _target("t.ibd", 20 << 20, reclaimable, 5 << 20)
    assert not [a for a in advisor.advise([t]) if a["kind"] == "rebuild"]


def test_tokudb_split_against_the_block_table(fixtures_root):
    """TokuDB dictionaries: the space no used block covers (tokuftdump --fragmentation's gaps,
    the tail) is reclaimable, counted where allocated; the codec's projection keeps it (no
    rebuild advised)."""
    from dbxray.compress.whatif import run_whatif
    from dbxray.parsers.scan import scan
    ds = scan(str(fixtures_root / "tokudb"))
    res = run_whatif(ds, ["zstd:1"], sample="0.2", seed=1, raw_models=False)
    files = {f.path: f for f in ds.files}
    checked = 0
    for t in res["targets"]:
        if t["engine"] != "tokudb":
            continue
        s, f = t["split"], files[t["target"]]
        assert s["compressible_bytes"] + s["overhead_bytes"] + s["reclaimable_bytes"] == t["current_bytes"]
        frag = f.detail["tokudb"]["fragmentation"]
        slack = f.detail["tokudb"]["file_slack_bytes"]
        assert s["reclaimable_bytes"] <= frag["fragsizes"] + slack
        assert s["compressible_bytes"] <= int(f.units["stored"].astype("int64").sum())
        assert all("compression_saving_bytes" not in r for r in t["results"])    # the projection keeps it
        checked += 1
    assert checked >= 9
    ev = next(t for t in res["targets"] if t["target"].endswith("_fx_events_main_8_1_1d.tokudb"))
    frag = files[ev["target"]].detail["tokudb"]["fragmentation"]["fragsizes"]       # 788,533 (tokuftdump)
    assert abs(ev["split"]["reclaimable_bytes"] - frag) <= 0.01 * frag
    assert not [a for a in res["advice"] if a.get("kind") == "rebuild"]


def test_view_draws_the_reclaimable_part_and_compares_with_the_rebuilt_table(qtbot):
    import pyqtgraph as pg
    from dbxray.viz.whatif import WhatIfView
    mib = 1 << 20
    res = {"root": "/x", "sample": {"mode": "fraction", "fraction": 0.05, "seed": 1, "units_sampled": 10,
                                    "units_total": 100}, "fs_block": 4096, "advice": [],
           "targets": [{"target": "db/t.ibd", "engine": "innodb", "current_bytes": 10 * mib,
                        "logical_bytes": 10 * mib, "current_codec": "none", "primary_model": "innodb_page_compressed",
                        "split": {"compressible_bytes": 3 * mib, "overhead_bytes": mib, "reclaimable_bytes": 6 * mib,
                                  "rebuilt_bytes": 4 * mib},
                        "results": [{"codec": "zlib:6", "model": "innodb_page_compressed", "projected_bytes": 2 * mib,
                                     "ci95": [2 * mib - 1000, 2 * mib + 1000], "compress_mb_s": 50.0,
                                     "decompress_mb_s": 300.0, "compression_saving_bytes": 2 * mib,
                                     "compression_saving_ci95": [2 * mib - 1000, 2 * mib + 1000]}]}]}
    v = WhatIfView()
    qtbot.addWidget(v)
    v.resize(1200, 760)
    v.show()
    v.set_results(res)
    qtbot.wait(20)
    bp = v.bars.getPlotItem()
    bars = [i for i in bp.items if isinstance(i, pg.BarGraphItem)]
    tops = [b for b in bars if b.opts.get("y0") is not None]
    assert len(tops) == 1 and tops[0].opts["height"][0] * 1 > 0                 # 6 MiB drawn on top of the bar
    assert "6.0 MiB free" in bp.titleLabel.text.replace("\u00a0", " ")
    labels = " ".join(t.textItem.toHtml() for _x, _top, t in v.bar_label_items)
    assert "-50%" in labels and "-80%" not in labels                # 2 MiB against the rebuilt 4 MiB, not the 10
    assert v.table.item(0, 6).text().replace("\u00a0", " ").startswith("2.0 MiB")     # the compression saving column

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


def _allocated(path, start: int, end: int) -> int:
    """Bytes of [start, end) the filesystem holds data for (SEEK_DATA / SEEK_HOLE)."""
    import os
    n = 0
    with open(path, "rb") as f:
        fd = f.fileno()
        at = start
        while at < end:
            try:
                data = os.lseek(fd, at, os.SEEK_DATA)
            except OSError:
                break
            if data >= end:
                break
            hole = os.lseek(fd, data, os.SEEK_HOLE)
            n += min(hole, end) - data
            at = hole
    return n


def test_tokudb_split_against_the_block_table(fixtures_root):
    """TokuDB dictionaries (issue 17 item 3): what a copying rebuild gives back is the space no
    used block of the translation table covers beyond each block's 4096-byte alignment, and the
    tail; checked against tokuftdump's own translation table and --fragmentation (the manifest),
    with the file's allocation read here by SEEK_DATA/SEEK_HOLE. The codec's projection keeps
    it; the rebuild line is ALTER TABLE ... ENGINE=TokuDB, ALGORITHM=COPY (OPTIMIZE TABLE runs
    in place on TokuDB and frees nothing), given from 1 MiB and 10% of the table as for InnoDB."""
    import json
    from dbxray.compress.whatif import run_whatif
    from dbxray.parsers.scan import scan
    root = fixtures_root / "tokudb"
    manifest = {f["path"].rsplit("/", 1)[-1]: f for f in json.loads((root / "manifest.json").read_text())["files"]}
    ds = scan(str(root / "datadir"))
    res = run_whatif(ds, ["zstd:1"], sample="0.2", seed=1, raw_models=False)
    checked = 0
    for t in res["targets"]:
        m = manifest.get(t["target"].rsplit("/", 1)[-1])
        if t["engine"] != "tokudb" or m is None or "tokuftdump_translation_table" not in m:
            continue
        s = t["split"]
        assert s["compressible_bytes"] + s["overhead_bytes"] + s["reclaimable_bytes"] == t["current_bytes"]
        blocks = sorted((o, o + n) for _b, o, n in m["tokuftdump_translation_table"]["rows"] if o >= 0 and n > 0)
        path = root / "datadir" / t["target"]
        size = path.stat().st_size
        gaps = free = 0
        last = 8192                         # the two header slots
        for a, b in blocks + [(size, size)]:
            if a > last:
                gaps += a - last if a < size else 0
                aligned = min(-(-last // 4096) * 4096, a)       # each block's padding stays
                free += _allocated(path, aligned, a)
            last = max(last, b)
        # tokuftdump --fragmentation counts every gap between the used blocks and the header slots
        assert gaps + 8192 == m["tokuftdump_fragmentation"]["fragsizes"]
        assert s["reclaimable"]["unused_block_bytes"] == free == s["reclaimable_bytes"]
        assert all("compression_saving_bytes" not in r for r in t["results"])    # the projection keeps it
        checked += 1
    assert checked >= 9
    ev = next(t for t in res["targets"] if t["target"].endswith("_fx_events_main_8_1_1d.tokudb"))
    assert ev["split"]["reclaimable_bytes"] == 178 * 4096         # whole free blocks of its 788,533 B
    assert not [a for a in res["advice"] if a.get("kind") == "rebuild"]     # under 1 MiB each


def test_tokudb_rebuild_line_is_a_copying_alter():
    """A TokuDB table whose dictionaries hold 3 MiB of free blocks: one rebuild line for the
    table (its dictionaries summed), ALGORITHM=COPY (OPTIMIZE TABLE would run a hot optimize in
    place and give nothing back), saying what it is."""
    group = []
    for i, (current, free) in enumerate([(12 << 20, 2 << 20), (6 << 20, 1 << 20)]):
        t = Target(f"_fx_t_{'main' if i == 0 else 'key'}.tokudb", "tokudb", current, current,
                   current_codec="zlib:5", primary_model="tokudb_partitions",
                   info={"table": "fx.t", "database": "fx", "method": "zlib"})
        t.split = Split(current - free - 40960, 40960, free, detail={"unused_block_bytes": free, "past_eof_bytes": 0})
        group.append(t)
    adv = [a for a in advisor.advise(group) if a["kind"] == "rebuild"]
    assert len(adv) == 1 and adv[0]["ddl"] == "ALTER TABLE fx.t ENGINE=TokuDB, ALGORITHM=COPY;"
    assert adv[0]["saving_bytes"] == 3 << 20 and len(adv[0]["files"]) == 2
    assert "free blocks" in adv[0]["verdict"] and "OPTIMIZE TABLE" in adv[0]["verdict"]


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


def test_system_tablespace_never_shrinks_and_none_is_no_saving(fixtures_root, tmp_path):
    """ibdata1 of the InnoDB fixture (issue 17 item 1): the system tablespace never shrinks (MariaDB
    10.11: OPTIMIZE / ALTER ... FORCE rebuild tables, not ibdata1), so its free pages are free
    inside the file, not a rebuilt size; and its own codec (none) projects every page in use written
    whole, 784 KiB more than the file holds because those pages are sparse now (zero blocks left
    unallocated): that difference is no compression saving, and is named as what it is."""
    import subprocess

    from dbxray.app.cli_whatif import human_table
    from dbxray.compress.engines.innodb import free_units, sparse_in_pages
    from dbxray.compress.sources import engine_units
    from dbxray.compress.whatif import result_for, run_whatif
    from dbxray.parsers.scan import scan
    # a copy that keeps the fixture's holes (shutil.copytree fills them)
    subprocess.run(["cp", "-r", "--sparse=always", str(fixtures_root / "innodb" / "datadir16k"), str(tmp_path / "d")],
                   check=True)
    ds = scan(str(tmp_path / "d"))
    assert next(f for f in ds.files if f.path == "ibdata1").holes
    res = run_whatif(ds, ["none", "zlib:6"], sample="all", seed=1, raw_models=False)
    ib = next(t for t in res["targets"] if t["target"] == "ibdata1")
    sp = ib["split"]
    assert sp["shrinks"] is False and "never shrinks" in sp["shrink_note"] and sp["reclaimable_bytes"] > 0
    none = result_for(ib, "none", "innodb_page_compressed")
    assert ib["current_codec"] == "none" and "compression_saving_bytes" not in none
    # what the 'none' projection differs by: the pages in use that are holes now, to the byte
    e = next(f for f in ds.files if f.path == "ibdata1")
    base = engine_units(e)
    sparse = sparse_in_pages(e, base, free_units(e, base.meta["index"], base.zero))
    assert sparse == none["projected_bytes"] - sp["rebuilt_bytes"] > 700 << 10, (sparse, none, sp)
    assert any(n.startswith("sparse now: 784.0 KiB") for n in ib["notes"]), ib["notes"]
    # another codec's saving is still compression against the pages in use
    z = result_for(ib, "zlib:6", "innodb_page_compressed")
    assert z["compression_saving_bytes"] == sp["rebuilt_bytes"] - z["projected_bytes"]
    # a table's own codec gets no saving either; a table still shrinks, with its rebuilt size
    for t in res["targets"]:
        for r in t["results"]:
            if r["codec"] == t["current_codec"] and r["model"] == t["primary_model"]:
                assert "compression_saving_bytes" not in r, (t["target"], r)
    table = next(t for t in res["targets"] if t["target"].endswith("t_metrics.ibd"))
    assert table["split"].get("shrinks", True)
    text = human_table(res)
    block = text.split("\nibdata1  [innodb]", 1)[1].split("\n\n", 1)[0]
    made = next(line for line in block.splitlines() if "made of:" in line)
    assert "never shrinks" in made and "rebuilt" not in made.split("never shrinks")[0], made
    assert "reclaimable" not in made.split("not reclaimable")[0], made
    tblock = text.split("\nfx/t_metrics.ibd  [innodb]", 1)[1].split("\n\n", 1)[0]
    assert "rebuilt " in tblock and "never shrinks" not in tblock

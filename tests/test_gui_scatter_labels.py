"""The what-if scatter's point names (issue 21, defect 7's leftover): in a tight cluster no
name covers a point marker or another name; a name moved away from its point gets a leader
line.  Checked by geometry: the placer alone on dense synthetic clusters, then the drawn
view (the TextItems' scene rectangles against the markers' scene positions) on a synthetic
cluster, after a resize, and on every target of the demo's what-if run."""
from __future__ import annotations

import random

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPointF

from dbxray.viz.labelplace import label_collisions, place_labels
from dbxray.viz.textfit import cut_texts, overlapping_texts
from dbxray.viz.whatif import WhatIfView


def _inside(box, area):
    return box[0] >= area[0] and box[1] >= area[1] and box[2] <= area[2] and box[3] <= area[3]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("where", ["middle", "right edge", "top left corner"])
def test_placer_on_a_dense_cluster(seed, where):
    rnd = random.Random(seed)
    area = (0.0, 0.0, 430.0, 300.0)
    cx, cy = {"middle": (200, 150), "right edge": (415, 150), "top left corner": (15, 15)}[where]
    pts = [(cx + rnd.uniform(-14, 14), cy + rnd.uniform(-14, 14)) for _ in range(12)]
    pts = [(min(max(x, 6), 424), min(max(y, 6), 294)) for x, y in pts]
    pts += [(60.0, 260.0), (380.0, 40.0), (62.0, 262.0)]                 # a few others, two touching
    names = [rnd.choice(["zstd:", "zlib:", "lzma:", "lz4", "snappy", "bzip2:"]) + str(rnd.randint(1, 19))
             for _ in pts]
    sizes = [(7.0 * len(n) + 4, 14.0) for n in names]
    placed = place_labels(pts, sizes, radius=7.0, area=area)
    boxes = [p.rect() for p in placed]
    assert label_collisions(pts, boxes, radius=7.0) == []
    assert all(_inside(b, area) for b in boxes)
    # a name beside its own marker needs no leader line; one further away has one
    for p, (x, y) in zip(placed, pts):
        gap = max(p.x - x, x - (p.x + p.w), p.y - y, y - (p.y + p.h))
        assert p.leader or gap <= 7.0 + 2.0 + 1e-6


def test_a_plot_too_small_leaves_names_out_never_over_something():
    pts = [(20.0 + 3 * i, 20.0 + 2 * i) for i in range(10)]
    placed = place_labels(pts, [(60.0, 14.0)] * 10, radius=7.0, area=(0.0, 0.0, 150.0, 80.0))
    shown = [p.rect() for p in placed if p.free]
    assert 0 < len(shown) < 10
    assert label_collisions(pts, shown, radius=7.0) == []
    assert all(_inside(b, (0.0, 0.0, 150.0, 80.0)) for b in shown)


def _results(points: list[tuple[str, float, float]]) -> dict:
    """A what-if document with one target whose codecs land at (ratio, decompress MB/s)."""
    cur = 1 << 20
    return {"kind": "whatif", "sample": {"mode": "fraction", "fraction": 0.05, "units_sampled": 10,
                                         "units_total": 200, "seed": 1},
            "fs_block": 4096, "advice": [],
            "targets": [{"target": "fx/t.ibd", "engine": "innodb", "current_bytes": cur, "logical_bytes": cur,
                         "results": [{"codec": c, "model": "", "projected_bytes": int(cur / r),
                                      "ci95": [int(cur / r * 0.98), int(cur / r * 1.02)],
                                      "compress_mb_s": s / 3, "decompress_mb_s": s} for c, r, s in points]}]}


def scatter_collisions(view: WhatIfView) -> list[str]:
    """The drawn names against the drawn markers and each other, in scene pixels."""
    sp = view.scatter.getPlotItem()
    vb = sp.getViewBox()
    scat = next(i for i in sp.items if isinstance(i, pg.ScatterPlotItem))
    radius = view.MARKER_PX / 2
    pts = []
    for spot in scat.points():
        p = vb.mapViewToScene(QPointF(spot.pos()))
        pts.append((p.x(), p.y()))
    boxes = []
    for t in [i for i in sp.items if isinstance(i, pg.TextItem) and i.isVisible()]:
        m = t.textItem.document().documentMargin()
        r = t.textItem.mapRectToScene(t.textItem.boundingRect().adjusted(m, m, -m, -m))
        boxes.append((r.left(), r.top(), r.right(), r.bottom()))
    area = vb.sceneBoundingRect()
    out = label_collisions(pts, boxes, radius)
    out += [f"name {i} outside the plot" for i, b in enumerate(boxes)
            if not _inside(b, (area.left() - 1, area.top() - 1, area.right() + 1, area.bottom() + 1))]
    assert len(boxes) + len(view.hidden_scatter_names) == len(pts)
    return out


CLUSTER = [("zstd:1", 3.10, 900.0), ("zstd:3", 3.20, 880.0), ("zstd:6", 3.25, 870.0), ("zstd:9", 3.28, 860.0),
           ("zstd:19", 3.31, 850.0), ("lz4", 2.40, 2600.0), ("snappy", 2.30, 2500.0), ("zlib:1", 3.00, 300.0),
           ("zlib:6", 3.05, 290.0), ("zlib:9", 3.06, 288.0), ("lzma:6", 3.60, 80.0), ("bzip2:9", 3.40, 40.0)]


def test_tight_cluster_in_the_view(qtbot, artifacts_dir):
    v = WhatIfView()
    qtbot.addWidget(v)
    v.resize(1100, 760)
    v.show()
    qtbot.waitExposed(v)
    v.set_results(_results(CLUSTER))
    qtbot.wait(100)
    assert scatter_collisions(v) == [] and v.hidden_scatter_names == []
    # the bars' labels too: inside their plot, none on another
    qtbot.waitUntil(lambda: not cut_texts(v.charts) and not overlapping_texts(v.charts), timeout=3000)
    leaders = [i for i in v.scatter.getPlotItem().items if isinstance(i, pg.PlotDataItem)
               and i in v.scatter_label_items]
    assert leaders, "some names of the cluster had to move away from their points"
    v.charts.grab().save(str(artifacts_dir / "whatif_scatter_cluster.png"))
    v.resize(760, 600)                  # the names are placed again for the new size
    qtbot.waitUntil(lambda: not scatter_collisions(v) and not cut_texts(v.charts)
                    and not overlapping_texts(v.charts), timeout=3000)
    v.charts.grab().save(str(artifacts_dir / "whatif_scatter_cluster_narrow.png"))


def test_every_target_of_the_demo(qtbot, tmp_path, artifacts_dir):
    from dbxray.app.demo import prepare_demo
    from dbxray.compress.whatif import run_whatif
    from dbxray.parsers.scan import scan
    demo, _ = prepare_demo(tmp_path / "cache")
    res = run_whatif(scan(str(demo)), None, sample="0.05", seed=1)
    v = WhatIfView()
    qtbot.addWidget(v)
    v.resize(1100, 760)
    v.show()
    qtbot.waitExposed(v)
    v.set_results(res)
    assert v.target.count() > 3
    checked = 0
    for i in range(v.target.count()):
        v.target.setCurrentIndex(i)
        for k in range(v.model.count()):
            v.model.setCurrentIndex(k)
            qtbot.wait(20)
            assert scatter_collisions(v) == [], (v.target.currentText(), v.model.currentText())
            assert overlapping_texts(v.charts) == [], (v.target.currentText(), v.model.currentText())
            checked += 1
    assert checked >= v.target.count()
    v.target.setCurrentIndex(0)
    qtbot.wait(50)
    v.charts.grab().save(str(artifacts_dir / "whatif_scatter_demo.png"))

"""The Sizes view's legend stays clear of the bars' value texts (it covered the last ones
when the last bars were as long as the first, as on a data dir of equal small tables)."""
from __future__ import annotations

import pyqtgraph as pg
import pytest

from dbxray.parsers.tree import Node
from dbxray.viz.sizebars import SizeBarsView


def _tree(sizes):
    root = Node(name="r", kind="root")
    db = root.child("InnoDB", "engine").child("db", "database")
    for i, (apparent, allocated) in enumerate(sizes):
        f = db.child(f"t{i:06d}", "table").child(f"t{i:06d}.ibd", "file")
        f.apparent, f.allocated, f.path = apparent, allocated, f"db/t{i:06d}.ibd"
        f.holes = max(0, apparent - allocated)
    root.roll_up()
    return root


@pytest.mark.parametrize("sizes", [[(81920, 81920)] * 40,
                                   [(2**20 * (30 - i), 2**20 * (30 - i) - (i % 3) * 2**19) for i in range(30)],
                                   [(5 * 2**20, 4 * 2**20), (2**20, 2**20)]])
@pytest.mark.parametrize("width,height", [(900, 420), (900, 700), (560, 700)])
def test_legend_covers_no_value_text(qtbot, sizes, width, height):
    v = SizeBarsView()
    qtbot.addWidget(v)
    v.resize(width, height)
    v.set_tree(_tree(sizes))
    v.show()
    qtbot.waitExposed(v)
    v._fit_x()
    qtbot.wait(50)
    legend = v.legend.sceneBoundingRect()
    texts = [i for i in v.plot.items if isinstance(i, pg.TextItem)]
    assert len(texts) == min(len(sizes), 25) and legend.height() > 0
    plot = v.plot.getViewBox().sceneBoundingRect()
    assert plot.left() <= legend.left() and legend.right() <= plot.right() + 1
    for t in texts:
        assert not legend.intersects(t.sceneBoundingRect()), t.toPlainText()

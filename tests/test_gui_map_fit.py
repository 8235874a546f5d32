"""The extent map fills its view with square-ish cells at every size (issue 21, defects
5 and 6): a 20-page file is a block of big cells, ibdata1 (640 pages) most of the plot,
a long file keeps one extent a row and scrolls; Fit after a resize and after a colour
mode with a colour bar shows every page of every row; exports hold the chart only
(no hint text, no splitter handle) and an SVG declares its size in CSS pixels."""
import re

import pytest
from PySide6.QtWidgets import QLabel, QSplitterHandle

from dbxray.parsers.scan import scan
from dbxray.parsers.tree import build_tree
from dbxray.viz.export import chart_only, export_svg
from dbxray.viz.extentmap import ExtentMapView


@pytest.fixture(scope="module")
def datasets(sparse_fixtures):
    out = {}
    for key, path, name in (("small", sparse_fixtures / "innodb" / "16k" / "fx" / "t_pc_zlib.ibd", "t_pc_zlib.ibd"),
                            ("ibdata1", sparse_fixtures / "innodb" / "datadir16k", "ibdata1")):
        ds = scan(str(path))
        out[key] = (ds, build_tree(ds), next(f for f in ds.files if f.path.endswith(name)))
    return out


def _view(qtbot, datasets, key, size):
    ds, root, entry = datasets[key]
    v = ExtentMapView()
    qtbot.addWidget(v)
    v.resize(*size)
    v.show()
    qtbot.waitExposed(v)
    v.set_dataset(ds, root)
    v._set_files([entry], entry)
    qtbot.wait(50)
    return v


def _map_geometry(v):
    """(cell width px, cell height px, fraction of the plot's width, of its height) the cells cover."""
    d = v.data
    (x0, x1), (y0, y1) = v.vb.viewRange()
    cw = v.vb.width() / (x1 - x0)
    ch = v.vb.height() / (y1 - y0)
    used_w = min(d.cols, x1 + 0.5) - max(0, x0 + 0.5) if x1 > x0 else 0
    used_h = min(d.rows, y1 + 0.5) - max(0, y0 + 0.5)
    return cw, ch, used_w * cw / v.vb.width(), used_h * ch / v.vb.height()


@pytest.mark.parametrize("size", [(560, 560), (900, 700), (1400, 900)])
@pytest.mark.parametrize("key", ["small", "ibdata1"])
def test_fit_fills_the_view_with_square_cells(qtbot, datasets, key, size):
    v = _view(qtbot, datasets, key, size)
    cw, ch, fw, fh = _map_geometry(v)
    assert 0.8 <= cw / ch <= 1.25, (cw, ch)
    assert max(fw, fh) >= 0.7, (key, size, fw, fh, v.data.cols, v.data.rows)      # not a strip
    assert cw >= 8, cw
    # every page is in view and reachable by the mouse
    last = v.data.n_pages - 1
    assert v.page_at_scene(v.glw.mapToScene(v.page_center_in_widget(last))) == last


def test_fit_follows_a_resize(qtbot, datasets):
    v = _view(qtbot, datasets, "small", (1400, 900))
    v.resize(600, 450)
    qtbot.wait(100)
    cw, ch, fw, fh = _map_geometry(v)
    assert 0.8 <= cw / ch <= 1.25 and max(fw, fh) >= 0.7, (cw, ch, fw, fh)


def test_colour_bar_mode_refits_every_page_in_view(qtbot, datasets):
    v = _view(qtbot, datasets, "ibdata1", (900, 700))
    v.set_mode("lsn")
    qtbot.wait(100)
    assert v.colorbar is not None
    (x0, x1), _ = v.vb.viewRange()
    assert x0 <= -0.5 + 1e-6 and x1 >= v.data.cols - 0.5, (x0, x1, v.data.cols)


def test_export_holds_the_chart_only(qtbot, datasets, tmp_path):
    v = _view(qtbot, datasets, "small", (1000, 700))
    w = v.export_widget()
    assert v.hint not in w.findChildren(QLabel)
    handles = [h for h in w.findChildren(QSplitterHandle) if h.isVisible()]
    assert handles
    with chart_only(w):
        assert not any(h.isVisible() for h in handles)
    assert all(h.isVisible() for h in handles)
    out = tmp_path / "m.svg"
    assert export_svg(w, str(out), 690, 500)
    head = out.read_text()[:400]
    width_mm = float(re.search(r'width="([0-9.]+)mm"', head).group(1))
    assert abs(width_mm / 25.4 * 96 - 690) < 1, head          # 690 px at 96 dpi, not 920

"""Export of views to PNG/SVG and the HTML report, headless, from the CLI."""
import base64
import re
import xml.etree.ElementTree as ET

from PySide6.QtGui import QImage

from dbxray.app.cli import main


def test_export_png_and_svg(sparse_fixtures, tmp_path, capsys, qapp):
    png = tmp_path / "sizes.png"
    assert main(["export", str(sparse_fixtures / "innodb" / "16k"), "--view", "sizes", "-o", str(png),
                 "--width", "1200", "--height", "700", "--dpi", "192"]) == 0
    img = QImage(str(png))
    assert img.width() == 2400 and img.height() == 1400
    svg = tmp_path / "sizes.svg"
    assert main(["export", str(sparse_fixtures / "innodb" / "16k"), "--view", "sizes", "-o", str(svg)]) == 0
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    assert "t_pc_zlib" in svg.read_text()   # labels stay text in the vector output


def test_export_bad_usage(sparse_fixtures, tmp_path, capsys, qapp):
    assert main(["export", str(sparse_fixtures / "innodb" / "16k"), "--view", "nope", "-o",
                 str(tmp_path / "x.png")]) == 2
    assert main(["export", str(sparse_fixtures / "innodb" / "16k"), "--view", "sizes", "-o",
                 str(tmp_path / "x.gif")]) == 2
    assert main(["export", str(tmp_path / "missing"), "--view", "sizes", "-o", str(tmp_path / "x.png")]) == 1


def test_report_html_self_contained(sparse_fixtures, tmp_path, capsys, qapp):
    out = tmp_path / "report.html"
    assert main(["report", str(sparse_fixtures / "innodb" / "16k"), "-o", str(out), "--no-whatif"]) == 0
    text = out.read_text()
    assert str(sparse_fixtures / "innodb" / "16k") in text and "dbxray" in text
    imgs = re.findall(r'src="data:image/png;base64,([^"]+)"', text)
    assert imgs, "report holds no images"
    for b in imgs:
        assert base64.b64decode(b)[:8] == b"\x89PNG\r\n\x1a\n"
    assert "fx.t_pc_zlib" in text and "<table>" in text
    assert "http://" not in text and "https://" not in text   # nothing fetched from elsewhere


import pytest  # noqa: E402

VIEW_INPUTS = [("sizes", "innodb/16k"), ("extent-map", "innodb/16k"), ("holes", "innodb/16k"),
               ("columns", "clickhouse/datadir"), ("tokudb", "tokudb/datadir"), ("whatif", "innodb/4k")]


@pytest.mark.parametrize("view,folder", VIEW_INPUTS, ids=[v for v, _ in VIEW_INPUTS])
def test_every_view_exports_at_the_requested_size_and_dpi(view, folder, sparse_fixtures, tmp_path, capsys, qapp):
    """`dbxray export --width W --height H --dpi D`: the PNG is W*D/96 x H*D/96 pixels for
    every view (the extent map used to come out at its own size), with the DPI recorded;
    the SVG declares W x H."""
    png = tmp_path / f"{view}.png"
    assert main(["export", str(sparse_fixtures / folder), "--view", view, "-o", str(png),
                 "--width", "900", "--height", "600", "--dpi", "144"]) == 0
    img = QImage(str(png))
    assert (img.width(), img.height()) == (1350, 900)
    assert round(img.dotsPerMeterX() * 0.0254) == 144
    # not blank: more than a handful of colours drawn
    colours = {img.pixel(x, y) for x in range(0, 1350, 9) for y in range(0, 900, 9)}
    assert len(colours) > 8
    if view in ("extent-map", "columns"):
        svg = tmp_path / f"{view}.svg"
        assert main(["export", str(sparse_fixtures / folder), "--view", view, "-o", str(svg),
                     "--width", "700", "--height", "500"]) == 0
        root = ET.parse(svg).getroot()
        assert root.get("width").startswith("700") or root.get("viewBox") == "0 0 700 500"


def test_export_rejects_silly_sizes(sparse_fixtures, tmp_path, capsys, qapp):
    assert main(["export", str(sparse_fixtures / "innodb" / "16k"), "--view", "sizes", "-o",
                 str(tmp_path / "x.png"), "--width", "0"]) == 2


def test_export_options_dialog(qapp):
    from dbxray.viz.export import ExportOptionsDialog
    d = ExportOptionsDialog(1000, 600, 192)
    assert d.png_size() == (2000, 1200)
    d.width_box.setValue(800)
    d.dpi_box.setValue(96)
    assert d.values() == (800, 600, 96) and d.png_size() == (800, 600)
    assert "800 × 600" in d.pixels.text()


def test_export_below_the_minimum_size_still_gives_the_asked_pixels(sparse_fixtures, tmp_path, capsys, qapp):
    """A size the view's layout cannot shrink to is drawn at its minimum and scaled down:
    the PNG still has exactly the pixels asked for."""
    png = tmp_path / "small.png"
    assert main(["export", str(sparse_fixtures / "innodb" / "16k"), "--view", "extent-map", "-o", str(png),
                 "--width", "320", "--height", "200", "--dpi", "96"]) == 0
    img = QImage(str(png))
    assert (img.width(), img.height()) == (320, 200)
    assert len({img.pixel(x, y) for x in range(0, 320, 4) for y in range(0, 200, 4)}) > 8

"""Export of views to PNG/SVG and the HTML report, headless, from the CLI."""
import base64
import re
import xml.etree.ElementTree as ET

from PySide6.QtGui import QImage

from app.cli import main


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

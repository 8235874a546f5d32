"""Rendering any view to PNG (chosen size and DPI), SVG (vector, through
QSvgGenerator) or the clipboard, for reports."""
from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgGenerator
from contextlib import contextmanager

from PySide6.QtWidgets import (QApplication, QDialog, QDialogButtonBox, QFormLayout, QLabel, QSpinBox,
                               QSplitterHandle, QWidget)


def _settle() -> None:
    for _ in range(5):
        QApplication.processEvents()


@contextmanager
def chart_only(widget: QWidget):
    """While exporting: the splitter handles inside ``widget`` not drawn (an export is the
    chart, its title, axes and legend, not the window's furniture)."""
    handles = [h for h in widget.findChildren(QSplitterHandle) if h.isVisible()]
    for h in handles:
        h.setVisible(False)
    try:
        yield
    finally:
        for h in handles:
            h.setVisible(True)


def render_image(widget: QWidget, width: int | None = None, height: int | None = None,
                 scale: float = 1.0) -> QImage:
    """The widget drawn at ``width`` x ``height`` logical pixels, ``scale`` device pixels each:
    the image is exactly ``round(width * scale)`` x ``round(height * scale)``.  A size below
    the widget's minimum (its layout cannot shrink further) is drawn at the smallest size
    the layout allows, then scaled down to fit, centred on the background colour."""
    old = widget.size()
    if width and height:
        widget.resize(width, height)
        _settle()
    size = widget.size()
    bg = widget.palette().window().color()
    img = QImage(round(size.width() * scale), round(size.height() * scale), QImage.Format_ARGB32)
    img.setDevicePixelRatio(scale)
    img.fill(bg)
    painter = QPainter(img)
    painter.setRenderHint(QPainter.Antialiasing)
    painter.setRenderHint(QPainter.TextAntialiasing)
    with chart_only(widget):
        widget.render(painter, QPoint(0, 0))
    painter.end()
    if width and height:
        widget.resize(old)
        _settle()
        tw, th = round(width * scale), round(height * scale)
        if (img.width(), img.height()) != (tw, th):
            fitted = img.scaled(tw, th, Qt.KeepAspectRatio, Qt.SmoothTransformation)
            out = QImage(tw, th, QImage.Format_ARGB32)
            out.fill(bg)
            p = QPainter(out)
            p.drawImage((tw - fitted.width()) // 2, (th - fitted.height()) // 2, fitted)
            p.end()
            out.setDevicePixelRatio(scale)
            img = out
    return img


def export_png(widget: QWidget, path: str, width: int | None = None, height: int | None = None,
               dpi: int = 96) -> bool:
    """PNG at ``dpi`` (96 = 1 device pixel per logical pixel; 192 = 2x for print)."""
    scale = max(dpi, 24) / 96.0
    img = render_image(widget, width, height, scale)
    img.setDotsPerMeterX(int(dpi / 0.0254))
    img.setDotsPerMeterY(int(dpi / 0.0254))
    return img.save(path, "PNG")


def export_svg(widget: QWidget, path: str, width: int | None = None, height: int | None = None,
               title: str = "dbxray") -> bool:
    """A vector SVG of the widget (text stays text, lines stay lines)."""
    old = widget.size()
    if width and height:
        widget.resize(width, height)
        _settle()
    size = widget.size()
    gen = QSvgGenerator()
    gen.setFileName(path)
    # the declared size is the one asked for (the view box is what the layout could do)
    gen.setSize(QSize(width, height) if width and height else QSize(size.width(), size.height()))
    gen.setViewBox(QRect(0, 0, size.width(), size.height()))
    gen.setResolution(96)        # the declared size in px at CSS's 96 per inch (Qt's default 72 scales it by 4/3)
    gen.setTitle(title)
    gen.setDescription("exported by dbxray")
    painter = QPainter()
    if not painter.begin(gen):
        return False
    with chart_only(widget):
        widget.render(painter, QPoint(0, 0))
    painter.end()
    if width and height:
        widget.resize(old)
        _settle()
    return True


class ExportOptionsDialog(QDialog):
    """Size (logical pixels) and resolution of a PNG export; SVG takes the size only."""

    def __init__(self, width: int, height: int, dpi: int = 192, png: bool = True, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Export PNG" if png else "Export SVG")
        self.width_box = QSpinBox()
        self.width_box.setRange(16, 20000)
        self.width_box.setValue(width)
        self.width_box.setSuffix(" px")
        self.height_box = QSpinBox()
        self.height_box.setRange(16, 20000)
        self.height_box.setValue(height)
        self.height_box.setSuffix(" px")
        self.dpi_box = QSpinBox()
        self.dpi_box.setRange(24, 1200)
        self.dpi_box.setSingleStep(48)
        self.dpi_box.setValue(dpi)
        self.dpi_box.setSuffix(" dpi")
        self.dpi_box.setToolTip("96 = screen (1 pixel per logical pixel), 192 = 2x for print")
        self.pixels = QLabel()
        form = QFormLayout(self)
        form.addRow("Width:", self.width_box)
        form.addRow("Height:", self.height_box)
        if png:
            form.addRow("Resolution:", self.dpi_box)
            form.addRow("PNG size:", self.pixels)
        for b in (self.width_box, self.height_box, self.dpi_box):
            b.valueChanged.connect(self._update)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self._update()

    def _update(self) -> None:
        w, h = self.png_size()
        self.pixels.setText(f"{w:,} × {h:,} pixels")

    def values(self) -> tuple[int, int, int]:
        return self.width_box.value(), self.height_box.value(), self.dpi_box.value()

    def png_size(self) -> tuple[int, int]:
        w, h, dpi = self.values()
        return round(w * dpi / 96.0), round(h * dpi / 96.0)


def copy_to_clipboard(widget: QWidget) -> None:
    QGuiApplication.clipboard().setImage(render_image(widget, scale=widget.devicePixelRatioF()))

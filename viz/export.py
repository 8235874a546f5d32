"""Rendering any view to PNG (chosen size and DPI), SVG (vector, through
QSvgGenerator) or the clipboard, for reports."""
from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QApplication, QWidget


def _settle() -> None:
    for _ in range(5):
        QApplication.processEvents()


def render_image(widget: QWidget, width: int | None = None, height: int | None = None,
                 scale: float = 1.0) -> QImage:
    """The widget drawn at ``width`` x ``height`` logical pixels, ``scale`` device pixels each."""
    old = widget.size()
    if width and height:
        widget.resize(width, height)
        _settle()
    size = widget.size()
    img = QImage(int(size.width() * scale), int(size.height() * scale), QImage.Format_ARGB32)
    img.setDevicePixelRatio(scale)
    img.fill(widget.palette().window().color())
    painter = QPainter(img)
    painter.setRenderHint(QPainter.Antialiasing)
    painter.setRenderHint(QPainter.TextAntialiasing)
    widget.render(painter, QPoint(0, 0))
    painter.end()
    if width and height:
        widget.resize(old)
        _settle()
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
    gen.setSize(QSize(size.width(), size.height()))
    gen.setViewBox(QRect(0, 0, size.width(), size.height()))
    gen.setTitle(title)
    gen.setDescription("exported by dbxray")
    painter = QPainter()
    if not painter.begin(gen):
        return False
    widget.render(painter, QPoint(0, 0))
    painter.end()
    if width and height:
        widget.resize(old)
        _settle()
    return True


def copy_to_clipboard(widget: QWidget) -> None:
    QGuiApplication.clipboard().setImage(render_image(widget, scale=widget.devicePixelRatioF()))

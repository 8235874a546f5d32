"""Colours and pyqtgraph setup shared by every view (light and dark)."""
from __future__ import annotations

import os

os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

import pyqtgraph as pg  # noqa: E402
from PySide6.QtGui import QColor, QGuiApplication, QPalette  # noqa: E402

pg.setConfigOptions(imageAxisOrder="row-major", antialias=True)

#: Distinct, colour-blind-friendly categorical colours (Okabe-Ito + Tableau extras)
CATEGORICAL = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
               "#999999", "#4E79A7", "#F28E2B", "#59A14F", "#B07AA1", "#76B7B2", "#EDC948",
               "#FF9DA7", "#9C755F", "#BAB0AC", "#E15759"]

APPARENT = "#B0BEC5"
ALLOCATED = "#1E88E5"
HOLES = "#FFB300"
UNWRITTEN = "#FFE0B2"      # allocated by fallocate, never written (reads as zeros)
PAST_EOF = "#8E24AA"       # allocated beyond the file size (XFS speculative preallocation)
MISSING_HOLE = "#E53935"
LOGICAL = "#43A047"


def is_dark() -> bool:
    app = QGuiApplication.instance()
    if app is None:
        return False
    return app.palette().color(QPalette.Window).lightness() < 128


def foreground() -> str:
    return "#E0E0E0" if is_dark() else "#212121"


def background() -> str:
    return "#1E1E1E" if is_dark() else "#FFFFFF"


def style_plot(plot: pg.PlotItem) -> None:
    """Readable axes for reports: dark text on white (or the reverse in dark mode)."""
    fg = foreground()
    for name in ("left", "bottom", "right", "top"):
        ax = plot.getAxis(name)
        ax.setPen(pg.mkPen(fg))
        ax.setTextPen(pg.mkPen(fg))


def qcolor(hexstr: str, alpha: int = 255) -> QColor:
    c = QColor(hexstr)
    c.setAlpha(alpha)
    return c

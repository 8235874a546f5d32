"""Keyboard zoom (Ctrl++, Ctrl+-, Ctrl+0) for any view.

A view with ``zoom(factor)`` does its own (factor > 1 zooms in, < 1 out,
None back to its fitted range); otherwise every visible pyqtgraph ViewBox in
it is scaled about its centre (reset: auto range), and other graphics views
(the treemap) are scaled and reset by their transform.
"""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QGraphicsView, QWidget


def view_boxes(widget: QWidget) -> list[pg.ViewBox]:
    """The visible ViewBoxes of a widget's visible pyqtgraph widgets."""
    out = []
    for gv in widget.findChildren(pg.GraphicsView):
        if not gv.isVisible() or gv.scene() is None:
            continue
        for item in gv.scene().items():
            if isinstance(item, pg.ViewBox) and item.isVisible() and item not in out:
                out.append(item)
    return out


def zoom_view(view: QWidget, factor: float | None) -> int:
    """Zoom ``view``; returns how many plots (or graphics views) were zoomed."""
    if hasattr(view, "zoom"):
        view.zoom(factor)
        return 1
    n = 0
    for vb in view_boxes(view):
        if factor is None:
            vb.autoRange()
        else:
            vb.scaleBy((1.0 / factor, 1.0 / factor))
        n += 1
    for gv in view.findChildren(QGraphicsView):
        if isinstance(gv, pg.GraphicsView) or not gv.isVisible():
            continue
        if factor is None:
            gv.resetTransform()
        else:
            gv.scale(factor, factor)
        n += 1
    return n


__all__ = ["zoom_view", "view_boxes"]

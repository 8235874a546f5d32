"""The centre views of the window, found by module and class name.

A view is a QWidget class with:

* ``title`` (tab text) and ``view_id`` (used by ``dbxray export --view ID``);
* ``set_dataset(dataset, root)``: redraw for a scanned dataset (``root`` is the
  :class:`parsers.tree.Node` tree the window shows);
* optionally ``select_node(node)``: the tree selection changed (highlight it);
* optionally a ``node_selected = Signal(object)`` it emits with a tree Node
  (e.g. the index of a clicked page) so the window selects it in the tree;
* optionally ``export_widget()``: the widget to render for PNG/SVG export
  (default: the view itself), and ``set_target(text)`` for ``--target``.

No business logic in views: they draw what the parsers and the compressor
layer computed.
"""
from __future__ import annotations

import importlib

#: (module, class) in tab order; a module that is not there yet is skipped
VIEW_CLASSES = [
    ("dbxray.viz.sizebars", "SizeBarsView"),
    ("dbxray.viz.extentmap", "ExtentMapView"),
    ("dbxray.viz.holes", "HolesView"),
    ("dbxray.viz.columns", "ColumnSizesView"),
    ("dbxray.viz.tokudb", "TokuDBView"),
    ("dbxray.viz.whatif", "WhatIfView"),
]


#: views that failed to load: "module: error" (shown in the window's errors panel)
VIEW_ERRORS: list[str] = []


def view_classes() -> list[type]:
    """The view classes that load; a view that fails to import is reported in
    VIEW_ERRORS and left out, so one broken view never stops the app."""
    out = []
    VIEW_ERRORS.clear()
    for modname, clsname in VIEW_CLASSES:
        try:
            mod = importlib.import_module(modname)
        except ModuleNotFoundError as e:
            if e.name == modname:
                continue
            VIEW_ERRORS.append(f"{modname}: {type(e).__name__}: {e}")
            continue
        except Exception as e:  # noqa: BLE001 - a view bug must not stop the app
            VIEW_ERRORS.append(f"{modname}: {type(e).__name__}: {e}")
            continue
        cls = getattr(mod, clsname, None)
        if cls is not None:
            out.append(cls)
    return out

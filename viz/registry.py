"""The centre views of the window, in tab order.

A view is a QWidget class with:

* ``title`` (tab text) and ``view_id`` (used by ``dbxray export --view ID``);
* ``set_dataset(dataset, root)``: redraw for a scanned dataset (``root`` is the
  :class:`parsers.tree.Node` tree the window shows);
* optionally ``select_node(node)``: the tree selection changed (highlight it);
* optionally a ``node_selected = Signal(object)`` it emits with a tree Node
  (e.g. the index of a clicked page) so the window selects it in the tree;
* optionally ``export_widget()``: the widget to render for PNG/SVG export
  (default: the view itself), and ``set_target(text)`` for ``--target``;
* ``engine``: the engine whose files it draws (None: any dataset); an engine's
  own views are listed here beside the generic ones, one line each; optionally
  ``shows(dataset)``: whether it has anything to draw (the report leaves it out).
* optionally ``reads_deferred = True``: it draws what a light first scan leaves for
  later (``Engine.deferred``: ClickHouse's blocks), so a headless export of it completes
  the scan first (``parsers.scan.complete``); the other views draw a light scan as it is.

No business logic in views: they draw what the parsers and the compressor
layer computed.
"""
from __future__ import annotations

#: (module, class) in tab order, imported one by one so that a view that fails
#: to load is reported (VIEW_ERRORS) and left out: one broken view never stops the app
VIEW_CLASSES = [
    ("sizebars", "SizeBarsView"),
    ("extentmap", "ExtentMapView"),
    ("holes", "HolesView"),
    ("columns", "ColumnSizesView"),
    ("tokudb", "TokuDBView"),
    ("lsm", "LsmView"),
    ("whatif", "WhatIfView"),
    ("compare", "CompareView"),
]

#: views that failed to load: "module: error" (shown in the window's errors panel)
VIEW_ERRORS: list[str] = []


def _import(module: str):
    """One view module of this package (each named here, none looked up by string)."""
    if module == "sizebars":
        from . import sizebars as mod
    elif module == "extentmap":
        from . import extentmap as mod
    elif module == "holes":
        from . import holes as mod
    elif module == "columns":
        from . import columns as mod
    elif module == "tokudb":
        from . import tokudb as mod
    elif module == "lsm":
        from . import lsm as mod
    elif module == "whatif":
        from . import whatif as mod
    elif module == "compare":
        from . import compare as mod
    else:
        raise ValueError(f"no view module {module!r}")
    return mod


def view_classes() -> list[type]:
    """The view classes that load, in tab order."""
    out = []
    VIEW_ERRORS.clear()
    for module, clsname in VIEW_CLASSES:
        try:
            mod = _import(module)
        except Exception as e:  # noqa: BLE001 - a view bug must not stop the app
            VIEW_ERRORS.append(f"dbxray.viz.{module}: {type(e).__name__}: {e}")
            continue
        cls = getattr(mod, clsname, None)
        if cls is not None:
            out.append(cls)
    return out


def view_shows(cls: type, dataset) -> bool:
    """Whether a view has anything to draw for ``dataset``: its engine is in the dataset
    and its own ``shows`` (when it has one) says yes.  The window hides the other tabs,
    the report leaves them out."""
    shows = getattr(cls, "shows", None)
    if shows is not None and not shows(dataset):
        return False
    need = getattr(cls, "engine", None)
    return need is None or need in set(dataset.engines)

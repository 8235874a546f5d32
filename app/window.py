"""The main window: tree on the left, views in the centre, inspector on the
right, errors at the bottom, scan progress and Cancel in the status bar."""
from __future__ import annotations

import html
import json
import os
import time

from PySide6.QtCore import QEvent, QSettings, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (QAbstractItemView, QDockWidget, QFileDialog, QHeaderView, QLabel,
                               QLineEdit, QListWidget, QMainWindow, QMenu, QProgressBar, QPushButton,
                               QSplitter, QStackedWidget, QTabWidget, QTextBrowser, QTreeView, QVBoxLayout,
                               QWidget)

from typing import TYPE_CHECKING

from dbxray.parsers.humanize import human_bytes, percent

if TYPE_CHECKING:       # the parsers (numpy, every engine) are imported by the scan job, not at start-up
    from dbxray.parsers.model import Dataset
    from dbxray.parsers.tree import Node

from dbxray.app import __version__
from dbxray.app.tablecsv import model_csv, row_text, view_columns
from dbxray.app.treemodel import CH_COLUMNS, NODE_ROLE, DatasetTreeModel, ListingTree, find_key, node_key
from dbxray.app.workers import Job, scan_job

MAX_RECENT = 10


class MainWindow(QMainWindow):
    dataset_loaded = Signal(object)
    #: the scan is over: the dataset as final as it gets (after the deferred block walk, or the
    #: first scan's when nothing was deferred or the walk was cancelled or failed)
    scan_done = Signal(object)
    node_selected = Signal(object)
    report_written = Signal(str)

    def __init__(self, settings: QSettings | None = None):
        super().__init__()
        self.settings = settings or QSettings("dbxray", "dbxray")
        self.dataset: Dataset | None = None
        self.keys = None                 # KeyRing of File › Key File… (memory only)
        self.key_messages: list[str] = []
        self.keys_note = ""
        self.tree_root: Node | None = None
        self.job: Job | None = None
        self.current_path: str | None = None
        self._scan_started = 0.0
        from dbxray.app import timing
        self._timing = bool(os.environ.get(timing.ENV))      # first-paint marks for benchmarks
        self._timing_done: set[str] = set()
        self._complete_due = False
        self.setWindowTitle("dbxray")
        self.setAcceptDrops(True)
        self.resize(1400, 860)

        # tree
        # the model sorts and filters itself and hands rows to the view in batches (lazy)
        self.model = DatasetTreeModel(parent=self)
        self.listing: ListingTree | None = None       # the file listing shown while the scan runs
        self.tree = QTreeView()
        self.tree.setObjectName("tree")
        self.tree.setModel(self.model)
        self.tree.setSortingEnabled(True)
        self.tree.sortByColumn(2, Qt.DescendingOrder)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSelectionMode(QAbstractItemView.SingleSelection)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.Interactive)
        header.resizeSection(0, 170)        # then sized to the names by fit_name_column
        self.tree.setTextElideMode(Qt.ElideMiddle)      # a cut name keeps its start and its end
        self.tree.viewport().installEventFilter(self)
        # one fit for many expansions (expandToDepth at 20,000 tables expands hundreds of rows)
        self._fit_timer = QTimer(self)
        self._fit_timer.setSingleShot(True)
        self._fit_timer.setInterval(0)
        self._fit_timer.timeout.connect(self.fit_name_column)
        self.tree.expanded.connect(lambda _: self._fit_timer.start())
        # size columns as wide as their widest possible text ("1023.9 MiB"), set once: sizing
        # them to their contents walks up to 1,000 rows per column at every change of the tree
        fm = self.tree.fontMetrics()
        for c, name in enumerate(self.model.headers()):
            if c == 0:
                continue
            sample = "99999" if name == "Errors" else "≈ 1023.9 MiB"
            header.setSectionResizeMode(c, QHeaderView.Interactive)
            header.resizeSection(c, max(fm.horizontalAdvance(sample), fm.horizontalAdvance(name)) + 24)
        for c in CH_COLUMNS:
            self.tree.setColumnHidden(c, True)
        self.tree.selectionModel().currentChanged.connect(self._on_current_changed)
        self.filter_edit = QLineEdit()
        self.filter_edit.setObjectName("filter")
        self.filter_edit.setPlaceholderText("Filter (table, file, index)…")
        self.filter_edit.setClearButtonEnabled(True)
        # filtered when typing pauses: each filter of a 20,000-table tree walks every row
        self._filter_timer = QTimer(self)
        self._filter_timer.setSingleShot(True)
        self._filter_timer.setInterval(250)
        self._filter_timer.timeout.connect(lambda: self._on_filter(self.filter_edit.text()))
        self.filter_edit.textChanged.connect(lambda _t: self._filter_timer.start())
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        ll.addWidget(self.filter_edit)
        ll.addWidget(self.tree)

        # views: made when there is something to draw (ensure_views), not at start-up: the window
        # is shown and usable before pyqtgraph and the view modules are imported
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self._views: list | None = None
        self._extent_map = None
        self.page_inspector = None

        # the centre: a message while there is nothing to draw (no scan yet, scanning), then the tabs
        self.placeholder = QLabel()
        self.placeholder.setObjectName("placeholder")
        self.placeholder.setAlignment(Qt.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.placeholder.setStyleSheet("color: #616161; font-size: 13pt")
        self.centre = QStackedWidget()
        self.centre.addWidget(self.placeholder)
        self.centre.addWidget(self.tabs)
        self.show_placeholder("Open a data directory (Ctrl+O), a file (Ctrl+Shift+O) or drop one here")

        split = QSplitter(Qt.Horizontal)
        split.addWidget(left)
        split.addWidget(self.centre)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 5)
        split.setSizes([330, 700])
        split.setChildrenCollapsible(False)
        left.setMinimumWidth(200)
        self.splitter = split
        self.setCentralWidget(split)

        # inspector on the right, shared by every view: the selected node's facts on top,
        # the clicked page (header fields, coloured hex) below
        self.inspector = QTextBrowser()
        self.inspector.setOpenExternalLinks(False)
        self.inspector_split = QSplitter(Qt.Vertical)
        self.inspector_split.addWidget(self.inspector)      # the page inspector joins it with the views
        self.inspector_split.setChildrenCollapsible(False)
        self.inspector_dock = QDockWidget("Inspector", self)
        self.inspector_dock.setObjectName("inspector")
        self.inspector_dock.setWidget(self.inspector_split)
        self.inspector_dock.setFeatures(QDockWidget.DockWidgetMovable | QDockWidget.DockWidgetFloatable
                                        | QDockWidget.DockWidgetClosable)
        self.addDockWidget(Qt.RightDockWidgetArea, self.inspector_dock)
        self.setCorner(Qt.BottomRightCorner, Qt.RightDockWidgetArea)     # inspector: full height
        self.inspector_split.setMinimumWidth(250)
        self._docks_sized = False

        # errors
        self.errors = QListWidget()
        self.errors.setAlternatingRowColors(True)
        self.errors_dock = QDockWidget("Errors", self)
        self.errors_dock.setObjectName("errors")
        self.errors_dock.setWidget(self.errors)
        self.errors_dock.setFeatures(QDockWidget.DockWidgetMovable | QDockWidget.DockWidgetFloatable
                                     | QDockWidget.DockWidgetClosable)
        self.addDockWidget(Qt.BottomDockWidgetArea, self.errors_dock)

        # status bar: message, progress, cancel
        self.status_label = QLabel("Open a data directory (Ctrl+O) or drop one here")
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(260)
        self.progress.setVisible(False)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(self.cancel_scan)
        # the hovered unit's facts (extent map), in place of the message while the mouse rests on it
        self.hover_label = QLabel("")
        self.hover_label.setObjectName("hover_facts")
        self.hover_label.setVisible(False)
        sb = self.statusBar()
        sb.addWidget(self.status_label, 1)
        sb.addWidget(self.hover_label, 1)
        sb.addPermanentWidget(self.progress)
        sb.addPermanentWidget(self.cancel_button)

        self._make_actions()
        self._make_context_menus()
        from dbxray.app.shortcuts import WindowShortcuts
        self.shortcuts = WindowShortcuts(self)
        from dbxray.app import statedump
        self.state_dump = statedump.install(self)
        geo = self.settings.value("window/geometry")
        if geo is not None:
            self.restoreGeometry(geo)

    # -- menus ----------------------------------------------------------------
    def _make_actions(self) -> None:
        m = self.menuBar().addMenu("&File")
        self.open_dir_action = QAction("Open &Folder…", self, shortcut=QKeySequence.Open,
                                       triggered=self.open_folder_dialog)
        self.open_file_action = QAction("Open F&ile…", self, shortcut=QKeySequence("Ctrl+Shift+O"),
                                        triggered=self.open_file_dialog)
        self.rescan_action = QAction("&Rescan", self, shortcut=QKeySequence.Refresh, triggered=self.rescan)
        self.save_scan_action = QAction("&Save Scan As…", self, shortcut=QKeySequence.Save,
                                        triggered=self.save_scan_dialog)
        self.key_file_action = QAction("&Key File…", self, triggered=self.key_file_dialog)
        self.quit_action = QAction("&Quit", self, shortcut=QKeySequence.Quit, triggered=self.close)
        m.addAction(self.open_dir_action)
        m.addAction(self.open_file_action)
        self.recent_menu = m.addMenu("Open &Recent")
        m.addAction(self.rescan_action)
        m.addAction(self.save_scan_action)
        m.addAction(self.key_file_action)
        m.addSeparator()
        m.addAction(self.quit_action)
        x = self.menuBar().addMenu("&Export")
        self.export_png_action = QAction("Export View as &PNG…", self, shortcut=QKeySequence("Ctrl+E"),
                                         triggered=lambda: self.export_view_dialog("png"))
        self.export_svg_action = QAction("Export View as &SVG…", self, shortcut=QKeySequence("Ctrl+Shift+E"),
                                         triggered=lambda: self.export_view_dialog("svg"))
        self.copy_view_action = QAction("&Copy View to Clipboard", self, shortcut=QKeySequence("Ctrl+Shift+C"),
                                        triggered=self.copy_view)
        self.report_action = QAction("Export &Report (HTML)…", self, shortcut=QKeySequence("Ctrl+R"),
                                     triggered=self.export_report_dialog)
        for a in (self.export_png_action, self.export_svg_action, self.copy_view_action, self.report_action):
            x.addAction(a)
        v = self.menuBar().addMenu("&View")
        self.find_action = QAction("&Find…", self, shortcut=QKeySequence.Find,
                                   triggered=lambda: self.filter_edit.setFocus())
        self.goto_page_action = QAction("&Go to Page…", self, shortcut=QKeySequence("Ctrl+G"),
                                        triggered=self.go_to_page_prompt)
        self.zoom_in_action = QAction("Zoom &In", self, triggered=lambda: self.zoom_current(1.25))
        self.zoom_in_action.setShortcuts([QKeySequence(QKeySequence.ZoomIn), QKeySequence("Ctrl+=")])
        self.zoom_out_action = QAction("Zoom &Out", self, triggered=lambda: self.zoom_current(0.8))
        self.zoom_out_action.setShortcuts([QKeySequence(QKeySequence.ZoomOut), QKeySequence("Ctrl+_")])
        self.zoom_reset_action = QAction("&Reset Zoom", self, shortcut=QKeySequence("Ctrl+0"),
                                         triggered=lambda: self.zoom_current(None))
        for a in (self.find_action, self.goto_page_action):
            v.addAction(a)
        v.addSeparator()
        self.view_actions = []          # Ctrl+1..: the views (ensure_views puts them before this separator)
        self._view_menu = v
        self._views_anchor = v.addSeparator()
        for a in (self.zoom_in_action, self.zoom_out_action, self.zoom_reset_action):
            v.addAction(a)
        v.addSeparator()
        v.addAction(self.inspector_dock.toggleViewAction())
        v.addAction(self.errors_dock.toggleViewAction())
        h = self.menuBar().addMenu("&Help")
        self.shortcuts_action = QAction("&Keyboard Shortcuts", self, shortcut=QKeySequence("F1"),
                                        triggered=self.show_shortcuts)
        self.about_action = QAction("&About dbxray", self, triggered=self.show_about)
        h.addAction(self.shortcuts_action)
        h.addAction(self.about_action)
        self._refresh_recent()

    def shortcut_list(self) -> list[tuple[str, str]]:
        """(keys, what they do) of every menu action with a shortcut, in menu order, and the
        keys of the views (Home/End in the map)."""
        out = []
        for menu in self.menuBar().findChildren(QMenu):
            for a in menu.actions():
                keys = ", ".join(k.toString(QKeySequence.NativeText) for k in a.shortcuts())
                if keys and (keys, a.text()) not in out:
                    out.append((keys, a.text().replace("&", "").rstrip("…")))
        out += [("Home", "Extent map: fit (square cells, extent 0 at the top)"),
                ("End", "Extent map: the whole file in view"),
                ("Enter (in the page field)", "Extent map: go to the page and inspect it"),
                ("Mouse wheel / drag", "zoom / pan a chart"),
                ("Right click", "copy and export menus of the tree, tables and views")]
        return out

    def show_shortcuts(self) -> None:
        from PySide6.QtWidgets import QMessageBox
        rows = "".join(f"<tr><td style='padding-right:16px'><b>{html.escape(k)}</b></td><td>{html.escape(t)}</td></tr>"
                       for k, t in self.shortcut_list())
        box = QMessageBox(self)
        box.setWindowTitle("Keyboard shortcuts")
        box.setTextFormat(Qt.RichText)
        box.setText(f"<table>{rows}</table><p>Shortcuts work wherever the focus is, the filter box included.</p>")
        box.exec()

    def show_about(self) -> None:
        from PySide6.QtWidgets import QMessageBox
        from PySide6 import __version__ as pyside_version
        QMessageBox.about(self, "About dbxray",
                          f"<h3>dbxray {html.escape(__version__)}</h3><p>A desktop X-ray for database files on "
                          "disk: InnoDB, ClickHouse, TokuDB and CSV, read-only, without a running server.</p>"
                          f"<p>Qt for Python {html.escape(pyside_version)}</p>")

    # -- right-click menus and CSV --------------------------------------------------
    def _make_context_menus(self) -> None:
        """Right-click menu of the tree (copy name/path/row, open the folder, CSV); the
        views' menus come with the views (_make_view_menus)."""
        self.tree.setContextMenuPolicy(Qt.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._tree_menu)

    # -- the views, made on first need ------------------------------------------------
    @property
    def views(self) -> list:
        """The centre's views in tab order (made now if they were not yet)."""
        self.ensure_views()
        return self._views

    @property
    def extent_map(self):
        self.ensure_views()
        return self._extent_map

    def views_made(self) -> list:
        """The views made so far (none before the first data arrives)."""
        return self._views or []

    def ensure_views(self) -> None:
        """Make the views, their tabs, menu items and right-click menus, and the page
        inspector (this imports pyqtgraph: done once there is something to draw, or a
        view is asked for, never before the window is shown)."""
        if self._views is not None:
            return
        from dbxray.viz.pageinspector import PageInspector
        from dbxray.viz.registry import view_classes
        self._views = []
        for cls in view_classes():
            view = cls()
            self._views.append(view)
            self.tabs.addTab(view, cls.title)
            if hasattr(view, "node_selected"):
                view.node_selected.connect(self.select_node)
            if hasattr(view, "run_requested"):
                view.run_requested.connect(lambda codecs, sample, v=view: self.run_whatif(v, codecs, sample))
            if hasattr(view, "advise_requested"):
                view.advise_requested.connect(lambda sample, codecs, v=view: self.run_advise(v, sample, codecs))
        for i, view in enumerate(self._views):        # Ctrl+1..: the views, as a browser's tabs
            a = QAction(view.title, self, shortcut=QKeySequence(f"Ctrl+{i + 1}") if i < 9 else QKeySequence(),
                        triggered=lambda _=False, vw=view: self.show_view(vw))
            self.view_actions.append(a)
            self._view_menu.insertAction(self._views_anchor, a)
        self.page_inspector = PageInspector(orientation=Qt.Vertical)
        self.inspector_split.addWidget(self.page_inspector)
        self.inspector_split.setStretchFactor(0, 1)
        self.inspector_split.setStretchFactor(1, 3)
        total = max(740, sum(self.inspector_split.sizes()))
        self.inspector_split.setSizes([total - 40, 40])     # until a page is clicked: the node's facts
        self._extent_map = next((v for v in self._views if getattr(v, "view_id", "") == "extent-map"), None)
        if self._extent_map is not None:
            self._extent_map.attach_inspector(self.page_inspector)
            self._extent_map.page_clicked.connect(self._on_page_clicked)
            self._extent_map.unit_hovered.connect(self.show_hover_facts)
        self._make_view_menus()

    def _make_view_menus(self) -> None:
        """Right-click menus of every table inside the views (copy row, CSV), and of every
        view (export, copy)."""
        from PySide6.QtWidgets import QAbstractItemView as _ItemView
        for view in self._views:
            for table in view.findChildren(_ItemView):
                if table.contextMenuPolicy() not in (Qt.ActionsContextMenu, Qt.DefaultContextMenu):
                    continue
                table.setContextMenuPolicy(Qt.ActionsContextMenu)
                for text, fn in (("Copy row", lambda _=False, t=table: self.copy_table_row(t)),
                                 ("Copy table as CSV", lambda _=False, t=table: self.copy_table_csv(t)),
                                 ("Save table as CSV…", lambda _=False, t=table: self.save_table_csv_dialog(t))):
                    a = QAction(text, table)
                    a.triggered.connect(fn)
                    table.addAction(a)
            view.setContextMenuPolicy(Qt.ActionsContextMenu)
            entries = [("Export this view as PNG…", lambda _=False, v=view: self._export_from_menu(v, "png")),
                       ("Export this view as SVG…", lambda _=False, v=view: self._export_from_menu(v, "svg")),
                       ("Copy this view to the clipboard", lambda _=False, v=view: self._copy_from_menu(v))]
            if hasattr(view, "chart_csv"):      # the charts' figures and whole texts
                entries += [("Copy chart data as CSV",
                             lambda _=False, v=view: QGuiApplication.clipboard().setText(v.chart_csv())),
                            ("Save chart data as CSV…", lambda _=False, v=view: self.save_chart_csv_dialog(v))]
            for text, fn in entries:
                a = QAction(text, view)
                a.triggered.connect(fn)
                view.addAction(a)

    def _export_from_menu(self, view, kind: str) -> None:
        self.tabs.setCurrentWidget(view)
        self.export_view_dialog(kind)

    def _copy_from_menu(self, view) -> None:
        self.tabs.setCurrentWidget(view)
        self.copy_view()

    def tree_menu_actions(self, index) -> list[tuple[str, object]]:
        """(text, callable) of the tree's right-click menu for the row at ``index``."""
        node = self.model.data(index, NODE_ROLE) if index.isValid() else None
        out = []
        if node is not None:
            full = self.node_abspath(node)
            out.append(("Copy name", lambda: QGuiApplication.clipboard().setText(node.name)))
            if full:
                out.append(("Copy path", lambda: QGuiApplication.clipboard().setText(full)))
                out.append(("Open containing folder", lambda: self.open_folder_of(full)))
            out.append(("Copy row", lambda: QGuiApplication.clipboard().setText(row_text(self.model, index))))
        out.append(("Copy tree as CSV", lambda: QGuiApplication.clipboard().setText(self.tree_csv())))
        out.append(("Save tree as CSV…", self.save_tree_csv_dialog))
        return out

    def _tree_menu(self, pos) -> None:
        menu = QMenu(self.tree)
        for text, fn in self.tree_menu_actions(self.tree.indexAt(pos)):
            menu.addAction(text, fn)
        menu.popup(self.tree.viewport().mapToGlobal(pos))

    def node_abspath(self, node: Node) -> str:
        """The file or folder a tree node stands for on disk ("" for groups such as an engine)."""
        if node.kind == "file" and node.ref is not None:
            return node.ref.abspath
        if node.kind == "root" and self.dataset is not None:
            return self.dataset.root
        files = [n.ref.abspath for n in node.walk() if n.kind == "file" and n.ref is not None]
        if files and node.kind in ("table", "database", "part"):
            common = os.path.commonpath(files)
            return common if os.path.isdir(common) else os.path.dirname(common)
        return ""

    def open_folder_of(self, path: str) -> bool:
        from PySide6.QtCore import QUrl
        from PySide6.QtGui import QDesktopServices
        folder = path if os.path.isdir(path) else os.path.dirname(path)
        ok = QDesktopServices.openUrl(QUrl.fromLocalFile(folder))
        self.status_label.setText(f"Opened {folder}" if ok else f"No file manager to open {folder}")
        return ok

    def tree_csv(self) -> str:
        return model_csv(self.model, tree=True, columns=view_columns(self.tree))

    def save_tree_csv_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save tree as CSV", self.save_path("dbxray-tree.csv"),
                                              "CSV (*.csv)")
        if path:
            self.write_text(path, self.tree_csv())

    def copy_table_row(self, table) -> None:
        idx = table.currentIndex()
        if idx.isValid():
            QGuiApplication.clipboard().setText(row_text(table.model(), idx))

    def copy_table_csv(self, table) -> None:
        QGuiApplication.clipboard().setText(model_csv(table.model(), columns=view_columns(table)))

    def save_table_csv_dialog(self, table) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save table as CSV", self.save_path("dbxray-table.csv"),
                                              "CSV (*.csv)")
        if path:
            self.write_text(path, model_csv(table.model(), columns=view_columns(table)))

    def save_chart_csv_dialog(self, view) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save chart data as CSV",
                                              self.save_path(f"dbxray-{view.view_id}.csv"), "CSV (*.csv)")
        if path:
            self.write_text(path, view.chart_csv())

    def write_text(self, path: str, text: str) -> bool:
        self.remember_save_dir(path)
        try:
            with open(path, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
        except OSError as e:
            self.status_label.setText(f"Could not write {path}: {e.strerror}")
            return False
        self.status_label.setText(f"Wrote {path}")
        return True

    def recent_paths(self) -> list[str]:
        val = self.settings.value("recent", [])
        if isinstance(val, str):
            val = [val]
        return [p for p in (val or []) if p]

    def _remember(self, path: str) -> None:
        rec = [p for p in self.recent_paths() if p != path]
        rec.insert(0, path)
        self.settings.setValue("recent", rec[:MAX_RECENT])
        self._refresh_recent()

    def _refresh_recent(self) -> None:
        self.recent_menu.clear()
        for p in self.recent_paths():
            self.recent_menu.addAction(p, lambda p=p: self.open_path(p))
        self.recent_menu.setEnabled(bool(self.recent_paths()))

    def open_folder_dialog(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open data directory", self.settings.value("last_dir", ""))
        if path:
            self.open_path(path)

    def open_file_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open database file or saved scan",
                                              self.settings.value("last_dir", ""),
                                              "Database files (*.ibd ibdata* *.tokudb *.bin *.json);;All files (*)")
        if path:
            self.open_path(path)

    def save_scan_dialog(self) -> None:
        if self.dataset is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, "Save scan", self.save_path("scan.dbxray.json"),
                                              "dbxray scan (*.json)")
        if path:
            self.save_scan(path)

    def save_path(self, name: str) -> str:
        """``name`` in the folder the last export or save went to (remembered across runs)."""
        folder = self.settings.value("export/dir", "") or os.path.expanduser("~")
        return os.path.join(str(folder), name)

    def remember_save_dir(self, path: str) -> None:
        self.settings.setValue("export/dir", os.path.dirname(os.path.abspath(path)))

    def save_scan(self, path: str) -> None:
        if self._after_walk(lambda: self.save_scan(path), "Saving the scan"):
            return
        self.remember_save_dir(path)
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(self.dataset.to_json(), fh, indent=1)
        self.status_label.setText(f"Saved scan to {path}")

    # -- what-if ---------------------------------------------------------------------
    whatif_done = Signal(object)

    def run_whatif(self, view, codecs: list, sample: str) -> None:
        """Re-encode a sample in a worker; the view draws the result."""
        if self._after_walk(lambda: self.run_whatif(view, codecs, sample), "The what-if"):
            return
        if self.dataset is None or self.job is not None:
            return
        from dbxray.compress.whatif import run_whatif
        ds = self.dataset
        self._whatif_view = view
        job = Job(lambda progress, cancelled: run_whatif(ds, codecs, sample=sample, seed=0,
                                                         progress=progress, is_cancelled=cancelled),
                  name="what-if")
        job.progress.connect(self._on_whatif_progress)
        job.finished.connect(self._on_whatif_finished)
        job.failed.connect(self._on_whatif_failed)
        job.cancelled.connect(self._on_whatif_cancelled)
        self.progress.setRange(0, 0)
        self.progress.setVisible(True)
        self.cancel_button.setVisible(True)
        self.cancel_button.setEnabled(True)
        view.set_running(True)
        self.status_label.setText("What-if running…")
        self.job = job
        job.start()

    def _on_whatif_finished(self, result) -> None:
        self.last_whatif = (self.dataset, result)      # the report uses what the user ran
        self._end_job()
        self._whatif_view.set_running(False)
        self._whatif_view.set_results(result)
        self.status_label.setText("What-if done")
        self.whatif_done.emit(result)

    def _on_whatif_progress(self, done: int, total: int, message: str) -> None:
        """The what-if's progress: monotonic, and never "done" before the results are shown
        (after the last unit is re-encoded come the advice and the drawing)."""
        if self._advance(done, total):
            message = "What-if: units re-encoded; writing the advice and drawing the results…"
        if message:
            self.status_label.setText(message)

    def _advance(self, done: int, total: int) -> bool:
        """The progress bar at ``done`` of ``total``, never back within one total; True
        once every unit is done (what comes after is not counted: not "done" yet)."""
        if total <= 0:
            return False
        self.progress.setRange(0, total)
        self.progress.setValue(max(done, self.progress.value()) if self.progress.maximum() == total else done)
        return done >= total

    def _on_whatif_failed(self, message: str) -> None:
        self._whatif_view.set_running(False, f"What-if failed: {message.splitlines()[0]}")
        self._on_failed(message)
        self.whatif_done.emit(None)

    def _on_whatif_cancelled(self) -> None:
        # a cancel is the user's choice, not an error: no line in the errors list
        self._whatif_view.set_running(False, "What-if cancelled: the results shown (if any) are those of the "
                                             "previous run.")
        self._end_job()
        self.status_label.setText("What-if cancelled")
        self.whatif_done.emit(None)

    # -- type advisor ---------------------------------------------------------------------
    advise_done = Signal(object)

    def run_advise(self, view, sample: str, codecs: bool = True) -> None:
        """The ClickHouse type advisor (compress/typeadvice.py) in a worker; the Columns
        view's Types page draws the result."""
        if self._after_walk(lambda: self.run_advise(view, sample, codecs), "The type advisor"):
            return
        if self.dataset is None or self.job is not None:
            return
        from dbxray.compress.typeadvice import advise
        ds = self.dataset
        fraction = None if sample == "all" else float(sample)
        self._advise_view = view
        job = Job(lambda progress, cancelled: advise(ds, fraction, 0, progress=progress, is_cancelled=cancelled,
                                                        codecs=codecs),
                  name="type advisor")
        job.progress.connect(self._on_advise_progress)
        job.finished.connect(self._on_advise_finished)
        job.failed.connect(self._on_advise_failed)
        job.cancelled.connect(self._on_advise_cancelled)
        self.progress.setRange(0, 0)
        self.progress.setVisible(True)
        self.cancel_button.setVisible(True)
        self.cancel_button.setEnabled(True)
        view.set_advice_running(True)
        self.status_label.setText("Type advisor running…")
        self.job = job
        job.start()

    def _on_advise_progress(self, done: int, total: int, message: str) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self._advise_view.set_advice_progress(done, total, message)

    def _on_advise_finished(self, result) -> None:
        self._end_job()
        self._advise_view.set_advice_running(False)
        self._advise_view.set_advice(result)
        self.status_label.setText("Type advisor done")
        self.advise_done.emit(result)

    def _on_advise_failed(self, message: str) -> None:
        self._advise_view.set_advice_running(False)
        self._advise_view.set_advice(None, message.splitlines()[0])
        self._on_failed(message)
        self.advise_done.emit(None)

    def _on_advise_cancelled(self) -> None:
        self._end_job()
        self._advise_view.set_advice_running(False)
        self._advise_view.set_advice(None, "Type advisor cancelled")
        self.status_label.setText("Type advisor cancelled")
        self.advise_done.emit(None)

    # -- export ---------------------------------------------------------------------
    def current_view(self):
        return self.tabs.currentWidget()

    def export_widget(self):
        view = self.current_view()
        return view.export_widget() if hasattr(view, "export_widget") else view

    def export_view(self, path: str, dpi: int = 96, width: int | None = None, height: int | None = None) -> bool:
        """The current view to PNG (``width`` x ``height`` logical pixels at ``dpi``) or SVG;
        without a size, at the size it has in the window."""
        from dbxray.viz.export import export_png, export_svg
        self.remember_save_dir(path)
        view = self.current_view()
        widget = self.export_widget()
        ok = export_svg(widget, path, width, height, title=f"dbxray {view.title}") \
            if path.lower().endswith(".svg") else export_png(widget, path, width, height, dpi=dpi)
        self.status_label.setText(f"Exported {view.title} to {path}" if ok else f"Could not write {path}")
        return ok

    def export_view_dialog(self, kind: str) -> None:
        view = self.current_view()
        name = f"{getattr(view, 'view_id', 'view')}.{kind}"
        flt = "PNG image (*.png)" if kind == "png" else "SVG vector image (*.svg)"
        path, _ = QFileDialog.getSaveFileName(self, f"Export {view.title}", self.save_path(name), flt)
        if path:
            from dbxray.viz.export import ExportOptionsDialog
            w = self.export_widget()
            dlg = ExportOptionsDialog(int(self.settings.value("export/width", w.width())),
                                      int(self.settings.value("export/height", w.height())),
                                      int(self.settings.value("export/dpi", 192)), png=(kind == "png"), parent=self)
            if dlg.exec() != ExportOptionsDialog.Accepted:
                return
            width, height, dpi = dlg.values()
            for k, v in (("width", width), ("height", height), ("dpi", dpi)):
                self.settings.setValue(f"export/{k}", v)
            self.export_view(path, dpi, width, height)

    def copy_view(self) -> None:
        from dbxray.viz.export import copy_to_clipboard
        view = self.current_view()
        copy_to_clipboard(view.export_widget() if hasattr(view, "export_widget") else view)
        self.status_label.setText(f"Copied {view.title} to the clipboard")

    def export_report_dialog(self) -> None:
        if self.dataset is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, "Export report", self.save_path("dbxray-report.html"),
                                              "HTML (*.html)")
        if path:
            self.export_report(path)

    def export_report(self, path: str, whatif_sample: str | None = "0.05") -> None:
        """The report with the last what-if the user ran on this dataset (codecs, sample and
        seed as run: the numbers the window shows); without one, a what-if on
        ``whatif_sample`` with the default codecs in a worker first (None: no what-if)."""
        if self._after_walk(lambda: self.export_report(path, whatif_sample), "The report"):
            return
        from dbxray.app.report import run_default_whatif
        self.remember_save_dir(path)
        ds = self.dataset
        self._report_path = path
        last = getattr(self, "last_whatif", None)
        if last is not None and last[0] is ds and last[1] is not None:
            self._write_report(last[1])
            return
        job = Job(lambda progress, cancelled: run_default_whatif(ds, whatif_sample, progress=progress,
                                                                 is_cancelled=cancelled)
                  if whatif_sample else None, name="report")
        job.progress.connect(self._on_report_progress)
        # bound methods of this window: delivered in the GUI thread (queued), never in the worker
        job.finished.connect(self._on_report_whatif)
        job.failed.connect(self._on_failed)
        job.cancelled.connect(self._on_report_cancelled)
        self.progress.setRange(0, 0)
        self.progress.setVisible(True)
        self.cancel_button.setVisible(True)
        self.cancel_button.setEnabled(True)
        self.status_label.setText("Writing report…")
        self.job = job
        job.start()

    def _on_report_progress(self, done: int, total: int, message: str) -> None:
        """The report's what-if: monotonic as the what-if's own, its lines named for the report."""
        if self._advance(done, total):
            message = "units re-encoded; writing the advice"
        if message:
            self.status_label.setText(f"Report: what-if {message}")

    def _on_report_cancelled(self) -> None:
        """Cancel of the report's what-if: the user's choice, not an error, and nothing written."""
        self._end_job()
        self.status_label.setText(f"Report cancelled: {self._report_path} not written")

    def _on_report_whatif(self, whatif) -> None:
        self._end_job()
        self._write_report(whatif)

    def _report_view_progress(self, done: int, total: int, message: str) -> None:
        """The views being drawn into the report (in this thread): the status line repainted."""
        self.status_label.setText(f"Report: {message} ({done} of {total} views)" if done < total
                                  else "Report: views drawn; writing the file")
        self.status_label.repaint()

    def _write_report(self, whatif) -> None:
        from dbxray.app.report import report_html, render_views
        images = render_views(self.dataset, whatif, progress=self._report_view_progress)
        view = getattr(self, "_advise_view", None)         # the type advice the Columns view was given
        advice = getattr(getattr(view, "advice_page", None), "advice", None)
        with open(self._report_path, "w", encoding="utf-8") as fh:
            fh.write(report_html(self.dataset, images, whatif, advice))
        self.status_label.setText(f"Report written to {self._report_path}")
        self.report_written.emit(self._report_path)

    # -- drag and drop ------------------------------------------------------------
    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls() and any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        for url in event.mimeData().urls():
            if url.isLocalFile():
                self.open_path(url.toLocalFile())
                event.acceptProposedAction()
                return

    # -- scanning ---------------------------------------------------------------
    def open_path(self, path: str) -> None:
        """Scan ``path`` in a worker thread; the window stays responsive."""
        if self.job is not None:
            self.cancel_scan()
            self.job.wait(5000)
        path = os.path.abspath(path)
        self.current_path = path
        self._walk_job, self._walk_pending, self._pending_action = None, False, None
        self.listing = None
        self.settings.setValue("last_dir", os.path.dirname(path))
        self.status_label.setText(f"Scanning {path}…")
        if self.dataset is None:
            self.show_placeholder(f"Scanning {path}…")
        self.progress.setRange(0, 0)
        self.progress.setVisible(True)
        self.cancel_button.setVisible(True)
        self.cancel_button.setEnabled(True)
        self._scan_started = time.monotonic()
        job = scan_job(path, keys=self.keys)
        job.progress.connect(self._on_progress)
        job.partial.connect(self._on_partial)
        job.finished.connect(self._on_scanned)
        job.failed.connect(self._on_failed)
        job.cancelled.connect(self._on_cancelled)
        self.job = job
        job.start()

    def _on_partial(self, part: dict) -> None:
        """Page headers read so far (progressive extent map): the map fills in as the
        worker reads the file; the scan's dataset replaces it at the end."""
        if not isinstance(part, dict):
            return
        kind = part.get("kind")
        if kind in ("files", "files_end"):
            self._on_listing(part)
            return
        em = self.extent_map
        if em is None:
            return
        if kind == "begin":
            if self.current_path and os.path.isfile(self.current_path):
                self.tabs.setCurrentWidget(em)        # one tablespace opened: its map is the point
            if self.dataset is None:
                for i in range(self.tabs.count()):    # only the map has something to show yet
                    self.tabs.setTabVisible(i, self.tabs.widget(i) is em)
                self.tabs.setCurrentWidget(em)
            self.show_views()
            em.begin_preview(part)
        elif kind == "chunk":
            em.add_preview_chunk(part)
        elif kind == "end":
            em.end_preview()

    def _on_listing(self, part: dict) -> None:
        """A batch of the file listing (app.workers.list_files): the tree shows every file
        found so far with its stat sizes, sorted, while the scan reads them; the scan's
        tree (index rows, holes, logical sizes) replaces it at the end."""
        if part.get("kind") == "files_end":
            if self.listing is not None:
                self.listing.done()
            self.status_label.setText(f"{part.get('total', 0):,} files listed; reading them…")
            return
        rows = part.get("rows") or []
        if self.listing is None:
            expanded = self.model.expanded_keys(self.tree) if self.tree_root is not None else []
            self.listing = ListingTree(part.get("root") or self.current_path or "")
            self.listing.add(rows)
            self.dataset = None
            self.tree_root = self.listing.root
            self.model.set_root(self.tree_root, listing=True)
            self._restore_expanded(expanded)
        else:
            self.listing.add(rows)
            self.model.refresh()
        self.status_label.setText(f"Listing files… {part.get('listed', 0):,} of {part.get('total', 0):,}")

    #: the databases are shown expanded when they hold no more rows than this together
    EXPAND_DATABASES_ROWS = 2000

    def _restore_expanded(self, keys: list[tuple]) -> None:
        """Expand the engines, and their databases unless that shows thousands of rows (a
        server of 400 databases opens on its database list), and the rows expanded before."""
        shown = sum(len(db.children) for eng in self.tree_root.children for db in eng.children)
        self.tree.expandToDepth(1 if shown <= self.EXPAND_DATABASES_ROWS else 0)
        for key in keys:
            node = find_key(self.tree_root, key)
            if node is not None:
                idx = self.model.index_of(node)
                if idx.isValid():
                    self.tree.expand(idx)
        self._fit_timer.start()

    def key_file_dialog(self) -> None:
        """File › Key File…: a MariaDB file_key_management key file (asks the password of a
        'Salted__' one); its keys decrypt encrypted tablespaces in memory, from the next scan on
        (the current path is scanned again).  Keys stay in memory only."""
        from PySide6.QtWidgets import QInputDialog, QLineEdit
        from dbxray.app.keys import load_keys
        path, _ = QFileDialog.getOpenFileName(self, "Key file (file_key_management)",
                                              self.settings.value("last_dir", ""))
        if not path:
            return

        def prompt(label: str) -> str:
            text, ok = QInputDialog.getText(self, "Key file password", label, QLineEdit.Password)
            return text if ok else ""
        ring, messages = load_keys(path, prompt=prompt)
        self.key_messages = messages
        for m in messages:
            self.errors.addItem(m)
        if ring is None:
            self.status_label.setText(messages[0] if messages else f"{path}: no keys")
            return
        self.keys = ring
        self.keys_note = f"key file {os.path.basename(path)}: key ids {', '.join(str(i) for i in ring.ids)}"
        self.status_label.setText(self.keys_note)
        self.rescan()

    def rescan(self) -> None:
        if self.current_path:
            self.open_path(self.current_path)

    def cancel_scan(self) -> None:
        if self.job is not None:
            self.job.cancel()
            self.cancel_button.setEnabled(False)
            self.status_label.setText("Cancelling…")

    def _on_progress(self, done: int, total: int, message: str) -> None:
        """The scan's progress: monotonic (a value never goes back for the same total)."""
        if total > 0:
            same = self.progress.maximum() == total
            self.progress.setRange(0, total)
            self.progress.setValue(max(done, self.progress.value()) if same else done)
            if done >= total:       # the files are read; the tree and views are built next
                message = "Files read; building the tree and the views…"
        if message:
            self.status_label.setText(message)

    def _end_job(self) -> None:
        if self.job is not None:
            self.job.wait(5000)
        self.job = None
        self.progress.setVisible(False)
        self.cancel_button.setVisible(False)

    def _on_failed(self, message: str) -> None:
        self._end_job()
        if self._extent_map is not None:
            self._extent_map.clear_preview("Scan failed")
        self.status_label.setText(message.splitlines()[0])
        self.errors.addItem(message.splitlines()[0])
        if self.dataset is None:
            self.show_placeholder(message.splitlines()[0])

    def _on_cancelled(self) -> None:
        """Cancel is the user's choice, not an error: the files listed so far stay in the
        tree (with their stat sizes), the status says what was not read."""
        self._end_job()
        if self._extent_map is not None:
            self._extent_map.clear_preview("Scan cancelled")
        listed = self.listing.files if self.listing is not None else 0
        self.listing = None
        from dbxray.app import timing
        timing.mark("cancelled")
        if listed and self.dataset is None:
            self.status_label.setText(f"Scan cancelled: {listed:,} files listed with their sizes; "
                                      f"pages, indexes and holes not read (F5 scans again)")
        else:
            self.status_label.setText("Scan cancelled")
        if self.dataset is None:
            self.show_placeholder(f"Scan cancelled: the tree lists the {listed:,} files found, with their sizes. "
                                  "F5 scans again" if listed else
                                  "Scan cancelled. Open a data directory (Ctrl+O) or a file (Ctrl+Shift+O)")

    def _on_scanned(self, result) -> None:
        self._end_job()
        ds, root, has_columns = result if isinstance(result, tuple) else (result, None, None)
        from dbxray.parsers.scan import deferred_engines
        walk = deferred_engines(ds) if self.current_path else ()
        self._walk_pending = bool(walk)
        self.set_dataset(ds, root, has_columns)
        if self.current_path and not self.current_path.startswith(demo_prefix()):
            self._remember(self.current_path)
        self._show_scan_status(ds)
        if walk:
            self._start_walk(ds, walk)
        else:
            self.scan_done.emit(ds)

    def _show_scan_status(self, ds: Dataset) -> None:
        secs = time.monotonic() - self._scan_started
        self.status_label.setText(
            f"{self.display_name(ds.root)} — {len(ds.files)} files, {', '.join(ds.engines) or 'no engine'} — apparent "
            f"{human_bytes(ds.apparent_bytes)}, allocated {human_bytes(ds.allocated_bytes)} — {secs:.1f} s"
            + (f" — {self.keys_note}" if self.keys is not None else ""))

    # -- what the first scan left for later (ClickHouse blocks) ------------------------
    #: label of each engine's deferred work in the status bar
    WALK_LABEL = {"clickhouse": "ClickHouse blocks (codecs, block sizes, the unit map)"}

    def _start_walk(self, ds: Dataset, names: tuple) -> None:
        """The deferred engines read in full in a worker (``parsers.scan.complete``), while the
        window shows the first scan's figures; what-if, advice, report and save wait for it."""
        from dbxray.app.workers import complete_job
        what = ", ".join(self.WALK_LABEL.get(n, n) for n in names)
        self.status_label.setText(f"{self.status_label.text()} — reading {what}…")
        self.progress.setRange(0, 0)
        self.progress.setVisible(True)
        self.cancel_button.setVisible(True)
        self.cancel_button.setEnabled(True)
        job = complete_job(ds, self.current_path, keys=self.keys)
        job.progress.connect(self._on_walk_progress)
        job.finished.connect(self._on_walked)
        job.failed.connect(self._on_walk_failed)
        job.cancelled.connect(self._on_walk_cancelled)
        self.job = self._walk_job = job
        job.start()

    def _on_walk_progress(self, done: int, total: int, message: str) -> None:
        """The walk's progress, said as the walk's (the first scan's figures stay shown)."""
        self._on_progress(done, total, "")
        if total > 0 and done >= total:
            self.status_label.setText("Blocks read; building the tree and the views…")
        elif message:
            self.status_label.setText(f"Reading ClickHouse blocks: {message}")

    def _walk_running(self) -> bool:
        return self.job is not None and self.job is getattr(self, "_walk_job", None)

    def _after_walk(self, action, label: str) -> bool:
        """While the deferred walk runs: keep ``action`` to run when it ends (the last one
        asked), say so, and return True."""
        if not self._walk_running():
            return False
        self._pending_action = action
        self.status_label.setText(f"{label} starts once the blocks are read…")
        return True

    def _on_walked(self, result) -> None:
        if self.sender() is not getattr(self, "_walk_job", None):
            return      # a walk cancelled by opening another path
        self._end_job()
        self._walk_job = None
        self._walk_pending = False
        if result is not None:
            ds, root, has_columns = result
            current = self.tree.currentIndex()
            node = self.model.data(current, NODE_ROLE) if current.isValid() else None
            key = node_key(node) if node is not None else None
            self.set_dataset(ds, root, has_columns)
            found = find_key(self.tree_root, key) if key else None
            if found is not None:
                self.select_node(found)
                self.show_inspector(found)
            self._show_scan_status(ds)
        self.scan_done.emit(self.dataset)
        self._run_pending()

    def _run_pending(self) -> None:
        action, self._pending_action = getattr(self, "_pending_action", None), None
        if action is not None:
            action()

    def _on_walk_failed(self, message: str) -> None:
        if self.sender() is not getattr(self, "_walk_job", None):
            return      # a walk cancelled by opening another path
        self._end_job()
        self._walk_job = None
        self._walk_pending = False
        self._pending_action = None
        line = message.splitlines()[0]
        self.status_label.setText(f"Reading the blocks failed: {line}")
        self.errors.addItem(f"reading the blocks failed: {line}")
        self.scan_done.emit(self.dataset)

    def _on_walk_cancelled(self) -> None:
        """Cancel keeps the first scan's figures (sizes as the engine reports them); what was
        waiting for the blocks does not run."""
        if self.sender() is not getattr(self, "_walk_job", None):
            return      # a walk cancelled by opening another path
        self._end_job()
        self._walk_job = None
        self._walk_pending = False
        dropped = getattr(self, "_pending_action", None) is not None
        self._pending_action = None
        self.status_label.setText("Reading the blocks cancelled: sizes as the engine reports them, no codecs, "
                                  "block sizes or unit map for ClickHouse (F5 scans again)"
                                  + ("; the action waiting for them was not run" if dropped else ""))
        self.scan_done.emit(self.dataset)

    def set_dataset(self, ds: Dataset, root: Node | None = None, has_columns: bool | None = None) -> None:
        """Show a scanned dataset; ``root`` is its tree when built already (off the GUI
        thread by the scan job).  Rows expanded in the listing or the previous tree stay so."""
        from dbxray.app.workers import dataset_tree
        if root is None:
            root, has_columns = dataset_tree(ds)
        expanded = self.model.expanded_keys(self.tree) if self.tree_root is not None else []
        self.listing = None
        self.dataset = ds
        self._complete_due = self.job is None and not getattr(self, "_walk_pending", False)
        self.tree_root = root
        self.model.set_root(self.tree_root)
        for c in CH_COLUMNS:
            self.tree.setColumnHidden(c, not has_columns)
        self._restore_expanded(expanded)
        self.setWindowTitle(f"dbxray — {self.display_name(ds.root)}")
        self.errors.clear()
        msgs = list(ds.errors) + [e for f in ds.files for e in f.errors] + list(ds.warnings) + \
            [w for f in ds.files for w in f.warnings]
        from dbxray.viz.registry import VIEW_ERRORS
        msgs = [f"view not available: {v}" for v in VIEW_ERRORS] + list(self.key_messages) + msgs
        for e in msgs[:5000]:
            self.errors.addItem(e)
        self.errors_dock.setWindowTitle(f"Errors and warnings ({len(msgs)})")
        from dbxray.viz.registry import view_shows
        for i, view in enumerate(self.views):
            view.set_dataset(ds, self.tree_root)
            self.tabs.setTabVisible(self.tabs.indexOf(view), view_shows(type(view), ds))
        if not self.tabs.isTabVisible(self.tabs.currentIndex()):
            self.tabs.setCurrentIndex(next(i for i in range(self.tabs.count()) if self.tabs.isTabVisible(i)))
        self.show_views()
        self.show_inspector(self.tree_root)
        self.dataset_loaded.emit(ds)

    # -- selection -----------------------------------------------------------------
    #: a filter's matches are all shown expanded up to this many rows (else engines and databases)
    EXPAND_FILTER_ROWS = 3000

    def _on_filter(self, text: str) -> None:
        self._filter_timer.stop()
        self.model.set_filter(text)
        if text:
            if self.model.kept_count() <= self.EXPAND_FILTER_ROWS:
                self.tree.expandAll()
            else:
                self.tree.expandToDepth(1)

    def _on_current_changed(self, current, _previous) -> None:
        node = self.model.data(current, NODE_ROLE) if current.isValid() else None
        if node is None:
            return
        self.show_inspector(node)
        if self.dataset is not None and self.listing is None:     # a listing row has no view data yet
            for view in self.views_made():
                if hasattr(view, "select_node"):
                    view.select_node(node)
        self.node_selected.emit(node)

    def select_node(self, node: Node) -> None:
        """Select a node in the tree (from a view: e.g. a clicked page's index)."""
        idx = self.model.index_of(node)
        if idx.isValid():
            self.tree.setCurrentIndex(idx)
            self.tree.scrollTo(idx)

    def fit_name_column(self) -> None:
        """The name column as wide as the names shown, up to the tree's width less the
        apparent-size column (names first; the other size columns scroll into view)."""
        header = self.tree.header()
        want = self.tree.sizeHintForColumn(0) + 8
        room = self.tree.viewport().width() - header.sectionSize(1)
        header.resizeSection(0, max(140, min(want, room)))

    def eventFilter(self, obj, event) -> bool:
        if obj is self.tree.viewport():
            kind = event.type()
            if kind == QEvent.Type.Resize:
                QTimer.singleShot(0, self.fit_name_column)
            elif kind == QEvent.Type.Paint and self._timing:
                self._paint_marks()
        return super().eventFilter(obj, event)

    def _paint_marks(self) -> None:
        """DBXRAY_TIMING (app/timing.py): the first paint of the window, of the tree with
        rows, and of the tree of a finished scan."""
        from dbxray.app import timing
        rows = self.model.rowCount() > 0
        for event, due in (("window", True), ("tree", rows), ("scanned", rows and self.dataset is not None),
                           ("complete", rows and self._complete_due)):
            if due and event not in self._timing_done:
                self._timing_done.add(event)
                timing.mark(event)
        if rows and self._complete_due:
            self._complete_due = False

    def selected_node_name(self) -> str:
        idx = self.tree.currentIndex()
        node = self.model.data(idx, NODE_ROLE) if idx.isValid() else None
        return node.name if node is not None else ""

    def show_inspector(self, node: Node) -> None:
        self.inspector.setHtml(inspector_html(node, self.display_name(node.name) if node.kind == "root" else None,
                                              listed_only=self.dataset is None and self.tree_root is not None
                                              and self.model.listing))

    def display_name(self, path: str) -> str:
        """A path as the title and status show it: the embedded demo's working copy (in the
        cache folder) is called the demo; other paths with ~ for the home folder."""
        prefix = demo_prefix()
        if path == prefix or path.startswith(prefix + os.sep):
            return "demo data dir (embedded; a working copy in the cache)"
        home = os.path.expanduser("~")
        return "~" + path[len(home):] if home not in ("", "/") and path.startswith(home + os.sep) else path

    def show_view(self, view) -> None:
        """Bring a view to the front (if it has something to show for this scan)."""
        i = self.tabs.indexOf(view)
        if i >= 0 and self.tabs.isTabVisible(i):
            self.tabs.setCurrentIndex(i)

    def show_placeholder(self, text: str) -> None:
        """The centre shows ``text`` instead of views with nothing to draw."""
        self.placeholder.setText(text)
        self.centre.setCurrentWidget(self.placeholder)

    def show_views(self) -> None:
        self.centre.setCurrentWidget(self.tabs)

    def show_hover_facts(self, text: str) -> None:
        """The hovered page's facts in the status bar (empty: the message again)."""
        self.hover_label.setText(text)
        self.hover_label.setVisible(bool(text))
        self.status_label.setVisible(not text)

    def _on_page_clicked(self, page: int) -> None:
        """A page was clicked in the map: the right dock shows it (the view filled the inspector)."""
        self.inspector_dock.show()
        self.inspector_dock.raise_()
        top, bottom = self.inspector_split.sizes()
        if bottom < 200:            # the page part was folded to its hint: now it gets the room
            total = top + bottom
            first = min(top, max(160, total // 3))
            self.inspector_split.setSizes([first, total - first])

    # -- keyboard: go to page, zoom ---------------------------------------------------
    def go_to_page_prompt(self) -> None:
        """Ctrl+G: the extent map's page number field, focused and selected (type, Enter)."""
        if self._extent_map is None:      # nothing scanned yet
            return
        self.tabs.setCurrentWidget(self._extent_map)
        self._extent_map.focus_goto()

    def zoom_current(self, factor: float | None) -> None:
        """Zoom the current view in (factor > 1), out (< 1) or back to its fit (None)."""
        from dbxray.viz.zoom import zoom_view
        view = self.current_view()
        if view is not None:
            zoom_view(view, factor)

    # -- lifetime ------------------------------------------------------------------
    def closeEvent(self, event) -> None:
        if self.job is not None:
            self.job.cancel()
            self.job.wait(5000)
        self.settings.setValue("window/geometry", self.saveGeometry())
        super().closeEvent(event)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not self._docks_sized:      # first show: the inspector a third of the width, errors short
            self._docks_sized = True
            self.resizeDocks([self.inspector_dock], [max(250, int(self.width() * 0.25))], Qt.Horizontal)
            self.resizeDocks([self.errors_dock], [90], Qt.Vertical)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        # the inspector keeps about a quarter of the width: shrinking the window must not
        # take it all from the tree and the views
        if self._docks_sized and self.inspector_dock.isVisible() and not self.inspector_dock.isFloating():
            want = max(250, int(self.width() * 0.25))
            if self.inspector_dock.width() > want + 20:
                self.resizeDocks([self.inspector_dock], [want], Qt.Horizontal)

    def sizeHint(self) -> QSize:
        return QSize(1400, 860)

    def wait_idle(self, timeout_ms: int = 60000) -> bool:
        """Process events until no job runs (for --screenshot and tests)."""
        from PySide6.QtWidgets import QApplication
        deadline = time.monotonic() + timeout_ms / 1000
        while self.job is not None:
            if time.monotonic() >= deadline:
                return False
            QApplication.processEvents()
            time.sleep(0.01)
        QApplication.processEvents()
        return True


def demo_prefix() -> str:
    from dbxray.app.demo import demo_cache_root
    return str(demo_cache_root())


def inspector_html(node: Node, title: str | None = None, listed_only: bool = False) -> str:
    """Facts of the selected node as HTML (sizes, holes, engine facts); ``listed_only``: a
    row of the file listing shown while the scan runs (stat's sizes; holes not known yet)."""
    from dbxray.parsers.tree import kind_label
    e = html.escape
    rows = [("Kind", kind_label(node)), ("Apparent", f"{human_bytes(node.apparent)} ({node.apparent:,} B)"),
            ("Allocated", f"{human_bytes(node.allocated)} ({node.allocated:,} B)")]
    if node.unwritten or node.past_eof:
        # each allocated byte once: written + unwritten + past EOF = allocated
        rows.append(("… written", human_bytes(node.data)))
        if node.unwritten:
            rows.append(("… unwritten (fallocated)", human_bytes(node.unwritten)))
        if node.past_eof:
            rows.append(("… past EOF", human_bytes(node.past_eof)))
    if listed_only:
        rows.append(("Holes, logical size", "not read yet (the file listing: stat's sizes only)"))
    else:
        rows += [("Holes (not allocated)", f"{human_bytes(node.unallocated)} "
                                           f"({percent(node.unallocated, node.apparent)} of apparent)"),
                 ("Logical", human_bytes(node.logical))]
    entry = node.ref if node.kind == "file" else None
    if entry is not None:
        rows.insert(0, ("Path", entry.path))
        rows.append(("Engine", entry.engine or "-"))
        rows.append(("Role", entry.role))
        rows.append(("Hole ranges", str(len(entry.holes))))
        fs = entry.fs
        if fs is not None:
            rows.append(("Filesystem", f"{fs.type}, {fs.block_size:,} B blocks, st_blksize {fs.st_blksize:,}"))
            if fs.engine_block:
                rows.append(("Engine punch block", f"{fs.engine_block:,} B ({fs.engine_block_rule})"))
            if fs.shared:
                rows.append(("Shared (reflinked)", human_bytes(fs.shared)))
            if fs.encoded:
                rows.append(("Compressed by the filesystem", human_bytes(fs.encoded)))
            if fs.disk is not None:
                rows.append(("On disk", f"{human_bytes(fs.disk)} ({fs.disk_source})"))
        for name, section in entry.sections.items():
            if isinstance(section, dict):              # typed sections are their JSON objects
                for k, v in section.items():
                    if isinstance(v, (int, float, str, bool)) or v is None:
                        rows.append((f"{name}.{k}", f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)))
    elif node.kind in ("index", "part", "column") and isinstance(node.ref, dict):
        if node.kind == "column":
            rows = [("Kind", "column")]
        ch = getattr(node, "ch_sizes", None)
        if ch is not None:
            c, u, m, computed = ch
            note = " (computed from the marks: the engine reports 0 for Compact parts)" if computed else ""
            rows += [("Compressed", f"{human_bytes(c)} ({c:,} B){note}"),
                     ("Uncompressed", f"{human_bytes(u)} ({u:,} B)"),
                     ("Marks", f"{human_bytes(m)} ({m:,} B)")]
            if c and u:
                rows.append(("Ratio", f"{u / c:.2f}×"))
        for k, v in node.ref.items():
            if isinstance(v, dict) and k == "codecs":
                rows.append(("codecs", ", ".join(f"{n}: {b} blocks" for n, b in v.items()) or "-"))
            elif not isinstance(v, (list, dict)):
                rows.append((k, f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)))
    body = "".join(f"<tr><td style='color:#757575;padding-right:12px'>{e(k)}</td><td>{e(str(v))}</td></tr>"
                   for k, v in rows)
    from dbxray.parsers.tree import expand
    inside = [c for c in expand(node) if c.allocated or c.apparent]
    if inside and node.kind != "column":
        inside.sort(key=lambda c: -max(c.allocated, c.apparent))
        total = max(1, max(node.allocated, sum(c.allocated for c in inside)))
        shown = inside[:15]
        body += ("<tr><td colspan=2 style='padding-top:8px'><b>Largest inside</b> "
                 f"(allocated, {len(inside)} item{'s' if len(inside) != 1 else ''})</td></tr>")
        body += "".join(f"<tr><td style='padding-right:12px'>{e(c.name)}</td><td>{e(human_bytes(c.allocated))}"
                        f" <span style='color:#757575'>{100.0 * c.allocated / total:.1f}%</span></td></tr>"
                        for c in shown)
        if len(inside) > len(shown):
            body += f"<tr><td colspan=2 style='color:#757575'>… {len(inside) - len(shown)} more</td></tr>"
    errs = ""
    if entry is not None and (entry.errors or entry.warnings):
        errs = "<h4 style='color:#c62828'>Problems</h4><ul>" + "".join(
            f"<li>{e(x)}</li>" for x in (entry.errors + entry.warnings)[:30]) + "</ul>"
    return f"<h3>{e(title or node.name)}</h3><table>{body}</table>{errs}"


__all__ = ["MainWindow", "inspector_html", "QTimer", "__version__"]

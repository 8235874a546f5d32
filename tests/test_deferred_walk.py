"""The window's ClickHouse block walk after the first paint (issue 22 items 2 and 8): the first
scan reads what the engine's system tables report (no block header), the window shows it,
and a second job walks the blocks (``parsers.scan.complete``) into a dataset equal to a full
scan's, field by field; what-if, advice, report and save wait for it; Cancel keeps the first
figures."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dbxray.parsers.model import ScanContext
from dbxray.parsers.scan import complete, deferred_engines, scan

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"


def _json(ds) -> str:
    return json.dumps(ds.to_json())


@pytest.fixture(scope="module")
def mixed(sparse_fixtures, tmp_path_factory) -> Path:
    """InnoDB tablespaces beside a ClickHouse data dir under one root."""
    root = tmp_path_factory.mktemp("mixed")
    (root / "mysql" / "fx").mkdir(parents=True)
    for name in ("t_blob.ibd", "t_compact.ibd", "t_pc_lz4.ibd"):
        shutil.copyfile(sparse_fixtures / "innodb" / "16k" / "fx" / name, root / "mysql" / "fx" / name)
    shutil.copytree(sparse_fixtures / "clickhouse" / "datadir", root / "ch", symlinks=True)
    return root


@pytest.mark.parametrize("spec", ["fixture:clickhouse/datadir", "data:clickhouse_versions",
                                  "data:clickhouse_typeadvice", "data:clickhouse_longname/datadir", "mixed"])
def test_complete_equals_the_full_scan(sparse_fixtures, mixed, spec):
    if spec == "mixed":
        path = mixed
    else:
        kind, rel = spec.split(":", 1)
        path = (sparse_fixtures if kind == "fixture" else DATA) / rel
    full = scan(str(path), ScanContext())
    light = scan(str(path), ScanContext(block_walk=False))
    before = _json(light)
    assert deferred_engines(light) == ("clickhouse",) and deferred_engines(full) == ()
    assert before != _json(full)                   # the light scan really left something out
    done = complete(light, str(path))
    assert _json(done) == _json(full)
    assert _json(light) == before                  # the dataset the window shows is not changed
    # the other engines' files are the first scan's own objects; ClickHouse's are new
    old = {f.path: f for f in light.files}
    for f in done.files:
        assert (f is old[f.path]) == (f.engine != "clickhouse")
    # and what the views read beyond the JSON: units of every walked block
    units = {f.path: f.units for f in full.files if f.engine == "clickhouse" and f.units is not None}
    assert units
    for f in done.files:
        if f.path in units:
            assert f.units is not None and f.units.tobytes() == units[f.path].tobytes()
    assert deferred_engines(done) == ()
    assert complete(done, str(path)) is None       # nothing left
    # the views' facts say whether the blocks were read (the Columns view's block chart says so)
    assert light.facts["clickhouse"].blocks_walked is False and done.facts["clickhouse"].blocks_walked is True


def test_innodb_alone_defers_nothing(sparse_fixtures):
    light = scan(str(sparse_fixtures / "innodb" / "16k" / "fx"), ScanContext(block_walk=False))
    assert deferred_engines(light) == ()
    assert complete(light, str(sparse_fixtures / "innodb" / "16k" / "fx")) is None


def test_cancelled_complete_gives_nothing(sparse_fixtures):
    path = str(sparse_fixtures / "clickhouse" / "datadir")
    light = scan(path, ScanContext(block_walk=False))
    assert complete(light, path, ScanContext(is_cancelled=lambda: True)) is None


# -- the window -------------------------------------------------------------------------

@pytest.fixture
def window(qtbot, tmp_path):
    from PySide6.QtCore import QSettings
    from dbxray.app.window import MainWindow
    w = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat))
    qtbot.addWidget(w)
    return w


def test_window_shows_the_light_scan_then_the_walked_one(window, qtbot, sparse_fixtures):
    path = str(sparse_fixtures / "clickhouse" / "datadir")
    shown = []
    window.dataset_loaded.connect(lambda ds: shown.append((ds, window._walk_pending)))
    window.open_path(path)
    assert window.wait_idle(180000)
    assert len(shown) == 2
    (light, walking), (walked, after) = shown
    assert walking and not after
    assert light.detail["clickhouse"]["walked"] is False and walked.detail["clickhouse"]["walked"] is True
    assert window.dataset is walked
    assert _json(walked) == _json(scan(path, ScanContext()))
    # the first paint had the sizes the engine reports; the codecs came with the walk
    light_cols = light.sections["clickhouse"]["tables"][0]["columns"]
    walked_cols = walked.sections["clickhouse"]["tables"][0]["columns"]
    assert [c["compressed_bytes"] for c in light_cols] == [c["compressed_bytes"] for c in walked_cols]
    assert "codecs" not in light_cols[0] and "codecs" in walked_cols[0]
    assert "reading" not in window.status_label.text()


def test_whatif_asked_during_the_walk_runs_on_the_walked_dataset(window, qtbot, sparse_fixtures):
    path = str(sparse_fixtures / "clickhouse" / "datadir")
    window.open_path(path)
    qtbot.waitUntil(lambda: window._walk_running(), timeout=120000)
    view = next(v for v in window.views if type(v).__name__ == "WhatIfView")
    with qtbot.waitSignal(window.whatif_done, timeout=300000) as sig:
        window.run_whatif(view, ["zstd:1"], "0.05")
        assert "starts once the blocks are read" in window.status_label.text()
    assert sig.args[0] is not None
    assert window.last_whatif[0] is window.dataset
    assert window.dataset.detail["clickhouse"]["walked"] is True


def test_cancel_during_the_walk_keeps_the_first_figures(window, qtbot, sparse_fixtures):
    path = str(sparse_fixtures / "clickhouse" / "datadir")
    window.open_path(path)
    qtbot.waitUntil(lambda: window._walk_running(), timeout=120000)
    light = window.dataset
    view = next(v for v in window.views if type(v).__name__ == "WhatIfView")
    window.run_whatif(view, ["zstd:1"], "0.05")
    window.cancel_scan()
    assert window.wait_idle(60000)
    assert window.dataset is light
    text = window.status_label.text()
    assert text.startswith("Reading the blocks cancelled") and "was not run" in text
    assert not any("cancel" in window.errors.item(i).text().lower() for i in range(window.errors.count()))

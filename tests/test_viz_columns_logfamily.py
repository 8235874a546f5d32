"""The Columns view draws Log-family tables (tests/data/clickhouse_versions,
ClickHouse 26.9): the bars are the engine's compressed bytes (Log, TinyLog) or the
computed split of data.bin (StripeLog: the engine reports 0, purple bars), the
uncompressed bytes from the block walk, the histogram counts every block."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from dbxray.parsers.scan import scan
from dbxray.parsers.tree import build_tree
from dbxray.viz.columns import ColumnSizesView, column_rows, treemap_tree

SRC = Path(__file__).resolve().parent / "data" / "clickhouse_versions" / "chdb-4.4.0"
TRUTH = json.loads((SRC / "truth.json").read_text())


@pytest.fixture(scope="module")
def ds():
    return scan(str(SRC / "datadir"))


def drawn(view, name):
    if name not in view.bar_graphs:
        return {}
    item, idx = view.bar_graphs[name]
    widths = np.asarray(item.opts["width"], dtype=float) * view.scale
    return {view.shown[i].name: int(round(w)) for i, w in zip(idx, widths)}


@pytest.mark.parametrize("table", ["log_log", "log_tiny", "log_stripe"])
def test_log_table_bars(qtbot, ds, table, artifacts_dir):
    v = ColumnSizesView()
    qtbot.addWidget(v)
    v.resize(1400, 860)
    v.show()
    v.set_dataset(ds, build_tree(ds))
    v.show_table(f"v.{table}")
    qtbot.wait(10)
    t = next(x for x in ds.sections["clickhouse"]["tables"] if x["table"] == table)
    computed = {c["name"]: c["computed"] for c in t["columns"]}
    sc = {c["name"]: c for c in TRUTH["system_columns"] if c["table"] == table}
    if table == "log_stripe":
        assert drawn(v, "computed") == {n: c["compressed_bytes"] for n, c in computed.items()}
        assert drawn(v, "compressed") in ({}, {n: 0 for n in computed})
    else:
        assert drawn(v, "compressed") == {n: c["data_compressed_bytes"] for n, c in sc.items()}
    assert drawn(v, "uncompressed") == {n: c["uncompressed_bytes"] for n, c in computed.items()}
    assert t["engine"] in v.heading.text() and f"{TRUTH['row_counts'][table]:,} rows" in v.heading.text() \
        or table == "log_tiny" and "4,507 rows" in v.heading.text()
    assert v.note.isVisible() and "reports 0" in v.note.text()
    rows = {r.name: r for r in column_rows(ds, t)}
    assert sum(len(b) for b in rows["a"].block_sizes) == computed["a"]["blocks"]
    v.grab().save(str(artifacts_dir / f"columns_{table}.png"))


def test_log_tables_in_the_treemap(ds):
    root = treemap_tree(ds)
    (db,) = root.children
    names = {c.name: c for c in db.children}
    assert {"log_log", "log_tiny", "log_stripe", "log_codec"} <= set(names)
    assert names["log_stripe"].total == sum(
        c["computed"]["compressed_bytes"] for t in ds.sections["clickhouse"]["tables"] if t["table"] == "log_stripe"
        for c in t["columns"])

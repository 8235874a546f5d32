"""Engine comparison by columns (parsers/compare.py ``column_twins``): the fixture holds
the same ``orders`` columns in 23 tables of four schemas and five engines (MyRocks, InnoDB
plain / page-compressed / ROW_FORMAT=COMPRESSED / partitioned / encrypted / in the system
tablespace, MyISAM Dynamic, Aria Dynamic and Page), and the lineorder columns in two
ARCHIVE tables and an InnoDB one. The groups are checked against an independent reading
of the manifest's SHOW CREATE TABLE, and every member's figures against the manifest:
information_schema's TABLE_ROWS, DATA_LENGTH and INDEX_LENGTH as each engine computes
them (MyISAM/Aria the state, InnoDB the physical page size and partitions, CSV ha_tina's
2 and 0), rows, bytes on disk (MyRocks: its share of shared SSTs, as the manifest splits
them). Then the CLI (``--keyfile``), the view's group choice and ``export --target``."""
from __future__ import annotations

import collections
import os
import shutil
import struct
import subprocess
import sys

import pytest

from dbxray.parsers.compare import CSV_UNKNOWN_ROWS, all_groups, column_twins, compare_json, twins
from dbxray.parsers.keyfile import load_key_file
from dbxray.parsers.model import ScanContext
from dbxray.parsers.scan import scan
from test_compare import datadir, manifest  # noqa: F401  (the same module fixtures: the fixture's manifest and data dir)

ORDERS = "same columns (id, customer_id, created, status, ...)"
LINEORDER = "same columns (LO_OrderKey, LO_LineNumber, LO_CustKey, LO_PartKey, ...)"


@pytest.fixture(scope="module")
def ds(datadir, fixtures_root):
    keys = load_key_file(str(fixtures_root / "mariadb" / "keys.txt"))
    return scan(str(datadir), ScanContext(keys=keys))


def _manifest_groups(manifest) -> list[set[str]]:
    """Tables whose SHOW CREATE TABLE column lines are the same, in several schemas or
    engines: the server's own word for what "the same columns" is."""
    engine = {f"{t['TABLE_SCHEMA']}.{t['TABLE_NAME']}": t["ENGINE"] for t in manifest["sql"]["tables"]}
    by_cols = collections.defaultdict(set)
    for key, text in manifest["sql"]["show_create"].items():
        if not text.startswith("CREATE TABLE"):
            continue
        cols = tuple(line.strip().rstrip(",") for line in text.splitlines()[1:] if line.startswith("  `"))
        by_cols[cols].add(key)
    return [ks for ks in by_cols.values() if len({(engine[k], k.split(".")[0]) for k in ks}) > 1]


def test_groups_are_the_tables_the_server_shows_with_the_same_columns(ds, manifest):
    groups = column_twins(ds)
    assert [g.name for g in groups] == [ORDERS, LINEORDER]
    assert sorted(sorted(r.table for r in g.rows) for g in groups) == \
        sorted(sorted(g) for g in _manifest_groups(manifest))
    orders = groups[0]
    assert orders.by == "columns" and len(orders.rows) == 23
    assert {r.engine for r in orders.rows} == {"rocksdb", "innodb", "myisam", "aria"}
    assert orders.columns[:4] == ["id", "customer_id", "created", "status"]
    # the name groups come first and are unchanged; all_groups = name groups + column groups
    assert [(g.by, g.name) for g in all_groups(ds)] == [("name", "lineorder_phrase"), ("columns", ORDERS),
                                                         ("columns", LINEORDER)]
    assert [[r.table for r in g] for g in twins(ds)] == [["arc.lineorder_phrase", "inno.lineorder_phrase"]]
    # smallest footprint per row first
    bpr = [r.bytes_per_row for r in orders.rows]
    assert bpr == sorted(bpr)


def _est_disk(manifest, table: str) -> int:
    ddl = {r["INDEX_NUMBER"]: r for r in manifest["sql"]["rocksdb_ddl"]}
    return sum(p["est_disk_bytes"] for p in manifest["rocksdb"]["per_index"]
               if p["index_number"] in ddl
               and f"{ddl[p['index_number']]['TABLE_SCHEMA']}.{ddl[p['index_number']]['TABLE_NAME']}" == table)


def test_every_member_equals_the_manifest(ds, manifest, datadir):
    files = {f["path"]: f for f in manifest["files"]}
    checked = collections.Counter()
    for g in column_twins(ds):
        for r in g.rows:
            mt = manifest["tables"][r.table]
            assert (r.is_data_length, r.is_index_length) == (mt["is_data_length"], mt["is_index_length"]), r.table
            if r.engine == "innodb":
                # the server's TABLE_ROWS is a sampled estimate; here the leaf records, exact
                assert r.rows == r.is_table_rows == mt["row_count"], r.table
            elif r.engine == "rocksdb":
                # MyRocks counts the versions a compaction has not merged: rows = its own TABLE_ROWS
                assert r.rows == r.is_table_rows == mt["is_table_rows"] >= mt["row_count"], r.table
            else:
                assert r.rows == mt["row_count"] and r.is_table_rows == mt["is_table_rows"], r.table
            frm_par = [p for p in mt["files"] if p.endswith((".frm", ".par"))]
            if r.engine == "rocksdb":
                want = _est_disk(manifest, r.table) + sum(files[p]["apparent_size"] for p in frm_par)
                assert abs(r.disk_bytes - want) <= 2, (r.table, r.disk_bytes, want)
            elif r.table == "inno.in_sys":
                assert r.files == ["ibdata1", "inno/in_sys.frm"]
                assert r.disk_bytes == mt["is_data_length"] + mt["is_index_length"] + files["inno/in_sys.frm"][
                    "apparent_size"]
            else:
                assert sorted(r.files) == sorted(mt["files"]), r.table
                assert r.disk_bytes == sum(files[p]["apparent_size"] for p in mt["files"]), r.table
                assert r.allocated_bytes == sum(os.stat(datadir / p).st_blocks * 512 for p in mt["files"])
            checked[r.engine] += 1
    assert checked == {"innodb": 16, "rocksdb": 5, "aria": 2, "myisam": 1, "archive": 2}
    # the raw row: each ARCHIVE table its own, the InnoDB twin its same-name ARCHIVE table's
    lo = {r.table: r for r in column_twins(ds)[1].rows}
    for name in ("lineorder_words", "lineorder_phrase"):
        sec = ds.file(f"arc/{name}.ARZ").sections["archive"]
        assert lo[f"arc.{name}"].raw_row_bytes == sec.uncompressed_bytes / sec.rows
    assert lo["inno.lineorder_phrase"].raw_row_bytes == lo["arc.lineorder_phrase"].raw_row_bytes
    assert lo["arc.lineorder_words"].raw_row_bytes != lo["arc.lineorder_phrase"].raw_row_bytes


def test_without_the_key_the_encrypted_tables_are_named_not_guessed(datadir):
    groups = column_twins(scan(str(datadir)))
    enc = [r for r in groups[0].rows if r.table.startswith("enc.") and r.table != "enc.forced_off"]
    assert len(enc) == 5 and groups[0].rows[-5:] == enc           # rows not known: last
    for r in enc:
        assert r.rows is None and r.bytes_per_row is None and r.is_data_length is None
        assert any(n.startswith("rows not known: enc/") and "(read with --keyfile)" in n for n in r.notes)


def test_csv_reports_what_ha_tina_tells_information_schema(sparse_fixtures, manifest, tmp_path):
    """A CSV table and its copy in a second schema: information_schema's TABLE_ROWS 2 and
    DATA_LENGTH 0 (the manifest's, for 800 rows) beside the 800 rows of the file."""
    src = sparse_fixtures / "mariadb" / "datadir" / "misc"
    for db in ("misc", "misc2"):
        (tmp_path / db).mkdir()
        for ext in ("frm", "CSV", "CSM"):
            shutil.copyfile(src / f"csv_t.{ext}", tmp_path / db / f"csv_t.{ext}")
    groups = compare_json(scan(str(tmp_path)))["groups"]
    assert [(g["name"], g["by"]) for g in groups] == [("csv_t", "name")]
    mt = manifest["tables"]["misc.csv_t"]
    for t in groups[0]["tables"]:
        assert t["engine"] == "csv" and t["rows"] == mt["row_count"] == 800
        assert t["information_schema"] == {"table_rows": mt["is_table_rows"], "data_length": mt["is_data_length"],
                                           "index_length": mt["is_index_length"]} == \
            {"table_rows": CSV_UNKNOWN_ROWS, "data_length": 0, "index_length": 0}
        assert any("ha_tina.cc" in n for n in t["notes"])


def _dbxray(*args, cwd):
    return subprocess.run([sys.executable, "-m", "dbxray.app", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})


def test_cli_keyfile_and_export_of_a_chosen_group(datadir, fixtures_root, tmp_path):
    res = _dbxray("compare", str(datadir), "--keyfile", str(fixtures_root / "mariadb" / "keys.txt"), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0] == "lineorder_phrase:" and f"{ORDERS}:" in lines and f"{LINEORDER}:" in lines
    k4 = next(line for line in lines if line.strip().startswith("enc.k4 "))
    assert "1,000" in k4 and "160.0 KiB" in k4 and "48.0 KiB" in k4           # read with the key
    block = lines[lines.index(f"{LINEORDER}:"):]
    assert sum(1 for line in block[:12] if line.strip().startswith("raw row: ")) == 2
    for ext in ("png", "svg"):
        out = tmp_path / f"orders.{ext}"
        res = _dbxray("export", str(datadir), "--view", "compare", "--target", "misc.aria_page", "-o", str(out),
                      "--width", "1000", "--height", "700", cwd=tmp_path)
        assert res.returncode == 0, res.stderr
        data = out.read_bytes()
        if ext == "png":
            assert struct.unpack(">II", data[16:24]) == (1000, 700)
        else:
            assert b"misc.aria_page" in data and b"rdb.orders" in data and b"inno.zip4" in data
    res = _dbxray("export", str(datadir), "--view", "compare", "--target", "no.such", "-o",
                  str(tmp_path / "x.png"), cwd=tmp_path)
    assert res.returncode == 2 and "in no comparison group" in res.stderr


def test_view_chooses_the_group(ds, qtbot):
    from dbxray.parsers.tree import build_tree
    from dbxray.viz.compare import CompareView
    v = CompareView()
    qtbot.addWidget(v)
    v.set_dataset(ds, build_tree(ds))
    assert v.group_box.count() == 3 and v.table.rowCount() == 2
    v.set_target("rdb.t_nopk")
    assert v.group_box.currentIndex() == 1 and v.table.rowCount() == 23
    shown = [v.table.item(k, 0).text() for k in range(23)]
    assert shown == [r.table for r in column_twins(ds)[0].rows] and "misc.myisam_dyn" in shown
    v.set_target(LINEORDER)
    assert v.table.rowCount() == 3
    with pytest.raises(KeyError):
        v.set_target("no.such")

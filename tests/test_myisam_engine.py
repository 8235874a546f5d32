"""The MyISAM engine (parsers/myisam/), behind the engine protocol: every MyISAM file of
the real MariaDB data dir gets its engine, database, table and role; each table's
TABLE_ROWS, DATA_LENGTH, INDEX_LENGTH and DATA_FREE equal what the server reported
(manifest: information_schema.TABLES and SHOW TABLE STATUS), the rows in the data file
equal COUNT(*); damaged files are named with their offsets, the rest still read, and
nothing is written."""
from __future__ import annotations

import hashlib
import json
import os
import shutil

import pytest

from dbxray.parsers.myisam import dynrec
from dbxray.parsers.scan import scan
from dbxray.parsers.tree import build_tree

ROLE = {"data": "table_data", "index": "table_index"}


@pytest.fixture(scope="module")
def manifest(fixtures_root):
    return json.loads((fixtures_root / "mariadb" / "manifest.json").read_text())


@pytest.fixture(scope="module")
def ds(sparse_fixtures):
    return scan(str(sparse_fixtures / "mariadb" / "datadir"))


def _status(manifest, db, name):
    i_s = next(r for r in manifest["sql"]["tables"] if (r["TABLE_SCHEMA"], r["TABLE_NAME"]) == (db, name))
    st = [r for r in manifest["sql"]["aria_myisam_csv_table_status"] if r["Name"] == name and db == "misc"]
    return i_s, (st[0] if st else None)


def test_every_myisam_file_gets_engine_database_table_and_role(ds, manifest):
    want = {f["path"]: f for f in manifest["files"] if f["engine"] == "myisam"}
    got = {f.path: f for f in ds.files if f.engine == "myisam"}
    assert set(got) == set(want) and len(got) == 4
    for path, f in got.items():
        assert f.role == ROLE[want[path]["role"]], path
        assert f"{f.database}.{f.table}" == want[path]["table"], path
        assert f.errors == [] and f.warnings == [], (path, f.errors, f.warnings)
        assert int(f.units["stored"].sum()) == f.apparent_bytes == want[path]["apparent_size"], path


@pytest.mark.parametrize("key", ["misc.myisam_dyn", "misc.myisam_fixed"])
def test_table_figures_equal_information_schema_field_by_field(ds, manifest, key):
    db, name = key.split(".")
    t = next(t for t in ds.tables if t.engine == "myisam" and t.key == key)
    m = manifest["tables"][key]
    i_s, st = _status(manifest, db, name)
    assert t.info["table_rows"] == m["is_table_rows"] == i_s["TABLE_ROWS"] == st["Rows"]
    assert t.info["data_length"] == m["is_data_length"] == i_s["DATA_LENGTH"] == st["Data_length"]
    assert t.info["index_length"] == m["is_index_length"] == i_s["INDEX_LENGTH"] == st["Index_length"]
    assert t.info["data_free"] == m["is_data_free"] == i_s["DATA_FREE"] == st["Data_free"]
    assert t.info["row_format"] == m["row_format"] == st["Row_format"]
    assert t.info["rows"] == manifest["sql"]["row_counts"][key] == m["row_count"]      # COUNT(*)
    assert t.info["deleted_bytes"] == 0 == t.info["data_free"]
    assert sorted(t.files) == sorted(p for p in m["files"] if not p.endswith(".frm"))


def test_key_blocks_are_every_block_of_the_index(ds, manifest):
    for key in ("misc.myisam_dyn", "misc.myisam_fixed"):
        db, name = key.split(".")
        f = ds.file(f"{db}/{name}.MYI")
        sec = f.sections["myisam"]
        assert sec["keystart"] + sec["blocks"] * 1024 == sec["key_file_length"] == f.apparent_bytes
        assert sec["leaf_blocks"] + sec["node_blocks"] == sec["blocks"] and sec["deleted_blocks"] == 0
        rows = manifest["sql"]["row_counts"][key]
        for k in sec["per_key"]:
            # a B-tree key holds each row's key once, in a leaf or a node block (the first key is the PRIMARY KEY)
            assert k["entries"] == rows and k["levels"] == 2 and not k["packed"]
        assert all(o >= 0 for o in f.units["owner"][1:])         # every key block's key found by the walk
        assert set(f.unit_facts.level[1:].tolist()) == {0, 1}


def test_tree_and_json(ds):
    root = build_tree(ds)
    row = next(c for c in root.children if c.kind == "engine" and c.name == "MyISAM")
    assert {c.name for c in row.children} == {"misc"}
    js = ds.to_json()
    assert "myisam" in js["engines"]
    sec = next(f for f in js["files"] if f["path"] == "misc/myisam_fixed.MYD")["myisam"]
    assert sec == {"role": "data", "row_format": "Fixed", "rows": 400, "deleted_rows": 0, "deleted_bytes": 0,
                   "trailing_bytes": 0, "complete": True}


# -- bad input -------------------------------------------------------------------------

def _copy(fixtures_root, tmp_path, name):
    d = tmp_path / "misc"
    d.mkdir(parents=True, exist_ok=True)
    for ext in ("MYI", "MYD"):
        shutil.copy(fixtures_root / "mariadb" / "datadir" / "misc" / f"{name}.{ext}", d / f"{name}.{ext}")
    return d


def _fingerprint(d):
    return {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), os.stat(p).st_mtime_ns, p.stat().st_size)
            for p in sorted(d.iterdir())}


def _scan(d):
    before = _fingerprint(d)
    ds = scan(str(d))
    assert _fingerprint(d) == before                  # nothing written
    files = {f.path: f for f in ds.files}
    return files, next(t for t in ds.tables if t.engine == "myisam")


def _patch(path, offset, data):
    b = bytearray(path.read_bytes())
    b[offset:offset + len(data)] = data
    path.write_bytes(bytes(b))


def test_impossible_counts_are_named_and_the_data_file_still_counted(fixtures_root, tmp_path):
    d = _copy(fixtures_root, tmp_path, "myisam_fixed")
    _patch(d / "myisam_fixed.MYI", 28, (10 ** 12).to_bytes(8, "big"))          # state.records
    files, t = _scan(d)
    errs = files["myisam_fixed.MYI"].errors
    assert errs == ["myisam_fixed.MYI @ offset 28: records 1000000000000 + deleted 0 rows of at least 872 bytes "
                    "cannot fit data_file_length 348800"]
    assert t.info["table_rows"] == 10 ** 12 and t.info["rows"] == 400             # partial: the rows still counted
    assert any("400 rows in the data file, the state says 1000000000000" in w
               for w in files["myisam_fixed.MYD"].warnings)


def test_impossible_key_root_and_empty(fixtures_root, tmp_path):
    d = _copy(fixtures_root, tmp_path, "myisam_dyn")
    _patch(d / "myisam_dyn.MYI", 76, (10 ** 9).to_bytes(8, "big"))            # state.empty
    _patch(d / "myisam_dyn.MYI", 124, (1 << 40).to_bytes(8, "big"))           # key_root[0]
    files, t = _scan(d)
    errs = files["myisam_dyn.MYI"].errors
    assert "myisam_dyn.MYI @ offset 76: empty 1000000000 > data_file_length 215196" in errs
    assert any(e.startswith("myisam_dyn.MYI @ offset 124: key_root[0] 1099511627776 outside the key blocks")
               for e in errs)
    assert t.info["rows"] == 2000 and files["myisam_dyn.MYI"].sections["myisam"]["blocks"] == 50


def test_truncated_index_and_data_files(fixtures_root, tmp_path):
    d = _copy(fixtures_root, tmp_path, "myisam_dyn")
    whole = (d / "myisam_dyn.MYI").read_bytes()
    (d / "myisam_dyn.MYI").write_bytes(whole[:100])
    files, t = _scan(d)
    assert files["myisam_dyn.MYI"].errors == ["myisam_dyn.MYI @ offset 100: state cut at byte 100 (it takes 124 "
                                              "bytes)"]
    assert t.info["table_rows"] is None and t.info["rows"] is None
    assert files["myisam_dyn.MYD"].warnings == ["misc/myisam_dyn.MYD: no readable .MYI state beside it: the rows "
                                                "are not counted".replace("misc/", "")]
    (d / "myisam_dyn.MYI").write_bytes(whole[:3000])                   # the state whole, key blocks cut
    data = (d / "myisam_dyn.MYD").read_bytes()
    (d / "myisam_dyn.MYD").write_bytes(data[:100_001])
    files, t = _scan(d)
    assert "myisam_dyn.MYI @ offset 3000: file ends at 3000, the state's key_file_length is 52224: truncated" \
        in files["myisam_dyn.MYI"].errors
    assert t.info["table_rows"] == 2000                                 # the state is whole
    me = files["myisam_dyn.MYD"].errors
    assert me[0] == ("myisam_dyn.MYD @ offset 100001: file ends at 100001, the state's data_file_length is 215196: "
                     "truncated (rows past 100001 are lost)")
    assert len(me) == 2 and "runs past the end of the data at 100001" in me[1]
    sec = files["myisam_dyn.MYD"].sections["myisam"]
    assert 900 < sec["rows"] < 1000 and sec["complete"] is False and sec["walked_bytes"] <= 100_001


def test_not_a_myisam_file(fixtures_root, tmp_path):
    d = _copy(fixtures_root, tmp_path, "myisam_fixed")
    _patch(d / "myisam_fixed.MYI", 0, b"\x00\x01\x02\x03")
    files, t = _scan(d)
    assert files["myisam_fixed.MYI"].errors == ["myisam_fixed.MYI @ offset 0: not a MyISAM index file: magic "
                                                "00010203 (fefe07 expected)"]


def test_deleted_rows_are_what_optimize_gives_back(fixtures_root, tmp_path):
    """A deleted row as _mi_delete_static_record leaves it (first byte 0, the delete link
    after it) and a deleted block as the dynamic format stores one (type 0, its length,
    two links), with the state updated as the engine does: counted, and equal to DATA_FREE."""
    d = _copy(fixtures_root, tmp_path, "myisam_fixed")
    _patch(d / "myisam_fixed.MYD", 5 * 872, b"\x00" + b"\xff" * 6)
    _patch(d / "myisam_fixed.MYI", 28, (399).to_bytes(8, "big") + (1).to_bytes(8, "big"))
    _patch(d / "myisam_fixed.MYI", 76, (872).to_bytes(8, "big"))
    files, t = _scan(d)
    assert (t.info["rows"], t.info["table_rows"], t.info["deleted_rows"]) == (399, 399, 1)
    assert t.info["deleted_bytes"] == t.info["data_free"] == 872
    assert files["myisam_fixed.MYD"].warnings == [] and files["myisam_fixed.MYD"].errors == []

    d = _copy(fixtures_root, tmp_path / "b", "myisam_dyn")
    data = (d / "myisam_dyn.MYD").read_bytes()
    w = dynrec.walk(data, len(data))
    off, length = next((int(u["offset"]), int(u["stored"])) for u in w.units[10:] if u["stored"] % 4 == 0)
    _patch(d / "myisam_dyn.MYD", off, b"\x00" + length.to_bytes(3, "big") + b"\xff" * 16)
    _patch(d / "myisam_dyn.MYI", 28, (1999).to_bytes(8, "big") + (1).to_bytes(8, "big"))
    _patch(d / "myisam_dyn.MYI", 76, length.to_bytes(8, "big"))
    files, t = _scan(d)
    sec = files["myisam_dyn.MYD"].sections["myisam"]
    assert (sec["rows"], sec["deleted_blocks"], sec["deleted_bytes"]) == (1999, 1, length)
    assert t.info["deleted_bytes"] == t.info["data_free"] == length and t.info["table_rows"] == 1999
    assert files["myisam_dyn.MYD"].warnings == []

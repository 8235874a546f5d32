"""The CSV engine (parsers/csv/), added behind the engine protocol as a package and
one registry line: its files detected in the real MariaDB data dir, rows counted in
the data file against COUNT(*) and the meta file's count against SHOW TABLE STATUS
(both from the manifest), what information_schema gets wrong shown beside them, and
damaged files named with their offsets."""
from __future__ import annotations

import json
import shutil

import pytest

from dbxray.parsers.csv import data as csv_data
from dbxray.parsers.fileio import ReadOnlyFile
from dbxray.parsers.scan import scan
from dbxray.parsers.tree import build_tree


@pytest.fixture(scope="module")
def manifest(fixtures_root):
    return json.loads((fixtures_root / "mariadb" / "manifest.json").read_text())


@pytest.fixture(scope="module")
def ds(sparse_fixtures):
    return scan(str(sparse_fixtures / "mariadb" / "datadir"))


def test_files_tables_and_counts_equal_the_engines_own(ds, manifest):
    want = {f["path"]: f for f in manifest["files"] if f["engine"] == "csv"}
    got = {f.path: f for f in ds.files if f.engine == "csv"}
    assert set(got) == set(want)
    for path, f in got.items():
        assert f.role == {"data": "table_data", "metadata": "table_metadata"}[want[path]["role"]]
        assert f.apparent_bytes == want[path]["apparent_size"] and not f.errors
        assert f"{f.database}.{f.table}" == want[path]["table"]
    tables = {t.key: t for t in ds.tables if t.engine == "csv"}
    assert set(tables) == {"misc.csv_t", "mysql.general_log", "mysql.slow_log"}
    t = tables["misc.csv_t"]
    status = next(r for r in manifest["sql"]["aria_myisam_csv_table_status"] if r["Name"] == "csv_t")
    i_s = next(r for r in manifest["sql"]["tables"] if r["TABLE_NAME"] == "csv_t")
    assert t.info["rows"] == manifest["sql"]["row_counts"]["misc.csv_t"] == 800          # COUNT(*)
    assert t.info["rows_recorded"] == status["Rows"] == 800                                  # SHOW TABLE STATUS
    assert t.info["data_bytes"] == want["misc/csv_t.CSV"]["apparent_size"] == 103008
    assert (i_s["TABLE_ROWS"], i_s["DATA_LENGTH"]) == (2, 0)       # what I_S claims instead
    assert t.info["dirty"] is False
    from dbxray.parsers import engines
    assert "csv" in ds.engines and ds.engines == [e for e in engines.names() if e in ds.engines]   # registry order
    root = build_tree(ds)
    csv_row = next(c for c in root.children if c.kind == "engine" and c.name == "CSV")
    assert {c.name for c in csv_row.children} == {"misc", "mysql"}
    js = ds.to_json()
    sec = next(f for f in js["files"] if f["path"] == "misc/csv_t.CSV")["csv"]
    assert sec == {"rows": 800, "row_bytes": 103008, "trailing_bytes": 0, "crlf_rows": 0, "role": "data"}


def _one_table(tmp_path, sparse_fixtures, meta: bytes | None = None, data: bytes | None = None):
    d = tmp_path / "db"
    d.mkdir(parents=True)
    src = sparse_fixtures / "mariadb" / "datadir" / "misc"
    (d / "t.CSM").write_bytes(meta if meta is not None else (src / "csv_t.CSM").read_bytes())
    (d / "t.CSV").write_bytes(data if data is not None else (src / "csv_t.CSV").read_bytes())
    ds = scan(str(d))
    return {f.path: f for f in ds.files}, next(t for t in ds.tables if t.engine == "csv")


def test_damaged_meta_files_are_named_with_their_offsets(tmp_path, sparse_fixtures):
    good = (sparse_fixtures / "mariadb" / "datadir" / "misc" / "csv_t.CSM").read_bytes()
    files, t = _one_table(tmp_path / "a", sparse_fixtures, meta=good[:20])
    assert files["t.CSM"].errors == ["t.CSM @ offset 20: meta file of 20 bytes, 35 expected"]
    assert t.info["rows_recorded"] is None and t.info["rows"] == 800
    bad = bytearray(good)
    bad[0] = 7
    bad[34] = 1
    files, t = _one_table(tmp_path / "b", sparse_fixtures, meta=bytes(bad))
    assert "offset 0: TINA_CHECK_HEADER is 7" in files["t.CSM"].errors[0]
    assert any("offset 34: dirty flag set" in w for w in files["t.CSM"].warnings) and t.info["dirty"] is True


def test_rows_by_every_line_end_and_a_row_cut_short(tmp_path, sparse_fixtures):
    files, t = _one_table(tmp_path / "a", sparse_fixtures, data=b"1,a\r\n2,b\n3,c\r4,d\n5,e")
    f = files["t.CSV"]
    assert f.sections["csv"] == {"rows": 4, "row_bytes": 17, "trailing_bytes": 3, "crlf_rows": 1, "role": "data"}
    assert f.errors == ["t.CSV @ offset 17: 3 bytes after the last line end: a row cut short (the engine marks "
                        "such a table crashed)"]


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 64])
def test_counting_across_chunk_boundaries(tmp_path, monkeypatch, chunk):
    p = tmp_path / "x.CSV"
    text = b"a\r\nb\rc\n\r\nd\r\re\n\r"
    p.write_bytes(text)
    monkeypatch.setattr(csv_data, "CHUNK", chunk)
    with ReadOnlyFile(str(p)) as f:
        d = csv_data.count_rows(f)
    # rows end at: \r\n, \r, \n, \r\n, \r, \r, \n, \r  -> 8; two of them \r\n
    assert (d.rows, d.crlf_rows, d.trailing_bytes, d.data_bytes) == (8, 2, 0, len(text))


def test_an_empty_log_table_is_zero_rows(sparse_fixtures, tmp_path):
    src = sparse_fixtures / "mariadb" / "datadir" / "mysql"
    d = tmp_path / "mysql"
    d.mkdir()
    for n in ("general_log.CSV", "general_log.CSM"):
        shutil.copy(src / n, d / n)
    ds = scan(str(d))
    t = next(t for t in ds.tables if t.engine == "csv")
    assert (t.key, t.info["rows"], t.info["rows_recorded"]) == ("mysql.general_log", 0, 0)


@pytest.mark.parametrize("chunk,piece", [(1, 2), (3, 4), (5, 3), (64, 7), (7, 64)])
def test_rows_per_piece_against_each_line_end(tmp_path, monkeypatch, chunk, piece):
    """The unit map's pieces: the rows whose line end lies in each piece, across chunk and
    piece boundaries, equal a byte-by-byte walk; the bytes after the last line end are
    their own kind."""
    rng = __import__("random").Random(chunk * 100 + piece)
    text = bytes(rng.choice(b"ab,\r\n") for _ in range(300)) + b"tail"
    p = tmp_path / "x.CSV"
    p.write_bytes(text)
    monkeypatch.setattr(csv_data, "CHUNK", chunk)
    monkeypatch.setattr(csv_data, "PIECE", piece)
    with ReadOnlyFile(str(p)) as f:
        d = csv_data.count_rows(f)
    want = [0] * (-(-len(text) // piece))
    for i, c in enumerate(text):
        if c == 10 or (c == 13 and (i + 1 == len(text) or text[i + 1] != 10)):
            want[i // piece] += 1
    assert d.piece_rows.tolist() == want and sum(want) == d.rows
    u = csv_data.piece_units(len(text), d.data_bytes, d.piece_rows)
    assert int(u["stored"].sum()) == len(text) and (u["offset"] == [i * piece for i in range(len(want))]).all()
    assert (u["kind"] == 1).tolist() == [i >= d.data_bytes // piece for i in range(len(want))]


def test_data_file_on_the_unit_map(tmp_path, sparse_fixtures):
    from dbxray.viz.extentmap import MapData, mapped_files
    rows = b"".join(b"%d,'row %d of the table'\n" % (i, i) for i in range(120000))     # ~3.4 MiB
    files, t = _one_table(tmp_path / "a", sparse_fixtures, data=rows + b"7,cut")
    f = files["t.CSV"]
    assert f.units is not None and len(f.units) == -(-len(rows + b"7,cut") // csv_data.PIECE)
    assert int(f.unit_facts.records.sum()) == f.sections["csv"]["rows"] == 120000
    from types import SimpleNamespace
    (e,) = mapped_files(SimpleNamespace(files=list(files.values())))       # the .CSM has no units
    d = MapData(e)
    res = d.mode("type")
    assert dict(zip(res.labels, res.counts.tolist())) == {"rows": len(f.units) - 1, "row cut short": 1}

"""ARCHIVE rows decoded into their columns with the table's .frm (parsers/server/record.py
unpack_row: ha_archive.cc pack_row's null bytes and Field::pack of each column): the fixture's
two ARCHIVE tables give back, as text, the TSV they were loaded from to the byte (the manifest's
``inputs``: 26,000 rows each, 5,895,030 and 9,490,834 bytes); a cut or overlong row is named."""
from __future__ import annotations

import json
import zlib

import pytest

from dbxray.compress.engines.innodbrows import split_rows
from dbxray.parsers.scan import scan
from dbxray.parsers.server.frmfields import read_frm_columns
from dbxray.parsers.server.record import RecordError, formatter, pack_plan, unpack_row, value_text


def _row_stream(path: str, data_start: int) -> bytes:
    raw = open(path, "rb").read()[data_start:]
    out = []
    while len(raw) > 8:
        d = zlib.decompressobj(-15)
        out.append(d.decompress(raw))
        if not d.eof:
            break
        raw = d.unused_data[8:]                         # the member's crc32 and length
    return b"".join(out)


#: the first row's first columns (LO_OrderKey .. LO_ShipPriority) of each TSV
FIRST = {"lineorder_words": ["1", "1", "12317", "10695", "111", "19951104", "4-NOT SPECIFIED", "0"],
         "lineorder_phrase": ["1", "1", "5843", "81112", "96", "19920407", "3-MEDIUM", "0"]}


@pytest.fixture(scope="module")
def arc(fixtures_root):
    return scan(str(fixtures_root / "mariadb" / "datadir" / "arc"))


@pytest.mark.parametrize("table", ("lineorder_words", "lineorder_phrase"))
def test_rows_give_back_the_loaded_tsv(arc, fixtures_root, table):
    entry = arc.file(f"{table}.ARZ")
    rows = split_rows(_row_stream(entry.abspath, int(entry.sections["archive"]["data_start"])), 0)
    cols = read_frm_columns((fixtures_root / "mariadb" / "datadir" / "arc" / f"{table}.frm").read_bytes())
    plan = pack_plan(cols)
    text = {f.name: formatter(f) for f in cols.fields}
    size = 0
    for r in rows:
        line = "\t".join("\\N" if v.data is None else text[v.field.name](v.data) for v in unpack_row(r, cols, plan))
        size += len(line.encode()) + 1
    want = json.loads((fixtures_root / "mariadb" / "manifest.json").read_text())["inputs"][table]
    assert len(rows) == want["rows"] == 26000 and size == want["bytes"]
    first = [value_text(v) for v in unpack_row(rows[0], cols)]
    assert first[:8] == FIRST[table]
    with pytest.raises(RecordError, match="runs past"):
        unpack_row(rows[0][:-5], cols, plan)
    with pytest.raises(RecordError, match="its columns end"):
        unpack_row(rows[0] + b"x", cols, plan)

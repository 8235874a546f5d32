"""A Fixed MyISAM data file's rows decoded with the table's .frm (parsers/server/record.py,
compress/engines/fixedrows.py): the fixture's ``misc.myisam_fixed`` gives back the TSV it was
loaded from byte for byte (manifest ``inputs``: 400 rows, 47,929 bytes); each row's InnoDB and
full-width images; the cross-engine row models run on them. The real InnoDB / MyRocks sizes
are checked in tests/test_archive_cross_engine.py (a private server, CTAS)."""
from __future__ import annotations

import json
import shutil

import pytest

from dbxray.compress.engines.fixedrows import full_width_image, innodb_image
from dbxray.compress.whatif import run_whatif, targets_by_name
from dbxray.parsers.scan import scan
from dbxray.parsers.server.frmfields import read_frm_columns
from dbxray.parsers.server.record import RecordError, datetime2_text, decimal_text, record_values, value_text


@pytest.fixture(scope="module")
def fixed(fixtures_root):
    misc = fixtures_root / "mariadb" / "datadir" / "misc"
    cols = read_frm_columns((misc / "myisam_fixed.frm").read_bytes())
    data = (misc / "myisam_fixed.MYD").read_bytes()
    rows = [record_values(data[k:k + cols.reclength], cols) for k in range(0, len(data), cols.reclength)]
    return cols, rows


def test_rows_give_back_the_loaded_tsv(fixed, fixtures_root):
    cols, rows = fixed
    want = json.loads((fixtures_root / "mariadb" / "manifest.json").read_text())["inputs"]["myisam_fixed"]
    tsv = b"".join(("\t".join("\\N" if t is None else t for t in map(value_text, r)) + "\n").encode()
                   for r in rows)
    assert len(rows) == want["rows"] == 400 and len(tsv) == want["bytes"] == 47929
    assert tsv.startswith(b"1\t43840\t2023-03-09 12:28:37\tdelivered\t3231.83\tdubrer ")


def test_images(fixed):
    cols, rows = fixed
    r = rows[2]                                # 3, ..., 'shipped', ..., 'kon dous thou pleasadou pe'
    assert r[-1].data.rstrip(b" ") == b"kon dous thou pleasadou pe"
    # null bitmap 1 + length bytes of status (1) and note (2: its maximum is over 255 bytes and
    # the value over 127) + 8 + 4 + 5 + each utf8mb4 CHAR trimmed to no fewer bytes than its
    # characters (12 and 200) + 6
    assert len(innodb_image(r, 1)) == 1 + 1 + 2 + 8 + 4 + 5 + 12 + 6 + 200
    assert len(full_width_image(r, 1)) == 1 + 8 + 4 + 5 + 48 + 6 + 800
    nulls = [r for r in rows if r[-1].data is None]
    assert nulls and all(len(full_width_image(r, 1)) == 1 + 8 + 4 + 5 + 48 + 6 for r in nulls)
    with pytest.raises(RecordError):
        record_values(b"\x01" * 10, cols)


def test_decimal_and_datetime_text():
    assert decimal_text(bytes.fromhex("800000000c0d"), 12, 2) == "12.13"
    assert decimal_text(bytes(x ^ 0xFF for x in bytes.fromhex("800000000c0d")), 12, 2) == "-12.13"
    v = ((2024 * 13 + 2) << 22 | 29 << 17 | 23 << 12 | 59 << 6 | 58) + 0x8000000000
    assert datetime2_text(v.to_bytes(5, "big"), 0) == "2024-02-29 23:59:58"


def test_fixed_rows_go_through_the_row_models(fixtures_root, tmp_path):
    src = fixtures_root / "mariadb" / "datadir" / "misc"
    for p in src.glob("myisam_fixed.*"):
        shutil.copyfile(p, tmp_path / p.name)
    res = run_whatif(scan(str(tmp_path)), ["zlib:6"], sample="all", raw_models=False, engines=("myisam",))
    t = targets_by_name(res)["myisam_fixed.MYD"]
    assert t["primary_model"] == "innodb_from_rows_estimate"
    got = {r["model"]: r["projected_bytes"] for r in t["results"] if r["codec"] in ("none", "zlib:6", "zstd:3", "zlib:5")}
    # 400 records of ~118 bytes (+24 of header and ids) fill 7 leaf pages, not the 21 pages the
    # 348,800 bytes of full-width rows would
    assert 9 * 16384 < got["innodb_from_rows_estimate"] < 12 * 16384
    assert {"myrocks_from_rows_estimate", "tokudb_from_rows_estimate",
            "innodb_row_compressed_kbs8k_from_rows_estimate"} <= set(got)
    assert any("decoded with the table's .frm" in n for n in t["notes"])
    (tmp_path / "myisam_fixed.frm").unlink()                        # no .frm: no row models, said so
    res = run_whatif(scan(str(tmp_path)), ["zlib:6"], sample="all", raw_models=False, engines=("myisam",))
    t = targets_by_name(res)["myisam_fixed.MYD"]
    assert t["primary_model"] == "innodb_page_compressed_estimate"
    assert any("Fixed rows not decoded: no readable .frm" in n for n in t["notes"])

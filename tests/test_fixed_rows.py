"""A Fixed MyISAM data file's rows and an Aria Page one's decoded with the table's .frm
(parsers/server/record.py, parsers/aria/blockrow.py, compress/engines/fixedrows.py): the
fixture's ``misc.myisam_fixed`` gives back the TSV it was loaded from byte for byte (manifest
``inputs``: 400 rows, 47,929 bytes); each row's InnoDB and full-width images; ``misc.aria_page``'s
2,000 rows; the cross-engine row models run on them. The real InnoDB / MyRocks sizes
are checked in tests/test_archive_cross_engine.py (a private server, CTAS)."""
from __future__ import annotations

import json
import shutil
import struct

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
    assert any("decoded into their columns with the table's .frm" in n for n in t["notes"])
    frm = (tmp_path / "myisam_fixed.frm").read_bytes()
    (tmp_path / "myisam_fixed.frm").write_bytes(frm[:400])          # a cut .frm: named, no row models
    res = run_whatif(scan(str(tmp_path)), ["zlib:6"], sample="all", raw_models=False, engines=("myisam",))
    t = targets_by_name(res)["myisam_fixed.MYD"]
    assert t["primary_model"] == "innodb_page_compressed_estimate" and "errors" not in res
    assert any("Fixed rows not decoded" in n and "myisam_fixed.frm" in n and "offset" in n for n in t["notes"])
    (tmp_path / "myisam_fixed.frm").unlink()                        # no .frm: no row models, said so
    res = run_whatif(scan(str(tmp_path)), ["zlib:6"], sample="all", raw_models=False, engines=("myisam",))
    t = targets_by_name(res)["myisam_fixed.MYD"]
    assert t["primary_model"] == "innodb_page_compressed_estimate"
    assert any("Fixed rows not decoded: no readable .frm" in n for n in t["notes"])


def test_aria_page_rows(fixtures_root, tmp_path):
    """The fixture's Aria Page table (ROW_FORMAT=PAGE, TRANSACTIONAL=1): the .MAI's column
    definitions in the engine's order (fixed NOT NULL first), every row of its HEAD pages read
    (ids 1..2000 once each; the values equal the server's SELECT in tests/test_archive_cross_engine.py),
    a damaged column definition and a row going on in other pages named."""
    from dbxray.compress.engines.fixedrows import page_row_units
    from dbxray.parsers.aria.blockrow import (FIELD_NORMAL, FIELD_SKIP_ZERO, FIELD_VARCHAR, ROW_FLAG_EXTENTS,
                                              BlockRowError, read_block_row, read_layout)
    from dbxray.parsers.aria.state import read_header
    src = fixtures_root / "mariadb" / "datadir" / "misc"
    mai = (src / "aria_page.MAI").read_bytes()
    h = read_header(mai)
    layout = read_layout(mai, h)
    assert [(c.offset, c.type) for c in layout.columns] == [
        (1, FIELD_NORMAL), (67, FIELD_NORMAL), (9, FIELD_SKIP_ZERO), (13, FIELD_SKIP_ZERO), (18, FIELD_VARCHAR),
        (73, FIELD_VARCHAR)]
    assert layout.fixed_not_null_fields == 2 and layout.null_bytes == 1 and layout.pack_bytes == 1
    for p in src.glob("aria_page.*"):
        shutil.copyfile(p, tmp_path / p.name)
    entry = scan(str(tmp_path)).file("aria_page.MAD")
    innodb, full = page_row_units(entry, "aria")
    rows = [r for k in range(len(innodb)) for r in innodb.meta["decode"](k)]
    ids = sorted(int(value_text(r[0])) for r in rows)
    assert ids == list(range(1, 2001)) and innodb.meta["rows"] == entry.sections["aria"]["rows"] == 2000
    page = bytearray((tmp_path / "aria_page.MAD").read_bytes()[h.block_size:2 * h.block_size])
    off, length = struct.unpack_from("<HH", page, h.block_size - 8)
    assert read_block_row(bytes(page), off, length, layout)[1] == (1).to_bytes(8, "little")
    page[off] |= ROW_FLAG_EXTENTS
    with pytest.raises(BlockRowError, match="ROW_FLAG_EXTENTS") as e:
        read_block_row(bytes(page), off, length, layout)
    assert e.value.offset == off
    bad = bytearray(mai)
    at = h.header_length - h.fields * 22
    bad[at + 2:at + 4] = (60000).to_bytes(2, "big")                # column 0's offset past the record
    with pytest.raises(BlockRowError, match="does not fit") as e:
        read_layout(bytes(bad), h)
    assert e.value.offset == at


@pytest.mark.parametrize("stem, engine", (("myisam_fixed", "myisam"), ("aria_page", "aria")))
def test_large_table_path_samples_units(fixtures_root, tmp_path, monkeypatch, stem, engine):
    """A table of more than EXACT_ROWS rows: every k-th run is decoded for the rows' mean, the
    others only counted (the Fixed file's from the scan's units, the Page file's from the page
    directories): the live rows stay exact and the bytes near the exact pass (within 5%)."""
    from dbxray.compress.engines import fixedrows
    for p in (fixtures_root / "mariadb" / "datadir" / "misc").glob(f"{stem}.*"):
        shutil.copyfile(p, tmp_path / p.name)
    entry = scan(str(tmp_path)).file(f"{stem}.{'MYD' if engine == 'myisam' else 'MAD'}")
    units = fixedrows.fixed_row_units if engine == "myisam" else fixedrows.page_row_units
    monkeypatch.setattr(fixedrows, "RUN_BYTES", 16384)
    exact = units(entry, engine)
    monkeypatch.setattr(fixedrows, "EXACT_ROWS", 100)
    sampled = units(entry, engine)
    assert exact[0].meta["exact"] and not sampled[0].meta["exact"] and len(exact[0]) >= 15
    for a, b in zip(exact, sampled):
        assert a.meta["rows"] == b.meta["rows"] == entry.sections[engine]["rows"]
        assert abs(b.logical_bytes - a.logical_bytes) <= 0.05 * a.logical_bytes

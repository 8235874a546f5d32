"""The columns of every binary ``.frm`` of the MariaDB fixture (parsers/server/frmfields.py)
against information_schema.COLUMNS of the server reading the same files (the fixture's
manifest has no COLUMNS: tests/data/mariadb_frm_columns/truth.json, made by its make.py with a
private MariaDB 10.11 on a copy of the fixture's data dir): names, types, lengths, nullability,
precision and collation field by field; the record the columns make against the .frm's own
reclength and the MyISAM / Aria headers; cut and damaged files give named errors."""
from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from dbxray.parsers.aria.state import read_header as read_mai
from dbxray.parsers.myisam.state import read_header as read_myi
from dbxray.parsers.server.frm import FrmError
from dbxray.parsers.server.frmfields import FRM_FORMINFO_SIZE, INVISIBLE_SYSTEM, read_frm_columns

TRUTH = json.loads((Path(__file__).parent / "data" / "mariadb_frm_columns" / "truth.json").read_text())


@pytest.fixture(scope="module")
def datadir(fixtures_root) -> Path:
    return fixtures_root / "mariadb" / "datadir"


def _mine(f) -> list:
    return [f.name, f.data_type, f.column_type, "YES" if f.nullable else "NO", f.char_length, f.octet_length,
            f.precision, f.scale, f.datetime_precision,
            f.collation.name if f.collation and not f.collation.binary else None]


def test_every_binary_frm_has_its_truth(datadir):
    frms = sorted(str(p.relative_to(datadir)) for p in datadir.rglob("*.frm") if p.read_bytes()[:2] == b"\xfe\x01")
    assert frms == TRUTH["frm_files"] and len(frms) == 66 and not TRUTH["not_in_information_schema"]


def test_columns_equal_information_schema(datadir):
    fields = TRUTH["fields"]
    n = 0
    for rel in TRUTH["frm_files"]:
        p = datadir / rel
        cols = read_frm_columns(p.read_bytes(), rel)
        want = TRUTH["tables"][f"{p.parent.name}.{p.stem}"]["columns"]
        shown = [f for f in cols.fields if f.visibility < INVISIBLE_SYSTEM]     # I_S hides row_start/row_end
        assert len(shown) == len(want), rel
        for f, row in zip(shown, want):
            assert _mine(f) == row[:len(fields) - 1], (rel, f.name)
            n += 1
    assert n == 444


def test_the_columns_tile_the_record(datadir):
    """Null bytes first, then each column where the one before it ends, the last ending at
    the header's reclength (every .frm of the fixture: none has virtual columns)."""
    for rel in TRUTH["frm_files"]:
        cols = read_frm_columns((datadir / rel).read_bytes(), rel)
        at = cols.null_bytes
        for f in sorted(cols.fields, key=lambda f: f.record_offset):
            assert f.record_offset == at, (rel, f.name)
            at += f.pack_length
        assert at == cols.reclength, rel
        nullable = [f for f in cols.fields if f.nullable]
        assert len(nullable) == cols.null_fields, rel
        bits = [(f.null_byte, f.null_bit) for f in nullable]
        assert len(set(bits)) == len(bits) and all(b < cols.null_bytes for b, _ in bits), rel


def test_record_length_equals_the_engines_headers(datadir):
    """MyISAM's and Aria's own base info names the record the .frm describes."""
    for stem, ext, reader in (("myisam_fixed", ".MYI", read_myi), ("myisam_dyn", ".MYI", read_myi),
                              ("aria_page", ".MAI", read_mai), ("aria_dyn", ".MAI", read_mai)):
        cols = read_frm_columns((datadir / "misc" / f"{stem}.frm").read_bytes())
        h = reader((datadir / "misc" / f"{stem}{ext}").read_bytes()[:65536])
        assert h.reclength == cols.reclength, stem
    fixed = read_frm_columns((datadir / "misc" / "myisam_fixed.frm").read_bytes())
    assert [(f.name, f.pack_length) for f in fixed.fields] == [
        ("id", 8), ("customer_id", 4), ("created", 5), ("status", 48), ("amount", 6), ("note", 800)]
    assert not fixed.pack_record and fixed.null_bytes == 1 and fixed.fields[-1].null_bit == 1


def test_enum_and_set_values(datadir):
    cols = read_frm_columns((datadir / "mysql" / "column_stats.frm").read_bytes())
    hist = next(f for f in cols.fields if f.name == "hist_type")
    assert hist.interval == ("SINGLE_PREC_HB", "DOUBLE_PREC_HB", "JSON_HB") and hist.pack_length == 1


def _forminfo(buf: bytes) -> int:
    return struct.unpack_from("<I", buf, 64 + struct.unpack_from("<H", buf, 4)[0])[0]


def test_bad_input_named_errors(datadir):
    buf = (datadir / "misc" / "myisam_fixed.frm").read_bytes()
    fpos = _forminfo(buf)
    for cut in (10, 64, fpos + 100, fpos + FRM_FORMINFO_SIZE + 40):
        with pytest.raises(FrmError) as e:
            read_frm_columns(buf[:cut], "misc/myisam_fixed.frm")
        assert str(e.value).startswith("misc/myisam_fixed.frm: ") and 0 <= e.value.offset <= len(buf), cut
    screens = struct.unpack_from("<H", buf, fpos + 260)[0]
    first = fpos + FRM_FORMINFO_SIZE + screens
    bad = bytearray(buf)
    bad[first + 13] = 200                                   # no such field type
    with pytest.raises(FrmError, match="unknown field type 200") as e:
        read_frm_columns(bytes(bad), "t.frm")
    assert e.value.offset == first + 13
    bad = bytearray(buf)
    bad[first + 5:first + 8] = (70000).to_bytes(3, "little")   # a column past the record
    with pytest.raises(FrmError, match="outside the record") as e:
        read_frm_columns(bytes(bad), "t.frm")
    assert e.value.offset == first + 5
    bad = bytearray(buf)
    bad[2] = 3
    with pytest.raises(FrmError, match="frm version 3"):
        read_frm_columns(bytes(bad))
    with pytest.raises(FrmError, match="a view"):
        read_frm_columns((next(p for p in (datadir / "sys").glob("*.frm") if p.read_bytes()[:4] == b"TYPE"))
                         .read_bytes())

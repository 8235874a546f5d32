"""Encrypted Aria tables (issue 19): MariaDB encrypts an Aria table's data and index pages
with the file_key_management plugin's key id 1 (storage/maria/ma_crypt.c; read by
parsers/aria/pagecrypt.py). A private MariaDB with ``aria_encrypt_tables=ON`` and the fixture's
key file writes a transactional Aria PAGE table whose rows go on in BLOB pages and a
non-transactional one (its pages carry a random number for the LSN); the files are copied.
Checked:

- with the key file: every data and index page decrypts to a page whose CRC matches, the rows
  equal COUNT(*), every decoded value equals the server's SELECT through the what-if's row
  reader (the old code refused them: "encrypted pages");
- without a key file: a warning naming the file and the offset of the first encrypted page,
  the pages and their types still counted, no rows claimed;
- with a key file whose key id 1 is another key: an error naming the page and its offset.
"""
from __future__ import annotations

import shutil

import pytest

from dbxray.parsers.keyfile import load_key_file
from dbxray.parsers.model import ScanContext
from dbxray.parsers.scan import scan
from mariadb_server import PrivateServer, missing

pytestmark = pytest.mark.skipif(missing(("file_key_management.so",)) is not None,
                                reason=str(missing(("file_key_management.so",))))
TABLES = {"t": 3000, "nt": 2000}
CREATE = """CREATE DATABASE e; USE e;
CREATE TABLE t (id INT NOT NULL PRIMARY KEY, c VARCHAR(200), b BLOB, KEY(c)) ENGINE=Aria ROW_FORMAT=PAGE;
INSERT INTO t SELECT seq, CONCAT('row-', seq, REPEAT('x', seq % 150)),
  IF(seq % 50 = 0, REPEAT(CONCAT('blob', seq), 3000), NULL) FROM seq.seq_1_to_3000;
CREATE TABLE nt (id INT NOT NULL PRIMARY KEY, c VARCHAR(200), KEY(c)) ENGINE=Aria ROW_FORMAT=PAGE TRANSACTIONAL=0;
INSERT INTO nt SELECT seq, CONCAT('row-', seq) FROM seq.seq_1_to_2000;
FLUSH TABLES;"""


@pytest.fixture(scope="module")
def encrypted(tmp_path_factory, fixtures_root):
    base = tmp_path_factory.mktemp("ariaenc")
    keyfile = fixtures_root / "mariadb" / "keys.txt"
    opts = ["--plugin-load-add=file_key_management", f"--file-key-management-filename={keyfile}",
            "--aria-encrypt-tables=ON"]
    got = {"keyfile": keyfile}
    with PrivateServer(base, opts) as srv:
        srv.sql(CREATE)
        copy = base / "copy" / "e"
        copy.mkdir(parents=True)
        for p in (srv.datadir / "e").iterdir():
            shutil.copyfile(p, copy / p.name)
        for t in TABLES:
            got[t] = srv.sql(f"SELECT id, c, HEX(b) FROM e.{t} ORDER BY id;" if t == "t" else
                             f"SELECT id, c FROM e.{t} ORDER BY id;").splitlines()
    got["dir"] = copy
    got["keys"] = load_key_file(str(keyfile))
    got["scan"] = scan(str(copy), ScanContext(keys=got["keys"]))
    yield got
    shutil.rmtree(base, ignore_errors=True)


def _file(s, name):
    return next(f for f in s.files if f.path.rsplit("/", 1)[-1] == name)


@pytest.mark.parametrize("table", sorted(TABLES))
def test_pages_decrypt_and_rows_count(encrypted, table):
    data, index = _file(encrypted["scan"], f"{table}.MAD"), _file(encrypted["scan"], f"{table}.MAI")
    sec, isec = data.sections["aria"], index.sections["aria"]
    assert not data.errors and not data.warnings and not index.errors and not index.warnings
    assert isec.encrypted and sec.decrypted
    assert sec.rows == TABLES[table] == isec.records
    # every page's CRC checked on the plain page, none bad
    assert sec.checksum["algorithm"] and not sec.checksum["bad_pages"] and not sec.checksum["no_crc_pages"]
    assert isec.checksum["algorithm"] and not isec.checksum["bad_pages"]
    if table == "t":
        assert sec.page_types.get("BLOB_PAGE", 0) > 10


@pytest.mark.parametrize("table", sorted(TABLES))
def test_decoded_rows_equal_the_servers(encrypted, table):
    from dbxray.compress.engines.fixedrows import page_row_units
    from dbxray.parsers.server.record import value_text
    units = page_row_units(_file(encrypted["scan"], f"{table}.MAD"), "aria")
    assert not isinstance(units, str), units
    rows = []
    for k in range(len(units[0])):
        rows += units[0].meta["decode"](k)

    def text(v):
        if v.data is None:
            return "NULL"
        return v.data.hex().upper() if v.field.name == "b" else value_text(v)
    mine = sorted(("\t".join(map(text, r)) for r in rows), key=lambda line: int(line.split("\t")[0]))
    assert mine == encrypted[table]


def test_without_a_key_file_the_file_and_offset_are_named(encrypted):
    s = scan(str(encrypted["dir"]))
    for table in TABLES:
        data, index = _file(s, f"{table}.MAD"), _file(s, f"{table}.MAI")
        msg = " ".join(data.warnings)
        print(msg)
        assert f"{table}.MAD @ offset 8192: encrypted pages" in msg and "no key file given" in msg
        assert "crypt data at .MAI offset" in msg
        assert not data.errors
        sec = data.sections["aria"]
        assert sec.rows is None and sec.decrypted is False and sec.pages == data.apparent_bytes // 8192
        assert "no key file given" in " ".join(index.warnings)
        assert index.sections["aria"].records == TABLES[table]


def test_a_wrong_key_is_named_with_the_page(encrypted, tmp_path):
    lines = (encrypted["keyfile"]).read_text().splitlines()
    other = next(line for line in lines if line.startswith("4;")).split(";", 1)[1]
    wrong = tmp_path / "wrong.txt"
    wrong.write_text(f"1;{other}\n")
    s = scan(str(encrypted["dir"]), ScanContext(keys=load_key_file(str(wrong))))
    data = _file(s, "t.MAD")
    print(data.errors)
    assert any("does not decrypt page" in m and "@ offset" in m for m in data.errors), data.errors
    assert data.sections["aria"].rows is None

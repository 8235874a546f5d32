"""The packer size model (compress/engines/packmodel.py, packrows.py: myisampack.c's statistics,
field types, Huffman trees and rows worked out from the rows) against the real packers: tables
a private MariaDB makes with many column types (NULLs, CHAR in latin1 and utf8mb4, VARCHAR,
TEXT and BLOB, ENUM, DATE, DATETIME, DECIMAL, DOUBLE, integers, a constant column, an always-zero
one, a mostly-empty one), as MyISAM Fixed and Dynamic and Aria Page, Dynamic and Fixed, one of
them larger than the rows read whole (fixedrows.EXACT_ROWS: the model then reads one row in k,
drawn at random, and scales), FLUSH TABLES, copied, packed on the copies with ``myisampack`` / ``aria_pack``; the
what-if of the unpacked files (``--sample all``) must give the ``myisampack`` / ``aria_pack``
result within 5% of the packed data file, the real size inside its 95% interval, and for the
tables read whole the packed file's size, its header's length, its trees and the field type of
every column the packer chose (read back from the packed file's header: parsers/myisam/packrec.py)
exactly.  The advice names the
command and says the table becomes read-only."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from dbxray.compress.engines.fixedrows import EXACT_ROWS
from dbxray.compress.whatif import run_whatif
from dbxray.parsers.aria.blockrow import read_layout
from dbxray.parsers.aria.state import read_header as read_mai
from dbxray.parsers.myisam import packrec
from dbxray.parsers.myisam.state import read_header as read_myi
from dbxray.parsers.scan import scan
from mariadb_server import PrivateServer, missing

WHY = missing() or (None if all(shutil.which(t) for t in ("myisampack", "aria_pack")) else
                    "myisampack / aria_pack not installed (Debian package mariadb-server)")
pytestmark = pytest.mark.skipif(WHY is not None, reason=str(WHY))

COLS_FIXED = """(id INT NOT NULL, name CHAR(40), code CHAR(20) CHARACTER SET latin1, big BIGINT,
 day DATE, kind ENUM('x','yy','zzz'), price DECIMAL(10,2), ratio DOUBLE, zero INT NOT NULL, five INT,
 at DATETIME, pad CHAR(10) CHARACTER SET utf8mb4, lead CHAR(12) CHARACTER SET latin1, KEY(id))"""
COLS_DYN = """(id INT NOT NULL, name VARCHAR(40), code CHAR(20) CHARACTER SET latin1, big BIGINT,
 day DATE, kind ENUM('x','yy','zzz'), price DECIMAL(10,2), ratio DOUBLE, zero INT NOT NULL, note TEXT,
 five INT, at DATETIME, wide VARCHAR(300) CHARACTER SET utf8mb4, pad CHAR(10) CHARACTER SET utf8mb4,
 bin BLOB, KEY(id))"""
VALUES_FIXED = """seq, IF(seq % 7 = 0, NULL, CONCAT('name', seq % 50)), CONCAT('c', seq % 5),
 CAST(seq AS SIGNED) * 1000003 - 50000000, '2020-01-01' + INTERVAL seq % 400 DAY, ELT(1 + seq % 3, 'x', 'yy', 'zzz'),
 CAST(seq AS SIGNED) / 7 - 100, seq * 1.5, 0, 5, '2021-02-03 04:05:06' + INTERVAL seq MINUTE,
 IF(seq % 4, 'ü', ''), LPAD(seq % 1000, 12, ' ')"""
VALUES_DYN = """seq, IF(seq % 7 = 0, NULL, CONCAT('name', seq % 50)), CONCAT('c', seq % 5),
 CAST(seq AS SIGNED) * 1000003 - 50000000, '2020-01-01' + INTERVAL seq % 400 DAY, ELT(1 + seq % 3, 'x', 'yy', 'zzz'),
 CAST(seq AS SIGNED) / 7 - 100, seq * 1.5, 0, IF(seq % 3 = 0, NULL, REPEAT(CHAR(65 + seq % 26), seq % 70)), 5,
 '2021-02-03 04:05:06' + INTERVAL seq MINUTE, REPEAT('é', seq % 90), IF(seq % 4, 'ü', ''),
 IF(seq % 5 = 0, NULL, UNHEX(SHA2(seq, 256)))"""
BIG = 3 * EXACT_ROWS // 2
#: table: (engine, ROW_FORMAT, columns, values, rows)
TABLES = {"mfix": ("MyISAM", "FIXED", COLS_FIXED, VALUES_FIXED, 3000),
          "mdyn": ("MyISAM", "DYNAMIC", COLS_DYN, VALUES_DYN, 3000),
          "apage": ("Aria", "PAGE", COLS_DYN, VALUES_DYN, 3000),
          "adyn": ("Aria", "DYNAMIC", COLS_DYN, VALUES_DYN, 3000),
          "afix": ("Aria", "FIXED", COLS_FIXED, VALUES_FIXED, 3000),
          "mbig": ("MyISAM", "FIXED", COLS_FIXED, VALUES_FIXED, BIG)}
EXT = {"MyISAM": (".MYD", ".MYI", "myisampack", "myisampack"), "Aria": (".MAD", ".MAI", "aria_pack", "aria_pack")}


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    base = tmp_path_factory.mktemp("pm")
    sql = "CREATE DATABASE p; USE p;\n"
    for name, (engine, fmt, cols, values, rows) in TABLES.items():
        sql += (f"CREATE TABLE {name} {cols} ENGINE={engine} ROW_FORMAT={fmt}"
                + (" TRANSACTIONAL=0" if engine == "Aria" else "") + ";\n"
                f"INSERT INTO {name} SELECT {values} FROM seq_1_to_{rows};\n")
    sql += "FLUSH TABLES;"
    plain = base / "plain" / "p"
    work = base / "work"
    plain.mkdir(parents=True)
    work.mkdir()
    with PrivateServer(base / "srv") as srv:
        srv.sql(sql)
        formats = {n: srv.sql(f"SELECT ROW_FORMAT FROM information_schema.TABLES WHERE TABLE_SCHEMA='p' "
                              f"AND TABLE_NAME='{n}';").strip() for n in TABLES}
        for p in (srv.datadir / "p").iterdir():
            if p.stem in TABLES:
                shutil.copyfile(p, plain / p.name)
                shutil.copyfile(p, work / p.name)
    real = {}
    for name, (engine, *_rest) in TABLES.items():
        data, index, tool, _ = EXT[engine]
        subprocess.run([tool, "-s", str(work / f"{name}{index}")], check=True, capture_output=True, timeout=300,
                       cwd=work)
        buf = (work / f"{name}{data}").read_bytes()
        head = (work / f"{name}{index}").read_bytes()
        if engine == "Aria":
            h = read_mai(head)
            # aria_pack packs the columns in record order (the .MAI lists them as the rows store them)
            lengths, nb, magic = [c.length for c in sorted(read_layout(head, h).columns, key=lambda c: c.offset)], \
                h.null_bytes, packrec.MARIA_PACK_FILE_MAGIC
        else:
            h = read_myi(head)
            lengths, nb, magic = [n for _, n in h.columns], 0, packrec.MYISAM_PACK_FILE_MAGIC
        ph = packrec.read_pack_header(buf[:packrec.HEAD_LENGTH], magic)
        info = packrec.read_pack_info(buf[:ph.header_length], lengths, bool(h.blobs), magic, nb)
        real[name] = {"bytes": len(buf), "header": ph.header_length, "trees": ph.trees,
                      "types": [packrec.FIELD_TYPE_NAMES[c.base_type] for c in info.columns]}
    result = run_whatif(scan(str(plain.parent)), ["zlib:6"], sample="all", seed=1, raw_models=False)
    yield {"formats": formats, "real": real, "result": result}
    shutil.rmtree(base, ignore_errors=True)


def _target(result, name):
    return next(t for t in result["targets"] if os.path.basename(t["target"]).split(".")[0] == name)


def test_the_tables_have_the_row_formats_asked(tables):
    assert tables["formats"] == {"mfix": "Fixed", "mdyn": "Dynamic", "apage": "Page", "adyn": "Dynamic",
                                 "afix": "Fixed", "mbig": "Fixed"}


@pytest.mark.parametrize("name", sorted(TABLES))
def test_packer_model_against_the_packer(tables, name):
    engine, _fmt, _c, _v, rows = TABLES[name]
    tool = EXT[engine][3]
    real = tables["real"][name]
    t = _target(tables["result"], name)
    r = next(r for r in t["results"] if r["model"] == tool)
    assert r["codec"] == "huffman"
    off = r["projected_bytes"] / real["bytes"] - 1
    assert abs(off) < 0.05, (name, r, real)
    lo, hi = r["ci95"]
    assert lo <= real["bytes"] <= hi, (name, r, real)
    facts = t["facts"]["packer"]
    assert facts["rows"] == rows
    if rows <= EXACT_ROWS:
        assert facts["rows_read"] == rows
        assert facts["header_bytes"] == real["header"], (name, facts, real)
        assert facts["trees"] == real["trees"]
        assert [c["field_type"] for c in facts["columns"]] == real["types"], name
        assert r["projected_bytes"] == real["bytes"], (name, r, real)   # every row read: the packer's bytes
    else:
        assert facts["rows_read"] < rows                            # sampled, and scaled
        assert lo < r["projected_bytes"] < hi


def test_the_advice_is_the_packer_command_and_says_read_only(tables):
    adv = [a for a in tables["result"]["advice"] if a.get("kind") == "pack"]
    assert {a["target"].split("/")[-1].split(".")[0] for a in adv} == set(TABLES)
    for a in adv:
        name = a["target"].split("/")[-1].split(".")[0]
        engine = TABLES[name][0]
        tool, index = EXT[engine][2], EXT[engine][1]
        chk = "myisamchk" if engine == "MyISAM" else "aria_chk"
        assert a["command"] == f"{tool} --backup p/{name}{index} && {chk} -rq p/{name}{index}"
        assert a["read_only"] is True and "read-only" in a["verdict"] and "read-only" in a["ddl"]
        assert a["saving_bytes_ci95"][0] > 0




def test_the_cli_prints_the_packer_entry(tables):
    from dbxray.app.cli_whatif import human_table
    text = human_table(tables["result"])
    assert "p/mfix.MYD: myisampack (a command; the table becomes read-only)" in text
    assert "myisampack --backup p/mfix.MYI && myisamchk -rq p/mfix.MYI" in text
    assert "aria_pack --backup p/apage.MAI && aria_chk -rq p/apage.MAI" in text


def test_model_pieces_as_myisampack_computes_them():
    import numpy as np
    from dbxray.compress.engines.packmodel import calc_pack_length, calc_packed_length, max_bit
    from dbxray.parsers.myisam.dynrec import unpack_record
    assert [max_bit(v) for v in (0, 1, 2, 3, 255, 256)] == [1, 1, 2, 2, 8, 9]
    counts = np.zeros(256, dtype=np.int64)
    counts[[10, 11, 12, 13]] = [1, 1, 2, 4]        # codes of 3, 3, 2, 1 bits: 14 bits, 2 bytes
    assert calc_packed_length(counts) == 2
    assert [calc_pack_length(n) for n in (253, 254, 65535, 65536)] == [1, 3, 3, 5]
    assert calc_pack_length(65536, version=1) == 4
    # a Dynamic row: the flag byte (bit 0: CHAR(5) SKIP_ENDSPACE stripped, bit 1: SKIP_ZERO zero),
    # a 1-byte NORMAL column, the CHAR's length and bytes, a VARCHAR(3) behind its length byte
    cols = [(0, 1), (1, 5), (3, 4), (8, 4)]
    row = bytes([0b11, 0x2A, 2]) + b"ab" + bytes([1]) + b"z"
    rec, blobs = unpack_record(row, cols)
    assert rec == b"\x2a" + b"ab   " + bytes(4) + b"\x01z\0\0" and blobs == {}
    assert unpack_record(row[:-1], cols) is None                    # cut: the VARCHAR runs out
    assert unpack_record(row + b"xy", cols) is None                 # bytes left over

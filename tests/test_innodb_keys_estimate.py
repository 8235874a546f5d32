"""The keys of a MyISAM / Aria table as InnoDB indexes after the advised ``ALTER TABLE ...
ENGINE=InnoDB`` (issue 19; compress/engines/innodbkeys.py, keys from the .frm:
parsers/server/frmkeys.py): the old estimates had the clustered data only.

A private MariaDB makes an Aria PAGE table and a MyISAM Fixed one with a PRIMARY KEY and three
secondary keys (CHAR utf8mb4, a composite INT + VARCHAR prefix, a UNIQUE BIGINT), closes them,
the files are copied and the tables converted with ALTER TABLE ... ENGINE=InnoDB. Checked: the
.frm keys equal information_schema.STATISTICS, and each secondary index's estimated leaf pages
against mysql.innodb_index_stats n_leaf_pages (exact after ANALYZE TABLE: the pages its leaf
segment uses).
"""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from dbxray.compress.whatif import run_whatif
from dbxray.parsers.model import UNIT_FREE
from dbxray.parsers.scan import scan
from dbxray.parsers.server.frmfields import read_frm_columns
from dbxray.parsers.server.frmkeys import read_frm_keys
from mariadb_server import PrivateServer, missing

pytestmark = pytest.mark.skipif(missing() is not None, reason=str(missing()))
ROWS = 4000
TABLES = {"ka": ("Aria", "ROW_FORMAT=PAGE", ".MAD"), "km": ("MyISAM", "ROW_FORMAT=FIXED", ".MYD")}
CREATE = """CREATE TABLE x.{t} (id INT NOT NULL, n INT, c CHAR(20) CHARACTER SET utf8mb4, v VARCHAR(100),
  u BIGINT NOT NULL, pad CHAR(60), PRIMARY KEY (id), KEY kc (c), KEY knv (n, v(10)), UNIQUE KEY ku (u))
  ENGINE={engine} {fmt};
INSERT INTO x.{t} SELECT seq, IF(seq % 7 = 0, NULL, seq % 1000), CONCAT('name-', seq % 5000),
  REPEAT(CHAR(97 + seq % 26), seq % 100), seq * 7919, CONCAT('p', seq) FROM seq.seq_1_to_{rows};
"""


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    base = tmp_path_factory.mktemp("keys")
    got = {}
    with PrivateServer(base, ["--innodb-fast-shutdown=0"]) as srv:
        srv.sql("CREATE DATABASE x; USE x;\n" + "".join(CREATE.format(t=t, engine=e, fmt=f, rows=ROWS)
                                                  for t, (e, f, _x) in TABLES.items()) + "FLUSH TABLES;")
        copy = base / "copy" / "x"
        copy.mkdir(parents=True)
        for t in TABLES:
            for p in (srv.datadir / "x").glob(f"{t}.*"):
                shutil.copyfile(p, copy / p.name)
        got["statistics"] = srv.sql("SELECT TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, SUB_PART, NON_UNIQUE "
                                    "FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'x' "
                                    "ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX;").splitlines()
        srv.sql("".join(f"ALTER TABLE x.{t} ENGINE=InnoDB ROW_FORMAT=DEFAULT; ANALYZE TABLE x.{t};\n" for t in TABLES))
        ids = {}
        for line in srv.sql("SELECT t.NAME, i.NAME, i.INDEX_ID FROM information_schema.INNODB_SYS_INDEXES i "
                            "JOIN information_schema.INNODB_SYS_TABLES t USING (TABLE_ID) "
                            "WHERE t.NAME LIKE 'x/%';").splitlines():
            t, i, n = line.split("\t")
            ids[int(n)] = (t.split("/")[1], i)
    # the pages of each index in the .ibd files (PAGE_INDEX_ID, PAGE_LEVEL: parsers/innodb)
    for f in scan(str(srv.datadir / "x")).files:
        if not f.path.endswith(".ibd"):
            continue
        used = (f.units["flags"] & UNIT_FREE) == 0
        owner, level = f.unit_facts.owner_id, f.unit_facts.level
        index_page = np.array([f.kind_names.get(int(k)) == "FIL_PAGE_INDEX" for k in f.units["kind"]])
        for n, key in ids.items():
            mine = used & index_page & (owner == n)
            if mine.any():
                got[key] = {"leaf_pages": int((mine & (level == 0)).sum()), "pages": int(mine.sum())}
    got["dir"] = copy
    got["estimate"] = run_whatif(scan(str(copy)), ["zlib:6"], sample="all", seed=1, raw_models=False,
                                 engines=("aria", "myisam"))
    yield got
    shutil.rmtree(base, ignore_errors=True)


def test_frm_keys_equal_the_servers(converted):
    mine = []
    for t in sorted(TABLES):
        buf = (converted["dir"] / f"{t}.frm").read_bytes()
        fields = read_frm_columns(buf).fields
        for k in sorted(read_frm_keys(buf), key=lambda k: k.name.lower()):
            for i, p in enumerate(k.parts, 1):
                f = fields[p.field]
                whole = p.length == f.pack_length or (f.is_varchar and p.length == f.length)
                sub = "NULL" if whole else str(p.length // (f.mbmaxlen or 1))
                mine.append(f"{t}\t{k.name}\t{i}\t{f.name}\t{sub}\t{0 if k.unique else 1}")
    assert mine == converted["statistics"]


@pytest.mark.parametrize("table", sorted(TABLES))
def test_secondary_index_leaf_pages(converted, table):
    """Each secondary index's leaf pages against n_leaf_pages after ALTER TABLE ... ENGINE=InnoDB."""
    t = next(t for t in converted["estimate"]["targets"] if t["target"] == f"{table}{TABLES[table][2]}")
    keys = t["facts"]["innodb_keys"]
    assert keys["primary_key"] and keys["rows"] == ROWS
    assert keys["clustered_bytes_saved"] == 6 * ROWS
    got = {i["name"]: i for i in keys["indexes"]}
    assert sorted(got) == ["kc", "knv", "ku"]
    for name, i in got.items():
        real = converted[(table, name)]
        print(f"{table}.{name}: estimate {i['leaf_pages']} leaf pages, {i['pages']} in all (records of "
              f"{i['mean_record_bytes']} bytes), real {real['leaf_pages']}, {real['pages']} "
              f"({(i['pages'] - real['pages']) / real['pages']:+.1%})")
    for name, i in got.items():
        real = converted[(table, name)]
        assert abs(i["pages"] - real["pages"]) <= max(1, 0.05 * real["pages"])
    c, real = keys["clustered"], converted[(table, "PRIMARY")]
    print(f"{table}.PRIMARY: estimate {c['leaf_pages']} leaf pages, {c['pages']} in all, real {real['leaf_pages']}, "
          f"{real['pages']} ({(c['pages'] - real['pages']) / real['pages']:+.1%})")
    assert abs(c["pages"] - real["pages"]) <= max(2, 0.03 * real["pages"])

"""The DDL dbxray prints, run by MariaDB itself on a copy of the MariaDB fixture (issue 17,
"checks against reality": "on the MariaDB fixture: every advised DDL run on a copy with a real
server changes the table's allocated size within the interval").

The projections are what ``dbxray whatif DATADIR --keyfile keys.txt --codec zlib:6 --codec lz4
--codec lzma:6`` prints for the fixture's data dir as it is (the default 5% sample, seed 0,
made offline before any server touches the copy). Then, for each case, a fresh copy of the data
dir is started by a private mariadbd (tests/mariadb_server.py: the fixture's InnoDB and
encryption settings from its my.cnf, its key file, no MyRocks), the DDL runs on two plain
tables (``inno.orders_plain``: 1,200 rows, a primary key and two secondary indexes;
``inno.lineorder_phrase``: 500 rows, no primary key, a TEXT column), the server shuts down
slowly, and each rebuilt file's allocation (st_blocks) must lie inside the 95% interval of the
projection the DDL belongs to:

* zlib and lz4 page compression (the model advice uses), and lzma, the codec advised for
  ``orders_plain`` (what the advice says is run as the advice prints it, plugin line included);
* ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8 (the rebuild estimate: compress/engines/innodb.py).

Slow: four copies of the 42 MiB data dir, four server runs and one what-if of the whole dir.
"""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from dbxray.compress.engines.innodb import WHATIF
from dbxray.compress.registry import parse_codec
from dbxray.compress.targets import Target
from dbxray.compress.whatif import run_whatif
from dbxray.parsers.keyfile import load_key_file
from dbxray.parsers.model import ScanContext
from dbxray.parsers.scan import scan
from mariadb_server import PrivateServer, missing

TABLES = ("orders_plain", "lineorder_phrase")
#: case -> (codec, model)
CASES = {"zlib": ("zlib:6", "innodb_page_compressed"), "lz4": ("lz4", "innodb_page_compressed"),
         "lzma": ("lzma:6", "innodb_page_compressed"), "kbs8": ("zlib:6", "innodb_row_compressed_kbs8k_estimate")}
PLUGINS = ("provider_lz4.so", "provider_lzma.so", "file_key_management.so")

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(missing(PLUGINS) is not None, reason=str(missing(PLUGINS)))]


def _options(base, keys) -> list[str]:
    """The fixture's my.cnf, as far as InnoDB and its redo log need it (the redo log is
    encrypted with key 4), with the page-compression providers the DDL may ask for."""
    return ["--innodb-fast-shutdown=0", "--plugin-load-add=provider_lz4", "--plugin-load-add=provider_lzma",
            "--plugin-load-add=file_key_management", f"--file-key-management-filename={keys}",
            "--file-key-management-encryption-algorithm=AES_CBC", "--innodb-encrypt-log=ON",
            "--innodb-encrypt-tables=OFF", "--innodb-encryption-threads=0", "--innodb-default-encryption-key-id=4",
            "--innodb-log-file-size=4M", "--innodb-data-file-path=ibdata1:1M:autoextend",
            "--innodb-autoextend-increment=1", "--innodb-undo-tablespaces=0", "--innodb-buffer-pool-size=64M",
            "--innodb-file-per-table=ON", "--character-set-server=utf8mb4",
            "--collation-server=utf8mb4_general_ci"]


@pytest.fixture(scope="module")
def measured(sparse_fixtures, tmp_path_factory):
    src = sparse_fixtures / "mariadb" / "datadir"
    keys = sparse_fixtures / "mariadb" / "keys.txt"
    ds = scan(str(src), ScanContext(keys=load_key_file(str(keys))))
    res = run_whatif(ds, ["zlib:6", "lz4", "lzma:6"], sample="0.05", seed=0, raw_models=False)
    targets = {t["target"]: t for t in res["targets"]}
    rows = {}
    for table in TABLES:
        t = targets[f"inno/{table}.ibd"]
        advice = [a for a in res["advice"] if a["target"] == t["target"] and a["kind"] == "codec"]
        target = Target(t["target"], "innodb", 0, 0, info={"database": "inno", "table": table, "layout": "full_crc32"})
        for case, (codec, model) in CASES.items():
            r = next(r for r in t["results"] if r["codec"] == codec and r["model"] == model)
            rows[(table, case)] = {"result": r, "ddl": WHATIF.ddl(target, parse_codec(codec), model),
                                   "before": t["current_bytes"], "advice": advice}
    base = tmp_path_factory.mktemp("fixture-ddl")
    for case in CASES:
        srv_base = base / case
        srv_base.mkdir()
        # a copy of the data dir as the fixture holds it, holes included
        subprocess.run(["cp", "-a", "--sparse=always", str(src), str(srv_base / "datadir")], check=True)
        for dirpath, _dirs, files in os.walk(srv_base / "datadir"):
            for f in files:
                p = os.path.join(dirpath, f)
                if not os.path.islink(p):
                    os.chmod(p, 0o644)
        with PrivateServer(srv_base, _options(srv_base, keys)) as srv:
            for table in TABLES:
                srv.sql(rows[(table, case)]["ddl"])
            fmt = srv.sql("SELECT NAME, ROW_FORMAT FROM information_schema.INNODB_SYS_TABLES "
                          "WHERE NAME IN ('inno/orders_plain', 'inno/lineorder_phrase')")
            opts = srv.sql("SELECT TABLE_NAME, CREATE_OPTIONS FROM information_schema.TABLES "
                           "WHERE TABLE_SCHEMA = 'inno' AND TABLE_NAME IN ('orders_plain', 'lineorder_phrase')")
        for table in TABLES:
            st = os.stat(srv_base / "datadir" / "inno" / f"{table}.ibd")
            rows[(table, case)].update(real=st.st_blocks * 512, row_format=fmt, options=opts)
        shutil.rmtree(srv_base / "datadir", ignore_errors=True)
    yield rows
    shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("table", TABLES)
@pytest.mark.parametrize("case", ["zlib", "lz4", "lzma"])
def test_page_compression_ddl_lands_inside_the_interval(measured, table, case):
    row = measured[(table, case)]
    codec = CASES[case][0].split(":")[0]
    assert "PAGE_COMPRESSED=1" in row["ddl"] and f"innodb_compression_algorithm='{codec}'" in row["ddl"]
    line = next(x for x in row["options"].splitlines() if x.startswith(table + "\t"))
    assert "page_compressed" in line.lower(), row["options"]
    lo, hi = row["result"]["ci95"]
    assert row["real"] < row["before"]
    assert lo <= row["real"] <= hi, (table, case, lo, row["result"]["projected_bytes"], row["real"], hi)


@pytest.mark.parametrize("table", TABLES)
def test_row_compressed_kbs8_lands_inside_the_interval(measured, table):
    row = measured[(table, "kbs8")]
    assert f"inno/{table}\tCompressed" in row["row_format"], row["row_format"]
    lo, hi = row["result"]["ci95"]
    assert lo <= row["real"] <= hi, (table, lo, row["result"]["projected_bytes"], row["real"], hi)


def test_the_advice_is_one_of_the_ddls_run(measured):
    """What the advice prints for these two tables is among what the server ran, and says how much
    it saves: the saving the server gave lies inside the advice's saving interval."""
    seen = 0
    for table in TABLES:
        for a in measured[(table, "zlib")]["advice"]:
            case = next((c for c, (codec, model) in CASES.items() if codec == a["codec"] and model == a["model"]), None)
            assert case is not None, a
            row = measured[(table, case)]
            assert a["ddl"] == row["ddl"]
            gained = row["before"] - row["real"]
            lo, hi = a["saving_bytes_ci95"]
            assert 0 < lo <= gained <= hi, (table, a["codec"], lo, gained, hi)
            seen += 1
    assert seen >= 2

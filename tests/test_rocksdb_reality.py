"""The RocksDB what-if checked against MyRocks itself: a private MariaDB 10.11 server
(MyRocks plugin; own datadir and socket, --skip-networking) writes a table into its own
column family uncompressed; dbxray reads the files offline and projects the column
family under a level plan; the server is then given the advised options
(`rocksdb_update_cf_options`, the string dbxray printed) and compacts the column
family: the bytes it really writes must be within 3% of the projection, for LZ4 and ZSTD
(0.5% and 1.0% on 2026-11-24)."""
from __future__ import annotations

import shutil

import pytest

from dbxray.compress.engines.rocksdb import parse_level_plan, project_level_plan
from dbxray.compress.whatif import run_whatif
from dbxray.parsers.scan import scan

from mariadb_server import PrivateServer, missing

WHY = missing(("ha_rocksdb.so",))
pytestmark = pytest.mark.skipif(WHY is not None, reason=WHY or "")

OPTIONS = ["--plugin-load-add=ha_rocksdb.so", "--rocksdb-block-size=8192",
           "--rocksdb-default-cf-options=compression=kNoCompression;level_compaction_dynamic_level_bytes=false"]
LOAD = """
CREATE DATABASE r;
USE r;
CREATE TABLE r.t (id INT NOT NULL, k INT NOT NULL, status VARCHAR(16), note VARCHAR(300),
  PRIMARY KEY (id) COMMENT 'cfname=cf_t') ENGINE=ROCKSDB;
INSERT INTO r.t SELECT seq, seq % 977, ELT(1 + seq % 5, 'shipped', 'pending', 'returned', 'lost', 'open'),
  CONCAT('order ', seq, ' for customer ', seq % 1000, ' ', REPEAT(ELT(1 + seq % 7, 'red ', 'green ', 'blue ',
         'amber ', 'teal ', 'plum ', 'grey '), 1 + seq % 9), LEFT(MD5(seq), 1 + seq % 24))
  FROM seq_1_to_40000;
SET GLOBAL rocksdb_force_flush_memtable_now = 1;
SET GLOBAL rocksdb_compact_cf = 'cf_t';
"""


def _cf_bytes(ds, cf: str) -> int:
    return sum(f.lasting_allocated_bytes for f in ds.files
               if f.role == "sst" and f.sections["rocksdb"].get("column_family") == cf
               and f.sections["rocksdb"].get("live"))


def _snapshot(server, tmp, name):
    dst = tmp / name
    shutil.copytree(server.datadir / "#rocksdb", dst / "#rocksdb")
    return scan(str(dst))


@pytest.mark.parametrize("codec", ["lz4", "zstd:3"])
def test_advised_level_plan_is_what_myrocks_writes(tmp_path, codec):
    server = PrivateServer(tmp_path / "srv", OPTIONS)
    with server:
        server.sql(LOAD)
    before = _snapshot(server, tmp_path, "before")
    cf_files = [f for f in before.files if f.role == "sst" and f.sections["rocksdb"].get("column_family") == "cf_t"]
    assert cf_files and all(f.sections["rocksdb"].compression == "NoCompression" for f in cf_files)
    plan = parse_level_plan(codec)                     # this codec on every level
    res = run_whatif(before, [codec], sample="all", raw_models=False)
    proj = next(p for p in project_level_plan(res, before, plan) if p["column_family"] == "cf_t")
    assert proj["projected_bytes"] and proj["current_bytes"] == _cf_bytes(before, "cf_t")
    setting = proj["ddl"].split("'")[1]
    with server:
        server.sql(f"SET GLOBAL rocksdb_update_cf_options = '{setting}';\n"
                   "SET GLOBAL rocksdb_compact_cf = 'cf_t';")
    after = _snapshot(server, tmp_path, "after")
    written = {f.sections["rocksdb"].compression for f in after.files if f.role == "sst"
               and f.sections["rocksdb"].get("column_family") == "cf_t" and f.sections["rocksdb"].get("live")}
    assert written == {"LZ4" if codec == "lz4" else "ZSTD"}, written
    real = _cf_bytes(after, "cf_t")
    lo, hi = proj["ci95"]
    print(f"cf_t {codec}: before {proj['current_bytes']}, projected {proj['projected_bytes']} "
          f"[{lo}, {hi}], MyRocks wrote {real}")
    assert abs(real - proj["projected_bytes"]) <= 0.03 * real

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


MORE = """
USE r;
INSERT INTO r.t SELECT 100000 + seq, seq % 977, 'open', CONCAT('late order ', seq, ' ', REPEAT('teal ', 1 + seq % 9))
  FROM seq_1_to_8000;
SET GLOBAL rocksdb_force_flush_memtable_now = 1;
"""


def test_family_entry_is_one_line_myrocks_takes(tmp_path):
    """Issue 17 item 2: a column family advised on two levels (the compacted data and a fresh L0
    file, both uncompressed) gets one entry; MyRocks, restarted with its one my.cnf line, opens the
    family with exactly those options (its own OPTIONS file) and writes each level with its codec:
    a flush writes L0 with L0's pick, a compaction the compacted level with its own."""
    server = PrivateServer(tmp_path / "srv", OPTIONS)
    with server:
        server.sql(LOAD)
        server.sql(MORE)
    before = _snapshot(server, tmp_path, "before")
    res = run_whatif(before, ["lz4", "zstd:3", "zstd:9"], sample="all", raw_models=False)
    fam = [a for a in res["advice"] if a["target"].endswith("/cf_t") or "/cf_t/" in a["target"]]
    assert [a["target"] for a in fam] == ["#rocksdb/cf_t"], [(a["target"], a["codec"]) for a in fam]
    entry = fam[0]
    assert len(entry["levels"]) == 2 and entry["ddl"].startswith("-- my.cnf: rocksdb_override_cf_options='cf_t={")
    line = entry["ddl"].split("'")[1]
    server.options = OPTIONS + [f"--rocksdb-override-cf-options={line}"]
    with server:
        server.sql(MORE.replace("100000 + seq", "200000 + seq"))
        flushed = _snapshot(server, tmp_path, "flushed")
        server.sql("SET GLOBAL rocksdb_compact_cf = 'cf_t';")
    after = _snapshot(server, tmp_path, "after")
    # the options MyRocks opened the family with are the line's
    from dbxray.parsers.rocksdb.options import read_options
    opts = sorted((server.datadir / "#rocksdb").glob("OPTIONS-*"))[-1]
    cf = read_options(opts.read_text()).cfs["cf_t"].cf
    for item in line.split("{", 1)[1].rsplit("}", 1)[0].split(";"):
        k, v = item.split("=", 1)
        if k == "compression_opts":
            assert f"level={v.strip('{}').split('=')[1]}" in cf[k], (k, v, cf[k])
        elif not k.startswith("bottommost_compression_opts"):
            assert cf[k] == v, (k, v, cf[k])
    from dbxray.compress.engines.rocksdb import current_codec

    def written(ds, level):             # the codec (with its level) each live file of the level was written with
        return {current_codec(sec.get("compression"), sec.get("compression_options")).name
                for f in ds.files if f.role == "sst" and (sec := f.sections["rocksdb"]).get("column_family") == "cf_t"
                and sec.get("live") and sec.get("level") == level}
    levels = {int(t.rsplit("/L", 1)[1]): c for t, c in entry["levels"].items()}
    assert 0 in levels and len(levels) == 2
    new_l0 = written(flushed, 0) - written(before, 0)
    assert new_l0 == {levels[0]}, (levels, new_l0)
    deep = max(levels)
    assert written(after, deep) == {levels[deep]}, (levels, written(after, deep))
    print(f"cf_t: {entry['codec']}; {line}; L0 flushed {new_l0}, L{deep} compacted {written(after, deep)}")

#!/usr/bin/env python3
"""Make the small MyRocks data dir of the demo (resources/demo/data/myrocks) with a real
MariaDB 10.11 + MyRocks (Debian mariadb-server, mariadb-plugin-rocksdb) run privately
(tests/mariadb_server.py: own datadir and socket, --skip-networking):

* ``shop.orders``: primary key in ``cf_orders`` with small memtables and files and
  ``compression_per_level=none:none:lz4:lz4:zstd``, so it spreads over several levels
  written with different codecs; a secondary key ``idx_status`` in ``cf_status`` (zlib);
* ``shop.events``: the default column family (Snappy) with a secondary key;

then a slow shutdown.  Keeps ``#rocksdb/`` (without the info LOG files) and the tables'
``.frm`` files.  Run from the repo root:

    python3 tests/data/myrocks_demo/make.py [OUT] [--scale N]   # OUT: tests/data/myrocks_demo/datadir

``--scale N`` multiplies the rows (the benchmark's larger MyRocks set: tests/benchmarks/bench_rocksdb.py
``--dir OUT/#rocksdb --sst-dump tools/myrocks_sst_dump``); the demo is made at scale 1.
"""
from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from mariadb_server import PrivateServer, missing  # noqa: E402

CF_OPTIONS = ("cf_orders={write_buffer_size=64k;target_file_size_base=48k;max_bytes_for_level_base=96k;"
              "max_bytes_for_level_multiplier=3;level0_file_num_compaction_trigger=2;"
              "level_compaction_dynamic_level_bytes=false;"
              "compression_per_level=kNoCompression:kNoCompression:kLZ4Compression:kLZ4Compression:kZSTD};"
              "cf_status={compression=kZlibCompression}")
SQL = """
SET SESSION rocksdb_commit_in_the_middle = 1;
CREATE DATABASE shop;
USE shop;
CREATE TABLE orders (id INT NOT NULL, customer INT NOT NULL, status VARCHAR(12) NOT NULL,
  note VARCHAR(200), PRIMARY KEY (id) COMMENT 'cfname=cf_orders',
  KEY idx_status (status, customer) COMMENT 'cfname=cf_status') ENGINE=ROCKSDB;
CREATE TABLE events (id BIGINT NOT NULL PRIMARY KEY, kind VARCHAR(16), at DATETIME, payload VARCHAR(120),
  KEY idx_kind (kind)) ENGINE=ROCKSDB;
INSERT INTO orders SELECT seq, seq % 1500, ELT(1 + seq % 5, 'shipped', 'pending', 'returned', 'lost', 'open'),
  CONCAT('order ', seq, ' ', REPEAT(ELT(1 + seq % 6, 'red ', 'green ', 'blue ', 'teal ', 'plum ', 'grey '),
         1 + seq % 7), LEFT(MD5(seq), seq % 17)) FROM seq_1_to_{orders};
SET GLOBAL rocksdb_force_flush_memtable_now = 1;
INSERT INTO events SELECT seq, ELT(1 + seq % 4, 'click', 'view', 'buy', 'leave'),
  '2026-11-01' + INTERVAL seq MINUTE, CONCAT('session ', seq % 300, ' ', LEFT(SHA1(seq), 20)) FROM seq_1_to_{events};
UPDATE orders SET status = 'shipped' WHERE id % 10 = 0;
SET GLOBAL rocksdb_force_flush_memtable_now = 1;
"""


def main() -> int:
    why = missing(("ha_rocksdb.so",))
    if why:
        print(f"cannot make the MyRocks demo: {why}", file=sys.stderr)
        return 1
    args = sys.argv[1:]
    scale = 1
    if "--scale" in args:
        i = args.index("--scale")
        scale = int(args[i + 1])
        del args[i:i + 2]
    out = Path(args[0]) if args else HERE / "datadir"
    with tempfile.TemporaryDirectory() as tmp:
        server = PrivateServer(Path(tmp) / "srv", [
            "--plugin-load-add=ha_rocksdb.so", "--rocksdb-block-size=4096",
            f"--rocksdb-override-cf-options={CF_OPTIONS}", "--innodb-fast-shutdown=0"])
        with server:
            server.sql(SQL.format(orders=12000 * scale, events=6000 * scale))
        if out.exists():
            shutil.rmtree(out)
        src = server.datadir
        (out / "#rocksdb").mkdir(parents=True)
        for f in sorted((src / "#rocksdb").iterdir()):
            if f.name == "LOG" or f.name.startswith("LOG.old"):
                continue
            shutil.copyfile(f, out / "#rocksdb" / f.name)
        (out / "shop").mkdir()
        for f in sorted((src / "shop").iterdir()):
            if f.suffix in (".frm", ".opt"):
                shutil.copyfile(f, out / "shop" / f.name)
    total = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"MyRocks demo: {total} bytes in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

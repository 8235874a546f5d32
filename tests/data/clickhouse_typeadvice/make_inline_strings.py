#!/usr/bin/env python3
"""Builds ``datadir_inline``: a small data dir written by a ClickHouse that writes a Wide part's
Strings with their sizes inline (no ``.size`` stream: before 25.10; chdb 3.7.2 = 25.8), for the
advisor's String suggestions on such parts (issue 20): Strings all 16 bytes long (->
FixedString(16)), few distinct Strings (-> LowCardinality(String)), words where a ZSTD level
beats LZ4, two partitions of Wide parts; and a table of 256-row granules, many to a compressed
block (its version recorded in ``datadir_inline/ta_version.json``):

    /tmp/chdb-3.7.2/bin/python tests/data/clickhouse_typeadvice/make_inline_strings.py

Then its truth, as make.py says, with the same chdb (``--db ti --tables inline,small_granules --truth
truth_inline_strings.json``).  ClickHouse 23.10 (chdb 1.4.1) writes its own, smaller
(``--out datadir_inline_23_10 --rows 12000``), whose truth make_inline_23_10.py gives (that
release has no system.parts_columns).
"""
import argparse
import json
import os
import shutil
import sys
from importlib.metadata import version as dist_version

import chdb.session

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make import close_session, remove_session_files  # noqa: E402
OUT = os.path.join(HERE, "datadir_inline")
ROWS = 30_000


def main(out=OUT, rows=ROWS):
    shutil.rmtree(out, ignore_errors=True)
    s = chdb.session.Session(out)
    s.query("CREATE DATABASE ti ENGINE = Atomic")
    s.query(f"""CREATE TABLE ti.inline (
    id UInt32 CODEC(Delta, ZSTD(1)),
    hex16 String,
    region String CODEC(ZSTD(1)),
    words String CODEC(LZ4)
) ENGINE = MergeTree PARTITION BY intDiv(id, {rows * 3 // 5}) ORDER BY id
SETTINGS index_granularity = 8192, min_bytes_for_wide_part = 0""")
    s.query(f"""INSERT INTO ti.inline SELECT toUInt32(number), leftPad(hex(h % 7000), 16, '0'),
    concat('region-', toString(h % 30)),
    arrayStringConcat(arrayMap(i -> ['alpha', 'beta', 'gamma', 'delta'][bitShiftRight(h, i * 2) % 4 + 1],
                                range(1 + h % 5)), ' ')
FROM (SELECT number, cityHash64(number, 71) AS h FROM numbers({rows}))""")
    # granules of 256 rows: many in a compressed block, so most start inside one (their marks say where)
    s.query("CREATE TABLE ti.small_granules (id UInt32, s String) ENGINE = MergeTree ORDER BY id "
            "SETTINGS index_granularity = 256, index_granularity_bytes = 0, min_bytes_for_wide_part = 0")
    s.query("INSERT INTO ti.small_granules SELECT number, toString(cityHash64(number) % 1000) FROM numbers(5000)")
    version = s.query("SELECT version()", "TSV").bytes().decode().strip()
    close_session(s)
    remove_session_files(out)
    with open(os.path.join(out, "ta_version.json"), "w") as f:
        json.dump({"chdb_version": dist_version("chdb"), "clickhouse_version": version, "rows": rows}, f)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--rows", type=int, default=ROWS)
    args = ap.parse_args()
    main(os.path.join(HERE, args.out), args.rows)

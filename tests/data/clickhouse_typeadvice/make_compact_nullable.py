#!/usr/bin/env python3
"""Adds to the small data dir of make_types.py the table ``ta.compact_null``: one Wide part and
three Compact parts (min_bytes_for_wide_part between their sizes, merges stopped) of Nullable
columns (issue 20): Nullable(Int64) with NULLs whose values fit Int8, Nullable(UInt32) without
NULLs, Nullable(String) of few distinct values with NULLs, and a Nullable(UInt32) with
NULLs and CODEC(T64, ZSTD(1)), whose null map the Compact writer puts in a block of its own (it
takes the generic codecs only) before the values' block, and a Nullable(String) without NULLs.  Written by the engine itself (chdb;
run after make_types.py, with the same chdb):

    /tmp/chdb-4.4.0/bin/python tests/data/clickhouse_typeadvice/make_compact_nullable.py

Then its truth, as make_compact_advice.py says (``--db ta --table compact_null``).
"""
import os
import sys

import chdb.session

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make import close_session, remove_session_files  # noqa: E402
OUT = os.path.join(HERE, "datadir")
ROWS = ("SELECT toUInt32(number), if(h % 4 = 0, NULL, toInt64(h % 200) - 100), toNullable(toUInt32(h % 70000)), "
        "multiIf(h % 5 = 0, NULL, h % 7 = 0, '', concat('site-', toString(h % 25))), "
        "if(h % 3 = 0, NULL, toUInt32(h % 1000)), toNullable(concat('k', toString(h % 40))) "
        "FROM (SELECT number, cityHash64(number, 81) AS h FROM numbers({start}, {n}))")


def main():
    s = chdb.session.Session(OUT)
    s.query("DROP TABLE IF EXISTS ta.compact_null SYNC")
    s.query("""CREATE TABLE ta.compact_null (
    id UInt32,
    n_small Nullable(Int64),
    n_none Nullable(UInt32),
    n_s Nullable(String),
    n_t64 Nullable(UInt32) CODEC(T64, ZSTD(1)),
    n_s_none Nullable(String)
) ENGINE = MergeTree ORDER BY id
SETTINGS index_granularity = 8192, min_bytes_for_wide_part = 500000""")
    s.query("SYSTEM STOP MERGES ta.compact_null")
    for start, n in ((0, 20000), (20000, 9000), (29000, 1500), (30500, 300)):
        s.query("INSERT INTO ta.compact_null " + ROWS.format(start=start, n=n))
    print(s.query("SELECT name, part_type, rows FROM system.parts WHERE database = 'ta' AND table = 'compact_null' "
                  "AND active", "TSV").bytes().decode())
    close_session(s)
    remove_session_files(OUT)


if __name__ == "__main__":
    main()

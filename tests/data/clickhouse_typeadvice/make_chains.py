#!/usr/bin/env python3
"""Adds to the small data dir of make_types.py the table ``ta.chains``, whose columns
the longer codec chains suit (issue 20): a time column and a counter for Delta /
DoubleDelta and Delta-then-T64 chains, noisy integers where ZSTD levels pay (the
transform chains are then tried with the higher level), and Nullable columns that hold
NULLs (their null map takes the chain's generic codecs only); and ``ta.nullmaps``,
Nullable columns with NULLs whose CODEC has no generic codec (DoubleDelta, T64: the engine
writes their null map with NONE, which the test compares with the null map projected).
Written by the engine
itself (chdb; run after make_types.py, with the same chdb):

    /tmp/chdb-4.4.0/bin/python tests/data/clickhouse_typeadvice/make_chains.py

Then the truth of both tables, as make_types.py says (``--tables types,chains``).
"""
import os
import sys

import chdb.session

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make import close_session, remove_session_files  # noqa: E402
OUT = os.path.join(HERE, "datadir")
ROWS = 16_000

STATEMENTS = [
    """CREATE TABLE ta.chains (
    id UInt32 CODEC(Delta, ZSTD(1)),
    ts DateTime CODEC(ZSTD(1)),
    counter UInt64 CODEC(LZ4),
    noisy Int64 CODEC(ZSTD(1)),
    n_ts Nullable(UInt32) CODEC(ZSTD(1)),
    n_small Nullable(Int32) CODEC(LZ4),
    words String CODEC(LZ4)
) ENGINE = MergeTree PARTITION BY intDiv(id, 10000) ORDER BY id
SETTINGS index_granularity = 8192, min_bytes_for_wide_part = 0""",
    f"""INSERT INTO ta.chains SELECT
    toUInt32(number) AS id,
    toDateTime(1704067200 + number * 15 + h % 4, 'UTC') AS ts,
    toUInt64(1000000 + number * 11 + h % 9) AS counter,
    toInt64(number * 1000 + (h % 100000) * (h % 3)) AS noisy,
    if(h % 5 = 0, NULL, toUInt32(1704067200 + number * 2)) AS n_ts,
    if(h % 4 = 0, NULL, toInt32(h % 300) - 150) AS n_small,
    arrayStringConcat(arrayMap(i -> ['alpha', 'beta', 'gamma', 'delta', 'epsilon'][bitShiftRight(h, i * 3) % 5 + 1],
                                range(1 + h % 4)), ' ') AS words
FROM (SELECT number, cityHash64(number, 7) AS h FROM numbers({ROWS}))""",
    """CREATE TABLE ta.nullmaps (
    id UInt32 CODEC(Delta, ZSTD(1)),
    n_dd Nullable(UInt32) CODEC(DoubleDelta),
    n_t64 Nullable(Int32) CODEC(T64)
) ENGINE = MergeTree ORDER BY id
SETTINGS index_granularity = 8192, min_bytes_for_wide_part = 0""",
    """INSERT INTO ta.nullmaps SELECT
    toUInt32(number) AS id,
    if(h % 6 = 0, NULL, toUInt32(1704067200 + number * 3)) AS n_dd,
    if(h % 3 = 0, NULL, toInt32(h % 1000) - 500) AS n_t64
FROM (SELECT number, cityHash64(number, 9) AS h FROM numbers(10000))""",
]


def main():
    s = chdb.session.Session(OUT)
    s.query("DROP TABLE IF EXISTS ta.chains SYNC")
    s.query("DROP TABLE IF EXISTS ta.nullmaps SYNC")
    for q in STATEMENTS:
        s.query(q)
    close_session(s)
    remove_session_files(OUT)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Adds to the small data dir of make_types.py the table ``ta.nstrings``: Nullable(String)
columns that hold NULLs (issue 20), one of few distinct values (some of them '', which
LowCardinality(Nullable(String)) keeps apart from NULL: its dictionary holds NULL at
position 0 and '' at 1) and two of many (only codec chains suit them: none beats ZSTD(1) on
random hex, ZSTD levels beat LZ4 on the e-mail-like text, its null map written with them).  Written by the
engine itself (chdb; run after make_types.py, with the same chdb):

    /tmp/chdb-4.4.0/bin/python tests/data/clickhouse_typeadvice/make_nullable_strings.py

Then its truth, as make.py says (``--tables nstrings --truth truth_nullable_strings.json``).
"""
import os
import sys

import chdb.session

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make import close_session, remove_session_files  # noqa: E402
OUT = os.path.join(HERE, "datadir")
ROWS = 20_000

STATEMENTS = [
    """CREATE TABLE ta.nstrings (
    id UInt32 CODEC(Delta, ZSTD(1)),
    ns_few Nullable(String),
    ns_many Nullable(String) CODEC(ZSTD(1)),
    ns_text Nullable(String) CODEC(LZ4)
) ENGINE = MergeTree PARTITION BY intDiv(id, 12000) ORDER BY id
SETTINGS index_granularity = 8192, min_bytes_for_wide_part = 0""",
    f"""INSERT INTO ta.nstrings SELECT
    toUInt32(number) AS id,
    multiIf(h % 5 = 0, NULL, h % 7 = 0, '', concat('site-', toString(h % 40))) AS ns_few,
    if(h % 3 = 0, NULL, hex(cityHash64(number, 3))) AS ns_many,
    if(h % 4 = 0, NULL, concat('user-', toString(number * 37), '@mail.example.com')) AS ns_text
FROM (SELECT number, cityHash64(number, 21) AS h FROM numbers({ROWS}))""",
]


def main():
    s = chdb.session.Session(OUT)
    s.query("DROP TABLE IF EXISTS ta.nstrings SYNC")
    for q in STATEMENTS:
        s.query(q)
    close_session(s)
    remove_session_files(OUT)


if __name__ == "__main__":
    main()

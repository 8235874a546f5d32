#!/usr/bin/env python3
"""Adds to the small data dir of make_types.py two tables of Nullable(String) columns that hold
NULLs (issue 20):

- ``ta.nfixed`` (Wide parts): non-NULL values all 12 bytes long (``nf_id``) or 5 (``nf_code``),
  which Nullable(FixedString(N)) keeps with a NULL row's nested value N zero bytes;
- ``ta.compact_nstr`` (Compact parts only, merges stopped): Nullable(String) of 16-byte values
  and of few distinct values, a padded Nullable(FixedString(8)), and a Nullable(String) without
  NULLs, each with NULLs in every granule but the last one's.

Written by the engine itself (chdb; run after make_types.py, with the same chdb):

    /tmp/chdb44/bin/python tests/data/clickhouse_typeadvice/make_nullable_fixedstring.py

Then their truth: make.py ``--db ta --tables nfixed --truth truth_nullable_fixedstring.json``, and
make_compact_advice.py ``--db ta --table compact_nstr --truth truth_compact_nullable_strings.json``.
A chdb 4.4.0 session opened on the data dir merges make_compact_strings.py's ``compact_str``
parts (SYSTEM STOP MERGES does not outlive a session): delete the ``all_1_5_1`` folder it leaves
there before committing.
"""
import os
import sys

import chdb.session

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make import close_session, remove_session_files  # noqa: E402
OUT = os.path.join(HERE, "datadir")
ROWS = 8_000

NFIXED = [
    """CREATE TABLE ta.nfixed (
    id UInt32 CODEC(Delta, ZSTD(1)),
    nf_id Nullable(String),
    nf_code Nullable(String) CODEC(ZSTD(1))
) ENGINE = MergeTree PARTITION BY intDiv(id, 5000) ORDER BY id
SETTINGS index_granularity = 8192, min_bytes_for_wide_part = 0""",
    f"""INSERT INTO ta.nfixed SELECT
    toUInt32(number) AS id,
    if(h % 3 = 0, NULL, concat('ord-', leftPad(toString(number * 7), 8, '0'))) AS nf_id,
    if(h % 4 = 0, NULL, concat('C', leftPad(toString(h % 3000), 4, '0'))) AS nf_code
FROM (SELECT number, cityHash64(number, 31) AS h FROM numbers({ROWS}))""",
]
COMPACT_ROWS = ("SELECT toUInt32(number), if(h % 3 = 0, NULL, leftPad(lower(hex(cityHash64(number, 7))), 16, '0')), "
                "multiIf(h % 5 = 0, NULL, h % 7 = 0, '', concat('site-', toString(h % 30))), "
                "if(h % 4 = 0, NULL, toFixedString(concat('f', toString(h % 50)), 8)), "
                "toNullable(concat('k', toString(h % 40))) "
                "FROM (SELECT number, cityHash64(number, 91) AS h FROM numbers({start}, {n}))")


def main():
    s = chdb.session.Session(OUT)
    for t in ("nfixed", "compact_nstr"):
        s.query(f"DROP TABLE IF EXISTS ta.{t} SYNC")
    for q in NFIXED:
        s.query(q)
    s.query("""CREATE TABLE ta.compact_nstr (
    id UInt32,
    c_hex Nullable(String),
    c_few Nullable(String) CODEC(ZSTD(1)),
    c_fs Nullable(FixedString(8)),
    c_none Nullable(String)
) ENGINE = MergeTree ORDER BY id
SETTINGS index_granularity = 8192""")
    s.query("SYSTEM STOP MERGES ta.compact_nstr")
    for start, n in ((0, 4000), (4000, 1500), (5500, 600)):
        s.query("INSERT INTO ta.compact_nstr " + COMPACT_ROWS.format(start=start, n=n))
    print(s.query("SELECT table, name, part_type, rows FROM system.parts WHERE database = 'ta' "
                  "AND table IN ('nfixed', 'compact_nstr') AND active", "TSV").bytes().decode())
    close_session(s)
    remove_session_files(OUT)


if __name__ == "__main__":
    main()

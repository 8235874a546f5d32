#!/usr/bin/env python3
"""Adds to the small data dir of make_types.py the table ``ta.compact_str``: one Wide part and
four Compact parts (min_bytes_for_wide_part between their sizes, merges stopped) of String and
FixedString columns that are not in the key (issue 20): Strings all 16 bytes long (->
FixedString(16)), few distinct Strings (-> LowCardinality(String)), a padded FixedString(8)
(-> String, LowCardinality(FixedString(8))) and words where a ZSTD level beats LZ4.  A
Compact part writes a String granule's sizes and bytes in one block (serialization.json
``string`` version 1), which the advisor reads whole.  And ``ta.compact_only``, the same columns
in three Compact parts only (a small table's case: nothing to sample).  Written by the engine itself (chdb; run
after make_types.py, with the same chdb):

    /tmp/chdb-4.4.0/bin/python tests/data/clickhouse_typeadvice/make_compact_strings.py

Then its truth, as make_compact_advice.py says (``--db ta --table compact_str``, then
``--table compact_only``).
"""
import os
import sys

import chdb.session

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make import close_session, remove_session_files  # noqa: E402
OUT = os.path.join(HERE, "datadir")
ROWS = ("SELECT toUInt32(number), leftPad(hex(h % 9000), 16, '0'), concat('region-', toString(h % 12)), "
        "toFixedString(toString(h % 250), 8), arrayStringConcat(arrayMap(i -> ['alpha', 'beta', 'gamma', 'delta']"
        "[bitShiftRight(h, i * 2) % 4 + 1], range(1 + h % 5)), ' ') "
        "FROM (SELECT number, cityHash64(number, 51) AS h FROM numbers({start}, {n}))")


def main():
    s = chdb.session.Session(OUT)
    s.query("DROP TABLE IF EXISTS ta.compact_str SYNC")
    s.query("""CREATE TABLE ta.compact_str (
    id UInt32,
    s_fixed String,
    s_few String,
    fs_pad FixedString(8),
    words String CODEC(LZ4)
) ENGINE = MergeTree ORDER BY id
SETTINGS index_granularity = 8192, min_bytes_for_wide_part = 1000000""")
    s.query("SYSTEM STOP MERGES ta.compact_str")
    for start, n in ((0, 20000), (20000, 1500), (21500, 1500), (23000, 9000), (32000, 700)):
        s.query("INSERT INTO ta.compact_str " + ROWS.format(start=start, n=n))
    # a small table: every part Compact (no Wide part to sample)
    s.query("DROP TABLE IF EXISTS ta.compact_only SYNC")
    s.query("CREATE TABLE ta.compact_only AS ta.compact_str")
    s.query("SYSTEM STOP MERGES ta.compact_only")
    for start, n in ((0, 9000), (9000, 2000), (11000, 400)):
        s.query("INSERT INTO ta.compact_only " + ROWS.format(start=start, n=n))
    print(s.query("SELECT table, name, part_type, rows FROM system.parts WHERE database = 'ta' AND table LIKE "
                  "'compact%' AND active", "TSV").bytes().decode())
    close_session(s)
    remove_session_files(OUT)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Adds to the small data dir of make_types.py a Log and a TinyLog table of String and
FixedString columns (issue 20): Strings all 16 bytes long (-> FixedString(16)), a padded
FixedString(8) (-> String), and words where a ZSTD level beats LZ4; three INSERTs each (a
Log column's file holds a block per INSERT, its Strings with their sizes inline).  Written by
the engine itself (chdb; run after make_types.py, with the same chdb):

    /tmp/chdb-4.4.0/bin/python tests/data/clickhouse_typeadvice/make_log_strings.py

Then its truth, as make_log_advice.py says (its third argument ``truth_log_strings_nullable.json``).
"""
import os
import sys

import chdb.session

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make import close_session, remove_session_files  # noqa: E402
OUT = os.path.join(HERE, "datadir")
COLUMNS = "hex16 String, fs_pad FixedString(8), words String CODEC(LZ4)"
ROWS = ("SELECT leftPad(hex(h % 5000), 16, '0'), toFixedString(toString(h % 300), 8), "
        "arrayStringConcat(arrayMap(i -> ['alpha', 'beta', 'gamma', 'delta'][bitShiftRight(h, i * 2) % 4 + 1], "
        "range(1 + h % 5)), ' ') FROM (SELECT number, cityHash64(number, 31) AS h FROM numbers({start}, {n}))")


def main():
    s = chdb.session.Session(OUT)
    for table, engine in (("log_str", "Log"), ("tiny_str", "TinyLog")):
        s.query(f"DROP TABLE IF EXISTS ta.{table} SYNC")
        s.query(f"CREATE TABLE ta.{table} ({COLUMNS}) ENGINE = {engine}")
        for start, n in ((0, 6000), (6000, 2500), (8500, 9)):
            s.query(f"INSERT INTO ta.{table} " + ROWS.format(start=start, n=n))
    close_session(s)
    remove_session_files(OUT)


if __name__ == "__main__":
    main()

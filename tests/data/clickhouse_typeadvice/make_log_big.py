#!/usr/bin/env python3
"""Writes a data dir of its own, ``datadir_big`` (kept apart from make_types.py's so that the
suite's advice of that one with every codec chain stays quick), with Log, TinyLog and StripeLog
tables of 1,300,000 rows, above min_insert_block_size_rows (1,048,449), whose values compress to a few KiB (issue
20): made anew with INSERT ... SELECT their rows come back in other blocks than they were
written in (read in blocks of max_block_size, 65,409 rows, squashed until they hold
min_insert_block_size_rows: 1,111,953 rows and the rest), which the advisor's projections model.
``log_big`` is written in three INSERTs (500,000, 400,000 and 400,000 rows: three blocks a file),
``tiny_big`` and ``stripe_big`` in one (squashed by that INSERT into 1,111,953 + 188,047 rows;
StripeLog's second Native block header then ends its last column's compressed block).  Written by
the engine itself (chdb):

    /tmp/chdb44/bin/python tests/data/clickhouse_typeadvice/make_log_big.py

Then their truth, from the advice of that data dir (``advise tests/data/clickhouse_typeadvice/datadir_big
--sample all --json -o /tmp/advice_big.json``): make_log_advice.py ``/tmp/advice_big.json
tests/data/clickhouse_typeadvice/datadir_big truth_log_big.json`` and make_stripelog_advice.py (the
same, ``truth_stripelog_big.json``).
"""
import os
import sys

import chdb.session

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make import close_session, remove_session_files  # noqa: E402
OUT = os.path.join(HERE, "datadir_big")
COLUMNS = "(k UInt64, v UInt32 CODEC(ZSTD(1)))"
ROWS = "SELECT intDiv(number, 9000), intDiv(number, 5000) % 300 FROM numbers({start}, {n}) SETTINGS max_threads = 1"
#: StripeLog writes every column with the default codec (no Delta): two columns of runs of values
STRIPE_COLUMNS = "(a UInt32, v UInt32)"
STRIPE_ROWS = ("SELECT intDiv(number, 7000) % 200, intDiv(number, 5000) % 300 FROM numbers({start}, {n}) "
               "SETTINGS max_threads = 1")


def main():
    s = chdb.session.Session(OUT)
    s.query("CREATE DATABASE IF NOT EXISTS ta")
    for t, engine, inserts in (("log_big", "Log", ((0, 500000), (500000, 400000), (900000, 400000))),
                               ("tiny_big", "TinyLog", ((0, 1300000),)), ("stripe_big", "StripeLog", ((0, 1300000),))):
        s.query(f"DROP TABLE IF EXISTS ta.{t} SYNC")
        stripe = engine == "StripeLog"
        s.query(f"CREATE TABLE ta.{t} {STRIPE_COLUMNS if stripe else COLUMNS} ENGINE = {engine}")
        for start, n in inserts:
            s.query(f"INSERT INTO ta.{t} " + (STRIPE_ROWS if stripe else ROWS).format(start=start, n=n))
    print(s.query("SELECT name, engine, total_rows, total_bytes FROM system.tables WHERE database = 'ta' AND "
                  "name IN ('log_big', 'tiny_big', 'stripe_big')", "TSV").bytes().decode())
    close_session(s)
    remove_session_files(OUT)


if __name__ == "__main__":
    main()

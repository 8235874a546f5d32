#!/usr/bin/env python3
"""Adds to the small data dir of make_types.py a Log and a TinyLog table of Nullable columns
(issue 20): one without NULLs, ones with NULLs whose values fit a narrower type, one with a
CODEC with a transform (Delta: a Log table codes every file of a column with its chain, the null map too; T64 there fails at INSERT, ILLEGAL_SYNTAX_FOR_CODEC_TYPE) (``n.null.bin`` beside ``n.bin``), two
INSERTs each.  Written by the engine itself (chdb; run after make_types.py, with the same chdb):

    /tmp/chdb-4.4.0/bin/python tests/data/clickhouse_typeadvice/make_log_nullable.py

Then its truth, as make_log_advice.py says (its third argument ``truth_log_strings_nullable.json``, with make_log_strings.py's tables).
"""
import os
import sys

import chdb.session

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make import close_session, remove_session_files  # noqa: E402
OUT = os.path.join(HERE, "datadir")
COLUMNS = ("n_none Nullable(UInt32), n_small Nullable(Int64), n_delta Nullable(UInt32) CODEC(Delta, ZSTD(1)), "
           "n_f Nullable(Float64) CODEC(LZ4)")
ROWS = ("SELECT toNullable(toUInt32(h % 70000)), if(h % 4 = 0, NULL, toInt64(h % 200) - 100), "
        "if(h % 3 = 0, NULL, toUInt32(h % 1000)), if(h % 5 = 0, NULL, toFloat64(h % 64) / 4) "
        "FROM (SELECT number, cityHash64(number, 41) AS h FROM numbers({start}, {n}))")


def main():
    s = chdb.session.Session(OUT)
    for table, engine in (("log_null", "Log"), ("tiny_null", "TinyLog")):
        s.query(f"DROP TABLE IF EXISTS ta.{table} SYNC")
        s.query(f"CREATE TABLE ta.{table} ({COLUMNS}) ENGINE = {engine}")
        for start, n in ((0, 7000), (7000, 3000)):
            s.query(f"INSERT INTO ta.{table} " + ROWS.format(start=start, n=n))
    close_session(s)
    remove_session_files(OUT)


if __name__ == "__main__":
    main()

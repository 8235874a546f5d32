#!/usr/bin/env python3
"""Adds to the small data dir of make_types.py Log, TinyLog and StripeLog tables of String and
Nullable(String) columns (issue 20): few distinct values (LowCardinality, written by these engines
without a shared dictionary), Nullable(String) with NULLs whose values are all 16 bytes long
(Nullable(FixedString(16))), with NULLs and few values (LowCardinality(Nullable(String))), without
NULLs, and a padded FixedString(8).  ``log_lc`` is written in two INSERTs (two blocks a file),
``tiny_lc`` and ``stripe_lc`` in one.  Written by the engine itself (chdb; run after make_types.py,
with the same chdb):

    /tmp/chdb44/bin/python tests/data/clickhouse_typeadvice/make_log_lowcardinality.py

Then their truth: make_log_advice.py (``truth_log_lowcardinality.json``) and
make_stripelog_advice.py (``truth_stripelog_lowcardinality.json``), each on the advice of these
tables only (make_log_advice.py's docstring).
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

COLUMNS = """(
    id UInt32,
    s_few String,
    ns_fixed Nullable(String),
    ns_few Nullable(String) CODEC(ZSTD(1)),
    ns_none Nullable(String),
    fs_pad FixedString(8)
)"""
ROWS = ("SELECT toUInt32(number), concat('host-', toString(h % 30)), "
        "if(h % 10 = 0, NULL, leftPad(lower(hex(cityHash64(number, 9))), 16, '0')), "
        "multiIf(h % 5 = 0, NULL, h % 7 = 0, '', concat('site-', toString(h % 20))), "
        "toNullable(concat('k', toString(h % 40))), toFixedString(concat('f', toString(h % 60)), 8) "
        "FROM (SELECT number, cityHash64(number, 41) AS h FROM numbers({start}, {n}))")


def main():
    s = chdb.session.Session(OUT)
    for t, engine, inserts in (("log_lc", "Log", ((0, 3000), (3000, 2000))), ("tiny_lc", "TinyLog", ((0, 4000),)),
                               ("stripe_lc", "StripeLog", ((0, 5000),))):
        s.query(f"DROP TABLE IF EXISTS ta.{t} SYNC")
        s.query(f"CREATE TABLE ta.{t} {COLUMNS} ENGINE = {engine}")
        for start, n in inserts:
            s.query(f"INSERT INTO ta.{t} " + ROWS.format(start=start, n=n))
    print(s.query("SELECT name, engine, total_rows, total_bytes FROM system.tables WHERE database = 'ta' AND "
                  "name IN ('log_lc', 'tiny_lc', 'stripe_lc')", "TSV").bytes().decode())
    close_session(s)
    remove_session_files(OUT)


if __name__ == "__main__":
    main()

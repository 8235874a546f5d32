#!/usr/bin/env python3
"""Adds to the small data dir of make_types.py the StripeLog table ``ta.stripe`` (issue 20):
fixed-width columns whose values fit narrower types (UInt64 counters, Float64 holding Float32
values, DateTime64(3) of whole seconds, Decimal(18, 4) of small values), Strings all 16 bytes
long, a padded FixedString(8), Nullable columns with and without NULLs, written in one INSERT
(so the table made anew, as the advice says, writes the same Native block and its other
columns' bytes do not move).  Written by the engine itself (chdb; run after make_types.py,
with the same chdb):

    /tmp/chdb-4.4.0/bin/python tests/data/clickhouse_typeadvice/make_stripelog.py

Then its truth (make_stripelog_advice.py).
"""
import os
import sys

import chdb.session

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make import close_session, remove_session_files  # noqa: E402
OUT = os.path.join(HERE, "datadir")


def main():
    s = chdb.session.Session(OUT)
    s.query("DROP TABLE IF EXISTS ta.stripe SYNC")
    s.query("CREATE TABLE ta.stripe (id UInt64, small UInt64, f Float64, ts DateTime64(3), dec Decimal(18, 4), "
            "hex16 String, fs_pad FixedString(8), n_small Nullable(Int64), n_none Nullable(UInt32)) ENGINE = StripeLog")
    s.query("INSERT INTO ta.stripe SELECT number, h % 200, toFloat32((h % 1000) / 8), "
            "toDateTime64(1704067200 + number * 5, 3), toDecimal64(h % 5000, 4), leftPad(hex(h % 3000), 16, '0'), "
            "toFixedString(toString(h % 90), 8), if(h % 4 = 0, NULL, toInt64(h % 200) - 100), "
            "toNullable(toUInt32(h % 50000)) "
            "FROM (SELECT number, cityHash64(number, 61) AS h FROM numbers(12000))")
    close_session(s)
    remove_session_files(OUT)


if __name__ == "__main__":
    main()

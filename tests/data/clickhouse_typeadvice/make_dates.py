#!/usr/bin/env python3
"""Builds ``datadir_dates``, the small data dir tests/test_typeadvice.py advises for the
date and time columns, the GCD codec and the ZSTD levels (issue 20), written by the engine
itself (chdb; its version in ``datadir_dates/ta_version.json``):

* DateTime columns that are always a midnight (in UTC, and in Asia/Tokyo for a
  ``DateTime('Asia/Tokyo')``) -> Date; whole-minute DateTime (GCD's case);
* Date32 inside Date's range -> Date; a Date column (Delta / DoubleDelta / T64 chains);
* DateTime64(3) of whole days: inside Date's range -> Date, before 1970 -> Date32;
* integers and a Decimal whose values share a divisor (GCD), a counter that fits three
  narrower types (chains on every one), a String of 8-byte codes from few values
  (LowCardinality(String) and FixedString(8), chains on both) and a text column where the
  high ZSTD levels pay;
* a counter written with ``CODEC(Delta, GCD, ZSTD(1))`` and a text with ``CODEC(ZSTD(3, 24))``
  (their current bytes re-encoded: GCD after Delta, ZSTD's window_log), DateTime and
  DateTime64 values with times of day (in UTC, in Asia/Tokyo, before 1970: the lossy Date /
  Date32).

    /tmp/chdb44/bin/python tests/data/clickhouse_typeadvice/make_dates.py

Then its truth (make.py runs the advisor's own DDL on a copy):

    .venv/bin/python -m dbxray.app.main advise tests/data/clickhouse_typeadvice/datadir_dates --sample all \
        --codecs --json -o /tmp/advice_dates.json
    /tmp/chdb44/bin/python tests/data/clickhouse_typeadvice/make.py /tmp/advice_dates.json \
        tests/data/clickhouse_typeadvice/datadir_dates --db ta --tables dates --truth truth_dates.json
"""
import json
import os
import shutil
import sys
from importlib.metadata import version as dist_version

import chdb.session

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make import close_session, remove_session_files  # noqa: E402
OUT = os.path.join(HERE, "datadir_dates")
ROWS = 16_000

STATEMENTS = [
    "CREATE DATABASE IF NOT EXISTS ta",
    """CREATE TABLE ta.dates (
    id UInt32 CODEC(Delta, ZSTD(1)),
    day_dt DateTime,
    day_tokyo DateTime('Asia/Tokyo') CODEC(ZSTD(1)),
    minute_dt DateTime CODEC(ZSTD(1)),
    d32 Date32,
    d Date,
    day64 DateTime64(3, 'UTC') CODEC(ZSTD(1)),
    old64 DateTime64(3, 'UTC'),
    step UInt32 CODEC(ZSTD(1)),
    price Decimal(18, 2) CODEC(ZSTD(1)),
    small UInt64,
    code String,
    words String CODEC(ZSTD(1)),
    seq UInt32 CODEC(Delta, GCD, ZSTD(1)),
    ts DateTime CODEC(ZSTD(1)),
    ts_tokyo DateTime('Asia/Tokyo') CODEC(Delta, ZSTD(1)),
    ts64 DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1)),
    notes String CODEC(ZSTD(3, 24))
) ENGINE = MergeTree ORDER BY id
SETTINGS index_granularity = 8192, min_bytes_for_wide_part = 0""",
    f"""INSERT INTO ta.dates SELECT
    toUInt32(number) AS id,
    toDateTime(toDate('2020-01-01') + intDiv(number, 97) + h % 3, 'UTC') AS day_dt,
    toDateTime(toDate('2021-06-01') + h % 400, 'Asia/Tokyo') AS day_tokyo,
    toDateTime(1704067200 + 60 * (intDiv(number, 7) + h % 5), 'UTC') AS minute_dt,
    toDate32(toDate('2015-03-01') + intDiv(number, 50) + h % 2) AS d32,
    toDate('2019-01-01') + intDiv(number, 30) AS d,
    toDateTime64(toDateTime(toDate('2010-01-01') + h % 3000, 'UTC'), 3, 'UTC') AS day64,
    toDateTime64(toDateTime64('1950-01-01 00:00:00', 3, 'UTC') + toIntervalDay(h % 20000), 3, 'UTC') AS old64,
    toUInt32((h % 1000003) * 1000) AS step,
    toDecimal64((h % 200000) * 5, 2) / 100 AS price,
    toUInt64(intDiv(number, 11) % 250 + h % 3) AS small,
    concat('C', leftPad(toString(h % 400), 7, '0')) AS code,
    arrayStringConcat(arrayMap(i -> ['lorem', 'ipsum', 'dolor', 'sit', 'amet', 'consectetur', 'adipiscing',
        'elit', 'sed', 'do', 'eiusmod', 'tempor'][bitShiftRight(h, i * 4) % 12 + 1], range(2 + h % 6)), ' ')
        AS words,
    toUInt32(7000 + 1000 * number + 1000 * (h % 3)) AS seq,
    toDateTime(1704067200 + 3600 * intDiv(number, 5) + 60 * (h % 3), 'UTC') AS ts,
    toDateTime(1704067200 + 900 * number + h % 900, 'Asia/Tokyo') AS ts_tokyo,
    toDateTime64(toDateTime64('1969-12-25 00:00:00', 3, 'UTC') + toIntervalMillisecond(number * 61237 + h % 1000), 3, 'UTC')
        AS ts64,
    concat(['alpha', 'beta', 'gamma', 'delta'][h % 4 + 1], ' #', toString(intDiv(number, 9))) AS notes
FROM (SELECT number, cityHash64(number, 25) AS h FROM numbers({ROWS}))""",
]


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    s = chdb.session.Session(OUT)
    for q in STATEMENTS:
        s.query(q)
    version = s.query("SELECT version()", "TSVRaw").bytes().decode().strip()
    close_session(s)
    remove_session_files(OUT)
    with open(os.path.join(OUT, "ta_version.json"), "w") as f:
        json.dump({"chdb_version": dist_version("chdb"), "clickhouse_version": version}, f)


if __name__ == "__main__":
    main()

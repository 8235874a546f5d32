#!/usr/bin/env python3
"""Builds the small data dir that tests/test_typeadvice.py advises for the types the
shared fixture has no case of (DateTime64 with whole seconds or milliseconds,
Decimal with unused scale or precision, Nullable without NULLs, fixed-length
Strings, padded FixedStrings, Strings of few distinct values, one of more than
8,192 per part), written by the engine itself (chdb; its version is recorded in
``datadir/ta_version.json``):

    /tmp/chdb-4.4.0/bin/python tests/data/clickhouse_typeadvice/make_types.py

Then its truth, as for the fixture (make.py runs the advisor's own DDL on a copy):

    .venv/bin/python -m dbxray.app.main advise tests/data/clickhouse_typeadvice/datadir --sample all \
        --json -o /tmp/advice_ta.json
    /tmp/chdb-4.4.0/bin/python tests/data/clickhouse_typeadvice/make.py /tmp/advice_ta.json \
        tests/data/clickhouse_typeadvice/datadir --db ta --tables types --truth truth_types.json
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
OUT = os.path.join(HERE, "datadir")
ROWS = 30_000

STATEMENTS = [
    "CREATE DATABASE ta ENGINE = Atomic",
    """CREATE TABLE ta.types (
    id UInt32 CODEC(Delta, ZSTD(1)),
    ts_s DateTime64(3) CODEC(Delta, ZSTD(1)),
    ts_ms DateTime64(6, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    dec Decimal(18, 6) CODEC(ZSTD(3)),
    dec_wide Decimal(38, 4) CODEC(ZSTD(3)),
    n_u Nullable(UInt32) CODEC(ZSTD(1)),
    n_s Nullable(String),
    n_null Nullable(UInt32) CODEC(ZSTD(1)),
    hex16 String,
    fs_pad FixedString(8) CODEC(ZSTD(1)),
    lc20 String CODEC(ZSTD(1)),
    lc3k String,
    lc12k String,
    s_empty String
) ENGINE = MergeTree PARTITION BY intDiv(id, 18000) ORDER BY id
SETTINGS index_granularity = 8192, min_bytes_for_wide_part = 0""",
    f"""INSERT INTO ta.types SELECT
    toUInt32(number) AS id,
    toDateTime64(1704067200 + number * 7, 3) AS ts_s,
    toDateTime64(1704067200 + number * 7, 6, 'UTC') + toIntervalMillisecond((h % 8) * 125) AS ts_ms,
    toDecimal64(h % 2000, 6) / 100 AS dec,
    toDecimal128(h % 3000, 4) AS dec_wide,
    toNullable(toUInt32(h % 2000)) AS n_u,
    toNullable(concat('ref', toString(h % 77))) AS n_s,
    if(h % 9 = 0, NULL, toUInt32(h % 1000)) AS n_null,
    leftPad(hex(h % 500), 16, '0') AS hex16,
    toFixedString(toString(h % 100), 8) AS fs_pad,
    concat('country_', toString(h % 20)) AS lc20,
    concat('user_', toString(h % 3000)) AS lc3k,
    concat('k', toString(h % 12000)) AS lc12k,
    if(h % 5 = 0, '', concat('x', toString(h % 10))) AS s_empty
FROM (SELECT number, cityHash64(number, 20) AS h FROM numbers({ROWS}))""",
]


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    s = chdb.session.Session(OUT)
    for q in STATEMENTS:
        s.query(q)
    version = s.query("SELECT version()", "TSV").bytes().decode().strip()
    close_session(s)
    remove_session_files(OUT)     # only the table's own files are kept
    with open(os.path.join(OUT, "ta_version.json"), "w") as f:
        json.dump({"chdb_version": dist_version("chdb"), "clickhouse_version": version, "rows": ROWS}, f)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A small data dir of existing LowCardinality and Array columns (issue 20: the advisor decodes
their streams), written by the engine itself (chdb 4.4.0):

    /tmp/chdb-venv/bin/python tests/data/clickhouse_typeadvice/make_composite.py

* ``ta.comp_wide``: MergeTree, every part Wide (min_bytes_for_wide_part = 0), 40,000 rows in one
  INSERT: LowCardinality(String) of 30 values and of ~22,000 (past the 8,192-key dictionary:
  several shared dictionaries and additional keys), LowCardinality(Nullable(String)) with NULLs,
  LowCardinality(FixedString(8)), Array(UInt64) of small values, Array(Float64), Array(String),
  LowCardinality(Nullable(String)) of nearly all distinct values with NULLs (String pays) and
  Array(UInt32) CODEC(Delta, LZ4), LowCardinality(UInt32) (allow_suspicious_low_cardinality_types = 1)
  and Array(Int64) of -100..101, LowCardinality(UInt32) and LowCardinality(FixedString(8)) of nearly
  all distinct values (the plain type pays);
* ``ta.comp_compact``: the same columns, Compact parts (the defaults), 6,000 rows;
* ``ta.comp_log`` (Log, two INSERTs), ``ta.comp_tiny`` (TinyLog, one INSERT) and ``ta.comp_stripe``
  (StripeLog, one INSERT: its truth by make_stripelog_advice.py, ``truth_stripelog_composite.json``).

``values_composite.json``: every column's values as the engine reads them back (SELECT ... ORDER BY id
in JSONCompact, hashed: the decoder tests compare their own values with it), and the truth of the
advice: ``make_composite_truth.py``.
"""
import hashlib
import json
import os
import shutil
import sys

import chdb.session

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make import close_session, remove_session_files  # noqa: E402
OUT = os.path.join(HERE, "datadir_composite")

COLUMNS = """(
    id UInt32,
    lc_few LowCardinality(String),
    lc_many LowCardinality(String),
    lc_null LowCardinality(Nullable(String)),
    lc_fs LowCardinality(FixedString(8)) CODEC(ZSTD(1)),
    arr_u64 Array(UInt64),
    arr_f64 Array(Float64) CODEC(ZSTD(1)),
    arr_str Array(String),
    lc_uniq LowCardinality(Nullable(String)),
    arr_u32 Array(UInt32) CODEC(Delta, LZ4),
    lc_num LowCardinality(UInt32),
    arr_i64 Array(Int64),
    lc_numu LowCardinality(UInt32),
    lc_fsu LowCardinality(FixedString(8))
)"""
ROWS = ("SELECT toUInt32(number), concat('host-', toString(h % 30)), concat('u', toString(cityHash64(number, 7) % 30000)), "
        "multiIf(h % 5 = 0, NULL, h % 7 = 0, '', concat('site-', toString(h % 20))), "
        "toFixedString(concat('f', toString(h % 60)), 8), "
        "arrayMap(i -> toUInt64((h + i * 7919) % 1000), range(h % 6)), "
        "arrayMap(i -> toFloat64((h + i) % 100) / 4, range(h % 4)), "
        "arrayMap(i -> concat('t', toString((h + i) % 50)), range(h % 3)), "
        "if(h % 10 = 0, NULL, lower(hex(cityHash64(number, 11) % 1000000000))), "
        "arrayMap(i -> toUInt32(number * 10 + i), range(h % 4)), "
        "toUInt32(h % 50), arrayMap(i -> toInt64(h % 200) - 100 + i, range(h % 3)), "
        "toUInt32(cityHash64(number, 17) % 4000000000), toFixedString(substring(hex(cityHash64(number, 19)), 1, 8), 8) "
        "FROM (SELECT number, cityHash64(number, 43) AS h FROM numbers({start}, {n}))")


def main():
    if os.path.exists(OUT):
        shutil.rmtree(OUT)
    s = chdb.session.Session(OUT)
    s.query("CREATE DATABASE IF NOT EXISTS ta")
    s.query("SET allow_suspicious_low_cardinality_types = 1")
    for t, engine, inserts in (
            ("comp_wide", "MergeTree ORDER BY id SETTINGS min_bytes_for_wide_part = 0", ((0, 40000),)),
            ("comp_compact", "MergeTree ORDER BY id", ((0, 6000),)),
            ("comp_log", "Log", ((0, 3000), (3000, 2000))),
            ("comp_tiny", "TinyLog", ((0, 4000),)), ("comp_stripe", "StripeLog", ((0, 5000),))):
        s.query(f"CREATE TABLE ta.{t} {COLUMNS} ENGINE = {engine}")
        for start, n in inserts:
            s.query(f"INSERT INTO ta.{t} " + ROWS.format(start=start, n=n))
    print(s.query("SELECT table, name, part_type, rows FROM system.parts WHERE database = 'ta' AND active",
                  "TSV").bytes().decode())
    print(s.query("SELECT name, engine, total_rows, total_bytes FROM system.tables WHERE database = 'ta'",
                  "TSV").bytes().decode())
    values = {}
    for t in ("comp_wide", "comp_compact", "comp_log", "comp_tiny", "comp_stripe"):
        for c in ("lc_few", "lc_many", "lc_null", "lc_fs", "arr_u64", "arr_f64", "arr_str", "lc_uniq", "arr_u32", "lc_num", "arr_i64", "lc_numu", "lc_fsu"):
            got = json.loads(s.query(f"SELECT {c} FROM ta.{t} ORDER BY id", "JSONCompact").bytes())["data"]
            vals = [r[0] for r in got]
            values[f"{t}.{c}"] = {"rows": len(vals), "sha256": value_hash(vals), "head": vals[:5]}
    with open(os.path.join(HERE, "values_composite.json"), "w") as f:
        json.dump(values, f, indent=1)
    close_session(s)
    remove_session_files(OUT)


def value_hash(vals) -> str:
    """sha256 of the values as compact JSON (as chdb gives them: a FixedString with its zero padding, a whole float as an integer)."""
    return hashlib.sha256(json.dumps(vals, separators=(",", ":")).encode()).hexdigest()


if __name__ == "__main__":
    main()

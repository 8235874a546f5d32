#!/usr/bin/env python3
"""Builds one small ClickHouse data directory with the chdb release installed in
the running Python (chdb embeds a ClickHouse server: 2.1.1 = 24.8, 3.7.2 = 25.x,
4.4.0 = 26.9; ``SELECT version()`` is recorded), and that server's own report
about it (``truth.json``: system.tables, system.columns, system.parts with the
inactive parts, system.parts_columns, system.detached_parts,
system.projection_parts).  Each release goes in its own venv:

    python3 -m venv /tmp/chdb-2.1.1 && /tmp/chdb-2.1.1/bin/pip install chdb==2.1.1
    /tmp/chdb-2.1.1/bin/python tests/data/clickhouse_versions/make.py
    # a release whose embedded server lacks a system table (chdb 1.4.1: no system.parts):
    /tmp/chdb-4.4.0/bin/python tests/data/clickhouse_versions/make.py --truth-from-copy DIR

writes ``tests/data/clickhouse_versions/chdb-<chdb version>/{datadir,truth.json}``.

Tables (rows kept small, so a data dir is a few hundred KiB):

* ``log_tiny`` / ``log_log`` / ``log_stripe``: TinyLog / Log / StripeLog, the same
  columns (UInt32, String, Nullable, Array, LowCardinality, Tuple), three INSERTs;
* ``log_codec``: a Log table with column codecs (Log writes each column with its
  codec; StripeLog always with the default codec);
* ``mt_wide``: Wide parts (min_bytes_for_wide_part = 0), codecs, a projection,
  PRIMARY KEY shorter than ORDER BY, two partitions;
* ``mt_compact``: Compact parts (the default for small inserts), merges stopped;
* ``mt_detach``: two partitions, one detached with DETACH PARTITION (older servers
  leave an empty covering part, inactive).

A statement the release does not know is skipped and listed in ``skipped``.
"""
import json
import os
import shutil
import sys
import tempfile

import chdb
import chdb.session
from importlib.metadata import version as dist_version

HERE = os.path.dirname(os.path.abspath(__file__))
DB = "v"
LOG_COLS = ("a UInt32, s String, n Nullable(Int16), arr Array(UInt8), lc LowCardinality(String), "
            "tup Tuple(x UInt8, y String)")
LOG_ROWS = ("SELECT toUInt32(number * 7), toString(number % 97), if(number % 3 = 0, NULL, toInt16(number % 1000)), "
            "range(number % 4), toString(number % 5), (toUInt8(number % 200), toString(number % 11)) "
            "FROM numbers({start}, {n})")

STATEMENTS = [
    f"CREATE DATABASE {DB} ENGINE = Atomic",
    *[f"CREATE TABLE {DB}.{t} ({LOG_COLS}) ENGINE = {e}"
      for t, e in (("log_tiny", "TinyLog"), ("log_log", "Log"), ("log_stripe", "StripeLog"))],
    *[f"INSERT INTO {DB}.{t} " + LOG_ROWS.format(start=s, n=n)
      for t in ("log_tiny", "log_log", "log_stripe") for s, n in ((0, 3000), (3000, 1500), (4500, 7))],
    f"CREATE TABLE {DB}.log_codec (id UInt64 CODEC(Delta, ZSTD(3)), f Float64 CODEC(Gorilla, LZ4), "
    "t String CODEC(ZSTD(1))) ENGINE = Log",
    f"INSERT INTO {DB}.log_codec SELECT number, number / 8, toString(number % 13) FROM numbers(4000)",
    f"INSERT INTO {DB}.log_codec SELECT number, number / 8, 'z' FROM numbers(4000, 100)",
    f"CREATE TABLE {DB}.mt_wide (k UInt8, id UInt32 CODEC(Delta, LZ4), ts DateTime CODEC(DoubleDelta), "
    "v Float64 CODEC(Gorilla), s String, n Nullable(UInt16), lc LowCardinality(String), arr Array(UInt16) "
    "CODEC(ZSTD(3)), PROJECTION p_s (SELECT s, count() GROUP BY s)) ENGINE = MergeTree PARTITION BY k "
    "PRIMARY KEY (k, id) ORDER BY (k, id, ts) "
    "SETTINGS min_bytes_for_wide_part = 0, index_granularity = 256",
    f"INSERT INTO {DB}.mt_wide SELECT number % 2, number, toDateTime('2024-01-01 00:00:00') + number, number / 3, "
    "toString(number % 50), if(number % 5 = 0, NULL, number % 60000), toString(number % 4), range(number % 3) "
    "FROM numbers(3000)",
    f"CREATE TABLE {DB}.mt_compact (id UInt64, s String, d Date) ENGINE = MergeTree ORDER BY id "
    "SETTINGS index_granularity = 128",
    f"SYSTEM STOP MERGES {DB}.mt_compact",
    f"INSERT INTO {DB}.mt_compact SELECT number, toString(number), toDate('2024-01-01') + number % 30 FROM numbers(1000)",
    f"INSERT INTO {DB}.mt_compact SELECT number, 'x', toDate('2024-02-01') FROM numbers(1000, 500)",
    f"CREATE TABLE {DB}.mt_detach (p UInt8, id UInt32, s String) ENGINE = MergeTree PARTITION BY p ORDER BY id "
    "SETTINGS min_bytes_for_wide_part = 0",
    f"INSERT INTO {DB}.mt_detach SELECT number % 2, number, toString(number) FROM numbers(2000)",
    f"ALTER TABLE {DB}.mt_detach DETACH PARTITION 1",
]

Q = " SETTINGS output_format_json_quote_64bit_integers = 0"


def rows(s, sql):
    out = s.query(sql + Q, "JSONEachRow").bytes().decode()
    return [json.loads(x) for x in out.splitlines() if x]


def guarded(s, sql, errors, key):
    """The rows, or None with the error recorded (an older embedded server may lack
    a system table: ``--truth-from-copy`` fills it in with a newer release)."""
    try:
        return rows(s, sql)
    except Exception as e:              # noqa: BLE001
        errors[key] = str(e).splitlines()[0][:300]
        return None


W = f"database = '{DB}'"
#: the system tables recorded, by key
QUERIES = {
    "system_tables": f"SELECT name, engine, total_rows, total_bytes, sorting_key, primary_key, partition_key, "
                     f"data_paths FROM system.tables WHERE {W} ORDER BY name",
    "system_columns": f"SELECT table, name, type, position, compression_codec, data_compressed_bytes, "
                      f"data_uncompressed_bytes, marks_bytes FROM system.columns WHERE {W} ORDER BY table, position",
    "system_parts": f"SELECT table, name, part_type, active, rows, marks, bytes_on_disk, data_compressed_bytes, "
                    f"data_uncompressed_bytes, marks_bytes, path FROM system.parts WHERE {W} ORDER BY table, name",
    "system_parts_columns": f"SELECT table, name AS part, column, type, column_data_compressed_bytes AS c, "
                            f"column_data_uncompressed_bytes AS u, column_marks_bytes AS m FROM system.parts_columns "
                            f"WHERE {W} AND active ORDER BY table, part, column_position",
    "system_detached_parts": f"SELECT table, name, bytes_on_disk, path FROM system.detached_parts WHERE {W} "
                             f"ORDER BY table, name",
    "system_projection_parts": f"SELECT table, parent_name, name, rows, bytes_on_disk, data_compressed_bytes, "
                               f"data_uncompressed_bytes FROM system.projection_parts WHERE {W} AND active "
                               f"ORDER BY table, parent_name",
}
LOG_TABLES = ("log_tiny", "log_log", "log_stripe", "log_codec")


def _relative(truth: dict, live: str) -> None:
    for key in ("system_parts", "system_detached_parts"):
        for p in truth.get(key) or []:
            if "path" in p:
                p["rel_path"] = os.path.relpath(p.pop("path"), live)
    for t in truth.get("system_tables") or []:
        if "data_paths" in t:
            t["rel_paths"] = [os.path.relpath(x, live) for x in t.pop("data_paths")]


def _close(s) -> None:
    close = getattr(s, "close", None)      # chdb 2.x sessions have no close()
    if close is not None:
        close()


def make() -> str:
    chdb_version = dist_version("chdb")
    tmp = tempfile.mkdtemp()
    live = os.path.join(tmp, "datadir")
    s = chdb.session.Session(live)
    version = rows(s, "SELECT version() AS v")[0]["v"]
    skipped = []
    for st in STATEMENTS:
        try:
            s.query(st)
        except Exception as e:          # noqa: BLE001 -- an older release lacks a feature: recorded
            skipped.append({"statement": st, "error": str(e).splitlines()[0][:300]})
    errors: dict = {}
    truth = {"chdb_version": chdb_version, "clickhouse_version": version, "skipped": skipped}
    for key, sql in QUERIES.items():
        truth[key] = guarded(s, sql, errors, key)
    truth["row_counts"] = {t: rows(s, f"SELECT count() AS c FROM {DB}.{t}")[0]["c"] for t in LOG_TABLES}
    truth["missing_system_tables"] = errors
    _close(s)
    out = os.path.join(HERE, f"chdb-{chdb_version}")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    shutil.copytree(live, os.path.join(out, "datadir"), symlinks=True,
                    ignore=lambda d, names: [n for n in names if d == live and n not in ("metadata", "data", "store")])
    meta = os.path.join(out, "datadir", "metadata")
    for n in os.listdir(meta):          # only the test database is part of the fixture
        if n != DB and n != DB + ".sql":
            p = os.path.join(meta, n)
            if os.path.islink(p) or os.path.isfile(p):
                os.remove(p)
            else:
                shutil.rmtree(p)
    _relative(truth, live)
    with open(os.path.join(out, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1, sort_keys=True)
    shutil.rmtree(tmp, ignore_errors=True)
    print(out, version, "skipped:", len(skipped), "missing:", sorted(errors))
    return out


def truth_from_copy(folder: str) -> None:
    """Fills the system tables an older release lacks by opening a copy of its data dir
    with the release installed here (merges stopped first thing); records which one."""
    path = os.path.join(folder, "truth.json")
    with open(path) as f:
        truth = json.load(f)
    tmp = tempfile.mkdtemp()
    live = os.path.join(tmp, "datadir")
    shutil.copytree(os.path.join(folder, "datadir"), live, symlinks=True)
    s = chdb.session.Session(live)
    s.query(f"SYSTEM STOP MERGES")
    filled = {}
    for key in list(truth.get("missing_system_tables") or {}):
        truth[key] = rows(s, QUERIES[key])
        filled[key] = truth["missing_system_tables"].pop(key)
    truth["truth_from_copy"] = {"chdb_version": dist_version("chdb"),
                                "clickhouse_version": rows(s, "SELECT version() AS v")[0]["v"],
                                "keys": filled}
    _close(s)
    _relative(truth, live)
    with open(path, "w") as f:
        json.dump(truth, f, indent=1, sort_keys=True)
    shutil.rmtree(tmp, ignore_errors=True)
    print(path, "filled:", sorted(filled))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--truth-from-copy":
        truth_from_copy(sys.argv[2])
    else:
        make()


if __name__ == "__main__":
    sys.exit(main())

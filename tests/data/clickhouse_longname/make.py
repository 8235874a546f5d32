#!/usr/bin/env python3
"""Builds this small fixture with chdb (ClickHouse embedded): one Wide part whose
stream names are longer than max_file_name_length, so the engine stores them
under the hex SipHash128 of the name (replace_long_file_name_to_hash=1).
Writes datadir/ and expected.json (system.parts_columns of the part) here.

    .venv/bin/pip install chdb && .venv/bin/python tests/data/clickhouse_longname/make.py
"""
import json
import os
import shutil
import tempfile

import chdb.session

HERE = os.path.dirname(os.path.abspath(__file__))
LONG = "c_" + "x" * 130          # a 132-character column name


def main():
    tmp = tempfile.mkdtemp()
    live = os.path.join(tmp, "datadir")
    s = chdb.session.Session(live)
    s.query("CREATE DATABASE ln ENGINE = Atomic")
    s.query(f"CREATE TABLE ln.t (id UInt32, `{LONG}` Array(String), `n.{LONG}` Array(UInt8)) "
            "ENGINE = MergeTree ORDER BY id SETTINGS min_bytes_for_wide_part = 0, index_granularity = 64")
    s.query(f"INSERT INTO ln.t SELECT number, [toString(number), 'a'], [number % 7] FROM numbers(500)")
    cols = s.query("SELECT column, substreams, filenames, column_data_compressed_bytes AS c, "
                   "column_data_uncompressed_bytes AS u, column_marks_bytes AS m FROM system.parts_columns "
                   "WHERE database = 'ln' AND table = 't' AND active ORDER BY column_position "
                   "SETTINGS output_format_json_quote_64bit_integers = 0", "JSONEachRow").bytes().decode()
    part = s.query("SELECT name, rows, marks, bytes_on_disk, data_compressed_bytes AS c, data_uncompressed_bytes AS u, "
                   "marks_bytes AS m FROM system.parts WHERE database = 'ln' AND table = 't' AND active "
                   "SETTINGS output_format_json_quote_64bit_integers = 0", "JSONEachRow").bytes().decode()
    s.close()
    out = os.path.join(HERE, "datadir")
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(live, out, symlinks=True)
    for junk in ("user_files", "preprocessed_configs", "status", "tmp", "access", "user_scripts",
                 "format_schemas", "flags", "uuid"):
        p = os.path.join(out, junk)
        if os.path.isdir(p):
            shutil.rmtree(p)
        elif os.path.exists(p):
            os.remove(p)
    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump({"long_column": LONG, "system_parts": [json.loads(x) for x in part.splitlines() if x],
                   "system_parts_columns": [json.loads(x) for x in cols.splitlines() if x]}, f, indent=1)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

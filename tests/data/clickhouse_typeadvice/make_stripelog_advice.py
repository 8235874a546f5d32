#!/usr/bin/env python3
"""Runs the advisor's suggestions for StripeLog columns through the engine itself (chdb) and
records what each saved (``truth_stripelog_advice.json``), which tests/test_typeadvice.py
compares with the advisor's ``saving_bytes``:

    .venv/bin/python -m dbxray.app.main advise tests/data/clickhouse_typeadvice/datadir --sample all \\
        --json -o /tmp/advice_ta.json
    /tmp/chdb-4.4.0/bin/python tests/data/clickhouse_typeadvice/make_stripelog_advice.py /tmp/advice_ta.json \\
        tests/data/clickhouse_typeadvice/datadir

A StripeLog takes no MODIFY COLUMN and reports no bytes per column (system.columns gives 0):
each suggestion is run as its DDL says, on a copy of the data dir (the table's CREATE with the
column's new type, ``INSERT ... SELECT ... SETTINGS max_threads = 1``), and the engine's figure is
the size of the new table's data.bin in its sizes.json (system.tables.total_bytes less
index.mrk), against the table's own data.bin: the table was written in one INSERT, so made anew
its other columns' bytes are the same and the difference is the column's saving.  A third
argument names the truth file (make_log_lowcardinality.py's table: ``truth_stripelog_lowcardinality.json``,
on the advice of that table only).
"""
import json
import os
import re
import shutil
import sys
import tempfile

import chdb.session

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make import close_session, restore_links, rows, write_truth  # noqa: E402


def data_bin(s, db, table):
    path = rows(s, f"SELECT data_paths[1] AS p FROM system.tables WHERE database = '{db}' AND name = '{table}'")[0]["p"]
    with open(os.path.join(path, "sizes.json")) as f:
        files = next(iter(json.load(f).values()))       # {"clickhouse": {"data%2Ebin": {"size": ...}}}
    return int(files["data%2Ebin"]["size"])


def main(advice_path, datadir, truth="truth_stripelog_advice.json"):
    with open(advice_path) as f:
        advice = json.load(f)
    tmp = tempfile.mkdtemp()
    live = os.path.join(tmp, "datadir")
    shutil.copytree(datadir, live, symlinks=True)
    restore_links(live)
    s = chdb.session.Session(live)
    s.query("SET allow_suspicious_low_cardinality_types = 1")      # make_composite.py's LowCardinality(UInt32)
    out = []
    for a in advice["columns"]:
        db, table = a["database"], a["table"]
        if not a["candidates"] or rows(s, f"SELECT engine FROM system.tables WHERE database = '{db}' AND "
                                          f"name = '{table}'")[0]["engine"] != "StripeLog":
            continue
        before = data_bin(s, db, table)
        for c in a["candidates"]:
            new_def = re.search(rf"with `{re.escape(a['column'])}` (.*) and INSERT", c["ddl"]).group(1)
            create = s.query(f"SHOW CREATE TABLE {db}.`{table}`", "TSVRaw").bytes().decode().strip()
            create = re.sub(r"^CREATE TABLE \S+", f"CREATE TABLE {db}.adv_tmp", create)
            create, n = re.subn(rf"(?m)^(\s*)`?{re.escape(a['column'])}`? [^\n]*?(,?)$",
                                rf"\1`{a['column']}` {new_def}\2", create, count=1)
            assert n == 1, create
            s.query(f"DROP TABLE IF EXISTS {db}.adv_tmp SYNC")
            s.query(create)
            s.query(f"INSERT INTO {db}.adv_tmp SELECT * FROM {db}.`{table}` SETTINGS max_threads = 1")
            typ = rows(s, f"SELECT type FROM system.columns WHERE database = '{db}' AND table = 'adv_tmp' "
                          f"AND name = '{a['column']}'")[0]["type"]
            after = data_bin(s, db, "adv_tmp")
            out.append({"table": table, "column": a["column"], "from_type": a["type"], "type": c["type"],
                        "codec": c["codec"], "suggestion": "type", "written_type": typ, "ddl": c["ddl"],
                        "data_bin_before": before, "data_bin_after": after, "real_saving": before - after})
            print(table, a["column"], c["type"], before, after, before - after, c["saving_bytes"], flush=True)
    s.query("DROP TABLE IF EXISTS ta.adv_tmp SYNC")
    write_truth(os.path.join(HERE, truth), s, out)
    close_session(s)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(*sys.argv[1:4])

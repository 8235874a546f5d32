#!/usr/bin/env python3
"""Runs the advisor's suggestions for Log and TinyLog columns through the engine itself
(chdb) and records the column sizes it gives (``truth_log_advice.json``), which
tests/test_typeadvice.py compares with the projections.  The tables are those of the
chdb 4.4.0 release data dir (tests/data/clickhouse_versions/chdb-4.4.0):

    .venv/bin/python -m dbxray.app.main advise tests/data/clickhouse_versions/chdb-4.4.0/datadir --sample all \
        --codecs --json -o /tmp/advice_log.json
    .venv/bin/python tests/data/clickhouse_typeadvice/make_log_advice.py /tmp/advice_log.json \
        tests/data/clickhouse_versions/chdb-4.4.0/datadir

Log engines take no MODIFY COLUMN (NOT_IMPLEMENTED), so each suggestion is run as its DDL
says: on a copy of the data dir, the table's CREATE with the column's new definition, then
``INSERT ... SELECT`` from the table with ``max_threads = 1`` (as the DDL says: the rows in
their order); ``system.columns.data_compressed_bytes`` (the column's
files' sizes in sizes.json) is the engine's figure.  The String, FixedString and Nullable
columns of make_log_strings.py's and make_log_nullable.py's tables likewise (a third argument
names the truth file):

    .venv/bin/python -m dbxray.app.main advise tests/data/clickhouse_typeadvice/datadir --sample all --codecs \
        --json -o /tmp/advice_ta.json
    .venv/bin/python tests/data/clickhouse_typeadvice/make_log_advice.py /tmp/advice_ta.json \
        tests/data/clickhouse_typeadvice/datadir truth_log_strings_nullable.json
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


def main(advice_path, datadir, truth="truth_log_advice.json"):
    with open(advice_path) as f:
        advice = json.load(f)
    tmp = tempfile.mkdtemp()
    live = os.path.join(tmp, "datadir")
    shutil.copytree(datadir, live, symlinks=True)
    restore_links(live)
    s = chdb.session.Session(live)
    out = []
    for a in advice["columns"]:
        if not a["candidates"] and not a.get("codec_candidates"):
            continue
        db, table = a["database"], a["table"]
        engine = rows(s, f"SELECT engine FROM system.tables WHERE database = '{db}' AND name = '{table}'")[0]["engine"]
        if engine not in ("Log", "TinyLog"):
            continue
        for c in a["candidates"] + [dict(c, suggestion="codec") for c in a.get("codec_candidates") or []]:
            new_def = re.search(rf"with `{re.escape(a['column'])}` (.*) and INSERT", c["ddl"]).group(1)
            create = s.query(f"SHOW CREATE TABLE {db}.`{table}`", "TSVRaw").bytes().decode().strip()
            create = re.sub(r"^CREATE TABLE \S+", f"CREATE TABLE {db}.adv_tmp", create)
            create, n = re.subn(rf"(?m)^(\s*)`?{re.escape(a['column'])}`? [^\n]*?(,?)$",
                                rf"\1`{a['column']}` {new_def}\2", create, count=1)
            assert n == 1, create
            s.query(f"DROP TABLE IF EXISTS {db}.adv_tmp SYNC")
            s.query(create)
            s.query(f"INSERT INTO {db}.adv_tmp SELECT * FROM {db}.`{table}` SETTINGS max_threads = 1")
            got = rows(s, f"SELECT type, data_compressed_bytes AS b FROM system.columns WHERE database = '{db}' "
                          f"AND table = 'adv_tmp' AND name = '{a['column']}'")[0]
            out.append({"table": table, "engine": engine, "column": a["column"], "from_type": a["type"],
                        "type": c["type"], "codec": c["codec"], "suggestion": c.get("suggestion", "type"),
                        "written_type": got["type"], "ddl": c["ddl"], "original_bytes": a["current_bytes"],
                        "real_bytes": int(got["b"])})
            print(table, a["column"], c["type"], c["codec"], got["b"], c["projected_bytes"], flush=True)
    write_truth(os.path.join(HERE, truth), s, out)
    close_session(s)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(*sys.argv[1:4])

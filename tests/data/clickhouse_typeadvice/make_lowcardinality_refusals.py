#!/usr/bin/env python3
"""Runs, through the engine itself (chdb), the LowCardinality types the advisor says it does
not suggest for numbers, DateTime64 and Decimal columns of few distinct values (its notes),
and records what the engine answers (``truth_lowcardinality_refusals.json``), which
tests/test_typeadvice.py compares with the notes:

    .venv/bin/python -m dbxray.app.main advise tests/data/clickhouse_typeadvice/datadir --sample all \\
        --json -o /tmp/advice_ta.json
    /tmp/chdb-4.4.0/bin/python tests/data/clickhouse_typeadvice/make_lowcardinality_refusals.py \\
        /tmp/advice_ta.json tests/data/clickhouse_typeadvice/datadir

On a copy of the data dir, per noted column: ``ALTER TABLE ... MODIFY COLUMN c LowCardinality(T)``
(T the column's type, inside its Nullable), then the same with
``allow_suspicious_low_cardinality_types = 1``; the error's code name, or "ok".
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
from make import close_session, restore_links, write_truth  # noqa: E402


def attempt(s, sql):
    try:
        s.query(sql)
        return "ok"
    except Exception as e:      # noqa: BLE001 -- the engine's answer is what is recorded
        m = re.search(r"\(([A-Z_]+)\)\s*$", str(e).splitlines()[0].strip()) or re.search(r"\(([A-Z_]+)\)", str(e))
        return m.group(1) if m else str(e).splitlines()[0][:200]


def main(advice_path, datadir):
    with open(advice_path) as f:
        advice = json.load(f)
    tmp = tempfile.mkdtemp()
    live = os.path.join(tmp, "datadir")
    shutil.copytree(datadir, live, symlinks=True)
    restore_links(live)
    s = chdb.session.Session(live)
    out = []
    for a in advice["columns"]:
        note = next((n for n in a["notes"] if re.search(r"LowCardinality\(.*\) (is not suggested|does not exist)", n)),
                    None)
        if note is None:
            continue
        db, table, col = a["database"], a["table"], a["column"]
        lc = f"LowCardinality({a['type']})"
        s.query(f"DROP TABLE IF EXISTS {db}.adv_tmp SYNC")
        s.query(f"CREATE TABLE {db}.adv_tmp AS {db}.`{table}`")
        s.query(f"INSERT INTO {db}.adv_tmp SELECT * FROM {db}.`{table}`")
        plain = attempt(s, f"ALTER TABLE {db}.adv_tmp MODIFY COLUMN `{col}` {lc} SETTINGS mutations_sync = 2")
        allowed = attempt(s, f"ALTER TABLE {db}.adv_tmp MODIFY COLUMN `{col}` {lc} SETTINGS mutations_sync = 2, "
                             f"allow_suspicious_low_cardinality_types = 1")
        out.append({"table": table, "column": col, "type": a["type"], "lowcardinality": lc, "note": note,
                    "engine": plain, "engine_with_allow_suspicious": allowed})
        print(table, col, lc, plain, allowed, flush=True)
    s.query("DROP TABLE IF EXISTS ta.adv_tmp SYNC")
    write_truth(os.path.join(HERE, "truth_lowcardinality_refusals.json"), s, out)
    close_session(s)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

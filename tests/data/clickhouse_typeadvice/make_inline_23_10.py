#!/usr/bin/env python3
"""Runs the advisor's String suggestions on ``datadir_inline_23_10`` (written by ClickHouse 23.10
itself, chdb 1.4.1: make_inline_strings.py ``--out datadir_inline_23_10 --rows 12000``; its Wide
parts write Strings with their sizes inline and compressed marks) through the same server and
records the column sizes it gives (``truth_inline_strings_23_10.json``):

    .venv/bin/python -m dbxray.app.main advise tests/data/clickhouse_typeadvice/datadir_inline_23_10 \\
        --sample all --codecs --json -o /tmp/advice_2310.json
    /tmp/chdb1x/bin/python tests/data/clickhouse_typeadvice/make_inline_23_10.py /tmp/advice_2310.json

23.10 has no system.parts or system.parts_columns (make.py reads those), so per suggestion, on a
copy of the data dir: ``CREATE TABLE ... AS``, ``INSERT ... SELECT`` (the same parts: one per
partition), the advisor's DDL (``ALTER TABLE ... MODIFY COLUMN`` with ``mutations_sync = 2``, and
its ``OPTIMIZE ... FINAL`` for a codec change alone), then the engine's figure is
``system.columns.data_compressed_bytes`` (MergeTreeData::getColumnSizes: the active parts' column
files), and beside it the sizes of the column's files in the part folders no other part covers.
Key columns (their DDL says to create the table anew) are left out.
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

DATADIR = os.path.join(HERE, "datadir_inline_23_10")
PART = re.compile(r"^([^_]+)_(\d+)_(\d+)_(\d+)(?:_(\d+))?$")      # partition ids here hold no "_"


def active_file_bytes(path, column):
    """The column's files' sizes in the part folders of ``path`` that no other part covers."""
    parts = []
    for n in os.listdir(path):
        m = PART.match(n)
        if m and os.path.isdir(os.path.join(path, n)):
            parts.append((n, m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5) or 0)))

    def covers(a, b):
        return a is not b and a[1] == b[1] and a[2] <= b[2] and a[3] >= b[3] and (a[4], a[5]) >= (b[4], b[5])
    live = [p for p in parts if not any(covers(q, p) for q in parts)]
    names = {f"{column}.bin", f"{column}.dict.bin", f"{column}.size.bin", f"{column}.null.bin"}
    return sum(os.path.getsize(os.path.join(path, p[0], f)) for p in live for f in os.listdir(os.path.join(path, p[0]))
               if f in names)


def main(advice_path, datadir=DATADIR, truth="truth_inline_strings_23_10.json"):
    with open(advice_path) as f:
        advice = json.load(f)
    tmp = tempfile.mkdtemp()
    live = os.path.join(tmp, "datadir")
    shutil.copytree(datadir, live, symlinks=True)
    restore_links(live)
    s = chdb.session.Session(live)
    out = []
    for a in advice["columns"]:
        db, table = a["database"], a["table"]
        for c in a["candidates"] + [dict(c, suggestion="codec") for c in a.get("codec_candidates") or []]:
            if c["ddl"].startswith("--"):
                continue            # a key column: the table made anew
            tmpt = f"adv_tmp{len(out)}"
            s.query(f"CREATE TABLE {db}.{tmpt} AS {db}.`{table}`")
            s.query(f"INSERT INTO {db}.{tmpt} SELECT * FROM {db}.`{table}`")
            path = rows(s, f"SELECT data_paths[1] AS p FROM system.tables WHERE database = '{db}' "
                           f"AND name = '{tmpt}'")[0]["p"]
            col = f"SELECT type, data_compressed_bytes AS b FROM system.columns WHERE database = '{db}' " \
                  f"AND table = '{tmpt}' AND name = '{a['column']}'"
            before = int(rows(s, col)[0]["b"])
            before_files = active_file_bytes(path, a["column"])
            try:
                for stmt in [x.strip() for x in c["ddl"].split(";") if x.strip()]:
                    stmt = stmt.replace(f"`{db}`.`{table}`", f"{db}.{tmpt}")
                    s.query(stmt + (" SETTINGS mutations_sync = 2" if stmt.startswith("ALTER") else ""))
            except Exception as e:      # noqa: BLE001 -- recorded: the advisor must not have offered it
                out.append({"table": table, "column": a["column"], "type": c["type"], "codec": c["codec"],
                            "suggestion": c.get("suggestion", "type"), "error": str(e).splitlines()[0][:300]})
                print(table, a["column"], c["type"], "refused:", str(e)[:160], flush=True)
                continue
            got = rows(s, col)[0]
            after_files = active_file_bytes(path, a["column"])
            out.append({"table": table, "column": a["column"], "from_type": a["type"], "type": c["type"],
                        "codec": c["codec"], "suggestion": c.get("suggestion", "type"), "written_type": got["type"],
                        "ddl": c["ddl"], "original_bytes": a["current_bytes"], "copy_bytes_before": before,
                        "copy_file_bytes_before": before_files, "real_bytes": int(got["b"]),
                        "real_file_bytes": after_files})
            print(table, a["column"], c["type"], c["codec"], before, before_files, got["b"], after_files,
                  c["projected_bytes"], flush=True)
    write_truth(os.path.join(HERE, truth), s, out)
    close_session(s)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(*sys.argv[1:2])

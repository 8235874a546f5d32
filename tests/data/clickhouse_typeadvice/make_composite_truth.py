#!/usr/bin/env python3
"""Runs the advisor's suggestions for the existing LowCardinality and Array columns of
make_composite.py's data dir through the engine itself (chdb 4.4.0) and records what it wrote
(``truth_composite.json``; tests/test_typeadvice_composite.py compares the projections with it):

    .venv/bin/python -m dbxray.app.main advise tests/data/clickhouse_typeadvice/datadir_composite --sample all \
        --codecs --json -o /tmp/advice_comp.json
    /tmp/chdb-venv/bin/python tests/data/clickhouse_typeadvice/make_composite_truth.py /tmp/advice_comp.json \
        tests/data/clickhouse_typeadvice/datadir_composite

On a copy of the data dir, for each suggestion:

* MergeTree (``comp_wide``, ``comp_compact``): the table copied (``CREATE TABLE ta.adv_tmp AS ...``,
  ``INSERT ... SELECT``: one part, Wide / Compact as the original), the column's bytes before the change
  recorded, then the advisor's own DDL run on the copy (``ALTER TABLE ... MODIFY COLUMN``,
  ``mutations_sync = 2``; a codec change with its ``OPTIMIZE TABLE ... FINAL``) and
  ``system.parts_columns.column_data_compressed_bytes`` summed over the active parts (a Compact part: the
  change of its ``system.parts.data_compressed_bytes`` is the saving, ``real_saving``);
* Log / TinyLog: the table made anew as the DDL says (its CREATE with the column's new definition,
  ``INSERT ... SELECT * ... SETTINGS max_threads = 1``) and ``system.columns.data_compressed_bytes``.
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
from make import close_session, rows, write_truth  # noqa: E402

DB = "ta"


def part_bytes(s, table, column):
    """(the column's bytes, parts, part types): a Wide part's column_data_compressed_bytes, plus a Compact
    part's data_compressed_bytes (the engine reports 0 for a column of a Compact part; the other columns'
    granules are written again the same, so a change of it changes the part by what it saved)."""
    r = rows(s, f"SELECT sum(column_data_compressed_bytes) AS b, count() AS parts, groupArray(part_type) AS t "
                f"FROM system.parts_columns WHERE database = '{DB}' AND table = '{table}' AND active "
                f"AND column = '{column}'")[0]
    c = rows(s, f"SELECT sum(data_compressed_bytes) AS b FROM system.parts WHERE database = '{DB}' AND table = "
                f"'{table}' AND active AND part_type = 'Compact'")[0]
    return int(r["b"]) + int(c["b"] or 0), int(r["parts"]), r["t"]


def main(advice_path, datadir, truth="truth_composite.json"):
    with open(advice_path) as f:
        advice = json.load(f)
    tmp = tempfile.mkdtemp()
    live = os.path.join(tmp, "datadir")
    shutil.copytree(datadir, live, symlinks=True)
    s = chdb.session.Session(live)
    s.query("SYSTEM STOP MERGES")
    s.query("SET allow_suspicious_low_cardinality_types = 1")      # the tables' LowCardinality(UInt32)
    out = []
    for a in advice["columns"]:
        if a["database"] != DB or not a["type"].startswith(("LowCardinality", "Array")):
            continue
        table, col = a["table"], a["column"]
        engine = rows(s, f"SELECT engine FROM system.tables WHERE database = '{DB}' AND name = '{table}'")[0]["engine"]
        if engine == "StripeLog":           # make_stripelog_advice.py (truth_stripelog_composite.json)
            continue
        for c in a["candidates"] + [dict(c, suggestion="codec") for c in a.get("codec_candidates") or []]:
            row = {"table": table, "engine": engine, "column": col, "from_type": a["type"], "type": c["type"],
                   "codec": c["codec"], "suggestion": c.get("suggestion", "type"), "ddl": c["ddl"],
                   "original_bytes": a["current_bytes"], "projected_bytes": c["projected_bytes"]}
            s.query(f"DROP TABLE IF EXISTS {DB}.adv_tmp SYNC")
            try:
                if engine in ("Log", "TinyLog"):
                    new_def = re.search(rf"with `{re.escape(col)}` (.*) and INSERT", c["ddl"]).group(1)
                    create = s.query(f"SHOW CREATE TABLE {DB}.`{table}`", "TSVRaw").bytes().decode().strip()
                    create = re.sub(r"^CREATE TABLE \S+", f"CREATE TABLE {DB}.adv_tmp", create)
                    create, n = re.subn(rf"(?m)^(\s*)`?{re.escape(col)}`? [^\n]*?(,?)$", rf"\1`{col}` {new_def}\2",
                                        create, count=1)
                    assert n == 1, create
                    s.query(create)
                    s.query(f"INSERT INTO {DB}.adv_tmp SELECT * FROM {DB}.`{table}` SETTINGS max_threads = 1")
                    got = rows(s, f"SELECT type, data_compressed_bytes AS b FROM system.columns WHERE database = "
                                  f"'{DB}' AND table = 'adv_tmp' AND name = '{col}'")[0]
                    row.update(written_type=got["type"], real_bytes=int(got["b"]))
                else:
                    s.query(f"CREATE TABLE {DB}.adv_tmp AS {DB}.`{table}`")
                    s.query(f"INSERT INTO {DB}.adv_tmp SELECT * FROM {DB}.`{table}`")
                    before, _, types_before = part_bytes(s, "adv_tmp", col)
                    for stmt in c["ddl"].replace(f"`{DB}`.`{table}`", f"`{DB}`.`adv_tmp`").split(";"):
                        if stmt.strip():
                            s.query(stmt + (" SETTINGS mutations_sync = 2" if "MODIFY COLUMN" in stmt else ""))
                    after, parts, types = part_bytes(s, "adv_tmp", col)
                    got = rows(s, f"SELECT type FROM system.columns WHERE database = '{DB}' AND table = 'adv_tmp' "
                                  f"AND name = '{col}'")[0]
                    row.update(written_type=got["type"], copy_bytes_before=before, real_bytes=after,
                               real_saving=before - after, part_types_before=types_before, part_types_after=types)
                    if "Compact" in types_before:       # what the column takes now: its bytes less the saving
                        row["real_bytes"] = a["current_bytes"] - (before - after)
            except Exception as e:      # noqa: BLE001 -- the engine refused the advice: recorded
                row["error"] = str(e)[:300]
            out.append(row)
            print(table, col, c["type"], c["codec"], row.get("real_bytes"), c["projected_bytes"],
                  row.get("error", ""), flush=True)
    write_truth(os.path.join(HERE, truth), s, out)
    close_session(s)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(*sys.argv[1:4])

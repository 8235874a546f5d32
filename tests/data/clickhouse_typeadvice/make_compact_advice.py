#!/usr/bin/env python3
"""Runs the advisor's suggestions for a table with Compact parts (the fixture's
``seed_unmerged``: 2 Wide and 8 Compact parts) through the engine itself (chdb), keeping
the parts as they are, and records what the change saved (``truth_compact_advice.json``),
which tests/test_typeadvice.py compares with the advisor's ``saving_bytes``:

    .venv/bin/python -m dbxray.app.main advise ../shared/fixtures/clickhouse/datadir --sample all --codecs \
        --json -o /tmp/advice.json
    .venv/bin/python tests/data/clickhouse_typeadvice/make_compact_advice.py /tmp/advice.json \
        ../shared/fixtures/clickhouse/datadir

On a copy of the data dir, per suggestion: ``CREATE TABLE fx.adv_tmp AS fx.seed_unmerged``,
every partition attached from the table (``ATTACH PARTITION ... FROM``: the
parts cloned as they are, Wide and Compact), then the advisor's ``ALTER TABLE ... MODIFY
COLUMN`` (a mutation: each part rewritten in its own format; merges kept off by
``max_bytes_to_merge_at_max_space_in_pool = 1``, as a stopped merge pool stops mutations).  The engine reports 0 bytes
per column in a Compact part, so the column's bytes are measured as the Wide parts'
``column_data_compressed_bytes`` plus the Compact parts' ``data_compressed_bytes`` (the
other columns' blocks of a Compact part are written again the same), before and after:
their difference is what the change saved.  A codec change on the same type is left out:
its DDL ends with ``OPTIMIZE ... FINAL``, which merges the parts into others.  The String
and FixedString columns of make_compact_strings.py's table likewise:

    .venv/bin/python -m dbxray.app.main advise tests/data/clickhouse_typeadvice/datadir --sample all --codecs \
        --json -o /tmp/advice_ta.json
    /tmp/chdb-4.4.0/bin/python tests/data/clickhouse_typeadvice/make_compact_advice.py /tmp/advice_ta.json \
        tests/data/clickhouse_typeadvice/datadir --db ta --table compact_str --truth truth_compact_strings.json
"""
import json
import os
import shutil
import sys
import tempfile

import chdb.session

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make import close_session, restore_links, rows, write_truth  # noqa: E402

DB = "fx"
TABLE = "seed_unmerged"


def measure(s, column):
    """(Wide parts' column bytes + Compact parts' data bytes, {part: type})."""
    wide = rows(s, f"SELECT sum(column_data_compressed_bytes) AS b FROM system.parts_columns WHERE database = '{DB}' "
                   f"AND table = 'adv_tmp' AND active AND column = '{column}' AND part_type = 'Wide'")[0]["b"]
    parts = rows(s, f"SELECT name, part_type, data_compressed_bytes AS b FROM system.parts WHERE database = '{DB}' "
                    f"AND table = 'adv_tmp' AND active")
    compact = sum(int(p["b"]) for p in parts if p["part_type"] == "Compact")
    return int(wide or 0) + compact, {p["name"]: p["part_type"] for p in parts}


def main(advice_path, datadir, truth="truth_compact_advice.json"):
    with open(advice_path) as f:
        advice = json.load(f)
    tmp = tempfile.mkdtemp()
    live = os.path.join(tmp, "datadir")
    shutil.copytree(datadir, live, symlinks=True)
    for dirpath, _, files in os.walk(live):
        os.chmod(dirpath, 0o755)
        for n in files:
            if not os.path.islink(os.path.join(dirpath, n)):
                os.chmod(os.path.join(dirpath, n), 0o644)
    restore_links(live)
    s = chdb.session.Session(live)
    s.query(f"SYSTEM STOP MERGES {DB}.`{TABLE}`")
    partitions = [r["p"] for r in rows(s, f"SELECT DISTINCT partition_id AS p FROM system.parts WHERE database = "
                                          f"'{DB}' AND table = '{TABLE}' AND active")]
    out = []
    for a in advice["columns"]:
        if a["table"] != TABLE or not a.get("compact_rows"):
            continue
        for c in a["candidates"] + [dict(c, suggestion="codec") for c in a.get("codec_candidates") or []]:
            if c["type"] == a["type"]:
                continue            # a codec change alone: OPTIMIZE ... FINAL merges the parts
            if c["ddl"].startswith("--"):
                continue            # a key column: the table made anew, its parts merged
            s.query(f"DROP TABLE IF EXISTS {DB}.adv_tmp SYNC")
            s.query(f"CREATE TABLE {DB}.adv_tmp AS {DB}.`{TABLE}`")
            s.query(f"SYSTEM STOP MERGES {DB}.adv_tmp")
            for p in partitions:
                s.query(f"ALTER TABLE {DB}.adv_tmp ATTACH PARTITION ID '{p}' FROM {DB}.`{TABLE}`")
            # no merge can pick the parts (a stopped merge pool would stop the mutation too)
            s.query(f"ALTER TABLE {DB}.adv_tmp MODIFY SETTING max_bytes_to_merge_at_max_space_in_pool = 1, "
                    f"max_bytes_to_merge_at_min_space_in_pool = 1")
            s.query(f"SYSTEM START MERGES {DB}.adv_tmp")
            before, types_before = measure(s, a["column"])
            ddl = c["ddl"].replace(f"`{a['database']}`.`{a['table']}`", f"{DB}.adv_tmp").rstrip(";")
            s.query(ddl + " SETTINGS mutations_sync = 2")
            after, types_after = measure(s, a["column"])
            typ = rows(s, f"SELECT type FROM system.columns WHERE database = '{DB}' AND table = 'adv_tmp' "
                          f"AND name = '{a['column']}'")[0]["type"]
            out.append({"table": TABLE, "column": a["column"], "from_type": a["type"], "type": c["type"],
                        "codec": c["codec"], "suggestion": c.get("suggestion", "type"), "written_type": typ,
                        "ddl": c["ddl"], "bytes_before": before, "bytes_after": after,
                        "real_saving": before - after,
                        "part_types_before": sorted(types_before.values()),
                        "part_types_after": sorted(types_after.values())})
            print(a["column"], c["type"], c["codec"], before, after, before - after, c["saving_bytes"], flush=True)
    s.query(f"DROP TABLE IF EXISTS {DB}.adv_tmp SYNC")
    write_truth(os.path.join(HERE, truth), s, out)
    close_session(s)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("advice")
    ap.add_argument("datadir")
    ap.add_argument("--db", default=DB)
    ap.add_argument("--table", default=TABLE)
    ap.add_argument("--truth", default="truth_compact_advice.json")
    args = ap.parse_args()
    DB, TABLE = args.db, args.table
    main(args.advice, args.datadir, args.truth)

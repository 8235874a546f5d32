#!/usr/bin/env python3
"""Writes the ClickHouse fixture's rows with the types the advisor suggests, through
the engine itself (chdb), and records the real column sizes (``truth.json``) that
tests/test_typeadvice.py compares the advisor's projections with.

    .venv/bin/python -m dbxray.app.main advise ../shared/fixtures/clickhouse/datadir --sample all --json \
        -o /tmp/advice.json
    /tmp/chdb-4.4.0/bin/python tests/data/clickhouse_typeadvice/make.py /tmp/advice.json \
        ../shared/fixtures/clickhouse/datadir

For each suggested type of each column, on a copy of the data dir: the table is copied (``CREATE TABLE fx.adv_tmp AS fx.<table>``, ``INSERT ... SELECT``: one
part per partition, as the fixture's merged seed tables), the column's size before
the change is recorded, then the advisor's own DDL is run on the copy
(``ALTER TABLE ... MODIFY COLUMN``, ``mutations_sync = 2``) and
``system.parts_columns.column_data_compressed_bytes`` summed over the active parts.
"""
import json
import os
import shutil
import sys
import tempfile
from importlib.metadata import version as dist_version

import chdb.session

HERE = os.path.dirname(os.path.abspath(__file__))
TABLES = ("seed_nq_mostly1", "seed_nq_u1000", "seed_nq_u1m", "codecs")
Q = " SETTINGS output_format_json_quote_64bit_integers = 0"


def rows(s, sql):
    out = s.query(sql + Q, "JSONEachRow").bytes().decode()
    return [json.loads(x) for x in out.splitlines() if x]


def column_bytes(s, table, column):
    r = rows(s, f"SELECT sum(column_data_compressed_bytes) AS b, count() AS parts FROM system.parts_columns "
                f"WHERE database = 'fx' AND table = '{table}' AND active AND column = '{column}'")
    return int(r[0]["b"]), int(r[0]["parts"])


def restore_links(live):
    """A copy that lost its symlinks keeps them as small text files holding the target
    (``metadata/fx``, ``data/fx/<table>``, the shared fixture's case): made links again."""
    for top in ("metadata", "data"):
        for dirpath, _, files in os.walk(os.path.join(live, top)):
            for n in files:
                p = os.path.join(dirpath, n)
                if os.path.getsize(p) < 4096 and not n.endswith(".sql"):
                    with open(p) as f:
                        target = f.read().strip()
                    if target.startswith(("../", "/")) and os.path.isdir(os.path.join(dirpath, target)):
                        os.remove(p)
                        os.symlink(target, p)


def main(advice_path, datadir):
    with open(advice_path) as f:
        advice = json.load(f)
    tmp = tempfile.mkdtemp()
    live = os.path.join(tmp, "datadir")
    shutil.copytree(datadir, live, symlinks=True)
    for dirpath, dirs, files in os.walk(live):          # the fixture is read-only
        os.chmod(dirpath, 0o755)
        for n in files:
            if not os.path.islink(os.path.join(dirpath, n)):
                os.chmod(os.path.join(dirpath, n), 0o644)
    restore_links(live)
    s = chdb.session.Session(live)

    out = []
    for a in advice["columns"]:
        if a["table"] not in TABLES or not a["candidates"]:
            continue
        for c in a["candidates"]:
            s.query("DROP TABLE IF EXISTS fx.adv_tmp SYNC")
            s.query(f"CREATE TABLE fx.adv_tmp AS fx.`{a['table']}`")

            s.query(f"INSERT INTO fx.adv_tmp SELECT * FROM fx.`{a['table']}`")
            before, parts = column_bytes(s, "adv_tmp", a["column"])
            ddl = c["ddl"].replace(f"`{a['database']}`.`{a['table']}`", "fx.adv_tmp").rstrip(";")
            if not ddl.startswith("ALTER"):
                print(a["table"], a["column"], c["type"], "no ALTER:", ddl[:80])
                continue
            try:
                s.query(ddl + " SETTINGS mutations_sync = 2")
            except Exception as e:       # noqa: BLE001 -- recorded: the advisor must not have offered it
                out.append({"table": a["table"], "column": a["column"], "type": c["type"], "ddl": c["ddl"],
                            "error": str(e).splitlines()[0][:300]})
                print(a["table"], a["column"], c["type"], "refused:", str(e)[:120])
                continue
            after, parts_after = column_bytes(s, "adv_tmp", a["column"])
            typ = rows(s, f"SELECT type FROM system.columns WHERE database = 'fx' AND table = 'adv_tmp' "
                          f"AND name = '{a['column']}'")[0]["type"]
            est = None
            try:        # the engine's own estimate (chdb 26.x), on the same values as the new type
                ratio = rows(s, f"SELECT estimateCompressionRatio('{c['codec']}', 1048576)"
                                f"(CAST(`{a['column']}` AS {c['type']})) AS r FROM fx.`{a['table']}`")[0]["r"]
                est = round(a["rows"] * {"UInt8": 1, "Int8": 1, "UInt16": 2, "Int16": 2, "UInt32": 4, "Int32": 4,
                                         "Float32": 4}.get(c["type"], 8) / ratio)
            except Exception as e:      # noqa: BLE001 -- a codec the estimator does not take
                est = f"error: {str(e).splitlines()[0][:120]}"
            out.append({"table": a["table"], "column": a["column"], "from_type": a["type"], "type": c["type"],
                        "estimateCompressionRatio_bytes": est,
                        "written_type": typ, "ddl": c["ddl"], "original_bytes": a["current_bytes"],
                        "copy_bytes_before": before, "real_bytes": after, "parts": parts_after})
            print(a["table"], a["column"], c["type"], before, after, c["projected_bytes"], est, flush=True)
    s.query("DROP TABLE IF EXISTS fx.adv_tmp SYNC")
    version = rows(s, "SELECT version() AS v")[0]["v"]
    close = getattr(s, "close", None)
    if close:
        close()
    shutil.rmtree(tmp, ignore_errors=True)
    with open(os.path.join(HERE, "truth.json"), "w") as f:
        json.dump({"chdb_version": dist_version("chdb"), "clickhouse_version": version, "rows": out}, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

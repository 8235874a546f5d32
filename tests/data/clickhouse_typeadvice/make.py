#!/usr/bin/env python3
"""Writes the ClickHouse fixture's rows with the types the advisor suggests, through
the engine itself (chdb), and records the real column sizes (``truth.json``) that
tests/test_typeadvice.py compares the advisor's projections with.

    .venv/bin/python -m dbxray.app.main advise ../shared/fixtures/clickhouse/datadir --sample all --json \
        -o /tmp/advice.json
    /tmp/chdb-4.4.0/bin/python tests/data/clickhouse_typeadvice/make.py /tmp/advice.json \
        ../shared/fixtures/clickhouse/datadir
    # the types the fixture has no case of (make_types.py builds that data dir):
    /tmp/chdb-4.4.0/bin/python tests/data/clickhouse_typeadvice/make.py /tmp/advice_ta.json \
        tests/data/clickhouse_typeadvice/datadir --db ta --tables types --truth truth_types.json

For each suggested type of each column, on a copy of the data dir: the table is copied (``CREATE TABLE fx.adv_tmp<k> AS fx.<table>``, ``INSERT ... SELECT``: one
part per partition, as the fixture's merged seed tables), the column's size before
the change is recorded, then the advisor's own DDL is run on the copy
(``ALTER TABLE ... MODIFY COLUMN``, ``mutations_sync = 2``) and
``system.parts_columns.column_data_compressed_bytes`` summed over the active parts.
A key column (the engine refuses MODIFY COLUMN on it; the advisor's DDL says to create
the table anew) is written as that says: the table's CREATE with the column's new
type, ``INSERT ... SELECT``, ``OPTIMIZE ... FINAL`` (one part per partition, as the
merged fixture tables), beside the same steps with the old type ("before").
"""
import argparse
import json
import os
import re
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


#: what a chdb session writes beside the tables' own files (system logs, tmp dirs)
SESSION_FILES = ("tmp", "user_files", "user_scripts", "format_schemas", "access", "flags", "preprocessed_configs",
                 "dictionaries_lib", "user_defined", "named_collections", "status", "uuid")


def close_session(s) -> None:
    """Close a chdb session (older releases have no close)."""
    close = getattr(s, "close", None)
    if close:
        close()


def remove_session_files(out: str) -> None:
    """Keep only the tables' own files in the data dir ``out``."""
    for junk in SESSION_FILES:
        p = os.path.join(out, junk)
        if os.path.isdir(p):
            shutil.rmtree(p, ignore_errors=True)
        elif os.path.exists(p):
            os.remove(p)


def write_truth(path: str, s, out: list, **extra) -> None:
    """The engine's answers ``out`` with the chdb and ClickHouse versions that gave them."""
    version = rows(s, "SELECT version() AS v")[0]["v"]
    with open(path, "w") as f:
        json.dump({"chdb_version": dist_version("chdb"), "clickhouse_version": version, **extra, "rows": out},
                  f, indent=1)


DB = "fx"
TMP = "adv_tmp"
WIDTHS = {"UInt8": 1, "Int8": 1, "UInt16": 2, "Int16": 2, "UInt32": 4, "Int32": 4, "Float32": 4, "DateTime": 4,
          "Date": 2, "Date32": 4}


def value_width(t):
    """Bytes a value of a fixed-width type takes (None for String-like types)."""
    if t in WIDTHS or t.startswith("DateTime("):
        return WIDTHS.get(t, 4)
    if t in ("UInt64", "Int64", "Float64") or t.startswith("DateTime64"):
        return 8
    m = re.fullmatch(r"Decimal\((\d+), \d+\)", t)
    if m:
        p = int(m.group(1))
        return 4 if p <= 9 else 8 if p <= 18 else 16 if p <= 38 else 32
    return None


def recreate(s, table, column, new_def, name=None):
    """The table's CREATE with ``column`` defined as ``new_def`` (None: as it is), filled
    with INSERT ... SELECT and merged, as ``name`` (default TMP): (column bytes, parts)."""
    name = name or TMP
    s.query(f"DROP TABLE IF EXISTS {DB}.{name} SYNC")
    create = s.query(f"SHOW CREATE TABLE {DB}.`{table}`", "TSVRaw").bytes().decode()
    create = re.sub(r"^CREATE TABLE \S+", f"CREATE TABLE {DB}.{name}", create.strip())
    if new_def is not None:
        create, n = re.subn(rf"(?m)^(\s*)`?{re.escape(column)}`? [^\n]*?(,?)$", rf"\1`{column}` {new_def}\2", create,
                            count=1)
        assert n == 1, create
    # Wide parts, as the table's: a narrower column can take a part under min_bytes_for_wide_part
    # (the seed tables' 96,245-row partition with digest LowCardinality(String) was written Compact)
    create += ", min_bytes_for_wide_part = 0" if "\nSETTINGS " in create else "\nSETTINGS min_bytes_for_wide_part = 0"
    s.query(create)
    s.query(f"INSERT INTO {DB}.{name} SELECT * FROM {DB}.`{table}`")
    s.query(f"OPTIMIZE TABLE {DB}.{name} FINAL")
    return column_bytes(s, name, column)


def column_bytes(s, table, column):
    r = rows(s, f"SELECT sum(column_data_compressed_bytes) AS b, count() AS parts FROM system.parts_columns "
                f"WHERE database = '{DB}' AND table = '{table}' AND active AND column = '{column}'")
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


def main(advice_path, datadir, tables=TABLES, truth="truth.json", columns=None):
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
        if a["table"] not in tables or (columns and a["column"] not in columns):
            continue
        for c in a["candidates"] + [dict(c, suggestion="codec") for c in a.get("codec_candidates") or []]:
            global TMP
            TMP = f"adv_tmp{len(out)}"      # a new name each time (chdb 2.x drops an Atomic table late)
            ddl = c["ddl"].replace(f"`{a['database']}`.`{a['table']}`", f"{DB}.{TMP}").rstrip(";")
            try:
                if ddl.startswith("ALTER"):
                    s.query(f"DROP TABLE IF EXISTS {DB}.{TMP} SYNC")
                    s.query(f"CREATE TABLE {DB}.{TMP} AS {DB}.`{a['table']}`")
                    s.query(f"INSERT INTO {DB}.{TMP} SELECT * FROM {DB}.`{a['table']}`")
                    before, parts = column_bytes(s, TMP, a["column"])
                    for stmt in [x.strip() for x in ddl.split(";") if x.strip()]:
                        stmt = stmt.replace(f"`{a['database']}`.`{a['table']}`", f"{DB}.{TMP}")
                        s.query(stmt + (" SETTINGS mutations_sync = 2" if stmt.startswith("ALTER") else ""))
                else:           # a key column: the table made anew, as the advice says
                    new_def = re.search(rf"with `{re.escape(a['column'])}` (.*) and INSERT", ddl).group(1)
                    before, parts = recreate(s, a["table"], a["column"], None, TMP + "_before")
                    recreate(s, a["table"], a["column"], new_def)
            except Exception as e:       # noqa: BLE001 -- recorded: the advisor must not have offered it
                out.append({"table": a["table"], "column": a["column"], "type": c["type"], "ddl": c["ddl"],
                            "suggestion": c.get("suggestion", "type"), "codec": c["codec"],
                            "error": str(e).splitlines()[0][:300]})
                print(a["table"], a["column"], c["type"], "refused:", str(e)[:120])
                continue
            after, parts_after = column_bytes(s, TMP, a["column"])
            typ = rows(s, f"SELECT type FROM system.columns WHERE database = '{DB}' AND table = '{TMP}' "
                          f"AND name = '{a['column']}'")[0]["type"]
            est = None
            width = value_width(c["type"])
            try:        # the engine's own estimate (chdb 26.x), on the same values as the new type
                if width is None:
                    raise ValueError("not a fixed-width type: no uncompressed size to scale the ratio by")
                ratio = rows(s, f"SELECT estimateCompressionRatio('{c['codec']}', 1048576)"
                                f"(CAST(`{a['column']}` AS {c['type']})) AS r FROM {DB}.`{a['table']}`")[0]["r"]
                est = round(a["rows"] * width / ratio)
            except Exception as e:      # noqa: BLE001 -- a codec the estimator does not take
                est = f"error: {str(e).splitlines()[0][:120]}"
            out.append({"table": a["table"], "column": a["column"], "from_type": a["type"], "type": c["type"],
                        "suggestion": c.get("suggestion", "type"), "codec": c["codec"],
                        "estimateCompressionRatio_bytes": est,
                        "written_type": typ, "ddl": c["ddl"], "original_bytes": a["current_bytes"],
                        "copy_bytes_before": before, "real_bytes": after, "parts": parts_after})
            print(a["table"], a["column"], c["type"], c["codec"], before, after, c["projected_bytes"], est, flush=True)
            for name in (TMP, TMP + "_before"):
                s.query(f"DROP TABLE IF EXISTS {DB}.{name}")
    write_truth(os.path.join(HERE, truth), s, out)
    close_session(s)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("advice")
    ap.add_argument("datadir")
    ap.add_argument("--db", default="fx")
    ap.add_argument("--tables", default=",".join(TABLES))
    ap.add_argument("--truth", default="truth.json")
    ap.add_argument("--columns", default="", help="only these columns (comma separated)")
    args = ap.parse_args()
    DB = args.db
    main(args.advice, args.datadir, tuple(args.tables.split(",")), args.truth,
         tuple(c for c in args.columns.split(",") if c))

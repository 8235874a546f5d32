#!/usr/bin/env python3
"""Which parts the engine writes Compact when a column gets the advisor's narrower type
(``truth_compact.json``, read by tests/test_typeadvice.py): each seed table made anew
with the suggested type as its DDL says (CREATE with the new type, INSERT ... SELECT,
OPTIMIZE ... FINAL) but with the table's own ``min_bytes_for_wide_part`` (make.py
forces Wide parts to compare column bytes), and ``system.parts.part_type`` recorded.

    /tmp/chdb-4.4.0/bin/python tests/data/clickhouse_typeadvice/make_compact.py \\
        ../shared/fixtures/clickhouse/datadir
"""
import json
import os
import re
import shutil
import sys
import tempfile

import chdb.session

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make  # noqa: E402

CASES = (("seed_nq_u1000", "digest", "LowCardinality(String)"), ("seed_nq_u1000", "db_server", "LowCardinality(String)"),
         ("seed_nq_u1000", "nq_UInt64", "UInt16"), ("seed_nq_u1000", "digest", "String"))


def part_types(s, table, column, new_type):
    s.query(f"DROP TABLE IF EXISTS {make.DB}.adv_tmp SYNC")
    create = s.query(f"SHOW CREATE TABLE {make.DB}.`{table}`", "TSVRaw").bytes().decode()
    create = re.sub(r"^CREATE TABLE \S+", f"CREATE TABLE {make.DB}.adv_tmp", create.strip())
    create, n = re.subn(rf"(?m)^(\s*)`?{re.escape(column)}`? [^\n]*?(,?)$", rf"\1`{column}` {new_type}\2", create,
                        count=1)
    assert n == 1
    s.query(create)
    s.query(f"INSERT INTO {make.DB}.adv_tmp SELECT * FROM {make.DB}.`{table}`")
    s.query(f"OPTIMIZE TABLE {make.DB}.adv_tmp FINAL")
    return make.rows(s, f"SELECT partition_id, part_type, rows, data_uncompressed_bytes FROM system.parts "
                        f"WHERE database = '{make.DB}' AND table = 'adv_tmp' AND active ORDER BY partition_id")


def main(datadir):
    tmp = tempfile.mkdtemp()
    live = os.path.join(tmp, "datadir")
    shutil.copytree(datadir, live, symlinks=True)
    for dp, _, fs in os.walk(live):
        os.chmod(dp, 0o755)
        for f in fs:
            if not os.path.islink(os.path.join(dp, f)):
                os.chmod(os.path.join(dp, f), 0o644)
    make.restore_links(live)
    s = chdb.session.Session(live)
    out = []
    for table, column, new_type in CASES:
        out.append({"table": table, "column": column, "type": new_type,
                    "parts": part_types(s, table, column, new_type)})
        print(out[-1])
    shutil.rmtree(tmp, ignore_errors=True)
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "truth_compact.json"), "w") as f:
        json.dump({"chdb_version": chdb.__version__, "cases": out}, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])

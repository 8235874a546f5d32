#!/usr/bin/env python3
"""The columns information_schema gives for every table of the MariaDB fixture that has a
binary ``.frm`` (the truth tests/test_server_frm_columns.py compares parsers/server/frmfields.py
with; the fixture's manifest has no COLUMNS): a private MariaDB 10.11 (tests/mariadb_server.py:
own datadir and socket, --skip-networking) started on a copy of ``../shared/fixtures/mariadb/datadir``
with the fixture's plugins and keys, ``information_schema.COLUMNS`` and ``TABLES.CREATE_OPTIONS``
read, the copy removed.  Run from the repo root:

    python3 tests/data/mariadb_frm_columns/make.py [FIXTURES]   # FIXTURES: ../shared/fixtures
"""
from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from mariadb_server import PrivateServer, missing  # noqa: E402

#: each column a row of these (``fields`` in truth.json), in ORDINAL_POSITION order
FIELDS = ("COLUMN_NAME", "DATA_TYPE", "COLUMN_TYPE", "IS_NULLABLE", "CHARACTER_MAXIMUM_LENGTH",
          "CHARACTER_OCTET_LENGTH", "NUMERIC_PRECISION", "NUMERIC_SCALE", "DATETIME_PRECISION", "COLLATION_NAME",
          "EXTRA")
COLUMNS = ("TABLE_SCHEMA", "TABLE_NAME") + FIELDS
INTS = {"CHARACTER_MAXIMUM_LENGTH", "CHARACTER_OCTET_LENGTH", "NUMERIC_PRECISION",
        "NUMERIC_SCALE", "DATETIME_PRECISION"}


def main() -> int:
    why = missing(("ha_rocksdb.so", "ha_archive.so", "file_key_management.so"))
    if why:
        print(f"cannot make the truth: {why}", file=sys.stderr)
        return 1
    fixtures = Path(sys.argv[1] if len(sys.argv) > 1 else HERE.parents[2].parent / "shared" / "fixtures")
    src = fixtures / "mariadb"
    frms = sorted(p for p in (src / "datadir").rglob("*.frm") if p.read_bytes()[:2] == b"\xfe\x01")
    tables = sorted({(p.parent.name, p.stem.split("#P#")[0]) for p in frms})
    base = Path(tempfile.mkdtemp(prefix="frmcols"))
    try:
        shutil.copytree(src / "datadir", base / "datadir", symlinks=True)
        shutil.copyfile(src / "keys.txt", base / "keys.txt")
        opts = [f"--plugin-load-add={p}" for p in ("provider_lz4", "provider_snappy", "provider_lzma",
                                                   "provider_bzip2", "provider_lzo", "file_key_management",
                                                   "ha_rocksdb", "ha_archive")]
        opts += [f"--file-key-management-filename={base / 'keys.txt'}",
                 "--file-key-management-encryption-algorithm=AES_CBC", "--innodb-encrypt-log=ON",
                 "--innodb-log-file-size=4M", "--innodb-data-file-path=ibdata1:1M:autoextend",
                 "--innodb-undo-tablespaces=0", "--character-set-server=utf8mb4",
                 "--collation-server=utf8mb4_general_ci"]
        with PrivateServer(base, opts) as srv:
            version = srv.sql("SELECT VERSION();").strip()
            where = " OR ".join(f"(TABLE_SCHEMA = '{d}' AND TABLE_NAME = '{t}')" for d, t in tables)
            out = srv.sql(f"SELECT {', '.join(COLUMNS)} FROM information_schema.COLUMNS WHERE {where} "
                          "ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION;")
            opts_out = srv.sql("SELECT TABLE_SCHEMA, TABLE_NAME, ENGINE, ROW_FORMAT, CREATE_OPTIONS FROM "
                               f"information_schema.TABLES WHERE {where};")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    truth: dict = {}
    for line in out.splitlines():
        vals = line.split("\t")
        row = {k: (None if v == "NULL" else int(v) if k in INTS else v) for k, v in zip(COLUMNS, vals)}
        truth.setdefault(f"{row.pop('TABLE_SCHEMA')}.{row.pop('TABLE_NAME')}", {"columns": []})["columns"].append(
            [row[k] for k in FIELDS])
    for line in opts_out.splitlines():
        db, t, engine, fmt, copts = (None if v == "NULL" else v for v in line.split("\t"))
        truth.setdefault(f"{db}.{t}", {"columns": []}).update(engine=engine, row_format=fmt, create_options=copts)
    missing_tables = [f"{d}.{t}" for d, t in tables if f"{d}.{t}" not in truth]
    doc = {"server_version": version, "source": "information_schema.COLUMNS of a private server on a copy of "
           "../shared/fixtures/mariadb/datadir (tests/data/mariadb_frm_columns/make.py)",
           "frm_files": [str(p.relative_to(src / "datadir")) for p in frms], "not_in_information_schema": missing_tables,
           "fields": FIELDS, "tables": truth}
    text = json.dumps(doc, indent=1, sort_keys=True)
    text = re.sub(r"\[\n\s+([^\[\]{}]*?)\n\s+\]", lambda m: "[" + re.sub(r"\n\s+", " ", m.group(1)) + "]", text)
    (HERE / "truth.json").write_text(text + "\n")
    print(f"{len(truth)} tables, {sum(len(v['columns']) for v in truth.values())} columns; "
          f"not in information_schema: {missing_tables}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

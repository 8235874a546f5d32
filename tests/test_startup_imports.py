"""What a command imports to start (issue 22: every command pays for its imports before it
reads a byte): a scan of plain MariaDB tablespaces must not import the readers that only
other files need (the other engines' scanners, the MySQL dictionary readers, LOBs, the
doublewrite file reader, the page codecs, the checksum tables, the crypt readers), and a
scan of files that need them still does.  Each case is a fresh interpreter, as a user's
command is."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

#: modules a scan of plain (not compressed, not encrypted) MariaDB .ibd files has no use for
NOT_FOR_PLAIN_MARIADB = (
    "dbxray.parsers.archive.scan", "dbxray.parsers.archive.stream", "dbxray.parsers.archive.header",
    "dbxray.parsers.csv.scan", "dbxray.parsers.csv.data", "dbxray.parsers.server.scan",
    "dbxray.parsers.server.frm", "dbxray.parsers.server.par", "dbxray.parsers.rocksdb.footer",
    "dbxray.parsers.innodb.sdi", "dbxray.parsers.innodb.sysdict", "dbxray.parsers.innodb.trxsys",
    "dbxray.parsers.innodb.ddtables", "dbxray.parsers.innodb.redo", "dbxray.parsers.innodb.lob",
    "dbxray.parsers.innodb.dblwr", "dbxray.parsers.innodb.pagecomp", "dbxray.parsers.innodb.checksum",
    "dbxray.parsers.innodb.encryption", "dbxray.parsers.innodb.zip",
    "multiprocessing", "traceback",
    # the other subcommands' modules, and shutil (argparse's help width: app/cli.py _Formatter)
    "dbxray.app.cli_whatif", "dbxray.app.cli_export", "dbxray.app.cli_advise", "dbxray.app.cli_compare",
    "shutil",
    # numpy 2's np.unique imports it on first use (10-13 ms): the parsers use parsers/arrays.py
    "numpy.ma",
)

_PROBE = """
import json, os, sys
from dbxray.app.cli import main
rc = main(sys.argv[1:] + ["--json", "-o", os.devnull, "--no-progress"])
print(json.dumps({"rc": rc, "modules": sorted(sys.modules)}))
"""


def _modules_after(*argv: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["rc"] == 0, out.stderr
    return set(got["modules"])


@pytest.fixture(scope="module")
def fx16(fixtures_root):
    return fixtures_root / "innodb" / "16k" / "fx"


def test_plain_mariadb_scan_imports_only_what_it_reads(fx16):
    mods = _modules_after("scan", str(fx16 / "t_dynamic.ibd"), "-j", "1")
    assert "dbxray.parsers.innodb.pagemap" in mods          # the probe did scan InnoDB
    assert not mods & set(NOT_FOR_PLAIN_MARIADB), sorted(mods & set(NOT_FOR_PLAIN_MARIADB))


@pytest.mark.parametrize("name, needed", [
    ("t_pc_zlib.ibd", "dbxray.parsers.innodb.pagecomp"),       # page-compressed: the codecs
    ("t_pc_lz4.ibd", "dbxray.parsers.codecs.general"),         # lz4 pages: the pure codecs
])
def test_files_that_need_a_reader_import_it(fx16, name, needed):
    assert needed in _modules_after("scan", str(fx16 / name), "-j", "1")


def test_full_scan_imports_the_checksums(fx16):
    assert "dbxray.parsers.innodb.checksum" in _modules_after("scan", str(fx16 / "t_dynamic.ibd"), "--full",
                                                              "-j", "1")


def test_mysql8_and_other_engines_import_their_readers(fixtures_root):
    """MySQL 8 files need the SDI and dictionary readers; the MariaDB data dir's other engines
    (ARCHIVE, CSV, .frm) and its encrypted tables theirs (one process: ``-j 1``, so that
    what the readers import is in this interpreter, not only in forked workers)."""
    mods = _modules_after("scan", str(fixtures_root / "innodb-mysql" / "mysql-std_data"), "-j", "1")
    assert {"dbxray.parsers.innodb.sdi", "dbxray.parsers.innodb.ddtables"} <= mods
    mods = _modules_after("scan", str(fixtures_root / "mariadb"), "-j", "1")
    assert {"dbxray.parsers.archive.scan", "dbxray.parsers.csv.scan", "dbxray.parsers.server.frm",
            "dbxray.parsers.innodb.encryption", "dbxray.parsers.innodb.sysdict"} <= mods


@pytest.mark.parametrize("values", [[], [7], [3, 1, 3, 2, 1], [[5, 5], [0, 2]], list(range(100, 0, -3)) * 3])
def test_distinct_is_np_unique_of_ints(values):
    import numpy as np

    from dbxray.parsers.arrays import distinct
    for dtype in (np.int64, np.uint32, np.int8):
        a = np.array(values, dtype=dtype)
        got, want = distinct(a), np.unique(a)
        assert got.dtype == want.dtype and got.tolist() == want.tolist()

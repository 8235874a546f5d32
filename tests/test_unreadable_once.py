"""An unreadable tablespace (mode 000, scanned as an unprivileged user): listed with
its real size, its error given once (not again as a warning of the InnoDB name
reader), the readable file beside it scanned in full."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from fixtures_util import MISSING, fixtures_dir


def test_unreadable_file_error_once():
    import tempfile
    if fixtures_dir() is None:
        pytest.fail(MISSING, pytrace=False)
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.fail("needs root and setpriv to scan as an unprivileged user (CI runs as root)", pytrace=False)
    from pathlib import Path
    tmp_path = Path(tempfile.mkdtemp(prefix="dbxray-unreadable-", dir="/tmp"))   # pytest's tmp is root-only
    try:
        _check(tmp_path)
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)


def _check(tmp_path):
    db = tmp_path / "dd" / "db"
    db.mkdir(parents=True)
    for n in ("t_zip4.ibd", "t_zip8.ibd"):
        shutil.copyfile(fixtures_dir() / "innodb" / "16k" / "fx" / n, db / n)
    os.chmod(db / "t_zip8.ibd", 0)
    for p in (tmp_path, tmp_path / "dd", db):
        os.chmod(p, 0o755)
    os.chmod(db / "t_zip4.ibd", 0o644)
    r = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                        sys.executable, "-m", "dbxray.app.main", "scan", str(tmp_path / "dd"), "--json"],
                       capture_output=True, text=True, timeout=300, cwd="/")
    assert r.stdout, r.stderr[-2000:]
    data = json.loads(r.stdout)
    files = {f["path"]: f for f in data["files"]}
    bad = files["db/t_zip8.ibd"]
    assert bad["apparent_bytes"] == os.stat(db / "t_zip8.ibd").st_size
    said = bad["errors"] + bad.get("warnings", []) + data.get("errors", []) + data.get("warnings", [])
    assert sum("Permission denied" in m for m in said) == 1, said
    assert files["db/t_zip4.ibd"]["innodb"]["indexes"] and not files["db/t_zip4.ibd"]["errors"]

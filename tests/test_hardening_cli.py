"""Never an exception escaping to the user (issue 8, reliability): the
``dbxray scan`` command over corrupt, truncated, empty, unreadable-looking
and looping inputs exits 0 (or 1 when the path cannot be read), prints no
traceback, and its JSON names the damaged files."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import hardening_util as hu


def _corrupt_tree(root, dst) -> None:
    """One damaged copy of a file of each engine, side by side."""
    ts = hu.find_targets(root)
    ibd = next(t for t in ts if t.abspath.endswith(".ibd") and os.path.getsize(t.abspath) > 65536)
    toku = next(t for t in ts if t.abspath.endswith(".tokudb") and os.path.getsize(t.abspath) > 65536)
    ch = next(t for t in ts if t.engine == "clickhouse" and t.abspath.endswith(".bin") and t.context
              and os.path.getsize(t.abspath) > 4096)
    os.makedirs(dst)
    hu.sparse_copyfile(ibd.abspath, os.path.join(dst, "cut.ibd"))
    os.truncate(os.path.join(dst, "cut.ibd"), os.path.getsize(ibd.abspath) // 2 + 100)
    hu.sparse_copyfile(toku.abspath, os.path.join(dst, "flipped.tokudb"))
    hu.Mutation("set", 16, data=b"\xff\xff\xff\x7f").apply(os.path.join(dst, "flipped.tokudb"))
    part = os.path.join(dst, "ch", os.path.basename(ch.context))
    hu.sparse_copytree(ch.context, part)
    hu.Mutation("set", 21, data=b"\x00\x00\x00\x80").apply(os.path.join(part, os.path.basename(ch.abspath)))
    open(os.path.join(dst, "empty.ibd"), "wb").close()
    os.symlink("loop.ibd", os.path.join(dst, "loop.ibd"))


def _run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dbxray.app", *args], capture_output=True, text=True,
                          timeout=300, cwd=str(hu.REPO), env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})


def test_cli_scan_of_damaged_files_reports_them(sparse_fixtures, tmp_path):
    d = str(tmp_path / "damaged")
    _corrupt_tree(sparse_fixtures, d)
    p = _run("scan", d, "--json")
    assert "Traceback" not in p.stderr, p.stderr[-3000:]
    assert p.returncode == 0, (p.returncode, p.stderr[-2000:])
    out = json.loads(p.stdout)
    by = {f["path"]: f for f in out["files"]}
    assert any("cut.ibd" in e for e in by["cut.ibd"]["errors"])
    assert any("flipped.tokudb" in e for e in by["flipped.tokudb"]["errors"])
    assert not [e for e in out.get("errors", []) if "parser failed" in e], out.get("errors")
    assert any("loop.ibd" in e for e in out.get("errors", []))
    p = _run("scan", d)                                   # the human table too
    assert p.returncode == 0 and "Traceback" not in p.stderr


@pytest.mark.parametrize("what", ["missing", "loop"])
def test_cli_scan_of_unreadable_paths(tmp_path, what):
    path = tmp_path / "x.ibd"
    if what == "loop":
        os.symlink("x.ibd", path)
    p = _run("scan", str(path), "--json")
    assert "Traceback" not in p.stderr, p.stderr[-3000:]
    assert p.returncode in (0, 1)
    assert "x.ibd" in p.stderr + p.stdout

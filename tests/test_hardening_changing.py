"""Files that change during the scan (issue 8, reliability): a file growing,
shrinking or emptied while dbxray reads it gives a warning naming it, never a
crash.

Two moments are tested:

* between the on-disk facts (size, holes) and the engine parser: the engine
  reads a file whose size no longer matches ``apparent_bytes``;
* while the engine holds the file mapped: truncating a mapped file makes the
  next access to a page past the new end raise SIGBUS, which would kill the
  process; parsers/mapguard.py turns it into zeros and a warning.  That runs
  in a subprocess per engine (a failure kills only the child).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import types

import pytest

import hardening_util as hu
import dbxray.parsers.scan as scan_mod
from dbxray.parsers import fileio
from dbxray.parsers.scan import scan

CHANGE_WARNING_BUG = (
    "no warning when a file changes after its facts were read: parsers/scan.py checks "
    "ReadOnlyFile.changed() only inside read_facts(), right after opening; it should re-stat every "
    "file after the engine parsers ran (compare size and mtime with entry.apparent_bytes / the stat "
    "of read_facts) and add '<path>: size changed during the scan (a -> b bytes)' to entry.warnings")

def _targets(root):
    ts = hu.find_targets(root)
    ibd = next(t for t in ts if t.engine == "innodb" and t.abspath.endswith(".ibd")
               and 100_000 < os.path.getsize(t.abspath) < 4_000_000)
    toku = next(t for t in ts if t.engine == "tokudb" and t.abspath.endswith(".tokudb")
                and os.path.getsize(t.abspath) > 100_000)
    ch = max((t for t in ts if t.engine == "clickhouse" and t.abspath.endswith(".bin")),
             key=lambda t: os.path.getsize(t.abspath))
    return {"innodb": ibd, "tokudb": toku, "clickhouse": ch}


def _copy(t: hu.Target, dest) -> tuple[str, str]:
    """(path to scan, path of the file to change) in a fresh copy."""
    if t.context:
        scan_path = os.path.join(dest, os.path.basename(t.context))
        hu.sparse_copytree(t.context, scan_path)
        return scan_path, os.path.join(scan_path, os.path.basename(t.abspath))
    p = os.path.join(dest, os.path.basename(t.abspath))
    hu.sparse_copyfile(t.abspath, p)
    return p, p


def _change(path: str, how: str) -> None:
    size = os.path.getsize(path)
    if how == "grow":
        with open(path, "ab") as f:
            f.write(os.urandom(1 << 20))
    elif how == "shrink":
        os.truncate(path, size // 2 + 7)
    else:
        os.truncate(path, 0)


@pytest.fixture(scope="module")
def targets(sparse_fixtures):
    return _targets(sparse_fixtures)


def _scan_with_change(monkeypatch, scan_path: str, file_path: str, how: str):
    """Scan, changing the file after read_facts and before the engine parser."""
    real_load = scan_mod.load_engine

    def load(engine):
        mod = real_load(engine)
        if mod is None:
            return None

        def analyze(ds, files, ctx):
            _change(file_path, how)
            return mod.analyze(ds, files, ctx)
        return types.SimpleNamespace(analyze=analyze)
    monkeypatch.setattr(scan_mod, "load_engine", load)
    return scan(scan_path)


@pytest.mark.parametrize("how", ["grow", "shrink", "empty"])
@pytest.mark.parametrize("engine", ["innodb", "tokudb", "clickhouse"])
def test_change_before_the_engine_reads_is_no_crash(engine, how, targets, tmp_path, monkeypatch):
    scan_path, file_path = _copy(targets[engine], tmp_path)
    ds = _scan_with_change(monkeypatch, scan_path, file_path, how)
    assert not [e for e in ds.errors if "parser failed" in e], ds.errors
    fails, _ = hu.check_dataset(ds, file_path)
    assert not fails, fails



@pytest.mark.parametrize("how", ["grow", "shrink"])
@pytest.mark.parametrize("engine", ["innodb", "tokudb", "clickhouse"])
def test_change_before_the_engine_reads_is_warned(engine, how, targets, tmp_path, monkeypatch):
    scan_path, file_path = _copy(targets[engine], tmp_path)
    ds = _scan_with_change(monkeypatch, scan_path, file_path, how)
    name = os.path.basename(file_path)
    entry = next(f for f in ds.files if f.path.endswith(name))
    said = [m for m in entry.warnings + entry.errors if name in m and ("chang" in m or "size" in m)]
    assert said, (entry.warnings, entry.errors)


@pytest.mark.parametrize("how", ["grow", "shrink"])
def test_change_while_facts_are_read_is_warned(how, targets, tmp_path, monkeypatch):
    """The shared layer's own check: size differs between open and the end of read_facts."""
    scan_path, file_path = _copy(targets["tokudb"], tmp_path)
    real_holes = fileio.ReadOnlyFile.holes

    def holes(self):
        out = real_holes(self)
        if self.path == file_path:
            _change(file_path, how)
        return out
    monkeypatch.setattr(fileio.ReadOnlyFile, "holes", holes)
    ds = scan(scan_path)
    w = ds.files[0].warnings
    assert any("size changed during the scan" in m and os.path.basename(file_path) in m for m in w), w
    assert not [e for e in ds.errors if "parser failed" in e]


_MAPPED_TRUNCATE = textwrap.dedent("""
    import json, os, sys, traceback
    sys.path.insert(0, sys.argv[4])
    from dbxray.parsers import fileio
    from dbxray.parsers.scan import scan
    path, target, how = sys.argv[1], sys.argv[2], sys.argv[3]
    orig = fileio.ReadOnlyFile.mmap
    state = {"done": False}
    def mm(self):
        m = orig(self)
        if m is not None and not state["done"] and self.path == target:
            if any(fr.name == "analyze" or "payload" in fr.name for fr in traceback.extract_stack()):
                state["done"] = True        # another process truncates the file now
                os.truncate(self.path, 0 if how == "empty" else self.size // 3)
        return m
    fileio.ReadOnlyFile.mmap = mm
    ds = scan(path)
    print(json.dumps({"truncated": state["done"], "errors": ds.errors,
                      "file_errors": [e for f in ds.files for e in f.errors],
                      "warnings": [w for f in ds.files for w in f.warnings]}))
""")


def mapped_truncation(scan_path: str, file_path: str, how: str) -> tuple[int, dict | None]:
    """(exit code, result) of a scan whose file is truncated right after the engine maps it."""
    p = subprocess.run([sys.executable, "-c", _MAPPED_TRUNCATE, scan_path, file_path, how, str(hu.REPO)],
                       capture_output=True, text=True, timeout=120)
    res = json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 else None
    return p.returncode, res


@pytest.mark.parametrize("how", ["shrink", "empty"])
@pytest.mark.parametrize("engine", ["innodb", "tokudb", "clickhouse"])
def test_truncated_while_mapped(engine, how, targets, tmp_path):
    scan_path, file_path = _copy(targets[engine], tmp_path)
    rc, res = mapped_truncation(scan_path, file_path, how)
    assert rc != -signal.SIGBUS, f"{engine}: the scan process died of SIGBUS"
    assert rc == 0, rc
    assert res["truncated"]
    assert not [e for e in res["errors"] if "parser failed" in e], res["errors"]
    name = os.path.basename(file_path)
    said = [w for w in res["warnings"] if name in w and ("shrank" in w or "size changed" in w)]
    assert said, res["warnings"]

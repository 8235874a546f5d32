"""The MyISAM/Aria header-facts benchmark (tests/benchmarks/bench_myisam_aria.py) still
runs: a small set (copies, not links), every table's header read, the full scan clean.
Speed is printed by the benchmark, never asserted here."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent / "benchmarks" / "bench_myisam_aria.py"


def test_bench_runs_on_a_small_set(fixtures_root, tmp_path):
    out = subprocess.run([sys.executable, str(BENCH), "--tables", "40", "--repeat", "1",
                          "--dir", str(tmp_path / "set")], capture_output=True, text=True, timeout=300,
                         env={"DBXRAY_FIXTURES": str(fixtures_root), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("== MyISAM/Aria header facts: 40 tables (8 MyISAM, 32 Aria), 80 files")
    assert "for 40 tables" in lines[1] and "0 with problems" in lines[1]
    assert "for 40 tables, 80 files, 0 errors" in lines[2]
    links = {p.stat().st_nlink for p in (tmp_path / "set").rglob("*.M*")}
    assert links == {1}                                  # copies, not hard links

"""The benchmark script (tests/benchmarks/bench_innodb.py) still runs: its
file selection and its dbxray run on the small fixture set (no timing)."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

BENCH = Path(__file__).resolve().parent / "benchmarks" / "bench_innodb.py"


def load_bench():
    spec = importlib.util.spec_from_file_location("bench_innodb", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_bench_script_runs_on_fixtures(fixtures_root):
    bench = load_bench()
    man = json.loads((fixtures_root / "innodb" / "manifest.json").read_text())
    want = {f["path"]: f["pages"]["n_pages"] for f in man["files"]
            if f["kind"] == "ibd" and f["pages"]["physical_page_size"] == 16384}
    files = bench.find_files(fixtures_root / "innodb", 16384)
    got = sorted(str(p.relative_to(fixtures_root / "innodb")) for p in files)
    assert got == sorted(want)
    assert bench.run_dbxray(files) == sum(want.values())
    assert bench.run_numpy_type_field(files) == sum(want.values())

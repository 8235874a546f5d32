"""Corrupt-input matrix machinery: targets, mutations, time-boxed workers.

Every engine file of every fixture folder is a *target*.  For each target a
deterministic list of *mutations* is planned from the pristine file's own
structure (the units the scan finds in it: InnoDB pages, ClickHouse blocks,
TokuDB partitions; plus compressed-block chains in ClickHouse marks, primary
index and checksums.txt): truncations inside the header, mid-unit and near
the end, bit flips in headers, in the size fields of unit headers and in
compressed payloads, and size fields overwritten with huge values.

Each mutated copy (the lone file, or the whole ClickHouse part directory it
belongs to) is scanned with ``parsers.scan.scan`` in a worker process, under
a per-case alarm; the parent kills a worker that stops answering (a hang in C
code) or dies (a signal) and records the case as failed.

A case FAILS when:
  * an exception escapes ``scan`` (or a payload decoder raises anything but
    its documented error),
  * ``scan`` had to catch a parser crash ("<engine> parser failed: ..."),
  * it runs past the time box (hang) or the worker dies (crash, SIGBUS, OOM),
  * an error message does not name its file.

Run it by hand::

    .venv/bin/python tests/hardening_util.py [--full] [--jobs 2] [--root DIR]

(The parent makes its own sparse copy of the fixtures when no --root is given.)
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

# the tests use these as ``hardening_util.<name>`` (``import hardening_util as hu``)
from hardening.cases import (CaseTimeout, check_dataset, check_payloads, plan_target,  # noqa: E402,F401
                             run_case, worker_main)
from hardening.common import (CASE_ALARM_S, CASE_GUARD_S, FIXTURE_FOLDERS, HERE, REPO,  # noqa: E402,F401
                              SKIP_ROLES)
from hardening.matrix import Summary, run_matrix  # noqa: E402,F401
from hardening.mutations import Mutation, ch_block_chain, plan_mutations  # noqa: E402,F401
from hardening.probe import ProbeError, probe_scan, run_probe  # noqa: E402,F401
from hardening.targets import Target, _kind, ci_subset, find_targets, sparse_copyfile, sparse_copytree  # noqa: E402,F401


def main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(description="dbxray corrupt-input matrix")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--full", action="store_true", help="every fixture file, every mutation")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--root", help="a sparse copy of the fixtures (default: make one)")
    ap.add_argument("--only", help="only targets whose path contains this")
    ap.add_argument("--json", help="write the figures and failures here")
    ap.add_argument("--probe", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        worker_main()
        return 0
    if a.probe:
        res = probe_scan(a.probe)
        sys.stdout.write("\n" + json.dumps(res) + "\n")
        return 0
    from fixtures_util import make_sparse_copy
    tmp = None
    root = a.root
    if not root:
        tmp = tempfile.mkdtemp(prefix="dbxray-fx-")
        root = str(make_sparse_copy(Path(tmp)))
    try:
        targets = find_targets(root)
        if not a.full:
            targets = ci_subset(targets)
        if a.only:
            targets = [t for t in targets if a.only in t.rel]
        s = run_matrix(targets, full=a.full, jobs=a.jobs, log=lambda m: print(m, flush=True))
        print(s.figures())
        if a.json:
            Path(a.json).write_text(json.dumps({"figures": s.figures(), "cases": s.cases, "targets": s.targets,
                                                "failures": s.failures, "by_engine": s.by_engine,
                                                "lost_partial": s.lost_partial}, indent=1))
        return 1 if s.failures else 0
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

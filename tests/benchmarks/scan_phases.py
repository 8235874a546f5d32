#!/usr/bin/env python3
"""Where ``dbxray scan`` spends its time, phase by phase, on one folder of InnoDB
files (a script, not a timed test; the README's "Where the time goes" table).

    .venv/bin/python tests/benchmarks/scan_phases.py DIR [DIR ...] [--repeat 3]

Per folder, best of ``--repeat`` warm runs of each phase, in the order the scan runs
them, each on the state the previous phase left (as the scan does), in one process;
each phase's CPU time (user + system: on a machine others load, wall time measures
them too), so the sum is the work one core does, which ``scan`` spreads over the
cores for the page maps, checksums, LOB chains and per-file facts:

* interpreter + imports: fresh processes (``python -c pass``, then the imports a
  ``dbxray scan`` of InnoDB needs), the rest in this process;
* detection (``detect``: the walk, names and first bytes);
* open / stat / FIEMAP (``read_facts`` of every file);
* names (``resolve_names``: the SDI / ibdata1 dictionary across files);
* page maps without checksums, and the checksums of every page (the difference with
  them verified);
* LOB chains (MySQL 8 files only);
* per-file facts into the model (``fill_entry``: units, the section, per-page arrays);
* tables (``_assign_table``, FULLTEXT, system files);
* tree building (``build_tree``: what the window shows first; the CLI builds none);
* JSON: ``Dataset.to_json()`` and ``json.dumps(indent=1)`` as ``scan --json`` wrote it
  before it was streamed, and the streamed writer (``parsers/jsonout.py``).

Every figure is printed per file too, so the table shows whether a phase grows
faster than the files do.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import time

IMPORTS = ("import json, dbxray.app.cli, dbxray.parsers.scan, dbxray.parsers.innodb.scan; "
           "from dbxray.parsers import engines; [engines.get(n) for n in engines.names()]")


def fresh(code: str, repeat: int) -> float:
    best = 1e9
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        best = min(best, time.perf_counter() - t)
    return best


def phases(path: str) -> dict[str, float]:
    from dbxray.parsers.detect import detect
    from dbxray.parsers.model import Dataset, ScanContext
    from dbxray.parsers.filefacts import read_facts
    from dbxray.parsers import engines
    from dbxray.parsers.innodb import names as names_module, scan as iscan
    from dbxray.parsers.innodb.pagemap import build_page_map
    from dbxray.parsers.fileio import ReadOnlyFile
    from dbxray.parsers.tree import build_tree
    from dbxray.parsers import jsonout

    out: dict[str, float] = {}

    def lap(name, t0):
        out[name] = time.process_time() - t0
        return time.process_time()

    t = time.process_time()
    found = detect(path)
    t = lap("detection", t)
    ds = Dataset(root=found.root, files=found.files, errors=list(found.errors), engine_order=engines.names())
    for e in ds.files:
        read_facts(e)
    t = lap("open/stat/FIEMAP", t)
    files = ds.files_of("innodb")
    names = names_module.resolve_names(files)
    t = lap("names (SDI/dictionary)", t)
    paged = [f for f in files if f.role in iscan.PAGED_ROLES]
    ctx = ScanContext()
    for e in paged:
        with ReadOnlyFile(e.abspath) as f:
            build_page_map(f, e.path, verify_checksums=False, holes=e.holes)
    t = lap("page maps (no checksums)", t)
    pms = {}
    for e in paged:
        with ReadOnlyFile(e.abspath) as f:
            pms[e.path] = (build_page_map(f, e.path, verify_checksums=True, holes=e.holes), None)
    t_ck = time.process_time() - t
    out["checksums of every page"] = max(0.0, t_ck - out["page maps (no checksums)"])
    t = time.process_time()
    for e in paged:
        pm = pms[e.path][0]
        if pm.flavor == "mysql":
            with ReadOnlyFile(e.abspath) as f:
                pms[e.path] = (pm, iscan.read_lobs(f, pm))
    t = lap("LOB chains", t)
    for e in paged:
        pm, lobs = pms[e.path]
        iscan.fill_entry(e, pm, names, fs_block=e.fs_block or 4096, lobs=lobs)
    pms.clear()
    t = lap("per-file facts into the model", t)
    for e in paged:
        iscan._assign_table(ds, e, names)
    iscan._attach_fts(ds, paged, names)
    for e in files:
        if e.role in ("system_tablespace", "redo_log", "undo"):
            names_module.system_info(e)
    t = lap("tables, FULLTEXT, system files", t)
    build_tree(ds)
    t = lap("tree building (window only)", t)
    data = ds.to_json()
    t = lap("JSON: to_json()", t)
    json.dumps(data, indent=1)
    t = lap("JSON: json.dumps(indent=1)", t)
    del data
    buf = io.StringIO()
    jsonout.write_dataset(ds, buf)
    lap("JSON: streamed writer", t)
    out["files"] = len(ds.files)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)
    interp = fresh("pass", a.repeat)
    imports = fresh(IMPORTS, a.repeat) - interp
    print(f"interpreter {interp * 1000:.0f} ms, imports {imports * 1000:.0f} ms (fresh processes, best of {a.repeat})")
    print(f"load average {os.getloadavg()[0]:.2f}")
    for d in a.dirs:
        best: dict[str, float] = {}
        n = 0
        for _ in range(a.repeat):
            got = phases(d)
            n = int(got.pop("files"))
            for k, v in got.items():
                best[k] = min(best.get(k, 1e9), v)
        print(f"\n{d}: {n} files")
        for k, v in best.items():
            print(f"  {k:34s} {v:8.3f} s  {v / max(n, 1) * 1e6:8.1f} us/file")
        print(f"  {'sum':34s} {sum(best.values()) - best['tree building (window only)'] - best['JSON: json.dumps(indent=1)'] - best['JSON: to_json()']:8.3f} s  (without the tree and the old JSON)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""One case, run in a worker process: mutate, scan under an alarm, check what came out."""
from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import tempfile
import traceback

from .mutations import Mutation, plan_mutations
from .targets import Target, sparse_copyfile, sparse_copytree
from .common import CASE_ALARM_S


class CaseTimeout(BaseException):
    """Raised by the per-case alarm; a BaseException so no parser swallows it."""


def _on_alarm(signum, frame):
    raise CaseTimeout()


def _names_in(ds) -> set[str]:
    out = {os.path.basename(ds.root.rstrip("/"))}
    for f in ds.files:
        out.add(f.path)
        out.add(os.path.basename(f.path))
    return {n for n in out if n}


def check_dataset(ds, target_rel: str) -> tuple[list[str], dict]:
    """Failures (list of reasons) and facts of one scanned dataset."""
    fails = []
    facts = {"errors": 0, "located": 0}
    for e in ds.errors:
        facts["errors"] += 1
        if "parser failed" in e:
            fails.append(f"parser crash caught by scan: {e}")
        elif not any(n in e for n in _names_in(ds)):
            fails.append(f"dataset error names no file: {e}")
    for f in ds.files:
        base = os.path.basename(f.path)
        for e in f.errors:
            facts["errors"] += 1
            if base not in e and f.path not in e:
                fails.append(f"error of {f.path} does not name it: {e}")
            low = e.lower()
            if any(w in low for w in ("offset", "page", "@", "block", "node", "mark", "line", "row", "byte")):
                facts["located"] += 1
    return fails, facts


def _payload_module(engine: str):
    from dbxray.parsers.clickhouse import payloads as clickhouse
    from dbxray.parsers.innodb import payloads as innodb
    from dbxray.parsers.tokudb import payloads as tokudb
    return {"innodb": innodb, "clickhouse": clickhouse, "tokudb": tokudb}.get(engine)   # None: no unit decoding


def check_payloads(entry, engine: str, unit: int, limit: int = 3) -> tuple[list[str], int]:
    """Decode a few units of the mutated entry; only the engine's documented
    errors may come out, and they must name the file."""
    from dbxray.parsers.codecs.general import DecodeError
    from dbxray.parsers.fileio import FileReadError
    mod = _payload_module(engine)
    if mod is None:                 # an engine whose units are the file's bytes (MyISAM, Aria): nothing to decode
        return [], 0
    allowed = (mod.PayloadError, DecodeError, FileReadError)
    if entry.units is None or not len(entry.units):
        return [], 0
    n = len(entry.units)
    idx = sorted({i for i in (unit, unit + 1, 0, n - 1) if 0 <= i < n})[:limit]
    fails, tried = [], 0
    base = os.path.basename(entry.path)
    for i in idx:
        tried += 1
        try:
            mod.unit_payload(entry, i)
        except allowed as e:
            if base not in str(e):
                fails.append(f"payload error of unit {i} does not name the file: {e}")
        except CaseTimeout:
            raise
        except Exception as e:     # noqa: BLE001 - that is the point
            tb = traceback.extract_tb(e.__traceback__)[-1]
            fails.append(f"unit_payload({i}) raised {type(e).__name__}: {e} "
                         f"({os.path.basename(tb.filename)}:{tb.lineno})")
    return fails, tried


def run_case(target: Target, mut: Mutation, pristine: str, work: str, do_payloads: bool) -> dict:
    """Copy the pristine context, mutate the target in it, scan, check."""
    from dbxray.parsers.scan import scan
    case_dir = os.path.join(work, "case")
    shutil.rmtree(case_dir, ignore_errors=True)
    os.makedirs(case_dir)
    if os.path.isdir(pristine):
        scan_path = os.path.join(case_dir, os.path.basename(pristine))
        sparse_copytree(pristine, scan_path)
        file_path = os.path.join(scan_path, os.path.basename(target.abspath))
    else:
        scan_path = file_path = os.path.join(case_dir, os.path.basename(pristine))
        sparse_copyfile(pristine, file_path)
    mut.apply(file_path)
    res = {"fail": [], "errors": 0, "located": 0, "detected": False, "partial": None, "payloads": 0}
    signal.setitimer(signal.ITIMER_REAL, CASE_ALARM_S)
    try:
        try:
            ds = scan(scan_path)
        except CaseTimeout:
            raise
        except Exception as e:    # noqa: BLE001
            tb = traceback.extract_tb(e.__traceback__)[-1]
            res["fail"].append(f"exception escaped scan: {type(e).__name__}: {e} "
                               f"({os.path.basename(tb.filename)}:{tb.lineno})")
            return res
        fails, facts = check_dataset(ds, target.rel)
        res["fail"] += fails
        res.update(facts)
        base = os.path.basename(target.abspath)
        entry = next((f for f in ds.files if os.path.basename(f.path) == base), None)
        if entry is not None:
            res["detected"] = bool(entry.errors or entry.warnings or
                                   (entry.units is not None and len(entry.units) and
                                    bool((entry.units["flags"] & 0x22).any())))
            res["partial"] = entry.units is not None and len(entry.units) > 0
            if do_payloads and (mut.unit >= 0 or mut.why.startswith("mid-unit")):
                pf, tried = check_payloads(entry, target.engine, mut.unit)
                res["fail"] += pf
                res["payloads"] = tried
    except CaseTimeout:
        res["fail"].append(f"hang: still running after {CASE_ALARM_S:.0f} s")
    except MemoryError:
        res["fail"].append("MemoryError (address space capped)")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return res


def plan_target(target: Target, work: str, full: bool) -> tuple[str, list[Mutation]]:
    """Make the pristine copy (file or part dir) and plan its mutations."""
    from dbxray.parsers.scan import scan
    pristine_root = os.path.join(work, "pristine")
    shutil.rmtree(pristine_root, ignore_errors=True)
    os.makedirs(pristine_root)
    if target.context:
        pristine = os.path.join(pristine_root, os.path.basename(target.context))
        sparse_copytree(target.context, pristine)
    else:
        pristine = os.path.join(pristine_root, os.path.basename(target.abspath))
        sparse_copyfile(target.abspath, pristine)
    ds = scan(pristine)
    base = os.path.basename(target.abspath)
    entry = next((f for f in ds.files if os.path.basename(f.path) == base), None)
    units = entry.units if entry is not None else None
    size = os.path.getsize(target.abspath)
    with open(target.abspath, "rb") as f:
        head = f.read(65536)
    first_end = None
    if units is not None and len(units):
        first_end = int(units["offset"][0]) + int(units["stored"][0])
    return pristine, plan_mutations(target, size, units, head, full), first_end


def worker_main() -> None:
    """Read jobs (JSON lines) on stdin; answer with JSON lines on stdout."""
    import resource
    lim = 6 << 30
    resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    signal.signal(signal.SIGALRM, _on_alarm)
    work = os.environ.get("DBXRAY_HARDENING_WORK") or tempfile.mkdtemp(prefix="dbxray-hardening-")
    out = sys.stdout
    sys.stdout = sys.stderr     # parsers must not write into the protocol

    def say(obj):
        out.write(json.dumps(obj) + "\n")
        out.flush()
    try:
        for line in sys.stdin:
            job = json.loads(line)
            target = Target(**job["target"])
            try:
                pristine, muts, first_end = plan_target(target, work, job["full"])
            except BaseException as e:  # noqa: BLE001
                say({"planned": [], "plan_error": f"{type(e).__name__}: {e}"})
                continue
            say({"planned": [m.to_json() for m in muts]})
            skip = set(job.get("skip", []))
            for i, m in enumerate(muts):
                if i in skip:
                    continue
                say({"start": i})
                r = run_case(target, m, pristine, work, job["payloads"])
                if (m.op == "trunc" and first_end is not None and m.offset >= first_end
                        and r.get("partial") is False):
                    r["lost_partial"] = True
                say({"result": i, **r})
            say({"done": True})
    finally:
        shutil.rmtree(work, ignore_errors=True)

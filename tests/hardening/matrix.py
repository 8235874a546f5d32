"""The parent: a small pool of time-guarded workers running every case of every target."""
from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

from .mutations import Mutation
from .targets import Target
from .common import CASE_GUARD_S, REPO, SCRIPT


@dataclass
class Summary:
    targets: int = 0
    cases: int = 0
    failures: list[dict] = field(default_factory=list)
    detected: int = 0
    located_errors: int = 0
    errors: int = 0
    partial: int = 0
    payload_calls: int = 0
    lost_partial: list[str] = field(default_factory=list)
    by_engine: dict = field(default_factory=dict)
    seconds: float = 0.0

    def figures(self) -> str:
        eng = ", ".join(f"{e}: {n['targets']} files / {n['cases']} cases / {n['failures']} failures"
                        for e, n in sorted(self.by_engine.items()))
        return (f"corrupt-input matrix: {self.targets} files (inputs tried), {self.cases} cases, "
                f"{len(self.failures)} failures; {self.detected} cases reported by the parser, "
                f"{self.errors} error messages ({self.located_errors} with a location), "
                f"{self.partial} cases kept units ({len(self.lost_partial)} truncations past the first unit "
                f"kept none), {self.payload_calls} payload decodes; "
                f"{self.seconds:.0f} s  [{eng}]")


class _Worker:
    def __init__(self):
        self.work = tempfile.mkdtemp(prefix="dbxray-hardening-")    # removed by kill()/the parent
        self.proc = subprocess.Popen(
            [sys.executable, "-u", str(SCRIPT), "--worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, bufsize=1, cwd=str(REPO), start_new_session=True,
            env={**os.environ, "DBXRAY_HARDENING_WORK": self.work})
        self.buf = ""
        self.job = None
        self.planned: list | None = None
        self.current: int | None = None
        self.since = time.monotonic()
        self.skip: set[int] = set()

    def send(self, target: Target, full: bool, payloads: bool, skip=()) -> None:
        self.job = (target, full, payloads)
        self.skip = set(skip)
        self.planned = None
        self.current = None
        self.since = time.monotonic()
        self.proc.stdin.write(json.dumps({"target": target.to_json(), "full": full,
                                          "payloads": payloads, "skip": sorted(self.skip)}) + "\n")
        self.proc.stdin.flush()

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self.proc.wait()
        shutil.rmtree(self.work, ignore_errors=True)


def run_matrix(targets: list[Target], full: bool = False, jobs: int = 2, payloads: bool = True,
               log=None) -> Summary:
    """Run every target's cases over ``jobs`` workers; returns the figures."""
    t0 = time.monotonic()
    s = Summary(targets=len(targets))
    queue = list(targets)
    workers: list[_Worker] = []

    def eng_stats(t: Target) -> dict:
        return s.by_engine.setdefault(t.engine, {"targets": 0, "cases": 0, "failures": 0})

    for t in targets:
        eng_stats(t)["targets"] += 1

    def record(t: Target, i: int, r: dict, planned: list) -> None:
        s.cases += 1
        eng_stats(t)["cases"] += 1
        s.detected += bool(r.get("detected"))
        s.errors += r.get("errors", 0)
        s.located_errors += r.get("located", 0)
        s.partial += bool(r.get("partial"))
        s.payload_calls += r.get("payloads", 0)
        if r.get("lost_partial"):
            m = Mutation.from_json(planned[i]) if planned and i < len(planned) else None
            s.lost_partial.append(f"{t.rel}: {m.describe() if m else i}")
        if r.get("fail"):
            eng_stats(t)["failures"] += 1
            m = Mutation.from_json(planned[i]) if planned and i < len(planned) else None
            s.failures.append({"file": t.rel, "case": m.describe() if m else f"case {i}",
                               "reasons": r["fail"][:3]})
            if log:
                log(f"FAIL {t.rel}: {s.failures[-1]['case']}: {r['fail'][0]}")

    def start_next(w: _Worker) -> bool:
        if not queue:
            return False
        w.send(queue.pop(0), full, payloads)
        return True

    for _ in range(min(jobs, len(queue))):
        w = _Worker()
        workers.append(w)
        start_next(w)
    active = [w for w in workers if w.job]
    while active:
        fds = {w.proc.stdout.fileno(): w for w in active}
        ready, _, _ = select.select(list(fds), [], [], 1.0)
        now = time.monotonic()
        for fd in ready:
            w = fds[fd]
            chunk = os.read(fd, 65536).decode()
            if not chunk:          # the worker died (signal, OOM kill)
                rc = w.proc.wait()
                t = w.job[0]
                if w.current is not None:
                    record(t, w.current, {"fail": [f"worker died (exit {rc}) during the case"]}, w.planned)
                    w.skip.add(w.current)
                elif w.planned is None:
                    record(t, 0, {"fail": [f"worker died (exit {rc}) while planning"]}, None)
                _restart(w, workers, active, full, payloads, queue, start_next)
                continue
            w.buf += chunk
            while "\n" in w.buf:
                line, w.buf = w.buf.split("\n", 1)
                msg = json.loads(line)
                w.since = now
                t = w.job[0]
                if "planned" in msg:
                    w.planned = msg["planned"]
                    if msg.get("plan_error"):
                        record(t, 0, {"fail": [f"pristine scan failed: {msg['plan_error']}"]}, None)
                elif "start" in msg:
                    w.current = msg["start"]
                elif "result" in msg:
                    record(t, msg["result"], msg, w.planned)
                    w.skip.add(msg["result"])
                    w.current = None
                elif msg.get("done"):
                    w.job = None
                    if not start_next(w):
                        active.remove(w)
        for w in list(active):
            if w.job and now - w.since > CASE_GUARD_S:
                t = w.job[0]
                i = w.current
                w.kill()
                if i is not None:
                    record(t, i, {"fail": [f"hang: no answer for {CASE_GUARD_S:.0f} s (killed)"]}, w.planned)
                    w.skip.add(i)
                else:
                    record(t, 0, {"fail": [f"hang while planning (killed after {CASE_GUARD_S:.0f} s)"]}, None)
                _restart(w, workers, active, full, payloads, queue, start_next)
    for w in workers:
        try:
            w.proc.stdin.close()
        except OSError:
            pass
        try:
            w.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            w.kill()
        shutil.rmtree(w.work, ignore_errors=True)
    s.seconds = time.monotonic() - t0
    return s


def _restart(w: _Worker, workers, active, full, payloads, queue, start_next) -> None:
    """Replace a dead or killed worker; resume its target after the bad case."""
    job, planned, skip = w.job, w.planned, set(w.skip)
    try:
        w.kill()
    except Exception:  # noqa: BLE001
        pass
    nw = _Worker()
    workers[workers.index(w)] = nw
    active[active.index(w)] = nw
    if job and planned is not None and len(skip) < len(planned):
        nw.send(job[0], full, payloads, skip=skip)
    elif not start_next(nw):
        active.remove(nw)
        nw.proc.stdin.close()

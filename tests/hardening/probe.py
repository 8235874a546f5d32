"""Probes run in a fresh process: memory and I/O figures of one scan."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from .common import REPO, SCRIPT


def _proc_io() -> dict:
    out = {}
    try:
        with open("/proc/self/io") as f:
            for line in f:
                k, v = line.split(":")
                out[k.strip()] = int(v)
    except OSError:
        pass
    return out


def probe_scan(path: str) -> dict:
    """Scan ``path`` and measure it: peak RSS before/after (KiB), page faults,
    bytes read through read(2)/pread(2) (rchar) and from the device."""
    import resource
    from dbxray.parsers.scan import scan
    r0, io0 = resource.getrusage(resource.RUSAGE_SELF), _proc_io()
    t0 = time.monotonic()
    ds = scan(path)
    dt = time.monotonic() - t0
    r1, io1 = resource.getrusage(resource.RUSAGE_SELF), _proc_io()
    return {
        "seconds": dt,
        "maxrss_before_kib": r0.ru_maxrss, "maxrss_after_kib": r1.ru_maxrss,
        "minflt": r1.ru_minflt - r0.ru_minflt, "majflt": r1.ru_majflt - r0.ru_majflt,
        "rchar": io1.get("rchar", 0) - io0.get("rchar", 0),
        "read_bytes": io1.get("read_bytes", 0) - io0.get("read_bytes", 0),
        "files": len(ds.files),
        "engines": ds.engines,
        "errors": ds.errors[:5],
        "file_errors": sum(len(f.errors) for f in ds.files),
        "first_file_errors": [e for f in ds.files for e in f.errors][:5],
        "warnings": [w for f in ds.files for w in f.warnings][:5],
        "units": {f.path: (0 if f.units is None else len(f.units)) for f in ds.files[:20]},
        "holes": {f.path: f.holes[:4] for f in ds.files[:20]},
        "apparent": {f.path: f.apparent_bytes for f in ds.files[:20]},
    }


class ProbeError(AssertionError):
    """A probe scan hung, ran out of its memory budget or crashed."""


def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_probe(path: str, timeout: float = 300.0, rss_limit_mib: int = 2048, env: dict | None = None) -> dict:
    """``probe_scan(path)`` in a fresh interpreter.  The parent is the hang
    guard (kill after ``timeout`` s) and the memory guard (kill when the
    child's RSS passes ``rss_limit_mib``); both raise ProbeError."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen([sys.executable, str(SCRIPT), "--probe", path],
                             stdout=out, stderr=err, text=True, cwd=str(REPO),
                             env={**os.environ, **(env or {})}, start_new_session=True)
        t0, peak = time.monotonic(), 0
        try:
            while p.poll() is None:
                peak = max(peak, _rss_kib(p.pid))
                if peak > rss_limit_mib * 1024:
                    raise ProbeError(f"scan of {path}: RSS passed {rss_limit_mib} MiB after "
                                     f"{time.monotonic() - t0:.0f} s (killed)")
                if time.monotonic() - t0 > timeout:
                    raise ProbeError(f"scan of {path}: still running after {timeout:.0f} s (killed)")
                time.sleep(0.1)
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        out.seek(0)
        err.seek(0)
        if p.returncode != 0:
            raise ProbeError(f"probe of {path} exited {p.returncode}: {err.read()[-2000:]}")
        res = json.loads(out.read().strip().splitlines()[-1])
        res["watched_rss_kib"] = peak
        return res

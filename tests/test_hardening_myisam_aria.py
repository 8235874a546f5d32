"""Corrupt-input matrix of the MyISAM and Aria engines: each table's two files (and the
Aria log and control file) truncated inside every header field group and mid-block, and
bit-flipped in the state, the base info, the key blocks / index pages and the data:
each case scanned in-process under a 5 s alarm.  A failure is an exception escaping the
scan, a parser crash the scan caught, a hang, or an error that does not name its file
(tests/hardening/cases.py check_dataset); the rest of the table must still be read."""
from __future__ import annotations

import shutil
import signal

import pytest

import hardening_util as hu
from dbxray.parsers.scan import scan

TABLES = [("misc", "myisam_dyn", ("MYI", "MYD")), ("misc", "myisam_fixed", ("MYI", "MYD")),
          ("misc", "aria_dyn", ("MAI", "MAD")), ("misc", "aria_page", ("MAI", "MAD")),
          ("mysql", "help_topic", ("MAI", "MAD")), ("mysql", "db", ("MAI", "MAD"))]
TRUNC = [0, 1, 3, 4, 23, 24, 30, 60, 100, 124, 150, 155, 200, 263, 300, 400, 1023, 1024, 1025, 4096,
         8191, 8192, 8200, 12000, 16384, 20000, 50000, 100000]
FLIPS = [4, 6, 8, 12, 14, 18, 21, 22, 23, 26, 28, 36, 49, 57, 60, 68, 76, 89, 97, 105, 124, 130, 155, 160,
         200, 210, 230, 279, 300, 365, 1024, 1026, 2048, 3000, 8192 + 7, 8192 + 8, 8192 + 10, 8192 + 13,
         8192 + 15, 8192 + 16, 9000, 16384 + 7, 16384 + 100, 20000, 40000, 86000]


def _alarm(signum, frame):
    raise TimeoutError("hang")


def _cases():
    for db, name, exts in TABLES:
        for ext in exts:
            for at in TRUNC:
                yield db, name, exts, ext, "trunc", at
            for at in FLIPS:
                yield db, name, exts, ext, "flip", at


def test_matrix(fixtures_root, tmp_path):
    src = fixtures_root / "mariadb" / "datadir"
    fails, cases, located, errors = [], 0, 0, 0
    old = signal.signal(signal.SIGALRM, _alarm)
    try:
        for db, name, exts, ext, op, at in _cases():
            d = tmp_path / "case" / db
            shutil.rmtree(tmp_path / "case", ignore_errors=True)
            d.mkdir(parents=True)
            for e in exts:
                shutil.copyfile(src / db / f"{name}.{e}", d / f"{name}.{e}")
            p = d / f"{name}.{ext}"
            data = bytearray(p.read_bytes())
            if at >= len(data):
                continue
            if op == "trunc":
                data = data[:at]
            else:
                data[at] ^= 0x5A
            p.write_bytes(bytes(data))
            cases += 1
            signal.setitimer(signal.ITIMER_REAL, 5.0)
            try:
                ds = scan(str(d))
            except Exception as e:      # noqa: BLE001
                fails.append(f"{p.name} {op}@{at}: {type(e).__name__}: {e}")
                continue
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            f, facts = hu.check_dataset(ds, f"{db}/{p.name}")
            fails += [f"{p.name} {op}@{at}: {x}" for x in f]
            errors += facts["errors"]
            located += facts["located"]
            mine = [x for x in ds.files if x.path.endswith(f"{name}.{ext}")]
            assert mine and mine[0].engine in ("myisam", "aria"), (p.name, op, at)
            other = [x for x in ds.files if x.path.endswith(f"{name}.{exts[1] if ext == exts[0] else exts[0]}")]
            assert other and other[0].engine == mine[0].engine
        for base, size in (("aria_log_control", 52), ("aria_log.00000001", 8192)):
            for op, at in [("trunc", a) for a in (0, 3, 20, 30, 44, 51)] + [("flip", a) for a in range(0, 52, 5)]:
                shutil.rmtree(tmp_path / "case", ignore_errors=True)
                (tmp_path / "case").mkdir()
                data = bytearray((src / base).read_bytes()[:size])
                if op == "trunc":
                    data = data[:at]
                else:
                    data[at] ^= 0x5A
                (tmp_path / "case" / base).write_bytes(bytes(data))
                cases += 1
                ds = scan(str(tmp_path / "case"))
                fails += [f"{base} {op}@{at}: {x}" for x in hu.check_dataset(ds, base)[0]]
    finally:
        signal.signal(signal.SIGALRM, old)
    print(f"\nMyISAM/Aria corrupt-input matrix: {cases} cases, {errors} errors ({located} with a place), "
          f"{len(fails)} failures")
    assert cases > 800 and not fails, fails[:20]

"""The long fuzzing campaign: every target of targets.py, N inputs in all.

    .venv/bin/python tests/fuzz/campaign.py --inputs 1000000 --jobs 8 --out /tmp/dbxray-fuzz

Two engines:

* ``random`` (default, fast): a seeded mutational fuzzer -- random bytes, or a
  real fixture seed with bytes overwritten, bits flipped, size-like fields set
  to 0 / 0xffffffff / 2^31, short runs inserted, tails cut.  It keeps going
  after a finding and groups findings by (exception type, file:line); the
  first input of each is written to ``--out`` as ``<target>-<n>.bin``.
* ``hypothesis``: the same strategies as the CI test with ``max_examples``
  set to the target's share; stops a target at its first finding and shrinks
  it to a minimal example.

Every input runs under a 5 s alarm (a hang is a finding).  The figures
(inputs tried, targets, findings) are printed at the end; exit 1 on findings.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

PER_INPUT_S = 5
SIZE_FIELDS = (b"\x00\x00\x00\x00", b"\xff\xff\xff\xff", b"\x7f\xff\xff\xff", b"\x00\x00\x00\x80",
               b"\x00\x00\x00\x40")


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang(f"input ran longer than {PER_INPUT_S} s")


def mutate(rnd: random.Random, seeds: list[bytes]) -> bytes:
    if not seeds or rnd.random() < 0.2:
        return rnd.randbytes(rnd.choice((8, 64, 512, 4096, 16384)) if rnd.random() < 0.5 else rnd.randrange(0, 2048))
    data = bytearray(rnd.choice(seeds))
    for _ in range(rnd.choice((1, 1, 2, 3, 5, 8, 16))):
        if not data:
            break
        pos = rnd.randrange(len(data))
        k = rnd.random()
        if k < 0.4:
            data[pos] = rnd.randrange(256)
        elif k < 0.6:
            data[pos] ^= 1 << rnd.randrange(8)
        elif k < 0.8:
            data[pos:pos + 4] = rnd.choice(SIZE_FIELDS)
        elif k < 0.9:
            data[pos:pos] = rnd.randbytes(rnd.randrange(1, 17))
        else:
            del data[pos:pos + rnd.randrange(1, 65)]
    if data and rnd.random() < 0.15:
        data = data[:rnd.randrange(len(data))]
    return bytes(data)


def _run_random(name: str, n: int, seed: int, out: str | None) -> dict:
    import targets as T
    signal.signal(signal.SIGALRM, _alarm)
    rnd = random.Random(f"{name}:{seed}")
    seeds = T.seeds(name)
    findings: dict[str, dict] = {}
    for i in range(n):
        data = mutate(rnd, seeds)
        signal.setitimer(signal.ITIMER_REAL, PER_INPUT_S)
        try:
            f = T.run_one(name, data)
        except Hang as e:
            f = f"Hang: {e}"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if f:
            key = f.split(": ", 1)[0] + " " + f.rsplit("(", 1)[-1]
            if key not in findings:
                findings[key] = {"target": name, "finding": f, "count": 0, "input_hex": data[:256].hex(),
                                 "input_len": len(data)}
                if out:
                    p = Path(out) / f"{name}-{len(findings)}.bin"
                    p.write_bytes(data)
                    findings[key]["file"] = str(p)
            findings[key]["count"] += 1
    return {"target": name, "inputs": n, "findings": list(findings.values())}


def _run_hypothesis(name: str, n: int, seed: int, out: str | None) -> dict:
    from hypothesis import HealthCheck, given, settings
    import targets as T
    from strategies import mutated
    signal.signal(signal.SIGALRM, _alarm)
    tried = [0]
    seen: list[dict] = []

    @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(mutated(T.seeds(name)))
    def run(data):
        tried[0] += 1
        signal.setitimer(signal.ITIMER_REAL, PER_INPUT_S)
        try:
            f = T.run_one(name, data)
        except Hang as e:
            f = f"Hang: {e}"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if f:
            seen[:] = [{"target": name, "finding": f, "count": 1, "input_hex": data[:256].hex(),
                        "input_len": len(data)}]
            raise AssertionError(f)
    try:
        run()
    except AssertionError:
        pass
    return {"target": name, "inputs": tried[0], "findings": seen}


def _job(args):
    engine, name, n, seed, out = args
    fn = _run_random if engine == "random" else _run_hypothesis
    return fn(name, n, seed, out)


def main(argv=None) -> int:
    import targets as T
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--inputs", type=int, default=1_000_000, help="inputs in all, shared by the targets")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--engine", choices=("random", "hypothesis"), default="random")
    ap.add_argument("--targets", help="comma-separated target names (default: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--chunk", type=int, default=5000, help="inputs per job")
    ap.add_argument("--out", help="directory for the inputs of findings")
    ap.add_argument("--json", help="write the figures and findings here")
    a = ap.parse_args(argv)
    names = a.targets.split(",") if a.targets else list(T.BY_NAME)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
    per = max(1, a.inputs // len(names))
    jobs = []
    for name in names:
        left, k = per, 0
        while left > 0:
            n = min(a.chunk, left) if a.engine == "random" else left
            jobs.append((a.engine, name, n, a.seed * 100003 + k, a.out))
            left -= n
            k += 1
    t0 = time.monotonic()
    total = 0
    merged: dict[str, dict] = {}
    with mp.get_context("fork").Pool(a.jobs, maxtasksperchild=4) as pool:
        for res in pool.imap_unordered(_job, jobs):
            total += res["inputs"]
            for f in res["findings"]:
                key = res["target"] + " " + f["finding"].split(": ", 1)[0] + " " + f["finding"].rsplit("(", 1)[-1]
                if key in merged:
                    merged[key]["count"] += f["count"]
                else:
                    merged[key] = f
                    print(f"FINDING {f['target']}: {f['finding']}", flush=True)
    dt = time.monotonic() - t0
    figures = (f"fuzz campaign ({a.engine}): {total} inputs tried over {len(names)} targets in {dt:.0f} s, "
               f"{len(merged)} distinct findings")
    print(figures)
    for f in merged.values():
        print(f"  {f['target']}: {f['finding']}  x{f['count']}  input[:64]={f['input_hex'][:128]}")
    if a.json:
        Path(a.json).write_text(json.dumps({"figures": figures, "inputs": total, "targets": names,
                                            "findings": list(merged.values())}, indent=1))
    return 1 if merged else 0


if __name__ == "__main__":
    sys.exit(main())

"""Record and compare dbxray's JSON outputs on every fixture folder.

Used to prove that a refactoring changes no output: record the outputs of one
tree, record them again after the change, compare.

    python tests/tools/compare_outputs.py record OUTDIR [--dbxray CMD] [--no-whatif] [--scan-arg=--full]
    python tests/tools/compare_outputs.py compare OLDDIR NEWDIR

``record`` runs ``dbxray scan --json`` and ``dbxray whatif --json --seed 1`` on
each fixture folder (every top-level folder of the shared fixtures, each of its
sub-folders, and the embedded demo), one file per output.  ``compare`` reads both
folders and reports every difference, path by path; exit status 1 if any.

Measured speeds (``compress_mb_s``, ``decompress_mb_s``) are timings of the
machine, not outputs: they are compared only for presence and type.  So are
the advice picks made from them: ``fastest_decode_within_5pct`` entries are
left out (whether there is one, and for which codec, follows the measured
speeds), a ``smallest`` entry is compared by target,
choice, model, projected and saving bytes (codecs of equal projected size are
ordered by measured decode speed, so which of them is named may change from
one run to the next; every projection itself is compared in ``targets``), and
an entry naming both choices is compared as the two entries it stands for.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))
from fixtures_util import fixtures_dir  # noqa: E402

TIMING_KEYS = {"compress_mb_s", "decompress_mb_s"}


def folders() -> list[tuple[str, Path]]:
    """(label, path) of every folder the outputs are recorded for."""
    root = fixtures_dir()
    if root is None:
        raise SystemExit("no fixtures (../shared/fixtures or DBXRAY_FIXTURES)")
    out: list[tuple[str, Path]] = []
    for top in sorted(p for p in root.iterdir() if p.is_dir()):
        out.append((top.name, top))
        for sub in sorted(p for p in top.iterdir() if p.is_dir()):
            out.append((f"{top.name}__{sub.name}", sub))
    out.append(("demo", REPO / "resources" / "demo"))
    return out


def record(outdir: Path, cmd: list[str], whatif: bool, scan_args: list[str] | None = None) -> int:
    outdir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    count = 0
    for label, path in folders():
        runs = [("scan", [*cmd, "scan", str(path), "--json", *(scan_args or [])])]
        if whatif:
            runs.append(("whatif", [*cmd, "whatif", str(path), "--json", "--seed", "1"]))
        for kind, argv in runs:
            res = subprocess.run(argv, capture_output=True, text=True, env=env)
            (outdir / f"{label}.{kind}.json").write_text(res.stdout)
            (outdir / f"{label}.{kind}.rc").write_text(f"{res.returncode}\n{res.stderr[-4000:]}")
            count += 1
            print(f"{kind:6} {label}: rc={res.returncode} {len(res.stdout)} bytes", flush=True)
    return count


def diff(a, b, where: str, out: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a:
                out.append(f"{where}/{k}: only in new")
            elif k not in b:
                out.append(f"{where}/{k}: only in old")
            elif k in TIMING_KEYS:
                if type(a[k]) is not type(b[k]):
                    out.append(f"{where}/{k}: type {type(a[k]).__name__} -> {type(b[k]).__name__}")
            else:
                diff(a[k], b[k], f"{where}/{k}", out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{where}: length {len(a)} -> {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, f"{where}[{i}]", out)
    elif a != b or type(a) is not type(b):
        out.append(f"{where}: {a!r:.200} -> {b!r:.200}")


TIMED_ADVICE = {"fastest_decode_within_5pct": (),
                "smallest": ("target", "choice", "model", "projected_bytes", "saving_bytes")}


def untimed(doc):
    """The output with the advice fields that depend on measured speeds left out.

    When the smallest codec is also the fastest to decode within 5%, the advice
    names both in one entry (``"smallest, fastest_decode_within_5pct"``);
    otherwise in two, or in one when no other codec is within 5%.  Which happens
    follows the measured speeds, so a merged entry is split into one entry per
    choice and the fastest-decode entries are left out before comparing.
    """
    if isinstance(doc, dict) and isinstance(doc.get("advice"), list):
        doc = dict(doc)
        advice = []
        for a in doc["advice"]:
            choices = a.get("choice", "").split(", ") if isinstance(a, dict) else []
            if not choices or not all(c in TIMED_ADVICE for c in choices):
                advice.append(a)
                continue
            for c in choices:
                if TIMED_ADVICE[c]:
                    advice.append({k: (c if k == "choice" else a[k]) for k in TIMED_ADVICE[c] if k in a})
        doc["advice"] = advice
    return doc


def compare(old: Path, new: Path) -> int:
    names = sorted(p.name for p in old.glob("*.json"))
    if not names:
        print(f"nothing recorded in {old}")
        return 1
    bad = 0
    for name in names:
        rc_old = (old / name).with_suffix(".rc").read_text().split("\n", 1)[0]
        rc_new_path = (new / name).with_suffix(".rc")
        if not (new / name).exists():
            print(f"{name}: missing in {new}")
            bad += 1
            continue
        rc_new = rc_new_path.read_text().split("\n", 1)[0]
        out: list[str] = []
        if rc_old != rc_new:
            out.append(f"exit status {rc_old} -> {rc_new}")
        ta, tb = (old / name).read_text(), (new / name).read_text()
        try:
            diff(untimed(json.loads(ta)), untimed(json.loads(tb)), "", out)
        except json.JSONDecodeError:
            if ta != tb:
                out.append("output differs (not JSON)")
        if out:
            bad += 1
            print(f"{name}: {len(out)} difference(s)")
            for line in out[:20]:
                print(f"    {line}")
    print(f"{len(names)} outputs compared, {len(names) - bad} identical, {bad} differ")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("outdir", type=Path)
    r.add_argument("--dbxray", default=str(REPO / ".venv" / "bin" / "dbxray"),
                   help="the command to run (default: the repository's venv)")
    r.add_argument("--no-whatif", action="store_true")
    r.add_argument("--scan-arg", action="append", default=[], metavar="ARG",
                   help="one more argument of each scan (e.g. --scan-arg=--full: ClickHouse's block walk, "
                        "to compare with outputs of code that walked every block by default)")
    c = sub.add_parser("compare")
    c.add_argument("old", type=Path)
    c.add_argument("new", type=Path)
    a = p.parse_args(argv)
    if a.cmd == "record":
        n = record(a.outdir, shlex.split(a.dbxray), not a.no_whatif, a.scan_arg)
        print(f"{n} outputs recorded in {a.outdir}")
        return 0
    return compare(a.old, a.new)


if __name__ == "__main__":
    sys.exit(main())

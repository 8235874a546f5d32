"""Dump every InnoDB PageMap field of many files, and compare two dumps field by
field: proof that a change to the page map (a refactoring, a speed-up) keeps
every array, error and segment as it was.

    python tests/tools/pagemap_compare.py corrupt OUTDIR [--count 108]
    python tests/tools/pagemap_compare.py dump OUTDIR.npz PATH... [--tree ROOT]
    python tests/tools/pagemap_compare.py compare A.npz B.npz

``corrupt`` writes damaged copies of the InnoDB fixture files (flipped header
bytes, zeroed pages, odd page types, wrong space ids and page numbers, broken
descriptor pages; seeded, so both trees see the same bytes).  ``dump`` maps
every ``.ibd``/``ibdata*``/``.ibu`` file under the PATHs twice (checksums on
and off) with the tree at ROOT (default: the installed ``dbxray``; a tree of
the old layout, with top-level ``parsers``, is found too).
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import shutil
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

NAMES = (".ibd", ".ibu")


def innodb_files(paths: list[str]) -> list[str]:
    out = []
    for p in paths:
        if os.path.isfile(p):
            out.append(p)
            continue
        for d, _, fs in os.walk(p):
            out += [os.path.join(d, f) for f in fs if f.endswith(NAMES) or f.startswith("ibdata")]
    return sorted(out)


def corrupt(outdir: Path, count: int) -> None:
    from fixtures_util import require_fixtures
    src = innodb_files([str(require_fixtures() / "innodb")])
    rnd = random.Random(7)
    outdir.mkdir(parents=True, exist_ok=True)
    for k in range(count):
        f = rnd.choice(src)
        data = bytearray(Path(f).read_bytes())
        page = 16384 if len(data) >= 3 * 16384 else 4096
        n = max(1, len(data) // page)
        how = k % 6
        p = rnd.randrange(n) * page
        if how == 0:                       # flipped header bytes
            for _ in range(8):
                data[p + rnd.randrange(38)] ^= 1 << rnd.randrange(8)
        elif how == 1:                     # zeroed page
            data[p:p + page] = bytes(page)
        elif how == 2:                     # odd page type
            data[p + 24:p + 26] = rnd.randrange(65536).to_bytes(2, "big")
        elif how == 3:                     # wrong space id
            data[p + 34:p + 38] = rnd.randrange(1 << 32).to_bytes(4, "big")
        elif how == 4:                     # wrong page number
            data[p + 4:p + 8] = rnd.randrange(1 << 32).to_bytes(4, "big")
        else:                              # broken descriptor page (page 0's XDES array)
            for _ in range(16):
                data[150 + rnd.randrange(min(page, len(data)) - 150)] ^= 0xFF
        (outdir / f"c{k:03d}_{Path(f).name}").write_bytes(bytes(data))


def _pagemap_module(tree: str | None):
    """The page map and file modules of the tree at ``tree`` (a copy holding ``dbxray/``,
    or a checkout of the old layout with top-level ``parsers/``), else the installed ones."""
    name = "dbxray.parsers"
    if tree:
        sys.path.insert(0, tree)
        if not (Path(tree) / "dbxray").is_dir():
            name = "parsers"
    pm = importlib.import_module(f"{name}.innodb.pagemap")
    fio = importlib.import_module(f"{name}.fileio")
    if tree and not str(Path(pm.__file__).resolve()).startswith(str(Path(tree).resolve())):
        raise SystemExit(f"{pm.__file__} is not in {tree}")
    print(f"page map from {pm.__file__}", file=sys.stderr)
    return pm, fio


def dump(out: Path, paths: list[str], tree: str | None) -> int:
    pmmod, fio = _pagemap_module(tree)
    arrays: dict[str, np.ndarray] = {}
    meta: dict[str, object] = {}
    files = innodb_files(paths)
    for path in files:
        for verify in (False, True):
            key = f"{path}|{int(verify)}"
            try:
                with fio.ReadOnlyFile(path) as f:
                    pm = pmmod.build_page_map(f, path, verify_checksums=verify)
            except Exception as e:          # noqa: BLE001 -- an exception is a result too
                meta[key] = {"raised": f"{type(e).__name__}: {e}"}
                continue
            m: dict[str, object] = {}
            for name, val in vars(pm).items():
                if isinstance(val, np.ndarray):
                    arrays[f"{key}|{name}"] = val
                elif name == "segments":
                    m[name] = sorted((int(k), int(s.inode_page), int(s.inode_offset), len(s.frag_pages))
                                     for k, s in val.items())
                elif name == "extent_map" and val is not None:
                    for a, v in vars(val).items():
                        if isinstance(v, np.ndarray):
                            arrays[f"{key}|extent_map.{a}"] = v
                elif name in ("fsp", "flags"):
                    m[name] = repr(val)
                else:
                    try:
                        json.dumps(val)
                        m[name] = val
                    except TypeError:
                        m[name] = repr(val)
            meta[key] = m
    np.savez_compressed(out, **{k.replace("/", "\\"): v for k, v in arrays.items()})
    Path(str(out) + ".json").write_text(json.dumps(meta, sort_keys=True, default=str))
    return len(files)


def compare(a: Path, b: Path) -> int:
    ma = json.loads(Path(str(a) + ".json").read_text())
    mb = json.loads(Path(str(b) + ".json").read_text())
    xa, xb = np.load(a), np.load(b)
    bad = []
    if ma.keys() != mb.keys():
        bad.append(f"files/modes differ: {sorted(set(ma) ^ set(mb))[:5]}")
    for k in sorted(set(ma) & set(mb)):
        if ma[k] != mb[k]:
            diff = [f for f in set(ma[k]) | set(mb[k]) if ma[k].get(f) != mb[k].get(f)]
            bad.append(f"{k}: {diff[:6]}")
    if set(xa.files) != set(xb.files):
        bad.append(f"arrays differ in name: {sorted(set(xa.files) ^ set(xb.files))[:5]}")
    for k in sorted(set(xa.files) & set(xb.files)):
        va, vb = xa[k], xb[k]
        if va.dtype != vb.dtype or va.shape != vb.shape or not np.array_equal(va, vb, equal_nan=va.dtype.kind == "f"):
            bad.append(f"{k}: array differs")
    for line in bad[:30]:
        print(line)
    print(f"{len(ma)} maps, {len(xa.files)} arrays compared: {len(bad)} difference(s)")
    return 1 if bad else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("corrupt")
    c.add_argument("outdir", type=Path)
    c.add_argument("--count", type=int, default=108)
    d = sub.add_parser("dump")
    d.add_argument("out", type=Path)
    d.add_argument("paths", nargs="+")
    d.add_argument("--tree")
    m = sub.add_parser("compare")
    m.add_argument("a", type=Path)
    m.add_argument("b", type=Path)
    a = p.parse_args(argv)
    if a.cmd == "corrupt":
        if a.outdir.exists():
            shutil.rmtree(a.outdir)
        corrupt(a.outdir, a.count)
        return 0
    if a.cmd == "dump":
        print(f"{dump(a.out, a.paths, a.tree)} files mapped")
        return 0
    return compare(a.a, a.b)


if __name__ == "__main__":
    sys.exit(main())

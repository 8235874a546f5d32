"""Build resources/demo/ from the shared fixtures (run from the repo root).

    python packaging/make_demo.py [FIXTURES]

Copies a few small real files of each engine and records their holes (from the
fixture manifests) in resources/demo/holes.json; app/demo.py re-punches them in
a cache copy at first start.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
INNODB = ["t_dynamic.ibd", "t_pc_zlib.ibd", "t_pc_lz4.ibd", "t_zip8.ibd", "t_blob.ibd"]
CH_TABLE = "marks_default"
TOKU_PREFIX = "_fx_blobs_"


def main() -> int:
    fx = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO.parent / "shared" / "fixtures"
    out = REPO / "resources" / "demo"
    if out.exists():
        shutil.rmtree(out)
    data = out / "data"
    holes: dict[str, list] = {}

    inno = json.loads((fx / "innodb" / "manifest.json").read_text())
    by_path = {f["path"]: f for f in inno["files"]}
    (data / "mariadb" / "fx").mkdir(parents=True)
    for name in INNODB:
        src = fx / "innodb" / "16k" / "fx" / name
        shutil.copyfile(src, data / "mariadb" / "fx" / name)
        m = by_path[f"16k/fx/{name}"]
        ranges = [r for r in m.get("fiemap_ranges") or [[o, ln, "hole"] for o, ln in m["holes"]] if r[2] != "data"]
        if ranges:
            holes[f"mariadb/fx/{name}"] = ranges

    ch = json.loads((fx / "clickhouse" / "manifest.json").read_text())
    t = ch["tables"][CH_TABLE]
    chroot = fx / "clickhouse" / "datadir"
    cdst = data / "clickhouse"
    rel = t["table_dir"]["rel_path"]
    shutil.copytree(chroot / rel, cdst / rel)
    meta_target = next(s["target"] for s in ch["symlinks"] if s["path"] == "metadata/fx")
    meta_dir = chroot / meta_target.replace("../", "", 1)   # the link is relative to metadata/
    (cdst / "metadata" / "fx").mkdir(parents=True)
    shutil.copyfile(chroot / "metadata" / "fx.sql", cdst / "metadata" / "fx.sql")
    shutil.copyfile(meta_dir / f"{CH_TABLE}.sql", cdst / "metadata" / "fx" / f"{CH_TABLE}.sql")
    (cdst / "data" / "fx").mkdir(parents=True)
    os.symlink(f"../../{rel}", cdst / "data" / "fx" / CH_TABLE)

    toku = json.loads((fx / "tokudb" / "manifest.json").read_text())
    tdst = data / "tokudb"
    tdst.mkdir(parents=True)
    for f in toku["files"]:
        name = f["path"].split("/")[-1]
        if f["path"].startswith("datadir/") and (name.startswith(TOKU_PREFIX) or name == "tokudb.directory"):
            shutil.copyfile(fx / "tokudb" / f["path"], tdst / name)
            if f["holes"]:
                holes[f"tokudb/{name}"] = [[o, ln, "hole"] for o, ln in f["holes"]]

    # MyRocks: the small data dir made by a real MariaDB + MyRocks (tests/data/myrocks_demo/make.py)
    shutil.copytree(REPO / "tests" / "data" / "myrocks_demo" / "datadir", data / "myrocks")

    (out / "holes.json").write_text(json.dumps({"source": "shared fixtures manifests", "holes": holes}, indent=1))
    total = sum(p.stat().st_size for p in out.rglob("*") if p.is_file() and not p.is_symlink())
    print(f"demo: {total} bytes in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

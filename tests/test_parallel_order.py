"""The worker pool starts the costliest files first and still yields in file order
(parsers/parallel.py ``each_file(cost=...)``); InnoDB weighs a file by its FSP flags
(parsers/innodb/scan.py ``scan_cost``)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from dbxray.parsers import parallel
from dbxray.parsers.innodb import scan as innodb_scan
from dbxray.parsers.model import FileEntry, ScanContext


def _entries(sizes: list[int]) -> list[FileEntry]:
    return [FileEntry(path=f"f{i}", abspath=f"/nonexistent/f{i}", apparent_bytes=s, allocated_bytes=s)
            for i, s in enumerate(sizes)]


def test_chunks_put_costly_files_first_alone_and_keep_every_file_once():
    entries = _entries([1 << 20] * 30)
    costs = [float(1 << 20)] * 30
    costs[27] = 500.0 * (1 << 20)        # a bzip2 file late in file order
    costs[3] = 40.0 * (1 << 20)
    chunks = parallel._chunks(entries, 2, costs)
    assert chunks[0] == [27] and chunks[1] == [3]
    flat = [i for c in chunks for i in c]
    assert sorted(flat) == list(range(30))
    rest = flat[2:]
    assert rest == sorted(rest)          # the others in file order
    # without costs: file order, as before
    plain = parallel._chunks(entries, 2)
    assert [i for c in plain for i in c] == list(range(30))


_ORDER_CODE = """
import json, os
from dbxray.parsers import parallel
from dbxray.parsers.model import FileEntry, ScanContext

def record(entry):
    entry.warnings.append(f"pid {os.getpid()}")

entries = [FileEntry(path=f"f{i}", abspath=f"/nonexistent/f{i}", apparent_bytes=1 << 20, allocated_bytes=1 << 20)
           for i in range(20)]
heavy = {5: 900.0, 17: 1000.0}
seen, ok = [], True
for i, entry in parallel.each_file(entries, record, ScanContext(workers=2),
                                   cost=lambda e: heavy.get(int(e.path[1:]), 1.0) * (1 << 20)):
    seen.append(i)
    ok &= entry is entries[i] and bool(entry.warnings)
print(json.dumps([parallel.fork_safe(), seen, ok, os.getpid(), sorted({e.warnings[0] for e in entries})]))
"""


def test_each_file_with_costs_yields_in_file_order_from_workers():
    # a process of its own: this one may hold threads (other tests') and then never forks
    p = subprocess.run([sys.executable, "-c", _ORDER_CODE], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    safe, seen, ok, pid, pids = json.loads(p.stdout)
    assert safe and ok
    assert seen == list(range(20))
    assert f"pid {pid}" not in pids and len(pids) >= 1      # the workers did it


def test_scan_cost_reads_the_fsp_flags_of_big_files(sparse_fixtures, tmp_path):
    fx = sparse_fixtures / "innodb" / "16k" / "fx"
    costs = {}
    for name in ("t_dynamic", "t_pc_lz4", "t_pc_bzip2", "t_pc_legacy_zlib"):
        # page 0 of the real file, the rest a hole: 8 MiB, over COST_PROBE_BYTES
        dst = tmp_path / f"{name}.ibd"
        with open(fx / f"{name}.ibd", "rb") as src, open(dst, "wb") as out:
            out.write(src.read(16384))
            out.truncate(8 << 20)
        e = FileEntry(path=dst.name, abspath=str(dst), apparent_bytes=8 << 20, allocated_bytes=16384)
        costs[name] = innodb_scan.scan_cost(e) / (8 << 20)
    assert costs["t_dynamic"] == 1.0
    assert costs["t_pc_lz4"] == innodb_scan.COST_PAGE_COMPRESSED
    assert costs["t_pc_legacy_zlib"] == innodb_scan.COST_PAGE_COMPRESSED     # legacy layout: flags say page_compressed
    assert costs["t_pc_bzip2"] == innodb_scan.COST_BZIP2
    # a scan decoding only the fragment extents' pages (owners only) weighs them lighter
    for name, light in (("t_dynamic", 1.0), ("t_pc_lz4", innodb_scan.COST_PAGE_COMPRESSED_LIGHT),
                        ("t_pc_bzip2", innodb_scan.COST_BZIP2_LIGHT)):
        e = FileEntry(path=f"{name}.ibd", abspath=str(tmp_path / f"{name}.ibd"), apparent_bytes=8 << 20,
                      allocated_bytes=16384)
        assert innodb_scan.scan_cost_light(e) / (8 << 20) == light
    # small files and files that cannot be read weigh their size
    small = shutil.copyfile(fx / "t_pc_bzip2.ibd", tmp_path / "small.ibd")
    size = os.path.getsize(small)
    if size < innodb_scan.COST_PROBE_BYTES:
        assert innodb_scan.scan_cost(FileEntry(path="s", abspath=str(small), apparent_bytes=size,
                                               allocated_bytes=size)) == size
    gone = FileEntry(path="g", abspath=str(tmp_path / "gone.ibd"), apparent_bytes=8 << 20, allocated_bytes=0)
    assert innodb_scan.scan_cost(gone) == 8 << 20

"""Huge and sparse (issue 8, reliability): a 1 TB sparse file named like an
InnoDB tablespace and like a TokuDB dictionary (all holes, and a real header
followed by a terabyte of hole), and a directory of 100k small files.

Each scan runs in a fresh interpreter (``hardening_util.run_probe``) so its
peak RSS (``getrusage``), page faults and bytes read (``/proc/self/io``
rchar) are its own.  Reading a 1 TB hole through mmap would cost 2^28 page
faults; through pread, a terabyte of rchar.  The only time limit is a
generous hang guard.
"""
from __future__ import annotations

import os
import shutil
import pytest

import hardening_util as hu

TB = 1 << 40
HANG_GUARD_S = 120

def _check(res: dict, name: str, rss_mib: int = 256) -> None:
    assert not [e for e in res["errors"] if "parser failed" in e], res["errors"]
    for e in res["first_file_errors"]:
        assert name in e, e
    grown = (res["maxrss_after_kib"] - res["maxrss_before_kib"]) / 1024
    assert grown < rss_mib, f"peak RSS grew by {grown:.0f} MiB"
    assert res["minflt"] + res["majflt"] < 200_000, res     # 1 TB through mmap: 268M faults
    assert res["rchar"] < 256 << 20, res                     # 1 TB through pread: 1 TB


def _sparse(tmp_path, name: str, seed: str | None) -> str:
    p = tmp_path / name
    if seed:
        hu.sparse_copyfile(seed, str(p))
    else:
        p.touch()
    os.truncate(p, TB)
    st = os.stat(p)
    assert st.st_size == TB and st.st_blocks * 512 < 64 << 20
    return str(p)


def _seed(root, engine: str, suffix: str) -> str:
    return next(t.abspath for t in hu.find_targets(root)
                if t.engine == engine and t.abspath.endswith(suffix) and os.path.getsize(t.abspath) > 65536)


@pytest.mark.parametrize("seeded", [False, True], ids=["all-hole", "real-header"])
def test_terabyte_sparse_tokudb(tmp_path, sparse_fixtures, seeded):
    path = _sparse(tmp_path, "huge.tokudb", _seed(sparse_fixtures, "tokudb", ".tokudb") if seeded else None)
    res = hu.run_probe(path, timeout=HANG_GUARD_S)
    _check(res, "huge.tokudb")
    assert res["engines"] == ["tokudb"] and res["apparent"]["huge.tokudb"] == TB
    holes = res["holes"]["huge.tokudb"]
    assert holes and holes[-1][0] + holes[-1][1] == TB
    if not seeded:
        assert res["first_file_errors"], "an all-hole dictionary must be reported"


@pytest.mark.parametrize("variant", ["all-hole", "real-header", "claims-terabyte"])
def test_terabyte_sparse_ibd(tmp_path, sparse_fixtures, variant):
    """(Until parsers/innodb commit baad665 the page map read the FIL header of
    every page of the hole: minutes and 18 GB of RSS for this file.)"""
    path = _sparse(tmp_path, "huge.ibd", _seed(sparse_fixtures, "innodb", ".ibd") if variant != "all-hole" else None)
    if variant == "claims-terabyte":      # the FSP header says the tablespace is 2^26 pages
        with open(path, "r+b") as f:
            f.seek(38 + 8)
            f.write((TB // 16384).to_bytes(4, "big"))
    res = hu.run_probe(path, timeout=HANG_GUARD_S, rss_limit_mib=1024)
    _check(res, "huge.ibd")
    assert res["engines"] == ["innodb"] and res["apparent"]["huge.ibd"] == TB
    assert res["first_file_errors"], "a terabyte of hole in a tablespace is worth a message"


def test_terabyte_sparse_file_facts_only(tmp_path):
    """The shared layer alone (what `read_facts` does): a handful of syscalls."""
    import resource
    from dbxray.parsers.fileio import ReadOnlyFile
    p = _sparse(tmp_path, "facts.ibd", None)
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    with ReadOnlyFile(p) as f:
        assert f.size == TB and f.holes() == [(0, TB)] and f.allocated_bytes == 0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    assert r1.ru_minflt - r0.ru_minflt < 1000


def _many_files(d, n: int = 100_000) -> None:
    """n small files in 100 folders: mostly unknown names (sniffed), 1% named
    like InnoDB tablespaces and 1% like TokuDB dictionaries (zero-filled: errors).
    (Until parsers/innodb commit baad665 a corrupt one-page tablespace cost
    ~0.2 s of legacy-checksum folding: 1000 of them took 3.5 minutes.)"""
    per = n // 100
    for j in range(100):
        sub = d / f"sub{j:03d}"
        sub.mkdir()
        for i in range(per):
            if i == 0:
                name, body = f"t{i}.ibd", bytes(16384)
            elif i == 1:
                name, body = f"t{i}.tokudb", bytes(8192)
            else:
                name, body = f"f{i:05d}.dat", b"x" * 100
            fd = os.open(sub / name, os.O_WRONLY | os.O_CREAT, 0o644)
            os.write(fd, body)
            os.close(fd)


def test_hundred_thousand_small_files(tmp_path):
    d = tmp_path / "many"
    d.mkdir()
    try:
        _many_files(d)
        res = hu.run_probe(str(d), timeout=HANG_GUARD_S * 2, rss_limit_mib=1024)
    finally:
        shutil.rmtree(d, ignore_errors=True)        # pytest keeps tmp dirs of 3 sessions
    assert res["files"] == 100_000
    assert sorted(res["engines"]) == ["innodb", "tokudb"]
    assert not [e for e in res["errors"] if "parser failed" in e], res["errors"]
    grown = (res["maxrss_after_kib"] - res["maxrss_before_kib"]) / 1024
    assert grown < 768, f"peak RSS grew by {grown:.0f} MiB for 100k files"
    assert res["rchar"] < 256 << 20
    print(f"\n100k files: {res['seconds']:.1f} s, peak RSS +{grown:.0f} MiB, "
          f"{res['rchar'] >> 20} MiB read, {res['file_errors']} file errors")

"""full_crc32 page_compressed pages are checked from their stored bytes alone
(parsers/innodb/checksum.py ``full_crc32_prefixes_ok``, parsers/innodb/pagemap.py
``_full_crc32_stored_ok``): the same verdicts as the check over whole pages read around
their punched tails, for the C and the numpy CRC paths, a bad page still bad, a stored length that does not
fit the page bad without a read, and no hole read on tmpfs."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from dbxray.parsers.fileio import ReadOnlyFile
from dbxray.parsers.innodb import checksum as ck
from dbxray.parsers.innodb import pagemap
from dbxray.parsers.innodb.pagemap import build_page_map

from fixtures_util import fixtures_dir, punch_hole, restore_ranges

BLOCK = 4096


def _crc_page(body: bytes) -> bytes:
    """``body`` with the full_crc32 trailer: the crc32c of the bytes before it, big-endian."""
    rows = np.frombuffer(body, dtype=np.uint8).reshape(1, -1)
    return body + int(ck.crc32c_rows_numpy(rows)[0]).to_bytes(4, "big")


def _stored_set(seed: int = 3):
    rng = np.random.default_rng(seed)
    stored, want = [], []
    for k in range(60):
        n = int(rng.integers(8, 2048))
        buf = bytearray(_crc_page(rng.integers(0, 256, size=n - 4, dtype=np.uint8).tobytes()))
        good = k % 5 != 0
        if not good:
            buf[int(rng.integers(0, n))] ^= 0x40          # one bit flipped anywhere
        stored.append(bytes(buf))
        want.append(good)
    stored += [b"", b"\x01\x02\x03", b"\0" * 7]            # too short for a page: never good
    want += [False, False, False]
    return stored, np.array(want)


def test_prefix_check_matches_the_whole_row_check_on_both_crc_paths(monkeypatch):
    stored, want = _stored_set()
    got_c = ck.full_crc32_prefixes_ok(stored)
    monkeypatch.setattr(ck, "_crc_one", None)
    got_numpy = ck.full_crc32_prefixes_ok(stored)
    assert got_c.dtype == bool and np.array_equal(got_c, want)
    assert np.array_equal(got_numpy, want)
    # as full_crc32_ok gives them from zero-padded rows and their stored lengths
    width = max(len(b) for b in stored)
    rows = np.zeros((len(stored), width), dtype=np.uint8)
    for i, b in enumerate(stored):
        rows[i, :len(b)] = np.frombuffer(b, dtype=np.uint8)
    sizes = np.array([len(b) for b in stored], dtype=np.int64)
    assert np.array_equal(ck.full_crc32_ok(rows, sizes), want)


def test_stored_ok_reads_no_page_whose_length_does_not_fit():
    asked: list[tuple[list[int], list[int]]] = []
    good = _crc_page(b"x" * 100)

    def prefixes_of(idx, lengths):
        asked.append((list(idx), list(lengths)))
        return [good[:n] if n == len(good) else b"\0" * n for n in lengths]

    sel = np.array([3, 4, 5, 6])
    sizes = np.array([len(good), 4, 20000, len(good) - 1], dtype=np.int64)
    ok = pagemap._full_crc32_stored_ok(prefixes_of, sel, sizes, 16384, lambda: None)
    assert ok.tolist() == [True, False, False, False]
    assert asked == [([3, 6], [len(good), len(good) - 1])]    # pages 4 and 5 never read


def _dig_holes(path: Path) -> None:
    """Punch every all-zero 4 KiB block of ``path`` (as ``fallocate --dig-holes``: MariaDB's
    page_compressed pages end in zeros it punched)."""
    data = path.read_bytes()
    zero = bytes(BLOCK)
    for off in range(0, len(data) - len(data) % BLOCK, BLOCK):
        if data[off:off + BLOCK] == zero:
            punch_hole(path, off, BLOCK)


def _copy(dest: Path, rel: str) -> Path:
    root = fixtures_dir()
    if root is None:
        pytest.skip("fixtures missing")
    import json
    man = json.loads((root / "innodb" / "manifest.json").read_text())
    entry = next(e for e in man["files"] if e["path"] == rel)
    out = dest / Path(rel).name
    shutil.copyfile(root / "innodb" / rel, out)
    os.chmod(out, 0o644)
    ranges = entry.get("fiemap_ranges") or [[o, n, "hole"] for o, n in entry.get("holes", [])]
    restore_ranges(out, ranges)
    _dig_holes(out)
    return out


def _verdicts(path: Path, prefixes: bool, monkeypatch) -> np.ndarray:
    real = pagemap.verify

    def rows_only(*a, **k):
        k["prefixes_of"] = None
        return real(*a, **k)

    with monkeypatch.context() as m:
        if not prefixes:
            m.setattr(pagemap, "verify", rows_only)
        with ReadOnlyFile(str(path)) as f:
            pm = build_page_map(f, str(path), verify_checksums=True)
    assert pm.checksum_checked and pm.checksum_algorithm == "full_crc32"
    return pm.checksum_ok, pm


@pytest.mark.parametrize("rel", ["16k/fx/t_pc_lz4.ibd", "4k/fx/t4_pc_zlib.ibd", "64k/fx/t64_pc_lz4.ibd"])
def test_stored_prefixes_give_the_verdicts_of_whole_pages(tmp_path, monkeypatch, rel):
    path = _copy(tmp_path, rel)
    ok, pm = _verdicts(path, True, monkeypatch)
    comp = np.nonzero(pm.compressed & (pm.stored < pm.physical))[0]
    assert len(comp) >= 8 and ok[comp].all()
    # one stored byte of a compressed page flipped: bad, the same either way
    flip = int(comp[len(comp) // 2])
    with open(path, "r+b") as fh:
        pos = flip * pm.physical + int(pm.stored[flip]) // 2
        fh.seek(pos)
        b = fh.read(1)
        fh.seek(pos)
        fh.write(bytes([b[0] ^ 0x20]))
    before = _verdicts(path, False, monkeypatch)[0]
    after = _verdicts(path, True, monkeypatch)[0]
    assert not after[flip] and np.array_equal(before, after)
    assert np.count_nonzero(~after) == 1 + np.count_nonzero(~ok)


def test_no_hole_is_read_on_tmpfs(monkeypatch):
    shm = Path("/dev/shm")
    if not shm.is_dir() or os.statvfs(shm).f_bsize != BLOCK:
        pytest.skip("no tmpfs at /dev/shm")
    d = shm / f"dbxray-stored-{os.getpid()}"
    d.mkdir()
    try:
        path = _copy(d, "16k/fx/t_pc_lz4.ibd")
        st = path.stat()
        ok, pm = _verdicts(path, True, monkeypatch)
        assert ok[pm.compressed].all()
        after = path.stat()
        assert after.st_blocks == st.st_blocks and after.st_mtime_ns == st.st_mtime_ns
        assert st.st_blocks * 512 < st.st_size        # the digging made holes
    finally:
        shutil.rmtree(d, ignore_errors=True)

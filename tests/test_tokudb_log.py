"""Recovery logs: framing, version, entries and checksums against tokuft_logprint,
for the fixture log and the twelve real public logs (versions 24-29)."""
from __future__ import annotations

import pytest

from dbxray.parsers.tokudb.log import read_log
from test_tokudb_manifest import TOKU, logprint_lines, manifest

PUBLIC = sorted((TOKU / "public" / "perconaft-upgrade-recovery-logs").glob("*/log*.tokulog*"))


def _check(path, dump):
    b = path.read_bytes()
    lf = read_log(b, len(b))
    want = logprint_lines(dump)
    assert lf.errors == []
    assert lf.entries == len(want) == len(lf.frames)
    assert lf.end_offset == len(b)
    for (off, n, cmd, lsn, crc), w in zip(lf.frames, want):
        assert (cmd, lsn, crc, n) == (w["cmd"], w["lsn"], w["crc"], w["len"])
    assert dump.read_text().splitlines()[0] == f"tokulog v.{lf.version}"
    return lf


@pytest.mark.parametrize("path", PUBLIC, ids=[p.parent.name for p in PUBLIC])
def test_public_logs(path):
    dump = TOKU / "public" / "dumps" / f"{path.parent.name}_{path.name}.logprint.txt"
    lf = _check(path, dump)
    assert lf.version == int(path.name.rsplit("tokulog", 1)[1])
    assert lf.clean_shutdown == path.parent.name.endswith("clean")
    assert lf.entries == (3 if lf.clean_shutdown else 2)


def test_public_logs_cover_versions_24_to_29():
    assert sorted({int(p.name.rsplit("tokulog", 1)[1]) for p in PUBLIC}) == list(range(24, 30))


def test_fixture_log():
    m = next(f for f in manifest()["files"] if "log_entries" in f)
    lf = _check(TOKU / m["path"], TOKU / m["dumps"]["logprint"])
    assert lf.entries == m["log_entries"]
    assert lf.bad_checksums == 0


def test_torn_and_corrupt_log(tmp_path):
    src = PUBLIC[0].read_bytes()
    # a torn tail: the last entry cut short -> entries before it framed, error at its offset
    lf = read_log(src[:-5], len(src) - 5)
    assert lf.entries == 2 and lf.errors and lf.errors[0][0] == lf.end_offset
    # a flipped byte inside the first entry's fields -> checksum mismatch at offset 12
    bad = bytearray(src)
    bad[12 + 6] ^= 0xFF
    lf = read_log(bytes(bad), len(bad))
    assert lf.bad_checksums == 1 and lf.errors[0][0] == 12
    # a length word pointing past the end
    bad = bytearray(src)
    bad[12:16] = (10 ** 6).to_bytes(4, "little")
    lf = read_log(bytes(bad), len(bad))
    assert lf.entries == 0 and lf.errors[0][0] == 12
    # an unknown version
    bad = bytearray(src)
    bad[8:12] = (99).to_bytes(4, "big")
    lf = read_log(bytes(bad), len(bad))
    assert lf.entries == 0 and "unknown log version 99" in lf.errors[0][1]

"""MySQL 8.0.20+ doublewrite files ``#ib_16384_<n>.dblwr`` (issue 15 item 4), on the one real
pair in the fixtures: the MySQL 8.4 data directory of mysql-test's std_data
(``innodb-mysql/mysql-std_data/datadirs/mysql_inplace_upgrade84_lctn0.zip``: 4 MiB and 12 MiB,
written by the server at its shutdown).

Truth, independent of dbxray's reader: the file sizes (manifest ``observed.members``), the
raw slot bytes, and the data files themselves: every copy names a tablespace of the data dir
(found by page 0's space id), and that tablespace's page is either byte-identical to the copy
or newer (a larger FIL_PAGE_LSN: written again after the copy), never older."""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from dbxray.parsers.fileio import ReadOnlyFile
from dbxray.parsers.innodb.dblwr import SYNC_PAGE_FLUSH_SLOTS, read_dblwr
from dbxray.parsers.scan import scan

PAGE = 16384
ZIP = "mysql-std_data/datadirs/mysql_inplace_upgrade84_lctn0.zip"


def _wanted(name: str) -> bool:
    base = name.rsplit("/", 1)[-1]
    return base.endswith((".ibd", ".dblwr")) or base in ("ibdata1", "undo_001", "undo_002")


@pytest.fixture(scope="module")
def datadir(fixtures_root, tmp_path_factory):
    out = tmp_path_factory.mktemp("dblwr84")
    with zipfile.ZipFile(fixtures_root / "innodb-mysql" / ZIP) as z:
        z.extractall(out, [m for m in z.namelist() if _wanted(m) and not m.endswith("/")])
    return out / "data"


@pytest.fixture(scope="module")
def members(fixtures_root):
    m = json.loads((fixtures_root / "innodb-mysql" / "manifest.json").read_text())
    entry = next(e for e in m["files"] if e["path"] == ZIP)
    return {x["name"]: x for x in entry["observed"]["members"]}


@pytest.fixture(scope="module")
def scanned(datadir):
    return {f.path: f for f in scan(str(datadir)).files}


def _space_files(datadir: Path) -> dict[int, Path]:
    out = {}
    for p in datadir.rglob("*"):
        if p.is_file() and not p.name.endswith(".dblwr") and p.stat().st_size >= PAGE:
            head = p.read_bytes()[:38]
            if int.from_bytes(head[24:26], "big") == 8 and int.from_bytes(head[4:8], "big") == 0:   # FSP_HDR
                out[int.from_bytes(head[34:38], "big")] = p
    return out


def test_slots_and_segments(scanned, members, datadir):
    d0 = scanned["#ib_16384_0.dblwr"].sections["innodb"]["doublewrite"]
    d1 = scanned["#ib_16384_1.dblwr"].sections["innodb"]["doublewrite"]
    assert d0["slots"] * PAGE == members["data/#ib_16384_0.dblwr"]["bytes"] and d0["trailing_bytes"] == 0
    assert d1["slots"] * PAGE == members["data/#ib_16384_1.dblwr"]["bytes"]
    assert (d0["file_id"], d0["page_size"], d0["segments"]) == (0, PAGE, "flush-list batch")
    assert (d1["file_id"], d1["segments"]) == (1, "LRU batch + single-page flush")
    # File::s_n_pages = the even file's size; the one LRU file adds SYNC_PAGE_FLUSH_SLOTS single-page slots
    assert d0["batch_slots"] == d1["batch_slots"] == d0["slots"] == 256
    assert d1["single_page_slots"] == SYNC_PAGE_FLUSH_SLOTS == d1["slots"] - 256
    for name, d in (("#ib_16384_0.dblwr", d0), ("#ib_16384_1.dblwr", d1)):
        raw = np.fromfile(datadir / name, dtype=np.uint8).reshape(-1, PAGE)
        written = np.nonzero(raw.any(axis=1))[0]
        assert [c["slot"] for c in d["copies"]] == written.tolist()
        assert d["written_slots"] == len(written) == 256
        assert d["bad_checksum_slots"] == 0
        assert not scanned[name].warnings and not scanned[name].errors
        for c in d["copies"]:
            r = raw[c["slot"]].tobytes()
            assert (c["space_id"], c["page_no"], c["lsn"]) == (int.from_bytes(r[34:38], "big"),
                                                                int.from_bytes(r[4:8], "big"),
                                                                int.from_bytes(r[16:24], "big"))
    # the copies are no index pages of the data dir: no file lists them
    assert "indexes" not in scanned["#ib_16384_0.dblwr"].sections["innodb"]


def test_copies_equal_or_older_than_the_data_files(scanned, datadir):
    spaces = _space_files(datadir)
    identical = newer = 0
    for name in ("#ib_16384_0.dblwr", "#ib_16384_1.dblwr"):
        raw = np.fromfile(datadir / name, dtype=np.uint8).reshape(-1, PAGE)
        for c in scanned[name].sections["innodb"]["doublewrite"]["copies"]:
            assert c["checksum_ok"] is True and c["page_size"] == PAGE
            f = spaces[c["space_id"]]                      # every copy names a tablespace of the data dir
            with open(f, "rb") as fh:
                fh.seek(c["page_no"] * PAGE)
                live = fh.read(PAGE)
            live_lsn = int.from_bytes(live[16:24], "big")
            if live == raw[c["slot"]].tobytes():
                identical += 1
            else:
                assert live_lsn > c["lsn"], (name, c)      # written again after the copy, never older
                newer += 1
            types = {"FIL_PAGE_INDEX": 17855, "FIL_PAGE_UNDO_LOG": 2, "FIL_PAGE_SDI": 17853}
            if c["type"] in types:
                assert int.from_bytes(raw[c["slot"]][24:26].tobytes(), "big") == types[c["type"]]
    assert identical + newer == 512 and identical > 300 and newer > 100      # 338 and 174 on 2026-11-24
    # the spaces the copies name: mysql.ibd, both undo tablespaces, the system tablespace, user tables
    named = {c["space_id"] for n in ("#ib_16384_0.dblwr", "#ib_16384_1.dblwr")
             for c in scanned[n].sections["innodb"]["doublewrite"]["copies"]}
    assert {0, 0xFFFFFFFE, 0xFFFFFFEF, 0xFFFFFFEE} <= named


def test_a_torn_copy_is_named(datadir, tmp_path):
    """A copy whose bytes no longer match its checksum (a torn write into the doublewrite
    file): that slot fails, named in a warning; the others still pass."""
    d = tmp_path / "data"
    d.mkdir()
    data = bytearray((datadir / "#ib_16384_0.dblwr").read_bytes())
    data[7 * PAGE + 1000] ^= 0x55
    (d / "#ib_16384_0.dblwr").write_bytes(bytes(data))
    e = scan(str(d)).files[0]
    dw = e.sections["innodb"]["doublewrite"]
    bad = [c["slot"] for c in dw["copies"] if c["checksum_ok"] is False]
    assert bad == [7] and dw["bad_checksum_slots"] == 1
    assert dw["batch_slots"] == 256 and dw["single_page_slots"] == 0
    assert any("slot 7" in w and "checksum" in w for w in e.warnings), e.warnings
    with ReadOnlyFile(str(d / "#ib_16384_0.dblwr")) as f:
        with pytest.raises(Exception, match="not named"):
            read_dblwr(f, "dblwr.bin")

"""Redo log headers: MariaDB 10.11 ib_logfile0 (../shared/fixtures/innodb, datadir16k) and the
MySQL 8.0.13 / 8.0.16 / 8.4.8 data directories of ../shared/fixtures/innodb-mysql (zips,
unzipped into tmp), field by field against the manifests."""
from __future__ import annotations

import json
import struct
import zipfile

import pytest

from dbxray.parsers.innodb import redo

DATADIR_ZIPS = ("data_80016.zip", "mysql_inplace_upgrade84_lctn0.zip", "wl12261_upgrade_80013.zip")


@pytest.fixture(scope="module")
def inno_manifest(sparse_fixtures):
    return json.loads((sparse_fixtures / "innodb" / "manifest.json").read_text())


@pytest.fixture(scope="module")
def mysql_manifest(sparse_fixtures):
    return json.loads((sparse_fixtures / "innodb-mysql" / "manifest.json").read_text())


@pytest.fixture(scope="module")
def redo_members(sparse_fixtures, tmp_path_factory, mysql_manifest):
    """Extract only the redo log members of the three data directory zips; yield (path, observed)."""
    out = tmp_path_factory.mktemp("redo")
    found = []
    for entry in mysql_manifest["files"]:
        name = entry["path"].rsplit("/", 1)[-1]
        if name not in DATADIR_ZIPS:
            continue
        with zipfile.ZipFile(sparse_fixtures / "innodb-mysql" / entry["path"]) as z:
            for m in entry["observed"]["members"]:
                if m.get("kind") == "redo":
                    z.extract(m["name"], out / name)
                    found.append((out / name / m["name"], m))
    return found


def test_mariadb_ib_logfile0(sparse_fixtures, inno_manifest):
    path = sparse_fixtures / "innodb" / "datadir16k" / "ib_logfile0"
    h = redo.read_redo_header(str(path), "datadir16k/ib_logfile0")
    inst = inno_manifest["instances"]["datadir16k"]
    assert h.errors == []
    assert h.format == redo.FORMAT_10_8 and h.vendor == "MariaDB" and not h.encrypted
    # LOG_HEADER_CREATOR_CURRENT is "MariaDB " + major.minor.patch
    assert h.creator == "MariaDB " + inst["server_version"].split("-")[0]
    assert h.header_checksum == "crc32c"
    assert h.size == inst["variables"]["innodb_log_file_size"]
    assert [c.offset for c in h.checkpoints] == [redo.CHECKPOINT_1, redo.CHECKPOINT_2]
    assert all(c.valid for c in h.checkpoints)
    # after the slow shutdown every page was flushed: no page LSN is past the last checkpoint
    lsns = [f["pages"]["fsp_header"]["fil_header"]["lsn"] for f in inno_manifest["files"]
            if f["path"].startswith("datadir16k/") and "pages" in f]
    assert len(lsns) == 9
    assert h.checkpoint_lsn >= max(lsns)
    assert h.checkpoint_lsn == max(c.lsn for c in h.checkpoints)


def test_mysql_redo_headers_match_manifest(redo_members):
    assert len(redo_members) == 2 + 2 + 32
    for path, m in redo_members:
        h = redo.read_redo_header(str(path), m["name"])
        assert h.format == m["observed"]["log_format"], m["name"]
        assert h.creator == m["observed"]["creator"], m["name"]
        assert h.size == m["bytes"]
        assert h.errors == []
        if h.unused:
            assert h.checkpoints == [] and h.checkpoint_lsn is None
            continue
        assert h.vendor == "MySQL"
        assert h.header_checksum == "crc32c"
        assert h.format_name == "MySQL " + redo.MYSQL_FORMATS[h.format]
        if h.checkpoints:
            assert all(c.valid and c.lsn >= h.start_lsn for c in h.checkpoints)


def test_mysql_8030_redo_files(redo_members):
    active = [(p, m) for p, m in redo_members if "#innodb_redo" in m["name"] and m["observed"]["log_format"] == 6]
    assert len(active) == 2
    for p, m in active:
        h = redo.read_redo_header(str(p), m["name"])
        assert h.log_uuid is not None and h.flags is not None
        assert len(h.checkpoints) == 2
    uuids = {redo.read_redo_header(str(p)).log_uuid for p, _ in active}
    assert len(uuids) == 1                     # one data directory, one log_uuid


# -- bad input ---------------------------------------------------------------

def test_truncated_header(tmp_path):
    p = tmp_path / "ib_logfile0"
    p.write_bytes(b"Phys" + bytes(96))
    with pytest.raises(redo.RedoError, match=r"ib_logfile0 @ offset 0: truncated redo log header \(100 bytes"):
        redo.read_redo_header(str(p), "ib_logfile0")


def test_empty_and_missing_file(tmp_path):
    p = tmp_path / "ib_logfile0"
    p.write_bytes(b"")
    with pytest.raises(redo.RedoError, match="ib_logfile0 @ offset 0: truncated"):
        redo.read_redo_header(str(p), "ib_logfile0")
    with pytest.raises(redo.RedoError, match="nope: cannot open"):
        redo.read_redo_header(str(tmp_path / "nope"), "nope")


def test_truncated_before_checkpoints(sparse_fixtures, tmp_path):
    src = (sparse_fixtures / "innodb" / "datadir16k" / "ib_logfile0").read_bytes()
    p = tmp_path / "ib_logfile0"
    p.write_bytes(src[:5000])
    h = redo.read_redo_header(str(p), "ib_logfile0")
    assert h.errors == ["ib_logfile0 @ offset 8192: truncated before the checkpoint block"]
    assert [c.offset for c in h.checkpoints] == [4096]


def test_corrupt_header_and_checkpoint(sparse_fixtures, tmp_path):
    src = bytearray((sparse_fixtures / "innodb" / "datadir16k" / "ib_logfile0").read_bytes()[:12288])
    src[20] ^= 0xFF                              # inside the creator string
    src[8192 + 3] ^= 0x01                        # inside checkpoint 2's LSN
    h = redo.parse_redo_header(bytes(src), "ib_logfile0")
    assert h.header_checksum == "bad"
    assert h.errors == ["ib_logfile0 @ offset 0: redo header checksum mismatch"]
    assert [c.valid for c in h.checkpoints] == [True, False]
    assert h.checkpoint_lsn == h.checkpoints[0].lsn


def test_unknown_format():
    blk = bytearray(512)
    struct.pack_into(">I", blk, 0, 0x12345678)
    blk[16:21] = b"Other"
    with pytest.raises(redo.RedoError, match=r"x @ offset 0: unknown redo log format 0x12345678"):
        redo.parse_redo_header(bytes(blk), "x")


def test_crc32c_known_value():
    # RFC 3720 (iSCSI) CRC-32C test vector: 32 bytes of zeros -> 0x8A9136AA
    assert redo.crc32c(bytes(32)) == 0x8A9136AA


# -- older layouts, built from the constants of log0constants.h / MariaDB log0log.h ---------
# (no fixture holds a MySQL 5.7 or MariaDB 10.2-10.7 redo log; these blocks are written here
# from the documented layout and read back)

def _block(fields: list[tuple[int, bytes]], checksum: int | None = None) -> bytes:
    b = bytearray(512)
    for off, raw in fields:
        b[off:off + len(raw)] = raw
    struct.pack_into(">I", b, 508, redo.crc32c(bytes(b[:508])) if checksum is None else checksum)
    return bytes(b)


def _log(fmt: int, creator: bytes, cps: list[tuple[int, int, int]], end_lsns=None, checksum=None) -> bytes:
    hdr = _block([(0, struct.pack(">IIQ", fmt, 0, 8192)), (16, creator)], checksum)
    blocks = [hdr]
    for k, (no, lsn, off) in enumerate(cps):
        fields = [(0, struct.pack(">QQQQ", no, lsn, off, 1 << 20))]
        if end_lsns:
            fields.append((redo.LOG_CHECKPOINT_END_LSN, struct.pack(">Q", end_lsns[k])))
        blocks.append(_block(fields, checksum))
    cp1, cp2 = blocks[1], blocks[2]
    return hdr + cp1 + bytes(512) + cp2


def test_mysql_57_layout():
    h = redo.parse_redo_header(_log(1, b"MySQL 5.7.44", [(6, 900000, 2048), (7, 950000, 4096)]), "ib_logfile0")
    assert (h.vendor, h.format_name, h.creator, h.start_lsn) == ("MySQL", "MySQL VERSION_5_7_9", "MySQL 5.7.44", 8192)
    assert [(c.checkpoint_no, c.lsn, c.lsn_offset, c.valid) for c in h.checkpoints] == \
        [(6, 900000, 2048, True), (7, 950000, 4096, True)]
    assert h.checkpoint_lsn == 950000 and h.errors == []


def test_mariadb_105_layout_and_no_checksum_magic():
    raw = _log(redo.FORMAT_10_5, b"MariaDB 10.5.27", [(3, 70000, 2048), (4, 71000, 3000)], end_lsns=[70010, 71010])
    h = redo.parse_redo_header(raw, "ib_logfile0")
    assert (h.vendor, h.format_name) == ("MariaDB", "MariaDB FORMAT_10_5")
    assert [c.end_lsn for c in h.checkpoints] == [70010, 71010]
    raw = _log(1, b"MariaDB 10.2.44", [(1, 5000, 2048), (2, 6000, 2048)], checksum=redo.LOG_NO_CHECKSUM_MAGIC)
    h = redo.parse_redo_header(raw, "ib_logfile0")
    assert (h.vendor, h.format_name, h.header_checksum) == ("MariaDB", "MariaDB FORMAT_10_2", "none")
    assert [c.checksum for c in h.checkpoints] == ["none", "none"] and h.checkpoint_lsn == 6000


def test_bad_checkpoint_checksum_is_not_used():
    raw = bytearray(_log(1, b"MySQL 5.7.44", [(6, 900000, 2048), (7, 950000, 4096)]))
    raw[1536 + 12] ^= 0xFF
    h = redo.parse_redo_header(bytes(raw), "ib_logfile0")
    assert [c.valid for c in h.checkpoints] == [True, False]
    assert h.checkpoint_lsn == 900000

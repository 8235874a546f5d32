"""Bad input: a named error with part, file and offset; the rest of the table
still shown; nothing written."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
from pathlib import Path

import pytest

from dbxray.parsers.model import UNIT_CORRUPT, ScanContext
from dbxray.parsers.scan import scan as _scan


def scan(path):
    return _scan(path, ScanContext(verify_checksums=False))

DB = "fx"


@pytest.fixture(scope="module")
def manifest(fixtures_root):
    return json.loads((fixtures_root / "clickhouse" / "manifest.json").read_text())


@pytest.fixture
def datadir(fixtures_root, tmp_path) -> Path:
    out = tmp_path / "datadir"
    shutil.copytree(fixtures_root / "clickhouse" / "datadir", out, symlinks=True)
    for dirpath, dirnames, filenames in os.walk(out):
        os.chmod(dirpath, 0o755)
        for n in filenames:
            p = os.path.join(dirpath, n)
            if not os.path.islink(p):
                os.chmod(p, 0o644)
    return out


def part_dir(datadir: Path, manifest, table: str, part: str) -> Path:
    mp = next(p for p in manifest["tables"][table]["system_parts"] if p["name"] == part)
    return datadir / mp["rel_path"]


def table_json(ds, table: str) -> dict:
    return next(t for t in ds.sections["clickhouse"]["tables"] if t["table"] == table)


def file_errors(ds, path_end: str) -> list[str]:
    return [e for f in ds.files if f.path.endswith(path_end) for e in f.errors]


def assert_other_part_intact(ds, manifest, table: str, bad_part: str) -> None:
    t = table_json(ds, table)
    for mp in manifest["tables"][table]["system_parts"]:
        if mp["name"] == bad_part:
            continue
        p = next(x for x in t["parts"] if x["name"] == mp["name"])
        for f in ("rows", "bytes_on_disk", "data_compressed_bytes", "data_uncompressed_bytes", "marks_bytes"):
            assert p[f] == mp[f]


def snapshot(root: Path) -> dict:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for n in filenames:
            p = os.path.join(dirpath, n)
            st = os.lstat(p)
            data = b"" if os.path.islink(p) else open(p, "rb").read()
            out[p] = (st.st_size, st.st_mtime_ns, hashlib.sha256(data).hexdigest())
    return out


def test_checksums_unknown_version(datadir, manifest):
    pd = part_dir(datadir, manifest, "marks_mrk2", "202401_1_1_1")
    data = (pd / "checksums.txt").read_bytes()
    (pd / "checksums.txt").write_bytes(data.replace(b"version: 4", b"version: 9", 1))
    ds = scan(str(datadir))
    errs = file_errors(ds, "202401_1_1_1/checksums.txt")
    assert any("unknown checksums format version 9" in e and "@ offset 26" in e and "part 202401_1_1_1" in e
               for e in errs), errs
    assert_other_part_intact(ds, manifest, "marks_mrk2", "202401_1_1_1")
    t = table_json(ds, "marks_mrk2")
    bad = next(p for p in t["parts"] if p["name"] == "202401_1_1_1")
    assert bad["rows"] == 10415          # count.txt and the data are still read
    assert t["errors"]


def test_checksums_corrupt_body(datadir, manifest):
    pd = part_dir(datadir, manifest, "codecs", "202401_1_2_1")
    data = bytearray((pd / "checksums.txt").read_bytes())
    body = data.index(b"\n") + 1
    for i in range(body + 40, body + 60):
        data[i] ^= 0x5A
    (pd / "checksums.txt").write_bytes(bytes(data))
    ds = scan(str(datadir))
    errs = file_errors(ds, "202401_1_2_1/checksums.txt")
    assert any("compressed body" in e and "checksum" in e and "@ offset" in e for e in errs), errs
    assert_other_part_intact(ds, manifest, "codecs", "202401_1_2_1")


def test_block_runs_past_file_and_claims_gigabytes(datadir, manifest):
    pd = part_dir(datadir, manifest, "codecs", "202401_1_2_1")
    f = pd / "id.bin"          # NONE codec, 2 blocks
    data = bytearray(f.read_bytes())
    c0 = struct.unpack_from("<I", data, 17)[0]
    second = 16 + c0
    struct.pack_into("<I", data, second + 17, 0x7FFFFFFF)         # claims 2 GiB compressed
    f.write_bytes(bytes(data))
    g = pd / "uid.bin"
    data = bytearray(g.read_bytes())
    struct.pack_into("<I", data, 17, len(data) + 100)              # runs past the end
    g.write_bytes(bytes(data))
    ds = scan(str(datadir))
    e1 = file_errors(ds, "202401_1_2_1/id.bin")
    assert any(f"@ offset {second}" in e and "2147483647 compressed bytes" in e and "limit" in e for e in e1), e1
    e2 = file_errors(ds, "202401_1_2_1/uid.bin")
    assert any("@ offset 0" in e and "runs past the end of the file" in e for e in e2), e2
    entry = next(x for x in ds.files if x.path.endswith("202401_1_2_1/id.bin"))
    assert len(entry.units) == 1       # the block before the bad one is kept
    assert_other_part_intact(ds, manifest, "codecs", "202401_1_2_1")


def test_unknown_method_byte(datadir, manifest):
    pd = part_dir(datadir, manifest, "codecs", "202402_3_3_1")
    f = pd / "s_lz4.bin"
    data = bytearray(f.read_bytes())
    c0 = struct.unpack_from("<I", data, 17)[0]
    data[16 + c0 + 16] = 0x77
    f.write_bytes(bytes(data))
    ds = scan(str(datadir))
    errs = file_errors(ds, "202402_3_3_1/s_lz4.bin")
    assert any(f"@ offset {16 + c0}" in e and "unknown compression method byte 0x77" in e for e in errs), errs
    entry = next(x for x in ds.files if x.path.endswith("202402_3_3_1/s_lz4.bin"))
    assert len(entry.units) == 2 and entry.units["flags"][1] & UNIT_CORRUPT
    assert_other_part_intact(ds, manifest, "codecs", "202402_3_3_1")


def test_marks_shorter_than_count(datadir, manifest):
    pd = part_dir(datadir, manifest, "marks_mrk2", "202402_2_2_1")
    f = pd / "nq_UInt32.mrk2"
    data = f.read_bytes()
    f.write_bytes(data[:-48])            # drop the last two marks
    g = pd / "nq_UInt64.mrk2"
    g.write_bytes(g.read_bytes()[:-30])  # not even whole marks
    ds = scan(str(datadir))
    e1 = file_errors(ds, "202402_2_2_1/nq_UInt32.mrk2")
    assert any("count.txt says 9585" in e and "part 202402_2_2_1" in e and "@ offset 24" in e for e in e1), e1
    assert any("final mark" in e for e in e1), e1
    e2 = file_errors(ds, "202402_2_2_1/nq_UInt64.mrk2")
    assert any("partial mark" in e for e in e2), e2
    assert_other_part_intact(ds, manifest, "marks_mrk2", "202402_2_2_1")


def test_part_missing_files(datadir, manifest):
    pd = part_dir(datadir, manifest, "marks_default", "202401_1_1_1")
    (pd / "client_host.bin").unlink()
    (pd / "count.txt").unlink()
    ds = scan(str(datadir))
    errs = file_errors(ds, "202401_1_1_1/checksums.txt")
    assert any("client_host.bin" in e and "missing" in e for e in errs), errs
    assert any("count.txt" in e and "missing" in e for e in errs), errs
    t = table_json(ds, "marks_default")
    bad = next(p for p in t["parts"] if p["name"] == "202401_1_1_1")
    assert {c["name"] for c in bad["columns"]} >= {"digest", "client_host"}
    assert_other_part_intact(ds, manifest, "marks_default", "202401_1_1_1")


def test_part_missing_checksums_is_still_shown(datadir, manifest):
    pd = part_dir(datadir, manifest, "marks_default", "202402_2_2_1")
    (pd / "checksums.txt").unlink()
    ds = scan(str(datadir))
    t = table_json(ds, "marks_default")
    bad = next(p for p in t["parts"] if p["name"] == "202402_2_2_1")
    assert bad["rows"] == 9585 and bad["data_compressed_bytes"] == 374651
    assert any("checksums.txt" in e and "missing" in e for e in t["errors"]), t["errors"]


def test_broken_symlink(datadir, manifest):
    os.symlink("../../store/abc/abcdef00-0000-0000-0000-000000000000", datadir / "data" / DB / "ghost")
    ds = scan(str(datadir))
    errs = ds.errors
    assert any("ghost" in e and "broken symlink" in e for e in errs), errs
    assert len(ds.sections["clickhouse"]["tables"]) == len(manifest["tables"])


def test_metadata_sql_does_not_parse(datadir, manifest):
    mt = manifest["tables"]["features"]
    sql = datadir / mt["system_tables"]["metadata_path"]
    sql.write_text("ATTACH TABLE _ UUID '56ea41bb-0bea-4731-af07-787e9c8fd012'\n(\n    `ts` DateTime,\n"
                   "    oops\n)\nENGINE = MergeTree ORDER BY ts\n")
    ds = scan(str(datadir))
    errs = file_errors(ds, "features.sql")
    assert any("does not parse" in e and "@ offset" in e for e in errs), errs
    t = table_json(ds, "features")
    assert t["table"] == "features" and t["database"] == DB     # named from data/fx/features
    p = t["parts"][0]
    assert p["bytes_on_disk"] == mt["system_parts"][0]["bytes_on_disk"]
    assert [c["name"] for c in t["columns"]] == [c["name"] for c in mt["system_columns"]]


def test_scan_writes_nothing(datadir):
    pd = next(datadir.glob("store/*/*/202401_1_2_1"))
    (pd / "checksums.txt").write_bytes(b"checksums format version: 4\n\x00\x01")
    before = snapshot(datadir)
    scan(str(datadir))
    assert snapshot(datadir) == before


def test_outdated_part_not_counted(datadir, manifest):
    """A part covered by a merged one is shown as outdated and left out of the totals."""
    mt = manifest["tables"]["marks_default"]
    src = datadir / mt["system_parts"][0]["rel_path"]
    dst = src.parent / "202401_1_1_0"          # level 0: covered by 202401_1_1_1
    shutil.copytree(src, dst)
    ds = scan(str(datadir))
    t = table_json(ds, "marks_default")
    old = next(p for p in t["parts"] if p["name"] == "202401_1_1_0")
    assert old["active"] == 0 and old["state"] == "outdated"
    assert t["total_bytes"] == mt["system_tables"]["total_bytes"]
    assert t["active_parts"] == mt["system_tables"]["active_parts"]
    for c, mc in zip(t["columns"], mt["system_columns"]):
        assert c["compressed_bytes"] == mc["data_compressed_bytes"]


def test_ordinary_database_layout(fixtures_root, manifest, tmp_path):
    """An Ordinary database: metadata/<db>/<table>.sql without UUID, data in data/<db>/<table>/."""
    mt = manifest["tables"]["codecs"]
    root = tmp_path / "ord"
    (root / "metadata" / "ord").mkdir(parents=True)
    (root / "store").mkdir()
    (root / "metadata" / "ord.sql").write_text("ATTACH DATABASE ord\nENGINE = Ordinary\n")
    sql = mt["metadata_sql"].replace("ATTACH TABLE _ UUID '2ff922a2-5260-4dd2-808b-c9c4dcfb7968'", "ATTACH TABLE _")
    (root / "metadata" / "ord" / "codecs.sql").write_text(sql)
    tdir = root / "data" / "ord" / "codecs"
    tdir.mkdir(parents=True)
    for mp in mt["system_parts"]:
        shutil.copytree(fixtures_root / "clickhouse" / "datadir" / mp["rel_path"], tdir / mp["name"])
    (tdir / "detached").mkdir()
    shutil.copytree(fixtures_root / "clickhouse" / "datadir" / mt["system_parts"][0]["rel_path"],
                    tdir / "detached" / "ignored_202401_1_2_1")
    ds = scan(str(root))
    (t,) = ds.sections["clickhouse"]["tables"]
    assert (t["database"], t["table"], t["uuid"], t["database_engine"]) == ("ord", "codecs", None, "Ordinary")
    assert t["path"] == "data/ord/codecs"
    active = [p for p in t["parts"] if p["state"] == "active"]
    assert [p["name"] for p in active] == [p["name"] for p in mt["system_parts"]]
    detached = [p for p in t["parts"] if p["state"] == "detached"]
    assert len(detached) == 1 and detached[0]["active"] == 0
    assert t["total_bytes"] == mt["system_tables"]["total_bytes"]
    for c, mc in zip(t["columns"], mt["system_columns"]):
        assert (c["compressed_bytes"], c["uncompressed_bytes"], c["marks_bytes"]) == \
            (mc["data_compressed_bytes"], mc["data_uncompressed_bytes"], mc["marks_bytes"])


def test_file_hash_mismatch_found_when_verifying(datadir, manifest):
    pd = part_dir(datadir, manifest, "marks_mrk2", "202401_1_1_1")
    f = pd / "nq_UInt32.mrk2"
    data = bytearray(f.read_bytes())
    data[8] ^= 1                               # same size, different bytes
    f.write_bytes(bytes(data))
    ds = _scan(str(datadir), ScanContext(verify_checksums=True))
    rel = pd.relative_to(datadir).as_posix()
    errs = file_errors(ds, rel + "/nq_UInt32.mrk2")
    assert any("file hash does not match checksums.txt" in e for e in errs), errs
    g = pd / "nq_UInt32.bin"
    data = bytearray(g.read_bytes())
    data[40] ^= 1
    g.write_bytes(bytes(data))
    ds = _scan(str(datadir), ScanContext(verify_checksums=True))
    errs = file_errors(ds, rel + "/nq_UInt32.bin")
    assert any("CityHash128 checksum" in e and "@ offset 0" in e for e in errs), errs
    entry = next(x for x in ds.files if x.path == rel + "/nq_UInt32.bin")
    from dbxray.parsers.model import UNIT_BAD_CHECKSUM
    assert [bool(f & UNIT_BAD_CHECKSUM) for f in entry.units["flags"]] == [True]
    other = next(x for x in ds.files if x.path == rel + "/nq_UInt64.bin")
    assert not any(f & UNIT_BAD_CHECKSUM for f in other.units["flags"]) and other.errors == []


def test_scan_of_one_part_folder(fixtures_root, manifest):
    """Scanning one part folder inside a data dir: that part, named from the data dir's metadata."""
    mt = manifest["tables"]["features"]
    mp = mt["system_parts"][0]
    ds = scan(str(fixtures_root / "clickhouse" / "datadir" / mp["rel_path"]))
    (t,) = ds.sections["clickhouse"]["tables"]
    assert (t["database"], t["table"]) == (manifest["database"], "features")
    (p,) = t["parts"]
    assert (p["name"], p["bytes_on_disk"], p["data_compressed_bytes"], p["marks_bytes"]) == \
        (mp["name"], mp["bytes_on_disk"], mp["data_compressed_bytes"], mp["marks_bytes"])
    assert [x["name"] for x in p["projection_parts"]] == sorted(mp["projections"])


@pytest.mark.parametrize("in_c", [True, False])
def test_checksum_budget_only_binds_the_pure_port(datadir, manifest, monkeypatch, in_c):
    """With CityHash128 in C a data dir over the pure port's budget (here made
    tiny) is still verified; with the pure Python port it is not, and the scan
    says so and how to raise it."""
    import dbxray.parsers.clickhouse.scan as chscan
    from dbxray.parsers.codecs import ch_cityhash
    if in_c and not ch_cityhash.c_available():
        pytest.skip("clickhouse-cityhash is not installed")
    monkeypatch.setattr(chscan, "cityhash_in_c", lambda: in_c)
    monkeypatch.setattr(chscan, "VERIFY_BUDGET", 1000)
    pd = part_dir(datadir, manifest, "marks_mrk2", "202401_1_1_1")
    g = pd / "nq_UInt32.bin"
    data = bytearray(g.read_bytes())
    data[40] ^= 1
    g.write_bytes(bytes(data))
    ds = _scan(str(datadir), ScanContext(verify_checksums=True))
    errs = file_errors(ds, pd.relative_to(datadir).as_posix() + "/nq_UInt32.bin")
    budget = [e for e in ds.errors if "verification budget" in str(e)]
    if in_c:
        assert any("CityHash128 checksum" in e for e in errs), errs
        assert budget == []
    else:
        assert not any("CityHash128 checksum" in e for e in errs), errs
        assert len(budget) == 1 and "clickhouse-cityhash" in str(budget[0])


def test_checksum_budget_with_c_bounds_the_io(datadir, manifest, monkeypatch):
    """With CityHash128 in C the budget still bounds what verifying reads:
    over it, no block is hashed and the scan says why."""
    import dbxray.parsers.clickhouse.scan as chscan
    monkeypatch.setattr(chscan, "cityhash_in_c", lambda: True)
    monkeypatch.setattr(chscan, "VERIFY_BUDGET_C", 1000)
    ds = _scan(str(datadir), ScanContext(verify_checksums=True))
    budget = [str(e) for e in ds.errors if "verification budget of 1000 bytes" in str(e)]
    assert len(budget) == 1 and "every payload" in budget[0]

"""The MyRocks / RocksDB engine (parsers/rocksdb/) against the real MariaDB 10.11 data
dir's truth: every SST's properties as myrocks_sst_dump printed them, footers as read
by the fixture's maker, levels and column families as `ldb manifest_dump` lists them,
per-index rows and raw sizes as ROCKSDB_INDEX_FILE_MAP / ROCKSDB_DDL give them, entry
types as `mariadb-ldb dump` counted them; then damaged files named with their offsets."""
from __future__ import annotations

import json
import os
import shutil
import struct
from collections import Counter

import pytest

from dbxray.parsers.fileio import ReadOnlyFile
from dbxray.parsers.rocksdb.block import iter_entries
from dbxray.parsers.rocksdb.manifest import read_manifest
from dbxray.parsers.rocksdb.options import read_options
from dbxray.parsers.rocksdb.sst import KIND_DATA, block_contents, read_sst
from dbxray.parsers.scan import scan
from dbxray.parsers.tree import build_tree


@pytest.fixture(scope="module")
def manifest(fixtures_root):
    return json.loads((fixtures_root / "mariadb" / "manifest.json").read_text())


@pytest.fixture(scope="module")
def rocksdir(fixtures_root):
    return fixtures_root / "mariadb" / "datadir" / "#rocksdb"


@pytest.fixture(scope="module")
def ds(sparse_fixtures):
    return scan(str(sparse_fixtures / "mariadb" / "datadir"))


def _sst_entries(ds):
    return {os.path.basename(f.path): f for f in ds.files if f.engine == "rocksdb" and f.role == "sst"}


def test_every_rocksdb_file_claimed_with_its_role(ds, manifest):
    want = {f["path"]: f["role"] for f in manifest["files"] if f["engine"] == "rocksdb"}
    got = {f.path: f for f in ds.files if f.path.startswith("#rocksdb/")}
    assert set(got) == set(want)
    roles = {"sst": "sst", "wal": "wal", "manifest": "manifest", "options": "options", "info_log": "info_log"}
    for path, role in want.items():
        f = got[path]
        assert f.engine == "rocksdb"
        assert f.role == roles.get(role, "engine_environment"), path
        assert not f.errors, (path, f.errors)


def test_sst_properties_equal_sst_dump(ds, manifest):
    """Field by field against `myrocks_sst_dump --show_properties` (78 files)."""
    ssts = _sst_entries(ds)
    truth = {os.path.basename(f["path"]): f for f in manifest["files"] if f["path"].endswith(".sst")}
    assert set(ssts) == set(truth) and len(ssts) == 78
    for name, t in truth.items():
        p = t["sst_dump"]["properties"]
        sec = ssts[name].sections["rocksdb"]
        props = ssts[name].detail["sst"].props
        index_key = next(k for k in p if k.startswith("index block size"))
        assert index_key == (f"index block size (user-key? {props.index_key_is_user_key}, "
                             f"delta-value? {props.index_value_is_delta_encoded})")
        got = {
            "# data blocks": sec.data_blocks, "# entries": sec.entries, "# deletions": sec.deletions,
            "# merge operands": sec.merge_operands, "# range deletions": sec.range_deletions,
            "raw key size": sec.raw_key_bytes, "raw value size": sec.raw_value_bytes,
            "data block size": sec.data_block_bytes, index_key: sec.index_block_bytes,
            "filter block size": sec.filter_block_bytes, "# entries for filter": props.num_filter_entries,
            "(estimated) table size": props.data_size + props.index_size + props.filter_size,
            "column family ID": sec.column_family_id, "column family name": sec.column_family,
            "comparator name": sec.comparator, "SST file compression algo": sec.compression,
            "SST file compression options": sec.compression_options.strip(),
            "creation time": sec.creation_time, "file creation time": sec.file_creation_time,
            "time stamp of earliest key": props.oldest_key_time,
            "DB identity": sec.db_id, "DB session identity": sec.db_session_id, "DB host id": props.db_host_id,
            "original file number": sec.original_file_number,
            "merge operator name": props.merge_operator_name or "nullptr",
            "prefix extractor name": props.prefix_extractor_name or "nullptr",
            "property collectors names": props.property_collectors_names,
            "filter policy name": props.filter_policy_name or "N/A",
        }
        for k, v in got.items():
            assert v == p[k], (name, k, v, p[k])
        assert sec.data_blocks == sum(sec.block_compression.values())
        uc = t["sst_dump"]["user_collected"]
        for k, hexval in uc.items():
            assert "0x" + props.user_collected[k].hex().upper() == hexval, (name, k)
        foot = t["sst_footer"]
        sst = ssts[name].detail["sst"]
        assert sec.format_version == foot["format_version"]
        assert sst.footer.checksum_type == foot["checksum_type"] and sec.checksum_type == "crc32c"
        assert [sst.footer.metaindex.offset, sst.footer.metaindex.size] == foot["metaindex_handle"]
        assert [sst.footer.index.offset, sst.footer.index.size] == foot["index_handle"]
        assert sec.meta_blocks == sorted(foot["metaindex"])
        assert sec.checksums_verified is True


def test_every_block_decodes_to_the_entries_ldb_counted(ds, manifest, rocksdir):
    """Decoding every data block (snappy, zlib, ZSTD with and without a dictionary,
    none) gives the properties' entries and raw sizes and ldb's entry types."""
    ssts = _sst_entries(ds)
    truth = {os.path.basename(f["path"]): f for f in manifest["files"] if f["path"].endswith(".sst")}
    dict_files = 0
    for name, f in ssts.items():
        sst = f.detail["sst"]
        dict_files += sst.compression_dict is not None
        types = Counter()
        keys = values = 0
        with ReadOnlyFile(str(rocksdir / name)) as rf:
            for i in range(len(sst.kind)):
                if sst.kind[i] != KIND_DATA:
                    continue
                data = block_contents(sst, rf, i, 1 << 24)
                assert len(data) == sst.logical[i]
                for k, v in iter_entries(data):
                    types[str(k[-8])] += 1          # (sequence << 8 | type), little-endian
                    keys += len(k)
                    values += len(v)
        assert (keys, values) == (sst.props.raw_key_size, sst.props.raw_value_size), name
        assert dict(types) == truth[name]["sst_dump"]["ldb_entry_types"], name
    assert dict_files == 3           # cf_zstd's files with a rocksdb.compression_dict


def test_levels_and_column_families_equal_the_manifest_dump(ds, manifest):
    ssts = _sst_entries(ds)
    for name, t in manifest["rocksdb"]["sst_level"].items():
        sec = ssts[name].sections["rocksdb"]
        assert (sec.column_family, sec.level, sec.live) == (t["cf"], t["level"], True), name
        assert ssts[name].apparent_bytes == t["manifest_size"]
    d = ds.to_json()["rocksdb"]["directories"][0]
    assert d["manifest"] == "MANIFEST-000017" and d["rocksdb_version"] == "6.29.5"
    assert d["obsolete_ssts"] == [] and d["missing_ssts"] == []
    levels = {f"{lv['column_family']}/L{lv['level']}": lv for lv in d["levels"]}
    want = manifest["rocksdb"]["per_cf_level"]
    assert set(levels) == set(want)
    for key, w in want.items():
        g = levels[key]
        assert (g["files"], g["file_bytes"], g["data_block_bytes"], g["raw_key_bytes"], g["raw_value_bytes"],
                g["entries"], g["compression"]) == (w["files"], w["file_bytes"], w["data_block_bytes"],
                                                    w["raw_key_bytes"], w["raw_value_bytes"], w["entries"],
                                                    sorted(w["compression"])), key
    # what the options say each level gets, beside what was written
    assert levels["cf_tiered/L2"]["configured"] == "NoCompression"
    assert levels["cf_tiered/L5"]["configured"] == "ZSTD" == levels["cf_tiered/L5"]["compression"][0]
    assert levels["cf_zstdbm/L1"]["configured"] == "ZSTD"     # bottommost_compression on the only level


def test_indexes_equal_rocksdb_index_file_map_and_ddl(ds, manifest):
    ssts = _sst_entries(ds)
    fmap = {(r["INDEX_NUMBER"], r["SST_NAME"]): r for r in manifest["sql"]["rocksdb_index_file_map"]}
    got = {}
    for name, f in ssts.items():
        for st in f.sections["rocksdb"].index_stats:
            got[(st.index_number, name)] = st
    assert set(got) == set(fmap)
    for key, r in fmap.items():
        st = got[key]
        assert (st.cf_id, st.rows, st.data_size, st.entry_deletes, st.entry_singledeletes, st.entry_merges,
                st.entry_others) == (r["COLUMN_FAMILY"], r["NUM_ROWS"], r["DATA_SIZE"], r["ENTRY_DELETES"],
                                     r["ENTRY_SINGLEDELETES"], r["ENTRY_MERGES"], r["ENTRY_OTHERS"]), key
    d = ds.to_json()["rocksdb"]["directories"][0]
    idx = {i["index_number"]: i for i in d["indexes"]}
    for w in manifest["rocksdb"]["per_index"]:
        if w["index_number"] < 256:
            continue                       # the dictionary's own records in __system__
        g = idx[w["index_number"]]
        assert (g["rows"], g["data_size"], g["sst_files"], g["levels"]) == (
            w["num_rows"], w["data_size"], sorted(w["sst_files"]), sorted(w["levels"])), w["index_number"]
        assert (g["entry_deletes"], g["entry_singledeletes"]) == (w["entry_deletes"], w["entry_singledeletes"])
    for r in manifest["sql"]["rocksdb_ddl"]:
        g = idx[r["INDEX_NUMBER"]]
        assert g["table"] == f"{r['TABLE_SCHEMA']}.{r['TABLE_NAME']}"
        assert g["partition"] == r["PARTITION_NAME"]
        assert g["column_family"] == r["CF"]
        assert g["kv_format_version"] == r["KV_FORMAT_VERSION"]
        assert g["index_type"] == {1: "primary", 2: "secondary", 3: "hidden primary"}[r["INDEX_TYPE"]]
        assert g["name"] == r["INDEX_NAME"]          # from the table's .frm key order
    cfs = {c["name"]: c for c in d["column_families"]}
    assert cfs["rev:cf_rev"]["reverse"] is True and cfs["cf_zstd"]["block_size"] == 32768
    assert cfs["cf_tiered"]["compression_per_level"] == ["NoCompression"] * 3 + ["Snappy"] * 2 + ["ZSTD"]


def test_tables_rows_and_owners(ds, manifest):
    tables = {t.key: t for t in ds.tables if t.engine == "rocksdb"}
    want = {k: v for k, v in manifest["tables"].items() if v["engine"] == "ROCKSDB"}
    assert set(tables) == set(want)
    for key, w in want.items():
        t = tables[key]
        pk = [i for i in w["rocksdb_indexes"] if i["index"] in ("PRIMARY", "HIDDEN_PK_ID")]
        if pk:
            # the engine's own count (TABLE_ROWS counts LSM versions, and so does __indexstats__)
            assert t.info["rows"] == sum(i["num_rows"] for i in pk), key
        assert t.info["data_size"] == sum(i["data_size"] for i in w["rocksdb_indexes"]), key
        # information_schema.TABLES as the server computes it, from the saved index statistics
        rep = t.info["engine_reported"]
        assert (rep["table_rows"], rep["data_length"], rep["index_length"]) == (
            w["is_table_rows"], w["is_data_length"], w["is_index_length"]), key
        # and the live SSTs' own collector figures beside them (equal rows, disk within 1%)
        assert t.info["rows"] == w["is_table_rows"]
        assert abs(t.info["data_disk_bytes"] - w["is_data_length"]) <= 0.01 * w["is_data_length"]
    # every data block's owner is the index its last key belongs to
    ssts = _sst_entries(ds)
    f = ssts["000340.sst"]            # cf_none: rdb.events.idx_kind alone
    owners = {int(o) for o in f.units["owner"] if o >= 0}
    assert owners == {261} and f.owner_names[261].startswith("rdb.events.")
    root = build_tree(ds)
    eng = next(c for c in root.children if c.kind == "engine" and c.name == "MyRocks / RocksDB")
    cf = next(c for c in eng.children if c.name == "cf_tiered")
    assert {c.name for c in cf.children} == {"L0", "L2", "L3", "L4", "L5"}


def test_options_parse_and_level_resolution(rocksdir):
    o = read_options((rocksdir / "OPTIONS-000044").read_text())
    assert o.rocksdb_version == "6.29.5"
    assert "rev:cf_rev" in o.cfs                           # the escaped name unescaped
    dyn = o.cfs["cf_dyn"]
    assert dyn.dynamic_level_bytes and dyn.configured(6, base_level=5, bottommost=True) == 7   # ZSTD
    assert dyn.configured(5, base_level=5) == 1 and dyn.configured(0, base_level=5) == 0


# -- bad input -----------------------------------------------------------------------
def _copy_dir(tmp_path, rocksdir, names):
    d = tmp_path / "#rocksdb"
    d.mkdir()
    for n in names:
        shutil.copyfile(rocksdir / n, d / n)
    return d


def _errors(ds, name):
    f = next(f for f in ds.files if f.path.endswith(name))
    return f, " | ".join(f.errors)


def test_lone_sst_claimed_by_its_footer(tmp_path, rocksdir):
    shutil.copyfile(rocksdir / "000340.sst", tmp_path / "renamed.bin")
    ds = scan(str(tmp_path))
    f = ds.files[0]
    assert (f.engine, f.role, f.errors) == ("rocksdb", "sst", [])
    assert f.sections["rocksdb"].live is None and f.sections["rocksdb"].entries == 23520


@pytest.mark.parametrize("damage, expect", [
    ("truncate", "bad magic number"),
    ("magic", "bad magic number"),
    ("version", "unknown format_version 99"),
    ("checksum_type", "unknown checksum type 9"),
    ("handle", "runs past"),
    ("ctype", "unknown compression type 0x63"),
    ("flip", "checksum mismatch (crc32c)"),
    ("short", "shorter than an SST footer"),
])
def test_damaged_sst_named_with_offset(tmp_path, rocksdir, damage, expect):
    d = _copy_dir(tmp_path, rocksdir, ["000340.sst"])
    p = d / "000340.sst"
    b = bytearray(p.read_bytes())
    n = len(b)
    sst = read_sst(ReadOnlyFile(str(rocksdir / "000340.sst")), "x", n)
    first_data = int(sst.offset[sst.kind == KIND_DATA][0]), int(sst.size_[sst.kind == KIND_DATA][0])
    if damage == "truncate":
        b = b[:n - 100]
    elif damage == "magic":
        b[-1] ^= 0xFF
    elif damage == "version":
        b[n - 12:n - 8] = struct.pack("<I", 99)
    elif damage == "checksum_type":
        b[n - 53] = 9
    elif damage == "handle":
        b = b[:first_data[0] + 10] + b[n - 53:]        # the blocks cut away, the footer kept
    elif damage == "ctype":
        b[first_data[0] + first_data[1]] = 0x63
    elif damage == "flip":
        b[first_data[0] + 20] ^= 0x55
    elif damage == "short":
        b = b[:20]
    p.write_bytes(bytes(b))
    before = p.read_bytes()
    ds = scan(str(tmp_path))
    f, errs = _errors(ds, "000340.sst")
    assert f.engine == "rocksdb" and expect in errs, errs
    assert "000340.sst @ offset " in errs
    assert p.read_bytes() == before


def test_decompression_bomb_capped(tmp_path, rocksdir):
    """A zstd data block declaring 3 GiB is refused by its declared size, quickly."""
    import zstandard
    from dbxray.parsers.rocksdb.compression import BlockDecodeError, uncompress
    payload = b"\xff\xff\xff\xff\x0b" + zstandard.ZstdCompressor().compress(b"\0" * 100)
    with pytest.raises(BlockDecodeError, match="over the cap"):
        uncompress(7, payload, 2, 64 << 20)


def test_corrupt_manifest_and_options_named(tmp_path, rocksdir):
    names = ["CURRENT", "MANIFEST-000017", "OPTIONS-000044", "000340.sst"]
    d = _copy_dir(tmp_path, rocksdir, names)
    m = bytearray((d / "MANIFEST-000017").read_bytes())
    m[40] ^= 0xFF                                      # inside the first record's payload
    (d / "MANIFEST-000017").write_bytes(bytes(m))
    (d / "OPTIONS-000044").write_text("[Version]\n  rocksdb_version=6.29.5\n[CFOptions \"x\"\n")
    ds = scan(str(tmp_path))
    f, errs = _errors(ds, "MANIFEST-000017")
    assert "MANIFEST-000017 @ offset 36: record checksum mismatch" in errs   # the 2nd record's length
    f, errs = _errors(ds, "OPTIONS-000044")
    assert "does not parse" in errs and "line 3" in errs
    m2 = read_manifest(bytes(m))
    assert m2.problems and len(m2.files) < 78           # the rest replayed, the bad edit skipped
    sst, errs = _errors(ds, "000340.sst")
    assert errs == "" and sst.sections["rocksdb"].entries == 23520


def test_tree_tables_and_indexes_over_their_ssts(ds, manifest):
    """engine › tables (over shared files) › db › table › index: each index row sums its data
    blocks over every SST (the per-SST rows, added up), every user data block counted once,
    the names as ROCKSDB_DDL gives them, and the engine's total still the files' bytes."""
    root = build_tree(ds)
    eng = next(c for c in root.children if c.kind == "engine" and c.name == "MyRocks / RocksDB")
    assert eng.apparent == sum(f.apparent_bytes for f in ds.files if f.engine == "rocksdb")
    spread = [c for c in eng.children if c.kind == "spread"]
    assert len(spread) == 1 and eng.children[-1] is spread[0]
    rows = {(db.name, t.name, i.name): i for db in spread[0].children for t in db.children for i in t.children}
    want = {(r["TABLE_SCHEMA"], r["TABLE_NAME"],
             f"{r['INDEX_NAME']} ({r['PARTITION_NAME']})" if r["PARTITION_NAME"] else r["INDEX_NAME"])
            for r in manifest["sql"]["rocksdb_ddl"]}
    assert set(rows) == want
    per_sst: dict[int, list[int]] = {}
    user_blocks = 0
    for f in _sst_entries(ds).values():
        if f.sections["rocksdb"].live is False:
            continue
        u = f.units
        user_blocks += int(u["stored"][u["owner"] >= 256].sum())
        sst_node = next(n for n in root.walk() if n.kind == "file" and n.path == f.path)
        for n in sst_node.children:
            acc = per_sst.setdefault(n.ref["index_number"], [0, 0, 0])
            acc[0] += n.allocated
            acc[1] += n.logical
            acc[2] += 1
    for key, node in rows.items():
        num = node.ref["index_number"]
        assert [node.allocated, node.logical, node.ref["data_block_files"]] == per_sst.get(num, [0, 0, 0]), key
    assert sum(n.allocated for n in rows.values()) == user_blocks
    orders = next(t for db in spread[0].children for t in db.children if (db.name, t.name) == ("rdb", "orders"))
    assert orders.allocated == sum(i.allocated for i in orders.children) > 0


def test_saved_scan_round_trip(ds, tmp_path):
    from dbxray.parsers.savedscan import load_saved_scan
    js = ds.to_json()
    p = tmp_path / "scan.json"
    p.write_text(json.dumps(js))
    back = load_saved_scan(str(p))
    assert back.to_json()["rocksdb"] == json.loads(json.dumps(js["rocksdb"]))
    f = next(f for f in back.files if f.path == "#rocksdb/000340.sst")
    assert f.sections["rocksdb"].entries == 23520


def test_obsolete_and_missing_ssts_named(tmp_path, rocksdir):
    names = ["CURRENT", "MANIFEST-000017", "OPTIONS-000044", "000340.sst", "000336.sst", "000343.sst"]
    d = _copy_dir(tmp_path, rocksdir, names)
    shutil.copyfile(rocksdir / "000340.sst", d / "000999.sst")        # a file the MANIFEST does not list
    ds = scan(str(tmp_path))
    sec = ds.to_json()["rocksdb"]["directories"][0]
    assert sec["obsolete_ssts"] == ["000999.sst"]
    assert len(sec["missing_ssts"]) == 75 and "000340.sst" not in sec["missing_ssts"]
    f = next(f for f in ds.files if f.path.endswith("000999.sst"))
    assert f.sections["rocksdb"].live is False and any("obsolete" in w for w in f.warnings)
    # the obsolete copy is no part of any table or level figure
    lv = {(x["column_family"], x["level"]): x for x in sec["levels"]}
    assert lv[("cf_none", 1)]["files"] == 1
    idx = {i["index_number"]: i for i in sec["indexes"]}
    assert idx[261]["sst_files"] == ["000340.sst"]


def test_sst_blocks_on_the_unit_map(ds, qapp):
    """The generic unit map lays an SST's blocks out in file order, coloured by block kind
    and codec, by MyRocks index, by ratio and by checksum."""
    from dbxray.viz.extentmap import MapData
    f = _sst_entries(ds)["000309.sst"]           # cf_zstd: ZSTD data blocks and a dictionary
    m = MapData(f)
    assert m.n_pages == len(f.units) and m.extent_pages == 32
    assert {mid for mid, _ in m.modes()} >= {"type", "index", "compression", "checksum"}
    kinds = set(f.kind_names.values())
    assert {"data · ZSTD", "compression dict · NoCompression", "footer", "properties · NoCompression"} <= kinds
    names = set(f.owner_names.values())
    assert "rdb.kv_zstd.PRIMARY" in names and {n.rsplit(".", 1)[0] for n in names} == {"rdb.kv_zstd"}

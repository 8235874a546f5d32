"""ClickHouse codecs against real engine output: every compressed block of every
fixture file is decoded, checked, and re-encoded with the codec chain its
table's DDL declares, and must come back byte for byte (checksum included).

The blocks are walked by their own headers here (not through the part
parser); the DDL comes from the manifest.
"""
from __future__ import annotations

import collections
import json
import re
from pathlib import Path

import pytest

from dbxray.parsers.codecs import ch_methods as M
from dbxray.parsers.codecs.ch_block import (CHECKSUM_SIZE, chain_of, compress_block, decompress_block,
                                     method_chain, parse_chain, reencode_params, verify_checksum,
                                     walk_blocks)


@pytest.fixture(scope="module")
def ch_root(fixtures_root) -> Path:
    return fixtures_root / "clickhouse"


@pytest.fixture(scope="module")
def manifest(ch_root) -> dict:
    return json.loads((ch_root / "manifest.json").read_text())


def _ddl_codecs(ddl: str) -> tuple[dict[str, str], str]:
    """Column -> declared chain (``CODEC(...)`` contents) and the table default codec."""
    cols: dict[str, str] = {}
    body = ddl[ddl.index("(") + 1:ddl.index(") ENGINE")]
    for line in body.splitlines():
        line = line.strip().rstrip(",")
        if not line or line.split()[0] in ("PROJECTION", "INDEX"):
            continue
        name = line.split()[0].strip("`")
        m = re.search(r"\sCODEC\((.*)\)$", line)
        if m:
            cols[name] = m.group(1)
    m = re.search(r"default_compression_codec\s*=\s*'([^']*)'", ddl)
    return cols, (m.group(1) if m and m.group(1) else "LZ4")


def _column_of(stream: str, columns: list[str]) -> str | None:
    """The column a stream file belongs to (``m%2Ekeys.size`` -> ``m``)."""
    name = stream.replace("%2E", ".")
    best = None
    for c in columns:
        if name == c or name.startswith(c + "."):
            if best is None or len(c) > len(best):
                best = c
    return best


def _structure(chain: str) -> list[int]:
    return [M.NAME_TO_METHOD[s.name.upper()] for s in parse_chain(chain)]


def _files(ch_root: Path, manifest: dict):
    """(table, path, candidate declared chains) for every compressed file of every active part."""
    datadir = ch_root / "datadir"
    for table, t in manifest["tables"].items():
        declared, default = _ddl_codecs(t["ddl"])
        columns = re.findall(r"^\s*`?(\w+)`?\s", t["ddl"][t["ddl"].index("(") + 1:], flags=re.M)
        for part in t["system_parts"]:
            for p in sorted((datadir / part["rel_path"]).rglob("*")):
                if not p.is_file():
                    continue
                if p.suffix == ".bin":
                    stream = p.name[:-4]
                    if stream == "data":            # Compact part: any column's codec
                        cands = sorted(set(declared.values()) | {default})
                    else:
                        col = _column_of(stream, columns)
                        cands = [declared.get(col, default)]
                    yield table, p, cands
                elif p.name.endswith((".cmrk", ".cmrk2", ".cmrk3", ".cmrk4")):
                    yield table, p, [manifest["merge_tree_setting_defaults"]["marks_compression_codec"]]
                elif p.name == "primary.cidx":
                    yield table, p, [manifest["merge_tree_setting_defaults"]["primary_key_compression_codec"]]


def _check_file(path: Path, cands: list[str], stats, failures):
    data = path.read_bytes()
    for off, h in walk_blocks(data):
        block = data[off:off + h.stored_size]
        where = f"{path.name} @ {off}"
        raw = decompress_block(block)
        assert len(raw) == h.decompressed_size, where
        if not verify_checksum(block):
            failures.append((where, "checksum"))
        structure = method_chain(block)
        chains = [c for c in cands if _structure(c) == structure]
        if len(chains) != 1:
            failures.append((where, f"no unique declared chain for {structure}: {cands}"))
            continue
        prm = reencode_params(block)
        again = compress_block(raw, chains[0], prm["type_size"], prm["value_type"])
        key = chain_of(block)
        st = stats[key]
        st["blocks"] += 1
        st["size_equal"] += len(again) == len(block)
        st["bytes_equal"] += again == block
        if again != block:
            failures.append((where, f"{chains[0]}: re-encoded {len(again)} bytes, file holds {len(block)}"))


def _run(ch_root, manifest, only_bin: bool):
    stats = collections.defaultdict(lambda: collections.Counter())
    failures: list = []
    nfiles = 0
    for _table, path, cands in _files(ch_root, manifest):
        if only_bin != (path.suffix == ".bin"):
            continue
        nfiles += 1
        _check_file(path, cands, stats, failures)
    return nfiles, stats, failures


def test_every_bin_block_reencodes_to_the_same_bytes(ch_root, manifest, artifacts_dir):
    nfiles, stats, failures = _run(ch_root, manifest, only_bin=True)
    report = {k: dict(v) for k, v in sorted(stats.items())}
    (artifacts_dir / "ch_codecs_roundtrip.json").write_text(json.dumps(
        {"files": nfiles, "blocks_per_chain": report, "failures": failures[:50]}, indent=1))
    assert nfiles >= 400
    assert failures == []
    total = sum(v["blocks"] for v in stats.values())
    assert total == sum(v["bytes_equal"] for v in stats.values()) >= 1800
    # every codec the fixtures were built with is among them
    seen = {m for key in stats for m in _structure(key.replace("T64('bit')", "T64"))}
    assert {M.NONE, M.LZ4, M.ZSTD, M.Delta, M.DoubleDelta, M.Gorilla, M.T64, M.GCD, M.FPC} <= seen
    multiple = sum(v["blocks"] for k, v in stats.items() if "," in k)
    assert multiple == 24     # the Multiple (0x91) blocks found in the fixtures


def test_marks_and_primary_index_blocks_reencode_with_zstd3(ch_root, manifest):
    nfiles, stats, failures = _run(ch_root, manifest, only_bin=False)
    assert nfiles > 100
    assert failures == []
    assert set(stats) == {"ZSTD"}


def test_block_counts_agree_with_the_engine(ch_root, manifest):
    """Blocks per stream and chain (method bytes) equal mergeTreeCodecBlockCounts()."""
    datadir = ch_root / "datadir"
    checked = 0
    for table, t in manifest["tables"].items():
        parts = {p["name"]: p["rel_path"] for p in t["system_parts"]}
        for row in t.get("codec_block_counts", []):
            stream = row["substream"]
            fname = stream.replace(".", "%2E")
            # substream suffixes keep their dot: s.size, c.null, m.size0 ...
            for suffix in (".size0", ".size", ".null", ".dict", ".sparse.idx"):
                if stream.endswith(suffix):
                    fname = stream[:-len(suffix)].replace(".", "%2E") + suffix
                    break
            path = datadir / parts[row["part_name"]] / (fname + ".bin")
            if not path.exists():
                continue
            data = path.read_bytes()
            got = collections.Counter()
            for off, h in walk_blocks(data):
                got[",".join(M.method_name(m) for m in method_chain(data[off:off + CHECKSUM_SIZE + 9 + 256]))] += 1
            want = collections.Counter()
            for name, n in row["codec_block_counts"].items():
                want[",".join(re.sub(r"\(.*?\)", "", c).strip() for c in name.split(","))] += n
            assert got == want, (table, row["part_name"], stream)
            checked += 1
    assert checked >= 200


def test_compressed_marks_equal_the_uncompressed_twin(ch_root, manifest):
    """marks_default (.cmrk2, ZSTD(3)) and marks_mrk2 (.mrk2) hold the same rows: the
    decoded .cmrk2 streams have the .mrk2 layout and the same row counts per granule."""
    import numpy as np

    from dbxray.parsers.codecs.ch_block import decompress_stream
    datadir = ch_root / "datadir"
    a = manifest["tables"]["marks_default"]["system_parts"]
    b = manifest["tables"]["marks_mrk2"]["system_parts"]
    checked = 0
    for pa, pb in zip(sorted(a, key=lambda p: p["name"]), sorted(b, key=lambda p: p["name"])):
        for cm in sorted((datadir / pa["rel_path"]).glob("*.cmrk2")):
            mrk2 = datadir / pb["rel_path"] / (cm.name[:-6] + ".mrk2")
            raw = decompress_stream(cm.read_bytes())
            plain = mrk2.read_bytes()
            assert len(raw) == len(plain) and len(raw) % 24 == 0
            rows_a = np.frombuffer(raw, dtype="<u8").reshape(-1, 3)[:, 2]
            rows_b = np.frombuffer(plain, dtype="<u8").reshape(-1, 3)[:, 2]
            assert (rows_a == rows_b).all()
            assert int(rows_a.sum()) == pa["rows"]
            checked += 1
    assert checked >= 10
    from dbxray.parsers.codecs.general import DecodeError
    with pytest.raises(DecodeError, match="over the cap"):
        decompress_stream(cm.read_bytes(), max_output=10)

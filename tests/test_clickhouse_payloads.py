"""Block payloads on demand: every block of every fixture .bin decodes to its
declared size, and fixed-size columns hold rows x width bytes."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("dbxray.parsers.codecs.ch_block")

from dbxray.parsers.clickhouse.payloads import PayloadError, column_blocks, unit_payload  # noqa: E402
from dbxray.parsers.scan import scan  # noqa: E402

WIDTH = {"UInt64": 8, "UInt32": 4, "Int32": 4, "Date": 2, "DateTime": 4, "DateTime64(3)": 8, "Float64": 8,
         "Float32": 4, "FixedString(16)": 16, "Decimal(18, 4)": 8, "Decimal(38, 10)": 16, "UUID": 16,
         "IPv4": 4, "Bool": 1, "Enum8('GET' = 1, 'POST' = 2, 'PUT' = 3, 'DELETE' = 4)": 1}


@pytest.fixture(scope="module")
def ds(sparse_fixtures):
    return scan(str(sparse_fixtures / "clickhouse" / "datadir"))


@pytest.fixture(scope="module")
def manifest(fixtures_root):
    return json.loads((fixtures_root / "clickhouse" / "manifest.json").read_text())


def test_every_block_decodes_to_its_size(ds):
    n = 0
    for f in ds.files:
        if f.engine == "clickhouse" and f.units is not None:
            for i in range(len(f.units)):
                assert len(unit_payload(f, i)) == int(f.units["logical"][i])
                n += 1
    assert n > 1800


def test_fixed_width_columns_rows(ds, manifest):
    mt = manifest["tables"]["codecs"]
    rows = mt["system_tables"]["total_rows"]
    n = 0
    for col in mt["system_columns"]:
        w = WIDTH.get(col["type"])
        if w is None or col["name"] == "sparse_u64":
            continue
        blocks = column_blocks(ds, manifest["database"], "codecs", col["name"])
        total = sum(len(unit_payload(e, i)) for e, i in blocks)
        assert total == rows * w, col["name"]
        n += 1
    assert n >= 20


def test_column_blocks_cover_active_parts_only(ds, manifest):
    blocks = column_blocks(ds, manifest["database"], "features", "ts")
    # projections hold ts too, but are not the table's column data
    assert len(blocks) == sum(r["codec_block_counts"]["ZSTD(1)"] for r in manifest["tables"]["features"]
                              ["codec_block_counts"] if r["substream"] == "ts")
    assert all("parent_part" not in e.sections["clickhouse"] for e, _ in blocks)


def test_bad_block_index(ds):
    f = next(f for f in ds.files if f.engine == "clickhouse" and f.units is not None)
    with pytest.raises(PayloadError):
        unit_payload(f, len(f.units))


def test_a_file_is_opened_once_for_its_blocks(fixtures_root, tmp_path, monkeypatch):
    """read_unit_bytes keeps its files open (payloads._HANDLES): the blocks of one file read
    one after another open it once; a file cut after the scan gives a named short read, and a
    file changed meanwhile is opened again and read as it is now."""
    import shutil

    from dbxray.parsers.clickhouse import payloads
    from dbxray.parsers.fileio import ReadOnlyFile
    src = fixtures_root / "clickhouse" / "datadir"
    dst = tmp_path / "datadir"
    shutil.copytree(src, dst, symlinks=True)
    ds = scan(str(dst))
    f = max((e for e in ds.files if e.engine == "clickhouse" and e.units is not None
             and e.role == "part_column_data"), key=lambda e: len(e.units))
    assert len(f.units) >= 4
    opened = []
    monkeypatch.setattr(payloads, "_HANDLES", payloads.HandleCache(
        payloads.MAX_OPEN_FILES, opener=lambda p: opened.append(p) or ReadOnlyFile(p)))
    want = [unit_payload(f, i) for i in range(len(f.units))]
    assert opened == [f.abspath]
    assert [unit_payload(f, i) for i in range(len(f.units))] == want and len(opened) == 1
    stored0 = payloads.read_unit_bytes(f, 0)
    # cut after the scan: the last block is short, named with its file and offset
    last = len(f.units) - 1
    off = int(f.units["offset"][last])
    with open(f.abspath, "r+b") as fh:
        fh.truncate(off + 5)
    with pytest.raises(PayloadError, match=rf"{f.path} @ offset {off}: truncated"):
        payloads.read_unit_bytes(f, last)
    assert len(opened) == 2         # another size: opened again
    assert payloads.read_unit_bytes(f, 0) == stored0 and len(opened) == 2
    payloads.close_handles()

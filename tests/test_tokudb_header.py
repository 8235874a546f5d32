"""Header slots, x1764 and the translation table against the engine's view."""
from __future__ import annotations

import pytest

from dbxray.parsers.tokudb.blocktable import read_block_table, read_descriptor
from dbxray.parsers.tokudb.header import HEADER_SLOTS, read_header_slots
from dbxray.parsers.tokudb.x1764 import x1764
from test_tokudb_manifest import file_bytes, ids, tree_files

TREES = tree_files()


def _x1764_simple(data: bytes) -> int:
    # the definition from util/x1764.cc, word by word
    c = 0
    n8 = len(data) // 8
    for i in range(n8):
        c = (c * 17 + int.from_bytes(data[8 * i:8 * i + 8], "little")) % (1 << 64)
    if len(data) % 8:
        c = (c * 17 + int.from_bytes(data[8 * n8:], "little")) % (1 << 64)
    return (~((c & 0xFFFFFFFF) ^ (c >> 32))) & 0xFFFFFFFF


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 63, 511, 512, 513, 4097, 70001])
def test_x1764_numpy_path_equals_definition(n):
    import random
    rnd = random.Random(n)
    data = bytes(rnd.getrandbits(8) for _ in range(n))
    assert x1764(data) == _x1764_simple(data)


@pytest.mark.parametrize("f", TREES, ids=ids(TREES))
def test_header_equals_engine_header(f):
    b = file_bytes(f)
    slots = read_header_slots(b)
    assert slots.errors == []
    h = slots.active
    eh = f["engine_header"]
    for k in ("layout_version", "layout_version_original", "build_id", "build_id_original",
              "checkpoint_count", "checkpoint_lsn", "nodesize", "basementnodesize", "fanout",
              "compression_method", "flags", "time_of_creation", "time_of_last_modification",
              "on_disk_numrows", "on_disk_numbytes", "on_disk_logical_rows", "max_msn_in_ft"):
        assert getattr(h, k) == eh[k], k
    assert h.root_blocknum == eh["root_blocknum"]
    th = f["tokuftdump_header"]
    assert h.root_blocknum == th["unnamed_root"]
    assert h.on_disk_numrows == th["estimated_numrows"]
    assert h.on_disk_logical_rows == th["logical_row_count"]


@pytest.mark.parametrize("f", TREES, ids=ids(TREES))
def test_both_slots_equal_crosscheck(f):
    b = file_bytes(f)
    slots = read_header_slots(b)
    cc = f["fixture_parser_crosscheck"]
    assert slots.active.slot_offset == cc["active_header_offset"]
    for off in HEADER_SLOTS:
        want = cc["header_slots"].get(str(off))
        got = slots.slots[off]
        if want is None:
            assert got is None
            continue
        assert got.checkpoint_count == want["checkpoint_count"]
        assert got.checkpoint_lsn == want["checkpoint_lsn"]
        assert got.translation_offset == want["translation_offset"]
        assert got.translation_size == want["translation_size"]
        assert got.checksum_ok == want["checksum_ok"]
        # the parity rule of ft-serialize.cc: odd counts at 0, even at 4096
        assert off == (0 if got.checkpoint_count % 2 else 4096)


@pytest.mark.parametrize("f", TREES, ids=ids(TREES))
def test_translation_table_equals_tokuftdump(f):
    b = file_bytes(f)
    h = read_header_slots(b).active
    bt = read_block_table(b, h.translation_offset, h.translation_size, len(b))
    tt = f["tokuftdump_translation_table"]
    assert [[int(x) for x in row] for row in bt.entries.tolist()] == tt["rows"]
    cp = tt["checkpointed"]
    assert bt.smallest_never_used_blocknum == cp["smallest_never_used_blocknum"] == cp["length_of_array"]
    assert bt.blocknum_freelist_head == cp["blocknum_free_list_head"]
    assert (bt.offset, bt.size) == (cp["location_on_disk"], cp["size_on_disk"])
    assert bt.checksum_ok and bt.problems == []
    assert bt.fragmentation() == f["tokuftdump_fragmentation"]


@pytest.mark.parametrize("f", TREES, ids=ids(TREES))
def test_descriptor_equals_tokuftdump(f):
    b = file_bytes(f)
    h = read_header_slots(b).active
    bt = read_block_table(b, h.translation_offset, h.translation_size, len(b))
    e = bt.entries[2]
    th = f["tokuftdump_header"]
    if th["descriptor_size"] == 0:
        assert int(e["size"]) == 0
        return
    d = read_descriptor(b, int(e["offset"]), int(e["size"]))
    assert d.checksum_ok
    assert len(d.dbt) == th["descriptor_size"] == f["engine_header"]["descriptor_size"]
    assert d.dbt.hex().upper() == th["descriptor_hex"]


@pytest.mark.parametrize("f", TREES, ids=ids(TREES))
def test_free_and_unused_entries(f):
    b = file_bytes(f)
    h = read_header_slots(b).active
    bt = read_block_table(b, h.translation_offset, h.translation_size, len(b))
    rows = f["tokuftdump_translation_table"]["rows"]
    assert bt.free_entries == sum(1 for _, _, size in rows if size == -1)
    assert bt.unused_entries == sum(1 for _, off, size in rows if off == -2 and size == 0)
    assert bt.unused_entries >= 1                       # entry 0 is always the null block
    assert len(bt.used) == sum(1 for _, _, size in rows if size > 0)

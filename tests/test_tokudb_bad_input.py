"""Bad input: torn header slots, a translation table pointing outside the file,
overflowing partitions, bad checksums, unknown versions and method bytes, a
QuickLZ stream lying about its length, truncation and garbage.  Every case: a
named error with file and offset, partial results, no crash; plus a fuzz of
the node reader."""
from __future__ import annotations

import shutil
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dbxray.parsers.codecs.general import DecodeError
from dbxray.parsers.model import UNIT_BAD_CHECKSUM, UNIT_CORRUPT
from dbxray.parsers.scan import scan
from dbxray.parsers.tokudb.ftfile import read_ft_file
from dbxray.parsers.tokudb.header import read_header_slots
from dbxray.parsers.tokudb.node import read_node
from dbxray.parsers.tokudb.payloads import PayloadError, unit_payload
from dbxray.parsers.tokudb.wire import FormatError
from dbxray.parsers.tokudb.x1764 import x1764
from test_tokudb_manifest import TOKU, file_bytes, manifest

EVENTS_MAIN = "_fx_events_main_8_1_1d.tokudb"
ORDERS_STATUS = "_fx_orders_status_4_1_1d.tokudb"
BLOBS_STATUS = "_fx_blobs_status_17a_1_1d.tokudb"
BLOBS_MAIN = "_fx_blobs_main_178_1_1d.tokudb"


def _m(name):
    return next(f for f in manifest()["files"] if f["path"].endswith("/" + name))


def _copy(tmp_path, name) -> tuple[bytearray, object]:
    dst = tmp_path / name
    shutil.copy(TOKU / "datadir" / name, dst)
    dst.chmod(0o644)
    return bytearray(dst.read_bytes()), dst


def _scan_one(path):
    ds = scan(str(path))
    assert ds.errors == []           # the parser never crashed
    return ds.files[0]


def _sub_block_at(b: bytearray, off: int) -> tuple[int, int]:
    c, u = struct.unpack_from("<II", b, off)
    return c, u


def _fix_sub_block_checksum(b: bytearray, off: int) -> None:
    c, _ = _sub_block_at(b, off)
    b[off + 8 + c:off + 12 + c] = x1764(bytes(b[off:off + 8 + c])).to_bytes(4, "little")


def _fix_node_header_checksum(b: bytearray, off: int) -> None:
    n = struct.unpack_from("<I", b, off + 20)[0]
    hlen = 28 + 8 * n
    b[off + hlen - 4:off + hlen] = x1764(bytes(b[off:off + hlen - 4])).to_bytes(4, "little")


def test_torn_active_slot_falls_back_to_the_other(tmp_path):
    b, p = _copy(tmp_path, ORDERS_STATUS)          # active slot at 4096 (checkpoint 2)
    b[4096 + 100] ^= 0xFF                          # torn: checksum no longer matches
    p.write_bytes(b)
    e = _scan_one(p)
    assert any(f"{ORDERS_STATUS} @ offset 4096" in x and "checksum" in x for x in e.errors)
    assert e.sections["tokudb"]["checkpoint_count"] == 1       # the older slot at offset 0
    assert e.detail["tokudb"]["header"].slot_offset == 0
    assert e.sections["tokudb"]["leaf_nodes"] == 1             # and its tree is still read


def test_zeroed_first_slot(tmp_path):
    b, p = _copy(tmp_path, ORDERS_STATUS)
    b[0:4096] = bytes(4096)
    p.write_bytes(b)
    e = _scan_one(p)
    assert any("@ offset 0" in x and "never written" in x for x in e.errors)
    assert e.sections["tokudb"]["checkpoint_count"] == 2


def test_both_slots_bad(tmp_path):
    b, p = _copy(tmp_path, BLOBS_STATUS)
    b[8:12] = (99).to_bytes(4, "big")              # unknown layout version in the only slot
    p.write_bytes(b)
    e = _scan_one(p)
    assert any("@ offset 8" in x and "unknown layout version 99" in x for x in e.errors)
    assert any("no valid header slot" in x for x in e.errors)
    # partial results: the nodes are still found by their magic, as the intact file's table has them
    from dbxray.parsers.tokudb.ftfile import read_ft_file
    orig = (TOKU / "datadir" / BLOBS_STATUS).read_bytes()
    good = read_ft_file(orig, len(orig))
    assert good.nodes
    assert any(f"{len(good.nodes)} node(s) recovered by searching" in x for x in e.errors), e.errors
    assert e.units is not None
    assert sorted(e.units["offset"].tolist()) == sorted(
        p_.sub_block.offset for n in good.nodes.values() for p_ in n.partitions)


def test_block_table_entry_outside_the_file(tmp_path):
    b, p = _copy(tmp_path, EVENTS_MAIN)
    m = _m(EVENTS_MAIN)
    bt_off = m["tokuftdump_translation_table"]["checkpointed"]["location_on_disk"]
    bt_size = m["tokuftdump_translation_table"]["checkpointed"]["size_on_disk"]
    entry = bt_off + 16 + 16 * 7                   # block 7 (a leaf)
    far = len(b) + (1 << 30)
    b[entry:entry + 8] = struct.pack("<II", far >> 32, far & 0xFFFFFFFF)
    b[bt_off + bt_size - 4:bt_off + bt_size] = x1764(bytes(b[bt_off:bt_off + bt_size - 4])).to_bytes(4, "little")
    p.write_bytes(b)
    e = _scan_one(p)
    assert any(f"@ offset {entry}" in x and "block 7" in x and "outside" in x for x in e.errors)
    # partial results: every other node is there
    assert e.sections["tokudb"]["leaf_nodes"] == m["tokuftdump_summary"]["leaf_nodes"] - 1
    assert 7 not in set(e.units["owner"].tolist())


def test_translation_table_outside_the_file(tmp_path):
    b, p = _copy(tmp_path, BLOBS_STATUS)
    b[48:56] = struct.pack("<II", 0, 0x7FFFFFFF)           # translation offset in slot 0
    b[193:197] = x1764(bytes(b[0:193])).to_bytes(4, "little")
    p.write_bytes(b)
    e = _scan_one(p)
    assert any("@ offset 2147483647" in x and "translation table" in x for x in e.errors)


def test_partition_size_overflow(tmp_path):
    b, p = _copy(tmp_path, BLOBS_MAIN)
    node = next(n for n in _m(BLOBS_MAIN)["engine_nodes"] if n["height"] == 0)
    off = node["offset"]
    b[off + 24 + 8 * 2 + 4:off + 24 + 8 * 2 + 8] = (0xFFFFFFF0).to_bytes(4, "little")   # partition 2 size
    _fix_node_header_checksum(b, off)
    p.write_bytes(b)
    e = _scan_one(p)
    assert any(f"@ offset {off + 24 + 16}" in x and "partition 2" in x and "overflows" in x for x in e.errors)
    mine = e.units[e.units["owner"] == node["blocknum"]]
    assert len(mine) == node["n_children"]
    assert ((mine["flags"] & UNIT_CORRUPT) != 0).sum() == 1
    assert int(mine["stored"].max()) <= node["size"]                 # clamped, no bogus 4 GB unit


def test_bad_partition_checksum(tmp_path):
    b, p = _copy(tmp_path, BLOBS_MAIN)
    node = next(n for n in _m(BLOBS_MAIN)["engine_nodes"] if n["height"] == 0)
    part = node["partitions"][3]
    sb = node["offset"] + part["start"]
    b[sb + 40] ^= 0x55                            # inside an uncompressed payload
    p.write_bytes(b)
    e = _scan_one(p)
    assert any(f"@ offset {sb}" in x and "checksum" in x for x in e.errors)
    k = [i for i, u in enumerate(e.units) if int(u["offset"]) == sb][0]
    assert e.units[k]["flags"] & UNIT_BAD_CHECKSUM
    with pytest.raises(PayloadError, match=f"offset {sb}.*checksum"):
        unit_payload(e, k)
    assert len(unit_payload(e, k, verify=False)) == part["disk_size"] - 13    # C - 1 raw bytes


def test_unknown_node_layout_version(tmp_path):
    b, p = _copy(tmp_path, EVENTS_MAIN)
    node = _m(EVENTS_MAIN)["engine_nodes"][3]
    off = node["offset"]
    b[off + 8:off + 12] = (77).to_bytes(4, "little")
    _fix_node_header_checksum(b, off)
    p.write_bytes(b)
    e = _scan_one(p)
    assert any(f"@ offset {off + 8}" in x and "unknown layout version 77" in x for x in e.errors)
    assert e.sections["tokudb"]["leaf_nodes"] == _m(EVENTS_MAIN)["tokuftdump_summary"]["leaf_nodes"] - 1


def test_unknown_method_byte(tmp_path):
    b, p = _copy(tmp_path, EVENTS_MAIN)
    node = _m(EVENTS_MAIN)["engine_nodes"][3]
    sb = node["offset"] + node["partitions"][0]["start"]
    b[sb + 8] = 0x0C
    _fix_sub_block_checksum(b, sb)
    p.write_bytes(b)
    e = _scan_one(p)
    assert any(f"@ offset {sb + 8}" in x and "unknown compression method byte 0x0c" in x for x in e.errors)
    k = [i for i, u in enumerate(e.units) if int(u["offset"]) == sb][0]
    assert e.units[k]["kind"] == 0x0C and e.units[k]["flags"] & UNIT_CORRUPT
    with pytest.raises(DecodeError, match=f"offset {sb}.*0x0c"):
        unit_payload(e, k)


def test_quicklz_stream_lying_about_its_length(tmp_path):
    b, p = _copy(tmp_path, BLOBS_STATUS)
    node = _m(BLOBS_STATUS)["engine_nodes"][0]
    sb = node["offset"] + node["partitions"][0]["start"]
    q = sb + 9                                    # the QuickLZ stream after the 0x39 byte
    assert b[sb + 8] == 0x39 and b[q] & 2         # 9-byte QuickLZ header
    usize = int.from_bytes(b[q + 5:q + 9], "little")
    b[q + 5:q + 9] = (usize + 4096).to_bytes(4, "little")
    _fix_sub_block_checksum(b, sb)
    p.write_bytes(b)
    e = _scan_one(p)
    assert any(f"@ offset {sb}" in x and "quicklz" in x for x in e.errors)
    assert e.sections["tokudb"]["disk_bytes"] == node["size"]       # sizes still from headers
    with pytest.raises(DecodeError, match=f"offset {sb}.*quicklz"):
        unit_payload(e, 0)


def test_truncated_and_garbage_files(tmp_path):
    b, p = _copy(tmp_path, EVENTS_MAIN)
    p.write_bytes(b[:len(b) // 2])
    e = _scan_one(p)
    assert e.errors and all(EVENTS_MAIN in x for x in e.errors)
    g = tmp_path / "garbage.tokudb"
    g.write_bytes(b"tokudata" + bytes(range(256)) * 40)
    e = _scan_one(g)
    assert any("garbage.tokudb @ offset" in x for x in e.errors)
    z = tmp_path / "zero.tokudb"
    z.write_bytes(bytes(100000))
    e = _scan_one(z)
    assert e.errors


def _mutate(block: bytes, flips) -> bytes:
    b = bytearray(block)
    for pos, x in flips:
        b[pos % len(b)] ^= x
    return bytes(b)


_NODE_FILE = file_bytes(_m(EVENTS_MAIN))
_NODES = _m(EVENTS_MAIN)["engine_nodes"][:6]


@settings(max_examples=200, deadline=None)
@given(st.integers(0, len(_NODES) - 1),
       st.lists(st.tuples(st.integers(0, 4096), st.integers(1, 255)), min_size=1, max_size=8))
def test_node_reader_fuzz(k, flips):
    n = _NODES[k]
    block = _NODE_FILE[n["offset"]:n["offset"] + n["size"]]
    bad = _mutate(block, flips)
    try:
        node = read_node(bad, 0, len(bad), n["blocknum"], verify=True, entries=True)
    except FormatError as e:
        assert e.offset is not None
        return
    for off, msg in node.errors:
        assert isinstance(msg, str) and (off is None or 0 <= off <= len(bad))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40000), st.integers(1, 255)), min_size=1, max_size=12))
def test_whole_file_fuzz(flips):
    src = file_bytes(_m(BLOBS_STATUS))
    bad = _mutate(src, flips)
    ft = read_ft_file(bad, len(bad), verify=True, entries=True)
    assert all(isinstance(m, str) for _, m in ft.errors)
    if ft.header is None:
        assert read_header_slots(bad).active is None


def test_huge_claims_are_refused_unread(tmp_path):
    """A block table entry claiming a 1.5 GiB node in a (sparse) 2 GiB file and a
    sub-block claiming 4 GiB uncompressed: refused by size, nothing allocated."""
    b, p = _copy(tmp_path, BLOBS_STATUS)
    m = _m(BLOBS_STATUS)
    bt_off = m["tokuftdump_translation_table"]["checkpointed"]["location_on_disk"]
    bt_size = m["tokuftdump_translation_table"]["checkpointed"]["size_on_disk"]
    entry = bt_off + 16 + 16 * 3
    big = 3 << 29
    b[entry + 8:entry + 16] = struct.pack("<II", big >> 32, big & 0xFFFFFFFF)
    b[bt_off + bt_size - 4:bt_off + bt_size] = x1764(bytes(b[bt_off:bt_off + bt_size - 4])).to_bytes(4, "little")
    p.write_bytes(b)
    with open(p, "r+b") as fh:
        fh.truncate(2 << 30)                       # sparse: no disk used
    e = _scan_one(p)
    assert any("block 3" in x and "implausibly large" in x and f"@ offset {m['engine_nodes'][0]['offset']}" in x
               for x in e.errors)
    # a sub-block whose uncompressed size claims 4 GiB
    b, p = _copy(tmp_path, BLOBS_STATUS)
    node = m["engine_nodes"][0]
    sb = node["offset"] + node["partitions"][0]["start"]
    b[sb + 4:sb + 8] = (0xFFFFFFFF).to_bytes(4, "little")
    _fix_sub_block_checksum(b, sb)
    p.write_bytes(b)
    e = _scan_one(p)
    assert any(f"@ offset {sb + 4}" in x and "implausible" in x for x in e.errors)


def _raw_partitions():
    from dbxray.parsers.tokudb.content import read_partition
    b = file_bytes(_m(EVENTS_MAIN))
    ft = read_ft_file(b, len(b), verify=False, entries=False)
    leaf = next(n for n in ft.nodes.values() if n.is_leaf and n.n_children > 1)
    inner = next(n for n in ft.nodes.values() if not n.is_leaf and any(p.sub_block.uncompressed_size > 100
                                                                      for p in n.partitions))
    bp = max(inner.partitions, key=lambda p: p.sub_block.uncompressed_size)
    return read_partition(b, leaf.partitions[0].sub_block), read_partition(b, bp.sub_block)


_LEAF_RAW, _BUF_RAW = _raw_partitions()


@settings(max_examples=200, deadline=None)
@given(st.booleans(), st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(1, 255)), min_size=1, max_size=6),
       st.integers(0, 64))
def test_leaf_and_buffer_decoder_fuzz(leaf, flips, cut):
    from dbxray.parsers.tokudb.leaf import read_basement
    from dbxray.parsers.tokudb.nonleaf import read_message_buffer
    raw = _mutate(_LEAF_RAW if leaf else _BUF_RAW, flips)
    raw = raw[:len(raw) - cut] if cut else raw
    try:
        if leaf:
            bn = read_basement(raw)
            assert len(bn.entries) == bn.num_entries
        else:
            mb = read_message_buffer(raw, keep=True)
            assert len(mb.items) == mb.messages
    except FormatError as e:
        assert e.offset is not None


def test_hole_punched_into_a_node(tmp_path):
    """A hole inside a node (bytes read back as zeros): the units there are flagged
    UNIT_HOLE, their checksums fail, every other node is still read."""
    from fixtures_util import punch_hole
    from dbxray.parsers.model import UNIT_HOLE
    _, p = _copy(tmp_path, BLOBS_MAIN)
    node = next(n for n in _m(BLOBS_MAIN)["engine_nodes"] if n["height"] == 0 and n["size"] > 100000)
    start = (node["offset"] + 65536) // 4096 * 4096
    punch_hole(p, start, 8192)
    e = _scan_one(p)
    if not e.holes:
        pytest.skip("filesystem without hole support")
    hit = e.units[(e.units["flags"] & UNIT_HOLE) != 0]
    assert len(hit) >= 1
    assert all(int(u["offset"]) < start + 8192 and int(u["offset"]) + int(u["stored"]) > start for u in hit)
    assert (hit["flags"] & UNIT_BAD_CHECKSUM).any()
    assert any("checksum" in x for x in e.errors)
    assert e.sections["tokudb"]["leaf_nodes"] == _m(BLOBS_MAIN)["tokuftdump_summary"]["leaf_nodes"]


def test_older_header_layout_versions():
    """Layout 28 has no logical row count, 26/27 no fanout either
    (ft-serialize.cc serialize_ft_min_size): the checksum moves up."""
    b = bytearray(file_bytes(_m(BLOBS_STATUS))[:8192])
    h29 = read_header_slots(bytes(b)).active
    for version, size in ((28, 189), (27, 185), (26, 185)):
        s = bytearray(b[:4096])
        s[8:12] = version.to_bytes(4, "big")
        s[16:20] = size.to_bytes(4, "big")
        s[size - 4:size] = x1764(bytes(s[:size - 4])).to_bytes(4, "little")
        h = read_header_slots(bytes(s) + bytes(4096)).active
        assert h.checksum_ok and h.layout_version == version
        assert h.nodesize == h29.nodesize and h.max_msn_in_ft == h29.max_msn_in_ft
        assert h.on_disk_logical_rows is None
        assert h.fanout == (h29.fanout if version == 28 else None)
    s = bytearray(b[:4096])
    s[8:12] = (25).to_bytes(4, "big")
    slots = read_header_slots(bytes(s) + bytes(4096))
    assert slots.active is None and "unknown layout version 25" in slots.errors[0][1]


def test_node_search_skips_holes_and_works_through_a_pread_buffer():
    """The magic search of the recovery path reads only the data ranges (a 1 TB
    sparse file costs nothing) and accepts any sliceable buffer."""
    from dbxray.parsers.tokudb.ftfile import data_ranges_from_holes, find_node_offsets
    orig = (TOKU / "datadir" / BLOBS_STATUS).read_bytes()

    class Sliced:                      # like scan.py's pread fallback: slicing only
        def __getitem__(self, s):
            return orig[s]
    full = find_node_offsets(orig, len(orig))
    assert full and find_node_offsets(Sliced(), len(orig)) == full
    ranges = data_ranges_from_holes([(0, 8192), (full[0], 512)], len(orig))
    assert ranges[0][0] == 8192 and find_node_offsets(orig, len(orig), ranges) == full[1:]
    assert data_ranges_from_holes([(0, 1 << 40)], 1 << 40) == []
    assert find_node_offsets(b"", 1 << 40, []) == []

"""Node headers, sub-blocks and method bytes, read from headers only, against
the engine's per-node report (engine_nodes) and the cross-check sizes."""
from __future__ import annotations

from collections import Counter

import pytest

from dbxray.parsers.tokudb.ftfile import read_ft_file
from dbxray.parsers.tokudb.nonleaf import buffer_memory_bytes
from dbxray.parsers.tokudb.scan import per_height
from test_tokudb_manifest import file_bytes, ids, tree_files

TREES = tree_files()


@pytest.fixture(scope="module")
def parsed():
    out = {}
    for f in TREES:
        b = file_bytes(f)
        out[f["path"]] = read_ft_file(b, len(b), verify=True, entries=True)
    return out


@pytest.mark.parametrize("f", TREES, ids=ids(TREES))
def test_every_node_equals_engine_nodes(f, parsed):
    ft = parsed[f["path"]]
    assert ft.errors == []
    assert sorted(ft.nodes) == sorted(n["blocknum"] for n in f["engine_nodes"])
    for en in f["engine_nodes"]:
        n = ft.nodes[en["blocknum"]]
        assert (n.offset, n.size, n.height, n.n_children) == (en["offset"], en["size"], en["height"],
                                                              en["n_children"])
        assert (n.layout_version, n.layout_version_original, n.build_id) == (
            en["layout_version"], en["layout_version_original"], en["build_id"])
        assert n.serialize_size == en["serialize_size"]
        assert n.header_checksum_ok
        if n.height > 0:       # node info is decoded for internal nodes
            assert n.max_msn_applied_to_node_on_disk == en["max_msn_applied_to_node_on_disk"]
            assert n.oldest_referenced_xid_known == en["oldest_referenced_xid_known"]
            assert n.flags == en["flags"]
            assert n.children == [p["child_blocknum"] for p in en["partitions"]]
        assert len(n.partitions) == len(en["partitions"])
        for p, ep in zip(n.partitions, en["partitions"]):
            assert (p.start, p.disk_size) == (ep["start"], ep["disk_size"])
            assert p.entries == (ep["klpairs"] if n.height == 0 else ep["messages"])
            if n.height > 0:       # buffer bytes from the sub-block header and the count alone
                assert buffer_memory_bytes(p.sub_block.uncompressed_size, p.entries) == ep["message_bytes"]
            assert p.sub_block.checksum_ok is True


@pytest.mark.parametrize("f", TREES, ids=ids(TREES))
def test_sub_blocks_equal_crosscheck(f, parsed):
    ft = parsed[f["path"]]
    cc = f["fixture_parser_crosscheck"]
    seen = Counter()
    for cn in cc["nodes"]:
        n = ft.nodes[cn["blocknum"]]
        assert n.magic.decode() == cn["magic"]
        assert n.header_len == cn["header_bytes"]
        ni = cn["node_info"]
        assert (n.node_info.compressed_size, n.node_info.uncompressed_size, n.node_info.method_byte) == (
            ni["compressed_size"], ni["uncompressed_size"], ni["method_byte"])
        assert n.node_info.checksum_ok
        seen[f"0x{n.node_info.method_byte:02x}"] += 1
        for p, cp in zip(n.partitions, cn["partitions"]):
            sb = p.sub_block
            assert (sb.compressed_size, sb.uncompressed_size, sb.method_byte) == (
                cp["compressed_size"], cp["uncompressed_size"], cp["method_byte"])
            seen[f"0x{sb.method_byte:02x}"] += 1
        assert n.used_bytes == cn["used_bytes_in_block"]
        assert n.serialize_size == cn["uncompressed_total"]
    assert dict(seen) == cc["method_bytes_seen"]


@pytest.mark.parametrize("f", TREES, ids=ids(TREES))
def test_per_height_equals_tokuftdump_summary(f, parsed):
    ft = parsed[f["path"]]
    s = f["tokuftdump_summary"]
    ph = per_height(ft)
    assert sorted(ph) == sorted(int(k) for k in s["per_height"])
    for k, want in s["per_height"].items():
        got = ph[int(k)]
        assert got["nodes"] == want["nodes"]
        assert got["disk_bytes"] == want["disksize"]
        assert got["uncompressed_bytes"] == want["uncompressed_size"]
        if int(k) == 0:
            assert got["children"] == want["basement_nodes"]
        else:
            assert got["entries"] == want["msg_cnt"]
        assert got["message_bytes"] == want["msg_size"]
    assert ft.height == s["tree_height"]
    assert sum(v["disk_bytes"] for v in ph.values()) == s["total_size"]
    assert sum(v["uncompressed_bytes"] for v in ph.values()) == s["total_uncompressed_size"]
    assert ph[0]["entries"] == s["records_count"]
    assert ph[0]["disk_bytes"] == s["leaf_size"]
    assert sum(v["entries"] for k, v in ph.items() if k > 0) == s["messages_count"]
    assert sum(v["message_bytes"] for v in ph.values()) == s["messages_size"]


@pytest.mark.parametrize("f", TREES, ids=ids(TREES))
def test_header_only_read_touches_no_payload(f, monkeypatch):
    """Without entry counts and checksum checks, no decoder runs at all for leaves."""
    import dbxray.parsers.tokudb.node as node_mod
    calls = []
    monkeypatch.setattr(node_mod, "decompress_prefix", lambda *a, **k: calls.append(a) or b"")
    b = file_bytes(f)
    ft = read_ft_file(b, len(b), verify=False, entries=False)
    assert calls == []
    ph = per_height(ft)
    s = f["tokuftdump_summary"]
    assert {k: (v["nodes"], v["disk_bytes"], v["uncompressed_bytes"]) for k, v in ph.items()} == {
        int(k): (v["nodes"], v["disksize"], v["uncompressed_size"]) for k, v in s["per_height"].items()}

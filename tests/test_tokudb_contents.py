"""Leaf and internal-node contents (full decompression, every codec) against the
engine: basements, leaf entries, message buffers, and the logical content a
cursor scan returns (final_logical_content)."""
from __future__ import annotations

import pytest

from dbxray.parsers.tokudb.content import logical_content, read_partition
from dbxray.parsers.tokudb.ftfile import read_ft_file
from dbxray.parsers.tokudb.leaf import read_basement
from dbxray.parsers.tokudb.nonleaf import read_message_buffer
from test_tokudb_manifest import dictionary_files, file_bytes, ids, tree_files

TREES = tree_files()
DICTS = dictionary_files()


@pytest.mark.parametrize("f", TREES, ids=ids(TREES))
def test_partitions_decode_to_engine_counts(f):
    b = file_bytes(f)
    ft = read_ft_file(b, len(b))
    cc = {n["blocknum"]: n for n in f["fixture_parser_crosscheck"]["nodes"]}
    for en in f["engine_nodes"]:
        n = ft.nodes[en["blocknum"]]
        for i, (p, ep) in enumerate(zip(n.partitions, en["partitions"])):
            raw = read_partition(b, p.sub_block)
            assert len(raw) == p.sub_block.uncompressed_size
            cp = cc[en["blocknum"]]["partitions"][i]
            if n.is_leaf:
                bn = read_basement(raw)
                assert bn.checksum_ok
                assert bn.num_entries == ep["klpairs"] == len(bn.entries)
                assert bn.key_data_size + bn.val_data_size == ep["bn_disk_size"]
                assert (bn.clean, bn.mvcc) == (cp["clean_leafentries"], cp["mvcc_leafentries"])
                layout = "keys_vals_separate" if bn.keys_vals_separate else "packed_leafentries"
                assert layout == cp["basement_layout"]
            else:
                mb = read_message_buffer(raw)
                assert mb.checksum_ok
                assert mb.messages == ep["messages"]
                assert mb.memory_bytes == ep["message_bytes"]
                assert {k: v for k, v in mb.types.items()} == _type_names(cp["message_types"])


def _type_names(d: dict) -> dict:
    names = {"1": "insert", "2": "delete_any", "6": "commit_broadcast_all"}
    return {names.get(k, k): v for k, v in d.items()}


@pytest.mark.parametrize("f", DICTS, ids=ids(DICTS))
def test_logical_content_equals_cursor_scan(f):
    b = file_bytes(f)
    ft = read_ft_file(b, len(b))
    c = logical_content(b, ft)
    want = f["final_logical_content"]
    assert c.errors == []
    assert len(c.rows) == want["live_rows"]
    assert c.key_bytes == want["key_bytes"]
    assert c.value_bytes == want["val_bytes"]
    assert c.leaf_entries == f["tokuftdump_summary"]["records_count"]

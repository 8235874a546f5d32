"""TokuDB typed file facts (parsers/tokudb/facts.py), what the TokuDB view draws,
against tokuftdump's translation table and the engine's own node list in the
manifest: every used block once, by offset, classified by what it holds."""
from __future__ import annotations

import numpy as np
import pytest

from dbxray.parsers.scan import scan
from dbxray.parsers.tokudb.facts import BLOCK_KINDS, TokuDBFileFacts, classify_blocks
from test_tokudb_manifest import tree_files


@pytest.fixture(scope="module")
def ds(sparse_fixtures):
    return scan(str(sparse_fixtures / "tokudb" / "datadir"))


def test_blocks_are_tokuftdumps_translation_table_with_node_heights(ds):
    checked = 0
    for mf in tree_files():
        e = ds.file(mf["path"].split("/", 1)[1])
        assert e is not None, mf["path"]
        f = e.facts
        assert isinstance(f, TokuDBFileFacts)
        rows = [r for r in mf["tokuftdump_translation_table"]["rows"] if r[1] >= 0 and r[2] > 0]
        want = sorted((off, bn, size) for bn, off, size in rows)
        got = [(int(o), int(b), int(s)) for b, o, s in zip(f.blocks["blocknum"], f.blocks["offset"],
                                                           f.blocks["size"])]
        assert got == want, mf["path"]
        kind = {int(b): f.block_kinds[int(k)] for b, k in zip(f.blocks["blocknum"], f.blocks["kind"])}
        assert kind[1] == "translation"
        assert kind.get(2, "descriptor") == "descriptor"       # (an empty descriptor has no block)
        for n in mf["engine_nodes"]:
            assert kind[n["blocknum"]] == f"h{min(n['height'], 3)}", (mf["path"], n["blocknum"])
            shape = f.nodes[n["blocknum"]]
            assert (shape.height, shape.n_children, shape.serialize_size) == \
                (n["height"], n["n_children"], n["serialize_size"])
        sec = e.sections["tokudb"]
        assert (f.header_numbytes, f.header_numrows) == (sec["on_disk_numbytes"], sec["on_disk_numrows"])
        checked += 1
    assert checked == 12


def test_classify_unknown_and_rollback_blocks():
    used = np.array([(5, 40960, 100), (1, 8192, 50), (9, 20000, 7), (7, 30000, 8)],
                    dtype=[("blocknum", "<i8"), ("offset", "<i8"), ("size", "<i8")])
    out = classify_blocks(used, {5: 0, 9: None, 7: 6}, rollback=[9])
    assert out["offset"].tolist() == [8192, 20000, 30000, 40960]
    assert [BLOCK_KINDS[k] for k in out["kind"]] == ["translation", "rollback", "h3", "h0"]

"""The unit map draws any engine's units: an engine added to the registry with a
unit geometry (here a toy one whose blocks vary in size, 8 to a row) gets a map,
its legend, hole allocation and the report's view, with no view of its own."""
from __future__ import annotations

import numpy as np
import pytest

from dbxray.parsers import engines
from dbxray.parsers.engine import Engine
from dbxray.parsers.model import UNIT_COMPRESSED, UnitFacts, UnitGeometry, empty_units
from dbxray.parsers.scan import scan
from dbxray.parsers.tree import build_tree
from dbxray.viz.extentmap import ExtentMapView, MapData, mapped_files

BLOCKS = [(0, 4096, "header"), (4096, 1500, "lz"), (8192, 3000, "lz"), (12288, 4096, "raw"),
          (16384, 2000, "lz"), (20480, 4096, "raw"), (24576, 4096, "raw"), (28672, 1000, "lz"),
          (32768, 4096, "raw"), (36864, 4096, "raw")]
KINDS = {"header": 1, "lz": 2, "raw": 3}


class Blocks(Engine):
    name = "blocks"
    label = "Blocks"
    roles = ("dictionary",)
    head_bytes = 8

    def claim_bytes(self, head, tail):
        return "dictionary" if head[:8] == b"BLOCKS!!" else None

    def analyze(self, dataset, files, ctx):
        for f in files:
            u = empty_units(len(BLOCKS))
            for i, (off, stored, kind) in enumerate(BLOCKS):
                u[i]["offset"], u[i]["stored"], u[i]["logical"] = off, stored, 4096
                u[i]["kind"] = KINDS[kind]
                u[i]["owner"] = i // 4
                u[i]["flags"] = UNIT_COMPRESSED if kind == "lz" else 0
                u[i]["fill"] = stored / 4096
            f.units = u
            f.kind_names = {v: k for k, v in KINDS.items()}
            f.owner_names = {0: "tree A", 1: "tree B", 2: "tree C"}
            f.unit_facts = UnitFacts(level=np.array([i % 2 for i in range(len(BLOCKS))]))

    def unit_geometry(self, entry):
        return UnitGeometry(0, 0, 8, "block", "row")


@pytest.fixture
def blocks_dataset(monkeypatch, tmp_path):
    monkeypatch.setattr(engines, "ENGINES", engines.ENGINES + (Blocks(),))
    data = bytearray(40960)
    data[:8] = b"BLOCKS!!"
    p = tmp_path / "one.blk"
    p.write_bytes(bytes(data))
    with open(p, "r+b") as fh:             # the last block lies in a hole
        import ctypes
        import os
        libc = ctypes.CDLL(None, use_errno=True)
        libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
        assert libc.fallocate(fh.fileno(), 0x01 | 0x02, 36864, 4096) == 0
        os.fsync(fh.fileno())
    ds = scan(str(tmp_path))
    return ds


def test_map_data_from_the_geometry(blocks_dataset):
    ds = blocks_dataset
    (e,) = mapped_files(ds)
    d = MapData(e)
    assert (d.n_pages, d.extent_pages, d.rows) == (10, 8, 2) and d.contiguous
    res = d.mode("type")
    assert dict(zip(res.labels, res.counts.tolist())) == {"header": 1, "lz": 4, "raw": 5}
    sizes = dict(zip(res.labels, res.sizes.tolist()))
    assert sizes == {"header": 4096.0, "lz": 7500.0, "raw": 20480.0}       # each block's own stored bytes
    alloc = d.mode("allocation")
    got = dict(zip(alloc.labels, alloc.counts.tolist()))
    assert got[alloc.labels[2]] == 1 and got[alloc.labels[0]] == 9          # one block wholly in the hole
    assert d.fact("level", 3) == 1


def test_view_draws_the_engine_without_a_view_of_its_own(qtbot, blocks_dataset, artifacts_dir):
    ds = blocks_dataset
    assert ExtentMapView.shows(ds)
    v = ExtentMapView()
    qtbot.addWidget(v)
    v.resize(900, 500)
    v.set_dataset(ds, build_tree(ds))
    v.show()
    qtbot.waitExposed(v)
    assert v.data is not None and v.data.n_pages == 10
    for mode in ("type", "index", "fill", "allocation"):
        v.set_mode(mode)
        assert v.legend.rowCount() > 0
    v.set_mode("type")
    qtbot.wait(30)
    v.grab().save(str(artifacts_dir / "unitmap_generic_engine.png"))


def test_tokudb_partitions_on_the_map(sparse_fixtures, qtbot, artifacts_dir):
    """TokuDB gives a geometry: its partitions in file order, coloured by method (counts equal
    the JSON's node_methods), node and tree height, with TokuDB's words."""
    ds = scan(str(sparse_fixtures / "tokudb" / "datadir"))
    files = mapped_files(ds)
    assert files and all(f.engine == "tokudb" and f.role == "dictionary" for f in files)
    e = ds.file("_fx_events_main_8_1_1d.tokudb")
    d = MapData(e)
    assert (d.geometry.unit_name, d.extent_pages) == ("partition", 32)
    assert [m for m, _ in d.modes()] == ["type", "index", "level", "compression", "allocation", "checksum"]
    res = d.mode("type")
    assert dict(zip(res.labels, res.counts.tolist())) == e.sections["tokudb"]["node_methods"]
    cells = np.empty(len(e.units), dtype=np.int64)
    cells[d.page_no] = e.units["offset"]
    assert (np.diff(cells) > 0).all()                       # cell order is file order
    lv = d.mode("level")
    levels = dict(zip(lv.labels, lv.counts.tolist()))
    assert levels["leaf (level 0)"] == int(((e.units["flags"] & 0x40) != 0).sum())
    v = ExtentMapView()
    qtbot.addWidget(v)
    v.resize(1300, 800)
    v.set_dataset(ds, build_tree(ds))
    v.show_file(e)
    assert [v.mode_combo.itemText(i) for i in range(v.mode_combo.count())][:3] == \
        ["Compression method", "Node", "Tree height"]
    v.set_mode("level")
    v.set_mode("lsn")                      # not a TokuDB mode: ignored, the current one stays
    assert v.mode_id == "level"
    qtbot.wait(30)
    v.grab().save(str(artifacts_dir / "unitmap_tokudb_heights.png"))

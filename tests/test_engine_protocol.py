"""The engine protocol and registry: what every engine declares agrees with the
JSON schema and the model, and an engine added to the registry (here a toy one,
known by a footer) is detected, scanned, placed in the tree, written to the JSON
and reopened from a saved scan without a change anywhere else."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from dbxray.parsers import engines
from dbxray.parsers.engine import Engine
from dbxray.parsers.model import ROLES, empty_units
from dbxray.parsers.savedscan import load_saved_scan
from dbxray.parsers.scan import scan
from dbxray.parsers.tree import build_tree

REPO = Path(__file__).resolve().parent.parent


def test_registry_names_and_roles_agree_with_the_schema_and_the_model():
    schema = json.loads((REPO / "resources" / "scan.schema.json").read_text())
    props = schema["properties"]
    names = list(engines.names())
    assert len(set(names)) == len(names) == len(engines.ENGINES)
    assert props["engines"]["items"]["enum"] == names
    file_props = props["files"]["items"]["properties"]
    assert file_props["engine"]["enum"] == names + [None]
    assert file_props["role"]["enum"] == list(ROLES)
    for e in engines.ENGINES:
        assert isinstance(e, Engine) and e.label and e.name == e.name.lower()
        assert set(e.roles) <= set(ROLES), e
        assert engines.get(e.name) is e
    assert engines.get(None) is None and engines.get("nope") is None
    assert engines.label(None) == "Other files"
    order = [e.claim_order for e in engines.claim_order()]
    assert order == sorted(order)


TOY_MAGIC = b"TOYDB-FOOTER!"


class Toy(Engine):
    """A made-up engine: files end with a 13-byte magic (found by the tail, any name);
    each file is cut in 4 KiB units."""

    name = "toy"
    label = "ToyDB"
    roles = ("dictionary",)
    tail_bytes = len(TOY_MAGIC)

    def claim_bytes(self, head, tail):
        return "dictionary" if tail == TOY_MAGIC else None

    def analyze(self, dataset, files, ctx):
        for f in files:
            n = -(-f.apparent_bytes // 4096)
            units = empty_units(n)
            units["offset"] = np.arange(n) * 4096
            units["stored"] = units["logical"] = 4096
            f.units = units
            f.database, f.table = "toys", f.path.rsplit(".", 1)[0]
            f.sections["toy"] = {"units": int(n)}
            dataset.table(self.name, "toys", f.table).files.append(f.path)

    def place(self, entry):
        return entry.database or "(toys)", entry.table, None

    def restore(self, dataset):
        for t in dataset.tables:
            if t.engine == self.name:
                t.info = {"restored": True}


@pytest.fixture
def with_toy(monkeypatch):
    monkeypatch.setattr(engines, "ENGINES", engines.ENGINES + (Toy(),))
    yield


def test_an_engine_added_to_the_registry_works_end_to_end(with_toy, tmp_path, fixtures_root):
    d = tmp_path / "dir"
    d.mkdir()
    (d / "shelf.weird").write_bytes(b"\x01" * 9000 + TOY_MAGIC)       # no known name: the footer says
    (d / "notes.txt").write_bytes(b"nothing to see")
    tablespace = fixtures_root / "innodb" / "16k" / "fx" / "t_dynamic.ibd"
    (d / "t_dynamic.ibd").write_bytes(tablespace.read_bytes())
    ds = scan(str(d))
    by = {f.path: f for f in ds.files}
    assert (by["shelf.weird"].engine, by["shelf.weird"].role) == ("toy", "dictionary")
    assert by["notes.txt"].engine is None and by["t_dynamic.ibd"].engine == "innodb"
    assert ds.engines == ["innodb", "toy"] and not ds.errors
    assert len(by["shelf.weird"].units) == 3
    root = build_tree(ds)
    toy = next(c for c in root.children if c.kind == "engine" and c.name == "ToyDB")
    assert [c.name for c in toy.children] == ["toys"] and toy.children[0].children[0].name == "shelf"
    out = tmp_path / "scan.dbxray.json"
    out.write_text(json.dumps(ds.to_json()))
    data = json.loads(out.read_text())
    assert data["engines"] == ["innodb", "toy"]
    assert next(f for f in data["files"] if f["path"] == "shelf.weird")["toy"] == {"units": 3}
    again = load_saved_scan(str(out))
    assert again.engines == ["innodb", "toy"]
    assert next(t for t in again.tables if t.engine == "toy").info == {"restored": True}


def test_without_the_toy_its_file_is_other(tmp_path):
    (tmp_path / "shelf.weird").write_bytes(b"\x01" * 9000 + TOY_MAGIC)
    ds = scan(str(tmp_path))
    assert (ds.files[0].engine, ds.files[0].role) == (None, "other")


def test_a_footer_shorter_than_the_tail_is_read_whole(with_toy, tmp_path):
    (tmp_path / "tiny").write_bytes(TOY_MAGIC)
    (tmp_path / "tinier").write_bytes(TOY_MAGIC[3:])
    ds = scan(str(tmp_path))
    assert {f.path: f.engine for f in ds.files} == {"tiny": "toy", "tinier": None}

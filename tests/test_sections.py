"""Typed JSON sections (parsers/section.py): each engine's ``files[].<engine>`` is a
class declaring its keys; the JSON is produced from it and a saved scan reads it
back into the same type, equal key for key."""
from __future__ import annotations

import json

import pytest

from dbxray.parsers.aria.section import AriaControlSection, AriaDataSection, AriaIndexSection, AriaLogSection
from dbxray.parsers.clickhouse.section import ClickHouseFileSection, ClickHouseSection
from dbxray.parsers.csv.section import CsvDataSection, CsvMetaSection
from dbxray.parsers.innodb.section import InnoDBSection
from dbxray.parsers.myisam.section import MyisamDataSection, MyisamIndexSection
from dbxray.parsers.savedscan import load_saved_scan
from dbxray.parsers.scan import scan
from dbxray.parsers.section import ABSENT, Key, Section
from dbxray.parsers.tokudb.section import TokuDBFileSection, TokuDBLogSection, TokuDBTreeSection


class Two(Section):
    first: int = Key()
    second: str = Key()


def test_keys_in_declared_order_absent_keys_and_unknown_ones():
    s = Two(second="b", first=1)
    assert list(s) == ["first", "second"] and json.dumps(s) == '{"first": 1, "second": "b"}'
    assert s.first == 1 and Two().second is ABSENT and "second" not in Two(first=2)
    s.second = ABSENT
    assert s == {"first": 1}
    with pytest.raises(TypeError, match="no such key"):
        Two(third=3)
    back = Two.from_json({"second": "x", "later": [1], "first": 5})     # a saved scan: its order, kept
    assert isinstance(back, Two) and list(back) == ["second", "later", "first"] and back.first == 5
    assert Two.undeclared(back) == ["later"]


@pytest.mark.parametrize("folder, types", [
    ("innodb/16k", {"innodb": (InnoDBSection,)}),
    ("innodb/datadir16k", {"innodb": (InnoDBSection,), "csv": (CsvDataSection, CsvMetaSection)}),
    ("tokudb/datadir", {"tokudb": (TokuDBTreeSection, TokuDBLogSection, TokuDBFileSection)}),
    ("clickhouse/datadir", {"clickhouse": (ClickHouseFileSection,)}),
    ("mariadb/datadir/misc", {"myisam": (MyisamIndexSection, MyisamDataSection),
                              "aria": (AriaIndexSection, AriaDataSection)}),
    ("mariadb/datadir", {"aria": (AriaIndexSection, AriaDataSection, AriaLogSection, AriaControlSection)}),
])
def test_scan_sections_are_typed_and_survive_a_saved_scan(sparse_fixtures, tmp_path, folder, types):
    ds = scan(str(sparse_fixtures / folder))
    p = tmp_path / "s.dbxray.json"
    p.write_text(json.dumps(ds.to_json()))
    saved = load_saved_scan(str(p))
    seen = 0
    for e in ds.files:
        for name, sec in e.sections.items():
            if name not in types:
                continue
            assert isinstance(sec, types[name]), (e.path, type(sec))
            again = saved.file(e.path).sections[name]
            assert type(again) is type(sec) and again == json.loads(json.dumps(sec)), e.path
            seen += 1
    assert seen >= 3


def test_the_clickhouse_dataset_object_is_typed_both_ways(sparse_fixtures, tmp_path):
    ds = scan(str(sparse_fixtures / "clickhouse" / "datadir"))
    sec = ds.sections["clickhouse"]
    assert isinstance(sec, ClickHouseSection) and len(sec.tables) > 5
    p = tmp_path / "s.dbxray.json"
    p.write_text(json.dumps(ds.to_json()))
    again = load_saved_scan(str(p)).sections["clickhouse"]
    assert isinstance(again, ClickHouseSection) and again == json.loads(json.dumps(sec))


def _walk_sections(obj, out):
    """Every Section inside a JSON-shaped object."""
    if isinstance(obj, Section):
        out.append(obj)
    if isinstance(obj, dict):
        for v in obj.values():
            _walk_sections(v, out)
    elif isinstance(obj, list):
        for v in obj:
            _walk_sections(v, out)
    return out


@pytest.mark.parametrize("folder", ["innodb", "innodb-mysql", "clickhouse", "tokudb", "mariadb/datadir"])
def test_every_key_written_is_declared_and_nested_objects_keep_their_types(sparse_fixtures, tmp_path, folder):
    """Each section's keys are declared by its class (the type is the contract), down to the
    nested objects (InnoDB indexes; ClickHouse tables, parts, projection parts, columns,
    subcolumns), and a saved scan gives the same types back at every level."""
    from dbxray.parsers.clickhouse.section import ClickHousePart, ClickHousePartColumn, ClickHouseTable
    from dbxray.parsers.innodb.section import InnoDBIndex
    ds = scan(str(sparse_fixtures / folder))
    live = _walk_sections([e.sections for e in ds.files] + [ds.sections], [])
    assert live
    undeclared = {(type(s).__name__, k) for s in live for k in type(s).undeclared(s)}
    assert undeclared == set()
    p = tmp_path / "s.dbxray.json"
    p.write_text(json.dumps(ds.to_json()))
    saved = load_saved_scan(str(p))
    back = _walk_sections([e.sections for e in saved.files] + [saved.sections], [])
    assert [type(s).__name__ for s in back] == [type(s).__name__ for s in live]
    kinds = {type(s) for s in live}
    if folder == "clickhouse":
        assert {ClickHouseTable, ClickHousePart, ClickHousePartColumn} <= kinds
    if folder.startswith("innodb"):
        assert InnoDBIndex in kinds

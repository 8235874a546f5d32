"""A tree row's kind in the engine's words (Engine.place_kinds): a MyRocks SST is placed
by column family and LSM level, so the inspector says "level", not "table"."""
from dbxray.app.demo import prepare_demo
from dbxray.app.window import inspector_html
from dbxray.parsers import engines
from dbxray.parsers.scan import scan
from dbxray.parsers.tree import build_tree, kind_label


def _under(root, label):
    return next(n for n in root.children if n.kind == "engine" and n.name == label)


def test_levels_and_column_families_are_named_as_such(tmp_path):
    demo, _ = prepare_demo(tmp_path / "cache")
    root = build_tree(scan(str(demo)))
    rocks = _under(root, engines.get("rocksdb").label)
    cf = next(n for n in rocks.children if n.kind == "database" and n.name == "cf_orders")
    level = next(n for n in cf.children if n.kind == "table")
    assert level.name.startswith("L")
    assert (kind_label(cf), kind_label(level)) == ("column family", "level")
    assert "<td>level</td>" in inspector_html(level)
    # the other engines keep database and table
    inno = _under(root, engines.get("innodb").label)
    db = next(n for n in inno.children if n.kind == "database")
    table = next(n for n in db.children if n.kind == "table")
    assert (kind_label(db), kind_label(table)) == ("database", "table")
    assert kind_label(rocks) == "engine"

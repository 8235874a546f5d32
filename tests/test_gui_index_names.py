"""Index rows of the tree (issue 21, defect 10): the indexes of a file that holds several
tables (ibdata1's dictionary tables) carry their table's name as the map's legend does;
an index's BLOB pages (t_access: 9 pages, 144 KiB) are counted under it, the pages
highlighting it in the extent map lights."""
import pytest

from dbxray.parsers.model import UNIT_FREE
from dbxray.parsers.scan import scan
from dbxray.parsers.tree import build_tree
from dbxray.viz.extentmap import ExtentMapView


@pytest.fixture(scope="module")
def scanned(sparse_fixtures):
    ds = scan(str(sparse_fixtures / "innodb" / "datadir16k"))
    return ds, build_tree(ds)


def _file(root, suffix):
    return next(n for n in root.walk() if n.kind == "file" and n.path.endswith(suffix))


def test_ibdata1_indexes_named_with_their_tables(scanned, qtbot):
    ds, root = scanned
    names = {c.name for c in _file(root, "ibdata1").children}
    assert {"SYS_TABLES.CLUST_IND", "SYS_TABLES.ID_IND", "SYS_COLUMNS.CLUST_IND", "SYS_INDEXES.CLUST_IND"} <= names
    assert "CLUST_IND" not in names and "ID_IND" not in names
    v = ExtentMapView()
    qtbot.addWidget(v)
    v.set_dataset(ds, root)
    entry = _file(root, "ibdata1").ref
    v._set_files([entry], entry)
    legend = set(v.data.index_names().values())
    assert {n for n in names if not n.startswith("index ")} <= legend | {f"{n}" for n in names}
    assert "SYS_TABLES.CLUST_IND" in legend


def test_blob_pages_counted_under_their_index(scanned, qtbot):
    ds, root = scanned
    fnode = _file(root, "t_access.ibd")
    primary = next(c for c in fnode.children if c.name == "PRIMARY")
    u = fnode.ref.units
    iid = int(primary.ref["index_id"])
    owned = int(((u["owner"] == iid) & ((u["flags"] & UNIT_FREE) == 0)).sum())
    assert owned == 10 and int(primary.ref["pages"]) == 1        # 1 B-tree page + 9 BLOB pages
    assert primary.allocated == owned * 16384 == 163840
    v = ExtentMapView()
    qtbot.addWidget(v)
    v.set_dataset(ds, root)
    v._set_files([fnode.ref], fnode.ref)
    assert v.highlight_index(iid) == owned                          # what the map lights
    assert fnode.allocated >= sum(c.allocated for c in fnode.children)

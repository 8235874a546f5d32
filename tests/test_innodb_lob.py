"""MySQL 8 LOB chains (parsers/innodb/lob.py) and their figures in files[].innodb.

Real files (innodb-mysql): ibdNinja's blob_external / json_partial* (MySQL 8.0.40 and 9.x) and
the mysql.ibd of the 8.0.13, 8.0.16 and 8.4.8 data directories hold FIL_PAGE_TYPE_LOB_FIRST /
LOB_DATA / LOB_INDEX pages.  Checked against:
* the page-type histogram the manifest's ``observed`` records (every LOB page is reached from a
  first page, or is counted as unreached, and then the extent map says it is free, except the
  28 in-use pages of 8.0.13's mysql.ibd that no first page reaches, reported as such);
* the rows themselves: every live LOB's length equals the BTR_EXTERN length (lob0lob.h ref_t)
  of the clustered-index record that points to its first page;
* blob_external's data, from the source's SQL (KernelMaker/ibdNinja tests/8.0/sql/12_blob_external.sql:
  REPEAT of 32000, 65000, 20000, 20000 bytes and 16000 after the UPDATE).

innodb-public sakila 8.0 staff.ibd holds one LOB (checked against its row reference).

No fixture holds a ZLOB (FIL_PAGE_TYPE_ZLOB_*: ROW_FORMAT=COMPRESSED with external fields;
the innodb-mysql manifest's histograms and a scan of every innodb-mysql and innodb-public file
(zipped data dirs included) find no page of types 25..29): the
ZLOB tests build the pages from the layout in MySQL's zlob0first.h / zlob0index.h / lob0impl.h
(the offsets named in lob.py), as do the bad-input cases.
"""
from __future__ import annotations

import json
import struct
import zipfile

import numpy as np
import pytest

from dbxray.parsers.fileio import ReadOnlyFile
from dbxray.parsers.innodb import lob as L
from dbxray.parsers.innodb.fil import (FIL_PAGE_INDEX, FIL_PAGE_TYPE_LOB_DATA, FIL_PAGE_TYPE_LOB_FIRST,
                                FIL_PAGE_TYPE_LOB_INDEX, FIL_PAGE_TYPE_ZLOB_DATA, FIL_PAGE_TYPE_ZLOB_FIRST,
                                FIL_PAGE_TYPE_ZLOB_FRAG, FIL_PAGE_TYPE_ZLOB_FRAG_ENTRY,
                                FIL_PAGE_TYPE_ZLOB_INDEX)
from dbxray.parsers.scan import scan

LOB_CODES = {"22", "23", "24", "25", "26", "27", "28", "29"}
# lob0lob.h ref_t / btr0types.h: BTR_EXTERN_SPACE_ID 0, _PAGE_NO 4, _OFFSET 8, _LEN 12 (8 bytes,
# the top byte carries the owner / inherited / being-modified flags)
BTR_EXTERN_LEN = 12
DATADIRS = ("mysql-std_data/datadirs/data_80016.zip", "mysql-std_data/datadirs/mysql_inplace_upgrade84_lctn0.zip",
            "mysql-std_data/datadirs/wl12261_upgrade_80013.zip")


@pytest.fixture(scope="module")
def manifest(fixtures_root):
    return json.loads((fixtures_root / "innodb-mysql" / "manifest.json").read_text())


@pytest.fixture(scope="module")
def lob_files(fixtures_root, manifest, tmp_path_factory):
    """[(label, FileEntry, observed histogram)] of every fixture file with LOB pages."""
    out = []
    ds = scan(str(fixtures_root / "innodb-mysql"))
    by_path = {f.path: f for f in ds.files}
    for e in manifest["files"]:
        h = (e.get("observed") or {}).get("page_type_histogram") or {}
        if any(k.split(":")[0] in LOB_CODES for k in h):
            out.append((e["path"], by_path[e["path"]], h))
    tmp = tmp_path_factory.mktemp("lobdd")
    for zname in DATADIRS:
        entry = [e for e in manifest["files"] if e["path"] == zname][0]
        members = [m for m in entry["observed"]["members"] if m["name"].endswith("/mysql.ibd")]
        assert len(members) == 1
        m = members[0]
        with zipfile.ZipFile(fixtures_root / "innodb-mysql" / zname) as z:
            z.extract(m["name"], tmp / zname.rsplit("/", 1)[-1])
        root = tmp / zname.rsplit("/", 1)[-1] / m["name"].rsplit("/", 1)[0]
        f = [x for x in scan(str(root)).files if x.path == "mysql.ibd"][0]
        out.append((f"{zname}:mysql.ibd", f, m["observed"]["page_type_histogram"]))
    return out


def test_fixtures_with_lob_pages(lob_files):
    labels = [x[0] for x in lob_files]
    assert len(labels) == 10          # 7 ibdNinja files (8.0 and 9.x) + 3 mysql.ibd
    # no ZLOB page in any fixture (see the module docstring)
    assert all(not k.startswith(("25:", "26:", "27:", "28:", "29:")) for _, _, h in lob_files for k in h)


def test_every_lob_page_accounted_for(lob_files):
    for label, f, hist in lob_files:
        sec = f.sections["innodb"]
        lobs = sec["lobs"]
        det = f.detail["innodb"]
        pm = det["page_map"]
        want = {int(k.split(":")[0]): v for k, v in hist.items() if k.split(":")[0] in LOB_CODES}
        got_types = {int(k): int(c) for k, c in zip(*np.unique(pm.kind[np.isin(pm.kind, L.LOB_TYPES)],
                                                               return_counts=True))}
        assert got_types == want, label
        reached = det["lob_first_page"] >= 0
        assert int(reached.sum()) + lobs["unreached_pages"] == sum(want.values()), label
        assert lobs["errors"] == 0, (label, f.warnings)
        live = [x for x in det["lobs"] if not pm.free[x.first_page]]
        assert lobs["count"] == len(live) and lobs["pages"] == sum(x.n_pages for x in live)
        assert lobs["bytes"] == sum(x.length for x in live)
        # every page of a live LOB is in use and belongs to the segment of the LOB's index
        for x in live:
            assert not pm.free[x.pages].any(), (label, x.first_page)
            assert set(pm.owner_index[x.pages].tolist()) == {int(pm.owner_index[x.first_page])}, label
        # per index: the LOBs of the index that owns their first page
        per_index = {i["index_id"]: (i["lobs"], i["lob_pages"]) for i in sec["indexes"]}
        assert sum(v[0] for v in per_index.values()) == lobs["count"]
        assert sum(v[1] for v in per_index.values()) == lobs["pages"]
        expected_in_use = 28 if "80013" in label else 0
        assert lobs["unreached_in_use_pages"] == expected_in_use, label
        if expected_in_use:
            assert any(f"{expected_in_use} LOB page(s) in use that no LOB first page reaches" in w
                       for w in f.warnings)


def _extern_lengths(f, pm) -> dict[int, list[int]]:
    """first page -> BTR_EXTERN lengths of the 20-byte references to it in live INDEX leaf pages."""
    space = f.sections["innodb"]["space_id"]
    out: dict[int, list[int]] = {}
    firsts = {int(p) for p in np.nonzero(pm.kind == FIL_PAGE_TYPE_LOB_FIRST)[0]}
    leaves = np.nonzero((pm.kind == FIL_PAGE_INDEX) & (pm.level == 0) & ~pm.free)[0]
    with ReadOnlyFile(f.abspath) as rf:
        for p in leaves.tolist():
            page = rf.read_exact(p * pm.physical, pm.physical)
            for first in firsts:
                key = struct.pack(">II", space, first)
                at = page.find(key, 38)
                while at >= 0:
                    ln = struct.unpack_from(">Q", page, at + BTR_EXTERN_LEN)[0] & 0xFFFFFFFF
                    out.setdefault(first, []).append(ln)
                    at = page.find(key, at + 1)
    return out


def test_lob_lengths_equal_the_rows_references(lob_files):
    n = 0
    for label, f, _ in lob_files:
        pm = f.detail["innodb"]["page_map"]
        refs = _extern_lengths(f, pm)
        for x in f.detail["innodb"]["lobs"]:
            if pm.free[x.first_page]:
                continue
            assert x.length in refs.get(x.first_page, []), (label, x.first_page, x.length, refs.get(x.first_page))
            assert x.length > 0 and x.entries > 0
            n += 1
    assert n == 5 * 2 + 2 * 2 + 1 * 2 + 1 + 44 + 29 + 29


def test_blob_external_lengths_from_the_sql(lob_files):
    for label, f, _ in lob_files:
        if not label.endswith("blob_external.ibd"):
            continue
        pm = f.detail["innodb"]["page_map"]
        live = sorted(x.length for x in f.detail["innodb"]["lobs"] if not pm.free[x.first_page])
        assert live == sorted([32000, 65000, 20000, 20000, 16000]), label
        sec = f.sections["innodb"]
        assert sec["lobs"]["bytes"] == 153000 and sec["lobs"]["count"] == 5
        # the 16000-byte 'B' value replaced by the UPDATE: its first page is free
        assert sec["lobs"]["freed"] == 1
        (prim,) = [i for i in sec["indexes"] if i["name"] == "PRIMARY"]
        assert (prim["lobs"], prim["lob_pages"]) == (5, 13)
        # 16 KiB pages: a data page carries 16384 - LOB_PAGE_DATA - FIL_PAGE_DATA_END bytes
        for x in f.detail["innodb"]["lobs"]:
            if not pm.free[x.first_page] and x.length == 65000:
                assert x.page_types == {FIL_PAGE_TYPE_LOB_FIRST: 1, FIL_PAGE_TYPE_LOB_DATA: 4}


# -- pages built from the documented layout -------------------------------------------

PS = 8192


def _page(page_no: int, ptype: int, nxt: int = L.FIL_NULL, prev: int = L.FIL_NULL) -> bytearray:
    b = bytearray(PS)
    struct.pack_into(">IIII", b, 0, 0, page_no, prev, nxt)
    struct.pack_into(">H", b, L.FIL_PAGE_TYPE, ptype)
    return b


def _addr(b, off, page, boff):
    struct.pack_into(">IH", b, off, page, boff)


def _base(b, off, n, first=(L.FIL_NULL, 0), last=(L.FIL_NULL, 0)):
    struct.pack_into(">I", b, off, n)
    _addr(b, off + L.FLST_FIRST, *first)
    _addr(b, off + L.FLST_LAST, *last)


def _zentry(b, off, prev, nxt, z_page, frag, dlen, zlen, versions=(0, (L.FIL_NULL, 0))):
    c = L.z_index_entry_t
    _addr(b, off + c.OFFSET_PREV, *prev)
    _addr(b, off + c.OFFSET_NEXT, *nxt)
    _base(b, off + c.OFFSET_VERSIONS, versions[0], versions[1], versions[1])
    struct.pack_into(">IHII", b, off + c.OFFSET_Z_PAGE_NO, z_page, frag, dlen, zlen)


def _zlob_pages():
    """A ZLOB with first page 3: entry A (stream on pages 3 -> 5 -> 6), entry B (a fragment of
    frag page 7) on ZLOB_INDEX page 4, an older version of B (stream on data page 8), frag entry
    on ZLOB_FRAG_ENTRY page 9, and an unrelated page 10."""
    N = L.FIL_NULL
    fz, ze = L.z_first_page_t, L.z_index_entry_t
    pages = {p: _page(p, 0) for p in range(11)}
    first = _page(3, FIL_PAGE_TYPE_ZLOB_FIRST, nxt=5)
    struct.pack_into(">I", first, fz.OFFSET_DATA_LEN, 1000)
    struct.pack_into(">II", first, fz.OFFSET_INDEX_PAGE_NO, 4, 9)
    a = fz.OFFSET_INDEX_BEGIN                                   # entry A on the first page
    b_off = L.z_index_entry_t.SIZE + 1 + 38                     # entry B on the index page
    _base(first, fz.OFFSET_INDEX_LIST, 2, (3, a), (4, b_off))
    _zentry(first, a, (N, 0), (4, b_off), 3, L.FRAG_ID_NULL, 30000, 2500)
    fe = 1 + 38                                                 # frag entry on page 9
    _base(first, fz.OFFSET_FRAG_LIST, 1, (9, fe), (9, fe))
    pages[3] = first
    idx = _page(4, FIL_PAGE_TYPE_ZLOB_INDEX)
    old = b_off + ze.SIZE
    _zentry(idx, b_off, (3, a), (N, 0), 7, 2, 500, 120, versions=(1, (4, old)))
    _zentry(idx, old, (N, 0), (N, 0), 8, L.FRAG_ID_NULL, 400, 300)
    pages[4] = idx
    for p, n, ln in ((5, 6, 1000), (6, N, 500)):
        d = _page(p, FIL_PAGE_TYPE_ZLOB_DATA, nxt=n)
        struct.pack_into(">I", d, L.z_data_page_t.OFFSET_DATA_LEN, ln)
        pages[p] = d
    pages[7] = _page(7, FIL_PAGE_TYPE_ZLOB_FRAG)
    d8 = _page(8, FIL_PAGE_TYPE_ZLOB_DATA)
    struct.pack_into(">I", d8, L.z_data_page_t.OFFSET_DATA_LEN, 300)
    pages[8] = d8
    fp = _page(9, FIL_PAGE_TYPE_ZLOB_FRAG_ENTRY)
    _addr(fp, fe + L.z_frag_entry_t.OFFSET_PREV, N, 0)
    _addr(fp, fe + L.z_frag_entry_t.OFFSET_NEXT, N, 0)
    struct.pack_into(">IH", fp, fe + L.z_frag_entry_t.OFFSET_PAGE_NO, 7, 1)
    pages[9] = fp
    pages[10] = _page(10, FIL_PAGE_TYPE_ZLOB_DATA)
    return pages


def test_zlob_chain_built_from_the_layout():
    """ZLOB pages built from zlob0first.h / zlob0index.h / lob0impl.h (no fixture has any)."""
    pages = _zlob_pages()
    got = L.follow_lob(lambda p: bytes(pages[p]), 3, len(pages))
    assert got.errors == []
    assert got.compressed and got.first_page == 3
    assert (got.length, got.zlength, got.entries, got.versions) == (30500, 2620, 2, 1)
    assert sorted(got.pages) == [3, 4, 5, 6, 7, 8, 9]            # page 10 is no part of it
    assert got.page_types == {FIL_PAGE_TYPE_ZLOB_FIRST: 1, FIL_PAGE_TYPE_ZLOB_INDEX: 1,
                              FIL_PAGE_TYPE_ZLOB_DATA: 3, FIL_PAGE_TYPE_ZLOB_FRAG: 1,
                              FIL_PAGE_TYPE_ZLOB_FRAG_ENTRY: 1}
    h = L.parse_zlob_first_page(bytes(pages[3]))
    assert (h.index_page_no, h.frag_nodes_page_no, h.index_list.length, h.data_len) == (4, 9, 2, 1000)
    e = L.parse_zlob_index_entry(bytes(pages[4]), L.z_index_entry_t.SIZE + 39, 4)
    assert (e.z_page_no, e.z_frag_id, e.data_len, e.zdata_len, e.versions.length) == (7, 2, 500, 120, 1)
    # a stream shorter than its entry says is reported, naming the first page
    short = dict(pages)
    d6 = bytearray(short[6])
    struct.pack_into(">I", d6, L.z_data_page_t.OFFSET_DATA_LEN, 100)
    short[6] = d6
    bad = L.follow_lob(lambda p: bytes(short[p]), 3, len(short))
    assert bad.errors == ["LOB first page 3: stream stream at page 3 holds 2100 of 2500 compressed bytes"]


def _lob_pages_uncompressed():
    """An uncompressed LOB: first page 2 (two entries on it), data page 3, LOB_INDEX page 4."""
    N = L.FIL_NULL
    c, ie = L.first_page_t, L.index_entry_t
    first = _page(2, FIL_PAGE_TYPE_LOB_FIRST, nxt=4)
    e1, e2 = c.LOB_PAGE_DATA, c.LOB_PAGE_DATA + ie.SIZE
    _base(first, c.OFFSET_INDEX_LIST, 2, (2, e1), (2, e2))
    for off, prev, nxt, page, ln in ((e1, (N, 0), (2, e2), 2, 7000), (e2, (2, e1), (N, 0), 3, 8000)):
        _addr(first, off + ie.OFFSET_PREV, *prev)
        _addr(first, off + ie.OFFSET_NEXT, *nxt)
        _base(first, off + ie.OFFSET_VERSIONS, 0)
        struct.pack_into(">IH", first, off + ie.OFFSET_PAGE_NO, page, ln)
    data = _page(3, FIL_PAGE_TYPE_LOB_DATA)
    struct.pack_into(">I", data, L.data_page_t.OFFSET_DATA_LEN, 8000)
    return {0: _page(0, 8), 1: _page(1, 0), 2: first, 3: data, 4: _page(4, FIL_PAGE_TYPE_LOB_INDEX)}


def test_uncompressed_lob_built_from_the_layout_and_bad_chains():
    pages = _lob_pages_uncompressed()
    got = L.follow_lob(lambda p: bytes(pages[p]), 2, len(pages))
    assert got.errors == [] and not got.compressed
    assert (got.length, got.entries, sorted(got.pages)) == (15000, 2, [2, 3, 4])
    assert L.parse_lob_data_page(bytes(pages[3])).data_len == 8000
    # a list that loops back on itself ends with an error, not a hang
    loop = dict(pages)
    f = bytearray(loop[2])
    _addr(f, L.first_page_t.LOB_PAGE_DATA + L.index_entry_t.SIZE + L.index_entry_t.OFFSET_NEXT,
          2, L.first_page_t.LOB_PAGE_DATA)
    struct.pack_into(">I", f, L.first_page_t.OFFSET_INDEX_LIST, 5)
    loop[2] = f
    bad = L.follow_lob(lambda p: bytes(loop[p]), 2, len(loop))
    assert bad.errors == [f"LOB first page 2: index list loops at page 2 offset {L.first_page_t.LOB_PAGE_DATA}"]
    # an entry pointing past the file, a data page of the wrong type
    wrong = dict(pages)
    f = bytearray(wrong[2])
    struct.pack_into(">I", f, L.first_page_t.LOB_PAGE_DATA + L.index_entry_t.SIZE + L.index_entry_t.OFFSET_PAGE_NO, 99)
    wrong[2] = f
    bad = L.follow_lob(lambda p: bytes(wrong[p]), 2, len(wrong))
    assert bad.errors == ["LOB first page 2: data: page 99 is outside the file (5 pages)"]
    wrong[3] = _page(3, FIL_PAGE_INDEX)
    f = bytearray(pages[2])
    wrong[2] = f
    bad = L.follow_lob(lambda p: bytes(wrong[p]), 2, len(wrong))
    assert bad.errors == [f"LOB first page 2: data page 3 has page type {FIL_PAGE_INDEX}, expected 24/23"]
    # not a first page at all
    bad = L.follow_lob(lambda p: bytes(pages[p]), 3, len(pages))
    assert bad.errors == ["LOB first page 3: first page 3 has page type 23, expected 24/25"] and bad.pages == []


def test_sakila_80_staff_picture(sparse_fixtures):
    """innodb-public sakila 8.0 (no manifest): staff.ibd holds the one LOB of the sample data
    (staff.picture); checked against the row's own BTR_EXTERN reference and its page types."""
    ds = scan(str(sparse_fixtures / "innodb-public" / "sakila" / "8.0"))
    with_lobs = [f for f in ds.files if "lobs" in (f.sections.get("innodb") or {})]
    assert [f.path for f in with_lobs] == ["sakila/staff.ibd"]
    (f,) = with_lobs
    pm = f.detail["innodb"]["page_map"]
    (x,) = f.detail["innodb"]["lobs"]
    assert x.errors == [] and not pm.free[x.first_page]
    assert x.length in _extern_lengths(f, pm)[x.first_page]
    lob_pages = np.nonzero(np.isin(pm.kind, L.LOB_TYPES))[0].tolist()
    assert sorted(x.pages) == lob_pages and len(lob_pages) == 3
    (prim,) = [i for i in f.sections["innodb"]["indexes"] if i["name"] == "PRIMARY"]
    assert (prim["table"], prim["lobs"], prim["lob_pages"]) == ("sakila.staff", 1, 3)
    assert f.sections["innodb"]["lobs"]["bytes"] == x.length


def test_json_validates_against_the_schema(lob_files):
    """The additive fields (lobs, per-index lobs/lob_pages, tablespace) as the schema describes."""
    import jsonschema
    from pathlib import Path
    schema = json.loads((Path(__file__).resolve().parent.parent / "resources" / "scan.schema.json").read_text())
    inno = schema["properties"]["files"]["items"]["properties"]["innodb"]
    for label, f, _ in lob_files:
        sec = json.loads(json.dumps(f.sections["innodb"]))
        jsonschema.validate(sec, inno)
        assert set(sec["lobs"]) == set(inno["properties"]["lobs"]["properties"]), label
        for i in sec["indexes"]:
            assert {"lobs", "lob_pages"} <= set(i)
    bad = json.loads(json.dumps(lob_files[0][1].sections["innodb"]))
    bad["lobs"]["count"] = "five"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, inno)


def test_damaged_lob_page_is_named_and_the_rest_kept(fixtures_root, tmp_path):
    """blob_external with the LOB_DATA page of the 65000-byte LOB zeroed (a copy in tmp): the
    scan names the LOB and the page, the other LOBs and the page map are unchanged."""
    src = fixtures_root / "innodb-mysql" / "ibdninja" / "8.0" / "blob_external.ibd"
    clean = [f for f in scan(str(src)).files if f.path.endswith(".ibd")][0]
    pm = clean.detail["innodb"]["page_map"]
    (big,) = [x for x in clean.detail["innodb"]["lobs"] if x.length == 65000]
    victim = [p for p in big.pages if pm.kind[p] == FIL_PAGE_TYPE_LOB_DATA][1]
    data = bytearray(src.read_bytes())
    data[victim * pm.physical:(victim + 1) * pm.physical] = bytes(pm.physical)
    (tmp_path / "db").mkdir()
    dst = tmp_path / "db" / "blob_external.ibd"
    dst.write_bytes(bytes(data))
    f = [x for x in scan(str(dst)).files if x.path.endswith(".ibd")][0]
    lobs = f.sections["innodb"]["lobs"]
    assert lobs["errors"] == 1 and lobs["count"] == 5
    assert f"blob_external.ibd: LOB first page {big.first_page}: data page {victim} has page type 0, " \
           f"expected 24/23" in " ".join(f.warnings)
    assert lobs["pages"] == clean.sections["innodb"]["lobs"]["pages"] - 1
    assert f.sections["innodb"]["indexes"][0]["records"] == clean.sections["innodb"]["indexes"][0]["records"]


def test_inspector_names_the_lob_of_a_page(lob_files):
    from dbxray.parsers.innodb.scan import inspect_page
    label, f, _ = [x for x in lob_files if x[0] == "ibdninja/8.0/blob_external.ibd"][0]
    pm = f.detail["innodb"]["page_map"]
    (big,) = [x for x in f.detail["innodb"]["lobs"] if x.length == 65000]
    for p in big.pages:
        got = inspect_page(f, p)["lob"]
        assert got == {"first_page": big.first_page, "length": 65000, "pages": 5, "compressed": False,
                       "freed": False, "index_id": 194}
    assert "lob" not in inspect_page(f, 4)          # the clustered index root

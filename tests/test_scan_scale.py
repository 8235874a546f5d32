"""`dbxray scan` at scale (issue 22): the streamed JSON writer gives the bytes
``json.dumps(indent=1)`` gave, files read in worker processes give the JSON one
process gives, ``--summary`` is small, reads no checksums and follows its schema,
and the command line keeps no per-page arrays."""
from __future__ import annotations

import copy
import io
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from dbxray.parsers import jsonout, mapguard, parallel
from dbxray.parsers.innodb import names as names_module
from dbxray.parsers.model import ScanContext
from dbxray.parsers.scan import scan

REPO = Path(__file__).resolve().parent.parent
SUMMARY_SCHEMA = json.loads((REPO / "resources" / "scan_summary.schema.json").read_text())
SCHEMA = json.loads((REPO / "resources" / "scan.schema.json").read_text())
DBXRAY = [sys.executable, "-c", "import sys; from dbxray.app.main import main; sys.argv[0] = 'dbxray'; main()"]


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*DBXRAY, *args], capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("value", [
    {}, [], {"a": []}, {"a": {}}, [[0, 1], [2, 3]], {"x": [{"y": None, "z": True}, False]},
    {"s": "é \"quoted\" \\ \n tab\t \u2028 \U0001F600"}, {"f": [0.1, 1e300, -0.0, 1.5e-7, 3.0]},
    {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}, {1: "int key", 2.5: "float key", None: 1, True: 2},
    {"big": 2 ** 70, "neg": -5}, ("tuple", 1),
    # the int-row fast path (a file's holes and extents) and the lists it must leave to the rest
    [1, 2, -3, 2 ** 70], [[0, 4096], (8192, 4096), [2 ** 40, 1]], {"holes": [[1, 2]] * 3, "n": [[1, 2], [3]]},
    [[1, 2], [3, True]], [True, 1], [1, 2.5], [[1, 2], [3, 4, 5]], [[1, 2], []], [(1, 2), "x"], [[[1, 2]]],
])
def test_encoder_gives_the_bytes_of_json_dumps_indent_1(value):
    assert jsonout.encode_indented(value) == json.dumps(value, indent=1)
    assert jsonout.encode_indented({"k": value}) == json.dumps({"k": value}, indent=1)


@pytest.mark.parametrize("pairs", [[], [(0, 16384)], [(4096, 12288), (2 ** 40, 1)] * 50, ((5, 6), (7, 8))])
def test_holes_written_straight_to_text_are_the_json_of_their_lists(pairs):
    """FileEntry.to_json(pairs=jsonout._Pairs): holes formatted at once, numpy ints too."""
    import numpy as np
    lists = [[int(o), int(n)] for o, n in pairs]
    for given in (pairs, [(np.int64(o), np.uint64(n)) for o, n in pairs]):
        assert jsonout.encode_indented({"holes": jsonout._Pairs(given), "n": 1}) == \
            json.dumps({"holes": lists, "n": 1}, indent=1)
        assert jsonout.encode_indented([{"a": jsonout._Pairs(given)}], "  ") == \
            jsonout.encode_indented([{"a": lists}], "  ")


def test_encoder_refuses_what_json_refuses():
    with pytest.raises(TypeError):
        jsonout.encode_indented({"x": object()})


@pytest.mark.parametrize("folder", ["innodb/16k", "innodb/datadir16k", "innodb-mysql", "clickhouse/datadir",
                                    "tokudb/datadir"])
def test_streamed_json_is_the_old_json(sparse_fixtures, folder):
    ds = scan(str(sparse_fixtures / folder))
    buf = io.StringIO()
    jsonout.write_dataset(ds, buf, chunk=4096)
    assert buf.getvalue() == json.dumps(ds.to_json(), indent=1) + "\n"


def test_streamed_json_of_an_empty_dataset(tmp_path):
    ds = scan(str(tmp_path))
    buf = io.StringIO()
    jsonout.write_dataset(ds, buf)
    assert buf.getvalue() == json.dumps(ds.to_json(), indent=1) + "\n"


@pytest.fixture(scope="module")
def many_tablespaces(tmp_path_factory, sparse_fixtures):
    """24 copies of the fixture's small 16k tablespaces in three databases, and the
    ClickHouse data dir: enough files for the worker pool."""
    root = tmp_path_factory.mktemp("many")
    src = sorted((sparse_fixtures / "innodb" / "16k" / "fx").glob("*.ibd"))
    small = [p for p in src if p.stat().st_size <= 4 << 20][:8]
    assert len(small) >= 4
    for k in range(3):
        d = root / "inno" / f"db{k}"
        d.mkdir(parents=True)
        for p in small:
            shutil.copyfile(p, d / p.name)
    shutil.copytree(sparse_fixtures / "clickhouse" / "datadir", root / "ch", symlinks=True)
    return root


@pytest.mark.parametrize("sub,mode", [("inno", "default"), ("inno", "full"), ("ch", "full")])
def test_worker_processes_give_the_json_of_one_process(many_tablespaces, sub, mode, tmp_path):
    target = many_tablespaces / sub
    full = ["--full"] if mode == "full" else []     # --full: what the library's default scan reads
    one = run_cli("scan", str(target), "--json", "-o", str(tmp_path / "one.json"), "-j", "1", "--no-progress", *full)
    two = run_cli("scan", str(target), "--json", "-o", str(tmp_path / "two.json"), "-j", "2", "--no-progress", *full)
    assert one.returncode == 0 and two.returncode == 0, (one.stderr, two.stderr)
    a, b = (tmp_path / "one.json").read_bytes(), (tmp_path / "two.json").read_bytes()
    assert a == b
    # and the same as the library's own scan in this process (units kept, one process)
    ds = scan(str(target)) if mode == "full" else scan(str(target), ScanContext(depth="headers", block_walk=False))
    assert json.loads(a) == json.loads(json.dumps(ds.to_json()))


def test_default_json_is_the_full_one_without_checksums_and_lob_chains(many_tablespaces, sparse_fixtures,
                                                                       tmp_path):
    """Issue 22 item 2: the command line's default reads no page checksum and follows no LOB chain
    (--full does); everything else of its JSON is the full scan's, field by field."""
    def lighter(doc: dict) -> dict:
        doc = copy.deepcopy(doc)
        for f in doc["files"]:
            sec = f.get("innodb")
            if isinstance(sec, dict):
                sec["checksum"] = {"algorithm": None, "bad_pages": [], "verified": False}
                sec.pop("lobs", None)
                for ix in sec.get("indexes", []):
                    ix.pop("lobs", None)
                    ix.pop("lob_pages", None)
        return doc

    lob_files = 0
    for target in (many_tablespaces / "inno", sparse_fixtures / "innodb-mysql"):
        default = json.loads(run_cli("scan", str(target), "--json", "--no-progress").stdout)
        full = json.loads(run_cli("scan", str(target), "--json", "--full", "--no-progress").stdout)
        jsonschema.validate(default, SCHEMA)
        assert default == lighter(full)
        assert all(f["innodb"]["checksum"]["algorithm"] for f in full["files"] if "innodb" in f)
        lob_files += sum("lobs" in f.get("innodb", {}) for f in full["files"])
    assert lob_files >= 5            # MySQL 8 files with LOB chains were among them


def test_pool_is_really_used_and_results_come_back_in_order(many_tablespaces):
    code = ("import sys, json; from dbxray.parsers import parallel; from dbxray.parsers.model import ScanContext;"
            "from dbxray.parsers.scan import scan;"
            "ds = scan(sys.argv[1], ScanContext(workers=2, keep_units=False));"
            "print(json.dumps([parallel.fork_safe(), [f.path for f in ds.files],"
            " [f.units is None for f in ds.files], [bool(f.sections) for f in ds.files]]))")
    p = subprocess.run([sys.executable, "-c", code, str(many_tablespaces / "inno")], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    safe, paths, no_units, sections = json.loads(p.stdout)
    assert safe and len(paths) >= 8
    assert all(no_units) and all(sections)


def test_each_file_keeps_units_in_one_process(many_tablespaces):
    ds = scan(str(many_tablespaces / "inno"), ScanContext())
    assert all(f.units is not None and len(f.units) for f in ds.files if f.role == "tablespace")
    light = scan(str(many_tablespaces / "inno"), ScanContext(keep_units=False))
    assert all(f.units is None and f.unit_facts is None and "innodb" not in f.detail for f in light.files)
    assert json.dumps(light.to_json()) == json.dumps(ds.to_json())


def test_summary(many_tablespaces, tmp_path):
    out = tmp_path / "s.json"
    p = run_cli("scan", str(many_tablespaces / "inno"), "--summary", "-o", str(out), "--no-progress")
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, SUMMARY_SCHEMA)
    full = run_cli("scan", str(many_tablespaces / "inno"), "--json", "--no-progress")
    data = json.loads(full.stdout)
    assert doc["kind"] == "summary" and "checksum" in doc["reads"]
    assert [f["path"] for f in doc["files"]] == [f["path"] for f in data["files"]]
    for s, f in zip(doc["files"], data["files"]):
        assert s["apparent_bytes"] == f["apparent_bytes"] and s["allocated_bytes"] == f["allocated_bytes"]
        assert s["hole_bytes"] == sum(n for _, n in f["holes"])
        assert s["innodb"]["pages"] == f["innodb"]["pages"]
        assert s["innodb"]["page_types"] == f["innodb"]["page_types"]
        assert s["innodb"]["indexes_count"] == len(f["innodb"]["indexes"])
        assert s["innodb"]["checksum"]["verified"] is False
        assert not any(isinstance(v, list) for v in s["innodb"].values())      # no per-page or per-index lists
    assert len(doc["tables"]) == len({(f["database"], f["table"]) for f in data["files"]})
    assert doc["totals"]["files"] == len(data["files"])
    assert out.stat().st_size < len(full.stdout) * 0.6
    # one line per file and per table
    assert len(out.read_text().splitlines()) >= len(doc["files"]) + len(doc["tables"])


def test_summary_reads_no_checksum(sparse_fixtures, tmp_path):
    """A page with a bad checksum: the full scan says so, the summary does not read it."""
    src = sparse_fixtures / "innodb" / "16k" / "fx" / "t_part#P#pmax.ibd"
    d = tmp_path / "db"
    d.mkdir()
    dst = d / "t.ibd"
    shutil.copyfile(src, dst)
    with open(dst, "r+b") as fh:
        fh.seek(3 * 16384 + 200)
        b = fh.read(1)
        fh.seek(3 * 16384 + 200)
        fh.write(bytes([b[0] ^ 0xFF]))
    full = json.loads(run_cli("scan", str(d), "--json", "--full", "--no-progress").stdout)
    assert full["files"][0]["innodb"]["checksum"]["bad_pages"] == [3]
    assert any("page 3" in e for e in full["files"][0]["errors"])
    default = run_cli("scan", str(d), "--json", "--no-progress")
    assert json.loads(default.stdout)["files"][0]["innodb"]["checksum"] == {"algorithm": None, "bad_pages": [],
                                                                           "verified": False}
    assert not json.loads(default.stdout)["files"][0]["errors"]
    table = run_cli("scan", str(d), "--no-progress").stdout
    assert "page checksums: not verified (dbxray scan --full verifies every page's)" in table
    table = run_cli("scan", str(d), "--full", "--no-progress").stdout
    assert "page checksums: verified in 1 of 1 files, 1 bad page(s) (listed as errors)" in table
    summ = json.loads(run_cli("scan", str(d), "--summary", "--no-progress").stdout)
    assert summ["files"][0]["innodb"]["checksum"] == {"algorithm": None, "bad_pages": 0, "verified": False}
    assert not summ["files"][0]["errors"]


def test_help_says_what_each_mode_reads():
    p = run_cli("scan", "--help")
    text = " ".join(p.stdout.split())
    assert "--summary" in text and "--jobs" in text
    assert "checksum verified" in text and "no page checksum" in text


def test_sdi_precheck_agrees_with_opening_the_file(sparse_fixtures):
    """The 58-byte FSP flags check skips exactly the files the SDI loop skipped."""
    from dbxray.parsers.innodb.sysfile import PageError, SpaceFile
    paths = sorted(sparse_fixtures.rglob("*.ibd"))
    assert len(paths) > 20
    for p in paths:
        try:
            with SpaceFile(str(p)) as space:
                fl = space.flags
                skipped = fl is None or fl.full_crc32 or not fl.sdi
        except PageError:
            skipped = False            # the loop records the error: the check must not skip it
        if not names_module._may_have_sdi(str(p)):
            assert skipped, p


def test_mapguard_events_travel_between_processes():
    mapguard.add_events("/nonexistent/x.ibd", [(100, 50)])
    assert mapguard.shrink_events("/nonexistent/x.ibd") == [(100, 50)]
    taken = mapguard.take_events()
    assert taken[os.path.abspath("/nonexistent/x.ibd")] == [(100, 50)]
    assert mapguard.shrink_events("/nonexistent/x.ibd") == []


def test_map_calls_in_order_and_raises():
    ctx = ScanContext(workers=2)
    args = [(i,) for i in range(40)]
    assert list(parallel.map_calls(lambda i: i * i, args, ctx)) == [i * i for i in range(40)]

    def boom(i):
        if i == 7:
            raise ValueError("seven")
        return i
    with pytest.raises(ValueError, match="seven"):
        list(parallel.map_calls(boom, args, ctx))

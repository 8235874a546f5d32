"""ClickHouse without the block walk (issue 22 item 8): the command line's default scan reads
what system.parts / system.parts_columns report (checksums.txt, columns.txt, count.txt, the
marks) and no block header; ``--full`` walks every block and verifies the checksums as the
library's default ScanContext does."""
from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from dbxray.app.cli import SCAN_READS
from dbxray.parsers.clickhouse.scan import BLOCK_WALK_KEYS
from dbxray.parsers.model import ScanContext
from dbxray.parsers.scan import scan

REPO = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((REPO / "resources" / "scan.schema.json").read_text())
SUMMARY_SCHEMA = json.loads((REPO / "resources" / "scan_summary.schema.json").read_text())
DATA = REPO / "tests" / "data"
FOLDERS = ["fixture:clickhouse/datadir", "data:clickhouse_longname/datadir", "data:clickhouse_typeadvice",
           "data:clickhouse_versions"]


def _folder(sparse_fixtures: Path, spec: str) -> Path:
    kind, rel = spec.split(":", 1)
    return (sparse_fixtures if kind == "fixture" else DATA) / rel


def _is_log_file(sec: dict) -> bool:
    return "table_engine" in sec          # Log-family files: walked in both modes (no checksums.txt)


def without_block_walk(doc: dict) -> dict:
    """A full scan's JSON with the keys only the block walk gives taken out (BLOCK_WALK_KEYS);
    Log-family files keep theirs, with no block checksum verified."""
    doc = copy.deepcopy(doc)
    for f in doc["files"]:
        sec = f.get("clickhouse")
        if not isinstance(sec, dict):
            continue
        if _is_log_file(sec):
            if "checksums_verified" in sec:
                sec["checksums_verified"] = False
            continue
        for k in BLOCK_WALK_KEYS["file"]:
            sec.pop(k, None)
    for t in doc.get("clickhouse", {}).get("tables", []):
        if "log_files" not in t:
            for c in t["columns"]:
                for k in BLOCK_WALK_KEYS["table_column"]:
                    c.pop(k, None)
        for p in t["parts"]:
            for pp in [p] + p.get("projection_parts", []):
                for k in BLOCK_WALK_KEYS["part"]:
                    pp.pop(k, None)
                for c in pp["columns"]:
                    for k in BLOCK_WALK_KEYS["part_column"]:
                        c.pop(k, None)
                    for s in c.get("streams", []):
                        for k in BLOCK_WALK_KEYS["stream"]:
                            s.pop(k, None)
    return doc


@pytest.fixture(scope="module")
def scans(sparse_fixtures):
    out = {}
    for spec in FOLDERS:
        d = _folder(sparse_fixtures, spec)
        full = scan(str(d), ScanContext(keep_units=False))
        lazy = scan(str(d), ScanContext(keep_units=False, block_walk=False))
        out[spec] = (d, json.loads(json.dumps(full.to_json())), json.loads(json.dumps(lazy.to_json())))
    return out


@pytest.mark.parametrize("spec", FOLDERS)
def test_default_is_the_full_scan_without_the_block_walk_keys(scans, spec):
    _d, full, lazy = scans[spec]
    assert without_block_walk(full) == lazy
    jsonschema.validate(full, SCHEMA)
    jsonschema.validate(lazy, SCHEMA)
    # the full scan has them, the default has none of them (outside Log-family files)
    ch_files = [f["clickhouse"] for f in full["files"] if isinstance(f.get("clickhouse"), dict)
                and not _is_log_file(f["clickhouse"])]
    assert any("codecs" in s and "blocks" in s for s in ch_files)
    for f in lazy["files"]:
        sec = f.get("clickhouse")
        if isinstance(sec, dict) and not _is_log_file(sec):
            assert not set(BLOCK_WALK_KEYS["file"]) & set(sec), f["path"]
    parts = [p for t in lazy["clickhouse"]["tables"] for p in t["parts"]]
    assert parts and all("block_size_histogram" not in p for p in parts)
    assert all("codecs" not in c and "block_size_histogram" not in c for p in parts for c in p["columns"])


def test_engine_figures_come_from_checksums_txt(scans):
    """The uncompressed sizes the default takes from checksums.txt are the block walk's sums,
    part by part and file by file (every engine figure is the same in both modes)."""
    _d, full, lazy = scans["fixture:clickhouse/datadir"]
    fields = ("rows", "marks", "bytes_on_disk", "data_compressed_bytes", "data_uncompressed_bytes", "marks_bytes")
    n = 0
    for tf, tl in zip(full["clickhouse"]["tables"], lazy["clickhouse"]["tables"]):
        for pf, pl in zip(tf["parts"], tl["parts"]):
            assert [pf[k] for k in fields] == [pl[k] for k in fields]
            for cf, cl in zip(pf["columns"], pl["columns"]):
                assert (cf["compressed_bytes"], cf["uncompressed_bytes"], cf["marks_bytes"]) == \
                       (cl["compressed_bytes"], cl["uncompressed_bytes"], cl["marks_bytes"])
                n += 1
    assert n > 100
    unc = [(f["path"], f["clickhouse"]["uncompressed_bytes"]) for f in lazy["files"]
           if isinstance(f.get("clickhouse"), dict) and "uncompressed_bytes" in f["clickhouse"]]
    assert len(unc) > 100
    by_path = {f["path"]: f["clickhouse"] for f in full["files"] if isinstance(f.get("clickhouse"), dict)}
    assert all(by_path[p]["uncompressed_bytes"] == u for p, u in unc)


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dbxray.app.main", *args], capture_output=True, text=True,
                          timeout=300)


def test_cli_default_and_full(scans, tmp_path):
    """``scan --full`` writes the library's full scan (the JSON dbxray wrote before the lighter
    default), the default its scan without the block walk; the human table is the same."""
    d, full, lazy = scans["data:clickhouse_longname/datadir"]
    a, b = tmp_path / "full.json", tmp_path / "default.json"
    p = _run("scan", str(d), "--full", "--json", "-o", str(a), "--no-progress")
    q = _run("scan", str(d), "--json", "-o", str(b), "--no-progress")
    assert p.returncode == 0 and q.returncode == 0, (p.stderr, q.stderr)
    assert json.loads(a.read_text()) == full
    assert json.loads(b.read_text()) == lazy
    t1, t2 = _run("scan", str(d), "--no-progress"), _run("scan", str(d), "--full", "--no-progress")
    assert t1.stdout == t2.stdout and "clickhouse" in t1.stdout
    s1 = json.loads(_run("scan", str(d), "--summary", "--no-progress").stdout)
    s2 = json.loads(_run("scan", str(d), "--summary", "--full", "--no-progress").stdout)
    for doc in (s1, s2):
        jsonschema.validate(doc, SUMMARY_SCHEMA)
    assert s1["reads"] == SCAN_READS["summary"] and s2["reads"] == SCAN_READS["summary_full"]
    assert "no block header" in s1["reads"] and "every block header" in s2["reads"]
    f1 = {f["path"]: f for f in s1["files"]}
    walked = [f for f in s2["files"] if f.get("clickhouse", {}).get("blocks") is not None
              and "table_engine" not in f["clickhouse"]]
    assert walked and all("blocks" not in f1[f["path"]]["clickhouse"] for f in walked)
    assert all(f1[f["path"]]["apparent_bytes"] == f["apparent_bytes"] for f in s2["files"])


def test_a_broken_block_header_is_found_by_full_only(sparse_fixtures, tmp_path):
    """The default reads no block header: a .bin file whose first header is overwritten keeps its
    checksums.txt figures and no error; --full walks it and names the file."""
    src = sparse_fixtures / "clickhouse" / "datadir"
    d = tmp_path / "datadir"
    shutil.copytree(src, d, symlinks=True)
    bins = sorted(p for p in d.rglob("*.bin") if p.stat().st_size > 1000 and "detached" not in p.parts
                  and p.name != "data.bin")
    victim = bins[0]
    with open(victim, "r+b") as fh:
        fh.seek(16)
        fh.write(b"\xee")                 # the method byte of the first block header
    rel = str(victim.relative_to(d))
    full = scan(str(d), ScanContext(keep_units=False, verify_checksums=False))
    lazy = scan(str(d), ScanContext(keep_units=False, block_walk=False))
    ef = next(f for f in full.files if f.path == rel)
    el = next(f for f in lazy.files if f.path == rel)
    assert ef.errors and not el.errors
    assert "uncompressed_bytes" in el.sections["clickhouse"]


def test_help_says_what_each_mode_reads():
    text = " ".join(_run("scan", "--help").stdout.split())
    assert "--full" in text and "no block header read" in text and "checksums.txt" in text
    assert "every block header" in text

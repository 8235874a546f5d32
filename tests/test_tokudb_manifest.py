"""Shared helpers for the TokuDB tests (ground truth from the fixture manifest),
plus checks that the manifest itself is what the tests expect."""
from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

from fixtures_util import require_fixtures

TOKU = require_fixtures() / "tokudb"


@lru_cache(maxsize=1)
def manifest() -> dict:
    return json.loads((TOKU / "manifest.json").read_text())


def tree_files() -> list[dict]:
    """Every fractal-tree file of the manifest (9 dictionaries + 3 tokudb.* trees)."""
    return [f for f in manifest()["files"] if "engine_nodes" in f]


def dictionary_files() -> list[dict]:
    """The 9 table dictionaries."""
    return [f for f in manifest()["files"] if "final_logical_content" in f]


def file_bytes(entry: dict) -> bytes:
    return (TOKU / entry["path"]).read_bytes()


def ids(entries) -> list[str]:
    return [e["path"].rsplit("/", 1)[-1] for e in entries]


def logprint_lines(path: Path) -> list[dict]:
    """Entries of a tokuft_logprint dump: command letter, lsn, crc, len."""
    out = []
    for line in path.read_text().splitlines()[1:]:
        m = re.search(r"'(.)': lsn=(\d+).* crc=([0-9a-f]+) len=(\d+)$", line)
        if m:
            out.append({"cmd": m.group(1), "lsn": int(m.group(2)), "crc": int(m.group(3), 16),
                        "len": int(m.group(4))})
    return out


def test_manifest_covers_every_tree_file():
    assert len(tree_files()) == 12
    assert len(dictionary_files()) == 9
    for f in tree_files():
        assert (TOKU / f["path"]).is_file()

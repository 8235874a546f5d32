"""Helpers for the compressor-layer tests (tests/test_compress_*.py).

Until the engine parsers provide ``parsers/<engine>/payloads.py`` the model
and estimator tests run on units made here from raw file bytes: an InnoDB
tablespace cut into pages of the size the fixture manifest records, with the
page type read from the FIL header.  The end-to-end tests (scan + whatif)
use the real parsers and fail with a clear message while one is missing.
"""
from __future__ import annotations

import json
import types
from pathlib import Path

import numpy as np

from dbxray.parsers.model import FileEntry, empty_units

FIL_PAGE_INDEX = 17855
PAGE_KIND_NAMES = {0: "FIL_PAGE_TYPE_ALLOCATED", 8: "FIL_PAGE_TYPE_FSP_HDR", 9: "FIL_PAGE_TYPE_XDES",
                   17855: "FIL_PAGE_INDEX", 3: "FIL_PAGE_INODE", 5: "FIL_PAGE_IBUF_BITMAP",
                   10: "FIL_PAGE_TYPE_BLOB"}


def raw_payload_module():
    """A stand-in for parsers/<engine>/payloads.py: a unit's bytes read as stored (uncompressed files)."""
    def unit_payload(entry, i, max_output=None):
        u = entry.units[i]
        with open(entry.abspath, "rb") as f:
            f.seek(int(u["offset"]))
            data = f.read(int(u["logical"]))
        if max_output is not None and len(data) > max_output:
            raise ValueError("over the cap")
        return data
    return types.SimpleNamespace(unit_payload=unit_payload)


def innodb_raw_entry(path: Path, rel: str, page_size: int = 16384, allocated: int | None = None) -> FileEntry:
    """A FileEntry for an uncompressed tablespace with one unit per page (owner = index id)."""
    data = path.read_bytes()
    n = len(data) // page_size
    u = empty_units(n)
    u["offset"] = np.arange(n, dtype=np.uint64) * page_size
    u["stored"] = page_size
    u["logical"] = page_size
    for i in range(n):
        pg = data[i * page_size:(i + 1) * page_size]
        t = int.from_bytes(pg[24:26], "big")
        u["kind"][i] = t if t < 65536 else 0
        if t == FIL_PAGE_INDEX:
            u["owner"][i] = int.from_bytes(pg[38 + 28:38 + 36], "big") & 0x7FFFFFFF    # PAGE_INDEX_ID
    return FileEntry(rel, str(path), engine="innodb", role="tablespace", apparent_bytes=len(data),
                     allocated_bytes=allocated if allocated is not None else len(data), units=u,
                     kind_names=dict(PAGE_KIND_NAMES), sections={"innodb": {"page_size": page_size}},
                     database=rel.split("/")[-2] if "/" in rel else None,
                     table=rel.split("/")[-1].split(".")[0])


def innodb_manifest(fixtures_root: Path) -> dict:
    return json.loads((fixtures_root / "innodb" / "manifest.json").read_text())


def allocated_size(manifest: dict, rel: str) -> int:
    """information_schema INNODB_SYS_TABLESPACES.ALLOCATED_SIZE of a fixture file."""
    for f in manifest["files"]:
        if f["path"] == rel:
            return int(f["information_schema"]["INNODB_SYS_TABLESPACES"]["ALLOCATED_SIZE"])
    raise KeyError(rel)

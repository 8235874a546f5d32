"""The LSM tree as a view draws it: one row per column family level, from the
dataset's typed ``rocksdb`` section (no Qt here; viz/lsm.py draws these rows)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LsmRow:
    directory: str
    column_family: str
    level: int
    files: int
    file_bytes: int                 # the SSTs' bytes on disk (apparent)
    raw_bytes: int                  # raw key + value bytes of the entries
    data_block_bytes: int
    entries: int
    written: tuple[str, ...]        # compression as written (the files' property)
    configured: str | None          # what the OPTIONS give this level now

    @property
    def label(self) -> str:
        return f"{self.column_family} L{self.level}"

    @property
    def ratio(self) -> float:
        return self.raw_bytes / self.file_bytes if self.file_bytes else 0.0

    @property
    def differs(self) -> bool:
        """The files were written with another codec than the options now give the level."""
        return self.configured is not None and bool(self.written) and self.configured not in self.written


def lsm_rows(dataset) -> list[LsmRow]:
    """Every (column family, level) with live files, in directory, CF, level order."""
    sec = dataset.sections.get("rocksdb") or {}
    rows = []
    for d in sec.get("directories", []) or []:
        for lv in d.get("levels", []) or []:
            rows.append(LsmRow(
                directory=d.get("path") or ".", column_family=lv["column_family"], level=int(lv["level"]),
                files=int(lv["files"]), file_bytes=int(lv["file_bytes"]),
                raw_bytes=int(lv["raw_key_bytes"]) + int(lv["raw_value_bytes"]),
                data_block_bytes=int(lv["data_block_bytes"]), entries=int(lv["entries"]),
                written=tuple(lv.get("compression") or ()), configured=lv.get("configured")))
    return rows

"""``files[].tokudb`` of the JSON, typed (parsers/section.py): a fractal-tree
file's figures, a log's, or the role of the engine's other files."""
from __future__ import annotations

from ..section import Key, Section


class TokuDBTreeSection(Section):
    """A fractal-tree file (dictionary, tokudb.directory / environment / rollback)."""

    layout_version: int | None = Key()
    checkpoint_count: int | None = Key()
    nodesize: int | None = Key()
    basementnodesize: int | None = Key()
    fanout: int | None = Key()
    compression_method: int | None = Key("as stored: 1/2/3 are aliases")
    node_methods: dict = Key("method -> partitions")
    blocks_in_use: int = Key()
    bytes_in_use: int = Key()
    unused_bytes: int = Key()
    height: int | None = Key()
    leaf_nodes: int = Key()
    nonleaf_nodes: int = Key()
    disk_bytes: int = Key()
    uncompressed_bytes: int = Key()
    per_height: list = Key("[{height, nodes, disk_bytes, uncompressed_bytes}]")
    records: int = Key()
    on_disk_numrows: int | None = Key("header estimate (DB->stat64 bt_nkeys): what I_S adds up")
    on_disk_numbytes: int | None = Key("header estimate (DB->stat64 bt_dsize)")
    table: str | None = Key()
    role: str = Key("main / secondary_index / status / dictionary / ...")


class TokuDBLogSection(Section):
    """A log file (log<N>.tokulog<V>); an empty one has its role and table only."""

    role: str = Key()
    table: str | None = Key()
    log_version: int | None = Key()
    log_entries: int = Key()
    bad_checksums: int = Key()


class TokuDBFileSection(Section):
    """The engine's other files: lock files and the environment."""

    role: str = Key("lock_file / environment")
    table: str | None = Key()


def section_from_json(data: dict) -> Section:
    """The typed section of a saved scan's ``files[].tokudb``."""
    if "layout_version" in data:
        return TokuDBTreeSection.from_json(data)
    if data.get("role") == "log":
        return TokuDBLogSection.from_json(data)
    return TokuDBFileSection.from_json(data)

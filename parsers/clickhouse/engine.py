"""ClickHouse behind the engine protocol (parsers/engine.py).

Files are ClickHouse's by place: a data path (``metadata/`` beside ``store/`` or
``data/``, src/Interpreters/DatabaseCatalog.cpp) and part folders inside it
(``checksums.txt`` + ``columns.txt``, or a part name
``<partition>_<min>_<max>_<level>[_<mutation>]``, src/Storages/MergeTree/MergeTreePartInfo.cpp);
inside a part by extension (src/Storages/MergeTree/IMergeTreeDataPart.cpp).
"""
from __future__ import annotations

import re
from typing import NamedTuple

from ..engine import Engine
from ..model import FileEntry, UnitGeometry
from .logfiles import is_log_table_dir

# part directory names: <partition>_<min>_<max>_<level>[_<mutation>]
CH_PART_RE = re.compile(r"^(?P<partition>.+?)_(?P<min>\d+)_(?P<max>\d+)_(?P<level>\d+)(?:_(?P<mutation>\d+))?$")
_PART_RE = re.compile(r"^.+?_\d+_\d+_\d+(?:_\d+)?$")
CH_MARK_EXT = (".mrk", ".mrk2", ".mrk3", ".mrk4", ".cmrk", ".cmrk2", ".cmrk3", ".cmrk4")
CH_PART_META = {
    "columns.txt", "count.txt", "checksums.txt", "serialization.json", "columns_substreams.txt",
    "default_compression_codec.txt", "metadata_version.txt", "partition.dat", "txn_version.txt",
    "uuid.txt", "ttl.txt", "statistics.packed", "skp_idx.packed", "delete-on-destroy.txt",
    "frozen.txt", "metadata_version", "marks.packed",
}


def is_ch_part_dir(names: set[str]) -> bool:
    """A ClickHouse part directory holds checksums.txt and columns.txt."""
    return "checksums.txt" in names and "columns.txt" in names


def is_ch_data_path(names: set[str]) -> bool:
    """A ClickHouse data path holds metadata/ beside store/ or data/."""
    return "metadata" in names and ("store" in names or "data" in names)


#: compressed blocks to a row of the unit map (a Wide part's column of 8,192-row granules
#: holds 1 to a few hundred blocks)
BLOCKS_PER_ROW = 32


class WalkState(NamedTuple):
    """Where the walk is: the enclosing data path (relative to the scan root), in a part,
    in a Log-family table folder (TinyLog / Log / StripeLog: parsers/clickhouse/logtable.py)."""

    base: str | None
    in_part: bool
    in_log: bool = False


class ClickHouse(Engine):
    name = "clickhouse"
    label = "ClickHouse"
    roles = ("part_column_data", "marks", "primary_index", "part_metadata", "table_metadata", "table_data", "other")
    claim_order = 10      # by place: before the other engines' name rules

    def deferred(self, dataset):
        """A light scan (no block walk) of MergeTree parts: their blocks are still to walk
        (Log-family tables are walked in both modes)."""
        d = dataset.detail.get(self.name) or {}
        return d.get("walked") is False and any(r.info.log is None and (r.info.parts or r.info.detached)
                                                for r in d.get("tables", ()))

    def enter_dir(self, reldir, dirname, names, state):
        base, in_part = (state or (None, False))[:2]
        if base is None and is_ch_data_path(names):
            base = reldir
        # a part folder that lost checksums.txt / columns.txt is still a part (named as one, inside a data path)
        here_part = in_part or is_ch_part_dir(names) or (
            base is not None and bool(CH_PART_RE.match(dirname))
            and any(n.endswith((".bin",) + CH_MARK_EXT) or n in CH_PART_META for n in names))
        # a Log-family table folder is one by its files, inside a data path or scanned alone
        in_log = not here_part and is_log_table_dir(names)
        return WalkState(base, here_part, in_log)

    def claim_name(self, rel, state):
        if state is None:
            return None
        base, in_part, in_log = state
        lower = rel.rsplit("/", 1)[-1].lower()
        if in_log:
            if lower.endswith(".bin"):
                return "table_data"
            if lower in ("__marks.mrk", "index.mrk"):
                return "marks"
            if lower in ("sizes.json", "format_version.txt"):
                return "table_metadata"
            if base is None:
                return None
        if in_part:
            if lower.endswith(".bin"):
                return "part_column_data"
            if lower.endswith(CH_MARK_EXT):
                return "marks"
            if lower in ("primary.idx", "primary.cidx"):
                return "primary_index"
            return "part_metadata"
        if base is not None:
            parts = (rel[len(base) + 1:] if base else rel).split("/")
            if lower.endswith(".sql") and parts[0] in ("metadata", "metadata_dropped", "store"):
                return "table_metadata"
            if lower == "format_version.txt":
                return "part_metadata"
            if parts[0] in ("metadata", "data", "store", "detached"):
                # e.g. data/<db>/<table> links kept as text by a copy that lost symlinks
                return "other"
        return None

    def analyze(self, dataset, files, ctx):
        from .scan import analyze
        analyze(dataset, files, ctx)

    def place(self, entry: FileEntry):
        db, table, part = entry.database, entry.table, None
        parts = entry.path.split("/")
        for i in range(len(parts) - 1, -1, -1):
            if _PART_RE.match(parts[i]) and i < len(parts) - 1:
                part = "/".join(parts[i:-1])
                if db is None and i >= 1:
                    db, table = "(unnamed)", parts[i - 1]
                break
        if db is None:
            db = "(metadata)"
        return db, table, part

    def section_from_json(self, data):
        from .section import ClickHouseFileSection
        return ClickHouseFileSection.from_json(data) if isinstance(data, dict) else data

    def restore(self, dataset):
        from .section import ClickHouseSection
        data = dataset.sections.get(self.name)
        if isinstance(data, dict) and not isinstance(data, ClickHouseSection):
            dataset.sections[self.name] = ClickHouseSection.from_json(data)

    def unit_geometry(self, entry: FileEntry):
        """The compressed blocks of a column file (``*.bin``: Wide and Compact parts, Log-family
        tables), of varying size, in file order: each a 9-byte header (method byte, compressed
        and decompressed sizes) behind a 16-byte CityHash128 checksum
        (src/Compression/CompressedReadBufferBase.cpp), coloured by codec, column, ratio,
        allocation and checksum."""
        if entry.role != "part_column_data" or entry.units is None:
            return None
        return UnitGeometry(0, 0, BLOCKS_PER_ROW, "block", "row", tree_kind_names=None,
                            modes=(("type", "Codec (method byte)"), ("index", "Column"),
                                   ("compression", "Stored / uncompressed"), ("allocation", "Allocation (holes)"),
                                   ("checksum", "Checksum (CityHash128)")), owner_ids=False)

    def unit_payload(self, entry, i, max_output):
        from .payloads import unit_payload
        return unit_payload(entry, i, max_output=max_output)


ENGINE = ClickHouse()

__all__ = ["ENGINE", "CH_PART_RE", "CH_MARK_EXT", "CH_PART_META", "is_ch_part_dir", "is_ch_data_path"]

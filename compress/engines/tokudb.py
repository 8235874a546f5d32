"""TokuDB what-if: one target per dictionary file, its partitions (the
sub-blocks PerconaFT compresses) re-encoded with each codec and framed as the
engine frames them; the ROW_FORMAT that gets there.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dbxray.parsers.model import FileEntry

from ..bounds import compress_bound
from ..models import Model
from ..registry import Codec
from dbxray.parsers.tokudb.blocktable import HEADER_BYTES
from dbxray.parsers.tokudb.header import BLOCK_ALLOCATOR_ALIGNMENT

from ..sources import UnitSet, allocated_in, engine_units
from ..targets import Run, Split, Target, add_results, measure_speeds, model_pairs, raw_results, shift
from .base import WhatIfEngine

#: TokuDB ROW_FORMAT values (ha_tokudb: tokudb_zlib, tokudb_quicklz, tokudb_lzma, tokudb_snappy, ...)
TOKUDB_ROW_FORMATS = {"zlib": "tokudb_zlib", "lzma": "tokudb_lzma", "snappy": "tokudb_snappy",
                      "none": "tokudb_uncompressed", "quicklz": "tokudb_quicklz", "zstd": "tokudb_zstd"}


# ---------------------------------------------------------------------------
# storage model
#: PerconaFT ft/serialize/ft_node-serialize.cc: every partition is one
#: sub-block written as compressed size (4) + uncompressed size (4) +
#: compressed bytes + x1764 checksum (4).
TOKU_SUB_BLOCK_OVERHEAD = 12
#: PerconaFT ft/serialize/compress.cc toku_compress(): zlib level 5
#: (compress2, its zlib header doubles as the method byte), zlib without
#: checksum (raw deflate level 5 + 2 bytes), lzma level 2 with
#: LZMA_CHECK_NONE behind one method byte, snappy and "none" behind one
#: method byte, zstd level 1 behind one method byte.
TOKU_METHODS = {
    "none": ("none", None), "zlib": ("zlib", 5), "zlib_without_checksum": ("zlib", 5),
    "lzma": ("lzma", 2), "snappy": ("snappy", None), "zstd": ("zstd", 1), "quicklz": ("quicklz", None),
}
TOKU_SUPPORTED = ("none", "zlib", "lzma", "snappy", "zstd", "quicklz")


@dataclass
class TokuDBPartitions(Model):
    """TokuDB: each partition compressed on its own, no filesystem rounding.

    Bytes per partition = method-framed compressed bytes + 12 (sizes and
    checksum).  Codecs PerconaFT does not have (lz4, bzip2, brotli) are shown
    as hypothetical with the same 1-byte method framing.
    ``zlib_without_checksum`` reproduces method 11 (raw deflate: the zlib
    stream less its 2-byte header and 4-byte Adler-32, plus 2 bytes).
    """

    zlib_without_checksum: bool = False

    def __post_init__(self):
        self.name = "tokudb_partitions"

    def supports(self, codec: Codec) -> str | None:
        if codec.is_chain:
            return "ClickHouse codec chains do not apply to TokuDB"
        return None

    def framed_size(self, codec: Codec, payload: bytes) -> int:
        fam = codec.family
        if fam == "none":
            return 1 + len(payload)
        if fam == "zlib":
            n = len(codec.compress(payload))
            return n - 4 if self.zlib_without_checksum else n
        if not payload and fam in ("lzma", "zstd", "quicklz"):
            return 1                    # compress.cc: empty input is the method byte alone
        return 1 + codec.compressed_size(payload)

    def project(self, codec: Codec, payload: bytes, unit: int | None = None) -> int:
        return TOKU_SUB_BLOCK_OVERHEAD + self.framed_size(codec, payload)

    def max_bytes(self, logical: np.ndarray, codec: Codec | None = None, units=None) -> np.ndarray | None:
        """A partition takes at most its sub-block framing (12) + the method byte + the codec's
        worst case: PerconaFT sizes the buffer with ``toku_compress_bound`` (ft/serialize/compress.cc:
        none n + 1, quicklz n + 400 + 1, zlib compressBound, lzma 1 + lzma_stream_buffer_bound,
        snappy 1 + MaxCompressedLength) and ft/serialize/ft_node-serialize.cc adds the 8 bytes of
        sizes and the 4-byte x1764 checksum (compress/bounds.py)."""
        if codec is None:
            return None
        return TOKU_SUB_BLOCK_OVERHEAD + 1 + compress_bound(codec, logical)


# ---------------------------------------------------------------------------
# targets
TOKU_CODEC = {"zlib": Codec("zlib", 5), "zlib_without_checksum": Codec("zlib", 5),
              "lzma": Codec("lzma", 2), "snappy": Codec("snappy"), "none": Codec("none"),
              "zstd": Codec("zstd", 1), "quicklz": Codec("quicklz")}


def tokudb_partition_filter(entry: FileEntry, units: np.ndarray) -> np.ndarray:
    """Units that are partitions (sub-blocks the engine compresses), not node headers."""
    names = entry.kind_names or {}
    kinds = units["kind"]
    keep = np.ones(len(units), dtype=bool)
    for code, name in names.items():
        low = str(name).lower()
        if "partition" in low or "basement" in low or "buffer" in low:
            continue
        if "header" in low or "info" in low or "translation" in low or "descriptor" in low:
            keep &= kinds != code
    return keep


def tokudb_units(entry: FileEntry) -> UnitSet:
    """A dictionary's partitions to sample, stratified by node. The nodes of one height are one
    kind of partition (``group``: they share their spread), and the partitions' bytes on disk now
    (``aux``, BP_SIZE) say how they vary beyond what a sample shows (compress/estimate.py)."""
    base = engine_units(entry, tokudb_partition_filter)
    idx = base.meta["index"]
    level = entry.unit_facts.level if entry.unit_facts is not None else None
    if level is not None and len(level) == len(entry.units):
        base.group = np.asarray(level, dtype=np.int64)[idx]
    base.aux = entry.units["stored"][idx].astype(np.int64)
    return base


def tokudb_target(run: Run, entry: FileEntry, codecs: list[Codec]) -> Target:
    sec = entry.sections.get("tokudb", {}) or {}
    base = tokudb_units(entry)
    idx = base.meta["index"]
    stored = int(entry.units["stored"][idx].astype(np.int64).sum())
    methods = sec.get("node_methods") or {}
    current_name = max(methods, key=lambda k: methods[k]) if methods else None
    current = TOKU_CODEC.get(current_name) if current_name else None
    t = Target(entry.path, "tokudb", int(entry.lasting_allocated_bytes), base.logical_bytes,
               current_codec=current.name if current else current_name, primary_model="tokudb_partitions",
               info={"table": sec.get("table") or entry.table, "database": entry.database,
                     "method": current_name, "stored_partition_bytes": stored})
    all_codecs = list(codecs)
    models: list[Model] = [TokuDBPartitions()]
    pairs = model_pairs(all_codecs, models, t.notes)
    if current is not None:
        cur_model = TokuDBPartitions(zlib_without_checksum=current_name == "zlib_without_checksum")
        cur_model.name = "tokudb_partitions"
        if current.name in {c.name for c in all_codecs}:
            pairs = [(c, m) for c, m in pairs if c.name != current.name]
        pairs.append((current, cur_model))
    proj = run.project(base, pairs)
    speeds = measure_speeds(run, proj, sorted({c for c, _ in pairs}, key=lambda c: c.name))
    other = int(entry.lasting_allocated_bytes) - stored     # headers, block table, node headers, free space

    def adjust(pr, est):
        return shift(est, other)

    add_results(t, proj, speeds, adjust)
    t.split = tokudb_split(entry, idx, int(t.current_bytes))
    if run.raw_models:
        raw_results(run, t, entry, codecs)
    return t


def tokudb_split(entry: FileEntry, idx: np.ndarray, current_bytes: int) -> Split | None:
    """Compressible (the partitions), overhead (the two header slots, the translation table,
    node headers, each block's padding to the allocator's 4096-byte alignment, filesystem
    metadata) and reclaimable bytes of a dictionary, at what the filesystem holds for each.

    Reclaimable is what a rebuild that writes the dictionary anew gives back: the file's space
    no used block of the translation table covers (``tokuftdump --fragmentation``'s gaps and
    the tail past the last block) less each block's padding to BLOCK_ALLOCATOR_ALIGNMENT (a new
    file aligns its blocks the same way), plus what is allocated past the end of the file.
    PerconaFT itself never gives that space back while it runs: ``note_end_checkpoint``
    (ft/serialize/block_table.cc) returns the previous checkpoint's blocks to the block
    allocator, which reuses them, and ``toku_maybe_truncate_file`` (ft/serialize/ft-serialize.cc)
    shortens the file only when it is 32 MiB past the last used block, to a 32 MiB boundary.
    The codec's projection keeps the space (nodes are recompressed where they are written)."""
    bt = (entry.detail.get("tokudb") or {}).get("block_table")
    if bt is None or entry.units is None:
        return None
    used = bt.used
    starts = np.concatenate([[0], used["offset"].astype(np.int64)])
    ends = np.concatenate([[HEADER_BYTES], (used["offset"] + used["size"]).astype(np.int64)])
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], np.maximum.accumulate(ends[order])
    size = int(entry.apparent_bytes)
    gap_at = np.concatenate([ends, [size]])[:-1]
    gap_end = np.concatenate([starts[1:], [size]])
    keep = gap_end > gap_at
    gap_at, gap_end = gap_at[keep], gap_end[keep]
    aligned = np.minimum(-(-gap_at // BLOCK_ALLOCATOR_ALIGNMENT) * BLOCK_ALLOCATOR_ALIGNMENT, gap_end)
    free = int(allocated_in(entry, aligned, gap_end - aligned).sum())
    past_eof = 0 if entry.fs is None or entry.fs.type == "xfs" else int(entry.past_eof_bytes)
    u = entry.units[idx]
    compressible = int(allocated_in(entry, u["offset"].astype(np.int64), u["stored"].astype(np.int64)).sum())
    reclaimable = min(free + past_eof, max(0, current_bytes - compressible))
    return Split(compressible, current_bytes - compressible - reclaimable, reclaimable,
                 detail={"unused_block_bytes": free, "past_eof_bytes": past_eof})


# ---------------------------------------------------------------------------
# the engine's what-if
class TokuDBWhatIf(WhatIfEngine):
    name = "tokudb"

    def wants_file(self, entry: FileEntry) -> bool:
        return entry.role == "dictionary" and entry.units is not None and bool(len(entry.units))

    def file_target(self, run: Run, entry: FileEntry, codecs: list[Codec]) -> Target:
        return tokudb_target(run, entry, codecs)

    def available(self, codec: Codec, layout: str | None = None) -> bool:
        return codec.family in TOKUDB_ROW_FORMATS

    def advisable(self, target: Target) -> bool:
        # engine-internal dictionaries (tokudb.directory, ...): no table, no DDL to give
        return bool((target.info or {}).get("table"))

    def rebuild_ddl(self, target: Target) -> str | None:
        """A copying rebuild: ``OPTIMIZE TABLE`` and ``ALTER TABLE ... ENGINE=TokuDB`` / ``FORCE``
        do not write the dictionaries anew on TokuDB (TOKU_OPTIMIZE_WITH_RECREATE, set for
        MariaDB and Percona Server in hatoku_defines.h: optimize answers HA_ADMIN_TRY_ALTER and the
        recreate runs in place as a hot optimize, ha_tokudb_admin.cc / ha_tokudb_alter.cc
        ``optimize_needed`` -> ``do_optimize``, which flushes message buffers into the leaves and
        leaves the free blocks to the block allocator); ``ALGORITHM=COPY`` makes the server copy
        the rows into new dictionary files and drop the old ones."""
        info = target.info or {}
        table = info.get("table")
        return f"ALTER TABLE {table} ENGINE=TokuDB, ALGORITHM=COPY;" if table else None

    def rebuild_verdict(self, group: list, reclaimable: int) -> str:
        free = sum(int(t.split.detail.get("unused_block_bytes", 0)) for t in group if t.split is not None)
        return (f"reclaims up to {reclaimable:,} bytes: the free blocks of the dictionaries' block tables "
                f"({free:,} bytes beyond each block's 4 KiB alignment) and space past the end of the files, "
                f"which PerconaFT reuses but does not give back; OPTIMIZE TABLE and ALTER TABLE ... "
                f"ENGINE=TokuDB run in place (a hot optimize) and do not; the copy also rewrites every "
                f"node (buffered messages applied, old row versions dropped), so the new files can be "
                f"smaller still or larger by what the rewritten nodes take")

    def ddl(self, target: Target, codec: Codec, model: str) -> str:
        info = target.info or {}
        table = info.get("table") or f"{info.get('database')}.?"
        fmt = TOKUDB_ROW_FORMATS.get(codec.family)
        if fmt is None:
            return f"-- {codec.name}: TokuDB has no {codec.family} (what-if only)"
        return f"ALTER TABLE {table} ROW_FORMAT={fmt};"


WHATIF = TokuDBWhatIf()

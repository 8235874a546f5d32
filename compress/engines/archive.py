"""ARCHIVE what-if: one target per ``.ARZ`` file, its row stream (the rows as
ha_archive.cc ``pack_row`` writes them, each with its 4-byte length) re-encoded
with each codec, sampled by span (parsers/archive: 32 KiB of the file, inflated).

The model: the spans are taken in groups of :data:`SPANS_PER_GROUP` (1 MiB of the
file, 3-5 MiB of rows on the fixture); each sampled group's rows are compressed
as one stream, and the header, the .frm copy and the member trailers are added
as they are.  The engine compresses the whole table as one deflate stream
(azio.c: ``deflateInit2(Z_DEFAULT_COMPRESSION, -MAX_WBITS)``, a 32 KiB window),
so for zlib the grouped figure equals the whole-stream one within 0.1% on the
fixture; codecs with windows beyond a group find matches across groups that
this model does not see: on the fixture's two tables, groups of 32 spans give
zstd:3 0.5-0.7% and lzma:6 2.9-3.1% more than one stream of the whole table
(groups of 1 span: 3% and 11-48% more), so their figures are slight upper bounds.

ARCHIVE writes deflate only, at zlib's default level (no table option chooses
another codec or level: ha_archive.cc, azio.c), so no codec is "available" to the
engine and no ARCHIVE DDL is advised; the other figures say what the same rows
would take with another codec, not how to get there.

The same rows as InnoDB pages (plain, and page-compressed with MariaDB's codecs) are
an estimate of their own (``innodb_from_rows_estimate``, compress/engines/innodbrows.py:
records rebuilt from the packed rows with InnoDB's record overhead, pages filled as a
sorted build fills them), checked against MariaDB within 1% on the fixture's tables.
ROW_FORMAT=COMPRESSED (KEY_BLOCK_SIZE 8 and 4), MyRocks (zstd and lz4) and TokuDB (its default
zlib row format) are estimated from the same rows at each engine's granularity
(innodbziprows.py, myrocksrows.py, tokudbrows.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dbxray.parsers.model import FileEntry

from ..bounds import compress_bound
from ..models import Model
from ..registry import Codec
from ..sources import UnitSet, engine_units
from ..targets import Run, Target, add_results, measure_speeds, model_pairs, raw_results, shift
from .base import WhatIfEngine
from .innodb import MARIADB_ALGOS, SYSTEM_SCHEMAS, provider_note
from .innodbziprows import ZIP_CODEC
from .rowmodels import row_model_results

#: the ENGINE= advice's margin per cross-engine model: (fraction of the figure, bytes the figure
#: leaves out), the tolerances tests/test_archive_cross_engine.py holds against MariaDB: InnoDB
#: page-compressed 2%; plain pages 1% and the two extents (2 MiB) a plain file reserves besides
#: them; ROW_FORMAT=COMPRESSED 2% (8K) and 10% (4K) and the 1 MiB extent the file grows by;
#: MyRocks 3%
ENGINE_MODEL_ERRORS = {"innodb_from_rows_estimate": (0.02, 2 << 20),
                       "innodb_row_compressed_kbs8k_from_rows_estimate": (0.02, 1 << 20),
                       "innodb_row_compressed_kbs4k_from_rows_estimate": (0.10, 1 << 20),
                       "myrocks_from_rows_estimate": (0.03, 0)}
#: RocksDB's names of the codecs the MyRocks estimate projects
MYROCKS_CF_COMPRESSION = {"zstd:3": "kZSTD", "lz4": "kLZ4Compression"}

#: azio.c az_open: deflateInit2(level = Z_DEFAULT_COMPRESSION (zlib's 6), -MAX_WBITS)
ARCHIVE_CODEC = Codec("zlib", 6)
#: the zlib wrapper around a deflate stream: 2-byte header + 4-byte Adler-32 (RFC 1950); azio writes raw deflate
ZLIB_WRAPPER = 6
#: azclose: crc32 + length after each member
MEMBER_TRAILER = 8
#: spans (32 KiB of the file each) compressed as one stream by the model
SPANS_PER_GROUP = 32


@dataclass
class ArchiveRowStream(Model):
    """ARCHIVE: the row stream re-encoded span by span (no framing; zlib as raw deflate,
    as azio writes it)."""

    def __post_init__(self):
        self.name = "archive_row_stream"

    def supports(self, codec: Codec) -> str | None:
        if codec.is_chain:
            return "ClickHouse codec chains do not apply to ARCHIVE"
        return None

    def max_bytes(self, logical: np.ndarray, codec: Codec | None = None, units=None) -> np.ndarray | None:
        """A group of rows re-encoded takes at most the codec's worst case (compress/bounds.py;
        zlib: compressBound less the 6-byte wrapper azio does not write)."""
        if codec is None:
            return None
        most = compress_bound(codec, logical)
        return most - ZLIB_WRAPPER if codec.family == "zlib" else most

    def project(self, codec: Codec, payload: bytes, unit: int | None = None) -> int:
        if codec.family == "zlib":
            return max(0, len(codec.compress(payload)) - ZLIB_WRAPPER)
        return codec.compressed_size(payload)


def archive_span_filter(entry: FileEntry, units: np.ndarray) -> np.ndarray:
    """The inflated spans (not the header unit)."""
    names = entry.kind_names or {}
    keep = np.ones(len(units), dtype=bool)
    for code, name in names.items():
        if name != "AZ_DATA_SPAN":
            keep &= units["kind"] != code
    return keep


def span_groups(base: UnitSet, factor: int = SPANS_PER_GROUP) -> UnitSet:
    """Runs of ``factor`` consecutive spans (in file order) as one unit: their rows concatenated."""
    order = np.argsort(base.order_key, kind="stable")
    groups = [order[i:i + factor] for i in range(0, len(order), factor)]
    logical = np.array([int(base.logical[g].sum()) for g in groups], dtype=np.int64)

    def payload(j: int) -> bytes:
        return b"".join(base.payload(int(k)) for k in groups[j])

    return UnitSet(label=f"{base.label} (groups of {factor} spans)", logical=logical,
                   strata=np.zeros(len(groups), dtype=np.int64), payload=payload,
                   order_key=np.array([int(base.order_key[g[0]]) for g in groups], dtype=np.int64),
                   meta={"groups": groups, "base": base})


def archive_target(run: Run, entry: FileEntry, codecs: list[Codec]) -> Target:
    sec = entry.sections.get("archive") or {}
    base = span_groups(engine_units(entry, archive_span_filter))
    t = Target(entry.path, "archive", int(entry.lasting_allocated_bytes), base.logical_bytes,
               current_codec=ARCHIVE_CODEC.name, primary_model="archive_row_stream",
               info={"table": f"{entry.database}.{entry.table}", "database": entry.database,
                     "rows": sec.get("rows"), "compressed_bytes": sec.get("compressed_bytes")})
    t.notes.append(f"rows compressed in runs of {SPANS_PER_GROUP} spans (1 MiB of the file); ARCHIVE compresses "
                   f"the table as one deflate stream: zstd/lzma figures are slight upper bounds of a whole-table "
                   f"encoding")
    pairs = model_pairs(list(codecs), [ArchiveRowStream()], t.notes)
    if ARCHIVE_CODEC.name not in {c.name for c, _ in pairs}:
        pairs.append((ARCHIVE_CODEC, ArchiveRowStream()))
    proj = run.project(base, pairs)
    speeds = measure_speeds(run, proj, sorted({c for c, _ in pairs}, key=lambda c: c.name))
    # kept as they are: the header with the .frm copy and comment, each member's trailer
    other = int(sec.get("data_start") or 0) + MEMBER_TRAILER * int(sec.get("members") or 1)

    def adjust(pr, est):
        return shift(est, other)

    add_results(t, proj, speeds, adjust)
    run.check()
    if run.cross_engine:
        cross_engine_results(run, t, entry, base, codecs, speeds)
    if run.raw_models:
        raw_results(run, t, entry, codecs)
    return t


def group_row_starts(entry: FileEntry, base: UnitSet) -> np.ndarray | None:
    """Where the first whole row of each span group begins in its bytes (-1: none does)."""
    first = entry.detail.get("span_first_row")
    spans = base.meta.get("base")
    if first is None or spans is None:
        return None
    idx = spans.meta["index"] - 1                 # span k is unit k + 1 (unit 0: the header)
    out = np.full(len(base.meta["groups"]), -1, dtype=np.int64)
    for j, g in enumerate(base.meta["groups"]):
        before = 0
        for k in g:
            f = int(first[idx[k]]) if 0 <= idx[k] < len(first) else -1
            if f >= 0:
                out[j] = before + f
                break
            before += int(spans.logical[k])
    return out


def cross_engine_results(run: Run, t: Target, entry: FileEntry, base: UnitSet, codecs: list[Codec],
                         speeds: dict) -> None:
    """The same rows as InnoDB pages (compress/engines/innodbrows.py: an estimate), with
    MariaDB's page compression codecs and ``none`` (plain pages)."""
    starts = group_row_starts(entry, base)
    sec = entry.sections.get("archive") or {}
    rows = int(sec.get("rows") or 0)
    if starts is None or not rows:
        t.notes.append("InnoDB estimate: the row starts were not recorded (a saved scan): not made")
        return
    fs_block = int(run.fs_block or entry.fs_block or 4096)
    avg = max(0.0, float(sec.get("uncompressed_bytes") or 0) / rows - 4)
    longest = int(sec.get("longest_row") or sec.get("header_longest_row") or 0) - 4
    row_model_results(run, t, base, starts, rows, avg, longest, fs_block, codecs, speeds)


class ArchiveWhatIf(WhatIfEngine):
    name = "archive"

    def wants_file(self, entry: FileEntry) -> bool:
        return (entry.role == "table_data" and entry.units is not None and len(entry.units) > 1
                and bool((entry.sections.get("archive") or {}).get("complete")))

    def file_target(self, run: Run, entry: FileEntry, codecs: list[Codec]) -> Target:
        return archive_target(run, entry, codecs)

    def declined(self, entry: FileEntry) -> str | None:
        """A table's ``.ARZ`` whose row stream was not read to its end: a projection of part
        of the table would be a false figure for it."""
        if entry.role != "table_data" or self.wants_file(entry):
            return None
        return ("its row stream was not read to its end (cut short, corrupt or past the bomb cap: the scan's "
                "errors name where): no projection from part of the table")

    def available(self, codec: Codec, layout: str | None = None) -> bool:
        return codec.name == ARCHIVE_CODEC.name

    def advisable(self, target: Target) -> bool:
        """Tables only, never the server's own schemas."""
        info = target.info or {}
        return bool(info.get("table")) and str(info.get("database") or "").lower() not in SYSTEM_SCHEMAS

    def engine_change(self, target: Target, codec: Codec, model: str) -> tuple[str, str, float, int] | None:
        """ENGINE= advice from the cross-engine estimates checked against a real engine
        (tests/test_archive_cross_engine.py): InnoDB plain and page-compressed, ROW_FORMAT=COMPRESSED,
        MyRocks. Their margins are the tolerances those checks hold (:data:`ENGINE_MODEL_ERRORS`);
        TokuDB's estimate was checked against no server, and no server here has TokuDB (MariaDB
        dropped it in 10.6): no DDL from it."""
        info = target.info or {}
        db, name = info.get("database") or "?", str(info.get("table") or "?")
        if name.startswith(f"{db}."):
            name = name[len(db) + 1:]                   # the target's table is named db.table
        table = f"`{db}`.`{name}`"
        err = ENGINE_MODEL_ERRORS.get(model)
        if err is None:
            return None
        frac, extra = err
        if model == "innodb_from_rows_estimate":
            if codec.family == "none":
                return "ENGINE=InnoDB", f"ALTER TABLE {table} ENGINE=InnoDB;", frac, extra
            if codec.family not in MARIADB_ALGOS:
                return None
            level = f" PAGE_COMPRESSION_LEVEL={codec.level}" if codec.family in ("zlib", "lzma") and codec.level \
                else ""
            clause = f"ENGINE=InnoDB PAGE_COMPRESSED=1{level}"
            return clause, provider_note(codec.family) + (
                f"SET GLOBAL innodb_compression_algorithm='{codec.family}'; ALTER TABLE {table} {clause};"), frac, 0
        if model.startswith("innodb_row_compressed_kbs"):
            if codec.name != ZIP_CODEC.name:
                return None
            kbs = model.split("kbs")[1].split("k")[0]
            clause = f"ENGINE=InnoDB ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE={kbs}"
            return clause, f"ALTER TABLE {table} {clause};", frac, extra
        if model == "myrocks_from_rows_estimate":
            opt = MYROCKS_CF_COMPRESSION.get(codec.name)
            if opt is None:
                return None
            return "ENGINE=ROCKSDB", (
                f"-- MyRocks (ha_rocksdb) with the default column family compressed as {opt} (my.cnf "
                f"rocksdb_default_cf_options='compression={opt}', or SET GLOBAL rocksdb_update_cf_options="
                f"'default={{compression={opt}}}' for every table of that column family)\n"
                f"ALTER TABLE {table} ENGINE=ROCKSDB;"), frac, extra
        return None

    def ddl(self, target: Target, codec: Codec, model: str) -> str:
        if codec.name == ARCHIVE_CODEC.name:
            return ""
        return (f"-- {codec.name}: ARCHIVE writes deflate only, at zlib's default level (azio.c); "
                f"what-if only")


WHATIF = ArchiveWhatIf()

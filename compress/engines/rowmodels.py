"""The cross-engine row models run together: another engine's rows (ARCHIVE's row stream,
a MyISAM or Aria data file's rows: datarows.py) as InnoDB pages (plain and page-compressed:
innodbrows.py), ROW_FORMAT=COMPRESSED (innodbziprows.py), MyRocks (myrocksrows.py) and
TokuDB (tokudbrows.py), each an estimate at its engine's granularity."""
from __future__ import annotations

import numpy as np

from ..registry import Codec
from ..sources import UnitSet
from ..targets import Run, Target, add_results, model_pairs, shift
from .innodb import MARIADB_ALGOS
from .innodbrows import ROW_OVERHEAD, InnoDBFromRowsEstimate, max_in_page_record
from .innodbziprows import ZIP_CODEC, InnoDBZipFromRowsEstimate
from .myrocksrows import MYROCKS_CODECS, MyRocksFromRowsEstimate
from .tokudbrows import TOKUDB_DEFAULT_CODEC, TokuDBFromRowsEstimate

#: the ROW_FORMAT=COMPRESSED estimates made from the rows
ZIP_KEY_BLOCK_SIZES = (8192, 4096)


def row_model_results(run: Run, t: Target, base: UnitSet, starts: np.ndarray, rows: int, avg: float,
                      longest_row: int, fs_block: int, codecs: list[Codec], speeds: dict,
                      full: UnitSet | None = None) -> None:
    """Every row model's results on ``t`` (``starts``: where each unit's first whole row begins
    in its payload; ``avg`` / ``longest_row``: the rows' mean and largest bytes). The InnoDB
    ones are left out where a record stays over half a page: a packed row (ARCHIVE, Dynamic
    MyISAM/Aria) carries no column boundaries to move its long columns off-page by, and a
    decoded row (fixedrows.py: ``longest`` is then its in-page record, long columns moved
    off-page: innodbextern.py) that stays that long is one the server refuses.
    ``full``: the same rows with every CHAR at its full width, as MyRocks and TokuDB store them
    (fixedrows.py; None: ``base`` stands for them too)."""
    if longest_row + ROW_OVERHEAD >= max_in_page_record(InnoDBFromRowsEstimate.page_size):
        # page0zip.h page_zip_rec_needs_ext: DYNAMIC moves such a record's long columns to BLOB
        # pages, which needs the columns' boundaries: no InnoDB figure rather than a wrong one
        t.notes.append(f"InnoDB and ROW_FORMAT=COMPRESSED estimates: not made (a record of {longest_row:,} bytes "
                       f"is over half a page: a packed row's columns are not known here to move them off-page, or a "
                       f"decoded one stays that long with them off-page, which the server refuses)")
        other_engine_results(run, t, base, starts, rows, avg, fs_block, innodb=False, full=full)
        return
    model = InnoDBFromRowsEstimate(fs_block=fs_block, starts=starts)
    wanted = [c for c in codecs if c.family in MARIADB_ALGOS or c.family == "none"]
    if not any(c.family == "none" for c in wanted):
        wanted.append(Codec("none"))
    pairs = model_pairs(wanted, [model], t.notes)
    if not pairs:
        return
    proj = run.project(base, pairs, count=False)
    pages = model.file_pages(rows, avg)

    def adjust(pr, est):
        # the system and node pointer pages: whole in a plain file; page-compressed, page 0
        # (FSP_HDR) stays whole and the others (IBUF_BITMAP, INODE, the node pointer pages,
        # mostly empty) take a filesystem block each
        if pr.codec.family == "none":
            return shift(est, pages * model.page_size)
        return shift(est, model.page_size + (pages - 1) * fs_block)

    add_results(t, proj, {c.name: speeds.get(c.name, (None, None)) for c, _ in pairs}, adjust)
    t.notes.append("innodb_from_rows_estimate: the rows as InnoDB pages after ALTER TABLE ... ENGINE=InnoDB "
                   "[PAGE_COMPRESSED=1] (an estimate: each record the packed row + 24 bytes of header, "
                   "transaction id, roll pointer and row id; pages 15/16 full; 'none' counts the pages, not "
                   "the up to two extents a plain file reserves besides them)")
    other_engine_results(run, t, base, starts, rows, avg, fs_block, full=full)


def other_engine_results(run: Run, t: Target, base: UnitSet, starts: np.ndarray, rows: int, avg: float,
                         fs_block: int, innodb: bool = True, full: UnitSet | None = None) -> None:
    """The same rows as ROW_FORMAT=COMPRESSED (KEY_BLOCK_SIZE 8 and 4), MyRocks (zstd, lz4) and
    TokuDB (its default zlib row format): estimates, each at its engine's granularity, each
    engine's default codec (innodbziprows.py, myrocksrows.py, tokudbrows.py)."""
    zips = [InnoDBZipFromRowsEstimate(key_block_size=k, starts=starts) for k in ZIP_KEY_BLOCK_SIZES] if innodb else []
    rocks = MyRocksFromRowsEstimate(starts=starts)
    toku = TokuDBFromRowsEstimate(starts=starts)
    wide = full if full is not None else base
    pairs = [(ZIP_CODEC, m) for m in zips] + [(c, rocks) for c in MYROCKS_CODECS] + [(TOKUDB_DEFAULT_CODEC, toku)]
    if full is None:
        projs = [run.project(base, pairs, count=False)]
    else:
        projs = ([run.project(base, pairs[:len(zips)], count=False)] if zips else []) + \
            [run.project(full, pairs[len(zips):], count=False)]
    raw = int(wide.logical_bytes)
    wide_avg = avg if full is None else max(0.0, (raw - 4 * rows) / max(rows, 1))
    zip_fixed = {m.name: m.zip_fixed_pages(rows, avg) * m.key_block_size for m in zips}

    def adjust(pr, est):
        if pr.model is rocks:
            return shift(est, rocks.file_bytes(raw))
        if pr.model is toku:
            return shift(est, toku.file_bytes(rows, wide_avg))
        return shift(est, zip_fixed[pr.model.name])

    for proj in projs:
        add_results(t, proj, {}, adjust)
    if zips:
        t.notes.append(
            "innodb_row_compressed_kbs8k/kbs4k_from_rows_estimate: the same records stored as ROW_FORMAT=COMPRESSED "
            "(an estimate: 16 KiB pages filled by a sorted build, zlib:6 over their records into KEY_BLOCK_SIZE "
            "blocks with page0zip.cc's per-record bytes; a page that does not fit a block is split; the blocks "
            "the table uses, not the 1 MiB extents its file grows by)")
    t.notes.append(
        "myrocks_from_rows_estimate: the rows as MyRocks SSTs after ENGINE=ROCKSDB and a full compaction (an "
        "estimate: hidden 8-byte key behind a 4-byte index number, the packed row as the value, 4 KiB data "
        "blocks prefix-compressed and compressed one by one (zstd:3 / lz4, MyRocks's defaults), the index "
        "block and each SST's fixed blocks; no bloom filter)")
    t.notes.append(
        "tokudb_from_rows_estimate: the rows as a TokuDB fractal tree after ENGINE=TokuDB (an estimate: hidden "
        "8-byte key, committed leaf entries, 64 KiB basement nodes each compressed on its own with the default "
        "tokudb_zlib row format (zlib:5, no checksum), 4 MiB leaf nodes with their headers, a 4 KiB-aligned "
        "place each; no TokuDB server checked it)")



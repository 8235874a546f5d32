"""MyISAM what-if: one target per data file (``.MYD``); its bytes as they are on disk
re-encoded with each codec, as two labelled estimates of where the same rows could go:

* ``innodb_page_compressed_estimate``: the table converted to InnoDB with
  PAGE_COMPRESSED=1 (``ALTER TABLE ... ENGINE=InnoDB PAGE_COMPRESSED=1``): the data
  file cut in 16 KiB pieces, each compressed and written as MariaDB writes a
  page_compressed page (compress/engines/innodb.py InnoDBPageCompressed: full_crc32
  framing, rounded up to the filesystem block).  It assumes InnoDB pages would hold the
  same bytes as the data file: InnoDB's own row headers (5-6 bytes and a 13-byte
  transaction id / roll pointer per row), page directory and a 15/16 page fill are not
  modelled, nor are the indexes (only the data file is projected);
* ``myisampack_estimate`` (Aria: ``aria_pack_estimate``): the data file compressed in 64 KiB
  pieces with each codec, no rounding: a stand-in for a read-only packed copy;
* ``myisampack`` (Aria: ``aria_pack``), codec ``huffman``: the packer's own figure, its
  per-column field types and Huffman trees worked out from the rows as
  storage/myisam/myisampack.c does (packmodel.py, the rows: packrows.py), with the command
  as advice (compress/advisor.py, kind ``pack``).

A Dynamic data file's rows (datarows.py) and a Fixed or Aria Page one's, decoded with the
table's .frm (fixedrows.py), and a myisampack'ed one's, unpacked with its Huffman trees
(packedrows.py), are also read and go through the cross-engine row models (rowmodels.py:
InnoDB from the rows, ROW_FORMAT=COMPRESSED, MyRocks, TokuDB); the
row-based InnoDB figure (``innodb_from_rows_estimate``) is then the primary model.

All are labelled estimates in the JSON and the report.  The engine writes none of
these codecs itself, so codec advice (DDL) is given for the InnoDB conversion only, with the
algorithms MariaDB page compression has; the packer's is a command.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

from dbxray.parsers.fileio import FileReadError, ReadOnlyFile
from dbxray.parsers.model import FileEntry
from dbxray.parsers.myisam.packrec import FIELD_TYPE_NAMES
from dbxray.parsers.server.frm import FrmError
from dbxray.parsers.server.frmkeys import read_frm_keys

from ..bounds import compress_bound
from ..estimate import Estimate
from ..models import Model, is_zero
from ..registry import Codec
from ..sources import raw_records
from ..targets import Result, Run, Split, Target, add_results, measure_speeds, model_pairs, raw_results
from .base import WhatIfEngine
from .datarows import row_units
from .fixedrows import EXACT_ROWS, MAX_FRM, fixed_row_units, page_row_units, table_columns
from .innodbkeys import key_pages
from .packedrows import packed_row_units
from .packrows import pack_command, packer_size
from .innodb import MARIADB_ALGOS, SYSTEM_SCHEMAS, InnoDBPageCompressed, provider_note
from .rowmodels import row_model_results

#: the row-based InnoDB estimate (innodbrows.py), the primary model where the rows are read
ROWS_MODEL = "innodb_from_rows_estimate"
#: runs of a large table decoded for its keys' estimate
KEY_RUNS = 8

INNODB_PAGE = 16384
#: SHOW TABLE STATUS row formats of MyISAM / Aria that InnoDB has no ROW_FORMAT for
INNODB_FOREIGN_ROW_FORMATS = ("Fixed", "Page", "Compressed")
PACK_PIECE = 65536
#: the packer's own figure (packer_result): its model by engine, and its codec's name
PACKER_MODEL = {"myisam": "myisampack", "aria": "aria_pack"}
PACKER_CODEC = "huffman"


@dataclass
class InnoDBPageCompressedEstimate(InnoDBPageCompressed):
    """A 16 KiB piece of another engine's data file as a MariaDB page_compressed page
    (InnoDBPageCompressed's write size and rounding; no InnoDB page types to keep whole)."""

    #: ALTER TABLE ... ENGINE=InnoDB copies the live rows into a new table (inherited: True)

    def __post_init__(self):
        super().__post_init__()
        self.name = "innodb_page_compressed_estimate"

    def fixed_by_kind(self, kind_name):
        return None

    def fixed_by_payload(self, payload: bytes) -> int | None:
        return 0 if is_zero(payload) else None


@dataclass
class PackedCopyEstimate(Model):
    """A compressed read-only copy (myisampack / aria_pack) estimated as the data file's
    bytes compressed piece by piece with the codec."""

    label: str = "myisampack_estimate"
    #: the packer writes the live rows into a new data file
    rebuilds = True

    def __post_init__(self):
        self.name = self.label

    def supports(self, codec: Codec) -> str | None:
        return "ClickHouse codec chains do not apply" if codec.is_chain else None

    def max_bytes(self, logical, codec: Codec | None = None, units=None):
        """A piece takes at most the codec's worst case (compress/bounds.py); a packed copy
        is a re-encode of these bytes, so the file's own size does not bound it."""
        return None if codec is None else compress_bound(codec, logical)

    def project(self, codec: Codec, payload: bytes, unit: int | None = None) -> int:
        if codec.family == "none":
            return len(payload)
        return codec.compressed_size(payload)


def data_file_target(run: Run, entry: FileEntry, codecs: list[Codec], engine: str, pack_label: str) -> Target:
    fs_block = int(run.fs_block or entry.fs_block or 4096)
    t = Target(entry.path, engine, int(entry.lasting_allocated_bytes), int(entry.apparent_bytes),
               current_codec="none", primary_model="innodb_page_compressed_estimate",
               info={"database": entry.database, "table": entry.table, "layout": "full_crc32",
                     "row_format": (entry.sections.get(engine) or {}).get("row_format")})
    t.notes.append("estimates: the data file's bytes re-encoded; InnoDB row headers, page fill and the "
                   f"indexes are not modelled; {pack_label} is the data file under each codec, not the packer's "
                   f"per-column Huffman coding (that is the '{PACKER_MODEL[engine]}' result)")
    sec = entry.sections.get(engine) or {}
    deleted = sec.get("deleted_bytes")
    detail = {"deleted_bytes": int(deleted or 0), "deleted_blocks": int(sec.get("deleted_blocks") or 0)}
    if deleted is None and sec.get("unallocated_pages") is not None and sec.get("pages"):
        # Aria's Page format: pages its bitmap marks unallocated (ma_bitmap.c) stay in the
        # file after the rows on them are deleted, until OPTIMIZE TABLE rewrites it
        deleted = int(sec["unallocated_pages"]) * (int(entry.apparent_bytes) // int(sec["pages"]))
        detail = {"unallocated_pages": int(sec["unallocated_pages"]), "unallocated_page_bytes": deleted}
    if deleted is not None:
        # deleted rows and blocks (mi_dynrec.c / ma_dynrec.c delete links; static rows marked
        # deleted) stay in the data file until OPTIMIZE TABLE rewrites it: a rebuild's, not a codec's
        reclaim = min(int(deleted), int(t.current_bytes))
        t.split = Split(int(t.current_bytes) - reclaim, 0, reclaim, detail=detail)
        if reclaim:
            t.notes.append("the estimates re-encode the data file as it is, deleted rows and free pages "
                           "included (all-zero ones take nothing): the conversion would drop them, so its "
                           "saving against the rebuilt table is at least the one shown")
    pages = InnoDBPageCompressedEstimate(page_size=INNODB_PAGE, fs_block=fs_block)
    proj = run.project(raw_records(entry, INNODB_PAGE), model_pairs(codecs, [pages], t.notes))
    speeds = measure_speeds(run, proj, codecs)
    add_results(t, proj, speeds)
    run.check()
    packed = PackedCopyEstimate(label=pack_label)
    proj2 = run.project(raw_records(entry, PACK_PIECE), model_pairs(codecs, [packed], t.notes), count=False)
    add_results(t, proj2, speeds)
    packer_result(t, entry, engine)
    rows_results(run, t, entry, engine, codecs, speeds)
    if run.raw_models:
        raw_results(run, t, entry, codecs)
    return t


def packer_result(t: Target, entry: FileEntry, engine: str) -> None:
    """The packer's own figure (packrows.py / packmodel.py: myisampack.c's statistics, field
    types, Huffman trees and rows): a result of the ``myisampack`` / ``aria_pack`` model with the
    codec ``huffman`` (no codec of the registry: the packer has its own), and ``facts["packer"]``
    (what each column would be packed as, the command).  Made once per scanned file."""
    tool = PACKER_MODEL[engine]
    cached = entry.detail.get("packer_size")
    got = cached if cached is not None else packer_size(entry, engine)
    entry.detail["packer_size"] = got
    if isinstance(got, str):
        t.notes.append(f"{tool}: not modelled ({got}); the {tool}_estimate figures are the data file under "
                       f"general codecs")
        return
    p, read, lo, hi = got
    proj = float(p.file_bytes)
    half = (hi - lo) / 2
    est = Estimate(proj, lo, hi, (half / 1.96) ** 2, math.inf, read, p.rows, bound=float(p.bound_bytes))
    t.results.append(Result(PACKER_CODEC, tool, est, rebuilds=True))
    info = t.info or {}
    t.facts["packer"] = {
        "tool": tool, "projected_bytes": int(p.file_bytes), "ci95": est.ci95(), "rows": p.rows, "rows_read": read,
        "header_bytes": p.header_bytes, "rows_bytes": p.rows_bytes, "trees": p.trees,
        "columns": [{"field_type": FIELD_TYPE_NAMES.get(ft, str(ft)), "pack_type": pt}
                    for ft, pt in zip(p.field_types, p.pack_types)],
        "command": pack_command(engine, str(info.get("database") or "?"), str(info.get("table") or "?")),
        "read_only": True}
    t.notes.append(f"{tool} (the model '{tool}', codec '{PACKER_CODEC}'): the packer's own coding worked out from "
                   f"the rows as myisampack.c does (per column its field type, Huffman tree, the trees joined, "
                   f"each row's bits and length bytes, the header and trees: packmodel.py), "
                   + ("every row read" if read >= p.rows else f"{read:,} of {p.rows:,} rows read, scaled")
                   + f"; the packed table is read-only ({p.header_bytes:,} bytes of header and trees)")


def rows_results(run: Run, t: Target, entry: FileEntry, engine: str, codecs: list[Codec], speeds: dict) -> None:
    """The data file's rows (Dynamic: datarows.py; Fixed and Aria Page: fixedrows.py) through the cross-engine row models
    (rowmodels.py): where they are read, the InnoDB figure is made from the rows and becomes
    the target's primary model (the DDL is the same conversion)."""
    if not run.cross_engine:
        return
    units = row_units(entry, engine)
    full = None
    fmt = (entry.sections.get(engine) or {}).get("row_format")
    if units is None and fmt in ("Fixed", "Page", "Compressed"):
        # decoded once per scanned file: a sampled run builds every target twice (whatif.py)
        cached = entry.detail.get("decoded_row_units")
        if cached is not None and cached[0] == fmt:
            got = cached[1]
        else:
            got = fixed_row_units(entry, engine) if fmt == "Fixed" else page_row_units(entry, engine) \
                if fmt == "Page" else packed_row_units(entry, engine)
            entry.detail["decoded_row_units"] = (fmt, got)
        if isinstance(got, str):
            t.notes.append(f"row-based estimates: not made ({fmt} rows not decoded: {got}); the InnoDB figure is "
                           f"the data file in 16 KiB pieces")
            return
        units, full = got
        how = "unpacked with the file's Huffman trees (packedrows.py), then " if fmt == "Compressed" else ""
        t.notes.append(f"the {fmt} rows are {how}decoded into their columns with the table's .frm "
                       "(fixedrows.py): InnoDB and ROW_FORMAT=COMPRESSED from each row as an InnoDB record holds it (CHAR in a "
                       "variable-width character set trimmed, a length byte per variable column), MyRocks and "
                       "TokuDB from the row with every CHAR at its full width" +
                       ("" if units.meta["exact"] else f" (the rows' mean from about {EXACT_ROWS:,} of them)"))
    if units is None:
        t.notes.append("row-based estimates: not made (rows not read here: packed row formats, or a data file "
                       "not walked to its end); the InnoDB figure is the data file in 16 KiB pieces")
        return
    rows = int(units.meta["rows"])
    avg = max(0.0, (units.logical_bytes - 4 * rows) / max(rows, 1))
    if full is not None:
        longest = int(units.meta["longest"])
        avg = float(units.meta.get("inpage_avg", avg))       # the in-page records: long columns off-page
    else:
        names = entry.kind_names or {}
        row_kinds = [c for c, n in names.items() if n in ("ROW", "ROW_PART (split row)")]
        blocks = entry.units["stored"][np.isin(entry.units["kind"], row_kinds)]
        longest = int(blocks.max()) if len(blocks) else 0
    if full is not None:
        keys_results(t, entry, units, rows)
    before = len(t.results)
    row_model_results(run, t, units, np.zeros(len(units), dtype=np.int64), rows, avg, longest,
                      int(run.fs_block or entry.fs_block or 4096), codecs, speeds, full=full)
    if any(r.model == ROWS_MODEL for r in t.results[before:]):
        t.primary_model = ROWS_MODEL
        t.notes.append("the primary InnoDB figure is made from the rows (innodb_from_rows_estimate); "
                       "innodb_page_compressed_estimate (the data file in 16 KiB pieces) is kept beside it")


def keys_results(t: Target, entry: FileEntry, units, rows: int) -> None:
    """The table's keys as InnoDB indexes after ALTER TABLE ... ENGINE=InnoDB (innodbkeys.py),
    from the decoded rows (every one of a table of up to EXACT_ROWS rows, else a spread of its
    runs): ``facts["innodb_keys"]`` and a note. The row models' figures stay the key-less table
    CTAS makes."""
    cols, _why = table_columns(entry)
    frm = os.path.splitext(entry.abspath)[0] + ".frm"
    try:
        with ReadOnlyFile(frm) as f:
            keys = read_frm_keys(f.pread(0, min(f.size, MAX_FRM)))
    except (FileReadError, OSError, FrmError) as e:
        t.notes.append(f"InnoDB keys: not estimated ({frm}: {e})")
        return
    if cols is None or not keys:
        return
    n = len(units)
    pick = range(n) if units.meta.get("exact") else sorted({int(i) for i in np.linspace(0, n - 1, min(n, KEY_RUNS))})
    decoded = []
    for k in pick:
        decoded += units.meta["decode"](k)
    if not decoded:
        return
    got = key_pages(keys, cols.fields, decoded, scale=rows / len(decoded))
    t.facts["innodb_keys"] = got
    names = ", ".join(f"{i['name']} {i['pages']:,} pages" for i in got["indexes"]) or "none"
    t.notes.append("innodb_keys (facts): ALTER TABLE ... ENGINE=InnoDB keeps the keys, which the row models "
                   "(the key-less table CTAS makes) leave out: secondary indexes " + names +
                   f" ({got['secondary_bytes']:,} bytes of 16 KiB pages)" +
                   (f"; the PRIMARY KEY replaces the 6-byte row id ({got['clustered_bytes_saved']:,} bytes fewer "
                    f"in the clustered index)" if got["primary_key"] else "") + " (an estimate: innodbkeys.py)")


class MyisamWhatIf(WhatIfEngine):
    name = "myisam"
    pack_label = "myisampack_estimate"

    def wants_file(self, entry: FileEntry) -> bool:
        return entry.role == "table_data" and entry.apparent_bytes > 0

    def file_target(self, run: Run, entry: FileEntry, codecs: list[Codec]) -> Target:
        return data_file_target(run, entry, codecs, self.name, self.pack_label)

    def available(self, codec: Codec, layout: str | None = None) -> bool:
        return codec.family in MARIADB_ALGOS

    def advisable(self, target: Target) -> bool:
        info = target.info or {}
        return bool(info.get("table")) and str(info.get("database") or "").lower() not in SYSTEM_SCHEMAS

    def rebuild_ddl(self, target: Target) -> str | None:
        """OPTIMIZE TABLE rewrites the data file without its deleted rows (mi_check.c /
        ma_check.c sort_records / recreate: the table's repair by copy)."""
        info = target.info or {}
        return f"OPTIMIZE TABLE `{info.get('database') or '?'}`.`{info.get('table') or '?'}`;"

    def ddl(self, target: Target, codec: Codec, model: str) -> str:
        info = target.info or {}
        table = f"`{info.get('database') or '?'}`.`{info.get('table') or '?'}`"
        if model.startswith("innodb_page_compressed") or model == ROWS_MODEL:
            if codec.family not in MARIADB_ALGOS:
                return f"-- {codec.name}: MariaDB page compression has no {codec.family}; shown as a what-if only"
            level = f" PAGE_COMPRESSION_LEVEL={codec.level}" if codec.family in ("zlib", "lzma") and codec.level \
                else ""
            # the table keeps its ROW_FORMAT through ALTER TABLE: FIXED, PAGE (Aria) and
            # COMPRESSED (myisampack) are none of InnoDB's, which refuses them ("Wrong create
            # options", checked with MariaDB 10.11): back to InnoDB's default (DYNAMIC, what the
            # estimates model)
            fmt = " ROW_FORMAT=DEFAULT" if info.get("row_format") in INNODB_FOREIGN_ROW_FORMATS else ""
            return provider_note(codec.family) + (f"SET GLOBAL innodb_compression_algorithm='{codec.family}'; "
                                                  f"ALTER TABLE {table} ENGINE=InnoDB{fmt} PAGE_COMPRESSED=1{level};")
        if model == PACKER_MODEL.get(self.name):
            cmd = ((target.facts or {}).get("packer") or {}).get("command") or \
                pack_command(self.name, str(info.get("database") or "?"), str(info.get("table") or "?"))
            return (f"-- a command, not SQL: FLUSH TABLES {table}; then in the data directory, with the table "
                    f"not in use: {cmd} (the table becomes read-only; {model}'s own Huffman coding)")
        return (f"-- {self.pack_label}: a read-only copy with the engine's packer (its own Huffman coding, "
                f"not {codec.name}); estimate only")


WHATIF = MyisamWhatIf()

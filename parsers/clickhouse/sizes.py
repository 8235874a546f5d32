"""Sizes per column, part and table, counted as the engine counts them.

Rules (IMergeTreeDataPart::calculateColumnsSizesOnDisk,
MergeTreeDataPartWide::getColumnSizeImpl, fixtures/clickhouse/FORMAT_NOTES.md section 8):

* Wide part, per column: compressed = sum of the sizes of its ``.bin`` files,
  uncompressed = sum of the decompressed sizes in their block headers,
  marks = sum of its marks files; a stream shared by several columns (Nested
  ``n.size0``) counts for the first column only.  Part figures are the column
  sums.
* Compact part: the engine reports 0 for every column; the part's data
  compressed = size of data.bin, uncompressed = sum of decompressed block
  sizes, marks = size of the marks file.  The real per-column split is
  computed here from the marks (:func:`compact_split`): the engine does not
  give it.
* A part read without its block headers (``Part.walked`` False: the default
  scan) takes each compressed file's uncompressed size from checksums.txt, as
  the engine does; codec counts, block histograms and the Compact split need
  the walk and are left empty.
* ``bytes_on_disk`` = sum of the sizes listed in checksums.txt (which leaves
  out checksums.txt, columns.txt, ...), so the folder's real size is given too.
* Table (system.columns): sum over active parts.
* Per column, the other system.parts_columns fields
  (src/Storages/System/StorageSystemPartsColumns.cpp): ``column_position``
  (1-based, columns.txt order), ``substreams`` and ``filenames`` (the file
  stem of each substream when checksums.txt lists ``<stem>.bin``, else ''),
  and per subcolumn the sizes of the checksums.txt entries of its own stream
  (:mod:`.subcolumns`): no shared-stream rule there, and 0 in Compact parts.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .blocks import BlockTable, engine_codec_name
from .marks import marks_flavour
from .part import Part, compact_block_owners
from .subcolumns import stream_file_stem

#: Block size histogram bin edges (bytes stored per block): powers of two from 32 B to 1 GiB.
HIST_EDGES = [0] + [1 << k for k in range(5, 31)]


@dataclass
class SubcolumnSize:
    """One subcolumn of one part column (system.parts_columns ``subcolumns.*``)."""

    name: str
    type: str
    serialization: str
    compressed_bytes: int = 0
    uncompressed_bytes: int = 0
    marks_bytes: int = 0

    @property
    def bytes_on_disk(self) -> int:
        return self.compressed_bytes + self.marks_bytes


@dataclass
class ColumnSize:
    """One column of one part."""

    name: str
    type: str
    compressed_bytes: int = 0
    uncompressed_bytes: int = 0
    marks_bytes: int = 0
    codecs: dict[str, int] = field(default_factory=dict)       # engine codec name -> blocks
    streams: list[dict] = field(default_factory=list)
    block_sizes: list[np.ndarray] = field(default_factory=list)  # stored sizes, for histograms
    #: Compact parts: the real split computed from marks and blocks (engine reports 0)
    computed: dict | None = None
    column_position: int = 0
    substreams: list[str] = field(default_factory=list)
    filenames: list[str] = field(default_factory=list)
    #: None when the type's subcolumns are not modelled (see subcolumns.py)
    subcolumns: list[SubcolumnSize] | None = field(default_factory=list)

    @property
    def bytes_on_disk(self) -> int:
        return self.compressed_bytes + self.marks_bytes


@dataclass
class PartSizes:
    """One part's figures, system.parts names."""

    rows: int
    marks: int
    bytes_on_disk: int
    data_compressed_bytes: int
    data_uncompressed_bytes: int
    marks_bytes: int
    primary_key_size: int
    files: int
    real_bytes: int
    secondary_indices_compressed_bytes: int = 0
    secondary_indices_uncompressed_bytes: int = 0
    secondary_indices_marks_bytes: int = 0
    columns: list[ColumnSize] = field(default_factory=list)


def _merge_counts(into: dict[str, int], add: dict[str, int]) -> None:
    for k, v in add.items():
        into[k] = into.get(k, 0) + v


def histogram(sizes: np.ndarray) -> list[int]:
    """Counts of block sizes per HIST_EDGES bin."""
    if sizes is None or not len(sizes):
        return [0] * (len(HIST_EDGES) - 1)
    counts, _ = np.histogram(sizes.astype(np.float64), bins=np.array(HIST_EDGES, dtype=np.float64))
    return [int(c) for c in counts]


def wide_column_sizes(part: Part) -> list[ColumnSize]:
    """Per-column sizes of a Wide part, engine rules."""
    out = [ColumnSize(c.name, c.type) for c in part.columns]
    for sf in part.streams:
        cs = out[sf.ref.column_index]
        info = {"stream": sf.ref.stream, "substream": sf.ref.substream, "file": sf.bin_name,
                "marks_file": sf.marks_name, "counted": sf.ref.counted,
                "compressed_bytes": sf.bin_size, "marks_bytes": sf.marks_size}
        listed = None if part.walked else part.listed_uncompressed(sf.bin_name)
        if sf.blocks is not None:
            info["uncompressed_bytes"] = sf.blocks.uncompressed_bytes
            info["blocks"] = len(sf.blocks)
            info["codecs"] = sf.blocks.codec_counts()
        elif listed is not None:
            info["uncompressed_bytes"] = listed
        cs.streams.append(info)
        if not sf.ref.counted or sf.bin_name is None:
            continue
        cs.compressed_bytes += sf.bin_size
        cs.marks_bytes += sf.marks_size
        if sf.blocks is not None:
            cs.uncompressed_bytes += sf.blocks.uncompressed_bytes
            _merge_counts(cs.codecs, sf.blocks.codec_counts())
            cs.block_sizes.append(sf.blocks.stored)
        elif listed is not None:
            cs.uncompressed_bytes += listed
    return out


def compact_split(part: Part) -> list[ColumnSize]:
    """Per-column sizes of a Compact part: engine figures 0, real split in ``computed``."""
    out = [ColumnSize(c.name, c.type) for c in part.columns]
    cd = part.compact
    owners = compact_block_owners(part)
    blocks: BlockTable | None = cd.blocks if cd else None
    if owners is None or blocks is None:
        return out
    stored = blocks.stored
    names = blocks.chain_names()
    n_marks = len(cd.marks) if cd.marks is not None else 0
    pairs = np.bincount(np.array(cd.pair_columns, dtype=np.int64), minlength=len(out))
    for ci, cs in enumerate(out):
        sel = owners == ci
        counts = np.bincount(blocks.chain_ids[sel], minlength=len(names)) if sel.any() else []
        codecs: dict[str, int] = {}
        for nm, n in zip(names, counts):
            if n:
                codecs[nm] = codecs.get(nm, 0) + int(n)
        cs.computed = {
            "compressed_bytes": int(stored[sel].sum()),
            "uncompressed_bytes": int(blocks.decompressed[sel].sum(dtype=np.uint64)),
            "blocks": int(sel.sum()),
            "codecs": codecs,
            "marks_bytes_uncompressed": int(n_marks * 16 * pairs[ci]),
            "substreams": [s for s, c in zip(cd.pair_streams, cd.pair_columns) if c == ci],
        }
        cs.block_sizes.append(stored[sel])
    return out


def fill_parts_columns_fields(part: Part, cols: list[ColumnSize]) -> None:
    """column_position, substreams, filenames and subcolumns of each column,
    as StorageSystemPartsColumns::processNextStorage computes them."""
    listed = part.checksums.files if part.checksums is not None else {}
    mark_ext = part.marks_extension or ""
    for pos, (cs, ser) in enumerate(zip(cols, part.serializations), start=1):
        cs.column_position = pos
        cs.substreams = list(ser.substreams)
        cs.filenames = [stream_file_stem(s, listed) or "" for s in ser.substreams]
        if ser.subcolumns is None:
            cs.subcolumns = None
            continue
        cs.subcolumns = []
        for sc in ser.subcolumns:
            sz = SubcolumnSize(sc.name, sc.type, sc.serialization)
            stem = stream_file_stem(sc.stream, listed)
            if stem is not None:
                e = listed[stem + ".bin"]
                sz.compressed_bytes = e.file_size
                sz.uncompressed_bytes = e.uncompressed_size or 0
                mk = listed.get(stem + mark_ext) if mark_ext else None
                if mk is not None:
                    sz.marks_bytes = mk.file_size
            cs.subcolumns.append(sz)


def secondary_index_sizes(part: Part) -> tuple[int, int, int]:
    """(compressed, uncompressed, marks) bytes of skip indices: ``skp_idx_*`` files
    (sizes from checksums.txt) or the entries of ``skp_idx.packed``."""
    comp = unc = marks = 0
    for e in part.skip_index_packed or []:
        if marks_flavour(e.name):
            marks += e.size
        else:
            comp += e.size
            unc += e.uncompressed_size or 0
    if part.checksums is None:
        return comp, unc, marks
    for name, e in part.checksums.files.items():
        if not name.startswith("skp_idx_"):
            continue
        if marks_flavour(name):
            marks += e.file_size
        else:
            comp += e.file_size
            unc += e.uncompressed_size if e.is_compressed else e.file_size
    return comp, unc, marks


def part_sizes(part: Part) -> PartSizes:
    """All figures of one part."""
    if part.part_type == "Compact":
        cols = compact_split(part)
        cd = part.compact
        data_c = cd.bin_size if cd else 0
        data_u = (cd.blocks.uncompressed_bytes if cd and cd.blocks is not None else
                  (part.listed_uncompressed(cd.bin_name) or 0) if cd and not part.walked else 0)
        marks_b = cd.marks_size if cd else 0
    else:
        cols = wide_column_sizes(part)
        data_c = sum(c.compressed_bytes for c in cols)
        data_u = sum(c.uncompressed_bytes for c in cols)
        marks_b = sum(c.marks_bytes for c in cols)
    fill_parts_columns_fields(part, cols)
    ck = part.checksums
    si = secondary_index_sizes(part)
    return PartSizes(
        rows=part.rows or 0, marks=part.marks_count or 0,
        bytes_on_disk=ck.total_size if ck else 0,
        data_compressed_bytes=data_c, data_uncompressed_bytes=data_u, marks_bytes=marks_b,
        primary_key_size=part.primary_index_size, files=len(ck.files) if ck else 0,
        real_bytes=part.real_size,
        secondary_indices_compressed_bytes=si[0], secondary_indices_uncompressed_bytes=si[1],
        secondary_indices_marks_bytes=si[2], columns=cols)


def chain_label(methods: tuple[int, ...]) -> str:
    return engine_codec_name(methods)

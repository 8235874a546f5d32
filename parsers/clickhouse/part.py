"""One MergeTree data part directory, read from its files.

A part directory is named ``<partition id>_<min block>_<max block>_<level>[_<mutation>]``
(src/Storages/MergeTree/MergeTreePartInfo.cpp) and holds ``checksums.txt``,
``columns.txt``, ``count.txt`` and, for a **Wide** part, one ``<stream>.bin`` +
marks file per substream; for a **Compact** part one ``data.bin`` + ``data.<mrk>``
(MergeTreeDataPartWide.cpp / MergeTreeDataPartCompact.cpp).  Projections
are sub-directories ``<name>.proj`` laid out as parts of their own.

:func:`read_part` reads only metadata, marks and block headers; problems are
collected as :class:`Problem` (file, message, offset) and never raised.  With
``walk=False`` it reads no block header either: the part's figures are then the
ones the engine itself reports, from checksums.txt (``uncompressed_size`` of each
compressed file: MergeTreeDataPartWide::getColumnSizeImpl), and no codec
count, block histogram or block unit is known (``dbxray scan --full`` reads them).
"""
from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field

import numpy as np

from ..fileio import FileReadError, ReadOnlyFile
from .blocks import BlockError, BlockTable, read_stream, verify_block_checksums, walk_blocks
from .checksums import Checksums, ChecksumsError, parse_checksums
from .columns import (Column, ColumnsError, SerializationInfo, parse_columns_substreams, parse_columns_txt,
                      parse_serialization_json)
from .packed import PackedEntry, PackedError, read_packed_directory
from .marks import Marks, MarksError, check_marks, marks_flavour, read_marks
from .streams import StreamRef, map_streams
from .statistics import ColumnStatisticsFile, StatisticsError, column_of_entry, read_column_statistics
from .streams import unescape_for_file_name
from .subcolumns import ColumnSerialization, StringSerialization, enumerate_serialization

# MergeTreePartInfo: <partition_id>_<min_block>_<max_block>_<level>[_<mutation>]
PART_NAME_RE = re.compile(r"^(?P<partition>.+?)_(?P<min>\d+)_(?P<max>\d+)_(?P<level>\d+)(?:_(?P<mutation>\d+))?$")

#: Files of a part that checksums.txt does not list (IMergeTreeDataPart::getFileNamesWithoutChecksums
#: and the metadata version / substreams files; fixtures/clickhouse/FORMAT_NOTES.md section 6).
UNLISTED_FILES = {"checksums.txt", "columns.txt", "columns_substreams.txt", "default_compression_codec.txt",
                  "metadata_version.txt", "txn_version.txt", "delete-on-destroy.txt", "frozen.txt"}

SMALL_FILE_LIMIT = 64 << 20


@dataclass(frozen=True)
class PartName:
    """The block range a part name encodes (MergeTreePartInfo)."""

    partition_id: str
    min_block: int
    max_block: int
    level: int
    mutation: int = 0

    def contains(self, other: "PartName") -> bool:
        """MergeTreePartInfo::contains: same partition, wider block range, level and mutation not lower."""
        return (self.partition_id == other.partition_id and self.min_block <= other.min_block
                and self.max_block >= other.max_block and self.level >= other.level
                and self.mutation >= other.mutation)


def parse_part_name(name: str) -> PartName | None:
    """Reads a part directory name, None when it is not one."""
    m = PART_NAME_RE.match(name)
    if not m:
        return None
    return PartName(m.group("partition"), int(m.group("min")), int(m.group("max")), int(m.group("level")),
                    int(m.group("mutation") or 0))


@dataclass
class Problem:
    """Something wrong in a part: the file (relative to the part), message and offset."""

    file: str | None
    message: str
    offset: int | None = None


@dataclass
class StreamFiles:
    """One stream of a Wide part: its files, block table and marks."""

    ref: StreamRef
    bin_name: str | None
    marks_name: str | None
    bin_size: int = 0
    marks_size: int = 0
    blocks: BlockTable | None = None
    marks: Marks | None = None


@dataclass
class CompactData:
    """The single data file of a Compact part, its marks and the column of each mark pair."""

    bin_name: str
    marks_name: str | None
    bin_size: int = 0
    marks_size: int = 0
    blocks: BlockTable | None = None
    marks: Marks | None = None
    pair_columns: list[int] = field(default_factory=list)    # column index of each (offset, offset) pair
    pair_streams: list[str] = field(default_factory=list)


@dataclass
class Part:
    """A part directory as read from disk."""

    name: str
    abspath: str
    relpath: str
    info: PartName | None
    state: str = "active"                  # active | outdated | detached | projection
    part_type: str = "Wide"
    rows: int | None = None
    checksums: Checksums | None = None
    columns: list[Column] = field(default_factory=list)
    substreams: dict[str, list[str]] | None = None
    serialization: SerializationInfo | None = None
    default_codec: str | None = None
    files: dict[str, int] = field(default_factory=dict)       # top-level file -> size
    dirs: list[str] = field(default_factory=list)
    streams: list[StreamFiles] = field(default_factory=list)
    compact: CompactData | None = None
    marks_extension: str | None = None
    marks_count: int | None = None
    primary_index_name: str | None = None
    primary_index_size: int = 0
    projections: list["Part"] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    unclaimed_bins: list[str] = field(default_factory=list)
    skip_index_packed: list[PackedEntry] | None = None
    statistics_packed: list[PackedEntry] | None = None
    metadata_version: str | None = None
    #: decoded column statistics: column -> (statistics, stored bytes)
    column_statistics: dict[str, tuple[ColumnStatisticsFile, int]] = field(default_factory=dict)
    #: per column (columns.txt order): substreams and subcolumns as the engine enumerates them
    serializations: list[ColumnSerialization] = field(default_factory=list)
    #: False: the block headers of the part's compressed files were not read (``walk=False``)
    walked: bool = True

    def listed_uncompressed(self, fname: str | None) -> int | None:
        """checksums.txt's decompressed size of a compressed file of the part (the figure
        the engine reports), None when checksums.txt does not list it as compressed."""
        e = self.checksums.files.get(fname) if self.checksums is not None and fname else None
        return e.uncompressed_size if e is not None and e.is_compressed else None

    @property
    def partition_id(self) -> str | None:
        return self.info.partition_id if self.info else None

    def problem(self, file: str | None, message: str, offset: int | None = None) -> None:
        self.problems.append(Problem(file, message, offset))

    @property
    def real_size(self) -> int:
        """Sum of the sizes of every file in the folder (and projection folders)."""
        return sum(self.files.values()) + sum(p.real_size for p in self.projections)


def _read_small(path: str, limit: int = SMALL_FILE_LIMIT) -> bytes:
    """A whole small file, opened O_RDONLY and read with plain reads (no map)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise FileReadError(path, f"cannot open: {e.strerror}") from None
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise FileReadError(path, f"{size} bytes, over the {limit}-byte limit for a metadata file")
        chunks = []
        got = 0
        while got < size:
            b = os.read(fd, size - got)
            if not b:
                raise FileReadError(path, f"truncated: file ends at {got}, {size} bytes expected", got)
            chunks.append(b)
            got += len(b)
        return b"".join(chunks)
    finally:
        os.close(fd)


def walk_file_blocks(path: str, verify: bool = False) -> tuple[BlockTable, int]:
    """Walks the blocks of one compressed file: one pread per 25-byte header
    (payloads untouched); with ``verify``, through a map, hashing each block."""
    if not verify:
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError as e:
            raise FileReadError(path, f"cannot open: {e.strerror}") from None
        try:
            size = os.fstat(fd).st_size
            return walk_blocks(None, size, fd=fd), size
        finally:
            os.close(fd)
    with ReadOnlyFile(path) as f:
        size = f.size
        if size == 0:
            return walk_blocks(b"", 0), 0
        mm = f.mmap()
        buf = mm if mm is not None else f.read_exact(0, size)
        table = walk_blocks(buf, size)
        verify_block_checksums(buf, table)
        return table, size


def _block_problems(part: "Part", fname: str, table: BlockTable) -> None:
    for msg, off in table.errors:
        part.problem(fname, msg, off)
    if table.checksum_ok is not None and not table.checksum_ok.all():
        bad = np.nonzero(~table.checksum_ok)[0]
        part.problem(fname, f"{len(bad)} block(s) fail the CityHash128 checksum, first at block {int(bad[0])}",
                     int(table.offsets[bad[0]]))


def read_part(abspath: str, relpath: str, name: str | None = None, state: str = "active",
              index_granularity: int = 8192, read_projections: bool = True, verify: bool = False,
              walk: bool = True) -> Part:
    """Reads one part directory: metadata, marks and block headers (``walk``; without
    it no block header and no checksum: ``verify`` is then ignored)."""
    name = name or os.path.basename(abspath.rstrip("/"))
    pname = name[:-5] if name.endswith(".proj") else name
    part = Part(pname, abspath, relpath, parse_part_name(pname), state)
    part.walked = walk
    verify = verify and walk
    try:
        with os.scandir(abspath) as it:
            entries = sorted(it, key=lambda d: d.name)
    except OSError as e:
        part.problem(None, f"cannot list part directory: {e.strerror}")
        return part
    for d in entries:
        e = d.name
        try:
            st = d.stat()                  # follows symlinks, as os.stat
        except OSError as ex:
            part.problem(e, f"cannot stat: {'broken symlink' if d.is_symlink() else ex.strerror}")
            continue
        if stat.S_ISDIR(st.st_mode):
            part.dirs.append(e)
        else:
            part.files[e] = st.st_size

    def load(fname: str, required: bool = True) -> bytes | None:
        if fname not in part.files:
            if required:
                part.problem(fname, "missing from the part directory")
            return None
        try:
            return _read_small(os.path.join(abspath, fname))
        except (FileReadError, OSError) as ex:
            part.problem(fname, str(ex).split(": ", 1)[-1])
            return None

    # -- metadata ------------------------------------------------------------
    data = load("checksums.txt")
    if data is not None:
        try:
            part.checksums = parse_checksums(data)
        except ChecksumsError as ex:
            part.problem("checksums.txt", str(ex), ex.offset)
    data = load("columns.txt")
    if data is not None:
        try:
            part.columns = parse_columns_txt(data)
        except ColumnsError as ex:
            part.problem("columns.txt", str(ex), ex.offset)
    data = load("count.txt")
    if data is not None:
        txt = data.decode("ascii", "replace").strip()
        if txt.isdigit():
            part.rows = int(txt)
        else:
            part.problem("count.txt", f"not a row count: {txt[:40]!r}", 0)
    data = load("columns_substreams.txt", required=False)
    if data is not None:
        try:
            part.substreams = parse_columns_substreams(data)
        except ColumnsError as ex:
            part.problem("columns_substreams.txt", str(ex), ex.offset)
    data = load("serialization.json", required=False)
    if data is not None:
        try:
            part.serialization = parse_serialization_json(data)
        except ColumnsError as ex:
            part.problem("serialization.json", str(ex), ex.offset)
    data = load("default_compression_codec.txt", required=False)
    if data is not None:
        part.default_codec = data.decode("utf-8", "replace").strip()
    for pk in ("primary.cidx", "primary.idx"):
        if pk in part.files:
            part.primary_index_name = pk
            part.primary_index_size = part.files[pk]
            break

    data = load("statistics.packed", required=False)
    if data is not None:
        try:
            part.statistics_packed = read_packed_directory(data)[1]
        except PackedError as ex:
            part.problem("statistics.packed", str(ex), ex.offset)
        else:
            for e in part.statistics_packed:
                _decode_statistics(part, "statistics.packed", e.name, data[e.offset:e.offset + e.size], e.offset)
    for fname in sorted(part.files):
        if column_of_entry(fname) is not None:          # statistics written as loose files
            data = load(fname, required=False)
            if data is not None:
                _decode_statistics(part, fname, fname, data, 0)
    data = load("metadata_version.txt", required=False)
    if data is not None:
        part.metadata_version = data.decode("ascii", "replace").strip()
    data = load("skp_idx.packed", required=False)
    if data is not None:
        try:
            part.skip_index_packed = read_packed_directory(data)[1]
        except PackedError as ex:
            part.problem("skp_idx.packed", str(ex), ex.offset)

    # checksums.txt vs the folder
    if part.checksums is not None:
        for fname, ent in part.checksums.files.items():
            if fname.endswith(".proj"):
                if fname not in part.dirs:
                    part.problem("checksums.txt", f"lists projection {fname}, which is not in the folder")
                continue
            if fname not in part.files:
                part.problem("checksums.txt", f"lists {fname} ({ent.file_size} bytes), which is missing")
            elif part.files[fname] != ent.file_size:
                part.problem(fname, f"size {part.files[fname]} differs from checksums.txt ({ent.file_size})")

    if verify and part.checksums is not None:
        _verify_file_hashes(part)

    _enumerate_serializations(part)

    # -- data ----------------------------------------------------------------
    mark_files = [f for f in part.files if marks_flavour(f)]
    if "data.bin" in part.files or any(f.startswith("data.") and marks_flavour(f) for f in mark_files):
        part.part_type = "Compact"
        _read_compact(part, mark_files, verify)
    else:
        part.part_type = "Wide"
        _read_wide(part, mark_files, index_granularity, verify)

    # -- projections ---------------------------------------------------------
    if read_projections:
        for d in part.dirs:
            if d.endswith(".proj"):
                proj = read_part(os.path.join(abspath, d), f"{relpath}/{d}", d, "projection",
                                 index_granularity, read_projections=False, verify=verify, walk=walk)
                part.projections.append(proj)
    return part


def _verify_file_hashes(part: Part) -> None:
    """Checks the checksums.txt hash of every listed file except ``.bin`` (whose
    every byte is covered by its block checksums): CityHash128WithSeed chained
    over 2048-byte pieces (HashingWriteBuffer; fixtures/clickhouse/FORMAT_NOTES.md section 6)."""
    from ..codecs.ch_cityhash import chained_file_hash
    for fname, ent in part.checksums.files.items():
        if fname.endswith((".bin", ".proj")) or fname not in part.files or part.files[fname] != ent.file_size:
            continue
        try:
            data = _read_small(os.path.join(part.abspath, fname))
        except (FileReadError, OSError):
            continue
        if chained_file_hash(data) != ent.file_hash:
            part.problem(fname, "file hash does not match checksums.txt")


def _decode_statistics(part: Part, fname: str, entry: str, data: bytes, base: int) -> None:
    """One ``statistics_<column>.stats`` stream: decompressed, then decoded
    (:mod:`.statistics`); problems are named with the entry and its offset."""
    col = column_of_entry(entry)
    if col is None:
        part.problem(fname, f"entry {entry} is not a statistics_<column>.stats file", base)
        return
    try:
        raw = read_stream(data, 64 << 20)
    except BlockError as ex:
        part.problem(fname, f"entry {entry}: {ex}", base + (ex.offset or 0))
        return
    try:
        part.column_statistics[unescape_for_file_name(col)] = (read_column_statistics(raw), len(data))
    except StatisticsError as ex:
        part.problem(fname, f"entry {entry}, byte {ex.offset} of its decompressed stream: {ex}", base)


def string_serialization(part: Part) -> StringSerialization:
    """The part's String serialization: ``with_size_stream`` when serialization.json
    says string version 1 (SerializationInfo.cpp), else ``single_stream``
    (older parts, or no serialization.json)."""
    info = part.serialization
    if info is None or not info.string_with_size_stream:
        return StringSerialization()
    return StringSerialization(True, info.propagate_to_nested)


def _enumerate_serializations(part: Part) -> None:
    """Substreams and subcolumns of every column; checked against
    columns_substreams.txt, which the engine writes from the same enumeration."""
    strings = string_serialization(part)
    kinds = _column_kinds(part)
    for col in part.columns:
        try:
            cs = enumerate_serialization(col.name, col.type, kinds.get(col.name, "Default"), strings)
        except ColumnsError as ex:
            part.problem("columns.txt", f"column {col.name}: {ex}")
            cs = ColumnSerialization(col.name, col.type, kinds.get(col.name, "Default"), [], None)
        part.serializations.append(cs)
        listed = (part.substreams or {}).get(col.name)
        if cs.dynamic and listed is not None:
            # dynamic types: StorageSystemPartsColumns lists columns_substreams.txt's streams
            cs.substreams = list(listed)
            continue
        if listed is not None:
            # Compact parts list a LowCardinality dictionary's prefix as a substream of
            # its own ('<c>.dict_prefix', marked in data.cmrk4; fixtures/clickhouse/FORMAT_NOTES.md section 3),
            # which enumerateStreams and system.parts_columns do not show
            listed = [s for s in listed if not (s.endswith(".dict_prefix") and s[:-7] in cs.substreams)]
        if listed is not None and cs.subcolumns is not None and listed != cs.substreams:
            part.problem("columns_substreams.txt", f"column {col.name}: lists substreams {listed}, its type and "
                                                   f"serialization give {cs.substreams}")


def _column_kinds(part: Part) -> dict[str, str]:
    return part.serialization.kinds if part.serialization else {}


def _read_wide(part: Part, mark_files: list[str], index_granularity: int, verify: bool = False) -> None:
    exts = sorted({marks_flavour(f).extension for f in mark_files})
    if len(exts) > 1:
        part.problem(None, f"several marks flavours in one part: {', '.join(exts)}")
    ext = exts[0] if exts else None
    part.marks_extension = ext
    present = {f[:-4] for f in part.files if f.endswith(".bin")}
    refs, problems = map_streams(part.columns, part.substreams, present, _column_kinds(part))
    for msg in problems:
        part.problem("columns.txt", msg)
    claimed = set()
    for ref in refs:
        sf = StreamFiles(ref, None, None)
        if ref.file_stem is None:
            part.problem(f"{ref.stream}.bin", f"stream {ref.stream} of column {ref.column} has no .bin file")
            part.streams.append(sf)
            continue
        if ref.file_stem in claimed:
            part.streams.append(_copy_stream(part, ref))
            continue
        claimed.add(ref.file_stem)
        sf.bin_name = ref.file_stem + ".bin"
        sf.bin_size = part.files.get(sf.bin_name, 0)
        mname = ref.file_stem + ext if ext else None
        if mname and mname in part.files:
            sf.marks_name = mname
            sf.marks_size = part.files[mname]
            sf.marks = _load_marks(part, mname, 1, verify)
        elif mname:
            part.problem(mname, f"marks file of stream {ref.stream} is missing")
        if part.walked:
            _walk_stream(part, sf, verify)
        if sf.marks is not None:
            for msg, off in check_marks(sf.marks, part.rows, index_granularity,
                                        sf.blocks.offsets if sf.blocks is not None else None,
                                        sf.bin_size if sf.blocks is not None else None):
                part.problem(mname, msg, off)
        part.streams.append(sf)
    part.unclaimed_bins = sorted(f for f in present if f not in claimed)
    for stem in part.unclaimed_bins:
        if not stem.startswith("skp_idx_"):
            part.problem(stem + ".bin", "data file belongs to no column of columns.txt")
    counts = {len(s.marks) for s in part.streams if s.marks is not None}
    if counts:
        part.marks_count = max(counts)
        if len(counts) > 1:
            part.problem(None, f"streams disagree on the number of marks: {sorted(counts)}")


def _walk_stream(part: Part, sf: StreamFiles, verify: bool) -> None:
    """The block headers of one Wide stream's ``.bin`` file (problems to the part)."""
    try:
        sf.blocks, _ = walk_file_blocks(os.path.join(part.abspath, sf.bin_name), verify)
    except (FileReadError, OSError) as ex:
        part.problem(sf.bin_name, str(ex).split(": ", 1)[-1])
    else:
        _block_problems(part, sf.bin_name, sf.blocks)


def _copy_stream(part: Part, ref: StreamRef) -> StreamFiles:
    for s in part.streams:
        if s.ref.file_stem == ref.file_stem and s.bin_name:
            return StreamFiles(ref, s.bin_name, s.marks_name, s.bin_size, s.marks_size, s.blocks, s.marks)
    return StreamFiles(ref, None, None)


def _load_marks(part: Part, mname: str, pairs: int, verify: bool = False) -> Marks | None:
    try:
        data = _read_small(os.path.join(part.abspath, mname))
    except (FileReadError, OSError) as ex:
        part.problem(mname, str(ex).split(": ", 1)[-1])
        return None
    try:
        return read_marks(data, marks_flavour(mname), pairs, verify=verify)
    except MarksError as ex:
        part.problem(mname, str(ex), ex.offset)
        return None


def _read_compact(part: Part, mark_files: list[str], verify: bool = False) -> None:
    data_marks = [f for f in mark_files if f.startswith("data.")]
    mname = data_marks[0] if data_marks else None
    cd = CompactData("data.bin", mname)
    part.compact = cd
    part.marks_extension = marks_flavour(mname).extension if mname else None
    if mname is None:
        part.problem("data.mrk3", "the Compact part has no marks file")
    else:
        cd.marks_size = part.files[mname]
        flav = marks_flavour(mname)
        # mrk4/cmrk4: one pair per substream (columns_substreams.txt order); mrk3: one per column
        if flav.extension.endswith("4"):
            if part.substreams is None:
                part.problem("columns_substreams.txt", f"{mname} has a mark per substream, but the substream "
                                                       "list is missing")
            else:
                for ci, col in enumerate(part.columns):
                    for s in part.substreams.get(col.name, []):
                        cd.pair_columns.append(ci)
                        cd.pair_streams.append(s)
        else:
            cd.pair_columns = list(range(len(part.columns)))
            cd.pair_streams = [c.name for c in part.columns]
        if cd.pair_columns:
            cd.marks = _load_marks(part, mname, len(cd.pair_columns), verify)
        elif part.substreams is not None or not flav.extension.endswith("4"):
            part.problem(mname, "no columns to read marks for")
    if "data.bin" not in part.files:
        part.problem("data.bin", "missing from the Compact part")
    else:
        cd.bin_size = part.files["data.bin"]
        if part.walked:
            _walk_compact(part, verify)
    if cd.marks is not None:
        part.marks_count = len(cd.marks)
        for msg, off in check_marks(cd.marks, part.rows, None,
                                    cd.blocks.offsets if cd.blocks is not None else None,
                                    cd.bin_size if cd.blocks is not None else None):
            part.problem(mname, msg, off)


def _walk_compact(part: Part, verify: bool) -> None:
    """The block headers of a Compact part's ``data.bin`` (problems to the part)."""
    cd = part.compact
    try:
        cd.blocks, _ = walk_file_blocks(os.path.join(part.abspath, "data.bin"), verify)
    except (FileReadError, OSError) as ex:
        part.problem("data.bin", str(ex).split(": ", 1)[-1])
    else:
        _block_problems(part, "data.bin", cd.blocks)


def read_primary_index(part: Part) -> bytes | None:
    """The primary index bytes (decompressed for primary.cidx), or None."""
    if not part.primary_index_name:
        return None
    path = os.path.join(part.abspath, part.primary_index_name)
    try:
        data = _read_small(path, 256 << 20)
        return read_stream(data, 1 << 30) if part.primary_index_name.endswith(".cidx") else data
    except (FileReadError, OSError, BlockError) as ex:
        part.problem(part.primary_index_name, str(ex).split(": ", 1)[-1], getattr(ex, "offset", None))
        return None


def compact_block_owners(part: Part) -> np.ndarray | None:
    """Column index owning each block of a Compact part's data.bin.

    A block belongs to the column whose mark starts last at or before it; a
    column whose mark shares its start with the next column's wrote no block
    in that granule (compress_per_column_in_compact_parts=1 flushes a block
    per column per granule: MergeTreeDataPartWriterCompact.cpp).
    """
    cd = part.compact
    if cd is None or cd.blocks is None or cd.marks is None or not len(cd.blocks):
        return None
    ncols = len(part.columns)
    first_pair: dict[int, int] = {}
    for pi, ci in enumerate(cd.pair_columns):
        first_pair.setdefault(ci, pi)
    cols = sorted(first_pair)
    if not cols or cd.marks.offsets.shape[0] == 0:
        return None           # no marks (an emptied or truncated marks file): no owner can be given
    starts = cd.marks.offsets[:, [first_pair[c] for c in cols], 0]          # (marks, cols)
    seq = np.arange(starts.size, dtype=np.int64)
    flat = starts.reshape(-1)
    col_of = np.tile(np.array(cols, dtype=np.int32), starts.shape[0])
    order = np.lexsort((seq, flat))
    sorted_starts = flat[order]
    idx = np.searchsorted(sorted_starts, cd.blocks.offsets, side="right") - 1
    owners = np.where(idx >= 0, col_of[order][np.clip(idx, 0, None)], -1).astype(np.int32)
    if ncols == 0:
        return None
    return owners

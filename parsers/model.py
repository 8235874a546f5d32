"""The shared model every engine parser fills.

A :class:`Dataset` is what one scan found under a root path: the files, the
engines present, the tables.  Each :class:`FileEntry` carries its on-disk facts
(apparent and allocated bytes, holes) and, once an engine parser has read it,
the units inside it (InnoDB pages, ClickHouse compressed blocks, TokuDB nodes)
as one numpy structured array -- never one Python object per unit -- so that
ten million pages fit in well under 500 MB (``UNIT_DTYPE.itemsize`` bytes each).

Nothing here imports Qt, the compressor layer or the app.
"""
from __future__ import annotations

import functools
import pickle
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .packing import PackedSections
from .ranges import ranges_total

#: Roles a file can play (each engine names those it uses: ``Engine.roles``).
#: Later issues may add roles, never rename these.
ROLES = (
    "tablespace",          # InnoDB per-table / general tablespace
    "system_tablespace",   # ibdata*, mysql.ibd
    "redo_log",            # ib_logfile*, #innodb_redo/#ib_redo*, *.tokulog*
    "undo",                # undo_001, *.ibu, tokudb.rollback
    "doublewrite",         # MySQL 8.0.20+ #ib_16384_0.dblwr
    "part_column_data",    # ClickHouse *.bin
    "marks",               # ClickHouse *.mrk*, *.cmrk*
    "primary_index",       # ClickHouse primary.idx / primary.cidx
    "part_metadata",       # ClickHouse columns.txt, checksums.txt, count.txt, ...
    "table_metadata",      # ClickHouse metadata/*.sql
    "dictionary",          # TokuDB *.tokudb, tokudb.directory
    "engine_environment",  # tokudb.environment, lock files
    "table_data",          # a table's rows in an engine's own data file (CSV .CSV)
    "sst",                 # RocksDB / MyRocks sorted string table (NNNNNN.sst)
    "manifest",            # RocksDB MANIFEST-NNNNNN (version edits: live files per level)
    "options",             # RocksDB OPTIONS-NNNNNN
    "wal",                 # RocksDB write-ahead log (NNNNNN.log)
    "info_log",            # RocksDB LOG, LOG.old.*
    "table_index",         # a table's indexes in an engine's own index file (MyISAM .MYI, Aria .MAI)
    "table_definition",    # MariaDB/MySQL .frm
    "partition_definition",  # MariaDB/MySQL .par
    "database_options",    # MariaDB/MySQL db.opt
    "ddl_log",             # MariaDB ddl_recovery.log
    "leftover",            # MariaDB/MySQL #sql* files left by an interrupted ALTER TABLE
    "other",
)

#: One record per unit (page, block, node) inside a file: 36 bytes.
UNIT_DTYPE = np.dtype([
    ("offset", "<u8"),    # byte offset of the unit in the file
    ("stored", "<u4"),    # bytes the unit takes in the file (payload actually stored)
    ("logical", "<u4"),   # bytes of the unit once decoded (page size, uncompressed block)
    ("kind", "<u2"),      # engine kind code (page type, codec, node kind); names in FileEntry.kind_names
    ("flags", "<u2"),     # UNIT_* bit flags below
    ("owner", "<i4"),     # owner id (index, column, dictionary); names in FileEntry.owner_names; -1 none
    ("fill", "<f4"),      # used fraction of the unit 0..1, NaN when unknown
    ("lsn", "<u8"),       # log sequence number where known, else 0
])

UNIT_COMPRESSED = 0x0001     # unit is stored compressed
UNIT_BAD_CHECKSUM = 0x0002   # checksum does not match
UNIT_FREE = 0x0004           # unit is free / not allocated to any owner
UNIT_HOLE = 0x0008           # unit lies (partly) in a hole
UNIT_ENCRYPTED = 0x0010      # encrypted, not decoded
UNIT_CORRUPT = 0x0020        # could not be parsed
UNIT_LEAF = 0x0040           # leaf (B-tree level 0, TokuDB height 0)
UNIT_HOLE_MISSING = 0x0080   # the engine should have punched a hole here but the bytes are allocated


def empty_units(n: int = 0) -> np.ndarray:
    """A zeroed unit array of n records (owner -1, fill NaN)."""
    units = np.zeros(n, dtype=UNIT_DTYPE)
    units["owner"] = -1
    units["fill"] = np.nan
    return units


@dataclass
class UnitFacts:
    """Per-unit facts beyond :data:`UNIT_DTYPE` that views draw, one array per fact,
    aligned with ``FileEntry.units``; None where the engine does not know it."""

    owner_id: np.ndarray | None = None             # uint64: the owner's own id (InnoDB PAGE_INDEX_ID),
                                                   # where the int32 ``owner`` code cannot hold it
    level: np.ndarray | None = None                # tree level / height (0 = leaf; 0xFFFF unknown)
    records: np.ndarray | None = None              # records / entries in the unit
    payload_bytes: np.ndarray | None = None        # compressed payload inside the unit (0: not compressed)
    hole_bytes: np.ndarray | None = None           # bytes of the unit in a hole of the file
    expected_hole_bytes: np.ndarray | None = None  # bytes the engine should have left unallocated
    key_version: np.ndarray | None = None          # uint32: encryption key version of the unit (0: not encrypted)

    def array(self, name: str, n: int) -> np.ndarray | None:
        """Fact ``name`` when it is known for all ``n`` units, else None."""
        arr = getattr(self, name)
        return arr if arr is not None and len(arr) == n else None


@dataclass(frozen=True)
class UnitGeometry:
    """How an engine's units tile a file, for the unit map: units of ``unit_bytes``
    (0: of varying size, laid out in file order), ``units_per_row`` to a row, and
    the words for them ("page", "extent")."""

    unit_bytes: int                  # physical size of a unit (InnoDB: the physical page size), 0 if it varies
    logical_unit_bytes: int          # decoded size of a unit (InnoDB: the logical page size), 0 if it varies
    units_per_row: int               # InnoDB: pages per extent (FSP_EXTENT_SIZE)
    unit_name: str = "unit"
    row_name: str = "row"
    #: kind names of the tree units (B-tree pages) that owner and level facts describe;
    #: None: every unit is part of a tree node
    tree_kind_names: tuple[str, ...] | None = None
    #: the map's colour modes that mean something for these units, with their labels
    #: (None: all of them, labelled for pages)
    modes: tuple[tuple[str, str], ...] | None = None
    #: colour modes offered besides those (InnoDB files with MariaDB crypt data: "encryption")
    extra_modes: tuple[tuple[str, str], ...] = ()
    #: the owner codes are the engine's own ids (InnoDB index ids, MyRocks index numbers), shown
    #: beside the owners' names; False: codes of the parser's own (ClickHouse columns)
    owner_ids: bool = True


class _NoNames(dict):
    """The shared empty ``kind_names`` / ``owner_names`` of a FileEntry no engine named:
    read-only (an engine assigns its own dict)."""

    def _refuse(self, *args, **kwargs):
        raise TypeError("a FileEntry's default names are shared: assign a dict of your own")

    __setitem__ = __delitem__ = update = setdefault = pop = popitem = clear = __ior__ = _refuse

    def __reduce__(self):
        return (_no_names, ())


def _no_names() -> "_NoNames":
    return NO_NAMES


NO_NAMES = _NoNames()


def _pair_lists(pairs: list[tuple[int, int]]) -> list[list[int]]:
    """(offset, length) pairs as the JSON's ``[[offset, length], ...]``."""
    return [[int(o), int(n)] for o, n in pairs]


@dataclass(slots=True)
class FileEntry:
    """One file under the root, as found on disk and read by its engine parser."""

    path: str                      # relative to the dataset root, posix separators
    abspath: str
    engine: str | None = None
    role: str = "other"
    apparent_bytes: int = 0
    allocated_bytes: int = 0
    holes: list[tuple[int, int]] = field(default_factory=list)   # (offset, length): no data stored
    unwritten: list[tuple[int, int]] = field(default_factory=list)  # subset of holes: allocated, never written
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    database: str | None = None
    table: str | None = None
    units: np.ndarray | None = None          # UNIT_DTYPE array, or None when not read
    #: (until an engine sets them, every entry shares one empty, read-only dict: 100,000
    #: files would otherwise hold 200,000 empty dicts; assign a dict of your own to fill)
    kind_names: dict[int, str] = field(default_factory=lambda: NO_NAMES)
    owner_names: dict[int, str] = field(default_factory=lambda: NO_NAMES)
    #: engine sections of the JSON output ("innodb", "tokudb", ...): typed sections
    #: (parsers/section.py: dicts whose declared keys are attributes) or plain JSON objects
    sections: dict[str, Any] = field(default_factory=dict)
    #: per-unit facts the views draw (typed; None when the engine gives none)
    unit_facts: UnitFacts | None = None
    #: the engine's typed per-file facts for its own view (a dataclass of the engine's; None in saved scans)
    facts: Any = None
    #: the engine parser's own objects (page map, block table...): parser-internal, not serialised
    detail: dict[str, Any] = field(default_factory=dict)
    fs_block: int = 4096
    is_symlink: bool = False
    #: the filesystem's facts (type, block sizes, allocation split: parsers/fsfacts.py); None when not read
    fs: Any = None
    #: (size, mtime_ns, st_dev, st_ino) when its facts were read: the end of the scan compares them
    #: (scan.py ``recheck``); a later open of the same file takes its holes (ReadOnlyFile.adopt_holes)
    seen: tuple[int, int, int, int] | None = field(default=None, repr=False, compare=False)
    #: True while its allocation and holes are left to its engine's workers (``Engine.reads_facts``):
    #: only stat's size and allocated bytes are known
    facts_pending: bool = field(default=False, repr=False, compare=False)
    #: the packed blob of the values packed by ``pack`` (their slots then hold PACKED)
    packed: Any = field(default=None, repr=False, compare=False)

    @property
    def hole_bytes(self) -> int:
        """Bytes of ``holes``: unallocated holes and unwritten extents (inside the size)."""
        return ranges_total(self.holes)

    @property
    def unwritten_bytes(self) -> int:
        """The allocated part of ``holes``: fallocated, never written (also counted by allocated_bytes).
        Without FIEMAP (tmpfs) the filesystem facts' estimate."""
        if self.unwritten:
            return ranges_total(self.unwritten)
        if self.fs is not None and self.fs.extent_source == "seek_hole":
            return min(int(self.fs.unwritten), self.hole_bytes)
        return 0

    @property
    def past_eof_bytes(self) -> int:
        """Allocated beyond the size (XFS speculative preallocation, fallocate KEEP_SIZE)."""
        return int(self.fs.past_eof) if self.fs is not None else 0

    @property
    def lasting_allocated_bytes(self) -> int:
        """Allocated bytes without XFS's speculative preallocation past EOF, which XFS
        trims by itself (when the file is closed, or idle for a few minutes): what a
        what-if may count as usage."""
        if self.fs is not None and self.fs.type == "xfs":
            return max(0, int(self.allocated_bytes) - int(self.fs.past_eof))
        return int(self.allocated_bytes)

    def add_error(self, message: str, offset: int | None = None) -> None:
        """Record an error naming this file (and the offset when known)."""
        where = self.path if offset is None else f"{self.path} @ offset {offset}"
        self.errors.append(f"{where}: {message}")

    def to_json(self, pairs: Callable[[list[tuple[int, int]]], Any] | None = None) -> dict[str, Any]:
        """This file's object in the scan's JSON.  ``pairs`` makes ``holes`` and
        ``unwritten`` of their (offset, length) lists (default: ``[[offset, length], ...]``;
        the streamed writer, parsers/jsonout.py, passes its own, written straight to text)."""
        pair_list = pairs or _pair_lists
        out: dict[str, Any] = {
            "path": self.path,
            "engine": self.engine,
            "role": self.role,
            "apparent_bytes": int(self.apparent_bytes),
            "allocated_bytes": int(self.allocated_bytes),
            "holes": pair_list(self.holes),
            "errors": list(self.errors),
        }
        if self.unwritten:
            out["unwritten"] = pair_list(self.unwritten)
        if self.fs is not None:
            out["fs"] = self.fs.to_json()
        if self.warnings:
            out["warnings"] = list(self.warnings)
        if self.database is not None:
            out["database"] = self.database
        if self.table is not None:
            out["table"] = self.table
        for name, section in self.sections_view().items():
            out[name] = section
        return out

    def pack_sections(self, packer) -> None:
        """Keep this file's sections packed by ``packer`` (parsers/packing.py: tens to a
        few hundred bytes instead of a few KB of objects, microseconds) until something
        reads ``sections``, which opens them again.  A scan of more than
        ``ScanContext.pack_sections_over`` files does this to each."""
        self.pack(packer, units=False)

    def pack(self, packer, units: bool = True) -> None:
        """Keep this file's sections and, with ``units``, its unit array (when at most
        :data:`PACK_UNITS_MAX` bytes: a big file's are few and read often), unit facts and
        owner names packed by ``packer``, all in one blob (``packed``); reading any of them
        opens them (packing.py says for how long).  Values that do not pickle are kept as
        they are.  The window's scan of more than ``ScanContext.pack_sections_over`` files
        does this to each file, the command line's to the sections."""
        if _PACKED_SLOT.__get__(self, FileEntry) is not None:
            if not any(self._live_value(i, units) for i in range(len(_PACKED_SLOTS))):
                return                              # nothing opened or added since
            _open_all(self)
        state: list[Any] = [None] * len(_PACKED_SLOTS)
        which = [i for i in range(len(_PACKED_SLOTS)) if self._live_value(i, units)]
        if not which:
            return
        for i in which:
            v = _PACKED_SLOTS[i].__get__(self, FileEntry)
            state[i] = _ENCODE[i](v) if _ENCODE[i] is not None else v
        try:
            packed = packer.pack(tuple(state), _decode_values)
        except (pickle.PicklingError, TypeError, AttributeError):
            if 0 not in which:
                return
            which.remove(0)                         # an engine's object that does not pickle:
            state[0] = None                         # the sections are kept as they are
            if not which:
                return
            try:
                packed = packer.pack(tuple(state), _decode_values)
            except (pickle.PicklingError, TypeError, AttributeError):
                return
        packed.summary = summarize(self)
        _PACKED_SLOT.__set__(self, packed)
        for i in which:
            _PACKED_SLOTS[i].__set__(self, PACKED)

    def _live_value(self, i: int, units: bool) -> bool:
        """Whether value ``i`` of :data:`_PACKED_SLOTS` is held open and may be packed."""
        v = _PACKED_SLOTS[i].__get__(self, FileEntry)
        if v is PACKED:
            return False
        if i == 0:
            return type(v) is dict and bool(v)
        if not units:
            return False
        if i == 1:
            return type(v) is np.ndarray and v.ndim == 1 and v.nbytes <= PACK_UNITS_MAX
        if i == 2:
            return type(v) is UnitFacts and all(a is None or (type(a) is np.ndarray and a.ndim == 1)
                                                for a in map(v.__getattribute__, _FACT_NAMES))
        return type(v) is dict and bool(v)

    def settled(self) -> bool:
        """Whether this file's sections stay packed when read (packing.settle): a reader
        keeping what it read for long should keep a way to read it again instead."""
        p = _PACKED_SLOT.__get__(self, FileEntry)
        return p is not None and p.packer.settled and _SECTIONS_SLOT.__get__(self, FileEntry) is PACKED

    def packers(self) -> list:
        """The packers of this file's packed values."""
        p = _PACKED_SLOT.__get__(self, FileEntry)
        return [p.packer] if p is not None else []

    def sections_view(self) -> dict[str, Any]:
        """The sections to read, left packed when they are (a fresh copy is opened):
        what the JSON writers use, so that writing 100,000 files opens one at a time."""
        s = _SECTIONS_SLOT.__get__(self, FileEntry)
        if s is PACKED:
            p = _PACKED_SLOT.__get__(self, FileEntry)
            return (p.open_cached() if p.packer.settled else p.open())[0]
        return s


@dataclass(frozen=True, slots=True)
class FileSummary:
    """What the tree and the views ask of every file of a dataset, kept beside the file's
    packed blob so that asking does not open it (a window over 20,000 tablespaces opened
    every file's blob two or three times on the GUI thread): its units, their logical
    bytes, how many lack a hole the engine punches, the expected hole bytes its engine's
    section states, and whether its engine lays the units out on the unit map."""

    units: int = 0
    logical_bytes: int = 0
    missing_hole_units: int = 0
    expected_hole_bytes: int | None = None
    mapped: bool = False


def _logical_of(entry: "FileEntry") -> int:
    u = entry.units
    return int(u["logical"].sum(dtype="u8")) if u is not None and len(u) else 0


def _missing_of(entry: "FileEntry") -> int:
    u = entry.units
    return int(np.count_nonzero(u["flags"] & UNIT_HOLE_MISSING)) if u is not None and len(u) else 0


def _expected_hole_of(entry: "FileEntry") -> int | None:
    for sec in entry.sections.values():
        if isinstance(sec, dict) and sec.get("expected_hole_bytes") is not None:
            return int(sec["expected_hole_bytes"])
    return None


#: whether the unit map draws an entry's units (its engine's ``Engine.unit_geometry`` is not
#: None): set by the engine registry (parsers/engines.py) when it is imported, since the model
#: imports no engine (the registry imports every engine, and the engines import this module)
_draws_units: Callable[["FileEntry"], bool] | None = None


def set_unit_map_rule(rule: Callable[["FileEntry"], bool]) -> None:
    """The engine registry's answer to "does the unit map draw this entry" (parsers/engines.py)."""
    global _draws_units
    _draws_units = rule


def _mapped_of(entry: "FileEntry") -> bool:
    if entry.units is None or not len(entry.units):
        return False
    if _draws_units is None:
        raise RuntimeError("dbxray.parsers.engines is not imported: no engine says whether the unit map "
                           f"draws {entry.path}")
    return _draws_units(entry)


def summarize(entry: "FileEntry") -> FileSummary:
    """``entry``'s :class:`FileSummary` from its (open) values."""
    u = entry.units
    return FileSummary(0 if u is None else len(u), _logical_of(entry), _missing_of(entry),
                       _expected_hole_of(entry), _mapped_of(entry))


def _summary_field(name: str, compute: Callable[["FileEntry"], Any]) -> Callable[["FileEntry"], Any]:
    def read(entry: "FileEntry"):
        p = _PACKED_SLOT.__get__(entry, FileEntry)
        s = p.summary if p is not None else None
        return getattr(s, name) if s is not None else compute(entry)
    read.__doc__ = f"The file's FileSummary.{name}: kept beside its packed blob, else computed from its values."
    return read


class _Packed:
    """What a FileEntry's value slot holds while the value is in its ``packed`` blob."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "PACKED"

    def __reduce__(self):
        return (_packed_mark, ())


def _packed_mark() -> "_Packed":
    return PACKED


PACKED = _Packed()

#: unit arrays of at most this many bytes are packed (FileEntry.pack): 1,820 units
PACK_UNITS_MAX = 64 << 10
_FACT_NAMES = tuple(UnitFacts.__dataclass_fields__)


def _array_state(a: np.ndarray) -> tuple:
    """A 1-d array as (dtype, bytes): packed and opened in about a microsecond (numpy's
    own pickling costs ~10 us an array to open)."""
    return (a.dtype.descr if a.dtype.names else a.dtype.str, a.tobytes())


def _array_from_state(state: tuple) -> np.ndarray:
    dtype, data = state
    return np.frombuffer(bytearray(data), dtype=UNIT_DTYPE if dtype == _UNIT_DESCR else np.dtype(dtype))


def _facts_state(f: UnitFacts) -> tuple:
    return tuple(None if a is None else _array_state(a) for a in map(f.__getattribute__, _FACT_NAMES))


def _facts_from_state(state: tuple) -> UnitFacts:
    return UnitFacts(*(None if a is None else _array_from_state(a) for a in state))


def _decode_values(state: tuple) -> tuple:
    return tuple(v if v is None or _DECODE[i] is None else _DECODE[i](v) for i, v in enumerate(state))


_UNIT_DESCR = UNIT_DTYPE.descr

# ``FileEntry.sections``, ``units``, ``unit_facts`` and ``owner_names`` open packed values
# when read: while the scan runs for good (a cross-file step may change them), once it is
# settled (packing.settle) as a fresh copy each time (a few cached).  The slots the
# dataclass made hold a value or PACKED (the value is in the ``packed`` slot's blob); these
# properties read them
_SECTIONS_SLOT = FileEntry.__dict__["sections"]
_UNITS_SLOT = FileEntry.__dict__["units"]
_FACTS_SLOT = FileEntry.__dict__["unit_facts"]
_OWNERS_SLOT = FileEntry.__dict__["owner_names"]
_PACKED_SLOT = FileEntry.__dict__["packed"]
_PACKED_SLOTS = (_SECTIONS_SLOT, _UNITS_SLOT, _FACTS_SLOT, _OWNERS_SLOT)
_ENCODE = (None, _array_state, _facts_state, None)
_DECODE = (None, _array_from_state, _facts_from_state, None)


def _open_all(entry: FileEntry) -> None:
    """Every packed value of ``entry`` back into its slot, the blob let go."""
    p = _PACKED_SLOT.__get__(entry, FileEntry)
    if p is None:
        return
    values = p.open()
    for slot, v in zip(_PACKED_SLOTS, values):
        if slot.__get__(entry, FileEntry) is PACKED:
            slot.__set__(entry, v)
    _PACKED_SLOT.__set__(entry, None)


def _value_property(i: int, doc: str) -> property:
    slot = _PACKED_SLOTS[i]

    def get(entry: FileEntry):
        v = slot.__get__(entry, FileEntry)
        if v is PACKED:
            p = _PACKED_SLOT.__get__(entry, FileEntry)
            if p.packer.settled:
                return p.open_cached()[i]
            _open_all(entry)
            v = slot.__get__(entry, FileEntry)
        return v

    def set_(entry: FileEntry, value) -> None:
        try:
            # a slot holds PACKED only while the entry has its blob (``packed``, set first by
            # __init__ below: so a new entry's four values raise nothing here)
            packed = _PACKED_SLOT.__get__(entry, FileEntry) is not None and slot.__get__(entry, FileEntry) is PACKED
        except AttributeError:                      # unpickled: the slots come back one by one
            packed = False
        if packed:
            _open_all(entry)
        slot.__set__(entry, value)

    return property(get, set_, doc=doc)


FileEntry.sections = _value_property(0, "engine sections of the JSON output (opened when packed)")
FileEntry.units = _value_property(1, "UNIT_DTYPE array, or None when not read (opened when packed)")
FileEntry.unit_facts = _value_property(2, "per-unit facts the views draw (opened when packed)")
FileEntry.owner_names = _value_property(3, "names of the unit owner codes (opened when packed)")

_dataclass_init = FileEntry.__init__


@functools.wraps(_dataclass_init)
def _file_entry_init(self, *args, **kwargs) -> None:
    # the blob's slot first: the four properties' setters ask it whether a value is packed,
    # and a slot not set yet raises (four exceptions an entry: ~0.1 s of a 20,000-file listing)
    _PACKED_SLOT.__set__(self, None)
    _dataclass_init(self, *args, **kwargs)


FileEntry.__init__ = _file_entry_init



@dataclass(slots=True)
class TableEntry:
    """A table (or dictionary group) and the files that hold it."""

    engine: str
    database: str
    name: str
    files: list[str] = field(default_factory=list)       # relative paths
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.database}.{self.name}"


@dataclass
class Dataset:
    """Everything one scan found under ``root``."""

    root: str
    files: list[FileEntry] = field(default_factory=list)
    tables: list[TableEntry] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: engine-level JSON sections at the top level ("clickhouse": {"tables": [...]})
    sections: dict[str, Any] = field(default_factory=dict)
    #: the engines' typed dataset-level facts for their views, by engine name (not serialised)
    facts: dict[str, Any] = field(default_factory=dict)
    #: the engine parsers' own objects: parser-internal, not serialised
    detail: dict[str, Any] = field(default_factory=dict)
    cancelled: bool = False
    #: engine names in display order (parsers/engines.py NAMES); the model knows no engine
    engine_order: tuple[str, ...] = ()

    @property
    def engines(self) -> list[str]:
        """Names of the engines that claimed a file, in ``engine_order`` (the
        registry's, set by the scan and by saved scans), else by name."""
        found = {f.engine for f in self.files if f.engine}
        if self.engine_order:
            return [e for e in self.engine_order if e in found]
        return sorted(found)

    def file(self, path: str) -> FileEntry | None:
        """The file at ``path`` (an index rebuilt when the list changed length: a scan
        of 20,000 files looked each one up by a walk of the list, quadratic in all)."""
        idx = self.__dict__.get("_file_index")
        n = len(self.files)
        if idx is None or idx[0] > n:
            idx = (0, {})
        if idx[0] < n:                                # files appended since: index those
            d = idx[1]
            for f in self.files[idx[0]:]:
                d.setdefault(f.path, f)               # the first of equal paths wins, as the walk did
            idx = (n, d)
            self.__dict__["_file_index"] = idx
        f = idx[1].get(path)
        if f is not None and f.path == path:
            return f
        for f in self.files:                          # an entry renamed in place since: walk
            if f.path == path:
                return f
        return None

    def files_of(self, engine: str) -> list[FileEntry]:
        return [f for f in self.files if f.engine == engine]

    def table(self, engine: str, database: str, name: str) -> TableEntry:
        """The table (made on first use), found through an index kept with the list."""
        key = (engine, database, name)
        idx = self.__dict__.get("_table_index")
        n = len(self.tables)
        if idx is None or idx[0] > n:
            idx = (0, {})
        if idx[0] < n:
            d = idx[1]
            for t in self.tables[idx[0]:]:
                d.setdefault((t.engine, t.database, t.name), t)
            idx = (n, d)
            self.__dict__["_table_index"] = idx
        t = idx[1].get(key)
        if t is not None and (t.engine, t.database, t.name) == key:
            return t
        t = TableEntry(engine, database, name)
        self.tables.append(t)
        idx[1][key] = t
        self.__dict__["_table_index"] = (len(self.tables), idx[1])
        return t

    @property
    def apparent_bytes(self) -> int:
        return sum(f.apparent_bytes for f in self.files)

    @property
    def allocated_bytes(self) -> int:
        return sum(f.allocated_bytes for f in self.files)

    def to_json(self, files: Any = None) -> dict[str, Any]:
        """The JSON contract (``files``: what to put as ``"files"`` instead of every
        file's object: the streamed writer, parsers/jsonout.py, writes them itself)."""
        out: dict[str, Any] = {
            "tool": "dbxray",
            "schema_version": 1,
            "root": self.root,
            "engines": self.engines,
            "files": [f.to_json() for f in self.files] if files is None else files,
        }
        facts = [f.fs for f in self.files if f.fs is not None]
        if facts:
            from .fsfacts import totals
            out["filesystem"] = totals(facts)
        if self.errors:
            out["errors"] = list(self.errors)
        if self.warnings:
            out["warnings"] = list(self.warnings)
        out.update(self.sections)
        return out


class Cancelled(Exception):
    """Raised inside a scan when the user cancelled it."""


@dataclass
class ScanContext:
    """Progress and cancel hooks handed to every parser.

    ``progress(done, total, message)`` is called from the scanning thread;
    ``is_cancelled()`` is polled between files (and between large chunks).
    """

    progress: Callable[[int, int, str], None] | None = None
    is_cancelled: Callable[[], bool] | None = None
    fs_block: int | None = None      # override of the filesystem block size
    verify_checksums: bool = True
    #: decryption keys (InnoDB: a file_key_management KeyRing); held in memory, never saved
    keys: Any = None
    #: processes that may read independent files at once (parsers/parallel.py; 1: this one only)
    workers: int = 1
    #: keep each file's units, unit facts and parser objects (views, what-if, the inspector);
    #: False: only what the JSON holds (the command line), so memory per file stays bounded
    keep_units: bool = True
    #: what the scan reads: "full" (every page's checksum, LOB chains, every block) or "headers"
    #: (headers and per-file facts: no checksums, no LOB chains; the command line's default and
    #: ``--summary``; ClickHouse's block walk is ``block_walk``)
    depth: str = "full"
    #: ClickHouse: read every compressed block header (codec counts, block histograms, units,
    #: checksums); False: the figures the engine reports from checksums.txt, blocks walked on demand
    block_walk: bool = True
    #: bytes of engines' per-file parser objects (InnoDB page maps) kept at most; past it a
    #: file's are dropped once its section and units are made, and read again on demand
    #: (parsers/innodb/detail.py).  None: every file keeps them
    detail_budget: int | None = None
    #: bytes of those objects kept so far (the scan's running count against the budget)
    detail_kept: int = 0
    #: the engines that read their files (None: every engine); the others' files are only
    #: detected (no facts read, no engine section): ``parsers.scan.complete``
    engines: tuple[str, ...] | None = None
    #: an engine reading more files than this at once packs each file's sections once it is
    #: done with it (FileEntry.pack_sections; parsers/parallel.py ``each_file``): a
    #: 100,000-tablespace scan in bounded memory, a few microseconds a file.  None: never
    pack_sections_over: int | None = None
    #: InnoDB page-compressed pages: False decodes only their headers where the codec can stop
    #: early (zlib, bzip2; lzma always) and takes each payload's length from the zero fill behind
    #: its stream (exact unless the stream ends in zero bytes): what the what-if reads of a page
    #: (its type, index, level, fill), not its section's ``compressed_payload_bytes``
    exact_payload: bool = True
    #: InnoDB page-compressed pages (MariaDB): True decodes only those of fragment extents (the
    #: system pages, inodes, every index's root and first pages) and takes the others' owner from
    #: the segment that owns their extent, leaving their page type, level and fill unknown: what
    #: the what-if needs to draw its sample (each unit's owner, place and stored bytes), not what
    #: the tables and views show.  Needs ``verify_checksums=False``
    owners_only: bool = False

    def report(self, done: int, total: int, message: str = "") -> None:
        if self.progress is not None:
            self.progress(done, total, message)

    def check(self) -> None:
        if self.is_cancelled is not None and self.is_cancelled():
            raise Cancelled()


#: what the tree and the views ask of every file, without opening a packed file's blob
unit_count = _summary_field("units", lambda e: 0 if e.units is None else len(e.units))
units_logical_bytes = _summary_field("logical_bytes", _logical_of)
missing_hole_units = _summary_field("missing_hole_units", _missing_of)
expected_hole_bytes = _summary_field("expected_hole_bytes", _expected_hole_of)
unit_map_shows = _summary_field("mapped", _mapped_of)

"""Where the units to re-encode come from.

A :class:`UnitSet` is a population of units with their logical sizes, strata
(owner), kind names, and a function giving a unit's decoded bytes.  Three
kinds exist:

* the engine's own units of a file (:func:`engine_units`): InnoDB pages,
  ClickHouse blocks, TokuDB partitions, decoded by the engine's
  ``unit_payload(entry, i, max_output)`` (the engine protocol, parsers/engine.py);
* groups of consecutive units of the same owner (:func:`grouped_units`):
  the larger-InnoDB-pages approximation;
* raw records of a file as it is on disk (:func:`raw_records`): the
  filesystem-compression comparison.
"""
from __future__ import annotations

import atexit
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from dbxray.parsers import engines
from dbxray.parsers.engine import Engine
from dbxray.parsers.fileio import FileReadError, HandleCache
from dbxray.parsers.model import FileEntry

#: decoded units larger than this are refused (decompression bombs)
MAX_UNIT_BYTES = 64 * 1024 * 1024


class SourceUnavailable(RuntimeError):
    """No engine decodes these units."""


def payload_source(engine: str | None) -> Engine:
    """The registered engine that decodes ``engine``'s units (its ``unit_payload``),
    or SourceUnavailable naming what is missing."""
    found = engines.get(engine)
    if found is None:
        raise SourceUnavailable(f"{engine}: no engine of that name is registered (parsers/engines.py)")
    if type(found).unit_payload is Engine.unit_payload:
        raise SourceUnavailable(f"{engine}: the engine does not decode its units (no unit_payload)")
    return found


@dataclass
class UnitSet:
    """A population of units to sample and re-encode."""

    label: str
    logical: np.ndarray                   # int64 logical bytes per unit
    strata: np.ndarray                    # int64 stratum label per unit
    payload: Callable[[int], bytes]       # unit index -> decoded bytes
    kinds: list[str | None] | None = None  # kind name per unit
    probe: np.ndarray | None = None       # bool: read the unit to classify it (cheap check)
    zero: np.ndarray | None = None        # bool: unit known to be all zeros (a hole)
    order_key: np.ndarray | None = None   # position of each unit (page no, offset) for layouts
    free: np.ndarray | None = None        # bool: unit free in the engine's own map (a rebuild drops it)
    #: int64 kind of each unit's stratum (strata of one kind share their spread: the nodes of one
    #: height of a TokuDB tree; compress/estimate.py group_spreads), None: each stratum its own
    group: np.ndarray | None = None
    #: int64 bytes each unit takes on disk now (the engine's current compression), known for all
    #: units: how much the units vary, beyond what a sample shows (estimate.aux_spread)
    aux: np.ndarray | None = None
    meta: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.logical)

    @property
    def logical_bytes(self) -> int:
        return int(self.logical.sum())


def _kind_names(entry: FileEntry, units: np.ndarray) -> list[str | None]:
    names = entry.kind_names or {}
    if not len(units):
        return []
    # one look-up per distinct kind code, not per unit
    codes, inverse = np.unique(units["kind"].astype(np.int64), return_inverse=True)
    table = np.empty(len(codes), dtype=object)
    table[:] = [names.get(int(k)) for k in codes]
    return table[inverse.reshape(-1)].tolist()


def kinds_in(kinds: list, wanted) -> np.ndarray:
    """Which of ``kinds`` (a unit set's kind names) are in ``wanted``: one test per distinct
    name, then a look-up per unit."""
    memo = {k: k in wanted for k in set(kinds)}
    return np.fromiter(map(memo.__getitem__, kinds), dtype=bool, count=len(kinds))


def engine_units(entry: FileEntry, unit_filter: Callable[[FileEntry, np.ndarray], np.ndarray] | None = None,
                 max_output: int | None = None) -> UnitSet:
    """The engine units of one file (all of them, or those ``unit_filter`` keeps)."""
    if entry.units is None:
        raise SourceUnavailable(f"{entry.path}: the {entry.engine} parser listed no units")
    mod = payload_source(entry.engine)
    units = entry.units
    idx = np.arange(len(units)) if unit_filter is None else np.flatnonzero(unit_filter(entry, units))
    sel = units[idx]
    logical = sel["logical"].astype(np.int64)
    cap = max_output or MAX_UNIT_BYTES

    def payload(k: int) -> bytes:
        i = int(idx[k])
        return bytes(mod.unit_payload(entry, i, max_output=min(cap, int(units["logical"][i]) or cap)))

    kinds = _kind_names(entry, sel)
    zero = in_holes(entry.holes, sel["offset"].astype(np.int64), sel["stored"].astype(np.int64))
    # pages of no known type may be never-written zeros: read them to classify (cheap, no
    # encoding); a unit only partly in a hole (a punched page-compressed page) is not zero
    probe = np.array([k in (None, "FIL_PAGE_TYPE_ALLOCATED") for k in kinds], dtype=bool)
    probe &= ~zero
    return UnitSet(label=entry.path, logical=logical, strata=sel["owner"].astype(np.int64),
                   payload=payload, kinds=kinds, probe=probe, zero=zero,
                   order_key=sel["offset"].astype(np.int64),
                   meta={"entry": entry, "index": idx})


def in_holes(holes, offsets: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Which units [offset, offset+length) lie wholly inside one of the file's holes
    (never written: all zeros, known without reading them)."""
    if not holes or not len(offsets):
        return np.zeros(len(offsets), dtype=bool)
    hs = np.array(sorted(holes), dtype=np.int64).reshape(-1, 2)
    starts, ends = hs[:, 0], hs[:, 0] + hs[:, 1]
    k = np.searchsorted(starts, offsets, side="right") - 1
    ok = k >= 0
    kk = np.where(ok, k, 0)
    return ok & (offsets >= starts[kk]) & (offsets + np.maximum(lengths, 1) <= ends[kk])


def allocated_in(entry: FileEntry, offsets: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Bytes the filesystem holds now for each range [offset, offset+length) of the file:
    its length less what unallocated holes cover (an unwritten, fallocated extent is a hole
    that is allocated: it counts).  Ranges must not overlap each other's holes twice (pages,
    blocks: disjoint ranges)."""
    offsets = np.asarray(offsets, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    gaps = _unallocated(entry.holes, entry.unwritten)
    if not gaps or not len(offsets):
        return lengths.copy()
    hs = np.array(gaps, dtype=np.int64).reshape(-1, 2)
    starts, lens = hs[:, 0], hs[:, 1]
    before = np.concatenate([[0], np.cumsum(lens)])

    def covered(x: np.ndarray) -> np.ndarray:      # unallocated bytes below x
        k = np.searchsorted(starts, x, side="right") - 1
        kk = np.maximum(k, 0)
        inside = np.clip(x - starts[kk], 0, lens[kk])
        return np.where(k >= 0, before[kk] + inside, 0)
    return np.maximum(lengths - (covered(offsets + lengths) - covered(offsets)), 0)


def _unallocated(holes, unwritten) -> list[tuple[int, int]]:
    """``holes`` less the ``unwritten`` ranges inside them, sorted and disjoint."""
    if not unwritten:       # nothing to cut out (most files): the holes, sorted, the empty ones left out
        return [(o, n) for o, n in sorted((int(o), int(n)) for o, n in (holes or [])) if n > 0]
    out: list[tuple[int, int]] = []
    cuts = sorted((int(o), int(o) + int(n)) for o, n in (unwritten or []))
    for o, n in sorted((int(o), int(n)) for o, n in (holes or [])):
        a, b = o, o + n
        for c0, c1 in cuts:
            if c1 <= a or c0 >= b:
                continue
            if c0 > a:
                out.append((a, c0 - a))
            a = max(a, c1)
        if b > a:
            out.append((a, b - a))
    return out


def subset_units(base: UnitSet, mask: np.ndarray, label: str | None = None) -> UnitSet:
    """The units of ``base`` that ``mask`` keeps, as their own population."""
    idx = np.flatnonzero(mask)

    def payload(k: int) -> bytes:
        return base.payload(int(idx[k]))

    pick = (lambda a: None if a is None else a[idx])
    return UnitSet(label=label or base.label, logical=base.logical[idx], strata=base.strata[idx], payload=payload,
                   kinds=None if base.kinds is None else [base.kinds[i] for i in idx],
                   probe=pick(base.probe), zero=pick(base.zero), order_key=pick(base.order_key),
                   free=pick(base.free), meta={"base": base, "index": idx})


def _groups_of(units: np.ndarray, strata: np.ndarray, factor: int) -> list[list[int]]:
    """``units`` (in file order) cut into groups of ``factor`` consecutive units of the same
    stratum, each group in file order, the groups in the order of their first unit: each
    unit's rank among its stratum's units, divided by ``factor``, names its group."""
    m = len(units)
    if not m:
        return []
    s = strata[units]
    by = np.argsort(s, kind="stable")                 # strata together, file order within each
    ss = s[by]
    first = np.flatnonzero(np.concatenate(([True], ss[1:] != ss[:-1])))
    rank = np.arange(m) - np.repeat(first, np.diff(np.append(first, m)))
    lead = by[np.arange(m) - rank % factor]           # position (in ``units``) of each group's first unit
    group_at = np.empty(m, dtype=np.int64)
    group_at[by] = lead
    starts = np.unique(lead)                          # the groups, ordered by their first unit
    gid = np.searchsorted(starts, group_at)
    pos = np.argsort(gid, kind="stable")              # units by group, file order within each
    cuts = [0, *(np.flatnonzero(np.diff(gid[pos])) + 1).tolist(), m]
    flat = units[pos].tolist()                        # one list, sliced (not an array per group)
    return [flat[a:b] for a, b in zip(cuts, cuts[1:])]


def grouped_units(base: UnitSet, factor: int, keep: np.ndarray | None = None, pad_to: int | None = None) -> UnitSet:
    """Groups of ``factor`` consecutive units of the same stratum (in file order).

    ``keep`` selects the units that may be grouped (e.g. leaf pages); the
    others are left out.  A group shorter than ``factor`` (end of an owner)
    is padded with zero bytes to ``factor`` units: it still takes a whole page.
    """
    n = len(base)
    mask = np.ones(n, dtype=bool) if keep is None else np.asarray(keep, dtype=bool)
    order = np.argsort(base.order_key if base.order_key is not None else np.arange(n), kind="stable")
    groups = _groups_of(order[mask[order]], np.asarray(base.strata, dtype=np.int64), factor)
    unit_size = int(base.logical.max()) if n else 0
    size = pad_to or unit_size * factor
    logical = np.full(len(groups), size, dtype=np.int64)
    strata = np.array([int(base.strata[g[0]]) for g in groups], dtype=np.int64)

    def payload(j: int) -> bytes:
        parts = [base.payload(k) for k in groups[j]]
        data = b"".join(parts)
        return data + bytes(size - len(data)) if len(data) < size else data

    kinds = None if base.kinds is None else [base.kinds[g[0]] for g in groups]
    return UnitSet(label=f"{base.label} (groups of {factor})", logical=logical, strata=strata,
                   payload=payload, kinds=kinds if factor == 1 else None, meta={"groups": groups, "base": base})


#: read-only handles of the files whose raw records a what-if reads (one open and one hole
#: listing per file, not per record: a page-compressed file lists thousands of extents)
_RAW_HANDLES = HandleCache(16)
atexit.register(_RAW_HANDLES.close)


def raw_records(entry: FileEntry, record: int) -> UnitSet:
    """The file's bytes as they are on disk, cut in ``record``-byte records.

    Records lying wholly in a hole are marked ``zero`` (known without reading).
    """
    size = int(entry.apparent_bytes)
    n = -(-size // record) if size else 0
    starts = np.arange(n, dtype=np.int64) * record
    logical = np.minimum(record, size - starts).astype(np.int64)
    zero = np.zeros(n, dtype=bool)
    for off, ln in entry.holes:
        first = -(-off // record)
        last = (off + ln) // record           # exclusive: records fully inside
        end_ok = (off + ln) >= size
        if end_ok:
            last = n
        if last > first:
            zero[first:last] = True
    path = entry.abspath

    def payload(k: int) -> bytes:
        try:
            data = _RAW_HANDLES.pread(path, int(starts[k]), int(logical[k]))
        except OSError as e:
            raise FileReadError(path, f"cannot read: {e.strerror or e}", int(starts[k])) from None
        if len(data) < logical[k]:
            data += bytes(int(logical[k]) - len(data))
        return data

    return UnitSet(label=f"{entry.path} (raw {record // 1024} KiB records)", logical=logical,
                   strata=np.zeros(n, dtype=np.int64), payload=payload, zero=zero, order_key=starts,
                   meta={"entry": entry})


def raw_records_many(entries: list[FileEntry], record: int, label: str) -> UnitSet:
    """The bytes of several files (e.g. every file of a table's active
    ClickHouse parts) cut in ``record``-byte records, each file on its own
    (a filesystem compresses records of one file, the last one short), one
    stratum per file."""
    sets = [raw_records(e, record) for e in entries if e.apparent_bytes]
    if not sets:
        return UnitSet(label=label, logical=np.zeros(0, dtype=np.int64), strata=np.zeros(0, dtype=np.int64),
                       payload=lambda k: b"", zero=np.zeros(0, dtype=bool), order_key=np.zeros(0, dtype=np.int64))
    lens = np.array([len(u) for u in sets], dtype=np.int64)
    first = np.concatenate([[0], np.cumsum(lens)[:-1]])
    which = np.repeat(np.arange(len(sets), dtype=np.int64), lens)

    def payload(k: int) -> bytes:
        i = int(which[k])
        return sets[i].payload(int(k - first[i]))

    return UnitSet(label=label, logical=np.concatenate([u.logical for u in sets]), strata=which.copy(),
                   payload=payload, zero=np.concatenate([u.zero for u in sets]),
                   order_key=np.concatenate([u.order_key for u in sets]),
                   meta={"entries": [u.meta["entry"] for u in sets]})

"""TokuDB engine entry point: ``analyze(dataset, files, ctx)``.

For every fractal-tree file (``*.tokudb``, ``tokudb.directory``,
``tokudb.environment``, ``tokudb.rollback``) the header slots, the translation
table and every node's headers are read -- never a partition payload -- and
the file gets:

* ``units``: one record per node **partition** (one sub-block: a basement of a
  leaf or a message buffer of an internal node).  ``offset`` = file offset of
  the sub-block, ``stored`` = its bytes on disk (BP_SIZE: sizes, payload and
  checksum), ``logical`` = its uncompressed size, ``kind`` = its method byte
  (0x00 none, 0x07 snappy, 0x78 zlib, 0x39 quicklz, 0x2a lzma, 0x5b zlib
  without checksum), ``owner`` = the node's block number, ``flags``
  UNIT_LEAF for height 0, UNIT_COMPRESSED unless stored raw,
  UNIT_BAD_CHECKSUM / UNIT_CORRUPT when so.  Node headers, node-info
  sub-blocks and the padding up to the 512-byte block size are not units;
  ``sections["tokudb"]["disk_bytes"]`` counts whole blocks.
* ``sections["tokudb"]``: the JSON fields of issue 5.
* ``detail``: header slots, translation table, nodes, per-height figures,
  fragmentation -- for the views.

Files are grouped into tables through ``tokudb.directory`` (or file names
when it is missing); each table's ``info`` shows its real footprint next to
the logical size information_schema reports (the header estimates).
"""
from __future__ import annotations

import posixpath
from collections import Counter, defaultdict

import numpy as np

from ..arrays import distinct
from ..fileio import FileReadError, ReadOnlyFile
from ..model import (UNIT_BAD_CHECKSUM, UNIT_COMPRESSED, UNIT_CORRUPT, UNIT_HOLE, UNIT_LEAF, Dataset, FileEntry,
                     ScanContext, empty_units, UnitFacts)
from ..codecs.general import DecodeError
from .content import logical_content
from .directory import (ENGINE_FILES, DictName,
                        directory_map, parse_dname, parse_iname)
from .env import environment_values
from .facts import NodeShape, TokuDBFileFacts, classify_blocks
from .section import TokuDBFileSection, TokuDBLogSection, TokuDBTreeSection
from .ftfile import FtFile, data_ranges_from_holes, read_ft_file
from .log import LOG_NAME_RE, read_log
from .methods import METHOD_NAMES, TOKU_NO_COMPRESSION, method_name
from .nonleaf import buffer_memory_bytes
from .tables import table_info
from .wire import FormatError


class _PreadBuffer:
    """Slice access through pread for files that cannot be mapped."""

    def __init__(self, f: ReadOnlyFile):
        self._f = f

    def __len__(self) -> int:
        return self._f.size

    def __getitem__(self, s):
        if isinstance(s, slice):
            start = s.start or 0
            stop = self._f.size if s.stop is None else min(s.stop, self._f.size)
            return self._f.pread(start, max(0, stop - start))
        return self._f.pread(s, 1)[0]


def _magic(entry: FileEntry) -> bytes:
    try:
        with ReadOnlyFile(entry.abspath) as f:
            return f.pread(0, 8)
    except FileReadError:
        return b""


def _is_tree(entry: FileEntry) -> bool:
    name = posixpath.basename(entry.path)
    if name.endswith(".tokudb") or name in ENGINE_FILES:
        return True
    return entry.role == "dictionary" and _magic(entry) == b"tokudata"     # a lone file found by magic


def _is_log(entry: FileEntry) -> bool:
    return entry.role == "redo_log" or (entry.role == "dictionary" and _magic(entry) == b"tokulogg")


def analyze(dataset: Dataset, files: list[FileEntry], ctx: ScanContext) -> None:
    """Read every TokuDB file handed over by the scan (see module docstring)."""
    trees = [e for e in files if _is_tree(e)]
    logs = [e for e in files if e not in trees and _is_log(e)]
    total = len(files)
    done = 0
    # tokudb.directory first: it names the others
    trees.sort(key=lambda e: posixpath.basename(e.path) != "tokudb.directory")
    dnames: dict[str, str] = {}           # relative path of a dictionary file -> dname
    for entry in trees:
        ctx.check()
        ctx.report(done, total, f"reading {entry.path}")
        _analyze_tree(entry, ctx, dnames)
        done += 1
    for entry in logs:
        ctx.check()
        ctx.report(done, total, f"reading {entry.path}")
        _analyze_log(entry)
        done += 1
    for entry in files:
        if entry not in trees and entry not in logs and entry.role == "engine_environment":
            entry.sections["tokudb"] = TokuDBFileSection(
                role="lock_file" if "lock_dont_delete_me" in entry.path else "environment", table=None)
    _group_tables(dataset, trees)
    ctx.report(total, total, "tokudb done")


# -- one fractal-tree file ------------------------------------------------------------

def _analyze_tree(entry: FileEntry, ctx: ScanContext, dnames: dict[str, str]) -> FtFile | None:
    try:
        f = ReadOnlyFile(entry.abspath)
    except FileReadError as e:
        entry.add_error(str(e).split(": ", 1)[-1])
        return None
    with f:
        if f.size == 0:
            entry.add_error("empty file, no header")
            return None
        f.advise_random()
        buf = f.mmap()
        if buf is None:
            buf = _PreadBuffer(f)
        try:
            ft = read_ft_file(buf, f.size, verify=ctx.verify_checksums, entries=True, check=ctx.check,
                              data_ranges=data_ranges_from_holes(entry.holes, f.size))
        except (FormatError, FileReadError, DecodeError) as e:
            entry.add_error(str(e), getattr(e, "offset", None))
            return None
        name = posixpath.basename(entry.path)
        if name == "tokudb.directory" and ft.nodes:
            base = posixpath.dirname(entry.path)
            try:
                c = logical_content(buf, ft, ctx.check)
                for dname, iname in directory_map(c.rows).items():
                    dnames[posixpath.normpath(posixpath.join(base, iname))] = dname
                entry.detail["directory"] = directory_map(c.rows)
            except (FormatError, DecodeError) as e:
                entry.add_error(f"cannot read the directory's rows: {e}")
        elif name == "tokudb.environment" and ft.nodes:
            try:
                entry.detail["environment"] = environment_values(logical_content(buf, ft, ctx.check).rows)
            except (FormatError, DecodeError) as e:
                entry.add_error(f"cannot read the environment's rows: {e}")
        changed = f.changed()
        if changed:
            entry.warnings.append(changed)
    for off, msg in ft.errors:
        entry.add_error(msg, off)
    dn = dnames.get(entry.path)
    where = parse_dname(dn) if dn else parse_iname(entry.path)
    if name in ENGINE_FILES:
        where = DictName(None, None, ENGINE_FILES[name])
    entry.database, entry.table = where.database, where.table
    _fill_entry(entry, ft, where, dn)
    return ft


def per_height(ft: FtFile) -> dict[int, dict]:
    """``tokuftdump --summary`` per height: nodes, disk bytes (BTT sizes),
    uncompressed bytes (``toku_serialize_ftnode_size``), children (basements at
    height 0), entries (leaf entries / buffered messages) and message bytes."""
    out: dict[int, dict] = {}
    for n in ft.nodes.values():
        if n.height is None:
            continue
        h = out.setdefault(n.height, {"height": n.height, "nodes": 0, "disk_bytes": 0,
                                      "uncompressed_bytes": 0, "children": 0, "entries": 0,
                                      "message_bytes": 0})
        h["nodes"] += 1
        h["disk_bytes"] += n.size
        h["uncompressed_bytes"] += n.serialize_size
        h["children"] += n.n_children
        h["entries"] += sum(p.entries or 0 for p in n.partitions)
        if not n.is_leaf:
            h["message_bytes"] += sum(buffer_memory_bytes(p.sub_block.uncompressed_size, p.entries)
                                      for p in n.partitions if p.sub_block is not None and p.entries is not None)
    return dict(sorted(out.items()))


def block_map(ft: FtFile) -> list[tuple[int, int, str, int]]:
    """The file from start to end as (offset, length, what, block number):
    both header slots, the translation table, the descriptor, every node
    ("leaf" / "node h<height>"), rollback blocks, and the "unused" gaps between
    them (garbage of earlier checkpoints and pre-allocated tail)."""
    out: list[tuple[int, int, str, int]] = []
    hs = ft.slots.slots
    for off in (0, 4096):
        out.append((off, 4096, f"header slot {off}" + (" (active)" if ft.header is not None and
                                                         ft.header.slot_offset == off else
                                                         "" if hs.get(off) else " (unused)"), -1))
    bt = ft.block_table
    if bt is not None:
        kinds = {n.blocknum: ("leaf" if n.is_leaf else f"node h{n.height}") for n in ft.nodes.values()}
        kinds.update({bn: "rollback" for bn, _, _ in ft.rollback_blocks})
        for bn, off, sz in bt.used.tolist():
            if off < 8192 or off + sz > ft.size:
                continue
            what = {1: "translation table", 2: "descriptor"}.get(bn) or kinds.get(bn, "unreadable block")
            out.append((off, sz, what, bn))
    elif ft.recovered:
        for n in ft.nodes.values():
            out.append((n.offset, n.size, "leaf" if n.is_leaf else f"node h{n.height}", n.blocknum))
    out.sort()
    full: list[tuple[int, int, str, int]] = []
    pos = 0
    for off, ln, what, bn in out:
        if off > pos:
            full.append((pos, off - pos, "unused", -1))
        full.append((off, ln, what, bn))
        pos = max(pos, off + ln)
    if pos < ft.size:
        full.append((pos, ft.size - pos, "unused", -1))
    return full


def _flag_holes(units: np.ndarray, holes: list[tuple[int, int]]) -> None:
    """Set UNIT_HOLE on units overlapping a hole (their bytes read back as zeros)."""
    if not holes or not len(units):
        return
    hs = np.array([h[0] for h in holes], dtype=np.int64)
    he = hs + np.array([h[1] for h in holes], dtype=np.int64)
    us = units["offset"].astype(np.int64)
    ue = us + units["stored"].astype(np.int64)
    k = np.searchsorted(he, us, side="right")          # first hole ending after the unit starts
    inside = k < len(hs)
    hit = np.zeros(len(units), dtype=bool)
    hit[inside] = hs[k[inside]] < ue[inside]
    units["flags"][hit] |= UNIT_HOLE


def _fill_entry(entry: FileEntry, ft: FtFile, where: DictName, dname: str | None) -> None:
    h = ft.header
    bt = ft.block_table
    heights = per_height(ft)
    nparts = sum(len(n.partitions) for n in ft.nodes.values())
    units = empty_units(nparts)
    methods: Counter = Counter()
    i = 0
    owner_names: dict[int, str] = {}
    for n in ft.nodes.values():
        hname = "leaf" if n.is_leaf else (f"height {n.height}" if n.height is not None else "internal")
        owner_names[n.blocknum] = f"block {n.blocknum} ({hname})"
        for p in n.partitions:
            sb = p.sub_block
            u = units[i]
            u["owner"] = n.blocknum
            flags = UNIT_LEAF if n.is_leaf else 0
            if sb is None:
                u["offset"] = n.offset + min(p.start, n.size)
                u["stored"] = min(p.disk_size, max(0, n.size - p.start))
                flags |= UNIT_CORRUPT
            else:
                u["offset"] = sb.offset
                u["stored"] = sb.disk_size
                u["logical"] = sb.uncompressed_size
                u["kind"] = sb.method_byte
                methods[method_name(sb.method_byte)] += 1
                if sb.method_byte & 0x0F != TOKU_NO_COMPRESSION:
                    flags |= UNIT_COMPRESSED
                if sb.checksum_ok is False:
                    flags |= UNIT_BAD_CHECKSUM
                if p.error:
                    flags |= UNIT_CORRUPT
            u["flags"] = flags
            i += 1
    _flag_holes(units, entry.holes)
    entry.units = units
    level = np.full(nparts, 0xFFFF, dtype=np.uint16)          # each partition's node height
    i = 0
    for n in ft.nodes.values():
        k = len(n.partitions)
        if n.height is not None:
            level[i:i + k] = n.height
        i += k
    entry.unit_facts = UnitFacts(level=level)
    entry.kind_names = {int(k): method_name(int(k)) for k in distinct(units["kind"])} if nparts else {}
    entry.owner_names = owner_names
    frag = bt.fragmentation() if bt is not None else None
    used = bt.used if bt is not None else None
    leaf = heights.get(0, {})
    role = where.role
    entry.sections["tokudb"] = TokuDBTreeSection(**{
        "layout_version": h.layout_version if h else None,
        "checkpoint_count": h.checkpoint_count if h else None,
        "nodesize": h.nodesize if h else None,
        "basementnodesize": h.basementnodesize if h else None,
        "fanout": h.fanout if h else None,
        "compression_method": h.compression_method if h else None,
        "node_methods": dict(sorted(methods.items())),
        "blocks_in_use": int(len(used)) if used is not None else 0,
        "bytes_in_use": frag["used_size"] if frag else 0,
        "unused_bytes": frag["fragsizes"] if frag else 0,
        "height": ft.height,
        "leaf_nodes": leaf.get("nodes", 0),
        "nonleaf_nodes": sum(v["nodes"] for k, v in heights.items() if k > 0),
        "disk_bytes": sum(v["disk_bytes"] for v in heights.values()),
        "uncompressed_bytes": sum(v["uncompressed_bytes"] for v in heights.values()),
        "per_height": [{"height": k, "nodes": v["nodes"], "disk_bytes": v["disk_bytes"],
                        "uncompressed_bytes": v["uncompressed_bytes"]} for k, v in heights.items()],
        "records": leaf.get("entries", 0),
        # the header's logical estimates (DB->stat64: bt_nkeys, bt_dsize): what
        # SHOW TABLE STATUS / information_schema.TABLES add up for this dictionary
        "on_disk_numrows": int(h.on_disk_numrows) if h else None,
        "on_disk_numbytes": int(h.on_disk_numbytes) if h else None,
        "table": f"{where.database}.{where.table}" if where.table else None,
        "role": role,
    })
    entry.facts = TokuDBFileFacts(
        index=where.index, header_numbytes=int(h.on_disk_numbytes) if h else None,
        header_numrows=int(h.on_disk_numrows) if h else None,
        blocks_total=int(frag["total_size"]) if frag else None,
        entries_per_height={int(k): int(v.get("entries", 0)) for k, v in heights.items()},
        blocks=classify_blocks(bt.used, {bn: n.height for bn, n in ft.nodes.items()},
                               [int(b) for b, _, _ in ft.rollback_blocks]) if bt is not None else None,
        nodes={int(bn): NodeShape(n.height, n.n_children, n.serialize_size) for bn, n in ft.nodes.items()})
    entry.detail["tokudb"] = {
        "header": h,
        "header_slots": ft.slots.slots,
        "block_table": bt,
        "descriptor": ft.descriptor,
        "nodes": ft.nodes,
        "rollback_blocks": ft.rollback_blocks,
        "per_height": heights,
        "fragmentation": frag,
        "block_map": block_map(ft),
        "file_slack_bytes": (ft.size - frag["total_size"]) if frag else None,
        "messages": sum(v["entries"] for k, v in heights.items() if k > 0),
        "message_bytes": sum(v["message_bytes"] for v in heights.values()),
        "dname": dname,
        "index": where.index,
        "method_names": METHOD_NAMES,
    }


# -- logs ---------------------------------------------------------------------------------

def _analyze_log(entry: FileEntry) -> None:
    name = posixpath.basename(entry.path)
    try:
        with ReadOnlyFile(entry.abspath) as f:
            if f.size == 0:
                entry.warnings.append(f"{entry.path}: empty log file")
                entry.sections["tokudb"] = TokuDBLogSection(role="log", table=None)
                return
            buf = f.mmap() or _PreadBuffer(f)
            lf = read_log(buf, f.size)
    except FileReadError as e:
        entry.add_error(str(e).split(": ", 1)[-1])
        return
    if lf.version is None and not LOG_NAME_RE.match(name):
        entry.warnings.append(f"{entry.path}: named like a TokuDB log but is not one")
    else:
        for off, msg in lf.errors:
            entry.add_error(msg, off)
    entry.sections["tokudb"] = TokuDBLogSection(role="log", table=None, log_version=lf.version,
                                                log_entries=lf.entries, bad_checksums=lf.bad_checksums)
    entry.detail["tokudb_log"] = lf


# -- tables --------------------------------------------------------------------------------

def _group_tables(dataset: Dataset, trees: list[FileEntry]) -> None:
    groups: dict[tuple[str, str], list[FileEntry]] = defaultdict(list)
    for e in trees:
        if e.table and e.database:
            groups[(e.database, e.table)].append(e)
    for (db, name), entries in sorted(groups.items()):
        t = dataset.table("tokudb", db, name)
        t.files = [e.path for e in entries]
        t.info = table_info(entries)

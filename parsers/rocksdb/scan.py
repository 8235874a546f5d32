"""RocksDB engine entry point: ``analyze(dataset, files, ctx)`` reads every RocksDB
directory handed over by the scan: CURRENT -> the MANIFEST (live files per column
family and level), the newest OPTIONS file (configured compression per level), every
SST (footer, properties, index: every block known), MyRocks' dictionary from the
``__system__`` column family (index number -> table and index), and puts the sizes
per SST, level, column family, index and table into the model."""
from __future__ import annotations

import posixpath
import struct

import numpy as np

from ..arrays import distinct
from ..fileio import FileReadError, ReadOnlyFile
from ..model import (UNIT_BAD_CHECKSUM, UNIT_COMPRESSED, Dataset, FileEntry, ScanContext, UnitFacts,
                     empty_units)
from .block import BlockError, iter_entries
from .compression import BlockDecodeError, name_of
from .dictionary import (Dictionary, DictionaryError, IndexStats, PER_PARTITION_CF_FLAG, REVERSE_CF_FLAG,
                         build_dictionary, read_index_stats, split_table_name)
from .footer import kBlockTrailerSize
from .logreader import iter_records
from .manifest import Manifest, read_manifest
from .options import MAX_OPTIONS_BYTES, OptionsError, OptionsFile, level_plan_text, read_options
from .section import (RocksColumnFamily, RocksDatasetSection, RocksFileSection, RocksIndex,
                      RocksIndexStats, RocksLevel, RocksSection, RocksSstSection)
from .sst import KIND_DATA, KIND_FOOTER, KIND_NAMES, SstFile, block_contents, read_sst
from .names import ENGINE, ENV_NAMES, INFO_LOG_RE, MANIFEST_RE, OPTIONS_RE, SST_RE, WAL_RE  # noqa: F401

#: MANIFEST files are read whole up to this size
MAX_MANIFEST_BYTES = 256 << 20
#: MyRocks index numbers below this are the data dictionary's own (END_DICT_INDEX_ID)
FIRST_USER_INDEX = 256
HIDDEN_PK_NAME = "HIDDEN_PK_ID"
#: MyRocks' comparators (rdb_comparator.h: "RocksDB_SE_v3.10", "rev:RocksDB_SE_v3.10")
MYROCKS_COMPARATOR = "RocksDB_SE_"
SYSTEM_CF = "__system__"


def kind_code(block_kind: int, ctype: int) -> int:
    """The unit kind of a block: its role and, for compressible blocks, its codec."""
    return (block_kind << 8) | ctype


def kind_name(code: int) -> str:
    bk, ct = code >> 8, code & 0xFF
    base = KIND_NAMES.get(bk, f"block {bk}")
    return base if bk == KIND_FOOTER else f"{base} · {name_of(ct)}"


def _units(entry: FileEntry, sst: SstFile) -> None:
    n = len(sst.kind)
    u = empty_units(n + (1 if sst.footer else 0))
    u["offset"][:n] = sst.offset
    u["stored"][:n] = sst.size_.astype(np.uint64) + kBlockTrailerSize
    logical = np.where(sst.logical >= 0, sst.logical, sst.size_.astype(np.int64))
    u["logical"][:n] = logical.astype(np.uint32)
    u["kind"][:n] = (sst.kind.astype(np.uint16) << 8) | sst.ctype
    flags = np.zeros(n, np.uint16)
    flags[sst.ctype != 0] |= UNIT_COMPRESSED
    flags[sst.checksum == 0] |= UNIT_BAD_CHECKSUM
    u["flags"][:n] = flags
    with np.errstate(divide="ignore", invalid="ignore"):
        u["fill"][:n] = np.where(logical > 0, sst.size_ / np.maximum(logical, 1), np.nan)
    data = np.flatnonzero(sst.kind == KIND_DATA)
    owners = np.full(n, -1, np.int32)
    comparator = sst.props.comparator_name if sst.props else ""
    # MyRocks keys start with their index number; other RocksDB keys mean nothing to us
    myrocks = comparator.split(":")[-1].startswith(MYROCKS_COMPARATOR)
    for j, i in enumerate(data[:len(sst.data_keys)] if myrocks else ()):
        k = sst.data_keys[j]
        if len(k) >= 4:
            owners[i] = struct.unpack_from(">I", k, 0)[0] & 0x7FFFFFFF
    u["owner"][:n] = owners
    if sst.footer:
        ft = sst.footer
        u["offset"][n] = ft.footer_offset
        u["stored"][n] = u["logical"][n] = ft.length
        u["kind"][n] = KIND_FOOTER << 8
        u["fill"][n] = 1.0
    entry.units = u
    entry.kind_names = {int(c): kind_name(int(c)) for c in distinct(u["kind"])}
    entry.unit_facts = UnitFacts(
        payload_bytes=np.where(u["flags"] & UNIT_COMPRESSED, u["stored"], 0).astype(np.uint32))


def _sst_section(sst: SstFile, verified: bool) -> RocksSstSection:
    p = sst.props
    ft = sst.footer
    data = sst.kind == KIND_DATA
    by_codec: dict[str, int] = {}
    for ct, cnt in zip(*np.unique(sst.ctype[data], return_counts=True)):
        by_codec[name_of(int(ct))] = int(cnt)
    logical = sst.logical[data]
    stats: list[RocksIndexStats] = []
    if p is not None and "__indexstats__" in p.user_collected:
        try:
            for st in read_index_stats(p.user_collected["__indexstats__"]):
                stats.append(RocksIndexStats(
                    index_number=st.index_number, cf_id=st.cf_id, rows=st.rows, data_size=st.data_size,
                    disk_bytes=st.actual_disk_size, entry_deletes=st.entry_deletes,
                    entry_singledeletes=st.entry_single_deletes, entry_merges=st.entry_merges,
                    entry_others=st.entry_others))
        except DictionaryError as e:
            sst.errors.append((f"__indexstats__: {e}", None))
    sec = RocksSstSection(
        role="sst", format_version=ft.format_version if ft else None,
        checksum_type=ft.checksum_name if ft else None,
        column_family=p.column_family_name if p and "rocksdb.column.family.name" in p.present else None,
        column_family_id=p.column_family_id if p and "rocksdb.column.family.id" in p.present else None,
        level=None, live=None,
        compression=p.compression_name if p else None,
        compression_options=p.compression_options if p else None,
        data_blocks=p.num_data_blocks if p else int(data.sum()),
        entries=p.num_entries if p else None, deletions=p.num_deletions if p else None,
        merge_operands=p.num_merge_operands if p else None,
        range_deletions=p.num_range_deletions if p else None,
        raw_key_bytes=p.raw_key_size if p else None, raw_value_bytes=p.raw_value_size if p else None,
        data_block_bytes=p.data_size if p else None, index_block_bytes=p.index_size if p else None,
        filter_block_bytes=p.filter_size if p else None,
        index_type=p.index_type_name if p else None,
        block_compression=by_codec,
        stored_data_bytes=int(sst.size_[data].astype(np.int64).sum()),
        uncompressed_data_bytes=int(logical.sum()) if len(logical) and (logical >= 0).all() else None,
        meta_blocks=sorted(sst.metaindex),
        comparator=p.comparator_name if p else None,
        creation_time=p.creation_time if p else None, file_creation_time=p.file_creation_time if p else None,
        original_file_number=p.orig_file_number if p else None,
        db_id=p.db_id if p else None, db_session_id=p.db_session_id if p else None,
        checksums_verified=verified, index_stats=stats)
    return sec


def _read_sst_entry(entry: FileEntry, ctx: ScanContext) -> SstFile | None:
    try:
        with ReadOnlyFile(entry.abspath) as f:
            sst = read_sst(f, entry.path, f.size, verify_checksums=ctx.verify_checksums, check=ctx.check)
            changed = f.changed()
    except FileReadError as e:
        entry.add_error(str(e).split(": ", 1)[-1])
        return None
    if changed:
        entry.warnings.append(changed)
    for msg, off in sst.errors:
        entry.add_error(msg, off)
    if sst.footer is None:
        return sst
    _units(entry, sst)
    entry.sections[ENGINE] = _sst_section(sst, bool(ctx.verify_checksums))
    entry.detail["sst"] = sst
    return sst


def _read_small(entry: FileEntry, limit: int) -> bytes | None:
    try:
        with ReadOnlyFile(entry.abspath) as f:
            if f.size > limit:
                entry.add_error(f"{f.size} bytes, more than the {limit} this reader takes")
                return None
            return f.pread(0, f.size)
    except FileReadError as e:
        entry.add_error(str(e).split(": ", 1)[-1])
        return None


def _system_records(ssts: list[tuple[FileEntry, SstFile]], ctx: ScanContext) -> dict[bytes, tuple[int, int, bytes]]:
    """The newest record per user key over the ``__system__`` column family's SSTs."""
    records: dict[bytes, tuple[int, int, bytes]] = {}
    for entry, sst in ssts:
        try:
            with ReadOnlyFile(entry.abspath) as f:
                for i in np.flatnonzero(sst.kind == KIND_DATA):
                    ctx.check()
                    for key, value in iter_entries(block_contents(sst, f, int(i), 64 << 20)):
                        if len(key) < 8:
                            continue
                        tag = int.from_bytes(key[-8:], "little")
                        seq, vtype = tag >> 8, tag & 0xFF
                        uk = key[:-8]
                        old = records.get(uk)
                        if old is None or seq >= old[0]:
                            records[uk] = (seq, vtype, bytes(value))
        except (FileReadError, BlockError, BlockDecodeError) as e:
            entry.add_error(f"reading the MyRocks dictionary: {e}", getattr(e, "offset", None))
    return records


def _dir_of(entry: FileEntry) -> str:
    return posixpath.dirname(entry.path)


def _index_names(dictionary: Dictionary, frm_key_names, d: str) -> dict[int, str]:
    names: dict[int, str] = {}
    for full, defs in dictionary.tables.items():
        db, table, part = split_table_name(full)
        keys = frm_key_names(d, db, table) if frm_key_names else None
        for ix in defs:
            if ix.index_type == 3:
                names[ix.index_number] = HIDDEN_PK_NAME
            elif keys is not None and ix.ordinal < len(keys) and len(keys) == sum(
                    1 for x in defs if x.index_type != 3):
                names[ix.index_number] = keys[ix.ordinal]
            else:
                names[ix.index_number] = "PRIMARY" if ix.index_type == 1 else f"key #{ix.ordinal + 1}"
    return names


def analyze_directory(dataset: Dataset, d: str, files: list[FileEntry], ctx: ScanContext,
                      frm_key_names=None) -> RocksDatasetSection:
    by_name = {posixpath.basename(e.path): e for e in files}
    # CURRENT -> MANIFEST
    manifest: Manifest | None = None
    manifest_name = None
    cur = by_name.get("CURRENT")
    if cur is not None:
        raw = _read_small(cur, 4096)
        if raw is not None:
            name = raw.decode("utf-8", "replace").strip()
            if MANIFEST_RE.match(name) and name in by_name:
                manifest_name = name
            else:
                cur.add_error(f"names {name!r}, which is not a MANIFEST file of this directory", 0)
    if manifest_name is None:
        mans = sorted((n for n in by_name if MANIFEST_RE.match(n)), key=lambda n: int(n.split("-")[1]))
        manifest_name = mans[-1] if mans else None
    for n, e in by_name.items():
        if MANIFEST_RE.match(n):
            e.sections[ENGINE] = RocksFileSection(role="manifest", manifest_in_use=(n == manifest_name))
    if manifest_name is not None:
        me = by_name[manifest_name]
        raw = _read_small(me, MAX_MANIFEST_BYTES)
        if raw is not None:
            manifest = read_manifest(raw)
            for pr in manifest.problems[:20]:
                me.add_error(pr.message, pr.offset)
            sec = me.sections[ENGINE]
            sec.version_edits = manifest.edits
            sec.live_files = len(manifest.files)
            sec.column_families = [cf.name for cf in sorted(manifest.column_families.values(), key=lambda c: c.id)]
    # OPTIONS (the newest is in effect)
    options: OptionsFile | None = None
    opts = sorted((n for n in by_name if OPTIONS_RE.match(n)), key=lambda n: int(n.split("-")[1]))
    for n in opts:
        e = by_name[n]
        raw = _read_small(e, MAX_OPTIONS_BYTES)
        sec = RocksFileSection(role="options", latest=(n == opts[-1]))
        e.sections[ENGINE] = sec
        if raw is None:
            continue
        try:
            o = read_options(raw.decode("utf-8", "replace"))
        except OptionsError as err:
            e.add_error(f"does not parse: {err}")
            continue
        sec.rocksdb_version = o.rocksdb_version
        if n == opts[-1]:
            options = o
    # WAL files: records counted
    for n, e in by_name.items():
        if WAL_RE.match(n):
            raw = _read_small(e, 1 << 30)
            if raw is not None:
                problems = []
                count = sum(1 for _ in iter_records(raw, problems))
                for pr in problems[:5]:
                    e.warnings.append(f"{e.path} @ offset {pr.offset}: {pr.message} (a WAL's tail is "
                                      f"often cut by a crash; the engine then stops replay there)")
                e.sections[ENGINE] = RocksFileSection(role="wal", records=count)
    # SSTs
    ssts: list[tuple[FileEntry, SstFile]] = []
    sst_entries = sorted((e for e in files if e.role == "sst"), key=lambda e: e.path)
    for k, e in enumerate(sst_entries):
        ctx.check()
        ctx.report(k, len(sst_entries), f"reading {e.path}")
        sst = _read_sst_entry(e, ctx)
        if sst is not None and sst.footer is not None:
            ssts.append((e, sst))
    numbered = {e.path: int(m.group(1)) for e, _ in ssts if (m := SST_RE.match(posixpath.basename(e.path)))}
    on_disk = set(numbered.values())
    obsolete, missing = [], []
    if manifest is not None:
        for e, sst in ssts:
            num = numbered.get(e.path)
            lf = manifest.files.get(num) if num is not None else None
            sec = e.sections[ENGINE]
            sec.live = lf is not None
            if lf is not None:
                sec.level = lf.level
                if sec.column_family is None:
                    sec.column_family = manifest.cf_name(lf.cf_id)
                    sec.column_family_id = lf.cf_id
                if lf.size != e.apparent_bytes:
                    e.add_error(f"the MANIFEST records {lf.size} bytes, the file has {e.apparent_bytes}")
            else:
                obsolete.append(posixpath.basename(e.path))
                e.warnings.append(f"{e.path}: not in the MANIFEST's live files: obsolete (the engine deletes "
                                  f"it at its next start or purge), not part of any table's size")
        missing = sorted(lf.name for num, lf in manifest.files.items() if num not in on_disk)
    # MyRocks dictionary
    live = [(e, s) for e, s in ssts if e.sections[ENGINE].live is not False]
    system = [(e, s) for e, s in live if e.sections[ENGINE].column_family == SYSTEM_CF]
    dictionary = build_dictionary(_system_records(system, ctx)) if system else Dictionary()
    names = _index_names(dictionary, frm_key_names, d)
    cf_names = {cf.id: cf.name for cf in manifest.column_families.values()} if manifest else {}
    for e, s in ssts:
        sec = e.sections[ENGINE]
        if sec.column_family_id is not None and sec.column_family:
            cf_names.setdefault(sec.column_family_id, sec.column_family)
    for e, s in ssts:
        owners = {int(o) for o in distinct(e.units["owner"]) if o >= 0}
        e.owner_names = {}
        for o in owners:
            ix = dictionary.indexes.get(o)
            if ix is not None:
                part = f" ({ix.partition})" if ix.partition else ""
                e.owner_names[o] = f"{ix.table}{part}.{names.get(o, '?')}"
            elif o < FIRST_USER_INDEX and e.sections[ENGINE].column_family == SYSTEM_CF:
                e.owner_names[o] = f"dictionary type {o}"
            else:
                e.owner_names[o] = f"index {o}"
    # per index, from __indexstats__ of live SSTs
    per_index: dict[int, dict] = {}
    for e, s in live:
        sec = e.sections[ENGINE]
        for st in sec.index_stats or []:
            acc = per_index.setdefault(st.index_number, {"rows": 0, "data_size": 0, "disk": 0, "ssts": [],
                                                         "levels": set(), "cf": st.cf_id, "del": 0, "sdel": 0})
            acc["rows"] += st.rows
            acc["del"] += st.entry_deletes
            acc["sdel"] += st.entry_singledeletes
            acc["data_size"] += st.data_size
            acc["disk"] += st.disk_bytes
            acc["ssts"].append(posixpath.basename(e.path))
            if sec.level is not None:
                acc["levels"].add(sec.level)
    indexes: list[RocksIndex] = []
    for num in sorted(set(per_index) | set(dictionary.indexes)):
        ix = dictionary.indexes.get(num)
        acc = per_index.get(num, {"rows": 0, "data_size": 0, "disk": 0, "ssts": [], "levels": set(),
                                  "cf": ix.cf_id if ix else None, "del": 0, "sdel": 0})
        if ix is None and num < FIRST_USER_INDEX:
            continue
        indexes.append(RocksIndex(
            index_number=num, table=ix.table if ix else None, partition=ix.partition if ix else None,
            name=names.get(num) if ix else None, index_type=ix.type_name if ix else None,
            column_family=cf_names.get(ix.cf_id if ix else acc["cf"], f"cf#{acc['cf']}"),
            kv_format_version=ix.kv_format_version if ix else None,
            rows=acc["rows"], data_size=acc["data_size"], disk_bytes=acc["disk"],
            entry_deletes=acc["del"], entry_singledeletes=acc["sdel"],
            sst_files=sorted(acc["ssts"]), levels=sorted(acc["levels"])))
    # tables
    by_table: dict[str, list[RocksIndex]] = {}
    for ix in indexes:
        if ix.table:
            by_table.setdefault(ix.table, []).append(ix)
    for full, ixs in sorted(by_table.items()):
        db, name = full.split(".", 1)
        t = dataset.table(ENGINE, db, name)
        ssts_of = sorted({s for ix in ixs for s in ix.sst_files})
        t.files = [posixpath.join(d, s) for s in ssts_of]
        pk = [ix for ix in ixs if ix.index_type in ("primary", "hidden primary")]
        t.info = {
            "rows": sum(ix.rows for ix in pk) if pk else None,
            "data_size": sum(ix.data_size for ix in ixs),
            "disk_bytes": sum(ix.disk_bytes for ix in ixs),
            "data_disk_bytes": sum(ix.disk_bytes for ix in pk),
            "index_disk_bytes": sum(ix.disk_bytes for ix in ixs if ix not in pk),
            "indexes": [{"name": ix.name, "partition": ix.partition, "index_number": ix.index_number,
                         "column_family": ix.column_family, "rows": ix.rows, "data_size": ix.data_size,
                         "disk_bytes": ix.disk_bytes, "levels": ix.levels, "sst_files": len(ix.sst_files)}
                        for ix in ixs],
            "partitions": sorted({ix.partition for ix in ixs if ix.partition}),
        }
        saved = {ix.index_number: dictionary.saved_stats.get(ix.index_number) for ix in ixs}
        if all(saved.values()):
            # what information_schema.TABLES shows: the index statistics the server last saved in
            # the dictionary (ha_rocksdb::info: data_file_length = the primary key's actual_disk_size,
            # index_file_length = the secondary keys', records = the primary key's rows)
            t.info["engine_reported"] = {
                "table_rows": sum(saved[ix.index_number].rows for ix in pk) if pk else None,
                "data_length": sum(saved[ix.index_number].actual_disk_size for ix in pk),
                "index_length": sum(saved[ix.index_number].actual_disk_size for ix in ixs if ix not in pk),
                "source": "INDEX_STATISTICS records of the __system__ column family",
            }
        for s in ssts_of:
            fe = dataset.file(posixpath.join(d, s))
            if fe is not None and fe.database is None:
                tables = {dictionary.indexes[o].table for o in fe.owner_names if o in dictionary.indexes}
                if len(tables) == 1:
                    fe.database, fe.table = db, name
    # levels
    levels: dict[tuple[str, int], dict] = {}
    for e, s in live:
        sec = e.sections[ENGINE]
        if sec.level is None:
            continue
        key = (sec.column_family or "?", sec.level)
        acc = levels.setdefault(key, {"files": 0, "file_bytes": 0, "data": 0, "rk": 0, "rv": 0, "entries": 0,
                                      "comp": set(), "blocks": {}})
        acc["files"] += 1
        acc["file_bytes"] += e.apparent_bytes
        acc["data"] += sec.data_block_bytes or 0
        acc["rk"] += sec.raw_key_bytes or 0
        acc["rv"] += sec.raw_value_bytes or 0
        acc["entries"] += sec.entries or 0
        if sec.compression:
            acc["comp"].add(sec.compression)
        for c, n in (sec.block_compression or {}).items():
            acc["blocks"][c] = acc["blocks"].get(c, 0) + n
    cf_opts = options.cfs if options else {}
    nonempty: dict[str, list[int]] = {}
    for (cf, lv) in levels:
        nonempty.setdefault(cf, []).append(lv)
    level_secs = []
    for (cf, lv), acc in sorted(levels.items()):
        co = cf_opts.get(cf)
        configured = None
        if co is not None:
            lvls = sorted(nonempty.get(cf, []))
            base = min((x for x in lvls if x > 0), default=co.num_levels - 1)
            configured = name_of(co.configured(lv, base, bottommost=bool(lvls) and lv == max(lvls) and lv > 0))
        level_secs.append(RocksLevel(
            column_family=cf, level=lv, files=acc["files"], file_bytes=acc["file_bytes"],
            data_block_bytes=acc["data"], raw_key_bytes=acc["rk"], raw_value_bytes=acc["rv"],
            entries=acc["entries"], compression=sorted(acc["comp"]), data_blocks_by_compression=acc["blocks"],
            configured=configured))
    cfs = []
    ids = sorted(cf_names)
    for cid in ids:
        name = cf_names[cid]
        co = cf_opts.get(name)
        flags = dictionary.cf_flags.get(cid)
        cfs.append(RocksColumnFamily(
            name=name, id=cid, reverse=bool(flags & REVERSE_CF_FLAG) if flags is not None else None,
            compression=name_of(co.compression) if co else None,
            compression_per_level=[name_of(c) for c in co.compression_per_level] if co else None,
            bottommost_compression=name_of(co.bottommost_compression) if co else None,
            dynamic_level_bytes=co.dynamic_level_bytes if co else None,
            num_levels=co.num_levels if co else None, block_size=co.block_size if co else None,
            format_version=co.format_version if co else None,
            level_plan=level_plan_text(co) if co else None))
    for p in dictionary.problems:
        dataset.warnings.append(f"{d or '.'}: MyRocks dictionary: {p}")
    dataset.detail.setdefault(ENGINE, {})[d] = {"dictionary": dictionary, "manifest": manifest, "options": options}
    return RocksDatasetSection(
        path=d or ".", manifest=manifest_name, options_file=opts[-1] if opts else None,
        rocksdb_version=options.rocksdb_version if options else None,
        comparator=manifest.comparator if manifest else None,
        column_families=cfs, levels=level_secs, indexes=indexes, obsolete_ssts=sorted(obsolete),
        missing_ssts=missing)


def analyze(dataset: Dataset, files: list[FileEntry], ctx: ScanContext, frm_key_names=None) -> None:
    groups: dict[str, list[FileEntry]] = {}
    for e in files:
        groups.setdefault(_dir_of(e), []).append(e)
    dirs = []
    for d, fs in sorted(groups.items()):
        for e in fs:
            n = posixpath.basename(e.path)
            if n in ENV_NAMES or INFO_LOG_RE.match(n):
                e.sections.setdefault(ENGINE, RocksFileSection(role=e.role))
        dirs.append(analyze_directory(dataset, d, fs, ctx, frm_key_names))
    if dirs:
        dataset.sections[ENGINE] = RocksSection(directories=dirs)
    ctx.report(1, 1, "rocksdb done")

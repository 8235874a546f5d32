"""RocksDB / MyRocks what-if: one target per column family and LSM level (the unit
RocksDB's compression options act on: ``compression_per_level``,
``bottommost_compression``), its SSTs' data blocks re-encoded with each codec the
way the block-based table builder frames them, and the options that get there.

Storage model (table/block_based/block_based_table_builder.cc ``CompressAndVerifyBlock``,
``GoodCompressionRatio``; util/compression.h): every data block is compressed on its
own; the stored block is the compressed form (snappy raw; zlib as raw deflate, lz4,
lz4hc, bzip2 and zstd behind a varint32 of the uncompressed size) unless it does not
save at least 1/8 of the block (``compressed_size < raw_size - raw_size / 8``), in
which case the block is stored raw; a 5-byte trailer (type + checksum) follows every
block. Index, filter, properties and footer bytes are kept as they are (the index
block is compressed too, by the same codec, but it is ~1% of a file)."""
from __future__ import annotations

import re
from dataclasses import dataclass

import lz4.block
import numpy as np

from dbxray.parsers.codecs import general as g
from dbxray.parsers.model import Dataset, FileEntry
from dbxray.parsers.rocksdb.coding import encode_varint32
from dbxray.parsers.rocksdb.sst import KIND_DATA, KIND_DICT

from ..models import Model
from ..registry import Codec
from ..sources import SourceUnavailable, UnitSet, engine_units
from ..targets import Result, Run, Target, measure_speeds, model_pairs, shift
from .base import WhatIfEngine

#: format.h kBlockTrailerSize
BLOCK_TRAILER = 5
#: codec family -> RocksDB CompressionType option name
ROCKSDB_TYPES = {"none": "kNoCompression", "snappy": "kSnappyCompression", "zlib": "kZlibCompression",
                 "lz4": "kLZ4Compression", "lz4hc": "kLZ4HCCompression", "zstd": "kZSTD",
                 "bzip2": "kBZip2Compression"}
#: the names an SST's ``rocksdb.compression`` property holds -> codec family
WRITTEN = {"NoCompression": "none", "Snappy": "snappy", "Zlib": "zlib", "LZ4": "lz4", "LZ4HC": "lz4hc",
           "ZSTD": "zstd", "ZSTDNotFinal": "zstd", "BZip2": "bzip2"}
#: CompressionOptions::kDefaultCompressionLevel and what each codec makes of it
#: (util/compression.h: zlib Z_DEFAULT_COMPRESSION 6, ZSTD 3, LZ4HC 0 -> 9, BZip2 blockSize100k 9)
kDefaultCompressionLevel = 32767
DEFAULT_LEVEL = {"zlib": 6, "zstd": 3, "lz4hc": 9, "bzip2": 9}
MODEL = "rocksdb_blocks"


def current_codec(compression: str | None, options: str | None) -> Codec | None:
    """The codec an SST was written with, from its properties."""
    fam = WRITTEN.get(compression or "")
    if fam is None:
        return None
    if fam in ("none", "snappy", "lz4"):
        return Codec(fam)
    m = re.search(r"(?:^|;\s*)level=(-?\d+)", options or "")
    level = int(m.group(1)) if m else kDefaultCompressionLevel
    if level == kDefaultCompressionLevel:
        level = DEFAULT_LEVEL[fam]
    return Codec(fam, level)


@dataclass
class RocksDBBlocks(Model):
    """Data blocks compressed one by one, stored raw when compression saves < 1/8."""

    dictionary: bytes | None = None
    #: a level's units come from several files: each unit's file and each file's dictionary
    unit_file: np.ndarray | None = None
    dictionaries: tuple = ()

    def __post_init__(self):
        self.name = MODEL

    def _dictionary(self, unit: int | None) -> bytes | None:
        if self.unit_file is not None and unit is not None and self.dictionaries:
            return self.dictionaries[int(self.unit_file[unit])]
        return self.dictionary

    def supports(self, codec: Codec) -> str | None:
        if codec.is_chain:
            return "ClickHouse codec chains do not apply to RocksDB"
        if codec.family not in ROCKSDB_TYPES:
            return f"RocksDB has no {codec.family} block compression"
        return None

    def stored(self, codec: Codec, payload: bytes, unit: int | None = None) -> int:
        """Bytes of one block as the table builder stores it (trailer not included)."""
        raw = len(payload)
        fam = codec.family
        if fam == "none" or raw == 0:
            return raw
        prefix = len(encode_varint32(raw))
        if fam == "snappy":
            c = codec.compressed_size(payload)
        elif fam == "zlib":
            c = prefix + codec.compressed_size(payload) - 6          # raw deflate: no zlib header/adler
        elif fam == "lz4":
            # util/compression.h LZ4_Compress: LZ4_compress_fast_continue on a fresh stream
            # (acceleration 1), which python-lz4's block API calls; it differs from
            # LZ4_compress_default below 64 KiB
            c = prefix + len(lz4.block.compress(payload, store_size=False))
        elif fam == "zstd" and self._dictionary(unit):
            c = prefix + len(g.zstd_compress_dict(payload, self._dictionary(unit), codec.level or 3))
        else:
            c = prefix + codec.compressed_size(payload)
        return c if c < raw - raw // 8 else raw

    def project(self, codec: Codec, payload: bytes, unit: int | None = None) -> int:
        return self.stored(codec, payload, unit) + BLOCK_TRAILER

    def max_bytes(self, logical: np.ndarray, codec: Codec | None = None, units=None) -> np.ndarray:
        """A block takes at most its raw bytes and trailer: the table builder keeps it raw
        unless compression saves at least 1/8 (block_based_table_builder.cc)."""
        return np.asarray(logical, dtype=np.int64) + BLOCK_TRAILER


def _data_blocks(entry: FileEntry, units: np.ndarray) -> np.ndarray:
    return (units["kind"] >> 8) == KIND_DATA


def _groups(dataset: Dataset) -> dict[tuple, list[FileEntry]]:
    out: dict[tuple, list[FileEntry]] = {}
    for e in dataset.files:
        if e.engine != "rocksdb" or e.role != "sst" or e.units is None:
            continue
        sec = e.sections.get("rocksdb")
        if sec is None or sec.get("live") is False:
            continue
        d = e.path.rsplit("/", 1)[0] if "/" in e.path else "."
        out.setdefault((d, sec.get("column_family") or "?", sec.get("level")), []).append(e)
    return out


def level_units(entries: list[FileEntry]) -> tuple[UnitSet, list[FileEntry], np.ndarray, list[str]]:
    """One population of every data block of a level's files (sampled as one: a level of a
    thousand 50 KiB files is a thousand strata of 10 blocks otherwise), with each unit's file."""
    bases, used, notes = [], [], []
    for e in entries:
        try:
            bases.append(engine_units(e, _data_blocks))
            used.append(e)
        except SourceUnavailable as err:
            notes.append(str(err))
    sizes = np.array([len(b) for b in bases], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    unit_file = np.repeat(np.arange(len(bases)), sizes) if len(bases) else np.zeros(0, np.int64)

    def payload(k: int) -> bytes:
        j = int(unit_file[k])
        return bases[j].payload(k - int(starts[j]))
    cat = (lambda xs: np.concatenate(xs) if xs else np.zeros(0, np.int64))
    unitset = UnitSet(
        label=", ".join(e.path for e in used[:3]) + (f" (+{len(used) - 3})" if len(used) > 3 else ""),
        logical=cat([b.logical for b in bases]).astype(np.int64),
        strata=cat([b.strata for b in bases]).astype(np.int64),
        payload=payload,
        kinds=[k for b in bases for k in (b.kinds or [None] * len(b))],
        probe=cat([b.probe if b.probe is not None else np.zeros(len(b), bool) for b in bases]).astype(bool),
        zero=cat([b.zero if b.zero is not None else np.zeros(len(b), bool) for b in bases]).astype(bool),
        order_key=cat([b.order_key.astype(np.int64) + (np.int64(j) << np.int64(40))
                       for j, b in enumerate(bases)]),
        meta={"index": [b.meta["index"] for b in bases]})
    return unitset, used, unit_file, notes


def level_target(run: Run, key: tuple, entries: list[FileEntry], codecs: list[Codec]) -> Target:
    d, cf, level = key
    where = f"{d}/{cf}/L{level}" if level is not None else f"{d}/{cf}/" + entries[0].path.rsplit("/", 1)[-1]
    secs = [e.sections["rocksdb"] for e in entries]
    written = sorted({s.get("compression") for s in secs if s.get("compression")})
    cur = current_codec(secs[0].get("compression"), secs[0].get("compression_options")) if len(written) == 1 else None
    t = Target(where, "rocksdb", 0, 0, current_codec=cur.name if cur else ", ".join(written) or None,
               primary_model=MODEL,
               info={"column_family": cf, "level": level, "directory": d, "files": len(entries),
                     "written": written})
    run.check()
    unitset, used, unit_file, notes = level_units(sorted(entries, key=lambda e: e.path))
    t.notes.extend(notes)
    dicts = tuple((e.detail.get("sst").compression_dict if e.detail.get("sst") is not None else None) for e in used)
    model = RocksDBBlocks(unit_file=unit_file, dictionaries=dicts)
    pairs = model_pairs(codecs, [model], t.notes)
    if cur is not None and cur.name not in {c.name for c, _ in pairs} and model.supports(cur) is None:
        pairs.append((cur, model))
    stored_data = other = dict_bytes = 0
    for e, idx in zip(used, unitset.meta["index"]):
        sd = int(e.units["stored"][idx].astype(np.int64).sum())
        stored_data += sd
        other += int(e.lasting_allocated_bytes) - sd          # index, filter, meta, footer, fs rounding
        if e.detail.get("sst") is not None and e.detail["sst"].compression_dict:
            dict_bytes += int(e.units["stored"][(e.units["kind"] >> 8) == KIND_DICT].astype(np.int64).sum())
    t.current_bytes = sum(int(e.lasting_allocated_bytes) for e in entries)
    t.logical_bytes = int(unitset.logical.sum())
    if len(unitset):
        proj = run.project(unitset, pairs)
        speeds = measure_speeds(run, proj, sorted({c for c, _ in pairs}, key=lambda c: c.name))
        for (cname, mname), pr in proj.pairs.items():
            # the zstd dictionary block is written only for the dictionary codec projected with it
            keep = other if cname.startswith("zstd") else other - dict_bytes
            cs, ds = speeds.get(cname, (None, None))
            t.results.append(Result(cname, mname, shift(pr.estimate, keep), cs, ds))
    if len(written) > 1:
        t.notes.append(f"files of this level were written with {', '.join(written)} (the level's codec changed "
                       f"or the bottommost rule applied when they were written)")
    if dict_bytes:
        t.notes.append("zstd projections use each file's own compression dictionary (rocksdb.compression_dict); "
                       "the other codecs are projected without a dictionary (and without its block)")
    t.notes.append("index, filter and properties blocks kept as they are; RocksDB compresses the index "
                   "block with the same codec (about 1% of a file)")
    return t


#: codecs RocksDB has but MyRocks builds usually lack (MariaDB's and Percona's packages list
#: ``rocksdb_supported_compression_types`` without BZip2): projected, never advised
NOT_IN_MYROCKS_BUILDS = ("bzip2",)


def _option_name(written: str | None) -> str:
    fam = WRITTEN.get(written or "")
    return ROCKSDB_TYPES[fam] if fam else "kSnappyCompression"


def plan_context(dataset: Dataset) -> dict[tuple, dict]:
    """Per (directory, column family): its options and non-empty levels, from the scan's section."""
    out: dict[tuple, dict] = {}
    sec = dataset.sections.get("rocksdb") or {}
    for dsec in sec.get("directories", []) or []:
        levels: dict[str, list[int]] = {}
        for lv in dsec.get("levels", []) or []:
            levels.setdefault(lv["column_family"], []).append(lv["level"])
        for cf in dsec.get("column_families", []) or []:
            out[(dsec.get("path"), cf.get("name"))] = {"cf": cf, "levels": sorted(levels.get(cf.get("name"), []))}
    return out


class RocksDBWhatIf(WhatIfEngine):
    name = "rocksdb"

    def wants_dataset(self, dataset: Dataset) -> bool:
        return bool(_groups(dataset))

    def dataset_targets(self, run: Run, dataset: Dataset, codecs: list[Codec]) -> list[Target]:
        out = []
        groups = _groups(dataset)
        ctx = plan_context(dataset)
        for key in sorted(groups, key=lambda k: (k[0], k[1], -1 if k[2] is None else k[2])):
            t = level_target(run, key, groups[key], codecs)
            c = ctx.get((key[0], key[1]))
            if c is not None and key[2] is not None:
                cf, levels = c["cf"], c["levels"]
                nonzero = [x for x in levels if x > 0]
                t.info.update({
                    "num_levels": cf.get("num_levels") or 7,
                    "compression": cf.get("compression"),
                    "per_level": cf.get("compression_per_level") or [],
                    "bottommost_compression": cf.get("bottommost_compression"),
                    "dynamic": bool(cf.get("dynamic_level_bytes")),
                    "base_level": min(nonzero) if nonzero else None,
                    "bottommost": bool(nonzero) and key[2] == max(nonzero),
                })
            out.append(t)
        return out

    def available(self, codec: Codec, layout: str | None = None) -> bool:
        return codec.family in ROCKSDB_TYPES and codec.family not in NOT_IN_MYROCKS_BUILDS

    def advisable(self, target: Target) -> bool:
        info = target.info or {}
        return (info.get("level") is not None and "num_levels" in info
                and info.get("column_family") not in (None, "?", "__system__"))

    def ddl(self, target: Target, codec: Codec, model: str) -> str:
        return cf_options_ddl(target.info or {}, codec)

    def combine_advice(self, entries: list[dict], targets: list[Target]) -> list[dict]:
        """One entry per column family advised on several levels (issue 17 item 2): each level's
        own line would set the family's whole ``compression_per_level`` (and its one
        ``compression_opts`` level) with only its own level changed, so applied one after the
        other they undo each other. Such a family's level lines become one entry
        (family_entry): every level's smallest pick in one option string. A family with one
        advised level keeps its line(s)."""
        by_name = {t.target: t for t in targets}

        def fam_of(a: dict) -> tuple | None:
            t = by_name.get(a["target"])
            if t is None or a.get("kind", "codec") != "codec":
                return None
            info = t.info or {}
            return (info.get("directory"), info.get("column_family"))

        fams: dict[tuple, list[tuple[Target, dict]]] = {}
        for a in entries:
            key = fam_of(a)
            if key is not None and "smallest" in str(a.get("choice")):
                fams.setdefault(key, []).append((by_name[a["target"]], a))
        out: list[dict] = []
        done: set[tuple] = set()
        for a in entries:
            key = fam_of(a)
            if key is None or len(fams.get(key, [])) < 2:
                out.append(a)
                continue
            if key in done:
                continue                    # the family's entry stands for its level lines
            done.add(key)
            family = [t for t in targets if ((t.info or {}).get("directory"),
                                             (t.info or {}).get("column_family")) == key]
            entry = family_entry(key, fams[key], family)
            if entry is not None:
                out.append(entry)
        return out


def _leveled(fam: str) -> bool:
    """Whether compression_opts' level applies to a codec family (zlib, zstd, lz4hc, bzip2)."""
    return fam in DEFAULT_LEVEL


def _level_index(ti: dict) -> int:
    """A level's entry in compression_per_level (relative to the base level with dynamic level bytes)."""
    level = int(ti.get("level") or 0)
    if ti.get("dynamic") and ti.get("base_level") is not None and level > 0:
        return level - int(ti["base_level"]) + 1
    return level


def _decided_by_bottom(ti: dict) -> bool:
    bottom = ti.get("bottommost_compression")
    return bool(ti.get("bottommost") and bottom and bottom in WRITTEN)


def family_entry(key: tuple, picks: list[tuple[Target, dict]], family: list[Target]) -> dict | None:
    """The one advice entry of a column family advised on several levels (``picks``: (level
    target, its own smallest line)): every advised level written with the smallest codec its
    projections give, every other level as it is, in one option string; its saving the levels'
    savings summed, their estimates combined as independent strata (targets.combine: variances
    add, as for a partitioned table's files and the level plan); None when that saving is not
    positive beyond its interval.

    compression_opts holds one level for every level whose codec takes one (zlib, zstd, lz4hc,
    bzip2; bottommost_compression_opts its own where bottommost_compression decides): the plan
    is made for each level the run projected (and none set: then the advised levels choose
    among codecs without a level), each advised level taking its smallest codec of that level,
    each level kept re-written at it where its codec takes one; the smallest such plan whose
    every changed level was projected is the entry."""
    from ..registry import parse_codec
    from ..targets import combine
    d, cf = key
    pick = {t.target: a for t, a in picks}
    info = dict(picks[0][0].info or {})
    n = int(info.get("num_levels") or 7)
    per = list(info.get("per_level") or []) or [info.get("compression") or "Snappy"] * n
    per_kinds = [_option_name(x) for x in per] + [_option_name(per[-1])] * max(0, n - len(per))
    levels = sorted((t for t in family if (t.info or {}).get("level") is not None),
                    key=lambda t: int(t.info["level"]))

    def now(t: Target) -> Codec | None:
        cur = t.current_codec if t.current_codec and "," not in t.current_codec else None
        return parse_codec(cur) if cur else None

    def choices(t: Target) -> list[tuple[Codec, Result]]:
        out = []
        for r in t.results:
            if r.model == MODEL and r.codec != t.current_codec:
                c = parse_codec(r.codec)
                if c.family in ROCKSDB_TYPES and c.family not in NOT_IN_MYROCKS_BUILDS:
                    out.append((c, r))
        return out

    opt_levels = {c.level for t in levels if t.target in pick and not _decided_by_bottom(t.info)
                  for c, _ in choices(t) if _leveled(c.family)}
    opt_levels |= {c.level for t in levels if t.target not in pick and not _decided_by_bottom(t.info)
                   and (c := now(t)) is not None and _leveled(c.family)} if opt_levels else set()
    best = None
    for opt_level in [None] + sorted(opt_levels):
        rows, ok = [], True
        for t in levels:
            bottom = _decided_by_bottom(t.info)
            cur = now(t)
            options: list[tuple[Codec, Result | None, float]] = []
            if cur is not None:
                kept = Codec(cur.family, opt_level) if opt_level is not None and not bottom and \
                    _leveled(cur.family) else cur
                if kept.name == cur.name:
                    options.append((cur, None, float(t.current_bytes)))
                else:                   # the shared level re-writes a kept level too
                    r = next((r for r in t.results if r.codec == kept.name and r.model == MODEL), None)
                    if r is not None:
                        options.append((kept, r, r.estimate.projected))
            elif t.target not in pick:
                rows.append((t, None, None))        # files of several codecs, not advised: as they are
                continue
            if t.target in pick:
                for c, r in choices(t):
                    if bottom or not _leveled(c.family) or (opt_level is not None and c.level == opt_level):
                        options.append((c, r, r.estimate.projected))
            if not options:
                ok = False              # this level cannot be written (or kept) under this plan
                break
            c, r, _ = min(options, key=lambda o: o[2])
            rows.append((t, c, r))
        changed = [(t, c, r) for t, c, r in rows if r is not None] if ok else []
        if not changed:
            continue
        est = combine([r.estimate for _, _, r in changed]) if len(changed) > 1 else changed[0][2].estimate
        base = sum(int(t.current_bytes) for t, _, _ in changed)
        if best is None or est.projected - base < best[2].projected - best[3]:
            best = (opt_level, rows, est, base)
    if best is None:
        return None
    opt_level, rows, est, base = best
    lo_save, hi_save = base - int(round(est.hi)), base - int(round(est.lo))
    if lo_save <= 0:
        return None                     # the levels together: not a saving beyond the interval
    current = sum(int(t.current_bytes) for t in levels)
    saving = base - int(round(est.projected))
    plan_kinds = list(per_kinds)
    bottom_codec: Codec | None = None
    for t, c, r in rows:
        if c is None or r is None:
            continue                    # a level kept keeps its configured entry too
        if _decided_by_bottom(t.info):
            bottom_codec = c
        else:
            plan_kinds[min(max(_level_index(t.info), 0), n - 1)] = ROCKSDB_TYPES[c.family]
    opts = []
    if plan_kinds != per_kinds:
        if not info.get("per_level") and len(set(plan_kinds)) == 1:
            opts.append(f"compression={plan_kinds[0]}")
        else:
            opts.append("compression_per_level=" + ":".join(plan_kinds))
    if opt_level is not None:
        opts.append(f"compression_opts={{level={opt_level}}}")
    if bottom_codec is not None:
        opts.append(f"bottommost_compression={ROCKSDB_TYPES[bottom_codec.family]}")
        if bottom_codec.level is not None and bottom_codec.family != "none":
            opts.append(f"bottommost_compression_opts={{level={bottom_codec.level};enabled=true}}")
    live = not any(o.startswith("compression_per_level=") for o in opts)
    changed_levels = [(t, c) for t, c, r in rows if r is not None]
    where = ", ".join(f"L{t.info['level']}" for t, _ in changed_levels)
    if live:
        ddl = f"{live_statement(cf, opts)}  -- existing files change as compactions rewrite {where}"
    else:
        ddl = (f"-- my.cnf: {mycnf_line(cf, opts)}  -- "
               + ("dynamic level bytes: entries relative to the base level "
                  f"L{info['base_level']}; " if info.get("dynamic") and info.get("base_level") is not None else "")
               + f"{NOT_CHANGEABLE_NOTE}; existing files change as compactions rewrite {where}")
    # the plan as project_level_plan reads it: every level's codec, bottom= where that option decides
    text_per = []
    for i, kind in enumerate(plan_kinds):
        fam = next(f for f, k in ROCKSDB_TYPES.items() if k == kind)
        lv = opt_level if opt_level is not None and _leveled(fam) else None
        for t, c, _ in rows:
            if c is not None and not _decided_by_bottom(t.info) and min(max(_level_index(t.info), 0), n - 1) == i:
                lv = c.level
        text_per.append(f"{fam}:{lv if lv is not None else DEFAULT_LEVEL[fam]}" if _leveled(fam) else fam)
    bottom_row = next(((t, c) for t, c, _ in rows if c is not None and _decided_by_bottom(t.info)), None)
    plan_text = ",".join(text_per) + (f",bottom={bottom_row[1].name}" if bottom_row else "")
    notes = [f"one setting for {cf}'s {where} (its other levels as they are; one line per level would "
             f"undo the others); saving: the levels' summed, intervals combined"]
    final = {t.target: (c, r) for t, c, r in rows}
    moved = [f"L{t.info['level']} {pick[t.target]['codec']} -> "
             + (f"{final[t.target][0].name}" if final[t.target][1] is not None else f"stays {t.current_codec}")
             for t in levels if t.target in pick and (final[t.target][1] is None
                                                      or final[t.target][0].name != pick[t.target]["codec"])]
    kept = [f"L{t.info['level']} {t.current_codec} -> {c.name}" for t, c in changed_levels if t.target not in pick]
    if moved or kept:
        notes.append(f"compression_opts holds one level for all levels: "
                     + (f"level {opt_level}" if opt_level is not None else "left as it is")
                     + f" gives the smallest plan ({'; '.join(moved + kept)}; a level alone would pick otherwise)")
    for t, _ in changed_levels:
        v = pick.get(t.target, {}).get("verdict")
        if v:
            notes.append(f"L{t.info['level']}: {v}")
    return {"target": f"{d}/{cf}", "kind": "codec",
            "codec": ", ".join(f"L{t.info['level']} {c.name}" for t, c in changed_levels),
            "projected_bytes": current - saving, "current_bytes": current,
            "saving_bytes": saving, "saving_bytes_ci95": [lo_save, hi_save], "compared_with": "current",
            "ddl": ddl, "choice": "smallest", "model": MODEL,
            "ci95": [current - hi_save, current - lo_save],
            "decompress_mb_s": None, "files": [t.target for t, _ in changed_levels],
            "levels": {t.target: c.name for t, c in changed_levels}, "level_plan": plan_text,
            "column_family": cf, "verdict": "; ".join(notes)}


#: MariaDB 10.11's RocksDB 6.29 refuses compression_per_level in rocksdb_update_cf_options
#: ("Option not changeable", checked on a private server); compression, compression_opts,
#: bottommost_compression and bottommost_compression_opts change while it runs
NOT_CHANGEABLE_NOTE = ("compression_per_level cannot be changed while the server runs (MyRocks: \"Option "
                       "not changeable\"): set it in my.cnf and restart")


def live_statement(cf: str, opts: list[str]) -> str:
    return f"SET GLOBAL rocksdb_update_cf_options='{cf}={{{';'.join(opts)}}}';"


def mycnf_line(cf: str, opts: list[str]) -> str:
    return f"rocksdb_override_cf_options='{cf}={{{';'.join(opts)}}}'"


def cf_options_ddl(info: dict, codec: Codec) -> str:
    """The column family option change that writes a level with ``codec``: the level's
    entry of compression_per_level (relative to the base level when
    level_compaction_dynamic_level_bytes is on; in my.cnf, as MyRocks cannot change it
    live), or bottommost_compression (live) when the level is the bottommost one and that
    option decides it (GetCompressionType)."""
    cf, level = info.get("column_family"), info.get("level")
    kind = ROCKSDB_TYPES.get(codec.family)
    if kind is None:
        return f"-- {codec.name}: RocksDB has no {codec.family} block compression (what-if only)"
    bottom = info.get("bottommost_compression")
    with_level = codec.level is not None and codec.family != "none"
    if info.get("bottommost") and bottom and bottom in WRITTEN:
        opts = [f"bottommost_compression={kind}"]
        if with_level:
            opts.append(f"bottommost_compression_opts={{level={codec.level};enabled=true}}")
        return (f"{live_statement(cf, opts)}  -- bottommost_compression decides the last level; existing "
                f"files change as compactions rewrite L{level}")
    n = int(info.get("num_levels") or 7)
    per = list(info.get("per_level") or []) or [info.get("compression") or "Snappy"] * n
    plan = [_option_name(x) for x in per] + [_option_name(per[-1])] * max(0, n - len(per))
    if info.get("dynamic") and info.get("base_level") is not None and level > 0:
        idx = level - int(info["base_level"]) + 1           # dynamic levels: relative to the base level
        why = f"dynamic level bytes: L{level} is entry {idx} (base level L{info['base_level']})"
    else:
        idx = level
        why = f"entry {idx} of compression_per_level"
    plan[min(max(idx, 0), len(plan) - 1)] = kind
    opts = ["compression_per_level=" + ":".join(plan)]
    if with_level:
        opts.append(f"compression_opts={{level={codec.level}}}")
    return (f"-- my.cnf: {mycnf_line(cf, opts)}  -- {why}; {NOT_CHANGEABLE_NOTE}; existing files change as "
            f"compactions rewrite L{level}")


WHATIF = RocksDBWhatIf()


# ---------------------------------------------------------------------------
# level plans: one codec per level for every column family, projected as a whole
@dataclass(frozen=True)
class LevelPlan:
    """``compression_per_level`` as a list of codecs (the last one repeats to the deepest
    level), and optionally a ``bottommost_compression`` codec."""

    per_level: tuple[Codec, ...]
    bottom: Codec | None = None

    @property
    def codecs(self) -> list[Codec]:
        return list(dict.fromkeys(list(self.per_level) + ([self.bottom] if self.bottom else [])))

    def codec_for(self, level: int, deepest: bool, base_level: int | None, dynamic: bool) -> Codec:
        if self.bottom is not None and deepest and level > 0:
            return self.bottom
        idx = level - base_level + 1 if dynamic and base_level is not None and level > 0 else level
        return self.per_level[min(max(idx, 0), len(self.per_level) - 1)]

    def text(self) -> str:
        out = ",".join(c.name for c in self.per_level)
        return out + (f",bottom={self.bottom.name}" if self.bottom else "")


def parse_level_plan(text: str) -> LevelPlan:
    """``none,none,lz4,lz4,zstd:3`` (one codec per level from L0) with an optional
    ``bottom=CODEC`` item; UnknownCodec / ValueError when it does not read."""
    from ..registry import parse_codec
    per: list[Codec] = []
    bottom = None
    for item in [x.strip() for x in text.split(",") if x.strip()]:
        if item.lower().startswith("bottom="):
            bottom = parse_codec(item.split("=", 1)[1])
        else:
            per.append(parse_codec(item))
    if not per:
        raise ValueError(f"level plan {text!r}: give at least the codec of L0")
    for c in per + ([bottom] if bottom else []):
        if c.family not in ROCKSDB_TYPES:
            raise ValueError(f"level plan {text!r}: RocksDB has no {c.name} block compression")
    return LevelPlan(tuple(per), bottom)


def project_level_plan(result: dict, dataset: Dataset, plan: LevelPlan) -> list[dict]:
    """The whole of every column family under ``plan``, from a what-if result's per-level
    targets (which must hold the plan's codecs): projected bytes (the levels' sum), an
    interval combining the levels' as independent (their half-widths in quadrature), and
    the options that set the plan."""
    ctx = plan_context(dataset)
    names = {f"{d}/{cf}/L": (d, cf) for (d, cf) in ctx}
    by_cf: dict[tuple, list[tuple[int, dict]]] = {}
    for t in result.get("targets", []):
        if t.get("engine") != "rocksdb" or "/L" not in t["target"]:
            continue
        head, _, lv = t["target"].rpartition("/L")
        key = names.get(head + "/L")
        if key is not None and lv.isdigit():
            by_cf.setdefault(key, []).append((int(lv), t))
    out = []
    for (d, cf), targets in sorted(by_cf.items()):
        if cf == "__system__":
            continue                        # MyRocks' dictionary: its options are the server's own
        c = ctx[(d, cf)]
        levels = [lv for lv, _ in targets]
        nonzero = [x for x in levels if x > 0]
        base = min(nonzero) if nonzero else None
        deepest = max(levels)
        dynamic = bool(c["cf"].get("dynamic_level_bytes"))
        rows, missing = [], []
        cur = proj = 0
        half2 = 0.0
        for lv, t in sorted(targets, key=lambda x: x[0]):
            codec = plan.codec_for(lv, lv == deepest, base, dynamic)
            r = next((r for r in t["results"] if r["codec"] == codec.name and r["model"] == MODEL), None)
            cur += t["current_bytes"]
            if r is None:
                missing.append(f"L{lv} {codec.name}")
                continue
            proj += r["projected_bytes"]
            half2 += ((r["ci95"][1] - r["ci95"][0]) / 2) ** 2
            rows.append({"level": lv, "codec": codec.name, "current_bytes": t["current_bytes"],
                         "projected_bytes": r["projected_bytes"]})
        half = half2 ** 0.5
        notes = []
        uniform = len(set(plan.per_level)) == 1 and not c["cf"].get("compression_per_level")
        if uniform:                       # one codec everywhere: `compression`, which changes live
            opts = [f"compression={ROCKSDB_TYPES[plan.per_level[0].family]}"]
        else:
            opts = ["compression_per_level=" + ":".join(ROCKSDB_TYPES[x.family] for x in plan.per_level)]
        lv_levels = sorted({x.level for x in plan.per_level if x.level is not None and x.family != "none"})
        if lv_levels:
            opts.append(f"compression_opts={{level={lv_levels[-1]}}}")
            if len(lv_levels) > 1:
                notes.append(f"compression_opts holds one level for every level: {lv_levels[-1]} is used "
                             f"for all (the plan names {', '.join(map(str, lv_levels))})")
        if plan.bottom is not None:
            opts.append(f"bottommost_compression={ROCKSDB_TYPES[plan.bottom.family]}")
            if plan.bottom.level is not None:
                opts.append(f"bottommost_compression_opts={{level={plan.bottom.level};enabled=true}}")
        if uniform:
            ddl = live_statement(cf, opts)
        else:
            ddl = f"-- my.cnf: {mycnf_line(cf, opts)}"
            notes.append(NOT_CHANGEABLE_NOTE)
        out.append({
            "directory": d, "column_family": cf, "plan": plan.text(), "dynamic_level_bytes": dynamic,
            "levels": rows, "missing": missing, "current_bytes": cur,
            "projected_bytes": None if missing else proj,
            "ci95": None if missing else [int(proj - half), int(proj + half + 0.999)],
            "ddl": ddl, "notes": notes,
        })
    return out

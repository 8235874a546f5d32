"""``dbxray whatif PATH``: projected sizes per codec with 95% intervals.

    dbxray whatif PATH [--codec NAME ...] [--sample FRACTION|all] [--seed N]
                  [--target-error P] [--fs-block BYTES] [--json] [-o FILE]

Exit codes: 0 ok, 1 PATH cannot be read, 2 bad usage (unknown codec, bad
sample or target error).
"""
from __future__ import annotations

import json
import os
import sys

from dbxray.parsers.humanize import human_bytes, human_speed


def add_parser(subparsers) -> None:
    """Register the ``whatif`` subcommand on the main CLI's subparsers."""
    p = subparsers.add_parser(
        "whatif", help="project sizes with other codecs (95%% intervals, speeds, advice)",
        description="If this data were stored with codec X, how big would it be on disk, and how fast? "
                    "Codecs: none, zlib:1..9, lz4, lz4hc:1..12, zstd:-5..22, lzma:0..9, bzip2:1..9, "
                    "snappy, brotli:0..11, and ClickHouse chains such as 'Delta(4),ZSTD(1)'.")
    p.add_argument("path", help="data directory, part directory or single file")
    p.add_argument("--codec", action="append", dest="codecs", metavar="NAME",
                   help="codec to project (repeatable; or several names separated by spaces); default: "
                        "none lz4 zstd:1 zstd:3 zstd:9 zlib:6 lzma:6 snappy bzip2:1")
    p.add_argument("--sample", default="0.05", help="fraction of units to re-encode (0.05, 5%%) or 'all'")
    p.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    p.add_argument("--target-error", default=None, metavar="P",
                   help="grow the sample from 1%% (doubling, up to --sample; use --sample all for no cap) "
                        "until every 95%% interval is within +-P (e.g. 1%% or 0.01)")
    p.add_argument("--fs-block", type=int, default=None, metavar="BYTES",
                   help="filesystem block size for the page-compression model (default: statvfs)")
    p.add_argument("--filesystem", default=None, help="filesystem type to model (ext4 adds extent-tree blocks)")
    p.add_argument("--no-raw", dest="raw_models", action="store_false",
                   help="skip the ZFS / btrfs comparison on the raw files")
    p.add_argument("--level-plan", metavar="PLAN", default=None,
                   help="RocksDB: project every column family under one codec per level, e.g. "
                        "'none,none,none,lz4,lz4,lz4,zstd:3' or 'none,lz4,bottom=zstd:3' (adds its codecs)")
    p.add_argument("--json", action="store_true", help="print the JSON (schema version 1)")
    p.add_argument("-o", "--output", help="write to FILE instead of stdout (*.json implies --json)")
    p.add_argument("--no-progress", dest="progress", action="store_false", help="no progress on stderr")
    p.add_argument("--keyfile", metavar="FILE", help="MariaDB file_key_management key file: encrypted InnoDB "
                   "pages are decrypted in memory and projected as the engine compresses them (before encryption)")
    p.add_argument("--keyfile-password-file", metavar="FILE", help="password of an encrypted key file")
    p.set_defaults(func=run)


def parse_target_error(text) -> float | None:
    """``1%`` -> 0.01, ``0.01`` -> 0.01; ValueError when not in (0, 1)."""
    if text is None:
        return None
    s = str(text).strip()
    v = float(s[:-1]) / 100 if s.endswith("%") else float(s)
    if not 0 < v < 1:
        raise ValueError(f"--target-error {text!r}: give a relative error such as 1% or 0.01")
    return v


def split_codecs(items: list[str]) -> list[str]:
    """``--codec`` values as codec names: each may hold several names separated by spaces;
    a ClickHouse chain stays whole, spaces after its commas included (``Delta(4), ZSTD(1)``)."""
    out: list[str] = []
    for item in items:
        tokens, depth, cur = [], 0, ""
        for ch in item:
            depth += (ch == "(") - (ch == ")")
            if ch.isspace() and depth == 0:
                if cur:
                    tokens.append(cur)
                cur = ""
            else:
                cur += ch
        if cur:
            tokens.append(cur)
        merged: list[str] = []
        for tok in tokens:
            if merged and (merged[-1].endswith(",") or tok.startswith(",")):
                merged[-1] += tok
            else:
                merged.append(tok)
        out.extend(merged)
    return out


def progress_printer(enabled: bool, what: str):
    """The stderr progress of a command (app/cliprogress.py), or None with ``--no-progress``."""
    if not enabled:
        return None
    from dbxray.app.cliprogress import ProgressPrinter
    return ProgressPrinter(what)


def human_table(result: dict) -> str:
    """The what-if result as text: one block per target, one line per codec and model."""
    lines = []
    s = result["sample"]
    lines.append(f"root: {result['root']}   sample: {s['mode']} {s['fraction']:g} seed {s['seed']}  "
                 f"({s['units_sampled']} of {s['units_total']} units sampled)   fs block {result['fs_block']}")
    if s.get("description"):
        lines.append(f"sample: {s['description']}")
    for t in result["targets"]:
        lines.append("")
        lines.append(f"{t['target']}  [{t['engine']}]  now {human_bytes(t['current_bytes'])}, "
                     f"logical {human_bytes(t['logical_bytes'])}")
        for note in t.get("notes") or []:
            if note.startswith(("encrypted", "sparse now")):
                lines.append(f"  {note}")
        if t.get("split"):
            sp = t["split"]
            made = (f"  made of: compressible {human_bytes(sp['compressible_bytes'])}, overhead "
                    f"{human_bytes(sp['overhead_bytes'])}, ")
            if sp.get("shrinks", True):
                lines.append(made + f"reclaimable {human_bytes(sp['reclaimable_bytes'])} (free pages, unwritten "
                             f"space: a rebuild's, not a codec's); rebuilt {human_bytes(sp['rebuilt_bytes'])}")
            else:
                lines.append(made + f"free inside {human_bytes(sp['reclaimable_bytes'])}, not reclaimable: "
                             f"{sp.get('shrink_note') or 'no statement shrinks this file'}")
        rows = [("codec", "model", "projected", "95% CI", "vs now", "compression saving", "comp MB/s",
                 "dec MB/s")]
        for r in sorted(t["results"], key=lambda r: (r["model"], r["projected_bytes"])):
            lo, hi = r["ci95"]
            ratio = (r["projected_bytes"] / t["current_bytes"]) if t["current_bytes"] else 0.0
            cs = r.get("compression_saving_bytes")
            rows.append((r["codec"], r["model"], human_bytes(r["projected_bytes"]),
                         f"{human_bytes(lo)}..{human_bytes(hi)}", f"{ratio:6.1%}",
                         "-" if cs is None else (human_bytes(cs) if cs >= 0 else "-" + human_bytes(-cs)),
                         human_speed(r.get("compress_mb_s")), human_speed(r.get("decompress_mb_s"))))
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        for n, row in enumerate(rows):
            lines.append("  " + "  ".join(c.ljust(widths[i]) if i < 2 else c.rjust(widths[i])
                                          for i, c in enumerate(row)))
            if n == 0:
                lines.append("  " + "  ".join("-" * w for w in widths))
    if result.get("speed_method"):
        lines.append("")
        lines.append(f"speeds: {result['speed_method']} (shown as '-')")
    if result.get("advice"):
        lines.append("")
        lines.append("advice:")
        for a in result["advice"]:
            if a.get("kind") == "rebuild":
                lines.append(f"  {a['target']}: rebuild ({a['codec']} stays) -> "
                             f"{human_bytes(a['projected_bytes'])} (reclaims up to {human_bytes(a['saving_bytes'])}: "
                             f"free pages and unwritten space)")
            elif a.get("kind") == "engine":
                lines.append(f"  {a['target']}: {a['engine_clause']} ({a['codec']}; an estimate) -> "
                             f"{human_bytes(a['projected_bytes'])} (saves {human_bytes(a['saving_bytes'])}, at least "
                             f"{human_bytes(a['saving_bytes_ci95'][0])} with the model's error)")
            elif a.get("kind") == "pack":
                lines.append(f"  {a['target']}: {a['tool']} (a command; the table becomes read-only) -> "
                             f"{human_bytes(a['projected_bytes'])} (saves {human_bytes(a['saving_bytes'])}, at least "
                             f"{human_bytes(a['saving_bytes_ci95'][0])} with the model's error)")
            else:
                against = " against the rebuilt table" if a.get("compared_with") == "rebuilt" else ""
                lo, hi = a.get("saving_bytes_ci95") or (a["saving_bytes"], a["saving_bytes"])
                lines.append(f"  {a['target']}: {a.get('choice', '')} {a['codec']} -> "
                             f"{human_bytes(a['projected_bytes'])} (saves {human_bytes(a['saving_bytes'])}{against}; "
                             f"95% interval {human_bytes(lo)}..{human_bytes(hi)})")
            if a.get("verdict"):
                lines.append(f"      verdict: {a['verdict']}")
            if a.get("ddl"):
                lines.append(f"      {a['ddl']}")
    if result.get("level_plans"):
        lines.append("")
        lines.append("level plan (RocksDB column families):")
        for p in result["level_plans"]:
            if p["projected_bytes"] is None:
                lines.append(f"  {p['column_family']}: {p['plan']}: not projected ({', '.join(p['missing'])} missing)")
                continue
            lo, hi = p["ci95"]
            per = ", ".join(f"L{r['level']} {r['codec']}" for r in p["levels"])
            lines.append(f"  {p['column_family']}: now {human_bytes(p['current_bytes'])} -> "
                         f"{human_bytes(p['projected_bytes'])} ({human_bytes(lo)}..{human_bytes(hi)})  [{per}]")
            lines.append(f"      {p['ddl']}")
    for n in result.get("not_projected", []):
        lines.append(f"not projected: {n['target']}: {n['why']}")
    for e in result.get("errors", []):
        lines.append(f"error: {e}")
    return "\n".join(lines)


def run(args) -> int:
    """Run ``dbxray whatif``; returns the exit code."""
    from dbxray.compress.registry import UnknownCodec, parse_codec
    from dbxray.compress.sampling import SampleSpecError, parse_sample
    from dbxray.compress.whatif import run_whatif
    from dbxray.parsers.model import ScanContext
    from dbxray.parsers.parallel import cpu_workers
    from dbxray.parsers.scan import scan

    codecs = split_codecs(args.codecs or [])
    plan = None
    try:
        if getattr(args, "level_plan", None):
            from dbxray.compress.engines.rocksdb import parse_level_plan
            plan = parse_level_plan(args.level_plan)
            if codecs or plan is not None:
                codecs = list(dict.fromkeys((codecs or []) + [c.name for c in plan.codecs]))
        for c in codecs:
            parse_codec(c)
        parse_sample(args.sample)
        target_error = parse_target_error(args.target_error)
        if args.fs_block is not None and (args.fs_block <= 0 or args.fs_block & (args.fs_block - 1)):
            raise ValueError(f"--fs-block {args.fs_block}: must be a power of two")
    except (UnknownCodec, SampleSpecError, ValueError) as e:
        print(f"dbxray whatif: {e}", file=sys.stderr)
        return 2
    if not os.path.lexists(args.path):
        print(f"dbxray: {args.path}: no such file or directory", file=sys.stderr)
        return 1
    if not os.access(args.path, os.R_OK):
        print(f"dbxray: {args.path}: permission denied", file=sys.stderr)
        return 1
    show = getattr(args, "progress", True)
    from dbxray.app.keys import load_keys
    keys, key_messages = load_keys(getattr(args, "keyfile", None), getattr(args, "keyfile_password_file", None))
    for m in key_messages:
        print(f"dbxray: {m}", file=sys.stderr)
    try:
        scan_progress = progress_printer(show, "scan")
        # the projections need each unit's kind, owner and place, not its checksum: the scan
        # skips checksum verification (every what-if JSON of the fixtures identical either way)
        # files are read by every core (forked processes hand back units and page maps); of a
        # page-compressed page the headers are decoded, not the whole page where the codec can
        # stop early (its payload length, which the what-if does not read, from the zero fill)
        ds = scan(args.path, ScanContext(progress=scan_progress, fs_block=args.fs_block, keys=keys,
                                         verify_checksums=False, workers=cpu_workers(),
                                         exact_payload=False, owners_only=True))
        if scan_progress is not None:
            scan_progress.close(f"{len(ds.files)} files")
    except OSError as e:
        print(f"dbxray: {args.path}: {e}", file=sys.stderr)
        return 1
    if not ds.files and ds.errors:
        for e in ds.errors:
            print(f"dbxray: {e}", file=sys.stderr)
        return 1
    wi_progress = progress_printer(show, "what-if")
    result = run_whatif(ds, codecs or None, sample=args.sample, seed=args.seed, target_error=target_error,
                        fs_block=args.fs_block, progress=wi_progress,
                        filesystem=getattr(args, "filesystem", None),
                        raw_models=getattr(args, "raw_models", True))
    if plan is not None:
        from dbxray.compress.engines.rocksdb import project_level_plan
        result["level_plans"] = project_level_plan(result, ds, plan)
    if key_messages:
        result["errors"] = list(key_messages) + list(result.get("errors") or [])
    if wi_progress is not None:
        smp = result["sample"]
        enc = int(smp.get("units_encoded", smp["units_sampled"]))
        wi_progress.close(f"{enc:,} of {smp['units_total']:,} units re-encoded, "
                          f"{max(0, smp['units_sampled'] - enc):,} more known without encoding")
    as_json = args.json or (args.output and args.output.endswith(".json"))
    text = json.dumps(result, indent=1) if as_json else human_table(result)
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as fh:
                fh.write(text + "\n")
        except OSError as e:
            print(f"dbxray: {args.output}: cannot write: {e.strerror}", file=sys.stderr)
            return 1
    else:
        sys.stdout.write(text + "\n")
    return 0

"""The ``dbxray`` command line: GUI launcher and headless subcommands.

    dbxray                       open the window on the embedded demo data dir
    dbxray PATH                  open the window on PATH
    dbxray scan PATH [--json] [-o FILE]
    dbxray whatif PATH ...       (compressor layer)
    dbxray export / report       (headless views and HTML report)
    dbxray advise PATH ...       (narrower ClickHouse column types, compress/typeadvice.py)
    dbxray compare PATH          (the same table, by name or columns, in several schemas/engines)

Exit codes: 0 success, 1 PATH cannot be read, 2 bad usage.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import sys

from dbxray.parsers.humanize import human_bytes

#: subcommand -> the module (of dbxray.app) providing add_parser(subparsers) and run(args) -> int,
#: imported only when its command runs (or for the whole parser, :func:`build_parser`)
SUBCOMMAND_MODULES = {
    "whatif": "cli_whatif",
    "export": "cli_export",
    "report": "cli_export",
    "advise": "cli_advise",
    "compare": "cli_compare",
}


def subcommand_module(command: str):
    """The module of ``command`` (a key of :data:`SUBCOMMAND_MODULES`), imported here
    (explicit imports: the layer checks read them, tests/test_layers.py)."""
    name = SUBCOMMAND_MODULES[command]
    if name == "cli_whatif":
        from . import cli_whatif as mod
    elif name == "cli_export":
        from . import cli_export as mod
    elif name == "cli_advise":
        from . import cli_advise as mod
    elif name == "cli_compare":
        from . import cli_compare as mod
    else:
        raise KeyError(command)
    return mod


class UsageError(Exception):
    pass


def _terminal_columns() -> int:
    """The terminal's width as shutil.get_terminal_size finds it (COLUMNS, then the
    terminal of stdout, else 80), without importing shutil (2-3 ms of every command)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class _Formatter(argparse.HelpFormatter):
    """argparse's help layout at the terminal's width (:func:`_terminal_columns`)."""

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
        super().__init__(prog, indent_increment, max_help_position,
                         _terminal_columns() - 2 if width is None else width)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message):  # exit 2 with the usage, as argparse does, but testable
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def _progress_printer(enabled: bool):
    if not enabled:
        return None
    state = {"last": -1}

    def cb(done: int, total: int, message: str) -> None:
        pct = int(100 * done / total) if total else 100
        if pct != state["last"]:
            state["last"] = pct
            sys.stderr.write(f"\r{pct:3d}% {message[:70]:<70}")
            sys.stderr.flush()
            if pct >= 100:
                sys.stderr.write("\n")
    return cb


def _checksum_line(files: list[dict]) -> str:
    """What the scan says of the InnoDB files' page checksums (verified only with --full)."""
    sums = [f["innodb"].get("checksum") or {} for f in files if isinstance(f.get("innodb"), dict)]
    checked = [c for c in sums if c.get("verified", True) and c.get("algorithm")]
    if not checked:
        return "page checksums: not verified (dbxray scan --full verifies every page's)"
    bad = sum(len(c.get("bad_pages") or []) for c in checked)
    head = f"page checksums: verified in {len(checked)} of {len(sums)} files, "
    return head + (f"{bad} bad page(s) (listed as errors)" if bad else "no bad page")


def human_table(data: dict) -> str:
    """The scan as a text table: one line per file, totals per engine."""
    files = data["files"]
    rows = [("path", "engine", "role", "apparent", "allocated", "holes", "errors", "warnings")]
    for f in files:
        rows.append((f["path"], f["engine"] or "-", f["role"], human_bytes(f["apparent_bytes"]),
                     human_bytes(f["allocated_bytes"]), human_bytes(sum(h[1] for h in f["holes"])),
                     str(len(f["errors"])) if f["errors"] else "",
                     str(len(f.get("warnings", []))) if f.get("warnings") else ""))
    widths = [min(max(len(r[i]) for r in rows), 70 if i == 0 else 40) for i in range(len(rows[0]))]
    lines = []
    for n, r in enumerate(rows):
        cells = []
        for i, c in enumerate(r):
            if len(c) > widths[i]:
                c = "…" + c[-(widths[i] - 1):]
            cells.append(c.rjust(widths[i]) if i >= 3 else c.ljust(widths[i]))
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines.append("")
    lines.append(f"root: {data['root']}")
    by_engine: dict[str, list] = {}
    for f in files:
        by_engine.setdefault(f["engine"] or "other", []).append(f)
    for eng, fs in by_engine.items():
        app = sum(f["apparent_bytes"] for f in fs)
        alloc = sum(f["allocated_bytes"] for f in fs)
        lines.append(f"{eng:>10}: {len(fs):5d} files  apparent {human_bytes(app):>10}  allocated {human_bytes(alloc):>10}")
        if eng == "innodb":
            lines.append(" " * 12 + _checksum_line(fs))
    fst = data.get("filesystem")
    if fst:
        parts = [f"written {human_bytes(fst['data_bytes'])}", f"unwritten {human_bytes(fst['unwritten_bytes'])}",
                 f"holes {human_bytes(fst['hole_bytes'])}"]
        if fst["past_eof_bytes"]:
            parts.append(f"past EOF {human_bytes(fst['past_eof_bytes'])}")
        if fst["shared_bytes"]:
            parts.append(f"shared {human_bytes(fst['shared_bytes'])}")
        if fst["disk_known_files"]:
            parts.append(f"on disk {human_bytes(fst['disk_bytes'])} ({fst['disk_known_files']} of {fst['files']} "
                         f"files measured by the filesystem)")
        lines.append(f"{'/'.join(fst['types']):>10}: " + ", ".join(parts))
    errors = [e for f in files for e in f["errors"]] + data.get("errors", [])
    if errors:
        lines.append("")
        lines.append(f"{len(errors)} error(s):")
        lines.extend(f"  {e}" for e in errors[:50])
        if len(errors) > 50:
            lines.append(f"  ... {len(errors) - 50} more (see --json)")
    warnings = [w for f in files for w in f.get("warnings", [])] + data.get("warnings", [])
    if warnings:
        lines.append("")
        lines.append(f"{len(warnings)} warning(s):")
        lines.extend(f"  {w}" for w in warnings[:50])
        if len(warnings) > 50:
            lines.append(f"  ... {len(warnings) - 50} more (see --json)")
    return "\n".join(lines)


#: what the other engines read in every mode (their checksums are verified by the default too)
_OTHER_ENGINES = ("TokuDB every node with its checksum, MyRocks every SST's index and trailers with every "
                  "block's checksum, MyISAM, Aria (every page's CRC), ARCHIVE and CSV in full")
SCAN_READS = {
    "default": "every file's size, allocation and holes (stat, FIEMAP), then each engine's structures: InnoDB "
               "every page header (page types, indexes, records, fill, owners, free space), with no page "
               "checksum verified and no MySQL 8 LOB chain followed (--full does both); of MariaDB "
               "page-compressed tablespaces only the pages of fragment extents are decoded, the others "
               "counted in their index (leaf or not, BLOB or not) by the segment that owns their extent, "
               "so those indexes' records and fill are not known (undecoded_pages; --full decodes every "
               "page), ClickHouse what the "
               "engine's system.parts / system.parts_columns report, from each part's checksums.txt "
               "(compressed and uncompressed sizes), columns.txt, count.txt and marks, with no block header "
               "read (no codec counts, block histograms, Compact per-column split or block checksum: --full), "
               + _OTHER_ENGINES,
    "full": "every file's size, allocation and holes (stat, FIEMAP), then each engine's structures in full: "
            "InnoDB every page header with every page's checksum verified and MySQL 8 LOB chains followed, "
            "ClickHouse every block header, the marks and every block's checksum (up to the verification "
            "budget), " + _OTHER_ENGINES,
    "summary": "every file's size, allocation and holes (stat, FIEMAP), then each engine's structures "
               "without verifying checksums: InnoDB every page header (page types, indexes, records, fill) "
               "but no page checksum and no LOB chain, and of MariaDB page-compressed tablespaces only the "
               "fragment extents' pages (as the default), ClickHouse every block header and the marks but no "
               "block checksum, the other engines as the default reads them",
}
#: --summary alone: ClickHouse reads no block header either (--summary --full: SCAN_READS["summary_full"])
SCAN_READS["summary_full"] = SCAN_READS["summary"]
SCAN_READS["summary"] = SCAN_READS["summary"].replace(
    "ClickHouse every block header and the marks but no block checksum",
    "ClickHouse the sizes its system.parts / system.parts_columns report (checksums.txt, columns.txt, "
    "count.txt, the marks; no block header)")


#: a command-line scan of more files than this (of one engine) packs each file's sections
#: once read (FileEntry.pack_sections), so that 100,000 tablespaces fit in about 300 MB
PACK_SECTIONS_OVER = 20_000


def cmd_scan(args) -> int:
    """``dbxray scan``: the objects made so far (the modules') out of the collector's passes,
    which then run every 20,000 allocations rather than 700 (a scan allocates a few small
    objects per file and makes few cycles): ~4% of a ClickHouse data dir's default scan.
    Both undone on return (tests run the command in their own process)."""
    import dbxray.parsers.scan  # noqa: F401  (imported before the freeze, to be frozen)
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(20_000, 10, 10)
    try:
        return _scan_command(args)
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)


def _scan_command(args) -> int:
    from dbxray.app.keys import load_keys
    from dbxray.parsers import jsonout
    from dbxray.parsers.model import ScanContext
    from dbxray.parsers.parallel import cpu_workers
    from dbxray.parsers.scan import scan

    if not os.path.lexists(args.path):
        print(f"dbxray: {args.path}: no such file or directory", file=sys.stderr)
        return 1
    if not os.access(args.path, os.R_OK):
        print(f"dbxray: {args.path}: permission denied", file=sys.stderr)
        return 1
    keys, key_messages = load_keys(getattr(args, "keyfile", None), getattr(args, "keyfile_password_file", None))
    for m in key_messages:
        print(f"dbxray: {m}", file=sys.stderr)
    # InnoDB page checksums and LOB chains only with --full (and never for --summary)
    depth = "full" if args.full and not args.summary else "headers"
    jobs = args.jobs if args.jobs is not None else cpu_workers()
    ctx = ScanContext(progress=_progress_printer(args.progress and sys.stderr.isatty()),
                      fs_block=args.fs_block, keys=keys, workers=max(1, jobs), keep_units=False, depth=depth,
                      pack_sections_over=PACK_SECTIONS_OVER, block_walk=args.full,
                      # MariaDB page compression: only the fragment extents' pages decoded (--full: all)
                      owners_only=not args.full or args.summary)
    ds = scan(args.path, ctx)
    ds.errors.extend(key_messages)
    as_json = args.json or args.summary or bool(args.output and args.output.endswith(".json"))

    def write(fh) -> None:
        if args.summary:
            jsonout.write_summary(ds, fh, reads=SCAN_READS["summary_full" if args.full else "summary"])
        elif as_json:
            jsonout.write_dataset(ds, fh)
        else:
            fh.write(human_table(ds.to_json()) + "\n")

    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as fh:
                write(fh)
        except OSError as e:
            print(f"dbxray: {args.output}: cannot write: {e.strerror}", file=sys.stderr)
            return 1
    else:
        write(sys.stdout)
    if not ds.files and ds.errors:
        for e in ds.errors:
            print(f"dbxray: {e}", file=sys.stderr)
        return 1
    return 0


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: ``scan`` and every subcommand, or (``command``, one of
    :data:`SUBCOMMAND_MODULES`) ``scan`` and that one only, its module alone imported."""
    p = _Parser(prog="dbxray", description="X-ray of database files on disk (InnoDB, ClickHouse, TokuDB).")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    s = sub.add_parser("scan", help="list what is on disk (human table or JSON)",
                       description="What is on disk under PATH. What each mode reads: default (the table, "
                       f"--json): {SCAN_READS['default']}. --full (the table, --json): {SCAN_READS['full']}. "
                       f"--summary: {SCAN_READS['summary']}. --summary --full: as --summary, and ClickHouse "
                       "every block header. Files are read by --jobs processes at once (default: one per core).")
    s.add_argument("path", help="data directory, part directory or single file")
    s.add_argument("--json", action="store_true", help="print the JSON contract (schema version 1), streamed file "
                   "by file")
    s.add_argument("--summary", action="store_true", help="JSON for fleets: per file and per table sizes, counts "
                   "and engine facts, no per-page, per-extent or per-index lists; reads less (no checksums, "
                   "no LOB chains); one line per file")
    s.add_argument("--full", action="store_true", help="read every structure: InnoDB every page's checksum "
                   "(bad pages named as errors) and MySQL 8 LOB chains, ClickHouse every compressed block header "
                   "(codec counts, block size histograms, the Compact per-column split) and every block "
                   "checksum, as dbxray did before the lighter default; the other engines read what their "
                   "default reads")
    s.add_argument("-j", "--jobs", type=int, default=None, metavar="N",
                   help="processes reading files at once (default: the cores this process may use)")
    s.add_argument("-o", "--output", help="write to FILE instead of stdout (*.json implies --json)")
    s.add_argument("--fs-block", type=int, default=None, help="filesystem block size for hole models")
    s.add_argument("--no-progress", dest="progress", action="store_false", help="no progress on stderr")
    s.add_argument("--keyfile", metavar="FILE", help="MariaDB file_key_management key file (id;hex-key lines, "
                   "or 'Salted__' encrypted): encrypted InnoDB pages are decrypted in memory")
    s.add_argument("--keyfile-password-file", metavar="FILE", help="password of an encrypted key file "
                   "(file_key_management_filekey); without it a terminal prompts")
    s.set_defaults(func=cmd_scan)
    if command == "scan":
        return p
    wanted = [command] if command in SUBCOMMAND_MODULES else list(SUBCOMMAND_MODULES)
    for name in dict.fromkeys(SUBCOMMAND_MODULES[c] for c in wanted):
        subcommand_module(next(c for c in wanted if SUBCOMMAND_MODULES[c] == name)).add_parser(sub)
    return p


def gui_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="dbxray", description="Open the dbxray window (no PATH: the embedded demo data dir). "
                "Subcommands: scan, whatif, export, report (dbxray scan --help).")
    p.add_argument("path", nargs="?", help="data directory, part directory, file or saved scan (.dbxray.json)")
    p.add_argument("--screenshot", metavar="FILE", help="render the window to FILE (PNG) and exit")
    p.add_argument("--view", default=None, help="view to show first (with --screenshot): sizes, extent-map, holes, "
                   "columns, tokudb, lsm, whatif or compare (as export takes them), or the tab's title")
    p.add_argument("--screenshot-timeout", type=float, default=3600.0, metavar="SECONDS",
                   help="with --screenshot: give up (exit 1, no file) when the scan takes longer (default 3600)")
    return p


def is_headless(argv: list[str]) -> bool:
    """Whether ``argv`` runs a subcommand (``scan``, ``whatif``, ...): no window."""
    return bool(argv) and (argv[0] == "scan" or argv[0] in SUBCOMMAND_MODULES)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if is_headless(argv):
        parser = build_parser(argv[0])
        args = parser.parse_args(argv)
        if not hasattr(args, "func"):
            parser.print_usage(sys.stderr)
            return 2
        return int(args.func(args) or 0)
    if argv and argv[0] in ("-h", "--help"):
        gui_parser().print_help()
        print("\nsubcommands:\n  scan PATH [--json] [-o FILE]\n  whatif PATH [--codec ...]\n"
              "  export PATH --view ... -o FILE\n  report PATH -o report.html\n"
              "  advise PATH [--sample F|all] [--json]\n  compare PATH [--json] [--keyfile FILE]")
        return 0
    args = gui_parser().parse_args(argv)
    if args.path is not None and not os.path.lexists(args.path):
        print(f"dbxray: {args.path}: no such file or directory", file=sys.stderr)
        return 1
    from dbxray.app.gui import run_gui
    return run_gui(args.path, screenshot=args.screenshot, view=args.view,
                   screenshot_timeout=args.screenshot_timeout)

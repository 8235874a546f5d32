"""`dbxray export` (one view to PNG/SVG) and `dbxray report` (one HTML file), headless."""
from __future__ import annotations

import os
import sys


def add_parser(sub) -> None:
    e = sub.add_parser("export", help="render one view to PNG or SVG, headless")
    e.add_argument("path", help="data directory, part directory, file or saved scan")
    e.add_argument("--view", required=True,
                   help="sizes, extent-map, holes, columns, tokudb, lsm, whatif or compare")
    e.add_argument("--target", help="file path, db.table or db.table.column to show")
    e.add_argument("-o", "--output", required=True, help="FILE.png or FILE.svg")
    e.add_argument("--width", type=int, default=1400, help="width of the exported view, logical pixels")
    e.add_argument("--height", type=int, default=860, help="height of the exported view, logical pixels")
    e.add_argument("--dpi", type=int, default=96,
                   help="PNG resolution: the PNG is width x height x dpi/96 pixels (192 = 2x)")
    e.set_defaults(func=run_export)
    r = sub.add_parser("report", help="write one self-contained HTML report, headless")
    r.add_argument("path", help="data directory, part directory, file or saved scan")
    r.add_argument("-o", "--output", required=True, help="report.html")
    r.add_argument("--whatif", dest="whatif", action="store_true", default=True,
                   help="include what-if projections (default)")
    r.add_argument("--no-whatif", dest="whatif", action="store_false")
    r.add_argument("--sample", default="0.05", help="what-if sample fraction or 'all'")
    r.add_argument("--codec", action="append", dest="codecs", metavar="NAME",
                   help="what-if codec (repeatable, as for dbxray whatif); default: whatif's defaults")
    r.add_argument("--seed", type=int, default=0, help="what-if sampling seed (default 0)")
    r.add_argument("--whatif-json", metavar="FILE",
                   help="use this what-if result (dbxray whatif --json -o FILE) instead of running one: "
                        "the report then shows the numbers the user ran, codecs, sample and seed")
    r.add_argument("--no-progress", dest="progress", action="store_false", help="no progress on stderr")
    r.set_defaults(func=run_report)


def load_dataset(path: str, walk: bool = True, keys=None, progress=None):
    """The dataset of ``path`` for a headless command: a saved scan as it is, else a scan on
    every core; ``walk`` False: the window's light first scan (ClickHouse's blocks not
    walked), for a view that does not draw blocks (``reads_deferred`` False); True: a full
    scan (equal to the light one completed, ``parsers.scan.complete``, in one pass, so that
    ``progress`` only goes forward).  ``keys``: a key ring (app/keys.py) for encrypted
    InnoDB/Aria files."""
    from dbxray.parsers.model import ScanContext
    from dbxray.parsers.parallel import cpu_workers
    from dbxray.parsers.savedscan import is_saved_scan, load_saved_scan
    from dbxray.parsers.scan import scan
    if is_saved_scan(path):
        return load_saved_scan(path)
    return scan(path, ScanContext(block_walk=walk, workers=cpu_workers(), keys=keys, progress=progress))


class _Phases:
    """The report's progress on stderr, one phase after the other (scan, what-if, types,
    views), each with its own monotonic bar or 10% lines (app/cliprogress.py); a phase ends
    with its line when the next one starts."""

    def __init__(self, show: bool):
        self.show = show
        self.current = None

    def __call__(self, name: str):
        self.end()
        if not self.show:
            return None
        from dbxray.app.cli_whatif import progress_printer
        self.current = progress_printer(True, f"report {name}")
        return self.current

    def end(self, message: str = "done") -> None:
        if self.current is not None:
            self.current.close(message)
        self.current = None


def run_export(args) -> int:
    if not os.path.lexists(args.path):
        print(f"dbxray: {args.path}: no such file or directory", file=sys.stderr)
        return 1
    out = args.output
    if not out.lower().endswith((".png", ".svg")):
        print("dbxray export: -o must end in .png or .svg", file=sys.stderr)
        return 2
    if not (16 <= args.width <= 20000 and 16 <= args.height <= 20000 and 24 <= args.dpi <= 1200):
        print("dbxray export: --width/--height must be 16..20000 and --dpi 24..1200", file=sys.stderr)
        return 2
    from dbxray.app.headless import ensure_app, make_view, view_ids
    ensure_app()
    if args.view not in view_ids():
        print(f"dbxray export: unknown view {args.view!r}; available: {', '.join(sorted(view_ids()))}",
              file=sys.stderr)
        return 2
    from dbxray.parsers.tree import build_tree
    from dbxray.viz.export import export_png, export_svg
    ds = load_dataset(args.path, walk=bool(getattr(view_ids()[args.view], "reads_deferred", False)))
    whatif = None
    if args.view == "whatif":
        from dbxray.app.report import run_default_whatif
        whatif = run_default_whatif(ds, "0.05")
    try:
        view = make_view(args.view, ds, build_tree(ds), args.width, args.height, args.target, whatif)
    except KeyError as e:
        print(f"dbxray export: {e.args[0]}", file=sys.stderr)
        return 2
    # the exported part of the view (e.g. the extent map without its toolbar) is laid out
    # at exactly --width x --height, whatever the view around it
    widget = view.export_widget() if hasattr(view, "export_widget") else view
    ok = export_svg(widget, out, args.width, args.height, title=f"dbxray {args.view}") \
        if out.lower().endswith(".svg") else export_png(widget, out, args.width, args.height, dpi=args.dpi)
    view.close()            # no window left behind (the CLI is also called in-process by tests)
    view.deleteLater()
    if not ok:
        print(f"dbxray: {out}: cannot write", file=sys.stderr)
        return 1
    print(out)
    return 0


def run_report(args) -> int:
    if not os.path.lexists(args.path):
        print(f"dbxray: {args.path}: no such file or directory", file=sys.stderr)
        return 1
    from dbxray.app.headless import ensure_app
    ensure_app()
    from dbxray.app.cli_whatif import split_codecs
    from dbxray.app.report import write_report
    whatif = None
    if getattr(args, "whatif_json", None):
        import json
        try:
            with open(args.whatif_json, encoding="utf-8") as fh:
                whatif = json.load(fh)
        except (OSError, ValueError) as e:
            print(f"dbxray report: {args.whatif_json}: cannot read a what-if result: {e}", file=sys.stderr)
            return 1
        if not isinstance(whatif, dict) or whatif.get("kind") != "whatif":
            print(f"dbxray report: {args.whatif_json}: not a dbxray what-if result (kind 'whatif')",
                  file=sys.stderr)
            return 1
    codecs = split_codecs(args.codecs or [])
    if codecs:
        from dbxray.compress.registry import UnknownCodec, parse_codec
        try:
            for c in codecs:
                parse_codec(c)
        except UnknownCodec as e:
            print(f"dbxray report: {e}", file=sys.stderr)
            return 2
    phases = _Phases(getattr(args, "progress", True))
    ds = load_dataset(args.path, progress=phases("scan"))
    phases.end(f"{len(ds.files):,} files")
    if whatif is not None and os.path.realpath(str(whatif.get("root", ""))) != os.path.realpath(ds.root):
        print(f"dbxray report: note: the what-if result was run on {whatif.get('root')}, not {ds.root}",
              file=sys.stderr)
    prog = phases("what-if") if args.whatif and whatif is None else None
    try:
        write_report(ds, args.output, whatif_sample=args.sample if args.whatif else None, whatif=whatif,
                     codecs=codecs or None, seed=args.seed, progress=prog, phase_progress=phases)
    except OSError as e:
        phases.end("failed")
        print(f"dbxray: {args.output}: cannot write: {e.strerror}", file=sys.stderr)
        return 1
    phases.end("views drawn, report written")
    print(args.output)
    return 0

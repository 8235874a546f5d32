"""``dbxray compare PATH``: the same table held in several schemas or engines of a data
dir (the same name, or the same columns in their .frm), side by side (parsers/compare.py): rows, bytes on disk, allocated bytes, what
information_schema would report, bytes per row, ratio to the raw row size.

    dbxray compare PATH [--json] [-o FILE] [--keyfile FILE]

Exit codes: 0 ok (also when nothing is held twice: the table says so), 1 PATH
cannot be read, 2 bad usage.
"""
from __future__ import annotations

import json
import os
import sys

from dbxray.parsers.humanize import human_bytes


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("compare", help="the same table (by name or by columns) in several "
                                              "schemas/engines, side by side")
    p.add_argument("path", help="data directory (or a saved scan)")
    p.add_argument("--json", action="store_true", help="print the JSON")
    p.add_argument("-o", "--output", help="write to FILE instead of stdout (*.json implies --json)")
    p.add_argument("--keyfile", metavar="FILE", help="MariaDB file_key_management key file: encrypted InnoDB "
                   "and Aria tables' rows and indexes are read")
    p.add_argument("--keyfile-password-file", metavar="FILE", help="password of an encrypted key file")
    p.set_defaults(func=run_compare)


def _num(v, fmt="{:,}") -> str:
    return "-" if v is None else fmt.format(v)


def compare_table(data: dict) -> str:
    """The comparison as a text table, one block per group (a table name, or the same columns)."""
    if not data["groups"]:
        return f"root: {data['root']}\nno table is held in more than one schema or engine"
    head = ("table", "engine", "rows", "on disk", "allocated", "I_S rows", "I_S data", "I_S index", "B/row",
            "x raw")
    lines = []
    for g in data["groups"]:
        rows = [head]
        for t in g["tables"]:
            i_s = t["information_schema"]
            rows.append((t["table"], t["engine"], _num(t["rows"]), human_bytes(t["disk_bytes"]),
                         human_bytes(t["allocated_bytes"]), _num(i_s["table_rows"]),
                         "-" if i_s["data_length"] is None else human_bytes(i_s["data_length"]),
                         "-" if i_s["index_length"] is None else human_bytes(i_s["index_length"]),
                         _num(t["bytes_per_row"], "{:,.1f}"), _num(t["ratio_to_raw"], "{:.3f}")))
        widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
        lines.append(f"{g['name']}:")
        for n, r in enumerate(rows):
            lines.append("  " + "  ".join(c.ljust(widths[i]) if i < 2 else c.rjust(widths[i])
                                          for i, c in enumerate(r)).rstrip())
            if n == 0:
                lines.append("  " + "  ".join("-" * w for w in widths))
        raws: dict[str, float] = {}
        for t in g["tables"]:
            if t["raw_source"]:
                raws.setdefault(t["raw_source"], t["raw_row_bytes"])
        for source, size in raws.items():
            lines.append(f"  raw row: {size:,.1f} B ({source})")
        notes: dict[str, list[str]] = {}
        for t in g["tables"]:
            for note in t["notes"]:
                notes.setdefault(note, []).append(t["table"])
        for note, tables in notes.items():
            lines.append(f"  {', '.join(tables)}: {note}")
        lines.append("")
    lines.append(f"root: {data['root']}")
    lines.append("on disk / allocated: the table's files with its .frm/.par; B/row: allocated bytes per row; "
                 "x raw: B/row over the raw row")
    return "\n".join(lines)


def run_compare(args) -> int:
    if not os.path.lexists(args.path):
        print(f"dbxray: {args.path}: no such file or directory", file=sys.stderr)
        return 1
    from dbxray.app.cli_export import load_dataset
    from dbxray.parsers.compare import compare_json
    from dbxray.app.keys import load_keys
    keys, key_messages = load_keys(getattr(args, "keyfile", None), getattr(args, "keyfile_password_file", None))
    for m in key_messages:
        print(f"dbxray: {m}", file=sys.stderr)
    ds = load_dataset(args.path, walk=False, keys=keys)   # sizes and rows: no ClickHouse block is read for them
    data = compare_json(ds)
    as_json = args.json or (args.output or "").lower().endswith(".json")
    text = json.dumps(data, indent=1) if as_json else compare_table(data)
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(text + "\n")
        except OSError as e:
            print(f"dbxray: {args.output}: cannot write: {e.strerror}", file=sys.stderr)
            return 1
    else:
        sys.stdout.write(text + "\n")
    return 0

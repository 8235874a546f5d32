"""Per-column sizes of a whole data directory from ``checksums.txt`` and the
block headers only (the benchmark path: no detection pass, no marks, no
JSON).  Same counting rules as :mod:`.sizes`; the full scan gives the rest.
"""
from __future__ import annotations

import os

from .blocks import walk_blocks
from .checksums import ChecksumsError, parse_checksums
from .columns import ColumnsError, parse_columns_substreams, parse_columns_txt
from .datadir import data_links, mark_outdated, read_metadata
from .marks import marks_flavour
from .part import Part, _read_small, parse_part_name
from .streams import map_streams

def header_walk(path: str) -> tuple[int, int, str | None]:
    """(blocks, sum of decompressed sizes, first error) of one compressed file,
    from its 25-byte block headers (one pread each)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        t = walk_blocks(None, fd=fd)
    finally:
        os.close(fd)
    return len(t), t.uncompressed_bytes, (t.errors[0][0] if t.errors else None)


def column_sizes(datadir: str, walk: bool = True) -> dict[tuple[str, str, str, str], tuple[int, int, int]]:
    """{(db, table, part, column): (compressed, uncompressed, marks)} for every
    active part, as system.parts_columns counts them (0 for Compact parts).

    ``walk=True`` sums the decompressed sizes from the block headers (and
    checks them against checksums.txt); ``walk=False`` takes checksums.txt's
    uncompressed sizes alone."""
    tables, _ = read_metadata(datadir)
    links, _ = data_links(datadir)
    out: dict[tuple[str, str, str, str], tuple[int, int, int]] = {}
    for path in set(tables) | set(links):
        t = tables.get(path)
        db, name = (t.database, t.name) if t else links[path]
        try:
            entries = [e for e in os.scandir(path) if e.is_dir() and parse_part_name(e.name)]
        except OSError:
            continue
        parts = [Part(e.name, e.path, e.name, parse_part_name(e.name)) for e in entries]
        mark_outdated(parts)
        for p in parts:
            if p.state != "active":
                continue
            try:
                ck = parse_checksums(_read_small(os.path.join(p.abspath, "checksums.txt")))
                cols = parse_columns_txt(_read_small(os.path.join(p.abspath, "columns.txt")))
            except (ChecksumsError, ColumnsError, OSError, Exception):
                continue
            files = ck.files
            if "data.bin" in files:
                for c in cols:
                    out[(db, name, p.name, c.name)] = (0, 0, 0)
                continue
            try:
                subs = parse_columns_substreams(_read_small(os.path.join(p.abspath, "columns_substreams.txt")))
            except (ColumnsError, OSError):
                subs = None
            present = {f[:-4] for f in files if f.endswith(".bin")}
            ext = next((marks_flavour(f).extension for f in files if marks_flavour(f)), "")
            refs, _ = map_streams(cols, subs, present)
            sizes = {c.name: [0, 0, 0] for c in cols}
            for r in refs:
                if not r.counted or r.file_stem is None:
                    continue
                s = sizes[r.column]
                ent = files[r.file_stem + ".bin"]
                s[0] += ent.file_size
                if walk:
                    _, u, err = header_walk(os.path.join(p.abspath, r.file_stem + ".bin"))
                    if err or (ent.uncompressed_size is not None and u != ent.uncompressed_size):
                        u = ent.uncompressed_size or u
                else:
                    u = ent.uncompressed_size or 0
                s[1] += u
                m = files.get(r.file_stem + ext)
                s[2] += m.file_size if m else 0
            for c in cols:
                out[(db, name, p.name, c.name)] = tuple(sizes[c.name])
    return out

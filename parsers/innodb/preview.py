"""The progressive first paint of a tablespace: its FIL headers (page type, LSN)
read in growing chunks before the full scan, so the extent map fills in while the
file is read.  Read-only (an mmap of an O_RDONLY descriptor; pages in holes read as
zeros without I/O).  FIL header fields as fil0fil.h names them (parsers/innodb/fil.py).
"""
from __future__ import annotations

import os
from typing import Callable

import numpy as np

from ..arrays import distinct
from ..fileio import ReadOnlyFile
from ..model import FileEntry, empty_units
from ..units import hole_bytes_per_unit
from .fil import FIL_PAGE_LSN, FIL_PAGE_TYPE, FIL_PAGE_TYPE_FSP_HDR, page_type_names
from .section import InnoDBSection
from .fsp import FSP_HEADER_OFFSET, FSP_SIZE, decode_fsp_flags, parse_fsp_header

#: the FIL header bytes the preview keeps: FIL_PAGE_LSN (8) and FIL_PAGE_TYPE (2)
_HDR = slice(FIL_PAGE_LSN, FIL_PAGE_TYPE + 2)
_FSP_SIZE = FSP_HEADER_OFFSET + FSP_SIZE

#: at most this many directory entries are looked at to find the file to preview
PREVIEW_WALK_LIMIT = 20000
#: first chunk (pages), then doubled up to the last size
PREVIEW_CHUNKS = (512, 1024, 2048, 4096, 8192, 16384, 32768)
INNODB_NAMES = (".ibd", ".ibu")


def preview_target(path: str) -> str | None:
    """The InnoDB file to preview: ``path`` itself when it is one, else the largest
    ``*.ibd`` (or ``ibdata1``) within two folder levels, looking at no more than
    PREVIEW_WALK_LIMIT entries (huge folders get no preview, only the scan)."""
    try:
        if os.path.isfile(path):
            return path if looks_innodb(path) else None
        if not os.path.isdir(path):
            return None
        best, best_size, seen = None, 0, 0
        stack = [(path, 0)]
        while stack:
            d, depth = stack.pop()
            try:
                with os.scandir(d) as it:
                    for e in it:
                        seen += 1
                        if seen > PREVIEW_WALK_LIMIT:
                            return None
                        if e.is_dir(follow_symlinks=False):
                            if depth < 2:
                                stack.append((e.path, depth + 1))
                        elif e.is_file(follow_symlinks=False) and (e.name.endswith(INNODB_NAMES)
                                                                  or e.name == "ibdata1"):
                            size = e.stat(follow_symlinks=False).st_size
                            if size > best_size:
                                best, best_size = e.path, size
            except OSError:
                continue
        return best if best is not None and looks_innodb(best) else None
    except OSError:
        return None


#: files with more pages than this get no preview (the scan alone draws them)
PREVIEW_MAX_PAGES = 16 << 20


def _pages_to_map(f, physical: int) -> int:
    """Pages up to the end of the data: a trailing hole (a sparse 1 TB file) is not
    walked beyond the tablespace size page 0 states, as the scan does."""
    n = f.size // physical
    holes = f.holes()
    if holes and holes[-1][0] + holes[-1][1] >= f.size:
        last_data = -(-holes[-1][0] // physical)
        head = f.pread(0, 64)
        fsp_pages = int.from_bytes(head[_FSP_SIZE:_FSP_SIZE + 4], "big") if len(head) >= _FSP_SIZE + 4 else 0
        n = min(n, max(last_data, min(fsp_pages, n)))
        if n > PREVIEW_MAX_PAGES:          # a header claiming a huge size over a hole: the data only
            n = last_data
    return n


def looks_innodb(path: str) -> bool:
    """Page 0 carries valid FSP flags (the preview needs the page size)."""
    return fsp_flags(path) is not None


def fsp_flags(path: str):
    with ReadOnlyFile(path) as f:
        if f.size < 16384 // 4:
            return None
        head = f.pread(0, min(f.size, 65536))
    if len(head) < 150 or int.from_bytes(head[FIL_PAGE_TYPE:FIL_PAGE_TYPE + 2], "big") != FIL_PAGE_TYPE_FSP_HDR:
        return None
    flags = decode_fsp_flags(parse_fsp_header(head, 0).flags)
    return flags if flags.valid else None


def header_preview(path: str, emit: Callable[[dict], None], is_cancelled: Callable[[], bool],
                          root: str | None = None) -> int:
    """Read the FIL header (page type, LSN) of every page of one InnoDB file in
    growing chunks and ``emit`` each: ``{"kind": "begin", path, abspath, n_pages,
    physical, logical, flavor}``, then ``{"kind": "chunk", start, types, lsn, names}``
    (names: type code -> constant name of the codes in the chunk), then
    ``{"kind": "end", pages}``.  Read-only (mmap of an O_RDONLY descriptor);
    pages in holes read as zeros without I/O.  Returns the pages read."""
    flags = fsp_flags(path)
    if flags is None:
        raise ValueError(f"{path}: no valid FSP header on page 0")
    physical = int(flags.physical_page_size)
    flavor = "mariadb" if flags.format in ("full_crc32", "mariadb") else "mysql"
    base = os.path.dirname(os.path.abspath(root)) if root and os.path.isfile(root) else (root or os.path.dirname(path))
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(base)).replace(os.sep, "/")
    with ReadOnlyFile(path) as f:
        n = _pages_to_map(f, physical)
        if n > PREVIEW_MAX_PAGES:
            raise ValueError(f"{path}: {n:,} pages to map; no preview above {PREVIEW_MAX_PAGES:,}")
        emit({"kind": "begin", "engine": "innodb", "path": rel, "abspath": os.path.abspath(path), "n_pages": n,
              "physical": physical, "logical": int(flags.logical_page_size), "flavor": flavor,
              "apparent": f.size})
        mm = f.mmap()
        # a map that could not have its holes blanked (too many): headers lying in a
        # hole are zeros, known without touching them (a read would fault the hole in)
        skip = None
        if mm is not None and not f.hole_safe_map and f.holes():
            starts = np.arange(n, dtype=np.int64) * physical
            skip = hole_bytes_per_unit(f.holes(), starts, min(4096, physical)) > 0
        start, k = 0, 0
        names_all = page_type_names(flavor)
        mariadb_codes = set(page_type_names("mariadb")) - set(page_type_names("mysql"))
        while start < n:
            if is_cancelled():
                break
            count = min(PREVIEW_CHUNKS[min(k, len(PREVIEW_CHUNKS) - 1)], n - start)
            if mm is not None:
                pages = np.frombuffer(mm, dtype=np.uint8, count=count * physical,
                                      offset=start * physical).reshape(count, physical)
                if skip is None or not skip[start:start + count].any():
                    hdr = np.ascontiguousarray(pages[:, _HDR])
                else:
                    keep = ~skip[start:start + count]
                    hdr = np.zeros((count, _HDR.stop - _HDR.start), dtype=np.uint8)
                    hdr[keep] = pages[:, _HDR][keep]
            else:
                raw = f.pread(start * physical, count * physical)
                count = len(raw) // physical
                hdr = np.frombuffer(raw, dtype=np.uint8, count=count * physical).reshape(count, physical)[:, _HDR].copy()
            lsn = hdr[:, 0:8].copy().view(">u8").reshape(count).astype(np.uint64)
            types = hdr[:, 8:10].copy().view(">u2").reshape(count).astype(np.uint16)
            codes = set(int(c) for c in distinct(types))
            if flavor == "mysql" and codes & mariadb_codes:
                flavor = "mariadb"
                names_all = page_type_names(flavor)
            names = {c: names_all.get(c, f"UNKNOWN_PAGE_TYPE_{c}") for c in codes}
            emit({"kind": "chunk", "start": start, "types": types, "lsn": lsn, "names": names})
            start += count
            k += 1
        emit({"kind": "end", "pages": start})
    return start


#: the kind of a page whose header the preview has not read yet
NOT_READ = 0xFFFF


class PreviewFile:
    """A file as the preview reads it (header_preview's messages): a FileEntry whose
    pages have the kind "not read yet" until a chunk gives their type and LSN, so the
    unit map draws it like any scanned file.  Free pages, owners, fill and holes come
    with the scan proper."""

    def __init__(self, info: dict):
        n = int(info["n_pages"])
        physical = int(info["physical"])
        logical = int(info.get("logical") or physical)
        self.n_pages = n
        self.read = 0
        units = empty_units(n)
        units["offset"] = np.arange(n, dtype=np.uint64) * np.uint64(physical)
        units["stored"] = physical
        units["logical"] = logical
        units["kind"] = NOT_READ
        self.entry = FileEntry(path=str(info["path"]), abspath=str(info.get("abspath") or ""), engine="innodb",
                               role="tablespace", apparent_bytes=int(info.get("apparent") or n * physical),
                               allocated_bytes=0)
        self.entry.units = units
        self.entry.kind_names = {NOT_READ: "not read yet"}
        self.entry.sections["innodb"] = InnoDBSection(page_size=logical, physical_page_size=physical, pages=n)

    def add(self, start: int, types: np.ndarray, lsn: np.ndarray, names: dict) -> None:
        """One chunk of headers: the pages from ``start`` on get their type and LSN."""
        u = self.entry.units
        end = min(self.n_pages, start + len(types))
        u["kind"][start:end] = types[:end - start]
        u["lsn"][start:end] = lsn[:end - start]
        self.entry.kind_names.update({int(k): str(v) for k, v in names.items()})
        self.read = max(self.read, end)

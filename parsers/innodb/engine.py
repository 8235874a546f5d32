"""InnoDB behind the engine protocol (parsers/engine.py): file names and page 0
for detection, the scan, the tree (indexes below their file), page payloads.

File names follow the server's own: ``ibdata<N>`` (srv_sys_space), ``mysql.ibd``
(dict0dd: the MySQL 8 data dictionary tablespace), ``ib_logfile<N>`` / ``#ib_redo<N>``
(log0files), ``undo_<NNN>`` / ``*.ibu`` (srv0start), ``#ib_<page>_<n>.dblwr``
(buf0dblwr, MySQL 8.0.20+).
"""
from __future__ import annotations

import re

from ..engine import Engine
from ..model import FileEntry, UnitGeometry
from . import preview
from .fil import FIL_PAGE_OFFSET, FIL_PAGE_TYPE, FIL_PAGE_TYPE_FSP_HDR
from .fsp import UNIV_PAGE_SIZE_ORIG, extent_size_pages

INNODB_REDO_RE = re.compile(r"^(ib_logfile\d+|#ib_redo\d+(_tmp)?|ib_redo\d+)$")
INNODB_UNDO_RE = re.compile(r"^(undo_?\d+|.*\.ibu)$")
#: names claimed by place (``claim_name``), compiled once: it runs for every file of a data dir
_IBDATA_RE = re.compile(r"^ibdata\d+$")
_UNDO_NAME_RE = re.compile(r"^(undo_\d+|undo\d{3})$")
_DBLWR_RE = re.compile(r"^#ib_\d+_\d+\.dblwr$")


#: the B-tree page types (fil0fil.h) whose index id and level the map shows
BTREE_KIND_NAMES = ("FIL_PAGE_INDEX", "FIL_PAGE_RTREE", "FIL_PAGE_TYPE_INSTANT", "FIL_PAGE_SDI")


class InnoDB(Engine):
    name = "innodb"
    label = "InnoDB"
    roles = ("tablespace", "system_tablespace", "redo_log", "undo", "doublewrite")
    claim_order = 20
    head_bytes = 38        # FIL_PAGE_DATA: the FIL header of page 0

    #: FIEMAP of a page-compressed tablespace lists one extent a page (thousands of them); a
    #: small file's list costs less than the worker's second open (2,000 80 KiB tablespaces:
    #: 1.77-2.18 s CPU listed here, 2.19-2.37 s in the workers)
    facts_in_workers_from = 1 << 20

    def reads_facts(self, entry, ctx):
        """Paged files read by more than one process: their holes are listed by the worker
        that reads their pages (parsers/innodb/scan.py ``_analyze_one``), not one by one first."""
        return entry.role in ("tablespace", "system_tablespace", "undo") and ctx.workers > 1

    def claim_name(self, rel, state):
        name = rel.rsplit("/", 1)[-1]
        lower = name.lower()
        parts = rel.split("/")
        if _IBDATA_RE.match(lower) or lower == "mysql.ibd":
            return "system_tablespace"
        if lower in ("ibtmp1",):
            return "tablespace"
        if INNODB_REDO_RE.match(name) or (len(parts) >= 2 and parts[-2] == "#innodb_redo"):
            return "redo_log"
        if lower.endswith(".ibu") or _UNDO_NAME_RE.match(lower):
            return "undo"
        if _DBLWR_RE.match(lower) or lower == "ib_doublewrite":
            return "doublewrite"
        if lower.endswith(".ibd") or lower.endswith(".ibt"):
            return "tablespace"
        return None

    def claim_bytes(self, head, tail):
        # page 0 of a tablespace: page number 0, type FSP_HDR
        if len(head) >= self.head_bytes:
            page_no = int.from_bytes(head[FIL_PAGE_OFFSET:FIL_PAGE_OFFSET + 4], "big")
            page_type = int.from_bytes(head[FIL_PAGE_TYPE:FIL_PAGE_TYPE + 2], "big")
            if page_no == 0 and page_type == FIL_PAGE_TYPE_FSP_HDR:
                return "tablespace"
        return None

    def analyze(self, dataset, files, ctx):
        from .scan import analyze
        analyze(dataset, files, ctx)

    def place(self, entry: FileEntry):
        db, table = entry.database, entry.table
        parts = entry.path.split("/")
        if db is None:
            if entry.role == "tablespace" and len(parts) >= 2:
                db = parts[-2]
            elif entry.role == "tablespace":
                db = "(files)"
            else:
                db = "(system)"
        if table is None and entry.role == "tablespace":
            stem = parts[-1].rsplit(".", 1)[0]
            table = stem.split("#P#")[0].split("#p#")[0]
        return db, table, None

    def file_children(self, entry: FileEntry):
        inno = entry.sections.get("innodb") or {}
        page = int(inno.get("physical_page_size") or inno.get("page_size") or 0)
        logical = int(inno.get("page_size") or page)
        out = []
        for ix in inno.get("indexes", []) or []:
            pages = int(ix.get("pages", 0))
            out.append((ix.get("name") or f"index {ix.get('index_id')}", ix, pages * page, pages * logical))
        return out

    def section_from_json(self, data):
        from .section import InnoDBSection
        return InnoDBSection.from_json(data) if isinstance(data, dict) else data

    def unit_geometry(self, entry: FileEntry):
        """Pages (the section's page sizes) in rows of one extent (FSP_EXTENT_SIZE)."""
        sec = entry.sections.get("innodb") or {}
        logical = int(sec.get("page_size") or UNIV_PAGE_SIZE_ORIG)
        physical = int(sec.get("physical_page_size") or logical)
        extra = (("encryption", "Encryption (key version)"),) if isinstance(sec.get("encryption"), dict) else ()
        return UnitGeometry(physical, logical, extent_size_pages(logical), "page", "extent",
                            tree_kind_names=BTREE_KIND_NAMES, extra_modes=extra)

    def preview_target(self, path):
        return preview.preview_target(path)

    def preview(self, path, emit, is_cancelled, root=None):
        return preview.header_preview(path, emit, is_cancelled, root=root)

    def inspect_unit(self, entry, i, unit=None):
        from .inspect import inspect_unit
        return inspect_unit(entry, i, unit)

    def preview_file(self, info):
        return preview.PreviewFile(info)

    def unit_payload(self, entry, i, max_output):
        from .payloads import unit_payload
        return unit_payload(entry, i, max_output=max_output)


ENGINE = InnoDB()

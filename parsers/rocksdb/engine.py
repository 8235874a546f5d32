"""The RocksDB / MyRocks engine behind the engine protocol (parsers/engine.py).

A RocksDB directory (MyRocks' ``#rocksdb``, or any folder with ``CURRENT`` and a
``MANIFEST-*``) is claimed by place: ``NNNNNN.sst`` tables, ``MANIFEST-*``,
``OPTIONS-*``, ``NNNNNN.log`` write-ahead logs, ``LOG*`` info logs, ``CURRENT``,
``IDENTITY``, ``LOCK`` (RocksDB file/filename.cc names them so). A lone SST elsewhere
is claimed by its footer's magic number."""
from __future__ import annotations

import posixpath
import re
import struct

import numpy as np

from ..arrays import distinct
from ..engine import Engine
from ..model import FileEntry, UnitGeometry
from .magic import kBlockBasedTableMagicNumber, kLegacyBlockBasedTableMagicNumber
from .names import (ENGINE as NAME, ENV_NAMES, INFO_LOG_RE, MANIFEST_RE, OPTIONS_RE, SST_RE, WAL_RE)

MYROCKS_DIR = "#rocksdb"
#: blocks drawn to a row of the unit map
BLOCKS_PER_ROW = 32
_MAGICS = (struct.pack("<Q", kBlockBasedTableMagicNumber), struct.pack("<Q", kLegacyBlockBasedTableMagicNumber))


def is_rocksdb_dir(dirname: str, names: set[str]) -> bool:
    if dirname == MYROCKS_DIR:
        return True
    return "CURRENT" in names and any(MANIFEST_RE.match(n) for n in names)


def frm_key_names_of(dataset):
    """``key_names(rocksdb_dir, db, table)``: the key names of the table's ``.frm`` beside the
    MyRocks directory (MyRocks names an index by its place in the table's key order; the
    names are the server's, in the .frm: sql/table.cc), or None when the scan holds no .frm."""
    from ..fileio import FileReadError, ReadOnlyFile
    from ..server.frm import FrmError, read_frm

    def key_names(rocks_dir: str, db: str, table: str):
        parent = posixpath.dirname(rocks_dir)
        entry = dataset.file(posixpath.join(parent, db, f"{table}.frm"))
        if entry is None:
            return None
        try:
            with ReadOnlyFile(entry.abspath) as f:
                frm = read_frm(f.pread(0, min(f.size, 1 << 20)))
        except (FileReadError, FrmError):
            return None
        return list(frm.key_names) or None
    return key_names


class RocksDB(Engine):
    name = NAME
    label = "MyRocks / RocksDB"
    #: SST files are placed by column family and LSM level, not by database and table
    place_kinds = ("column family", "level", "part")
    roles = ("sst", "manifest", "options", "wal", "info_log", "engine_environment")
    claim_order = 15
    tail_bytes = 8

    def enter_dir(self, reldir, dirname, names, state):
        return is_rocksdb_dir(dirname, set(names))

    def claim_name(self, rel, state):
        if not state:
            return None
        n = rel.rsplit("/", 1)[-1]
        if SST_RE.match(n):
            return "sst"
        if MANIFEST_RE.match(n):
            return "manifest"
        if OPTIONS_RE.match(n) or re.match(r"^OPTIONS-\d+\.dbtmp$", n):
            return "options"
        if WAL_RE.match(n):
            return "wal"
        if INFO_LOG_RE.match(n):
            return "info_log"
        if n in ENV_NAMES:
            return "engine_environment"
        return None

    def claim_bytes(self, head, tail):
        if len(tail) >= 8 and bytes(tail[-8:]) in _MAGICS:
            return "sst"
        return None

    def analyze(self, dataset, files, ctx):
        from .scan import analyze
        analyze(dataset, files, ctx, frm_key_names=frm_key_names_of(dataset))

    def place(self, entry: FileEntry):
        sec = entry.sections.get(NAME)
        if entry.role == "sst" and sec is not None:
            cf = sec.get("column_family") or "(unknown column family)"
            level = sec.get("level")
            if level is not None:
                return cf, f"L{level}", None
            return cf, "not live (obsolete)" if sec.get("live") is False else "level unknown", None
        return "(RocksDB files)", None, None

    def file_children(self, entry: FileEntry):
        u = entry.units
        if u is None or not len(u) or entry.role != "sst":
            return []
        rows = []
        owners = u["owner"]
        for o in distinct(owners[owners >= 0]):
            m = owners == o
            name = entry.owner_names.get(int(o), f"index {int(o)}")
            ref = {"index_number": int(o), "name": name, "data_blocks": int(m.sum())}
            rows.append((name, ref, int(u["stored"][m].sum(dtype=np.uint64)),
                         int(u["logical"][m].sum(dtype=np.uint64))))
        return rows

    def spread_tables(self, dataset):
        """MyRocks tables › indexes with the bytes of their data blocks over every live SST
        (stored and uncompressed, from the blocks' owners: what :meth:`file_children`
        shows per SST, summed), beside the engine's own figures in ``ref``."""
        out = []
        for t in dataset.tables:
            if t.engine != NAME or not t.info or not t.info.get("indexes"):
                continue
            sums: dict[int, list[int]] = {}
            for path in t.files:
                e = dataset.file(path)
                if e is None or e.units is None or not len(e.units):
                    continue
                for name, ref, stored, logical in self.file_children(e):
                    acc = sums.setdefault(ref["index_number"], [0, 0, 0, 0])
                    acc[0] += stored
                    acc[1] += logical
                    acc[2] += ref["data_blocks"]
                    acc[3] += 1
            rows = []
            for ix in t.info["indexes"]:
                stored, logical, blocks, files = sums.get(ix["index_number"], (0, 0, 0, 0))
                name = f"{ix['name']} ({ix['partition']})" if ix.get("partition") else str(ix["name"])
                ref = dict(ix, table=t.key, data_blocks=blocks, data_block_files=files)
                rows.append((name, ref, stored, logical))
            out.append((t.database, t.name, rows))
        return out

    def unit_geometry(self, entry: FileEntry):
        if entry.role != "sst" or entry.units is None:
            return None
        return UnitGeometry(0, 0, BLOCKS_PER_ROW, "block", "row", tree_kind_names=None,
                            modes=(("type", "Block kind · compression"), ("index", "MyRocks index"),
                                   ("compression", "Stored / uncompressed"), ("allocation", "Allocation (holes)"),
                                   ("checksum", "Checksum")))

    def unit_payload(self, entry, i, max_output):
        from ..fileio import ReadOnlyFile
        from .sst import block_contents
        sst = entry.detail.get("sst")
        if sst is None:
            raise ValueError(f"{entry.path}: SST not read")
        with ReadOnlyFile(entry.abspath) as f:
            return block_contents(sst, f, int(i), max_output)

    def section_from_json(self, data):
        from .section import section_from_json
        return section_from_json(data) if isinstance(data, dict) else data

    def restore(self, dataset):
        from .section import RocksSection
        data = dataset.sections.get(self.name)
        if isinstance(data, dict) and not isinstance(data, RocksSection):
            dataset.sections[self.name] = RocksSection.from_json(data)


ENGINE = RocksDB()

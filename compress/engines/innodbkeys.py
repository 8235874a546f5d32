"""The keys of another engine's table as InnoDB would build them after ``ALTER TABLE ...
ENGINE=InnoDB`` (which keeps the table's keys; ``CREATE TABLE ... AS SELECT`` copies none): an
**estimate** of each index's pages from the decoded rows (fixedrows.py) and the ``.frm``'s keys
(parsers/server/frmkeys.py).

What it assumes (MariaDB storage/innobase):

* dict0dict.cc ``dict_index_build_internal_clust``: with a PRIMARY KEY the clustered index is
  keyed on it and has no DB_ROW_ID: each record is 6 bytes shorter than in the key-less table
  the row models build (innodbrows.py); its node pointers hold the key and the child page
  number (btr0cur.cc / rem0rec.cc: 5 header bytes, null and length bytes, the fields, 4);
* ``dict_index_build_internal_non_clust``: a secondary index record holds its key parts (a
  prefix part at most its length), then the primary key's columns it does not hold already
  (or DB_ROW_ID without a primary key), behind the 5-byte header, a null bit per nullable
  field and the length bytes of its variable fields (rem0rec.cc
  ``rec_get_converted_size_comp``); its node pointers hold the unique prefix (a UNIQUE index:
  its key parts; else every field) and the child page number;
* every index is built sorted (row0merge.cc / btr0bulk.cc ``PageBulk::init``), a directory
  slot per 4 records; with innodb_fill_factor=100 only the clustered index keeps 1/16 of each
  page free (dict_index_get_space_reserve), a secondary index's pages are filled up
  (PageBulk::isSpaceAvailable); each index has at least its root page.

Only the plain pages are counted (no page compression); the extents InnoDB reserves for each
index's two segments are not added.
"""
from __future__ import annotations

from dataclasses import dataclass

from dbxray.parsers.server.frmkeys import FrmKey
from dbxray.parsers.server.record import Value

from .fixedrows import _innodb_bytes, _variable_in_innodb, innodb_frame, inpage_length
from .innodbrows import (DATA_ROW_ID_LEN, PAGE_DIR_SLOT_SIZE, RECS_PER_SLOT, REC_N_NEW_EXTRA_BYTES, ROW_OVERHEAD,
                         usable_bytes)

#: the child page number a node pointer ends with
REC_NODE_PTR_SIZE = 4


@dataclass
class IndexPages:
    name: str
    leaf_pages: int
    pages: int
    records: int
    mean_record: float

    def to_json(self) -> dict:
        return {"name": self.name, "leaf_pages": self.leaf_pages, "pages": self.pages,
                "mean_record_bytes": round(self.mean_record, 1)}


def _key_fields(key: FrmKey, fields) -> list[tuple[object, int | None]]:
    """(field, prefix bytes or None for the whole column) of each key part."""
    out = []
    for p in key.parts:
        f = fields[p.field]
        whole = f.is_blob is False and (p.length >= (f.octet_length or f.pack_length) or not
                                        (f.is_varchar or f.is_char))
        out.append((f, None if whole else p.length))
    return out


def _record_size(parts: list[tuple[object, int | None]], by_field: dict, row_id: bool, node_ptr: bool) -> int:
    """rec_get_converted_size_comp of these fields of one row (plus a row id / child page)."""
    nulls = sum(1 for f, _ in parts if f.nullable)
    size = REC_N_NEW_EXTRA_BYTES + (nulls + 7) // 8
    for f, prefix in parts:
        v = by_field.get(f.record_offset)
        if v is None or v.data is None:
            continue
        b = _innodb_bytes(v)
        if prefix is not None:
            b = b[:prefix]
        if _variable_in_innodb(v):
            size += 2 if (f.is_blob or (f.octet_length or 0) > 255) and len(b) > 127 else 1
        size += len(b)
    if row_id:
        size += DATA_ROW_ID_LEN
    if node_ptr:
        size += REC_NODE_PTR_SIZE
    return size


def _room(page_size: int) -> int:
    """Record and directory bytes of a secondary index page a sorted build fills (no reserve)."""
    return usable_bytes(page_size) + page_size // 16


def _pages(sizes: list[int], page_size: int, clustered: bool = False) -> int:
    """Pages a sorted build fills with records of these sizes (at least one)."""
    cap = usable_bytes(page_size) if clustered else _room(page_size)
    pages, used = 0, 0.0
    for s in sizes:
        need = s + PAGE_DIR_SLOT_SIZE / RECS_PER_SLOT
        if used and used + need > cap:
            pages += 1
            used = 0.0
        used += need
    return pages + (1 if used or not pages else 0)


def _tree(leaf_sizes: list[int], node_size: float, page_size: int, clustered: bool = False) -> tuple[int, int]:
    """(leaf pages, all pages) of an index: its leaves, then a level of node pointers per
    page below, up to a single root."""
    leaves = _pages(leaf_sizes, page_size, clustered)
    total, level = leaves, leaves
    per_page = (usable_bytes(page_size) if clustered else _room(page_size)) / (node_size + PAGE_DIR_SLOT_SIZE / RECS_PER_SLOT)
    while level > 1:
        level = max(1, -(-level // max(1, int(per_page))))
        total += level
    return leaves, total


def key_pages(keys: tuple[FrmKey, ...], fields, rows: list[list[Value]], scale: float = 1.0,
              page_size: int = 16384) -> dict:
    """Each index's pages for ``rows`` (scaled by ``scale``: the table's rows over the rows
    given) and what a PRIMARY KEY changes in the clustered index (module doc)."""
    primary = next((k for k in keys if k.primary), None)
    pk_parts = _key_fields(primary, fields) if primary else []
    pk_ids = {id(f) for f, _ in pk_parts}
    out: dict = {"primary_key": primary is not None, "rows": int(round(len(rows) * scale)), "indexes": []}
    by_rows = [{v.field.record_offset: v for v in r} for r in rows]
    if primary is not None:
        node = [_record_size(pk_parts, b, False, True) for b in by_rows]
        mean = sum(node) / max(len(node), 1)
        out["clustered_bytes_saved"] = int(round(DATA_ROW_ID_LEN * len(rows) * scale))
        out["clustered_node_ptr_bytes"] = round(mean, 1)
        # the clustered index keyed on it: each record without the row id (its long columns
        # off-page as innodbextern.py moves them), pages 15/16 full
        nullable = sum(1 for f in fields if f.stored and f.nullable)
        recs = [ROW_OVERHEAD - DATA_ROW_ID_LEN + inpage_length(innodb_frame(r, nullable)) for r in rows]
        if scale != 1.0 and recs:
            recs = [recs[i % len(recs)] for i in range(int(round(len(recs) * scale)))]
        leaves, pages = _tree(recs, mean, page_size, clustered=True)
        out["clustered"] = {"leaf_pages": leaves, "pages": pages}
    for k in keys:
        if k.primary:
            continue
        parts = _key_fields(k, fields)
        ids = {id(f) for f, _ in parts}
        extra = [(f, None) for f, _ in pk_parts if id(f) not in ids]
        leaf = [_record_size(parts + extra, b, primary is None, False) for b in by_rows]
        unique = parts if k.unique else parts + extra
        node = [_record_size(unique, b, primary is None and not k.unique, True) for b in by_rows]
        if scale != 1.0 and leaf:
            # the sample's records repeated to the table's count
            n = int(round(len(leaf) * scale))
            leaf = [leaf[i % len(leaf)] for i in range(n)]
        mean_node = sum(node) / max(len(node), 1)
        leaves, pages = _tree(leaf, mean_node, page_size)
        out["indexes"].append(IndexPages(k.name, leaves, pages, len(leaf),
                                         sum(leaf) / max(len(leaf), 1)).to_json())
    out["secondary_pages"] = sum(i["pages"] for i in out["indexes"])
    out["secondary_bytes"] = out["secondary_pages"] * page_size
    return out

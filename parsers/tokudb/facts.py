"""What the TokuDB view draws of one dictionary file (typed, from the parser's
own structures): the header's estimates, the blocks of the translation table
classified by what they hold, and the nodes' shapes for tooltips.

Block numbers 1 and 2 are the translation table and the descriptor
(blocktable.py RESERVED_BLOCKNUM_*, from ft/serialize/block_table.h); the two
header slots fill the first HEADER_BYTES of the file (ft/serialize/ft-serialize.cc).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .blocktable import HEADER_BYTES, RESERVED_BLOCKNUM_DESCRIPTOR, RESERVED_BLOCKNUM_TRANSLATION

#: what a block holds, in the order the view lists them (kind codes index this tuple)
BLOCK_KINDS = ("header", "translation", "descriptor", "h0", "h1", "h2", "h3", "rollback", "other")
#: heights 0..3 and above (3 stands for >= 3)
_HEIGHT_KINDS = np.array([BLOCK_KINDS.index(k) for k in ("h0", "h1", "h2", "h3")], dtype=np.int16)
#: one used translation-table entry: block number, offset, size on disk, kind (BLOCK_KINDS index)
BLOCK_DTYPE = np.dtype([("blocknum", "<i8"), ("offset", "<i8"), ("size", "<i8"), ("kind", "<i2")])


@dataclass(frozen=True)
class NodeShape:
    """A node as a tooltip names it."""

    height: int | None
    n_children: int
    serialize_size: int          # uncompressed bytes


@dataclass
class TokuDBFileFacts:
    """A fractal-tree file's facts for the view (``FileEntry.facts``; not in saved scans)."""

    index: str | None = None                 # secondary key name
    header_numbytes: int | None = None       # header estimate (DB->stat64 bt_dsize): what I_S adds up
    header_numrows: int | None = None        # header estimate of rows (bt_nkeys)
    blocks_total: int | None = None          # bytes from the file start to the end of the last block
    entries_per_height: dict[int, int] = field(default_factory=dict)   # leaf entries / buffered messages
    blocks: np.ndarray | None = None         # BLOCK_DTYPE by offset; None without a translation table
    nodes: dict[int, NodeShape] = field(default_factory=dict)
    header_bytes: int = HEADER_BYTES          # the two header slots at the start of the file
    block_kinds: tuple[str, ...] = BLOCK_KINDS  # names of the ``blocks["kind"]`` codes


def classify_blocks(used: np.ndarray, heights: dict[int, int | None], rollback: list[int]) -> np.ndarray:
    """The used translation-table entries (blocktable.BTT_DTYPE) sorted by offset, each
    with what it holds: a node of its height, a rollback block, the translation table,
    the descriptor, or another block."""
    order = np.argsort(used["offset"], kind="stable")
    out = np.zeros(len(order), dtype=BLOCK_DTYPE)
    out["blocknum"] = used["blocknum"][order]
    out["offset"] = used["offset"][order]
    out["size"] = used["size"][order]
    bn = out["blocknum"]
    kinds = np.full(len(bn), BLOCK_KINDS.index("other"), dtype=np.int16)
    known = {b: h for b, h in heights.items() if h is not None}
    if known:
        nb = np.fromiter(known.keys(), dtype=np.int64, count=len(known))
        nh = np.fromiter((min(int(h), 3) for h in known.values()), dtype=np.int64, count=len(known))
        srt = np.argsort(nb)
        nb, nh = nb[srt], nh[srt]
        pos = np.clip(np.searchsorted(nb, bn), 0, len(nb) - 1)
        hit = nb[pos] == bn
        kinds[hit] = _HEIGHT_KINDS[nh[pos][hit]]
    if rollback:
        kinds[np.isin(bn, rollback)] = BLOCK_KINDS.index("rollback")
    kinds[bn == RESERVED_BLOCKNUM_TRANSLATION] = BLOCK_KINDS.index("translation")
    kinds[bn == RESERVED_BLOCKNUM_DESCRIPTOR] = BLOCK_KINDS.index("descriptor")
    out["kind"] = kinds
    return out

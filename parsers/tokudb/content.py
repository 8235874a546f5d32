"""The logical content of a tree: leaf entries with the buffered messages of
internal nodes applied -- what a cursor scan would return.

This decompresses every partition, so it is the slow path (used for the
small engine dictionaries -- tokudb.directory, tokudb.environment -- and on
demand); the size figures never need it.

Rules (PerconaFT ``ft/ft-ops.cc``, ``ft/node.cc``): a buffered message is
applied to a leaf only when its MSN is above the leaf's
``max_msn_applied_to_node_on_disk``; messages apply in MSN order.  Inserts set
the value, delete-any removes it; broadcast / commit / abort messages do not
change a committed row here.  A leaf entry's visible value is its innermost
record (a provisional insert whose transaction committed counts as live, as
the engine cleans these lazily).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..codecs.general import DEFAULT_MAX_OUTPUT, DecodeError
from .ftfile import FtFile
from .leaf import read_basement
from .methods import decompress
from .node import decode_node_info
from .nonleaf import read_message_buffer
from .wire import FormatError

# ft/msg.h: enum ft_msg_type
FT_INSERT = 1
FT_DELETE_ANY = 2
FT_INSERT_NO_OVERWRITE = 11


@dataclass
class Content:
    """Live rows of a tree, and what it took to get them."""

    rows: dict[bytes, bytes] = field(default_factory=dict)
    leaf_entries: int = 0
    messages_applied: int = 0
    errors: list[tuple[int | None, str]] = field(default_factory=list)

    @property
    def key_bytes(self) -> int:
        return sum(len(k) for k in self.rows)

    @property
    def value_bytes(self) -> int:
        return sum(len(v) for v in self.rows.values())


def read_partition(buf, sb, max_output: int = DEFAULT_MAX_OUTPUT) -> bytes:
    """Decompressed bytes of one partition sub-block (header read from ``sb``)."""
    start = sb.offset + 8
    return decompress(buf[start:start + sb.compressed_size], sb.uncompressed_size, max_output)


def logical_content(buf, ft: FtFile, check=None) -> Content:
    """Decode every leaf and message buffer of ``ft`` and apply the messages."""
    out = Content()
    leaf_msn: dict[bytes, int] = {}
    state: dict[bytes, bytes | None] = {}
    messages = []
    for k, node in enumerate(ft.nodes.values()):
        if check is not None and k % 16 == 0:
            check()
        if node.is_leaf and node.max_msn_applied_to_node_on_disk is None and node.node_info is not None:
            decode_node_info(buf, node)
        for i, p in enumerate(node.partitions):
            sb = p.sub_block
            if sb is None:
                continue
            try:
                raw = read_partition(buf, sb)
                if node.is_leaf:
                    bn = read_basement(raw)
                    for e in bn.entries:
                        out.leaf_entries += 1
                        state[e.key] = e.value
                        leaf_msn[e.key] = node.max_msn_applied_to_node_on_disk or 0
                else:
                    mb = read_message_buffer(raw, keep=True)
                    messages.extend(mb.items or ())
            except (DecodeError, FormatError) as e:
                out.errors.append((sb.offset, f"node block {node.blocknum} partition {i}: {e}"))
    messages.sort(key=lambda m: m[0])
    for msn, t, key, val in messages:
        if msn <= leaf_msn.get(key, -1):
            continue                     # already applied to the leaf on disk
        if t in (FT_INSERT, FT_INSERT_NO_OVERWRITE):
            if t == FT_INSERT_NO_OVERWRITE and state.get(key) is not None:
                continue
            state[key] = val
            out.messages_applied += 1
        elif t == FT_DELETE_ANY:
            state[key] = None
            out.messages_applied += 1
    out.rows = {k: v for k, v in state.items() if v is not None}
    return out

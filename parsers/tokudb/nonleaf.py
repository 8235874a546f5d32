"""Internal-node partitions: message buffers.

Source: PerconaFT ``ft/serialize/ft_node-serialize.cc``
(``serialize_child_buffer`` / ``deserialize_child_buffer``),
``ft/msg_buffer.cc`` (``message_buffer::deserialize_from_rbuf``,
``msg_memsize_in_buffer``), ``ft/msg.cc`` and ``ft/txn/xids.cc``.  A
decompressed buffer is::

    u8 FTNODE_PARTITION_MSG_BUFFER (0xBB), u32 message count,
    per message: u8 type, u8 is_fresh, u64 MSN, u8 num_xids + num_xids x u64,
                 u32 keylen + key, u32 vallen + value
    three offset lists (fresh, stale, broadcast): u32 count + count x u32
    u32 x1764 of everything before it
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .node import FTNODE_PARTITION_MSG_BUFFER
from .wire import FormatError, u32, u64
from .x1764 import x1764

# msg_buffer.h: struct __attribute__((packed)) buffer_entry {u32 keylen, u32 vallen,
# u8 type, bool is_fresh, MSN msn, XIDS_S xids_s (u8 num_xids)} = 19 bytes;
# msg_memsize_in_buffer = sizeof(buffer_entry) + keylen + vallen + xids size - sizeof(XIDS_S)
BUFFER_ENTRY_SIZE = 4 + 4 + 1 + 1 + 8 + 1
# ft/msg.h enum ft_msg_type (the ones a buffer usually holds)
FT_MSG_NAMES = {0: "none", 1: "insert", 2: "delete_any", 3: "abort_any", 4: "commit_any",
                5: "abort_broadcast_txn", 6: "commit_broadcast_all", 7: "commit_broadcast_txn",
                8: "abort_broadcast_all", 9: "optimize", 10: "optimize_for_upgrade",
                11: "insert_no_overwrite", 12: "update", 13: "update_broadcast_all"}


#: bytes of a serialized buffer that are not messages: type byte, count, three list
#: counts, checksum (1 + 4 + 3 * 4 + 4)
BUFFER_FIXED_BYTES = 21


def buffer_memory_bytes(uncompressed_size: int, messages: int) -> int:
    """The engine's in-memory size of a buffer (``toku_bnc_nbytesinbuf``, what
    ``tokuftdump --summary`` prints as "msg size") from the sub-block header and
    the message count alone.

    A serialized message (type, is_fresh, MSN, num_xids + xids, keylen + key,
    vallen + value: 19 + 8 * xids + key + value bytes) is exactly as long as its
    packed in-memory ``buffer_entry`` (19 bytes) + key + value + xids, and every
    message sits in exactly one of the fresh / stale / broadcast offset lists
    (4 bytes each), so the buffer size is U - 21 - 4 * messages.
    """
    return uncompressed_size - BUFFER_FIXED_BYTES - 4 * messages


@dataclass
class MessageBuffer:
    """A decoded message buffer: counts, bytes and types (messages themselves not kept)."""

    messages: int
    memory_bytes: int                      # the engine's in-memory size (toku_bnc_nbytesinbuf)
    key_bytes: int
    value_bytes: int
    types: Counter = field(default_factory=Counter)
    fresh: int = 0
    stale: int = 0
    broadcast: int = 0
    checksum_ok: bool = True
    #: (msn, type, key, value) of each message, only when asked for
    items: list[tuple[int, int, bytes, bytes]] | None = None


def read_message_buffer(raw: bytes, offset: int = 0, keep: bool = False) -> MessageBuffer:
    """Read a decompressed internal-node partition starting at ``offset``.

    Every message is bounds-checked; counts are never trusted for allocation.
    """
    raw = bytes(raw[offset:])
    if len(raw) < 9:
        raise FormatError("message buffer shorter than its header", offset)
    if raw[0] != FTNODE_PARTITION_MSG_BUFFER:
        raise FormatError(f"buffer type byte 0x{raw[0]:02x}, expected 0xbb", offset)
    end = len(raw) - 4
    ok = x1764(raw[:end]) == u32(raw, end)
    n = u32(raw, 1)
    p = 5
    mem = kb = vb = 0
    types: Counter = Counter()
    items: list | None = [] if keep else None
    for i in range(n):
        if p + 11 > end:
            raise FormatError(f"message {i} of {n} overruns the buffer", offset + p)
        t = raw[p]
        msn = u64(raw, p + 2)
        nx = raw[p + 10]
        p += 11 + 8 * nx
        if p + 4 > end:
            raise FormatError(f"message {i} overruns the buffer", offset + p)
        kl = u32(raw, p)
        p += 4 + kl
        if p + 4 > end:
            raise FormatError(f"message {i} key overruns the buffer", offset + p)
        vl = u32(raw, p)
        p += 4 + vl
        if p > end:
            raise FormatError(f"message {i} value overruns the buffer", offset + p)
        if items is not None:
            items.append((msn, t, raw[p - vl - 4 - kl:p - vl - 4], raw[p - vl:p]))
        types[FT_MSG_NAMES.get(t, str(t))] += 1
        kb += kl
        vb += vl
        mem += BUFFER_ENTRY_SIZE + kl + vl + 8 * nx
    lists = []
    for name in ("fresh", "stale", "broadcast"):
        if p + 4 > end:
            raise FormatError(f"{name} offset list missing", offset + p)
        c = u32(raw, p)
        p += 4 + 4 * c
        if p > end:
            raise FormatError(f"{name} offset list overruns the buffer", offset + p)
        lists.append(c)
    if p != end:
        raise FormatError(f"{end - p} stray bytes after the offset lists", offset + p)
    return MessageBuffer(n, mem, kb, vb, types, lists[0], lists[1], lists[2], ok, items)

"""Tree nodes (blocks >= 3): ``tokuleaf`` / ``tokunode`` headers, the node-info
sub-block and one sub-block per partition.

Source: PerconaFT ``ft/serialize/ft_node-serialize.cc``
(``serialize_ftnode_partition_size``, ``serialize_node_header``,
``deserialize_ftnode_header_from_rbuf_if_small_enough``,
``deserialize_ftnode_info``, ``read_compressed_sub_block``) and
``ft/serialize/sub_block.h``.  A node block is::

    "tokuleaf" | "tokunode"                 8 bytes magic (height 0 / > 0)
    u32 layout_version, u32 layout_version_original, u32 build_id
    u32 n_children
    n_children x (u32 start, u32 size)      BP_START / BP_SIZE of each partition
    u32 x1764 of the header bytes above     header length = 28 + 8 * n_children
    sub-block: node info
    sub-block per partition, back to back

    sub-block = u32 compressed_size C, u32 uncompressed_size U,
                C bytes (first byte = method byte, see methods.py),
                u32 x1764 of the 8 + C bytes before it

Only headers are read here: a node's disk and uncompressed sizes come from the
sub-block headers without touching a payload.  ``read_node`` optionally
checks sub-block checksums (reads, never decompresses) and decodes the small
node-info sub-block of internal nodes (height, children).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from ..codecs.general import DecodeError
from .methods import KNOWN_METHODS, decompress, decompress_prefix, method_of
from .wire import FormatError, u32, u64
from .x1764 import x1764

LEAF_MAGIC = b"tokuleaf"
NONLEAF_MAGIC = b"tokunode"
ROLLBACK_MAGIC = b"tokuroll"
# ft_node-serialize.cc: node_header_overhead = magic + version + version_original + build_id
# + n_children + checksum; plus 8 per partition (BP_START, BP_SIZE)
NODE_HEADER_FIXED = 8 + 4 + 4 + 4 + 4 + 4
SUB_BLOCK_OVERHEAD = 12          # u32 C, u32 U, ..., u32 x1764
# ft/node.h: enum ftnode_partition_type
FTNODE_PARTITION_DMT_LEAVES = 0xAA
FTNODE_PARTITION_MSG_BUFFER = 0xBB
#: the engine never writes a node with more children than this sane bound
MAX_CHILDREN = 1 << 20
#: cap for any sub-block's uncompressed size (node sizes are MiB, u32 on disk)
MAX_SUB_BLOCK = 1 << 31
SUPPORTED_NODE_VERSIONS = range(26, 30)
#: node blocks beyond this are refused unread (the engine writes nodes of a few MiB)
MAX_NODE_BLOCK = 1 << 30
#: the node-info sub-block (pivots, child numbers) is decoded up to this size only
MAX_NODE_INFO = 64 << 20

_CU = struct.Struct("<II")


@dataclass
class SubBlock:
    """One sub-block's header (``struct sub_block``): where it is and what it claims."""

    offset: int                  # file offset of the u32 compressed_size
    compressed_size: int         # C (payload bytes, method byte included)
    uncompressed_size: int       # U
    method_byte: int             # first byte of the payload
    checksum_ok: bool | None = None     # None: not checked

    @property
    def disk_size(self) -> int:
        return self.compressed_size + SUB_BLOCK_OVERHEAD


@dataclass
class Partition:
    """One child partition as the node header records it, and its sub-block."""

    start: int                   # BP_START, from the block start
    disk_size: int               # BP_SIZE
    sub_block: SubBlock | None = None
    entries: int | None = None   # leaf entries (basement) or buffered messages (internal)
    error: str | None = None


@dataclass
class Node:
    """A node read from its headers (``struct ftnode`` as far as headers tell)."""

    blocknum: int
    offset: int
    size: int                    # BTT size (a 512 multiple)
    magic: bytes
    layout_version: int
    layout_version_original: int
    build_id: int
    n_children: int
    header_len: int
    header_checksum_ok: bool
    node_info: SubBlock | None = None
    partitions: list[Partition] = field(default_factory=list)
    height: int | None = None            # 0 for leaves; from node info for internal nodes
    flags: int | None = None
    max_msn_applied_to_node_on_disk: int | None = None
    oldest_referenced_xid_known: int | None = None
    pivot_bytes: int | None = None
    children: list[int] | None = None
    errors: list[tuple[int, str]] = field(default_factory=list)   # (file offset, message)

    @property
    def is_leaf(self) -> bool:
        return self.magic == LEAF_MAGIC

    @property
    def serialize_size(self) -> int:
        """``toku_serialize_ftnode_size``: header + U(node info) + sum U(partitions)."""
        total = self.header_len + (self.node_info.uncompressed_size if self.node_info else 0)
        for p in self.partitions:
            if p.sub_block is not None:
                total += p.sub_block.uncompressed_size
        return total

    @property
    def used_bytes(self) -> int:
        """Bytes of the block the node actually fills (the rest is zero padding)."""
        if self.partitions and self.partitions[-1].sub_block is not None:
            return self.partitions[-1].start + self.partitions[-1].disk_size
        return self.header_len + (self.node_info.disk_size if self.node_info else 0)


def read_node_header(buf, offset: int, size: int, blocknum: int = -1) -> Node:
    """Read the uncompressed node header at ``offset`` (``size`` = the BTT size).

    Raises FormatError (with the offset) on a bad magic, an unknown layout
    version, or a partition table that does not fit the block.
    """
    if size < NODE_HEADER_FIXED or offset + size > len(buf):
        raise FormatError(f"node block {blocknum} ({size} bytes) does not fit the file", offset)
    if size > MAX_NODE_BLOCK:
        raise FormatError(f"node block {blocknum} of {size} bytes is implausibly large, not read", offset)
    head = bytes(buf[offset:offset + 24])
    magic = head[:8]
    if magic not in (LEAF_MAGIC, NONLEAF_MAGIC):
        raise FormatError(f"node block {blocknum}: bad magic {magic!r}", offset)
    version, version_orig, build_id, n = struct.unpack_from("<IIII", head, 8)
    if version not in SUPPORTED_NODE_VERSIONS:
        raise FormatError(f"node block {blocknum}: unknown layout version {version}", offset + 8)
    hlen = NODE_HEADER_FIXED + 8 * n
    if n < 1 or n > MAX_CHILDREN or hlen > size:
        raise FormatError(f"node block {blocknum}: {n} children do not fit a {size}-byte block", offset + 20)
    hb = bytes(buf[offset:offset + hlen])
    stored = u32(hb, hlen - 4)
    node = Node(blocknum=blocknum, offset=offset, size=size, magic=magic, layout_version=version,
                layout_version_original=version_orig, build_id=build_id, n_children=n,
                header_len=hlen, header_checksum_ok=(x1764(hb[:hlen - 4]) == stored))
    if not node.header_checksum_ok:
        node.errors.append((offset + hlen - 4, f"node block {blocknum}: header checksum mismatch"))
    pt = struct.unpack_from(f"<{2 * n}I", hb, 24)
    node.partitions = [Partition(pt[2 * i], pt[2 * i + 1]) for i in range(n)]
    if node.is_leaf:
        node.height = 0
    return node


def read_sub_block_header(buf, offset: int, limit: int) -> SubBlock:
    """Read a sub-block's two sizes and method byte at ``offset``; the sub-block
    must end by file offset ``limit``."""
    if offset + 9 > limit:
        raise FormatError("sub-block header does not fit its block", offset)
    hb = bytes(buf[offset:offset + 9])
    if len(hb) < 9:
        raise FormatError("sub-block header past the end of the file", offset)
    c, u = _CU.unpack_from(hb, 0)
    if c < 1 or offset + 8 + c + 4 > limit:
        raise FormatError(f"sub-block compressed size {c} overruns its block", offset)
    if u > MAX_SUB_BLOCK:
        raise FormatError(f"sub-block uncompressed size {u} is implausible", offset + 4)
    return SubBlock(offset, c, u, hb[8])


def check_sub_block(buf, sb: SubBlock) -> bool:
    """x1764 of the 8 + C bytes of a sub-block against its stored checksum."""
    end = sb.offset + 8 + sb.compressed_size
    data = buf[sb.offset:end]
    stored = int.from_bytes(bytes(buf[end:end + 4]), "little")
    return len(data) == end - sb.offset and x1764(data) == stored


def read_node(buf, offset: int, size: int, blocknum: int = -1, verify: bool = False,
              entries: bool = True, node_info: bool = True) -> Node:
    """Read a whole node's headers: the node header, the node-info sub-block header
    and each partition's sub-block header.

    verify: check every sub-block checksum (reads the compressed bytes, never
    decompresses them).  entries: decode the first 5 bytes of each partition for
    its entry / message count.  node_info: decompress the node-info sub-block of
    internal nodes (height, children).  Problems are collected in
    ``node.errors``; a partition that cannot be read keeps ``sub_block=None``.
    Raises FormatError only when the node header itself is unreadable.
    """
    node = read_node_header(buf, offset, size, blocknum)
    end = offset + size
    try:
        ni = read_sub_block_header(buf, offset + node.header_len, end)
        node.node_info = ni
        if verify:
            ni.checksum_ok = check_sub_block(buf, ni)
            if not ni.checksum_ok:
                node.errors.append((ni.offset, f"node block {blocknum}: node-info checksum mismatch"))
        if method_of(ni.method_byte) not in KNOWN_METHODS:
            node.errors.append((ni.offset + 8, f"node block {blocknum}: unknown compression method "
                                               f"byte 0x{ni.method_byte:02x}"))
        elif node_info and not node.is_leaf:
            decode_node_info(buf, node)
    except FormatError as e:
        node.errors.append((e.offset, f"node block {blocknum}: node info: {e}"))
    expect = node.header_len + (node.node_info.disk_size if node.node_info else 0)
    prev_ok = node.node_info is not None
    for i, p in enumerate(node.partitions):
        where = offset + 24 + 8 * i
        if prev_ok and p.start != expect:
            p.error = f"partition {i} starts at {p.start}, expected {expect}"
        elif p.start + p.disk_size > size or p.disk_size < SUB_BLOCK_OVERHEAD + 1:
            p.error = f"partition {i} (start {p.start}, size {p.disk_size}) overflows the {size}-byte block"
        prev_ok = not p.error
        expect = p.start + p.disk_size
        if p.error:
            node.errors.append((where, f"node block {blocknum}: {p.error}"))
            continue
        try:
            sb = read_sub_block_header(buf, offset + p.start, offset + p.start + p.disk_size)
        except FormatError as e:
            p.error = str(e)
            prev_ok = False
            node.errors.append((e.offset, f"node block {blocknum}: partition {i}: {e}"))
            continue
        if sb.disk_size != p.disk_size:
            p.error = f"partition {i}: sub-block of {sb.disk_size} bytes, header says {p.disk_size}"
            prev_ok = False
            node.errors.append((sb.offset, f"node block {blocknum}: {p.error}"))
            continue
        p.sub_block = sb
        if verify:
            sb.checksum_ok = check_sub_block(buf, sb)
            if not sb.checksum_ok:
                node.errors.append((sb.offset, f"node block {blocknum}: partition {i} checksum mismatch"))
        if method_of(sb.method_byte) not in KNOWN_METHODS:
            p.error = f"partition {i}: unknown compression method byte 0x{sb.method_byte:02x}"
            node.errors.append((sb.offset + 8, f"node block {blocknum}: {p.error}"))
            continue
        if entries:
            _read_entry_count(buf, node, i, p)
    return node


#: input tried for a prefix decode: a few bytes suffice for none / snappy / QuickLZ,
#: zlib may need its Huffman tables first; the whole payload is the last resort
_PREFIX_STEPS = (48, 1024)


def _read_entry_count(buf, node: Node, i: int, p: Partition) -> None:
    """Decode the first 5 bytes of partition i: the partition-type byte and the
    entry count of a basement (``bndata.cc``) or message buffer (``msg_buffer.cc``)."""
    sb = p.sub_block
    start = sb.offset + 8
    c = sb.compressed_size
    head = b""
    for n in [k for k in _PREFIX_STEPS if k < c] + [c]:
        try:
            head = decompress_prefix(buf[start:start + n], sb.uncompressed_size, 5)
        except DecodeError as e:
            if n < c:
                continue               # may just need more input
            p.error = str(e)
            node.errors.append((sb.offset, f"node block {node.blocknum}: partition {i}: {e}"))
            return
        if len(head) >= 5 or n == c:
            break
    if len(head) < 5:
        node.errors.append((sb.offset, f"node block {node.blocknum}: partition {i}: too short for its header"))
        return
    want = FTNODE_PARTITION_DMT_LEAVES if node.is_leaf else FTNODE_PARTITION_MSG_BUFFER
    if head[0] != want:
        node.errors.append((sb.offset, f"node block {node.blocknum}: partition {i}: type byte "
                                       f"0x{head[0]:02x}, expected 0x{want:02x}"))
        return
    p.entries = u32(head, 1)


def decode_node_info(buf, node: Node) -> None:
    """Decompress and read the node-info sub-block (``deserialize_ftnode_info``):
    u64 max_msn, u32 unused, u32 flags, u32 height, u64 oldest referenced xid,
    n-1 pivots (u32 length + bytes), for internal nodes n u64 child block
    numbers, u32 x1764 of the rest."""
    ni = node.node_info
    try:
        raw = decompress(buf[ni.offset + 8:ni.offset + 8 + ni.compressed_size], ni.uncompressed_size,
                         max_output=MAX_NODE_INFO)
    except DecodeError as e:
        node.errors.append((ni.offset, f"node block {node.blocknum}: node info: {e}"))
        return
    try:
        if len(raw) < 32:
            raise FormatError("node info too short", ni.offset)
        if x1764(raw[:-4]) != u32(raw, len(raw) - 4):
            node.errors.append((ni.offset, f"node block {node.blocknum}: node-info inner checksum mismatch"))
        node.max_msn_applied_to_node_on_disk = u64(raw, 0)
        node.flags = u32(raw, 12)
        node.height = u32(raw, 16)
        node.oldest_referenced_xid_known = u64(raw, 20)
        p = 28
        pivots = 0
        for _ in range(node.n_children - 1):
            ln = u32(raw, p)
            p += 4 + ln
            pivots += ln
            if p > len(raw) - 4:
                raise FormatError("pivot keys overrun the node info", ni.offset)
        node.pivot_bytes = pivots
        if node.height > 0:
            if p + 8 * node.n_children > len(raw) - 4:
                raise FormatError("child block numbers overrun the node info", ni.offset)
            node.children = [u64(raw, p + 8 * k) for k in range(node.n_children)]
    except (FormatError, struct.error) as e:
        node.errors.append((ni.offset, f"node block {node.blocknum}: node info: {e}"))

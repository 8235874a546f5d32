"""The fractal-tree file header: two 4096-byte slots at offsets 0 and 4096.

Source: PerconaFT ``ft/serialize/ft-serialize.cc`` (``serialize_ft_min_size``,
``deserialize_ft_from_fd_into_rbuf``, ``toku_deserialize_ft_from``) and
``ft/serialize/block_allocator.h`` (header reserve).  A checkpoint writes the
header to offset 0 when its checkpoint_count is odd and to 4096 when it is even;
the reader takes the slot with a valid checksum and the higher checkpoint count.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .wire import FormatError, s64, u32, u32be, u64
from .x1764 import x1764

# ft/serialize/block_allocator.h: BLOCK_ALLOCATOR_HEADER_RESERVE, two copies
BLOCK_ALLOCATOR_HEADER_RESERVE = 4096
#: ft/serialize/block_allocator.h: every block starts on this boundary (the loader's
#: ``seek_align`` in ft/loader/loader.cc aligns the blocks of a file it writes the same way)
BLOCK_ALLOCATOR_ALIGNMENT = 4096
HEADER_SLOTS = (0, BLOCK_ALLOCATOR_HEADER_RESERVE)
# ft/serialize/ft_layout_version.h
FT_LAYOUT_VERSION_26 = 26
FT_LAYOUT_VERSION_28 = 28
FT_LAYOUT_VERSION_29 = 29
FT_LAYOUT_VERSION = FT_LAYOUT_VERSION_29
#: versions whose header layout this reader knows (fields only appended since 26)
SUPPORTED_LAYOUT_VERSIONS = range(FT_LAYOUT_VERSION_26, FT_LAYOUT_VERSION_29 + 1)
MAGIC = b"tokudata"
# ft-serialize.cc: toku_byte_order_host written as a 64-bit marker
BYTE_ORDER_MARKER = bytes.fromhex("0807060504030201")

# compress.h: enum toku_compression_method
COMPRESSION_METHOD_NAMES = {
    0: "none", 1: "default", 2: "fast", 3: "small",
    7: "snappy", 8: "zlib", 9: "quicklz", 10: "lzma", 11: "zlib_without_checksum",
}


@dataclass
class FtHeader:
    """One decoded header slot (``struct ft_header``)."""

    slot_offset: int
    layout_version: int
    build_id: int
    size: int
    checkpoint_count: int
    checkpoint_lsn: int
    nodesize: int
    translation_offset: int
    translation_size: int
    root_blocknum: int
    flags: int
    layout_version_original: int
    build_id_original: int
    time_of_creation: int
    time_of_last_modification: int
    root_xid_that_created: int
    basementnodesize: int
    time_of_last_verification: int
    on_disk_numrows: int
    on_disk_numbytes: int
    time_of_last_optimize_begin: int
    time_of_last_optimize_end: int
    count_of_optimize_in_progress: int
    msn_at_start_of_last_completed_optimize: int
    compression_method: int
    highest_unused_msn_for_upgrade: int
    max_msn_in_ft: int
    fanout: int | None
    on_disk_logical_rows: int | None
    checksum: int
    checksum_ok: bool

    @property
    def compression_method_name(self) -> str:
        return COMPRESSION_METHOD_NAMES.get(self.compression_method, f"unknown({self.compression_method})")


@dataclass
class HeaderSlots:
    """Both slots as found, and which one is active."""

    slots: dict[int, FtHeader | None] = field(default_factory=dict)
    errors: list[tuple[int, str]] = field(default_factory=list)    # (offset, message)
    active: FtHeader | None = None


def read_ft_header(buf, offset: int) -> FtHeader:
    """Read the ``ft_header`` slot at ``offset`` (magic, version, fields, x1764).

    Raises FormatError (with the offset) on a bad magic, an unknown layout
    version, a truncated slot or a size that does not fit the slot.
    """
    slot = bytes(buf[offset:offset + BLOCK_ALLOCATOR_HEADER_RESERVE])
    if len(slot) < 20:
        raise FormatError("header slot truncated", offset)
    if slot[:8] != MAGIC:
        if not any(slot[:64]):
            raise FormatError("header slot never written (all zero)", offset)
        raise FormatError(f"bad header magic {slot[:8]!r}", offset)
    version = u32be(slot, 8)
    if version not in SUPPORTED_LAYOUT_VERSIONS:
        raise FormatError(f"unknown layout version {version} (reader knows "
                          f"{SUPPORTED_LAYOUT_VERSIONS.start}..{SUPPORTED_LAYOUT_VERSIONS.stop - 1})", offset + 8)
    size = u32be(slot, 16)
    need = 181 + (4 if version >= FT_LAYOUT_VERSION_28 else 0) + (8 if version >= FT_LAYOUT_VERSION_29 else 0) + 4
    if size != need:
        raise FormatError(f"header size {size} does not match layout version {version} (expected {need})",
                          offset + 16)
    if len(slot) < size:
        raise FormatError("header slot truncated", offset)
    b = slot[:size]
    if b[20:28] != BYTE_ORDER_MARKER:
        raise FormatError(f"bad byte-order marker {b[20:28].hex()}", offset + 20)
    fanout = u32(b, 181) if version >= FT_LAYOUT_VERSION_28 else None
    p = 185 if version >= FT_LAYOUT_VERSION_28 else 181
    logical = None
    if version >= FT_LAYOUT_VERSION_29:
        logical = u64(b, p)
        p += 8
    stored = u32(b, p)
    return FtHeader(
        slot_offset=offset, layout_version=version, build_id=u32be(b, 12), size=size,
        checkpoint_count=u64(b, 28), checkpoint_lsn=u64(b, 36), nodesize=u32(b, 44),
        translation_offset=s64(b, 48), translation_size=s64(b, 56), root_blocknum=s64(b, 64),
        flags=u32(b, 72), layout_version_original=u32(b, 76), build_id_original=u32(b, 80),
        time_of_creation=u64(b, 84), time_of_last_modification=u64(b, 92),
        root_xid_that_created=u64(b, 100), basementnodesize=u32(b, 108),
        time_of_last_verification=u64(b, 112), on_disk_numrows=u64(b, 120),
        on_disk_numbytes=u64(b, 128), time_of_last_optimize_begin=u64(b, 136),
        time_of_last_optimize_end=u64(b, 144), count_of_optimize_in_progress=u32(b, 152),
        msn_at_start_of_last_completed_optimize=u64(b, 156), compression_method=b[164],
        highest_unused_msn_for_upgrade=u64(b, 165), max_msn_in_ft=u64(b, 173),
        fanout=fanout, on_disk_logical_rows=logical,
        checksum=stored, checksum_ok=(x1764(b[:p]) == stored),
    )


def read_header_slots(buf) -> HeaderSlots:
    """Read both header slots and pick the active one.

    The active slot is the valid one (magic, version, checksum) with the higher
    checkpoint count; a torn or never-written slot is reported and skipped.
    """
    out = HeaderSlots()
    for off in HEADER_SLOTS:
        try:
            h = read_ft_header(buf, off)
        except FormatError as e:
            out.slots[off] = None
            if "never written" not in str(e) or off == 0:
                out.errors.append((e.offset if e.offset is not None else off, str(e)))
            continue
        out.slots[off] = h
        if not h.checksum_ok:
            out.errors.append((off, f"header slot checksum mismatch (stored {h.checksum:#010x})"))
            continue
        if out.active is None or h.checkpoint_count > out.active.checkpoint_count:
            out.active = h
    return out

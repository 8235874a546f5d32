"""Storage models: how many bytes a unit takes on disk once encoded with a codec.

Every model maps (codec, decoded unit bytes) to the bytes the engine or the
filesystem would really allocate for that unit, with the engine's own
framing and rounding.  Sources are cited per model.  Models whose numbers
are not an exact re-implementation of the engine carry the word
``estimate`` or ``approximation`` in their name, which is what the JSON and
the report show.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

from .registry import Codec, CodecUnavailable, ch_block_body

# ---------------------------------------------------------------------------
# InnoDB page types (storage/innobase/include/fil0fil.h)
FIL_PAGE_TYPE_ALLOCATED = 0
FIL_PAGE_TYPE_FSP_HDR = 8
FIL_PAGE_TYPE_XDES = 9
FIL_PAGE_INDEX = 17855
FIL_PAGE_TYPE_OFFSET = 24     # FIL_PAGE_TYPE: 2 bytes, big endian

#: MariaDB fil0pagecompress.cc, fil_page_compress(): "Let's not compress file
#: space header or extent descriptor": page types 0, FSP_HDR, XDES.
INNODB_NEVER_COMPRESSED = (FIL_PAGE_TYPE_ALLOCATED, FIL_PAGE_TYPE_FSP_HDR, FIL_PAGE_TYPE_XDES)
INNODB_NEVER_COMPRESSED_NAMES = ("FIL_PAGE_TYPE_FSP_HDR", "FIL_PAGE_TYPE_XDES")

#: MariaDB algorithms (fsp0types.h PAGE_*_ALGORITHM) and the registry family
#: that reproduces each one's encoder call in fil_page_compress_low():
#: zlib compress2(level), LZ4_compress_default, lzma_easy_buffer_encode(level,
#: LZMA_CHECK_NONE), BZ2_bzBuffToBuffCompress(blockSize100k=1), snappy_compress.
MARIADB_ALGORITHMS = {"zlib": "zlib", "lz4": "lz4", "lzma": "lzma", "bzip2": "bzip2", "snappy": "snappy"}

#: fil0fil.h fil_space_t::full_crc32_page_compressed_len(): for these
#: algorithms the exact payload length is kept in one extra byte before the
#: checksum (their decoders cannot find the end of the stream by themselves).
_LENGTH_BYTE_FAMILIES = ("lz4", "lz4hc", "snappy")

FULL_CRC32_HEADER = 26        # FIL_PAGE_COMP_ALGO: header kept in front of the payload
FULL_CRC32_CHECKSUM = 4       # FIL_PAGE_FCRC32_CHECKSUM
LEGACY_HEADER = 38 + 2        # FIL_PAGE_DATA + FIL_PAGE_COMP_METADATA_LEN (non-full_crc32 layout)
MYSQL_HEADER = 38             # FIL_PAGE_DATA: MySQL keeps the FIL header and compresses the rest
FIL_PAGE_RTREE = 17854        # MySQL never compresses R-tree pages

EXT4_INLINE_EXTENTS = 4       # extents held in the inode itself (ext4_extent_header + 4 entries)
EXT4_EXTENTS_PER_BLOCK = 340  # (4096 - 12) // 12: extents per extent-tree leaf block


def roundup(n: int, block: int) -> int:
    return -(-n // block) * block


def page_type(page: bytes) -> int:
    return int.from_bytes(page[FIL_PAGE_TYPE_OFFSET:FIL_PAGE_TYPE_OFFSET + 2], "big") if len(page) >= 26 else 0


def is_zero(data: bytes) -> bool:
    return not any(data) if len(data) < 64 else data.count(0) == len(data)


@dataclass
class Model:
    """Base: ``name`` as in the JSON; ``granularity`` is the rounding step of projections."""

    name: str = "model"
    granularity: int = 1

    def supports(self, codec: Codec) -> str | None:
        """None when the model can project ``codec``, else the reason why not."""
        return None

    def fixed_by_kind(self, kind_name: str | None) -> int | None:
        """Projected bytes known from the unit's kind alone (no read), else None."""
        return None

    def fixed_by_payload(self, payload: bytes) -> int | None:
        """Projected bytes known without encoding (all-zero page...), else None."""
        return None

    def project(self, codec: Codec, payload: bytes, unit: int | None = None) -> int:
        raise NotImplementedError


# ---------------------------------------------------------------------------
@dataclass
class InnoDBPageCompressed(Model):
    """MariaDB PAGE_COMPRESSED=1 (and the same idea for MySQL COMPRESSION=).

    Source (MariaDB): storage/innobase/fil/fil0pagecompress.cc
    ``fil_page_compress_for_full_crc32``: the compressed payload follows the
    first 26 bytes of the page (FIL_PAGE_COMP_ALGO); the write size is
    ``(26 + payload + lsb + 4 + 255) & ~255`` (lsb = 1 length byte for
    lz4/lzo/snappy, 4 = checksum); when that is not smaller than the page the
    page is written uncompressed; otherwise it is rounded up to the
    filesystem block and the rest of the page is punched.  The legacy
    (non-full_crc32) layout keeps a 38 + 2 byte header.  FSP_HDR, XDES and
    type-0 pages are never compressed (written whole).  An all-zero page was
    never written: page_compressed tablespaces are extended sparse and freed
    pages are punched, so it takes no block.

    ``layout="mysql"`` is MySQL's COMPRESSION='zlib'|'lz4' (mysql-server
    storage/innobase/os/file.cc os_file_compress_page): bytes 38.. of the page
    are compressed (zlib at innodb_compression_level 6, LZ4_compress_default),
    the page is kept compressed only when header + payload fit in one block
    less than the page, and is written rounded up to the block; R-tree pages
    and pages smaller than two blocks are written whole.
    """

    page_size: int = 16384
    fs_block: int = 4096
    layout: str = "full_crc32"      # MariaDB full_crc32, MariaDB "legacy", or "mysql"

    def __post_init__(self):
        self.name = "innodb_page_compressed"
        self.granularity = min(self.fs_block, self.page_size)

    def supports(self, codec: Codec) -> str | None:
        if codec.is_chain:
            return "ClickHouse codec chains do not apply to InnoDB pages"
        return None

    def fixed_by_kind(self, kind_name):
        if kind_name in INNODB_NEVER_COMPRESSED_NAMES:
            return self.page_size
        return None

    def fixed_by_payload(self, payload: bytes) -> int | None:
        if is_zero(payload):
            return 0
        if page_type(payload) in INNODB_NEVER_COMPRESSED:
            return self.page_size
        if self.layout == "mysql" and (page_type(payload) == FIL_PAGE_RTREE
                                       or self.page_size < 2 * self.fs_block):
            return self.page_size
        return None

    def write_size(self, codec: Codec, payload_len: int) -> int:
        """Bytes allocated for a page whose compressed payload is ``payload_len``
        (the engine's write size rounded up to the filesystem block, at most the page)."""
        size = self.engine_write_size(codec, payload_len)
        return min(self.page_size, roundup(size, self.fs_block))

    def engine_write_size(self, codec: Codec, payload_len: int) -> int:
        """Bytes the engine writes before the punch (the page size when it stores it uncompressed)."""
        page = self.page_size
        if codec.family == "none":
            return page
        if self.layout == "mysql":
            # mysql-server storage/innobase/os/file.cc os_file_compress_page(): the 38-byte
            # header stays, the rest is compressed; it "must compress to <= N-1 FS blocks",
            # then header + payload is rounded up to the block
            if payload_len > page - (MYSQL_HEADER + self.fs_block):
                return page
            return MYSQL_HEADER + payload_len
        if self.layout == "full_crc32":
            lsb = 1 if codec.family in _LENGTH_BYTE_FAMILIES else 0
            if payload_len > page - FULL_CRC32_HEADER:
                return page
            size = (FULL_CRC32_HEADER + payload_len + lsb + FULL_CRC32_CHECKSUM + 255) & ~255
            return page if size >= page else size
        if payload_len > page - LEGACY_HEADER:
            return page
        return LEGACY_HEADER + payload_len

    def project(self, codec: Codec, payload: bytes, unit: int | None = None) -> int:
        fixed = self.fixed_by_payload(payload)
        if fixed is not None:
            return fixed
        if codec.family == "none":
            return self.page_size
        if self.layout == "mysql":
            return self.write_size(codec, codec.compressed_size(payload[MYSQL_HEADER:]))
        return self.write_size(codec, codec.compressed_size(payload))


def ext4_extent_tree_bytes(n_extents: float, block: int = 4096) -> int:
    """Extent-tree blocks ext4 adds to a file of ``n_extents`` data extents.

    ext4 keeps 4 extents in the inode (fs/ext4/ext4_extents.h); beyond that
    the extents move to tree blocks of 340 entries each.  This is why a
    page-compressed tablespace's ALLOCATED_SIZE is one block above the sum
    of its pages.
    """
    if n_extents <= EXT4_INLINE_EXTENTS:
        return 0
    return int(math.ceil(n_extents / EXT4_EXTENTS_PER_BLOCK)) * block


def filesystem_type(path: str) -> str | None:
    """The filesystem type holding ``path`` (from /proc/self/mounts), None when unknown."""
    try:
        path = os.path.realpath(path)
        best, fstype = "", None
        with open("/proc/self/mounts", encoding="utf-8") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) < 3:
                    continue
                mnt = parts[1].replace("\\040", " ")
                if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best):
                    best, fstype = mnt, parts[2]
        return fstype
    except OSError:
        return None


# ---------------------------------------------------------------------------
@dataclass
class InnoDBRowCompressedEstimate(Model):
    """ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=k: an **estimate**, not the engine.

    page0zip.cc compresses the records of an index page with zlib
    (innodb_compression_level, default 6) into a KEY_BLOCK_SIZE page that
    also keeps the uncompressed page header, a dense page directory and a
    modification log.  We compress the whole logical page with zlib and ask
    whether it fits in KEY_BLOCK_SIZE minus a reserve: 94 bytes of headers
    plus 1/8 of the block for the modification log and directory; a page
    that does not fit splits, so it needs ceil(z / capacity) blocks.
    Non-index pages take one block each.
    """

    page_size: int = 16384
    key_block_size: int = 8192
    header_reserve: int = 94
    log_fraction: float = 1 / 8

    def __post_init__(self):
        self.name = f"innodb_row_compressed_kbs{self.key_block_size // 1024}k_estimate"
        self.granularity = self.key_block_size

    def supports(self, codec: Codec) -> str | None:
        if codec.family != "zlib":
            return "ROW_FORMAT=COMPRESSED uses zlib only"
        return None

    def capacity(self) -> int:
        return int(self.key_block_size - self.header_reserve - self.key_block_size * self.log_fraction)

    def fixed_by_payload(self, payload: bytes) -> int | None:
        if page_type(payload) != FIL_PAGE_INDEX:
            return self.key_block_size
        return None

    def project(self, codec: Codec, payload: bytes, unit: int | None = None) -> int:
        fixed = self.fixed_by_payload(payload)
        if fixed is not None:
            return fixed
        z = codec.compressed_size(payload)
        return self.key_block_size * max(1, math.ceil(z / self.capacity()))


# ---------------------------------------------------------------------------
@dataclass
class InnoDBLargerPagesApprox(InnoDBPageCompressed):
    """Page compression with 32/64 KiB pages: an **approximation**.

    A 64 KiB page is approximated by 4 consecutive 16 KiB data pages (index,
    BLOB...) of the same owner compressed together, then stored as
    :class:`InnoDBPageCompressed` would store one page of that size; every
    system page (FSP header, inode, bitmap, free page) becomes one 64 KiB
    page of its own (zero-padded), so the FSP header takes 64 KiB as it would.
    """

    factor: int = 4

    def __post_init__(self):
        self.page_size = self.page_size * self.factor
        super().__post_init__()
        self.name = f"innodb_page_compressed_{self.page_size // 1024}k_pages_approximation"


# ---------------------------------------------------------------------------
#: ClickHouse compressed block framing (src/Compression/CompressionInfo.h,
#: CompressedWriteBuffer.cpp): 16-byte CityHash128 checksum, then a 9-byte
#: header (method byte, compressed size u32, decompressed size u32).
CH_CHECKSUM = 16
CH_HEADER = 9
CH_FRAMING = CH_CHECKSUM + CH_HEADER
CH_MIN_COMPRESS_BLOCK = 65536      # MergeTree min_compress_block_size default
CH_MAX_COMPRESS_BLOCK = 1048576    # MergeTree max_compress_block_size default


@dataclass
class StreamParams:
    """How one ClickHouse stream's blocks are encoded: value size and type for
    the type-dependent codecs, and the chain it is written with now."""

    type_size: int | None = None
    value_type: str | None = None
    current_chain: str | None = None
    fixed_width: bool = False       # plain fixed-width values (Delta, T64, Gorilla... apply)
    is_float: bool = False          # Float32/Float64 values


#: CompressionCodecT64.cpp / CompressionCodecGCD.cpp reject floating point;
#: CompressionCodecFPC.cpp accepts only Float32/Float64
_CH_INTEGER_ONLY = ("T64", "GCD")
_CH_FLOAT_ONLY = ("FPC",)
#: Delta / DoubleDelta / Gorilla / T64 / GCD take 1, 2, 4 or 8-byte values only
_CH_WIDTH_1248 = ("Delta", "DoubleDelta", "Gorilla", "T64", "GCD")


@dataclass
class ClickHouseBlocks(Model):
    """A ClickHouse column re-encoded block by block.

    Block boundaries depend on the uncompressed stream only (the writer cuts
    a block at a granule end once min_compress_block_size is reached, or at
    max_compress_block_size), so a codec change keeps them and the marks
    unchanged: each existing block is re-encoded with the codec and framed
    with the 9-byte header and 16-byte checksum.  General codecs are encoded
    here with ClickHouse's calls (LZ4_compress_default, LZ4_compress_HC,
    ZSTD_compress with the level); chains (Delta, T64, Gorilla...) go through
    parsers/codecs/ch_block.py.
    """

    streams: list = field(default_factory=list)              # StreamParams per stream
    unit_stream: object = None                                # np.ndarray: stream index per unit
    current: str | None = None                                # name of the current codec

    def __post_init__(self):
        self.name = "clickhouse_blocks"

    def _params(self, unit) -> StreamParams:
        if unit is None or self.unit_stream is None or not self.streams:
            return StreamParams()
        return self.streams[int(self.unit_stream[unit])]

    def supports(self, codec: Codec) -> str | None:
        if codec.ch_chain is None:
            return f"ClickHouse has no {codec.family} codec"
        if codec.is_chain and codec.name != self.current and self.streams:
            if not all(s.fixed_width for s in self.streams):
                return f"{codec.name}: needs plain fixed-width values"
            names = [i.split("(")[0] for i in codec.name.split(",")]
            widths = {s.type_size for s in self.streams}
            if any(n in _CH_WIDTH_1248 for n in names) and not widths <= {1, 2, 4, 8}:
                return f"{codec.name}: values of {sorted(w for w in widths if w)} bytes (needs 1, 2, 4 or 8)"
            floats = any(s.is_float for s in self.streams)
            if floats and any(n in _CH_INTEGER_ONLY for n in names):
                return f"{codec.name}: not for floating point columns"
            if not floats and any(n in _CH_FLOAT_ONLY for n in names):
                return f"{codec.name}: only for Float32/Float64 columns"
        return None

    def project(self, codec: Codec, payload: bytes, unit: int | None = None) -> int:
        p = self._params(unit)
        if codec.name == self.current and p.current_chain:
            return len(ch_block_body(payload, p.current_chain, p.type_size, p.value_type)) + CH_CHECKSUM
        if not codec.is_chain:
            if codec.family == "none":
                return CH_FRAMING + len(payload)
            return CH_FRAMING + len(codec.compress(payload))
        return codec.ch_block_size(payload, p.type_size, p.value_type)


def clickhouse_block_sizes(stream_bytes: int, granule_bytes: list[int] | None = None,
                           min_block: int = CH_MIN_COMPRESS_BLOCK,
                           max_block: int = CH_MAX_COMPRESS_BLOCK) -> list[int]:
    """Uncompressed block sizes the MergeTree writer makes for one stream.

    With granule sizes: a block is closed after a granule once it holds at
    least ``min_block`` bytes, and whenever it reaches ``max_block``
    (MergeTreeDataPartWriterWide / CompressedWriteBuffer).  Without them the
    stream is cut at ``max_block``.
    """
    sizes: list[int] = []
    if not granule_bytes:
        full, rest = divmod(stream_bytes, max_block)
        sizes = [max_block] * full + ([rest] if rest else [])
        return sizes
    cur = 0
    for gb in granule_bytes:
        while cur + gb >= max_block:
            take = max_block - cur
            sizes.append(max_block)
            gb -= take
            cur = 0
        cur += gb
        if cur >= min_block:
            sizes.append(cur)
            cur = 0
    if cur:
        sizes.append(cur)
    return sizes


# ---------------------------------------------------------------------------
#: PerconaFT ft/serialize/ft_node-serialize.cc: every partition is one
#: sub-block written as compressed size (4) + uncompressed size (4) +
#: compressed bytes + x1764 checksum (4).
TOKU_SUB_BLOCK_OVERHEAD = 12
#: PerconaFT ft/serialize/compress.cc toku_compress(): zlib level 5
#: (compress2, its zlib header doubles as the method byte), zlib without
#: checksum (raw deflate level 5 + 2 bytes), lzma level 2 with
#: LZMA_CHECK_NONE behind one method byte, snappy and "none" behind one
#: method byte, zstd level 1 behind one method byte.
TOKU_METHODS = {
    "none": ("none", None), "zlib": ("zlib", 5), "zlib_without_checksum": ("zlib", 5),
    "lzma": ("lzma", 2), "snappy": ("snappy", None), "zstd": ("zstd", 1), "quicklz": ("quicklz", None),
}
TOKU_SUPPORTED = ("none", "zlib", "lzma", "snappy", "zstd", "quicklz")


@dataclass
class TokuDBPartitions(Model):
    """TokuDB: each partition compressed on its own, no filesystem rounding.

    Bytes per partition = method-framed compressed bytes + 12 (sizes and
    checksum).  Codecs PerconaFT does not have (lz4, bzip2, brotli) are shown
    as hypothetical with the same 1-byte method framing.
    ``zlib_without_checksum`` reproduces method 11 (raw deflate: the zlib
    stream less its 2-byte header and 4-byte Adler-32, plus 2 bytes).
    """

    zlib_without_checksum: bool = False

    def __post_init__(self):
        self.name = "tokudb_partitions"

    def supports(self, codec: Codec) -> str | None:
        if codec.is_chain:
            return "ClickHouse codec chains do not apply to TokuDB"
        return None

    def framed_size(self, codec: Codec, payload: bytes) -> int:
        fam = codec.family
        if fam == "none":
            return 1 + len(payload)
        if fam == "zlib":
            n = len(codec.compress(payload))
            return n - 4 if self.zlib_without_checksum else n
        if not payload and fam in ("lzma", "zstd", "quicklz"):
            return 1                    # compress.cc: empty input is the method byte alone
        return 1 + codec.compressed_size(payload)

    def project(self, codec: Codec, payload: bytes, unit: int | None = None) -> int:
        return TOKU_SUB_BLOCK_OVERHEAD + self.framed_size(codec, payload)


# ---------------------------------------------------------------------------
@dataclass
class ZFSRecords(Model):
    """ZFS compression of the raw file, as a comparison.

    OpenZFS module/zfs/zio_compress.c zio_compress_data(): a record is kept
    compressed only when it shrinks to at most s_len - s_len/8 (saves at
    least 12.5%); zio.c then rounds the physical size up to the pool's
    sector (2^ashift).  All-zero records become holes.  Codecs: lz4, gzip-N
    (zlib:N) and zstd-N (their own small headers: lz4 4 bytes, zstd 8 bytes).
    """

    recordsize: int = 131072
    ashift: int = 12

    def __post_init__(self):
        self.name = f"zfs_recordsize_{self.recordsize // 1024}k_ashift{self.ashift}"
        self.granularity = 1 << self.ashift

    def supports(self, codec: Codec) -> str | None:
        if codec.is_chain or codec.family not in ("none", "lz4", "zlib", "zstd"):
            return "ZFS compresses with lz4, gzip-N (zlib) or zstd-N"
        return None

    def fixed_by_payload(self, payload: bytes) -> int | None:
        if is_zero(payload):
            return 0
        return None

    def project(self, codec: Codec, payload: bytes, unit: int | None = None) -> int:
        if is_zero(payload):
            return 0
        sector = 1 << self.ashift
        s_len = len(payload)
        if codec.family == "none":
            return roundup(s_len, sector)
        extra = {"lz4": 4, "zstd": 8}.get(codec.family, 0)
        c = len(codec.compress(payload)) + extra
        if c > s_len - (s_len >> 3) or roundup(c, sector) >= s_len:
            return roundup(s_len, sector)
        return roundup(c, sector)


@dataclass
class BtrfsExtents(Model):
    """btrfs compression of the raw file, as a comparison.

    fs/btrfs/inode.c compress_file_range(): 128 KiB of file data is
    compressed as one extent; it is kept only when it frees at least one
    sector ("total_compressed + blocksize <= total_in"), and is rounded up
    to the 4 KiB sector.  Codecs: zlib:1..9, zstd:1..15 (lzo is not in the
    registry).  Holes of the file stay holes.
    """

    extent: int = 131072
    sector: int = 4096

    def __post_init__(self):
        self.name = f"btrfs_{self.extent // 1024}k_extents"
        self.granularity = self.sector

    def supports(self, codec: Codec) -> str | None:
        if codec.is_chain or codec.family not in ("none", "zlib", "zstd"):
            return "btrfs compresses with zlib, zstd or lzo"
        if codec.family == "zstd" and not 1 <= (codec.level or 3) <= 15:
            return "btrfs zstd levels are 1..15"
        return None

    def fixed_by_payload(self, payload: bytes) -> int | None:
        return None

    def project(self, codec: Codec, payload: bytes, unit: int | None = None) -> int:
        n = roundup(len(payload), self.sector)
        if codec.family == "none":
            return n
        c = len(codec.compress(payload))
        if c + self.sector <= n:
            return roundup(c, self.sector)
        return n


@dataclass
class ModelSet:
    """The models a target gets, by family of units they need."""

    unit_models: list[Model] = field(default_factory=list)      # on the engine's own units
    group_models: list[Model] = field(default_factory=list)     # on groups of consecutive units
    raw_models: list[Model] = field(default_factory=list)       # on raw file records


def check_codec_for(model: Model, codec: Codec) -> str | None:
    """The reason a model cannot project a codec (None when it can)."""
    try:
        return model.supports(codec)
    except CodecUnavailable as e:
        return str(e)

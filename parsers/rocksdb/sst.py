"""One block-based SST file read from its end: footer, metaindex, properties, the
index (partitioned or not), so every block is known without reading a data block
(RocksDB table/block_based/block_based_table_reader.cc ``BlockBasedTable::Open``,
``ReadMetaIndexBlock``, ``ReadPropertiesBlock``; table/meta_blocks.cc).

Blocks are listed in file order as numpy arrays: offset, stored size (contents, the
5-byte trailer after them), kind, compression type, the uncompressed size where the
block's first bytes declare it, the checksum verdict, and for data blocks the last
key (the index's separator: MyRocks' comparators keep full keys as separators)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .block import BlockError, index_handles, iter_entries
from .coding import CodingError
from .compression import (BlockDecodeError, COMPRESSION_NAMES, declared_size, kNoCompression,
                          name_of, uncompress)
from .footer import (BlockHandle, Footer, FooterError, decode_handle, kBlockTrailerSize,
                     kNewVersionsEncodedLength, read_footer)
from .properties import PropertiesError, TableProperties, read_properties
from .trailer import split_trailer, verify

#: meta block names (table/meta_blocks.h, table/block_based/block_based_table_builder.cc)
kPropertiesBlockName = "rocksdb.properties"
kCompressionDictBlockName = "rocksdb.compression_dict"
kRangeDelBlockName = "rocksdb.range_del"
kIndexBlockName = "rocksdb.index"             # format_version >= 6
kHashIndexPrefixesBlock = "rocksdb.hashindex.prefixes"
kHashIndexPrefixesMetadataBlock = "rocksdb.hashindex.metadata"
FILTER_PREFIXES = ("fullfilter.", "partitionedfilter.", "filter.")

#: unit kinds of an SST's blocks (the unit map's kinds)
KIND_DATA, KIND_INDEX, KIND_FILTER, KIND_META, KIND_PROPERTIES, KIND_DICT, KIND_RANGE_DEL, \
    KIND_METAINDEX, KIND_FOOTER, KIND_INDEX_PARTITION, KIND_OTHER_META = range(1, 12)
KIND_NAMES = {KIND_DATA: "data", KIND_INDEX: "index", KIND_FILTER: "filter", KIND_META: "meta",
              KIND_PROPERTIES: "properties", KIND_DICT: "compression dict", KIND_RANGE_DEL: "range deletions",
              KIND_METAINDEX: "metaindex", KIND_FOOTER: "footer", KIND_INDEX_PARTITION: "index partition",
              KIND_OTHER_META: "other meta"}
#: a meta or index block larger than this is not read (a corrupt handle, not a real block)
MAX_META_BLOCK = 256 << 20


#: read-only empty arrays: an SstFile's until its blocks are listed (replaced, never written)
_EMPTY = {t: np.zeros(0, t) for t in (np.uint64, np.uint32, np.uint8, np.int64, np.int8)}
for _a in _EMPTY.values():
    _a.flags.writeable = False


@dataclass
class SstFile:
    path: str
    size: int
    footer: Footer | None = None
    metaindex: dict[str, BlockHandle] = field(default_factory=dict)
    props: TableProperties | None = None
    index_handle: BlockHandle | None = None
    #: block arrays, file order
    offset: np.ndarray = field(default_factory=lambda: _EMPTY[np.uint64])
    size_: np.ndarray = field(default_factory=lambda: _EMPTY[np.uint32])
    kind: np.ndarray = field(default_factory=lambda: _EMPTY[np.uint8])
    ctype: np.ndarray = field(default_factory=lambda: _EMPTY[np.uint8])
    logical: np.ndarray = field(default_factory=lambda: _EMPTY[np.int64])   # -1 unknown
    checksum: np.ndarray = field(default_factory=lambda: _EMPTY[np.int8])   # 1 ok, 0 bad, -1 not checked
    #: the first 8 bytes of each data block's separator (last) key, aligned with the data
    #: blocks in file order (MyRocks: the index number is the first 4)
    data_keys: list[bytes] = field(default_factory=list)
    #: (message, file offset) of everything that could not be read
    errors: list[tuple[str, int | None]] = field(default_factory=list)
    compression_dict: bytes | None = None

    @property
    def format_version(self) -> int:
        return self.footer.format_version if self.footer else -1

    def data_mask(self) -> np.ndarray:
        return self.kind == KIND_DATA

    @property
    def index_key_is_user_key(self) -> bool:
        return bool(self.props and self.props.index_key_is_user_key)



#: files up to this size are read with one pread (no map: its set-up costs more than the read)
SMALL_FILE = 1 << 20


class _Reader:
    """Reads a file's bytes through the file layer: a small file whole with one pread
    (around its holes), a larger one through its hole-safe map or preads."""

    def __init__(self, f, size: int):
        self.f = f
        self.size = size
        self.buf = f.pread_nomap(0, size) if size <= SMALL_FILE else None

    def view(self) -> np.ndarray | None:
        """The whole file as a numpy byte array (its bytes, or over its map when reading it
        there is safe: no holes, or holes covered by zero pages), else None."""
        if self.buf is not None:
            return np.frombuffer(self.buf, np.uint8)
        try:
            mm = self.f.mmap()
        except Exception:
            return None
        if mm is None or not (self.f.hole_safe_map or not self.f.holes()):
            return None
        return np.frombuffer(mm, np.uint8, count=self.size)

    def read(self, off: int, n: int) -> bytes:
        if off < 0 or off + n > self.size:
            raise FooterError(f"block at {off} of {n} bytes runs past the end of the file ({self.size} bytes)",
                              off)
        if self.buf is not None:
            return self.buf[off:off + n]
        return self.f.pread(off, n)


def _read_block(sst: SstFile, r: _Reader, h: BlockHandle, what: str, verify_checksum: bool,
                max_output: int = MAX_META_BLOCK) -> bytes | None:
    """A meta/index block's uncompressed contents (None after recording an error)."""
    if h.size > MAX_META_BLOCK:
        sst.errors.append((f"{what} block handle of {h.size} bytes is not believable", h.offset))
        return None
    buf = r.buf
    end = h.offset + h.size
    if buf is not None and not verify_checksum and end + kBlockTrailerSize <= r.size and buf[end] == kNoCompression:
        return buf[h.offset:end]                      # the common case: an uncompressed meta block in memory
    try:
        raw = r.read(h.offset, h.size + kBlockTrailerSize)
    except FooterError as e:
        sst.errors.append((f"{what} block: {e}", e.offset))
        return None
    stored, ctype, _ = split_trailer(raw)
    if verify_checksum and sst.footer is not None:
        ok = verify(sst.footer.checksum_type, raw, h.offset, sst.footer.base_context_checksum)
        if ok is False:
            sst.errors.append((f"{what} block checksum mismatch ({sst.footer.checksum_name})", h.offset))
    if ctype != kNoCompression and ctype not in COMPRESSION_NAMES:
        sst.errors.append((f"{what} block has unknown compression type 0x{ctype:02x}", h.offset + h.size))
        return None
    try:
        return uncompress(ctype, stored, sst.format_version, max_output)
    except BlockDecodeError as e:
        sst.errors.append((f"{what} block ({name_of(ctype)}): {e}", h.offset))
        return None


def read_sst(f, path: str, size: int, verify_checksums: bool = False, check=None) -> SstFile:
    """Everything about an SST but its data blocks' contents (``f``: a ReadOnlyFile).
    With ``verify_checksums`` every block is read and its trailer checked."""
    sst = SstFile(path, size)
    r = _Reader(f, size)
    tail_n = min(size, kNewVersionsEncodedLength)
    try:
        sst.footer = read_footer(r.read(size - tail_n, tail_n), size)
    except FooterError as e:
        sst.errors.append((str(e), e.offset))
        return sst
    ft = sst.footer
    meta = _read_block(sst, r, ft.metaindex, "metaindex", verify_checksums)
    if meta is None:
        return sst
    try:
        for key, value in iter_entries(meta):
            h, _ = decode_handle(value, 0)
            sst.metaindex[key.decode("utf-8", "replace")] = h
    except (BlockError, CodingError) as e:
        sst.errors.append((f"metaindex block: {e}", ft.metaindex.offset))
    ph = sst.metaindex.get(kPropertiesBlockName)
    if ph is not None:
        pdata = _read_block(sst, r, ph, "properties", verify_checksums)
        if pdata is not None:
            try:
                sst.props = read_properties(pdata)
            except PropertiesError as e:
                sst.errors.append((str(e), ph.offset))
    else:
        sst.errors.append(("no rocksdb.properties block in the metaindex", ft.metaindex.offset))
    sst.index_handle = ft.index if ft.index is not None else sst.metaindex.get(kIndexBlockName)
    blocks: list[tuple[int, int, int]] = []          # offset, size, kind
    if sst.index_handle is None:
        sst.errors.append(("no index block handle (footer or rocksdb.index)", ft.footer_offset))
    else:
        _read_index(sst, r, verify_checksums, blocks)
    for name, h in sst.metaindex.items():
        blocks.append((h.offset, h.size, _meta_kind(name)))
    blocks.append((ft.metaindex.offset, ft.metaindex.size, KIND_METAINDEX))
    if sst.index_handle is not None:
        blocks.append((sst.index_handle.offset, sst.index_handle.size, KIND_INDEX))
    dh = sst.metaindex.get(kCompressionDictBlockName)
    if dh is not None:
        sst.compression_dict = _read_block(sst, r, dh, "compression dictionary", verify_checksums)
    _fill_arrays(sst, r, blocks, verify_checksums, check)
    return sst


def _meta_kind(name: str) -> int:
    if name == kPropertiesBlockName:
        return KIND_PROPERTIES
    if name == kCompressionDictBlockName:
        return KIND_DICT
    if name == kRangeDelBlockName:
        return KIND_RANGE_DEL
    if name == kIndexBlockName:
        return KIND_INDEX
    if name.startswith(FILTER_PREFIXES):
        return KIND_FILTER
    return KIND_OTHER_META


def _read_index(sst: SstFile, r: _Reader, verify_checksums: bool, blocks: list) -> None:
    props = sst.props or TableProperties()
    data = _read_block(sst, r, sst.index_handle, "index", verify_checksums)
    if data is None:
        return
    delta = bool(props.index_value_is_delta_encoded)
    first_key = props.index_type == 3
    try:
        if props.index_type == 2:                  # kTwoLevelIndexSearch: partitions first
            # the top level is delta-encoded too (PartitionedIndexBuilder)
            _, poffs, psizes = index_handles(data, delta, False, key_prefix=0)
            for po, ps in zip(poffs, psizes):
                ph = BlockHandle(po, ps)
                blocks.append((po, ps, KIND_INDEX_PARTITION))
                part = _read_block(sst, r, ph, "index partition", verify_checksums)
                if part is None:
                    continue
                keys, offs, sizes = index_handles(part, delta, first_key)
                blocks.extend(zip(offs, sizes, [KIND_DATA] * len(offs)))
                sst.data_keys.extend(keys)
        else:
            keys, offs, sizes = index_handles(data, delta, first_key)
            blocks.extend(zip(offs, sizes, [KIND_DATA] * len(offs)))
            sst.data_keys.extend(keys)
    except BlockError as e:
        sst.errors.append((f"index block entry: {e}", sst.index_handle.offset))


_KNOWN_CTYPE = np.zeros(256, bool)
_KNOWN_CTYPE[list(COMPRESSION_NAMES)] = True


def _declared_sizes(head: np.ndarray, ctype: np.ndarray, size: np.ndarray, format_version: int) -> np.ndarray:
    """Uncompressed sizes the blocks' first bytes declare (``head``: n x 8 bytes), -1 where
    their framing declares none (compression.declared_size, vectorised)."""
    n = len(ctype)
    if n <= 64:                                       # a small file: numpy's per-call cost is the larger
        vals = [declared_size(int(c), bytes(hd), format_version) for c, hd in zip(ctype.tolist(), head)]
        out = np.array([-1 if v is None else v for v in vals], dtype=np.int64)
        raw = ctype == 0
        out[raw] = size[raw]
        return out
    out = np.full(n, -1, np.int64)
    h = head.astype(np.int64)
    # varint32 of up to 5 bytes
    val = np.zeros(n, np.int64)
    done = np.zeros(n, bool)
    ok = np.zeros(n, bool)
    for k in range(5):
        take = ~done
        val[take] |= (h[take, k] & 0x7F) << (7 * k)
        end = take & (h[:, k] < 0x80)
        ok |= end
        done |= end
    varint_framed = (ctype == 1) | (ctype == 7) | (ctype == 0x40) | ((ctype != 0) & (format_version >= 2))
    m = varint_framed & ok
    out[m] = val[m]
    lz4_v1 = ((ctype == 4) | (ctype == 5)) & (format_version < 2)
    if lz4_v1.any():
        out[lz4_v1] = head[lz4_v1].copy().view("<u8").ravel().astype(np.int64)
    raw = ctype == 0
    out[raw] = size[raw]
    return out


def _fill_arrays(sst: SstFile, r: _Reader, blocks: list, verify_checksums: bool, check) -> None:
    """Sort the blocks into file order, then read each one's trailer (compression type)
    and first bytes (declared uncompressed size): gathered with numpy from the file's
    map, or read block by block; the whole block when checksums are verified."""
    ft = sst.footer
    if r.buf is not None and len(blocks) <= SMALL_BLOCK_COUNT:
        _fill_small(sst, r.buf, blocks)
    else:
        _fill_large(sst, r, blocks, check)
    if verify_checksums and ft.checksum_type != 0:
        _verify_all(sst, r, check)


#: up to this many blocks, a file held in memory is listed in plain Python (numpy's per-call
#: cost is larger than the work: a MyRocks data dir holds thousands of ~40 KiB SSTs)
SMALL_BLOCK_COUNT = 256


def _fill_small(sst: SstFile, buf: bytes, blocks: list) -> None:
    """:func:`_fill_large` for a file read whole, block by block: the same arrays, the same
    messages in the same order."""
    ft = sst.footer
    rows = sorted(set(blocks))
    for a, b in zip(rows, rows[1:]):
        if a[0] == b[0]:                              # blocks sharing an offset: the larger kind first
            rows.sort(key=lambda t: (t[0], -t[2], t[1]))
            break
    foff, fv = ft.footer_offset, ft.format_version
    n = len(rows)
    ctypes = [0] * n
    logical = [-1] * n
    checks = [-1] * n
    past: list = []
    unknown: list = []
    known_names = COMPRESSION_NAMES
    varint_framed = fv >= 2             # compression.declared_size: every codec's size is a varint32
    data_count = 0
    for i, (o, sz, k) in enumerate(rows):
        if k == KIND_DATA:
            data_count += 1
        end = o + sz
        if end + kBlockTrailerSize > foff:
            checks[i] = 0
            if len(past) < 10:
                past.append((f"{KIND_NAMES[k]} block of {sz} bytes at {o} runs past the footer ({foff})", o))
            continue
        ct = buf[end]
        ctypes[i] = ct
        if ct == kNoCompression:
            logical[i] = sz
        elif varint_framed and ct in known_names and sz >= 3 and buf[o] >= 128 and buf[o + 1] < 128:
            logical[i] = (buf[o] & 127) | (buf[o + 1] << 7)          # a 2-byte varint32 (most blocks)
        elif ct in known_names:
            v = declared_size(ct, buf[o:o + min(sz, 8)], fv)
            if v is not None:
                logical[i] = v
        elif len(unknown) < 10:
            unknown.append((f"{KIND_NAMES[k]} block has unknown compression type 0x{ct:02x}", end))
    sst.errors.extend(past)
    sst.errors.extend(unknown)
    if data_count != len(sst.data_keys):
        sst.data_keys = sst.data_keys[:data_count]
    if n:
        offs, sizes, kinds = zip(*rows)
    else:
        offs = sizes = kinds = ()
    sst.offset = np.array(offs, np.uint64)
    sst.size_ = np.array(sizes, np.uint32)
    sst.kind = np.array(kinds, np.uint8)
    sst.ctype = np.array(ctypes, np.uint8)
    sst.logical = np.array(logical, np.int64)
    sst.checksum = np.array(checks, np.int8)


def _fill_large(sst: SstFile, r: _Reader, blocks: list, check) -> None:
    """The block arrays gathered with numpy (from the file's bytes or its map), or read
    block by block when neither can be viewed."""
    ft = sst.footer
    arr = np.array(blocks, dtype=np.int64).reshape(-1, 3)
    arr = arr[np.lexsort((arr[:, 1], -arr[:, 2], arr[:, 0]))]
    if len(arr) > 1:                                  # a block listed twice (metaindex + footer) once
        keep = np.ones(len(arr), bool)
        keep[1:] = (arr[1:] != arr[:-1]).any(axis=1)
        arr = arr[keep]
    n = len(arr)
    sst.offset = arr[:, 0].astype(np.uint64)
    sst.size_ = arr[:, 1].astype(np.uint32)
    sst.kind = arr[:, 2].astype(np.uint8)
    sst.ctype = np.zeros(n, np.uint8)
    sst.logical = np.full(n, -1, np.int64)
    sst.checksum = np.full(n, -1, np.int8)
    data_count = int((sst.kind == KIND_DATA).sum())
    if data_count != len(sst.data_keys):
        sst.data_keys = sst.data_keys[:data_count]
    off = arr[:, 0]
    size = arr[:, 1]
    ends = off + size + kBlockTrailerSize
    inside = ends <= ft.footer_offset
    for i in np.flatnonzero(~inside)[:10]:
        sst.errors.append((f"{KIND_NAMES[int(sst.kind[i])]} block of {int(size[i])} bytes at {int(off[i])} "
                           f"runs past the footer ({ft.footer_offset})", int(off[i])))
    sst.checksum[~inside] = 0
    idx = np.flatnonzero(inside)
    view = r.view()
    if view is not None:
        ctype = view[(off[idx] + size[idx])]
        pos = off[idx, None] + np.arange(8)[None, :]
        head = view[np.minimum(pos, len(view) - 1)]
        head[pos >= (off[idx] + size[idx])[:, None]] = 0x80        # past the block: no varint end there
    else:
        ctype = np.zeros(len(idx), np.uint8)
        head = np.full((len(idx), 8), 0x80, np.uint8)
        for j, i in enumerate(idx):
            if check is not None and j % 4096 == 0:
                check()
            o, s = int(off[i]), int(size[i])
            raw = r.read(o, min(s, 8))
            head[j, :len(raw)] = np.frombuffer(raw, np.uint8)
            ctype[j] = r.read(o + s, 1)[0]
    sst.ctype[idx] = ctype
    known = _KNOWN_CTYPE[ctype]
    for j in np.flatnonzero(~known)[:10]:
        i = idx[j]
        sst.errors.append((f"{KIND_NAMES[int(sst.kind[i])]} block has unknown compression type 0x{int(ctype[j]):02x}",
                           int(off[i] + size[i])))
    sst.logical[idx] = np.where(known, _declared_sizes(head, ctype, size[idx], ft.format_version), -1)


def _verify_all(sst: SstFile, r: _Reader, check) -> None:
    """Every block read whole and its trailer's checksum checked (``sst.checksum``: 1 ok, 0 bad)."""
    ft = sst.footer
    off, size = sst.offset, sst.size_
    idx = np.flatnonzero(sst.checksum != 0)
    bad = 0
    for j, i in enumerate(idx):
        if check is not None and j % 4096 == 0:
            check()
        o, s = int(off[i]), int(size[i])
        ok = verify(ft.checksum_type, r.read(o, s + kBlockTrailerSize), o, ft.base_context_checksum)
        if ok is None:
            break
        sst.checksum[i] = 1 if ok else 0
        if not ok:
            bad += 1
            if bad <= 10:
                sst.errors.append((f"{KIND_NAMES[int(sst.kind[i])]} block checksum mismatch "
                                   f"({ft.checksum_name})", o))
    if bad > 10:
        sst.errors.append((f"{bad - 10} more blocks with checksum mismatches", None))


def block_contents(sst: SstFile, f, i: int, max_output: int) -> bytes:
    """The uncompressed contents of block ``i`` (the what-if's payload)."""
    off, size = int(sst.offset[i]), int(sst.size_[i])
    raw = f.pread(off, size + kBlockTrailerSize)
    stored, ctype, _ = split_trailer(raw)
    return uncompress(ctype, stored, sst.format_version, max_output, sst.compression_dict)

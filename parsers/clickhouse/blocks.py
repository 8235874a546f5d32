"""Compressed block framing of ClickHouse files (``*.bin``, ``*.cmrk*``,
``primary.cidx``, the body of ``checksums.txt``), read by headers only.

A compressed file is a plain run of blocks; each block is (src/Compression/
CompressionInfo.h, CompressedReadBufferBase.cpp)::

    16 bytes  checksum: CityHash128 v1.0.2 of the next 9 + N bytes
     1 byte   method (CompressionMethodByte)
     4 bytes  UInt32 LE compressed size, including the 9 header bytes
     4 bytes  UInt32 LE decompressed size
     N bytes  payload, N = compressed size - 9

:func:`walk_blocks` lists every block of a file from these 25-byte headers
without touching the payloads (a ``Multiple`` block's codec list, a few bytes
at the start of its payload, is the only payload read).  :func:`read_stream`
decodes a small compressed stream (marks, primary index, checksums body) with
the bounded general codecs; the specialised codecs (Delta, T64, ...) are the
codec layer's job (``parsers.codecs.ch_block``).
"""
from __future__ import annotations

import functools
import os
import struct
from dataclasses import dataclass, field

import numpy as np

from ..codecs.general import DecodeError, lz4_block_decompress, zstd_decompress

# the method bytes are defined once, with the codecs (src/Compression/CompressionInfo.h)
from ..codecs.ch_methods import (AES_128_GCM_SIV, AES_256_GCM_SIV, FPC, GCD, LZ4, METHOD_NAMES,  # noqa: E402,F401
                                 NONE, SZ3, T64, ZSTD, ZSTD_QPL, Delta, DoubleDelta, Gorilla, Multiple)

#: The name the engine gives a codec it rebuilds from the method byte alone,
#: i.e. with default parameters (the level of LZ4HC/ZSTD and the width of
#: Delta/Gorilla are not stored in the block header).  These are the names of
#: ``mergeTreeCodecBlockCounts()`` (fixtures manifest ``codec_block_counts``:
#: "ZSTD(1)" for ZSTD(3)/ZSTD(9) columns, "Delta(1), LZ4" for Delta(2)+LZ4).
ENGINE_CODEC_NAMES = {
    NONE: "NONE", LZ4: "LZ4", ZSTD: "ZSTD(1)", Delta: "Delta(1)", T64: "T64",
    DoubleDelta: "DoubleDelta", Gorilla: "Gorilla(1)", FPC: "FPC(12)", GCD: "GCD",
    AES_128_GCM_SIV: "AES_128_GCM_SIV", AES_256_GCM_SIV: "AES_256_GCM_SIV",
    ZSTD_QPL: "ZSTD_QPL", SZ3: "SZ3",
}

# src/Compression/CompressionInfo.h
COMPRESSED_BLOCK_HEADER_SIZE = 9
DBMS_MAX_COMPRESSED_SIZE = 0x40000000    # 1 GiB: the engine refuses larger blocks
CHECKSUM_SIZE = 16
BLOCK_HEADER_SIZE = CHECKSUM_SIZE + COMPRESSED_BLOCK_HEADER_SIZE   # 25

_HDR = struct.Struct("<BII")
_U32 = struct.Struct("<I")


class BlockError(Exception):
    """A compressed block could not be framed or decoded; carries the offset."""

    def __init__(self, message: str, offset: int | None = None):
        self.offset = offset
        super().__init__(message if offset is None else f"{message} (offset {offset})")


def method_name(byte: int) -> str:
    """Name of a method byte, ``0x..`` when unknown."""
    return METHOD_NAMES.get(byte, f"0x{byte:02x}")


def engine_codec_name(methods: tuple[int, ...]) -> str:
    """The engine's name of a codec chain given its method bytes."""
    return ", ".join(ENGINE_CODEC_NAMES.get(m, f"0x{m:02x}") for m in methods)


@dataclass(frozen=True)
class BlockHeader:
    """The 25-byte header of one compressed block."""

    offset: int
    checksum: bytes
    method: int
    compressed_size: int      # incl. the 9 header bytes
    decompressed_size: int

    @property
    def stored(self) -> int:
        return CHECKSUM_SIZE + self.compressed_size


def read_block_header(buf, offset: int) -> BlockHeader:
    """Reads the 25-byte block header (checksum, method, sizes) at ``offset``."""
    if offset < 0 or offset + BLOCK_HEADER_SIZE > len(buf):
        raise BlockError(f"block header needs {BLOCK_HEADER_SIZE} bytes, "
                         f"{max(0, len(buf) - offset)} left", offset)
    method, csize, usize = _HDR.unpack_from(buf, offset + CHECKSUM_SIZE)
    return BlockHeader(offset, bytes(buf[offset:offset + CHECKSUM_SIZE]), method, csize, usize)


def read_multiple_methods(buf, offset: int, compressed_size: int) -> tuple[int, ...]:
    """Reads the codec list at the start of a ``Multiple`` (0x91) payload:
    ``[n][n method bytes in the order applied]`` (CompressionCodecMultiple.cpp)."""
    start = offset + BLOCK_HEADER_SIZE
    payload_len = compressed_size - COMPRESSED_BLOCK_HEADER_SIZE
    if payload_len < 1 or start >= len(buf):
        raise BlockError("Multiple block without codec list", offset)
    n = buf[start]
    if n == 0 or n > payload_len - 1 or start + 1 + n > len(buf):
        raise BlockError(f"Multiple block lists {n} codecs in a {payload_len}-byte payload", offset)
    return tuple(buf[start + 1:start + 1 + n])


@dataclass
class BlockTable:
    """Every block of one compressed file, as parallel numpy arrays."""

    offsets: np.ndarray            # uint64 offset of the block (its checksum)
    compressed: np.ndarray         # uint32 compressed size incl. 9-byte header
    decompressed: np.ndarray       # uint32
    methods: np.ndarray            # uint8 method byte
    chains: list[tuple[int, ...]]  # distinct codec chains (method bytes in applied order)
    chain_ids: np.ndarray          # uint16 index into chains, per block
    size: int                      # file size
    end: int                       # offset where the walk stopped
    errors: list[tuple[str, int]] = field(default_factory=list)   # (message, offset)
    bad: np.ndarray | None = None  # bool per block: header unusable (unknown method, bad chain)
    checksum_ok: np.ndarray | None = None   # bool per block once verified, else None

    def __len__(self) -> int:
        return len(self.offsets)

    @property
    def stored(self) -> np.ndarray:
        return self.compressed.astype(np.uint64) + CHECKSUM_SIZE

    @property
    def compressed_bytes(self) -> int:
        return int(self.stored.sum()) if len(self) else 0

    @property
    def uncompressed_bytes(self) -> int:
        return int(self.decompressed.sum(dtype=np.uint64)) if len(self) else 0

    def chain_names(self) -> list[str]:
        return [engine_codec_name(c) for c in self.chains]

    def codec_counts(self) -> dict[str, int]:
        """Blocks per codec chain, named as the engine names them."""
        out: dict[str, int] = {}
        if not len(self):
            return out
        counts = np.bincount(self.chain_ids, minlength=len(self.chains))
        for name, n in zip(self.chain_names(), counts):
            if n:
                out[name] = out.get(name, 0) + int(n)
        return out


def walk_blocks(buf, size: int | None = None, max_blocks: int = 50_000_000, fd: int | None = None) -> BlockTable:
    """Walks a compressed file by its block headers, payloads unread.

    The headers come from ``buf`` (bytes or a map), or, with ``fd``, from one
    ``pread`` per block (no map, no page of payload touched).  Stops at the
    first block whose framing is impossible (size below the header, over
    1 GiB, or running past the end of the file) and records the error with
    its offset; the blocks before it are kept.

    The hot path reads each header (and the start of its payload, where a
    ``Multiple`` block keeps its codec list) in one call and only follows the
    compressed sizes; methods, chains and checks are then done with numpy over
    all headers at once.  Where that path stops (a framing problem), the
    careful walk takes over from the same offset and names the problem.
    """
    if fd is not None:
        if size is None:
            size = os.fstat(fd).st_size
    else:
        size = len(buf) if size is None else size
    chains: list[tuple[int, ...]] = []
    chain_index: dict[tuple[int, ...], int] = {}
    recs, pos = _follow_sizes(buf, size, max_blocks, fd)
    parts = _decode_headers(recs, chains, chain_index)
    if parts[7] is not None:
        pos = parts[7]
    tail = _walk_slow(buf, size, max_blocks, fd, pos, chains, chain_index, len(parts[0])) \
        if pos < size else ([], [], [], [], [], [], [], pos)
    o2, c2, u2, m2, k2, b2, e2, end = tail
    if not o2:
        return BlockTable(offsets=parts[0], compressed=parts[1], decompressed=parts[2], methods=parts[3],
                          chains=chains, chain_ids=parts[4], size=size, end=end, errors=parts[6] + e2,
                          bad=parts[5])
    return BlockTable(
        offsets=np.concatenate([parts[0], np.array(o2, dtype=np.uint64)]),
        compressed=np.concatenate([parts[1], np.array(c2, dtype=np.uint32)]),
        decompressed=np.concatenate([parts[2], np.array(u2, dtype=np.uint32)]),
        methods=np.concatenate([parts[3], np.array(m2, dtype=np.uint8)]),
        chains=chains,
        chain_ids=np.concatenate([parts[4], np.array(k2, dtype=np.uint16)]),
        size=size, end=end, errors=parts[6] + e2,
        bad=np.concatenate([parts[5], np.array(b2, dtype=bool)]))


#: bytes read per block on the hot path: the header and the first 39 payload
#: bytes (a Multiple block's [n][n method bytes] codec list, n <= 38 here)
_FAST_READ = 64
_FAST_MAX_CHAIN = _FAST_READ - BLOCK_HEADER_SIZE - 1
#: method bytes the engine knows, as a lookup table
_KNOWN = np.zeros(256, dtype=bool)
_KNOWN[list(ENGINE_CODEC_NAMES)] = True


def _follow_sizes(buf, size: int, max_blocks: int, fd: int | None) -> tuple[list[bytes], int]:
    """The hot loop: (the first 64 bytes of each block, where it stopped).
    Stops before the first block that the careful walk must look at; the
    blocks lie back to back from offset 0, so their offsets follow from the
    compressed sizes in the records."""
    recs: list[bytes] = []
    add_rec = recs.append
    pos = 0
    limit = size - BLOCK_HEADER_SIZE if max_blocks > 0 else -1
    last = DBMS_MAX_COMPRESSED_SIZE
    u32 = _U32.unpack_from
    if fd is not None:
        read = functools.partial(os.pread, fd, _FAST_READ)     # read(offset): a C call, no Python frame
    else:
        def read(at: int) -> bytes:
            return bytes(buf[at:at + _FAST_READ])
    try:
        while pos <= limit:
            hb = read(pos)
            c, = u32(hb, 17)          # struct.error if the file shrank under us
            if c < COMPRESSED_BLOCK_HEADER_SIZE or c > last or pos + CHECKSUM_SIZE + c > size:
                break
            add_rec(hb)
            pos += CHECKSUM_SIZE + c
            if len(recs) >= max_blocks:
                break
    except struct.error:
        pass
    return recs, pos


def _group_rows(key: np.ndarray) -> tuple[np.ndarray, list[list[int]]]:
    """(group per row, distinct rows as lists in order of first appearance).
    Nearly every file has one chain: that case is one comparison."""
    first = key[0]
    if (key == first).all():
        return np.zeros(len(key), dtype=np.intp), [first.tolist()]
    rows = np.ascontiguousarray(key).view(f"V{key.shape[1]}").ravel().tolist()
    index: dict[bytes, int] = {}
    inv = np.fromiter((index.setdefault(r, len(index)) for r in rows), dtype=np.intp, count=len(rows))
    distinct = [list(r) for r in index]
    return inv, distinct


def _chain_keys(raw: np.ndarray, method: np.ndarray, cnt: np.ndarray, list_ok: np.ndarray) -> tuple:
    """(group per block, distinct chain keys): a key is the method, then (a
    Multiple block with a readable list) n and the list, zero-padded.  Nearly
    every file uses one chain for all its blocks: that case is a few
    comparisons, no key per block."""
    n = len(method)
    m0 = int(method[0])
    if (method == m0).all():
        if m0 != Multiple:
            return np.zeros(n, dtype=np.intp), [[m0, 0] + [0] * _FAST_MAX_CHAIN]
        c0 = int(cnt[0])
        if list_ok.all() and (cnt == c0).all() and c0 <= _FAST_MAX_CHAIN:
            lists = raw[:, BLOCK_HEADER_SIZE + 1:BLOCK_HEADER_SIZE + 1 + c0]
            if (lists == lists[0]).all():
                return np.zeros(n, dtype=np.intp), [[m0, c0] + lists[0].tolist() + [0] * (_FAST_MAX_CHAIN - c0)]
    key = np.zeros((n, 2 + _FAST_MAX_CHAIN), dtype=np.uint8)
    key[:, 0] = method
    sel = np.flatnonzero(list_ok)
    if len(sel):
        key[sel, 1] = cnt[sel]
        lists = raw[sel, BLOCK_HEADER_SIZE + 1:BLOCK_HEADER_SIZE + 1 + _FAST_MAX_CHAIN]
        key[sel, 2:] = np.where(np.arange(_FAST_MAX_CHAIN)[None, :] < cnt[sel][:, None], lists, 0)
    return _group_rows(key)


def _decode_headers(recs: list[bytes], chains: list, chain_index: dict) -> tuple:
    """Methods, sizes, chains and problems of the hot loop's headers, at once.

    Returns (offsets, compressed, decompressed, methods, chain ids, bad,
    errors, resume): ``resume`` is the offset of the first block this cannot
    judge from 64 bytes (a decompressed size over the limit, a codec list
    longer than 38), from where the careful walk goes on; None when all were
    judged."""
    n = len(recs)
    if n and (len(recs[-1]) != _FAST_READ or any(len(r) != _FAST_READ for r in recs[-4:])):
        recs = [r if len(r) == _FAST_READ else r.ljust(_FAST_READ, b"\0") for r in recs]
    raw = np.frombuffer(b"".join(recs), dtype=np.uint8).reshape(n, _FAST_READ)
    method = raw[:, CHECKSUM_SIZE].copy()
    csz = raw[:, 17:21].copy().view("<u4").ravel()
    usz = raw[:, 21:25].copy().view("<u4").ravel()
    offs = np.zeros(n, dtype=np.uint64)         # back to back from 0
    if n > 1:
        np.cumsum(csz[:-1].astype(np.uint64) + np.uint64(CHECKSUM_SIZE), out=offs[1:])
    cnt = raw[:, BLOCK_HEADER_SIZE].astype(np.int64)
    payload = csz.astype(np.int64) - COMPRESSED_BLOCK_HEADER_SIZE
    is_multi = method == Multiple
    list_ok = is_multi & (payload >= 1) & (cnt >= 1) & (cnt <= payload - 1)
    stop = (usz > DBMS_MAX_COMPRESSED_SIZE) | (list_ok & (cnt > _FAST_MAX_CHAIN))
    resume = None
    if stop.any():
        k = int(np.argmax(stop))
        resume = int(offs[k])
        n = k
        raw, method, csz, usz, cnt, payload, is_multi, list_ok = (
            a[:k] for a in (raw, method, csz, usz, cnt, payload, is_multi, list_ok))
    chain_ids = np.zeros(n, dtype=np.uint16)
    bad = np.zeros(n, dtype=bool)
    problems: list[tuple[int, str]] = []
    if n:
        inv, ukeys = _chain_keys(raw, method, cnt, list_ok)
        ids = np.zeros(len(ukeys), dtype=np.uint16)
        for u, k in enumerate(ukeys):         # in order of first appearance
            if k[0] == Multiple:
                chain = tuple(k[2:2 + k[1]]) if k[1] else (Multiple,)
                unknown = [m for m in chain if not _KNOWN[m]] if k[1] else []
                msg = f"Multiple block lists unknown method byte 0x{unknown[0]:02x}" if unknown else None
            else:
                chain = (k[0],)
                msg = None if _KNOWN[k[0]] else f"unknown compression method byte 0x{k[0]:02x}"
            cid = chain_index.get(chain)
            if cid is None:
                cid = chain_index[chain] = len(chains)
                chains.append(chain)
            ids[u] = cid
            if msg:
                problems.extend((i, msg) for i in np.flatnonzero(inv == u).tolist())
        chain_ids = ids[inv]
        for i in np.flatnonzero(is_multi & ~list_ok).tolist():      # as read_multiple_methods says
            if payload[i] < 1:
                problems.append((i, "Multiple block without codec list"))
            else:
                problems.append((i, f"Multiple block lists {int(cnt[i])} codecs in a {int(payload[i])}-byte payload"))
    errors: list[tuple[str, int]] = []
    for i, msg in sorted(problems, key=lambda t: t[0]):
        bad[i] = True
        errors.append((msg, int(offs[i])))
    return (offs[:n], csz, usz, method, chain_ids, bad, errors, resume)


def _walk_slow(buf, size: int, max_blocks: int, fd: int | None, pos: int, chains: list, chain_index: dict,
               already: int = 0) -> tuple:
    """The careful walk, one block at a time, from ``pos``: every framing
    problem is named.  Returns (offsets, compressed, decompressed, methods,
    chain ids, bad flags, errors, end)."""
    pread = os.pread
    offs: list[int] = []
    csz: list[int] = []
    usz: list[int] = []
    meth: list[int] = []
    chain_ids: list[int] = []
    bad: list[bool] = []
    errors: list[tuple[str, int]] = []
    unpack = _HDR.unpack_from
    while pos < size:
        if already + len(offs) >= max_blocks:
            errors.append((f"more than {max_blocks} blocks, walk stopped", pos))
            break
        if pos + BLOCK_HEADER_SIZE > size:
            errors.append((f"{size - pos} trailing bytes, too short for a block header", pos))
            break
        if fd is not None:
            hb, base = pread(fd, BLOCK_HEADER_SIZE, pos), 0
            if len(hb) < BLOCK_HEADER_SIZE:
                errors.append(("file ended while reading a block header (it shrank during the scan?)", pos))
                break
        else:
            hb, base = buf, pos
        method, c, u = unpack(hb, base + CHECKSUM_SIZE)
        if c < COMPRESSED_BLOCK_HEADER_SIZE:
            errors.append((f"block compressed size {c} is below the {COMPRESSED_BLOCK_HEADER_SIZE}-byte header", pos))
            break
        if c > DBMS_MAX_COMPRESSED_SIZE:
            errors.append((f"block claims {c} compressed bytes, over the engine's limit of "
                           f"{DBMS_MAX_COMPRESSED_SIZE}", pos))
            break
        if u > DBMS_MAX_COMPRESSED_SIZE:
            errors.append((f"block claims {u} decompressed bytes, over the engine's limit of "
                           f"{DBMS_MAX_COMPRESSED_SIZE}", pos))
            break
        if pos + CHECKSUM_SIZE + c > size:
            errors.append((f"block of {CHECKSUM_SIZE + c} bytes runs past the end of the file "
                           f"({size} bytes)", pos))
            break
        is_bad = False
        if method == Multiple:
            if fd is not None:      # the codec list: at most 1 + 255 bytes after the header
                hb = pread(fd, BLOCK_HEADER_SIZE + min(256, c - COMPRESSED_BLOCK_HEADER_SIZE), pos)
            try:
                chain = read_multiple_methods(hb, base, c)
            except BlockError as e:
                errors.append((str(e).rsplit(" (offset", 1)[0], pos))
                chain, is_bad = (Multiple,), True
            else:
                unknown = [m for m in chain if m not in ENGINE_CODEC_NAMES]
                if unknown:
                    errors.append((f"Multiple block lists unknown method byte 0x{unknown[0]:02x}", pos))
                    is_bad = True
        else:
            chain = (method,)
            if method not in ENGINE_CODEC_NAMES:
                errors.append((f"unknown compression method byte 0x{method:02x}", pos))
                is_bad = True
        cid = chain_index.get(chain)
        if cid is None:
            cid = chain_index[chain] = len(chains)
            chains.append(chain)
        offs.append(pos)
        csz.append(c)
        usz.append(u)
        meth.append(method)
        chain_ids.append(cid)
        bad.append(is_bad)
        pos += CHECKSUM_SIZE + c
    return offs, csz, usz, meth, chain_ids, bad, errors, pos


def verify_block_checksums(buf, table: BlockTable) -> np.ndarray:
    """CityHash128 (v1.0.2) of each block's header + payload against its 16
    stored bytes (CompressedReadBufferBase::readCompressedData).  Reads the
    payloads: only on request."""
    from ..codecs.ch_cityhash import cityhash128     # C where the wheel is installed, else ~20 MB/s
    ok = np.zeros(len(table), dtype=bool)
    for i, (off, c) in enumerate(zip(table.offsets.tolist(), table.compressed.tolist())):
        ok[i] = cityhash128(buf[off + CHECKSUM_SIZE:off + CHECKSUM_SIZE + c]) == bytes(buf[off:off + CHECKSUM_SIZE])
    table.checksum_ok = ok
    return ok


def decode_simple_block(buf, offset: int, max_output: int, verify: bool = True) -> bytes:
    """Decodes one NONE / LZ4 / ZSTD block at ``offset`` (the framing the
    engine uses for marks, primary index and checksums bodies)."""
    h = read_block_header(buf, offset)
    end = offset + h.stored
    if h.compressed_size < COMPRESSED_BLOCK_HEADER_SIZE or end > len(buf):
        raise BlockError(f"block of {h.stored} bytes runs past the end ({len(buf)} bytes)", offset)
    if h.decompressed_size > max_output:
        raise BlockError(f"block claims {h.decompressed_size} decompressed bytes, over the cap of "
                         f"{max_output}", offset)
    if verify:
        from ..codecs.ch_cityhash import cityhash128
        if cityhash128(bytes(buf[offset + CHECKSUM_SIZE:end])) != h.checksum:
            raise BlockError("block checksum (CityHash128) does not match", offset)
    payload = bytes(buf[offset + BLOCK_HEADER_SIZE:end])
    try:
        if h.method == NONE:
            out = payload
        elif h.method == LZ4:
            out = lz4_block_decompress(payload, h.decompressed_size, max_output)
        elif h.method == ZSTD:
            out = zstd_decompress(payload, max_output, size_hint=h.decompressed_size)
        else:
            raise BlockError(f"method {method_name(h.method)} (0x{h.method:02x}) is not a general "
                             f"codec", offset)
    except DecodeError as e:
        raise BlockError(str(e), offset) from None
    if len(out) != h.decompressed_size:
        raise BlockError(f"decoded {len(out)} bytes, header says {h.decompressed_size}", offset)
    return out


def read_stream(buf, max_output: int = 64 << 20, verify: bool = True) -> bytes:
    """Decodes a whole small compressed stream (all blocks, NONE/LZ4/ZSTD),
    checking each block's checksum (these streams are small)."""
    out = bytearray()
    pos = 0
    n = len(buf)
    while pos < n:
        block = decode_simple_block(buf, pos, max_output - len(out), verify)
        out += block
        pos += CHECKSUM_SIZE + _HDR.unpack_from(buf, pos + CHECKSUM_SIZE)[1]
    return bytes(out)

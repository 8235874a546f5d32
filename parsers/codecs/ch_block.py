"""ClickHouse compressed blocks: header, checksum, decoding and encoding of every codec.

A compressed file (``*.bin``, ``*.cmrk*``, ``primary.cidx``, checksums.txt
body) is a concatenation of blocks (src/Compression/CompressionInfo.h,
ICompressionCodec.cpp, CompressedReadBufferBase.cpp):

    16 bytes  CityHash128 (v1.0.2) of the rest of the block
     1 byte   method (CompressionMethodByte)
     4 bytes  UInt32 LE compressed size, *including* these 9 header bytes
     4 bytes  UInt32 LE decompressed size
     N bytes  payload (N = compressed size - 9)

A codec chain ``CODEC(A, B)`` is one block of method ``Multiple`` (0x91) whose
payload is ``[n][n method bytes in the order applied]`` followed by the last
codec's full output; each codec compresses the previous one's output *with* its
9-byte header (CompressionCodecMultiple.cpp).

Public API (shared by parsers/clickhouse and compress/):

- reading: ``parse_block_header``, ``walk_blocks``, ``scan_blocks`` (numpy,
  headers only), ``method_name``, ``method_chain``, ``chain_of``,
  ``decompress_block``, ``decompress_stream`` (a whole small file),
  ``verify_checksum`` / ``verify_checksums`` (a whole
  file, vectorised), ``cityhash128``;
- writing (ch_encode): ``compress_block``, ``encode_chain`` (no checksum, for
  size projections), ``parse_chain``;
- re-encoding a stored block: ``reencode_params`` (what the payloads record),
  ``exact_chain`` (levels found by re-encoding).

LZ4 note: ClickHouse calls LZ4_compress_default; python-lz4's block.compress
runs LZ4_compress_fast_continue, whose output differs for blocks under 64 KiB,
so encoding goes through cramjam (see ch_encode.lz4_compress_default).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from . import ch_delta, ch_doubledelta, ch_fpc, ch_gcd, ch_gorilla, ch_t64
from . import ch_methods as M
from .ch_cityhash import cityhash128, cityhash128_many
from .ch_encode import (CodecSpec, compress_block, encode_chain, lz4_compress_default,  # noqa: F401
                        parse_chain)
# compress/registry.py reaches for this one; encode_chain is the public way to the same bytes
from .ch_encode import _encode_layer  # noqa: F401,E402
from .ch_methods import method_name
from .general import DEFAULT_MAX_OUTPUT, DecodeError, lz4_block_decompress, zstd_decompress

__all__ = [
    "BLOCK_HEADER_SIZE", "CHECKSUM_SIZE", "BlockHeader", "parse_block_header", "walk_blocks",
    "method_name", "method_chain", "chain_of", "decompress_block", "compress_block",
    "cityhash128", "verify_checksum", "DecodeError", "encode_chain", "reencode_params",
    "exact_chain", "parse_chain", "scan_blocks", "BLOCK_DTYPE", "verify_checksums",
    "decompress_stream",
]

#: COMPRESSED_BLOCK_HEADER_SIZE (src/Compression/CompressionInfo.h)
BLOCK_HEADER_SIZE = M.COMPRESSED_BLOCK_HEADER_SIZE
#: the CityHash128 checksum in front of every block (CompressedReadBufferBase.cpp)
CHECKSUM_SIZE = 16
#: Multiple nests codecs; a chain deeper than this is treated as corrupt
MAX_CHAIN_DEPTH = 16

_HDR = struct.Struct("<BII")


@dataclass
class BlockHeader:
    """The 25 bytes in front of a compressed block's payload."""

    checksum: bytes
    method: int
    compressed_size: int        # includes the 9-byte header, as ClickHouse stores it
    decompressed_size: int

    @property
    def stored_size(self) -> int:
        """Bytes the block takes in the file: checksum + compressed size."""
        return CHECKSUM_SIZE + self.compressed_size

    @property
    def payload_size(self) -> int:
        """Bytes after the 9-byte header."""
        return self.compressed_size - BLOCK_HEADER_SIZE

    @property
    def method_name(self) -> str:
        """The codec name of the method byte (CompressionMethodByte)."""
        return method_name(self.method)


def parse_block_header(buf, offset: int = 0) -> BlockHeader:
    """Read the checksum + 9-byte header of the block at ``offset`` (the checksum's first byte).

    Raises DecodeError when fewer than 25 bytes remain, or when the sizes break
    the engine's own limits (compressed size below 9 or above
    DBMS_MAX_COMPRESSED_SIZE, decompressed size above it).
    """
    end = offset + CHECKSUM_SIZE + BLOCK_HEADER_SIZE
    if offset < 0 or len(buf) < end:
        raise DecodeError(f"block header at offset {offset}: only {max(0, len(buf) - offset)} "
                          f"of {CHECKSUM_SIZE + BLOCK_HEADER_SIZE} bytes present")
    checksum = bytes(buf[offset:offset + CHECKSUM_SIZE])
    method, csize, dsize = _HDR.unpack_from(buf, offset + CHECKSUM_SIZE)
    if csize < BLOCK_HEADER_SIZE:
        raise DecodeError(f"block header at offset {offset}: compressed size {csize} is below "
                          f"the {BLOCK_HEADER_SIZE}-byte header")
    if csize > M.DBMS_MAX_COMPRESSED_SIZE or dsize > M.DBMS_MAX_COMPRESSED_SIZE:
        raise DecodeError(f"block header at offset {offset}: sizes {csize}/{dsize} exceed "
                          f"DBMS_MAX_COMPRESSED_SIZE ({M.DBMS_MAX_COMPRESSED_SIZE})")
    return BlockHeader(checksum, method, csize, dsize)


def walk_blocks(buf, offset: int = 0, end: int | None = None) -> Iterator[tuple[int, BlockHeader]]:
    """Yield (offset, header) for each block of a compressed file held in ``buf``.

    Reads headers only.  A block that runs past ``end`` raises DecodeError
    naming its offset.
    """
    end = len(buf) if end is None else end
    while offset < end:
        h = parse_block_header(buf, offset)
        if offset + h.stored_size > end:
            raise DecodeError(f"block at offset {offset}: {h.stored_size} bytes claimed, "
                              f"only {end - offset} left in the file")
        yield offset, h
        offset += h.stored_size


#: one row per block, as scan_blocks returns them
BLOCK_DTYPE = np.dtype([("offset", "<u8"), ("method", "u1"), ("compressed_size", "<u4"),
                        ("decompressed_size", "<u4")])


def scan_blocks(buf, offset: int = 0, end: int | None = None) -> np.ndarray:
    """Every block header of a compressed file as a BLOCK_DTYPE array (headers only, no payloads).

    The fast path of walk_blocks for whole files (no object per block); the
    same checks and DecodeErrors.  ``stored`` bytes of a block are
    ``CHECKSUM_SIZE + compressed_size``.
    """
    end = len(buf) if end is None else end
    offs: list[int] = []
    meths: list[int] = []
    cs: list[int] = []
    ds: list[int] = []
    unpack = _HDR.unpack_from
    hsize = CHECKSUM_SIZE + BLOCK_HEADER_SIZE
    limit = M.DBMS_MAX_COMPRESSED_SIZE
    while offset < end:
        if end - offset < hsize:
            raise DecodeError(f"block header at offset {offset}: only {end - offset} of {hsize} bytes present")
        method, csize, dsize = unpack(buf, offset + CHECKSUM_SIZE)
        if csize < BLOCK_HEADER_SIZE or csize > limit or dsize > limit:
            parse_block_header(buf, offset)          # raises the detailed error
        if offset + CHECKSUM_SIZE + csize > end:
            raise DecodeError(f"block at offset {offset}: {CHECKSUM_SIZE + csize} bytes claimed, "
                              f"only {end - offset} left in the file")
        offs.append(offset)
        meths.append(method)
        cs.append(csize)
        ds.append(dsize)
        offset += CHECKSUM_SIZE + csize
    out = np.empty(len(offs), dtype=BLOCK_DTYPE)
    out["offset"] = offs
    out["method"] = meths
    out["compressed_size"] = cs
    out["decompressed_size"] = ds
    return out


def verify_checksums(buf, blocks: np.ndarray | None = None) -> np.ndarray:
    """For every block of a compressed file in ``buf``: does its stored CityHash128 match?

    ``blocks`` is scan_blocks(buf) when already at hand.  Hashes all blocks in
    one vectorised pass (ch_cityhash.cityhash128_many, ~10x the scalar speed).
    """
    if blocks is None:
        blocks = scan_blocks(buf)
    bodies = []
    stored = []
    for off, csize in zip(blocks["offset"].tolist(), blocks["compressed_size"].tolist()):
        stored.append(bytes(buf[off:off + CHECKSUM_SIZE]))
        bodies.append(bytes(buf[off + CHECKSUM_SIZE:off + CHECKSUM_SIZE + csize]))
    hashes = cityhash128_many(bodies)
    return np.fromiter((h == c for h, c in zip(hashes, stored)), dtype=bool, count=len(bodies))


def verify_checksum(block: bytes) -> bool:
    """True when the block's stored CityHash128 matches its header + payload."""
    h = parse_block_header(block, 0)
    body = bytes(block[CHECKSUM_SIZE:CHECKSUM_SIZE + h.compressed_size])
    if len(body) < h.compressed_size:
        raise DecodeError(f"block truncated: {len(body)} of {h.compressed_size} bytes present")
    return cityhash128(body) == h.checksum


# -- decoding -----------------------------------------------------------------
def _layer_cap(max_output: int) -> int:
    # intermediate layers of a chain carry headers and may be a little larger than the result
    return max_output + max_output // 8 + 65536


def _decode_layer(buf: bytes, max_output: int, depth: int = 0) -> bytes:
    """Decode one codec layer: 9-byte header + payload (as a codec's compress() writes it)."""
    if len(buf) < BLOCK_HEADER_SIZE:
        raise DecodeError(f"codec layer of {len(buf)} bytes is shorter than its 9-byte header")
    method, csize, dsize = _HDR.unpack_from(buf, 0)
    name = method_name(method)
    if csize != len(buf):
        # the engine hands each layer exactly the bytes the previous one produced
        raise DecodeError(f"{name}: compressed size {csize} does not match the {len(buf)} bytes present")
    if dsize > max_output:
        raise DecodeError(f"{name}: claims {dsize} decompressed bytes, over the cap of {max_output}")
    payload = bytes(buf[BLOCK_HEADER_SIZE:csize])
    try:
        out = _decode_payload(method, name, payload, dsize, max_output, depth)
    except DecodeError:
        raise
    except (ValueError, IndexError, KeyError, OverflowError, struct.error) as e:
        # a safety net: malformed payloads must surface as DecodeError
        raise DecodeError(f"{name}: corrupt payload ({type(e).__name__}: {e})") from None
    if len(out) != dsize:
        raise DecodeError(f"{name}: decoded {len(out)} bytes, header says {dsize}")
    return out


def _decode_payload(method: int, name: str, payload: bytes, dsize: int, max_output: int,
                    depth: int) -> bytes:
    """Dispatch one codec's doDecompressData."""
    if method == M.NONE:
        out = payload
    elif method == M.LZ4:
        # an LZ4 sequence of n bytes yields at most 255 * n + 15 bytes (lz4_Block_format.md)
        if dsize > 255 * len(payload) + 16:
            raise DecodeError(f"LZ4: {len(payload)} bytes cannot decode to the {dsize} bytes claimed")
        out = lz4_block_decompress(payload, dsize, max_output) if dsize else b""
    elif method == M.ZSTD:
        out = zstd_decompress(payload, min(dsize, max_output), size_hint=dsize)
    elif method == M.Multiple:
        out = _decode_multiple(payload, dsize, max_output, depth)
    elif method == M.Delta:
        out = ch_delta.decode(payload, dsize)
    elif method == M.DoubleDelta:
        out = ch_doubledelta.decode(payload, dsize)
    elif method == M.Gorilla:
        out = ch_gorilla.decode(payload, dsize)
    elif method == M.T64:
        out = ch_t64.decode(payload, dsize)
    elif method == M.GCD:
        out = ch_gcd.decode(payload, dsize)
    elif method == M.FPC:
        out = ch_fpc.decode(payload, dsize)
    elif method in (M.AES_128_GCM_SIV, M.AES_256_GCM_SIV):
        raise DecodeError(f"{name}: encrypted block, cannot be decoded without the server's key")
    elif method in M.METHOD_NAMES:
        raise DecodeError(f"{name}: codec not supported by dbxray")
    else:
        raise DecodeError(f"unknown compression method byte 0x{method:02x}")
    return out


def _decode_multiple(payload: bytes, dsize: int, max_output: int, depth: int) -> bytes:
    """CompressionCodecMultiple::doDecompressData: peel the codecs from the last back to the first."""
    if depth >= MAX_CHAIN_DEPTH:
        raise DecodeError("Multiple: codec chain nested too deeply")
    if len(payload) < 1 or payload[0] == 0:
        raise DecodeError("Multiple: wrong compression methods list")
    n = payload[0]
    if 1 + n > len(payload):
        raise DecodeError(f"Multiple: header claims {n} codecs but the payload is {len(payload)} bytes")
    methods = payload[1:1 + n]
    data = payload[1 + n:]
    for idx in range(n - 1, -1, -1):
        if len(data) < BLOCK_HEADER_SIZE:
            raise DecodeError(f"Multiple: layer {idx} ({method_name(methods[idx])}) is shorter than a header")
        if data[0] != methods[idx]:
            raise DecodeError(f"Multiple: layer {idx} has method byte 0x{data[0]:02x}, "
                              f"the list says 0x{methods[idx]:02x}")
        inner_dsize = _HDR.unpack_from(data, 0)[2]
        if idx == 0 and inner_dsize != dsize:
            raise DecodeError(f"Multiple: wrong final decompressed size {inner_dsize}, expected {dsize}")
        data = _decode_layer(data, dsize if idx == 0 else _chain_cap(dsize, idx, max_output), depth + 1)
    return data


def _chain_cap(dsize: int, idx: int, max_output: int) -> int:
    """Upper bound on what layer ``idx`` of a chain may decode to, given the final size.

    That output is the input of codecs ``idx-1 .. 0``; none of them expands its
    input more than ~2.4x (DoubleDelta on 2-byte values, 37 bits per 16), so a
    layer claiming more is corrupt or a bomb and is refused before decoding.
    """
    return min(dsize * 3 ** idx + 65536 * idx, _layer_cap(max_output))


def decompress_block(block: bytes, max_output: int = DEFAULT_MAX_OUTPUT) -> bytes:
    """Decode one full block (16-byte checksum + header + payload) into its raw bytes.

    Every codec and any Multiple chain; the declared and every intermediate
    size are capped (decompression bombs) and anything corrupt, truncated or
    unknown raises DecodeError naming what failed.  Bytes past the block's
    compressed size are ignored.  The checksum is not checked here (see
    verify_checksum).
    """
    h = parse_block_header(block, 0)
    if h.decompressed_size > max_output:
        raise DecodeError(f"{h.method_name} block claims {h.decompressed_size} decompressed bytes, "
                          f"over the cap of {max_output}")
    if len(block) < h.stored_size:
        raise DecodeError(f"{h.method_name} block truncated: {len(block)} of {h.stored_size} bytes present")
    return _decode_layer(bytes(block[CHECKSUM_SIZE:h.stored_size]), max_output)


def decompress_stream(buf, offset: int = 0, end: int | None = None,
                      max_output: int = DEFAULT_MAX_OUTPUT) -> bytes:
    """Decode a whole compressed file (or a range of it): the blocks' raw bytes, concatenated.

    For the small compressed files of a part (``.cmrk*``, ``primary.cidx``,
    checksums.txt body).  ``max_output`` caps the total, checked from the
    headers before anything is decoded.
    """
    blocks = scan_blocks(buf, offset, end)
    total = int(blocks["decompressed_size"].astype(np.int64).sum())
    if total > max_output:
        raise DecodeError(f"compressed stream decodes to {total} bytes, over the cap of {max_output}")
    out = []
    for off, csize in zip(blocks["offset"].tolist(), blocks["compressed_size"].tolist()):
        try:
            out.append(decompress_block(buf[off:off + CHECKSUM_SIZE + csize], max_output))
        except DecodeError as e:
            raise DecodeError(f"block at offset {off}: {e}") from None
    return b"".join(out)


# -- chains -----------------------------------------------------------------
def method_chain(block: bytes) -> list[int]:
    """The method bytes of a block in the order they were applied (header only, no decoding)."""
    h = parse_block_header(block, 0)
    if h.method != M.Multiple:
        return [h.method]
    p = CHECKSUM_SIZE + BLOCK_HEADER_SIZE
    if len(block) < p + 1 or block[p] == 0 or len(block) < p + 1 + block[p]:
        raise DecodeError("Multiple: wrong compression methods list")
    return list(block[p + 1:p + 1 + block[p]])


def _layer_params(method: int, payload: bytes) -> str:
    """A codec as ClickHouse describes it, with the parameters its payload records."""
    name = method_name(method)
    if method == M.Delta and payload:
        return f"Delta({payload[0]})"
    if method == M.Gorilla and payload:
        return f"Gorilla({payload[0]})"
    if method == M.FPC and len(payload) >= 2:
        return f"FPC({payload[1]})"
    if method == M.T64 and payload and payload[0] >> 7:
        return "T64('bit')"
    return name


def chain_of(block: bytes, params: bool = True, max_output: int = DEFAULT_MAX_OUTPUT) -> str:
    """The codec chain of a block, e.g. ``"LZ4"``, ``"Delta(4),ZSTD"``, ``"T64,LZ4"``.

    What a block records: Delta's width, Gorilla's width, FPC's level, T64's
    variant.  What it does not: LZ4 vs LZ4HC and the LZ4HC level (same method
    byte and format), the ZSTD level (a zstd frame has none), so those print as
    ``LZ4`` / ``ZSTD``.  Inside a Multiple chain the parameters of the earlier
    codecs are only visible after decoding the later ones; ``params=False``
    reads method bytes only (no decoding).
    """
    chain = method_chain(block)
    if not params:
        return ",".join(method_name(m) for m in chain)
    h = parse_block_header(block, 0)
    if len(block) < h.stored_size:
        raise DecodeError(f"{h.method_name} block truncated: {len(block)} of {h.stored_size} bytes present")
    if h.method != M.Multiple:
        return _layer_params(h.method, bytes(block[CHECKSUM_SIZE + BLOCK_HEADER_SIZE:h.stored_size]))
    n = len(chain)
    data = bytes(block[CHECKSUM_SIZE + BLOCK_HEADER_SIZE + 1 + n:h.stored_size])
    names: list[str] = []
    cap = _layer_cap(max_output)
    for idx in range(n - 1, -1, -1):
        if len(data) < BLOCK_HEADER_SIZE:
            raise DecodeError(f"Multiple: layer {idx} is shorter than a header")
        csize = _HDR.unpack_from(data, 0)[1]
        names.append(_layer_params(data[0], data[BLOCK_HEADER_SIZE:csize]))
        if idx:
            data = _decode_layer(data, cap, 1)
    return ",".join(reversed(names))


def reencode_params(block: bytes, max_output: int = DEFAULT_MAX_OUTPUT) -> dict:
    """What compress_block needs, besides the general codecs' levels, to re-encode this block.

    Returns ``{"chain": str, "type_size": int | None, "value_type": str | None}``
    read from the codec payloads (Delta/DoubleDelta/Gorilla/GCD width, FPC width
    and level, T64 type).  LZ4HC and ZSTD levels are not recorded in a block:
    the chain names them bare ("LZ4", "ZSTD"); substitute the DDL's levels.
    """
    chain = method_chain(block)
    h = parse_block_header(block, 0)
    if len(block) < h.stored_size:
        raise DecodeError(f"{h.method_name} block truncated")
    if h.method == M.Multiple:
        n = len(chain)
        data = bytes(block[CHECKSUM_SIZE + BLOCK_HEADER_SIZE + 1 + n:h.stored_size])
    else:
        data = bytes(block[CHECKSUM_SIZE:h.stored_size])
    layers: list[tuple[int, bytes]] = []
    cap = _layer_cap(max_output)
    for idx in range(len(chain) - 1, -1, -1):
        csize = _HDR.unpack_from(data, 0)[1] if len(data) >= BLOCK_HEADER_SIZE else 0
        layers.append((data[0] if data else 0, data[BLOCK_HEADER_SIZE:csize]))
        if idx:
            data = _decode_layer(data, cap, 1)
    layers.reverse()
    type_size = None
    value_type = None
    names = []
    for method, payload in layers:
        if method in (M.Delta, M.DoubleDelta, M.Gorilla, M.GCD, M.FPC) and payload:
            type_size = type_size or payload[0]
        if method == M.T64 and payload:
            value_type, variant = ch_t64.cookie_of(payload)
            type_size = type_size or ch_t64.base_type_info(value_type)[0]
        if method == M.FPC and len(payload) >= 2:
            names.append(f"FPC({payload[1]},{payload[0]})")
            continue
        names.append(_layer_params(method, payload))
    return {"chain": ",".join(names), "type_size": type_size, "value_type": value_type}


#: levels tried by exact_chain, in order (ClickHouse defaults first)
ZSTD_LEVELS_TRIED = (1, 3, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22)
LZ4HC_LEVELS_TRIED = (9, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12)


def exact_chain(block: bytes, max_output: int = DEFAULT_MAX_OUTPUT) -> str | None:
    """The chain *with* general-codec levels that reproduces this block byte for byte.

    The levels are not stored, so they are found by re-encoding: ZSTD levels
    1..22, LZ4 (LZ4_compress_default), then LZ4HC levels 1..12 (LZ4HC(0) writes
    the same bytes as LZ4HC(9) and is reported as such).  Small blocks often
    come out identical at several levels: the first in the order tried wins
    (ZSTD_LEVELS_TRIED, LZ4HC_LEVELS_TRIED).  Returns None when no
    candidate matches (another library version, ZSTD with a window log...).
    Costly (up to ~35 re-encodings); meant for one block on request.
    """
    raw = decompress_block(block, max_output)
    prm = reencode_params(block, max_output)
    specs = parse_chain(prm["chain"])
    options: list[list[str]] = []
    for spec in specs:
        text = spec.name + (f"({','.join(spec.args)})" if spec.args else "")
        if spec.name == "ZSTD":
            options.append([f"ZSTD({lv})" for lv in ZSTD_LEVELS_TRIED])
        elif spec.name == "LZ4":
            options.append(["LZ4"] + [f"LZ4HC({lv})" for lv in LZ4HC_LEVELS_TRIED])
        elif spec.name == "T64" and spec.args:
            options.append([f"T64('{spec.args[0]}')"])
        else:
            options.append([text])
    # only the general codecs vary; there is one in practice, so try them one at a time
    base = [o[0] for o in options]
    for i, opts in enumerate(options):
        if len(opts) == 1:
            continue
        for cand in opts:
            trial = base[:i] + [cand] + base[i + 1:]
            chain = ",".join(trial)
            body = encode_chain(raw, chain, prm["type_size"], prm["value_type"])
            if CHECKSUM_SIZE + len(body) == len(block[:parse_block_header(block).stored_size]) \
                    and body == bytes(block[CHECKSUM_SIZE:CHECKSUM_SIZE + len(body)]):
                return chain
        return None
    chain = ",".join(base)
    body = encode_chain(raw, chain, prm["type_size"], prm["value_type"])
    return chain if body == bytes(block[CHECKSUM_SIZE:CHECKSUM_SIZE + len(body)]) else None

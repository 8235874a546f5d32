"""ClickHouse codec chains, encoding side: ``CODEC(...)`` text to a compressed block.

What each codec's ``compress()`` writes (ICompressionCodec.cpp: method byte,
UInt32 compressed size incl. the 9-byte header, UInt32 decompressed size,
payload), chained the way CompressionCodecMultiple::doCompressData does it.
ch_block re-exports ``compress_block`` and ``encode_chain``.
"""
from __future__ import annotations

import functools
import re
import struct
from dataclasses import dataclass

import cramjam
import xxhash
import zstandard

from . import ch_delta, ch_doubledelta, ch_fpc, ch_gcd, ch_gorilla, ch_t64
from . import ch_methods as M
from .ch_cityhash import cityhash128
from .general import lz4_block_compress

BLOCK_HEADER_SIZE = M.COMPRESSED_BLOCK_HEADER_SIZE
#: lz4hc.h: the level LZ4_compress_HC takes for 0 (general.lz4_block_compress: ``level or 9``)
LZ4HC_CLEVEL_DEFAULT = 9
_HDR = struct.Struct("<BII")


def lz4_compress_default(raw: bytes) -> bytes:
    """LZ4_compress_default (acceleration 1), as CompressionCodecLZ4::doCompressData calls it.

    python-lz4's ``lz4.block.compress`` runs LZ4_compress_fast_continue on a
    fresh stream, which always uses the 32-bit hash table; LZ4_compress_default
    uses the 16-bit table for inputs under LZ4_64Klimit (64 KiB + 11), so for
    small blocks the two give different (both valid) outputs.  cramjam's
    ``compress_block`` calls LZ4_compress_default and reproduces ClickHouse's
    bytes.
    """
    return bytes(cramjam.lz4.compress_block(raw, store_size=False))


_CODEC_RE = re.compile(r"\s*([A-Za-z0-9_]+)\s*(?:\(([^()]*)\))?\s*$")


@dataclass
class CodecSpec:
    """One codec of a chain with its arguments, as parsed from ``Name(args)``."""

    name: str
    args: list[str]


def split_chain(text: str) -> list[str]:
    """``"Delta(4), ZSTD(1)"`` -> ``["Delta(4)", "ZSTD(1)"]``: commas outside parentheses
    (an empty item stays, as an empty string, so a caller can reject it)."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts]


def parse_chain(chain: str) -> list[CodecSpec]:
    """Split ``"Delta(4), ZSTD(1)"`` (optionally wrapped in ``CODEC(...)``) into codec specs."""
    return list(_parsed(chain))


@functools.lru_cache(maxsize=1024)
def _parsed(chain: str) -> tuple[CodecSpec, ...]:
    """parse_chain's specs, parsed once a chain text (encode_chain reads them, never changes them)."""
    s = chain.strip()
    m = re.fullmatch(r"(?i)CODEC\s*\((.*)\)", s)
    if m:
        s = m.group(1)
    parts = split_chain(s)
    specs = []
    for p in parts:
        m = _CODEC_RE.match(p)
        if not m:
            raise ValueError(f"cannot parse codec {p!r} in chain {chain!r}")
        args = [a.strip().strip("'\"") for a in m.group(2).split(",")] if m.group(2) else []
        specs.append(CodecSpec(m.group(1), [a for a in args if a != ""]))
    if not specs:
        raise ValueError(f"empty codec chain {chain!r}")
    return tuple(specs)


def _need_width(spec: CodecSpec, type_size: int | None) -> int:
    if type_size is None:
        raise ValueError(f"{spec.name} needs the value size: pass type_size")
    return type_size


def _encode_layer(raw: bytes, spec: CodecSpec, type_size: int | None, value_type: str | None) -> bytes:
    """One codec's compress(): 9-byte header + payload."""
    name = spec.name.upper()
    args = spec.args
    if name == "NONE":
        method, payload = M.NONE, raw
    elif name == "LZ4":
        method, payload = M.LZ4, lz4_compress_default(raw)
    elif name == "LZ4HC":
        # CompressionCodecLZ4HC: LZ4_compress_HC(level); level 0 means the library default (9)
        level = int(args[0]) if args else 0
        method, payload = M.LZ4, lz4_block_compress(raw, level=level, hc=True)
    elif name == "ZSTD":
        level = int(args[0]) if args else M.ZSTD_DEFAULT_LEVEL
        if len(args) > 1 and int(args[1]):
            # CompressionCodecZSTD with window_log: ZSTD_c_compressionLevel, then long-distance
            # matching on and ZSTD_c_windowLog, the rest left to the library for the block's size
            # (from_level would fix every parameter for an unknown size: other bytes than the engine's)
            params = zstandard.ZstdCompressionParameters(
                compression_level=level, window_log=int(args[1]), enable_ldm=True)
            cctx = zstandard.ZstdCompressor(compression_params=params)
        else:
            cctx = zstandard.ZstdCompressor(level=level)
        method, payload = M.ZSTD, cctx.compress(raw)
    elif name == "DELTA":
        width = int(args[0]) if args else _need_width(spec, type_size)
        method, payload = M.Delta, ch_delta.encode(raw, width)
    elif name == "DOUBLEDELTA":
        method, payload = M.DoubleDelta, ch_doubledelta.encode(raw, _need_width(spec, type_size))
    elif name == "GORILLA":
        width = int(args[0]) if args else _need_width(spec, type_size)
        method, payload = M.Gorilla, ch_gorilla.encode(raw, width)
    elif name == "GCD":
        method, payload = M.GCD, ch_gcd.encode(raw, _need_width(spec, type_size))
    elif name == "T64":
        variant = ch_t64.VARIANT_BIT if args and args[0].lower() == "bit" else ch_t64.VARIANT_BYTE
        tname = value_type or ch_t64.type_for(_need_width(spec, type_size))
        method, payload = M.T64, ch_t64.encode(raw, tname, variant)
    elif name == "FPC":
        # registerCodecFPC: float width from the column type (4 without one), level 12 by default
        level = int(args[0]) if args else ch_fpc.DEFAULT_COMPRESSION_LEVEL
        width = int(args[1]) if len(args) > 1 else (type_size or 4)
        method, payload = M.FPC, ch_fpc.encode(raw, width, level)
    else:
        raise ValueError(f"codec {spec.name} is not supported for encoding")
    return _HDR.pack(method, BLOCK_HEADER_SIZE + len(payload), len(raw)) + payload


def _same_bytes_as(spec: CodecSpec) -> tuple[str, tuple[str, ...]]:
    """(name, arguments) of ``spec`` with the defaults _encode_layer fills spelled out, so
    specs that write the same bytes share a memo entry: ``LZ4HC`` and ``LZ4HC(0)`` are
    LZ4HC(9) (CompressionCodecLZ4HC: level 0 is the library default), ``ZSTD`` is ZSTD(1)."""
    name = spec.name.upper()
    if name == "LZ4HC" and len(spec.args) <= 1:
        level = int(spec.args[0]) if spec.args else 0
        return name, (str(level or LZ4HC_CLEVEL_DEFAULT),)
    if name == "ZSTD" and not spec.args:
        return name, (str(M.ZSTD_DEFAULT_LEVEL),)
    return name, tuple(spec.args)


def _remembered_layer(raw: bytes, spec: CodecSpec, type_size: int | None, value_type: str | None,
                      memo) -> bytes:
    """_encode_layer, its output looked up in ``memo`` first (keyed by the input's 128-bit
    xxh3 digest and length, the codec and its arguments, the value size and type: every
    encoder here is deterministic, so the same key gives the same bytes) and put there after."""
    key = (xxhash.xxh3_128_digest(raw), len(raw), *_same_bytes_as(spec), type_size, value_type)
    got = memo.get(key)
    if got is None:
        got = _encode_layer(raw, spec, type_size, value_type)
        memo[key] = got
    return got


def encode_chain(raw: bytes, chain: str, type_size: int | None = None,
                 value_type: str | None = None, memo=None) -> bytes:
    """A block without its checksum: 9-byte header + payload (see compress_block).

    For size projections: the block takes ``CHECKSUM_SIZE + len(result)``
    bytes on disk, and the pure-Python CityHash is skipped.  ``memo`` (a dict-like
    the caller keeps, or None): each codec's output on an input already encoded the
    same way is taken from it, so chains that share their first codecs (``T64, LZ4``
    and ``T64, ZSTD(1)``) or a block projected twice encode it once.
    """
    raw = bytes(raw)
    if len(raw) > M.DBMS_MAX_COMPRESSED_SIZE:
        raise ValueError(f"block of {len(raw)} bytes is over DBMS_MAX_COMPRESSED_SIZE")
    specs = _parsed(chain)
    if memo is None:
        def layer(data: bytes, spec: CodecSpec) -> bytes:
            return _encode_layer(data, spec, type_size, value_type)
    else:
        def layer(data: bytes, spec: CodecSpec) -> bytes:
            return _remembered_layer(data, spec, type_size, value_type, memo)
    if len(specs) == 1:
        return layer(raw, specs[0])
    data = raw
    methods = []
    for spec in specs:
        data = layer(data, spec)
        methods.append(data[0])
    payload = bytes([len(specs)] + methods) + data
    return _HDR.pack(M.Multiple, BLOCK_HEADER_SIZE + len(payload), len(raw)) + payload


def compress_block(raw: bytes, chain: str, type_size: int | None = None,
                   value_type: str | None = None) -> bytes:
    """Encode ``raw`` as one full block (checksum + header + payload) with a codec chain.

    ``chain`` is written as ClickHouse writes it: ``"NONE"``, ``"LZ4"``,
    ``"LZ4HC(9)"``, ``"ZSTD(1)"``, ``"Delta(4),ZSTD(1)"``, ``"DoubleDelta,LZ4"``,
    ``"Gorilla"``, ``"T64,LZ4"``, ``"GCD,LZ4"``, ``"FPC(12),ZSTD"``...  Codecs
    that depend on the column type take its value size from ``type_size``
    (ClickHouse gives every codec of a chain the column's type); T64 also
    records the type itself: pass ``value_type`` ("UInt32", "Int64",
    "DateTime", "Decimal64"...; default the unsigned type of ``type_size``).
    A chain of more than one codec is written as a Multiple (0x91) block.
    """
    body = encode_chain(raw, chain, type_size, value_type)
    return cityhash128(body) + body

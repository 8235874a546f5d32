"""The block trailer and its checksum (RocksDB table/format.h ``kBlockTrailerSize``,
table/format.cc ``ComputeBuiltinChecksumWithLastByte``, ``ChecksumModifierForContext``,
util/crc32c.h ``Mask``).

Every block is followed by 5 bytes: its compression type and a fixed32 checksum of
the stored bytes plus that type byte: masked CRC32c, XXH32, the low 32 bits of XXH64,
or XXH3 (its low 32 bits xor'ed with the type byte times 0x6b9083d9); from
format_version 6 the checksum also mixes in the block's offset
(``base_context_checksum ^ (lower32(offset) + upper32(offset))``, added)."""
from __future__ import annotations

import struct

import google_crc32c

try:                                   # xxhash checksums need the xxhash package
    import xxhash
except ImportError:                    # pragma: no cover - listed in the dependencies
    xxhash = None

#: util/crc32c.h kMaskDelta
kMaskDelta = 0xA282EAD8
#: format.cc ComputeBuiltinChecksumWithLastByte kRandomPrime (XXH3)
kRandomPrime = 0x6B9083D9


def crc32c_mask(crc: int) -> int:
    """crc32c::Mask: rotate right by 15 bits and add a constant."""
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + kMaskDelta) & 0xFFFFFFFF


def block_checksum(checksum_type: int, stored: bytes, type_byte: int) -> int | None:
    """The checksum RocksDB computes over a block's stored bytes and its type byte
    (None: this checksum type cannot be computed here)."""
    if checksum_type == 1:
        return crc32c_mask(google_crc32c.extend(google_crc32c.value(stored), bytes((type_byte,))))
    if xxhash is None:
        return None
    if checksum_type == 2:
        h = xxhash.xxh32(stored)
        h.update(bytes((type_byte,)))
        return h.intdigest()
    if checksum_type == 3:
        h = xxhash.xxh64(stored)
        h.update(bytes((type_byte,)))
        return h.intdigest() & 0xFFFFFFFF
    if checksum_type == 4:
        v = xxhash.xxh3_64_intdigest(stored) & 0xFFFFFFFF
        return v ^ ((type_byte * kRandomPrime) & 0xFFFFFFFF)
    return None


def context_modifier(base_context_checksum: int, offset: int) -> int:
    """ChecksumModifierForContext: 0 when the table has no base context checksum."""
    if not base_context_checksum:
        return 0
    return (base_context_checksum ^ ((offset & 0xFFFFFFFF) + (offset >> 32))) & 0xFFFFFFFF


def split_trailer(raw: bytes) -> tuple[bytes, int, int]:
    """(stored bytes, compression type, stored checksum) of a block read with its trailer."""
    n = len(raw) - 5
    return raw[:n], raw[n], struct.unpack_from("<I", raw, n + 1)[0]


def verify(checksum_type: int, raw: bytes, offset: int = 0, base_context_checksum: int = 0) -> bool | None:
    """Whether a block's trailer checksum matches (None: not computable: type 0 or no xxhash)."""
    if checksum_type == 0:
        return None
    stored, ctype, expected = split_trailer(raw)
    got = block_checksum(checksum_type, stored, ctype)
    if got is None:
        return None
    got = (got + context_modifier(base_context_checksum, offset)) & 0xFFFFFFFF
    return got == expected

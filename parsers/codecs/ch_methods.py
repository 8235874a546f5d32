"""ClickHouse compression method bytes and codec names.

The byte that follows the 16-byte checksum of every compressed block names
its codec: ``enum class CompressionMethodByte`` in src/Compression/CompressionInfo.h.
"""
from __future__ import annotations

# src/Compression/CompressionInfo.h: enum class CompressionMethodByte
NONE = 0x02
LZ4 = 0x82               # LZ4 and LZ4HC share it (same block format)
ZSTD = 0x90
Multiple = 0x91
Delta = 0x92
T64 = 0x93
DoubleDelta = 0x94
Gorilla = 0x95
AES_128_GCM_SIV = 0x96
AES_256_GCM_SIV = 0x97
FPC = 0x98
GCD = 0x9A
ZSTD_QPL = 0x9B
SZ3 = 0x9C

METHOD_NAMES: dict[int, str] = {
    NONE: "NONE",
    LZ4: "LZ4",
    ZSTD: "ZSTD",
    Multiple: "Multiple",
    Delta: "Delta",
    T64: "T64",
    DoubleDelta: "DoubleDelta",
    Gorilla: "Gorilla",
    AES_128_GCM_SIV: "AES_128_GCM_SIV",
    AES_256_GCM_SIV: "AES_256_GCM_SIV",
    FPC: "FPC",
    GCD: "GCD",
    ZSTD_QPL: "ZSTD_QPL",
    SZ3: "SZ3",
}

#: codec name (as written in CODEC(...), upper-cased) -> method byte
NAME_TO_METHOD: dict[str, int] = {name.upper(): byte for byte, name in METHOD_NAMES.items()}
NAME_TO_METHOD["LZ4HC"] = LZ4

#: src/Compression/CompressionInfo.h: DBMS_MAX_COMPRESSED_SIZE (1 GiB); the
#: engine refuses blocks whose sizes exceed it (CompressedReadBufferBase.cpp).
DBMS_MAX_COMPRESSED_SIZE = 0x40000000

#: src/Compression/CompressionInfo.h: COMPRESSED_BLOCK_HEADER_SIZE
COMPRESSED_BLOCK_HEADER_SIZE = 9

#: CompressionCodecZSTD.h: ZSTD_DEFAULT_LEVEL
ZSTD_DEFAULT_LEVEL = 1


def method_name(byte: int) -> str:
    """The codec name for a method byte, ``Unknown(0x..)`` when the engine has none."""
    return METHOD_NAMES.get(byte, f"Unknown(0x{byte:02x})")

"""ClickHouse binary primitives: unsigned LEB128 varints and length-prefixed
strings (src/IO/VarInt.h ``readVarUInt``, src/IO/ReadHelpers.h
``readStringBinary``)."""
from __future__ import annotations


class VarintError(Exception):
    """A varint or string ran past the buffer or was too long."""

    def __init__(self, message: str, offset: int):
        self.offset = offset
        super().__init__(f"{message} at offset {offset}")


def read_varuint(buf, offset: int) -> tuple[int, int]:
    """Reads one unsigned LEB128 varint (at most 10 bytes); returns (value, next offset)."""
    result = 0
    shift = 0
    pos = offset
    n = len(buf)
    for _ in range(10):
        if pos >= n:
            raise VarintError("varint runs past the end", offset)
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
    raise VarintError("varint longer than 10 bytes", offset)


def read_string_binary(buf, offset: int, max_len: int = 1 << 20) -> tuple[bytes, int]:
    """Reads a varint length + bytes string; returns (bytes, next offset)."""
    length, pos = read_varuint(buf, offset)
    if length > max_len:
        raise VarintError(f"string of {length} bytes is over the limit of {max_len}", offset)
    if pos + length > len(buf):
        raise VarintError(f"string of {length} bytes runs past the end", offset)
    return bytes(buf[pos:pos + length]), pos + length

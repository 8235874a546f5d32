"""ClickHouse's own compatibility vectors for DoubleDelta.

src/Compression/tests/gtest_compressionCodec.cpp (CodecTestCompatibility,
DoubleDelta): for each integer type a sequence built around the points where
the delta-of-delta encoding changes length (DDCompatibilityTestSequence) and
the exact bytes ``codec->compress()`` must produce (9-byte header + payload).
The sequences are rebuilt here from their description; the expected bytes are
the engine test's data.
"""
from __future__ import annotations

import pytest

from dbxray.parsers.codecs.ch_block import decompress_block, encode_chain

EXPECTED = {
    "Int8": (
        "94210000000f00000001000f0000002a006b655f5034ff4fafb1aaf4f67d87f880"),
    "UInt8": (
        "9427000000150000000100150000002a006b655f5034ff4fafb1aaf4f67d87f8818ed0ca020101"),
    "Int16": (
        "94700000004e0000000200270000002a0000006b655f5034ff4fafbce35da3d3d9f61fe2077c472067480747ff47f6fe"
        "f80000706bd0000283d9fb9fdc1ffc201e800022c8f000006667a00002003d00000fffe800007feeffdf40000ff27800"
        "017f839ff79ffbc00000fffe00000800"),
    "UInt16": (
        "94700000004e0000000200270000002a0000006b655f5034ff4fafbce35da3d3d9f61fe2077c472067480747ff47f6fe"
        "f80000706bd0000283d9fb9fdc1ffc201e800022c8f000006667a00002003d00000fffe800007feeffdf40000ff27800"
        "017f839ff79ffbc00000fffe00000800"),
    "Int32": (
        "94740000009c0000000400270000002a000000000000006b655f5034ff4fafbce35da3d3d9f61fe2077c472067480747"
        "ff47f6fef80000706bd0000283d9fb9fdc1ffc201e800022c8f000006667a00002003d00000fffe800007feeffdf0000"
        "700d7a0002807b9ff79ffbc00000fffe00000800"),
    "UInt32": (
        "94b5000000cc0000000400330000002a000000000000006b655f5034ff4fafbce35da3d3d9f61fe2077c472067480747"
        "ff47f6fef80000706bd0000283d9fb9fdc1ffc201e800022c8f000006667a00002003d00000fffe800007feeffdf0000"
        "700d7a0002807b9ff79ffbc00000fffe00000800f3fff941afbfffd60cfcfffffffbf000000007ffffffefc00000003f"
        "fffffffbfffffffa6974f3ffffffe79fffffff7e00000000fffffffdf800000007fffffff0"),
    "Int64": (
        "94d4000000980100000800330000002a0000000000000000000000000000006b655f5034ff4fafbce35da3d3d9f61fe2"
        "077c472067480747ff47f6fef80000706bd0000283d9fb9fdc1ffc201e800022c8f000006667a00002003d00000fffe8"
        "00007feeffdf0000700d7a0002807b9ff79ffbc00000fffe00000800fc000000040006be4fbfffd60cff000000010000"
        "0003f8000000080000000fc00000003ffffffffbfffffffbe0000001c00000069f8000000a00000034f3ffffffe79fff"
        "ffff7e00000000fffffffdf000000007fffffff0"),
}
EXPECTED["UInt64"] = EXPECTED["Int64"]

#: points where the encoded length of a delta-of-delta changes (getDeltaWriteSpec)
DD_CORNER_POINTS = (-63, 64, -255, 256, -2047, 2048, -(1 << 31), (1 << 31) - 1)


def dd_compatibility_sequence(type_name: str) -> tuple[bytes, int]:
    """Three 42s, then for each corner point p the six values a generator with
    delta-of-delta p-4 .. p+1 produces (fresh generator state per point); stop at
    the first point whose magnitude the type cannot hold."""
    signed = not type_name.startswith("U")
    width = int(type_name[3:] if signed else type_name[4:]) // 8
    top = (1 << (8 * width - 1)) - 1 if signed else (1 << (8 * width)) - 1
    values = [42, 42, 42]
    for p in DD_CORNER_POINTS:
        if abs(p) > top:
            break
        prev = prev_delta = 0
        for dd in range(p - 4, p + 2):
            curr = dd + prev + prev_delta
            prev, prev_delta = curr, dd + prev_delta
            values.append(curr)
    mask = (1 << (8 * width)) - 1
    return b"".join((v & mask).to_bytes(width, "little") for v in values), width


@pytest.mark.parametrize("type_name", sorted(EXPECTED))
def test_doubledelta_encodes_like_the_engine(type_name):
    raw, width = dd_compatibility_sequence(type_name)
    expected = bytes.fromhex(EXPECTED[type_name])
    assert encode_chain(raw, "DoubleDelta", type_size=width) == expected


@pytest.mark.parametrize("type_name", sorted(EXPECTED))
def test_doubledelta_decodes_the_engine_bytes(type_name):
    raw, _ = dd_compatibility_sequence(type_name)
    expected = bytes.fromhex(EXPECTED[type_name])
    assert decompress_block(bytes(16) + expected) == raw

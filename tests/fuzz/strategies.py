"""Hypothesis strategies for the fuzz targets: random bytes, and real fixture
bytes (seeds) with a few bytes overwritten, runs inserted or cut."""
from __future__ import annotations

from hypothesis import strategies as st


@st.composite
def mutated(draw, seeds: list[bytes], max_random: int = 4096):
    if not seeds or draw(st.integers(0, 3)) == 0:
        return draw(st.binary(max_size=max_random))
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(0, 8))):
        if not data:
            break
        kind = draw(st.integers(0, 5))
        pos = draw(st.integers(0, len(data) - 1))
        if kind <= 2:                                   # overwrite one byte
            data[pos] = draw(st.integers(0, 255))
        elif kind == 3:                                 # a size-like field: 0, 0xff.., or random
            v = draw(st.sampled_from([b"\x00" * 4, b"\xff" * 4, b"\x7f\xff\xff\xff", b"\x00\x00\x00\x80"]))
            data[pos:pos + 4] = v
        elif kind == 4:                                 # flip one bit
            data[pos] ^= 1 << draw(st.integers(0, 7))
        else:                                           # insert a short run
            data[pos:pos] = draw(st.binary(min_size=1, max_size=16))
    if data and draw(st.integers(0, 4)) == 0:           # truncate
        data = data[:draw(st.integers(0, len(data) - 1))]
    return bytes(data)

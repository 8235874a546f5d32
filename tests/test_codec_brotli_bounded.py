"""general.brotli_decompress decodes into a buffer of at most cap + 1 bytes
(the bomb case with memory figures is in tests/test_hardening_bombs.py)."""
from __future__ import annotations

import os

import pytest

from dbxray.compress.registry import parse_codec
from dbxray.parsers.codecs import general
from dbxray.parsers.codecs.general import DecodeError

SIZES = [0, 1, 1000, 65535, 65536, 65537, 300_000]


def _data(n: int) -> bytes:
    return (os.urandom(n // 3) + b"dbxray brotli " * (n // 14 + 1))[:n]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("hint", ["none", "exact", "low", "high"])
def test_round_trip(n, hint):
    data = _data(n)
    blob = general.brotli_compress(data, level=4)
    h = {"none": None, "exact": n, "low": n // 4, "high": n + 5000}[hint]
    assert general.brotli_decompress(blob, max_output=n + 5000, size_hint=h) == data


@pytest.mark.parametrize("n", [1, 1000, 65536, 300_000])
def test_exactly_at_the_cap_and_one_over(n):
    data = _data(n)
    blob = general.brotli_compress(data, level=4)
    assert general.brotli_decompress(blob, max_output=n) == data
    assert general.brotli_decompress(blob, max_output=n, size_hint=n) == data
    for hint in (None, n - 1):
        with pytest.raises(DecodeError, match="cap"):
            general.brotli_decompress(blob, max_output=n - 1, size_hint=hint)


def test_hint_over_the_cap_is_refused_before_decoding():
    blob = general.brotli_compress(b"x" * 100, level=1)
    with pytest.raises(DecodeError, match="cap"):
        general.brotli_decompress(blob, max_output=50, size_hint=100)


@pytest.mark.parametrize("cut", [1, 5, 20])
def test_truncated_and_corrupt_streams(cut):
    blob = general.brotli_compress(_data(200_000), level=5)
    with pytest.raises(DecodeError):
        general.brotli_decompress(blob[:-cut])
    with pytest.raises(DecodeError):
        general.brotli_decompress(b"\xff" * cut + b"not brotli")


def test_registry_passes_the_size():
    c = parse_codec("brotli:3")
    data = _data(100_000)
    assert c.decompress(c.compress(data), len(data), max_output=len(data)) == data
    with pytest.raises(DecodeError):
        c.decompress(c.compress(data), len(data), max_output=len(data) - 1)

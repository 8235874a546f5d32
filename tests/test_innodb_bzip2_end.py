"""A bzip2 page's exact payload length from its tail (pagecomp.bzip2_stream_end): the scan
decodes a bzip2 page only as far as its headers and still reports the exact payload
length a full decode finds, on every bzip2 page of the fixtures, on streams whose end
has zero bytes (which the zero fill alone would cut off), and refuses what it cannot
know (several blocks, damage) so that the full decode decides."""
from __future__ import annotations

import bz2
import random

import pytest

from dbxray.parsers.innodb.pagecomp import (bzip2_stream_end, decode_fcrc32_page, decode_payload,
                                             parse_fcrc32_comp_header, zero_trimmed_length)


def _full_end(data: bytes) -> int:
    d = bz2.BZ2Decompressor()
    d.decompress(data)
    assert d.eof
    return len(data) - len(d.unused_data)


def test_every_bzip2_page_of_the_fixture(fixtures_root, monkeypatch):
    """Exact on every page, and without a full decode (which would cost the scan what it saves)."""
    from dbxray.parsers.innodb import pagecomp
    data = (fixtures_root / "innodb" / "16k" / "fx" / "t_pc_bzip2.ibd").read_bytes()
    ps, pages = 16384, []
    for i in range(len(data) // ps):
        raw = data[i * ps:(i + 1) * ps]
        if int.from_bytes(raw[24:26], "big") & 0x8000:
            pages.append(raw)
    assert len(pages) >= 10
    full = [decode_fcrc32_page(raw, ps, "bzip2") for raw in pages]

    def no_full_decode(*a, **k):
        raise AssertionError("a bzip2 page was decoded whole")
    monkeypatch.setattr(pagecomp, "_stream_bzip2", no_full_decode)
    for raw, whole in zip(pages, full):
        h = parse_fcrc32_comp_header(raw, 0, ps, "bzip2")
        body = raw[h.header_len:h.stored_bytes]           # the stream, the zero fill, the checksum
        assert bzip2_stream_end(body) == _full_end(body[:-4]) == whole.payload_len
        head = decode_fcrc32_page(raw, ps, "bzip2", prefix=128)
        assert head.payload_len == whole.payload_len and head.page == whole.page[:128]


def _stream_ending_in_zeros(rng: random.Random, zeros: int) -> bytes:
    """A one-block stream of a page-like input whose last ``zeros`` bytes are 0."""
    for _ in range(200_000):
        page = bytes(rng.getrandbits(8) if rng.random() < 0.3 else 65 for _ in range(2000))
        s = bz2.compress(page, 1)
        if s.endswith(b"\0" * zeros):
            return s
    pytest.skip(f"no stream ending in {zeros} zero bytes found")


@pytest.mark.parametrize("zeros", [1, 2])
def test_streams_ending_in_zero_bytes(zeros):
    s = _stream_ending_in_zeros(random.Random(zeros), zeros)
    padded = s + bytes(300) + b"\1\2\3\4"          # the engine's zero fill, then the page checksum
    assert zero_trimmed_length(padded) < len(s)       # what the zero fill alone gives
    assert bzip2_stream_end(padded) == len(s) == _full_end(padded[:-4])
    out, used = decode_payload("bzip2", padded, 2000, None, prefix=128)
    assert used == len(s) and len(out) == 128


def test_random_streams_and_what_it_refuses():
    rng = random.Random(5)
    for k in range(300):
        raw = bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 3000))) * rng.randint(1, 4)
        s = bz2.compress(raw, rng.randint(1, 9))
        assert bzip2_stream_end(s + bytes(rng.randint(0, 64)) + rng.randbytes(4)) == len(s)
    big = bz2.compress(random.Random(1).randbytes(250_000), 1)      # three 100k blocks
    assert bzip2_stream_end(big + bytes(4)) is None
    out, used = decode_payload("bzip2", big + bytes(16) + b"\1\2\3\4", 250_000, None, prefix=128)
    assert used == len(big)                        # the full decode decided
    s = bz2.compress(b"x" * 5000 + bytes(range(256)), 9)
    assert bzip2_stream_end(s[:-3] + b"\0\0\0" + bytes(8) + b"\1\2\3\4") is None   # the marker damaged: no guess
    assert bzip2_stream_end(b"BZh9" + bytes(40)) is None
    assert bzip2_stream_end(b"") is None

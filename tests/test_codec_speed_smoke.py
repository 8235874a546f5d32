"""compress.speed.measure: what it runs, not how fast (timings belong to
tests/benchmarks/bench_whatif.py).  Counting encoder/decoder calls checks that
the first pass keeps the blobs it decodes later, that the extra passes cover
the same units, and that the budget and the round count are respected."""
from __future__ import annotations

import os
import threading
import zlib

import pytest

from dbxray.compress.registry import parse_codec
from dbxray.compress.speed import Speed, measure

UNITS = [os.urandom(300) + bytes(700 + 37 * i) for i in range(24)]
TOTAL = sum(len(u) for u in UNITS)


class Counting:
    """zlib with every call counted, and every decode checked against what was encoded."""

    def __init__(self):
        self.lock = threading.Lock()
        self.enc = self.dec = 0
        self.made: dict[bytes, bytes] = {}

    def encode(self, p: bytes) -> bytes:
        blob = zlib.compress(p, 1)
        with self.lock:
            self.enc += 1
            self.made[blob] = p
        return blob

    def decode(self, blob: bytes, size: int) -> bytes:
        out = zlib.decompress(blob)
        assert len(out) == size and self.made[blob] == out
        with self.lock:
            self.dec += 1
        return out


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("rounds", [1, 3])
def test_every_unit_every_round(threads, rounds):
    k = Counting()
    s = measure(parse_codec("zlib:1"), UNITS, max_bytes=10 ** 9, max_seconds=60.0, threads=threads,
                encode=k.encode, decode=k.decode, rounds=rounds)
    assert isinstance(s, Speed)
    assert s.bytes_measured == TOTAL and s.threads == threads
    # with more than one thread the repeat passes run spread and on one thread (the faster counts)
    passes = (rounds, rounds) if threads == 1 else (2 * rounds - 1, 2 * rounds)
    assert s.rounds == passes
    assert k.enc == passes[0] * len(UNITS) and k.dec == passes[1] * len(UNITS)
    assert s.compress_mb_s > 0 and s.decompress_mb_s > 0 and s.parallelism > 0
    assert set(s.best_threads) <= {1, threads}


def test_max_bytes_and_piece():
    k = Counting()
    s = measure(parse_codec("zlib:1"), UNITS, max_bytes=3000, max_seconds=60.0, threads=1,
                encode=k.encode, decode=k.decode, rounds=2, piece=512)
    # units are cut to 512 bytes; whole units are taken until 3000 bytes are reached
    assert s.bytes_measured == 6 * 512
    assert k.enc == 12 and k.dec == 12


def test_zero_budget_is_one_unit_per_thread_and_one_pass():
    """The first compress pass stops after one unit per thread; one decompress pass of those."""
    k = Counting()
    s = measure(parse_codec("zlib:1"), UNITS, max_bytes=10 ** 9, max_seconds=0.0, threads=2,
                encode=k.encode, decode=k.decode, rounds=5)
    assert s.rounds == (1, 1)
    assert k.enc == 2 and k.dec == 2
    assert s.bytes_measured == len(UNITS[0]) + len(UNITS[1])


def test_nothing_to_measure():
    s = measure(parse_codec("zstd:1"), [], threads=2)
    assert (s.compress_mb_s, s.decompress_mb_s, s.bytes_measured) == (0.0, 0.0, 0)


@pytest.mark.parametrize("name", ["zstd:1", "zstd:3", "lz4", "zlib:6", "snappy", "brotli:1", "bzip2:1", "lzma:0"])
def test_registry_codecs_round_trip_through_measure(name):
    """Each codec's own encode/decode pair runs in the thread pool (a decode error would raise)."""
    s = measure(parse_codec(name), UNITS, max_bytes=10 ** 9, max_seconds=60.0, threads=2, rounds=2)
    assert s.bytes_measured == TOTAL and s.rounds == (3, 4)


def test_codec_passes_first_bytes_then_sizes():
    """Without ``encode``: the first pass builds the blobs (Codec.compress), the later passes only
    count (Codec.compressed_size), every pass decodes what the first one built."""
    from dbxray.compress.registry import Codec
    calls = {"compress": 0, "size": 0, "decompress": 0}
    lock = threading.Lock()

    class CountingCodec(Codec):
        def compress(self, data):
            with lock:
                calls["compress"] += 1
            return super().compress(data)

        def compressed_size(self, data):
            with lock:
                calls["size"] += 1
            return super().compressed_size(data)

        def decompress(self, blob, size, max_output=1 << 30):
            with lock:
                calls["decompress"] += 1
            out = super().decompress(blob, size, max_output)
            assert len(out) == size
            return out

    s = measure(CountingCodec("lz4"), UNITS, max_bytes=10 ** 9, max_seconds=60.0, threads=2, rounds=4)
    assert s.rounds == (7, 8)          # 3 + 3 repeat compress passes (2 threads, 1 thread), 4 + 4 decompress
    assert calls == {"compress": len(UNITS), "size": 6 * len(UNITS), "decompress": 8 * len(UNITS)}

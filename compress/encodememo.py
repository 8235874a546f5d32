"""Encoded ClickHouse blocks remembered while one column is advised (compress/typeadvice.py).

The advisor projects the same sampled blocks with many chains, and the chains share
their first codecs (``T64, LZ4`` / ``T64, ZSTD(1)`` / ``T64, ZSTD(3)``), a type's
current chain comes back in the codec search, a level search asks again for levels
the grid tried: each codec's output on an input already encoded the same way is
taken from a memo (``parsers/codecs/ch_encode.encode_chain``'s ``memo``: keyed by the
input's digest and the codec, so every projection is the bytes it was).

:func:`remembering` opens a memo (advise_column holds one for its column), and
:func:`encoded_size` is ``len(encode_chain(...))`` through it: the stored bytes of a
block less its 16-byte checksum.  A memo keeps at most :data:`BUDGET` bytes of
outputs; past that it starts again empty (with every value read, a column's blocks).
"""
from __future__ import annotations

import threading
from contextlib import contextmanager

from dbxray.parsers.codecs import ch_encode

#: bytes of codec outputs one memo keeps at most
BUDGET = 192 << 20


class Memo(dict):
    """Codec outputs by ch_encode's key, their bytes counted; emptied when over BUDGET."""

    def __init__(self, budget: int = BUDGET):
        super().__init__()
        self.budget = budget
        self.held = 0
        self.hits = 0

    def get(self, key, default=None):
        got = super().get(key, default)
        if got is not default:
            self.hits += 1
        return got

    def __setitem__(self, key, value: bytes) -> None:
        if self.held + len(value) > self.budget:
            self.clear()
            self.held = 0
        super().__setitem__(key, value)
        self.held += len(value)


#: the memo open in each thread (the window advises in a worker thread)
_local = threading.local()


@contextmanager
def remembering(budget: int = BUDGET):
    """A memo for the encodes this thread makes inside (nested: the outer one is kept)."""
    outer = getattr(_local, "memo", None)
    if outer is not None:
        yield outer
        return
    _local.memo = Memo(budget)
    try:
        yield _local.memo
    finally:
        _local.memo = None


def encoded_size(raw: bytes, chain: str, type_size: int | None = None, value_type: str | None = None) -> int:
    """Bytes of ``raw`` encoded with ``chain`` (9-byte header + payload, no checksum), through
    this thread's open memo if any."""
    return len(ch_encode.encode_chain(raw, chain, type_size=type_size, value_type=value_type,
                                      memo=getattr(_local, "memo", None)))

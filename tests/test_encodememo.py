"""compress/encodememo.py: the type advisor's encodes remembered within a column give the
bytes encoding anew gives, and are taken from the memo when a chain shares its first codecs."""
from __future__ import annotations

import numpy as np
import pytest

from dbxray.compress import encodememo
from dbxray.parsers.codecs import ch_encode

CHAINS = ["LZ4", "ZSTD(1)", "ZSTD(3)", "T64, LZ4", "T64, ZSTD(1)", "Delta, T64, LZ4", "Delta, ZSTD(1)",
          "DoubleDelta, LZ4", "GCD, T64, ZSTD(1)", "Delta, GCD, ZSTD(1)", "LZ4HC(9)"]


def _blocks() -> list[bytes]:
    rng = np.random.default_rng(7)
    a = np.cumsum(rng.integers(0, 50, 20000)).astype("<u4").tobytes()
    b = (rng.integers(0, 1000, 20000) * 6).astype("<u4").tobytes()
    return [a, b, a[:4000]]


def test_memo_gives_the_bytes_encoding_anew_gives():
    memo = encodememo.Memo()
    for raw in _blocks():
        for chain in CHAINS + CHAINS:       # each twice: the second time from the memo
            want = ch_encode.encode_chain(raw, chain, type_size=4, value_type="UInt32")
            got = ch_encode.encode_chain(raw, chain, type_size=4, value_type="UInt32", memo=memo)
            assert got == want, chain
    assert memo.hits > 0


def test_shared_first_codecs_are_encoded_once():
    memo = encodememo.Memo()
    raw = _blocks()[0]
    ch_encode.encode_chain(raw, "T64, LZ4", type_size=4, value_type="UInt32", memo=memo)
    assert memo.hits == 0 and len(memo) == 2
    ch_encode.encode_chain(raw, "T64, ZSTD(1)", type_size=4, value_type="UInt32", memo=memo)
    assert memo.hits == 1 and len(memo) == 3        # T64's output taken, ZSTD(1) encoded
    # another value type or width is another key (T64 writes the type, Delta the width)
    ch_encode.encode_chain(raw, "T64, ZSTD(1)", type_size=4, value_type="Int32", memo=memo)
    assert memo.hits == 1 and len(memo) == 5
    ch_encode.encode_chain(raw, "Delta, LZ4", type_size=2, memo=memo)
    ch_encode.encode_chain(raw, "Delta, LZ4", type_size=4, memo=memo)
    assert memo.hits == 1 and len(memo) == 9


def test_the_same_length_other_bytes_are_not_taken():
    memo = encodememo.Memo()
    a = bytes(range(256)) * 64
    b = bytes(reversed(range(256))) * 64
    assert len(a) == len(b)
    ea = ch_encode.encode_chain(a, "ZSTD(3)", memo=memo)
    eb = ch_encode.encode_chain(b, "ZSTD(3)", memo=memo)
    assert memo.hits == 0
    assert eb == ch_encode.encode_chain(b, "ZSTD(3)") and ea != eb


def test_budget_empties_the_memo_and_sizes_stay_right():
    memo = encodememo.Memo(budget=64 << 10)
    for raw in _blocks():
        for chain in CHAINS:
            assert len(ch_encode.encode_chain(raw, chain, type_size=4, value_type="UInt32", memo=memo)) == \
                len(ch_encode.encode_chain(raw, chain, type_size=4, value_type="UInt32"))
            assert memo.held <= memo.budget + (1 << 20)
    assert memo.held <= 64 << 10 or len(memo) == 1


def test_encoded_size_uses_the_open_memo_only_inside():
    raw = _blocks()[1]
    want = len(ch_encode.encode_chain(raw, "GCD, T64, ZSTD(1)", type_size=4, value_type="UInt32"))
    assert encodememo.encoded_size(raw, "GCD, T64, ZSTD(1)", 4, "UInt32") == want
    with encodememo.remembering() as memo:
        with encodememo.remembering() as inner:
            assert inner is memo        # nested: the outer one is kept
        assert encodememo.encoded_size(raw, "GCD, T64, ZSTD(1)", 4, "UInt32") == want
        assert encodememo.encoded_size(raw, "GCD, T64, LZ4", 4, "UInt32") == \
            len(ch_encode.encode_chain(raw, "GCD, T64, LZ4", type_size=4, value_type="UInt32"))
        assert memo.hits == 2 and len(memo) == 4
    hits = memo.hits
    encodememo.encoded_size(raw, "GCD, T64, ZSTD(1)", 4, "UInt32")
    assert memo.hits == hits        # closed: not used any more


def _projections(result: dict) -> list:
    """Every figure of an advice but the measured speeds (compress_mb_s, and the MB/s its
    reasons quote): the projections, intervals, types, chains and DDL."""
    import re

    def strip(o):
        if isinstance(o, dict):
            return {k: strip(v) for k, v in o.items() if k not in ("compress_mb_s", "seconds")}
        if isinstance(o, list):
            return [strip(v) for v in o]
        if isinstance(o, str):
            return re.sub(r"[0-9][0-9,.]* MB/s", "? MB/s", o)
        return o
    return strip(result["columns"])


@pytest.fixture(scope="module")
def fixture_ds(fixtures_root):
    from dbxray.parsers.scan import scan
    return scan(str(fixtures_root / "clickhouse" / "datadir"))


def test_advice_with_the_memo_is_the_advice_without(fixture_ds, monkeypatch):
    """The codec zoo's and a seed table's columns, sampled, with every chain: the same
    projections whether the memo is open or not, and the memo was used."""
    from contextlib import contextmanager

    from dbxray.compress import typeadvice
    tables = [t for t in fixture_ds.sections["clickhouse"]["tables"] if t["table"] in ("codecs", "seed_nq_u1000")]
    assert len(tables) == 2
    cols = [(t, c) for t in tables for c in t["columns"]]
    used = []
    real = typeadvice.remembering

    @contextmanager
    def spy():
        with real() as memo:
            yield memo
        used.append(memo.hits)
    monkeypatch.setattr(typeadvice, "remembering", spy)
    with_memo = [typeadvice.advise_column(fixture_ds, t, c, 0.05, 0, True).to_json() for t, c in cols]
    assert sum(used) > 100

    @contextmanager
    def none():
        yield None
    monkeypatch.setattr(typeadvice, "remembering", none)
    without = [typeadvice.advise_column(fixture_ds, t, c, 0.05, 0, True).to_json() for t, c in cols]
    assert _projections({"columns": with_memo}) == _projections({"columns": without})
    assert sum(len(a["codec_candidates"]) for a in without) > 20


def test_columns_advised_on_two_cores_as_on_one(fixture_ds):
    """advise(workers=2) forks (this test process runs no Qt application) and gives the one
    process's advice, column for column in the same order."""
    from dbxray.compress.typeadvice import advise
    from dbxray.parsers import parallel
    if not parallel.fork_safe():
        pytest.skip("this process may not fork (threads or a Qt application)")
    one = advise(fixture_ds, 0.05, 3)
    two = advise(fixture_ds, 0.05, 3, workers=2)
    assert len(one["columns"]) > 100
    assert _projections(two) == _projections(one)


def test_cancel_stops_the_workers(fixture_ds):
    from dbxray.compress.typeadvice import advise
    from dbxray.parsers import parallel
    if not parallel.fork_safe():
        pytest.skip("this process may not fork (threads or a Qt application)")
    done = []
    res = advise(fixture_ds, 0.05, 0, progress=lambda k, n, m: done.append(k),
                 is_cancelled=lambda: len(done) >= 5, workers=2)
    assert res["cancelled"] and len(res["columns"]) == 5
    import multiprocessing
    assert not multiprocessing.active_children()


def test_specs_that_write_the_same_bytes_share_an_entry():
    """LZ4HC(0) and LZ4HC are LZ4HC(9), ZSTD is ZSTD(1): one entry each; other levels are not."""
    memo = encodememo.Memo()
    raw = _blocks()[0]
    a = ch_encode.encode_chain(raw, "LZ4HC(9)", memo=memo)
    assert ch_encode.encode_chain(raw, "LZ4HC(0)", memo=memo) == a == ch_encode.encode_chain(raw, "LZ4HC(0)")
    assert ch_encode.encode_chain(raw, "LZ4HC", memo=memo) == a
    assert memo.hits == 2 and len(memo) == 1
    z = ch_encode.encode_chain(raw, "ZSTD", memo=memo)
    assert ch_encode.encode_chain(raw, "ZSTD(1)", memo=memo) == z == ch_encode.encode_chain(raw, "ZSTD(1)")
    assert memo.hits == 3 and len(memo) == 2
    ch_encode.encode_chain(raw, "LZ4HC(10)", memo=memo)
    ch_encode.encode_chain(raw, "ZSTD(2)", memo=memo)
    assert memo.hits == 3 and len(memo) == 4

"""LZO pages through liblzo2 (parsers/innodb/lzo.py ``library_decoder``) give what the Python
decoder gives: the same bytes for every page of the fixture's LZO tablespace, whole and as
header prefixes, and for damaged streams the same bytes or the same error (what the library
does not decode whole to the page size goes to the Python decoder)."""
from __future__ import annotations

import random

import pytest

from dbxray.parsers.innodb import lzo
from dbxray.parsers.innodb.pagecomp import parse_fcrc32_comp_header

PAGE = 16384


def _payloads(fixtures_root) -> list[bytes]:
    data = (fixtures_root / "innodb" / "16k" / "fx" / "t_pc_lzo.ibd").read_bytes()
    out = []
    for i in range(len(data) // PAGE):
        raw = data[i * PAGE:(i + 1) * PAGE]
        if int.from_bytes(raw[24:26], "big") & 0x8000:
            h = parse_fcrc32_comp_header(raw, 0, PAGE, "lzo")
            out.append(raw[h.header_len:h.header_len + h.payload_len])
    return out


def _result(fn, *a):
    try:
        return fn(*a)
    except ValueError as e:
        return ("ValueError", str(e))


@pytest.fixture(scope="module")
def payloads(fixtures_root):
    if lzo.library_decoder() is None:
        pytest.skip("no liblzo2 here: the Python decoder is the only one (tests/test_innodb_badinput.py)")
    got = _payloads(fixtures_root)
    assert len(got) >= 3
    return got


def test_library_and_python_decode_every_fixture_page_alike(payloads, monkeypatch):
    calls = []
    real = lzo._decode
    monkeypatch.setattr(lzo, "_decode", lambda *a: calls.append(1) or real(*a))
    for p in payloads:
        whole = lzo.lzo1x_decompress_safe(p, PAGE)
        assert len(whole) == PAGE and whole == real(p, PAGE)
        assert lzo.lzo1x_decompress_safe(p, PAGE, 120) == real(p, PAGE, 120) == whole[:120]
        assert lzo.lzo1x_decompress_safe(p + b"\0" * 7, PAGE) == whole      # bytes after the end marker
    assert not calls            # the library decoded every one of them


def test_damaged_streams_give_the_python_decoders_bytes_or_error(payloads):
    rng = random.Random(7)
    n_err = 0
    for p in payloads:
        for _ in range(12):
            b = bytearray(p)
            how = rng.randrange(4)
            if how == 0:
                b = b[:rng.randrange(1, len(b))]                   # cut
            elif how == 1:
                for _k in range(rng.randint(1, 4)):                # bytes flipped
                    b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
            elif how == 2:
                b = b[:rng.randrange(len(b))] + bytes(rng.randrange(256) for _ in range(8))
            for out_size, stop in ((PAGE, None), (PAGE, 120), (PAGE // 2, None), (PAGE + 100, None)):
                if how == 3 and stop is not None:
                    continue
                want = _result(lzo._decode, bytes(b), out_size, stop)
                got = _result(lzo.lzo1x_decompress_safe, bytes(b), out_size, stop)
                assert got == want
                n_err += isinstance(want, tuple)
    assert n_err > 50             # the damage was seen, and named alike


def test_output_is_bounded(payloads):
    """A stream that decodes to more than asked for is an error, never a longer output."""
    p = payloads[-1]
    with pytest.raises(ValueError):
        lzo.lzo1x_decompress_safe(p, 1000)
    with pytest.raises(ValueError):
        lzo.lzo1x_decompress_safe(b"", PAGE)

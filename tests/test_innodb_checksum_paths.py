"""The two CRC-32C paths of parsers/innodb/checksum.py (the google_crc32c C
extension, one call per page, and the numpy lanes) give the same values, on
random rows of every length class and on real pages whose stored checksums
they must reproduce."""
from __future__ import annotations

import numpy as np
import pytest

from dbxray.parsers.innodb import checksum as ck

def _reference(data: bytes) -> int:
    """Bitwise CRC-32C (Castagnoli, reflected), independent of both paths."""
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF

def test_the_c_extension_is_used_when_installed():
    import importlib.util
    if importlib.util.find_spec("google_crc32c") is None:
        pytest.fail("google-crc32c is a dependency (pyproject.toml) and must be installed")
    assert ck._crc_one is not None

@pytest.mark.parametrize("length", [1, 3, 22, 63, 64, 65, 1000, 16376])
def test_both_paths_agree_with_a_bitwise_reference(length):
    rng = np.random.default_rng(length)
    rows = rng.integers(0, 256, (5, length), dtype=np.uint8)
    ref = [_reference(bytes(r)) for r in rows[:2]]        # the bitwise loop is slow: two rows
    c = ck.crc32c_rows_c(rows)
    n = ck.crc32c_rows_numpy(rows)
    assert c.tolist() == n.tolist()
    assert c[:2].tolist() == ref

def test_non_contiguous_and_writable_rows():
    rng = np.random.default_rng(3)
    pages = rng.integers(0, 256, (7, 4096), dtype=np.uint8)
    sub = pages[:, 38:4088]                 # row-contiguous slices, as the page checksums take
    assert ck.crc32c_rows(sub).tolist() == ck.crc32c_rows_numpy(np.ascontiguousarray(sub)).tolist()
    assert pages.flags.writeable            # the caller's array is left as it was
    assert ck.crc32c_rows(pages[::2]).tolist() == ck.crc32c_rows_numpy(np.ascontiguousarray(pages[::2])).tolist()

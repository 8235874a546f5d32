"""Page checksums: crc32c (MySQL 5.7+/8 and MariaDB "crc32"), MariaDB
full_crc32, legacy "innodb" (ut_fold_binary), "none" (BUF_NO_CHECKSUM_MAGIC),
and the ROW_FORMAT=COMPRESSED page checksums.

Sources: MySQL ``storage/innobase/buf/checksum.cc`` (buf_calc_page_crc32,
buf_calc_page_new_checksum, buf_calc_page_old_checksum),
``page/zipdecompress.cc`` (page_zip_calc_checksum), ``ut/crc32.cc``
(legacy big-endian variant); MariaDB ``buf/buf0buf.cc``
(buf_page_is_corrupted, full_crc32 branch).

CRC-32C runs in the ``google_crc32c`` C extension when it is installed (the
CPU's CRC32 instruction: ~5 GB/s, one call per page); otherwise vectorised
over many pages at once in numpy: the CRC of each page is computed as
independent 64-byte lanes (slicing-by-4 tables) which are then combined
with the CRC shift operator (~100 MB/s, no Python loop per page or byte).
Both give the same values (tests/test_innodb_checksum_paths.py).
"""
from __future__ import annotations

import numpy as np

from ..arrays import distinct

try:        # a C extension with hardware CRC-32C; the numpy path below is the fallback
    import google_crc32c as _gcrc
    _crc_one = _gcrc.value if getattr(_gcrc, "implementation", "") == "c" else None
except ImportError:         # pragma: no cover - depends on the environment
    _crc_one = None

CRC32C_POLY_REFLECTED = 0x82F63B78
UT_HASH_RANDOM_MASK = 1463735687
UT_HASH_RANDOM_MASK2 = 1653893711

_LANE = 64   # bytes per independent CRC lane


def _make_tables() -> np.ndarray:
    t = np.zeros((4, 256), dtype=np.uint32)
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (CRC32C_POLY_REFLECTED if c & 1 else 0)
        t[0, i] = c
    for k in range(1, 4):
        prev = t[k - 1]
        t[k] = (prev >> 8) ^ t[0][prev & 0xFF]
    return t


_T = _make_tables()
_T0, _T1, _T2, _T3 = (_T[i] for i in range(4))


def _raw_update_bytes(crc: int, data: bytes) -> int:
    """Reference byte-at-a-time CRC register update (no pre/post inversion)."""
    for b in data:
        crc = (crc >> 8) ^ int(_T0[(crc ^ b) & 0xFF])
    return crc


def crc32c(data: bytes, crc: int = 0) -> int:
    """CRC-32C of ``data`` (standard init/final inversion); small inputs only."""
    return _raw_update_bytes(crc ^ 0xFFFFFFFF, data) ^ 0xFFFFFFFF


# -- shift operator: advance a CRC register over n zero bytes -----------------
def _mat_apply(mat: list[int], v: int) -> int:
    r = 0
    i = 0
    while v:
        if v & 1:
            r ^= mat[i]
        v >>= 1
        i += 1
    return r


def _mat_square(mat: list[int]) -> list[int]:
    return [_mat_apply(mat, mat[i]) for i in range(32)]


_ONE_BYTE = [_raw_update_bytes(1 << i, b"\0") for i in range(32)]
_POW_CACHE: dict[int, list[int]] = {}


def _shift_matrix(nbytes: int) -> list[int]:
    if nbytes in _POW_CACHE:
        return _POW_CACHE[nbytes]
    result = [1 << i for i in range(32)]
    base = _ONE_BYTE
    n = nbytes
    while n:
        if n & 1:
            result = [_mat_apply(base, result[i]) for i in range(32)]
        n >>= 1
        if n:
            base = _mat_square(base)
    _POW_CACHE[nbytes] = result
    return result


def shift_zero_bytes(crc: int, nbytes: int) -> int:
    """The CRC register after feeding ``nbytes`` zero bytes (raw, no inversion)."""
    return _mat_apply(_shift_matrix(nbytes), crc)


_SHIFT_TABLES: dict[int, np.ndarray] = {}


def _shift_tables(nbytes: int) -> np.ndarray:
    """4x256 tables applying the n-zero-byte shift to each byte of a register."""
    t = _SHIFT_TABLES.get(nbytes)
    if t is None:
        mat = _shift_matrix(nbytes)
        t = np.zeros((4, 256), dtype=np.uint32)
        for k in range(4):
            for b in range(256):
                t[k, b] = _mat_apply(mat, b << (8 * k))
        _SHIFT_TABLES[nbytes] = t
    return t


def _apply_shift(reg: np.ndarray, nbytes: int) -> np.ndarray:
    t = _shift_tables(nbytes)
    return (t[0][reg & 0xFF] ^ t[1][(reg >> 8) & 0xFF] ^ t[2][(reg >> 16) & 0xFF] ^ t[3][reg >> 24])


def crc32c_rows(rows: np.ndarray) -> np.ndarray:
    """Standard CRC-32C of every row of a 2-D uint8 array (one value per row)."""
    rows = np.ascontiguousarray(rows, dtype=np.uint8) if rows.dtype != np.uint8 else rows
    if _crc_one is not None and rows.ndim == 2 and rows.shape[1] > 0 and rows.strides[1] == 1:
        return crc32c_rows_c(rows)
    return crc32c_rows_numpy(rows)


def crc32c_rows_c(rows: np.ndarray) -> np.ndarray:
    """CRC-32C of every row through the C extension (one call per row)."""
    ro = rows.view()
    ro.flags.writeable = False          # the extension takes read-only buffers
    one = _crc_one
    return np.fromiter((one(r) for r in ro), dtype=np.uint32, count=len(ro))


def crc32c_rows_numpy(rows: np.ndarray) -> np.ndarray:
    """CRC-32C of every row in numpy (64-byte lanes combined by the shift operator)."""
    n, length = rows.shape
    if n == 0:
        return np.zeros(0, dtype=np.uint32)
    pad = (-length) % _LANE
    if pad:
        # leading zeros do not change a raw CRC that starts from 0
        rows = np.concatenate([np.zeros((n, pad), dtype=np.uint8), rows], axis=1)
    total = rows.shape[1]
    k = total // _LANE
    words = np.ascontiguousarray(rows).view("<u4").reshape(n, k, _LANE // 4)
    reg = np.zeros((n, k), dtype=np.uint32)
    for w in range(_LANE // 4):
        v = reg ^ words[:, :, w]
        reg = _T3[v & 0xFF] ^ _T2[(v >> 8) & 0xFF] ^ _T1[(v >> 16) & 0xFF] ^ _T0[v >> 24]
    # combine lanes: lane j is followed by (k-1-j)*_LANE bytes
    acc = reg[:, 0].copy()
    for j in range(1, k):
        acc = _apply_shift(acc, _LANE) ^ reg[:, j]
    init = shift_zero_bytes(0xFFFFFFFF, length)
    return acc ^ np.uint32(init) ^ np.uint32(0xFFFFFFFF)


def crc32c_rows_legacy_big_endian(rows: np.ndarray, start: int) -> np.ndarray:
    """MySQL's legacy big-endian crc32 (ut_crc32_legacy_big_endian): bytes up
    to the next 8-byte boundary of the page buffer are fed one by one, then
    each aligned 8-byte word is fed byte-swapped, then the tail.  ``start`` is
    the offset of the rows' first byte in the (aligned) page."""
    n, length = rows.shape
    head = min((-start) % 8, length)
    full = (length - head) - (length - head) % 8
    body = rows[:, head:head + full].reshape(n, full // 8, 8)[:, :, ::-1].reshape(n, full)
    return crc32c_rows(np.concatenate([rows[:, :head], body, rows[:, head + full:]], axis=1))


def _be32(rows: np.ndarray, off: int) -> np.ndarray:
    b = rows[:, off:off + 4].astype(np.uint32)
    return (b[:, 0] << 24) | (b[:, 1] << 16) | (b[:, 2] << 8) | b[:, 3]


def crc32_page_checksum(pages: np.ndarray) -> np.ndarray:
    """buf_calc_page_crc32: crc32c(bytes 4..26) ^ crc32c(bytes 38..size-8)."""
    size = pages.shape[1]
    return crc32c_rows(pages[:, 4:26]) ^ crc32c_rows(pages[:, 38:size - 8])


def crc32_page_checksum_legacy_big_endian(pages: np.ndarray) -> np.ndarray:
    size = pages.shape[1]
    return (crc32c_rows_legacy_big_endian(pages[:, 4:26], 4)
            ^ crc32c_rows_legacy_big_endian(pages[:, 38:size - 8], 38))


def full_crc32_ok(pages: np.ndarray, sizes: np.ndarray | None = None) -> np.ndarray:
    """MariaDB full_crc32: the last 4 bytes of the stored page are crc32c of
    everything before them.  ``sizes`` gives the stored length of each row
    (page_compressed pages are shorter than the page)."""
    n, size = pages.shape
    if sizes is None:
        return crc32c_rows(pages[:, :size - 4]) == _be32(pages, size - 4)
    ok = np.zeros(n, dtype=bool)
    for s in distinct(sizes):
        sel = np.nonzero(sizes == s)[0]
        s = int(s)
        if s < 8 or s > size:
            continue
        sub = pages[sel]
        ok[sel] = crc32c_rows(sub[:, :s - 4]) == _be32(sub, s - 4)
    return ok


def full_crc32_prefixes_ok(stored: list[bytes]) -> np.ndarray:
    """:func:`full_crc32_ok` of pages given as their stored bytes alone (page_compressed
    pages: the bytes before the punched tail, each its own length): the last 4 bytes of
    each are the crc32c of the ones before them.  One C call per page with the extension,
    else the numpy path per length; a buffer shorter than 8 bytes is not a valid page."""
    n = len(stored)
    if _crc_one is not None:
        one = _crc_one
        return np.fromiter((len(b) >= 8 and one(b[:-4]) == int.from_bytes(b[-4:], "big") for b in stored),
                           dtype=bool, count=n)
    ok = np.zeros(n, dtype=bool)
    lengths = np.fromiter((len(b) for b in stored), dtype=np.int64, count=n)
    for s in distinct(lengths):
        s = int(s)
        if s < 8:
            continue
        sel = np.nonzero(lengths == s)[0]
        rows = np.frombuffer(b"".join(stored[i] for i in sel.tolist()), dtype=np.uint8).reshape(len(sel), s)
        ok[sel] = full_crc32_ok(rows)
    return ok


def _fold_rows(rows: np.ndarray) -> np.ndarray:
    """ut_fold_binary over every row (ut0rnd.h): vectorised across rows,
    sequential over the bytes (the fold is a chain)."""
    n, length = rows.shape
    if n <= 8:      # a few pages: a plain loop per page beats thousands of tiny numpy steps
        out = np.zeros(n, dtype=np.uint64)
        mask = (1 << 64) - 1
        for r in range(n):
            fold = 0
            for b in rows[r].tobytes():
                fold = ((((fold ^ b ^ UT_HASH_RANDOM_MASK2) << 8) + fold) ^ UT_HASH_RANDOM_MASK) + b
                fold &= mask
            out[r] = fold
        return out
    fold = np.zeros(n, dtype=np.uint64)
    m1 = np.uint64(UT_HASH_RANDOM_MASK)
    m2 = np.uint64(UT_HASH_RANDOM_MASK2)
    eight = np.uint64(8)
    cols = rows.astype(np.uint64)
    with np.errstate(over="ignore"):
        for i in range(length):
            b = cols[:, i]
            fold = (((((fold ^ b ^ m2) << eight) + fold) ^ m1) + b)
    return fold


def innodb_new_checksum(pages: np.ndarray) -> np.ndarray:
    """buf_calc_page_new_checksum: fold(4..26) + fold(38..size-8), low 32 bits."""
    size = pages.shape[1]
    with np.errstate(over="ignore"):
        v = _fold_rows(pages[:, 4:26]) + _fold_rows(pages[:, 38:size - 8])
    return (v & np.uint64(0xFFFFFFFF)).astype(np.uint32)


def innodb_old_checksum(pages: np.ndarray) -> np.ndarray:
    """buf_calc_page_old_checksum: fold(0..26), low 32 bits."""
    return (_fold_rows(pages[:, 0:26]) & np.uint64(0xFFFFFFFF)).astype(np.uint32)


def zip_page_checksum_crc32(pages: np.ndarray) -> np.ndarray:
    """page_zip_calc_checksum (crc32): crc(FIL_PAGE_OFFSET..FIL_PAGE_LSN) ^
    crc(FIL_PAGE_TYPE, 2 bytes) ^ crc(FIL_PAGE_ARCH_LOG_NO_OR_SPACE_ID..zip_size)."""
    return crc32c_rows(pages[:, 4:16]) ^ crc32c_rows(pages[:, 24:26]) ^ crc32c_rows(pages[:, 34:])


def zip_page_checksum_adler(pages: np.ndarray) -> list[int]:
    """page_zip_calc_checksum (innodb): adler32 chained over the same ranges."""
    import zlib
    out = []
    for row in pages:
        b = row.tobytes()
        a = zlib.adler32(b[4:16], 1)
        a = zlib.adler32(b[24:26], a)
        a = zlib.adler32(b[34:], a)
        out.append(a & 0xFFFFFFFF)
    return out

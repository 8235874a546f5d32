"""CityHash v1.0.2 (CityHash128 / CityHash128WithSeed / CityHash64), as ClickHouse uses it.

ClickHouse checksums every compressed block with CityHash128 of the 9-byte
header plus payload, and hashes the files listed in a part's checksums.txt
with CityHash128WithSeed chained over 2048-byte pieces.  Both come from the
v1.0.2 sources that ClickHouse vendors (contrib/cityhash102/src/city.cc and
include/city.h); v1.1 gives different values, so a stock ``cityhash`` wheel
cannot be used.  The ``clickhouse-cityhash`` wheel's ``CityHash128WithSeed``
ignores its seed (fixtures/clickhouse/FORMAT_NOTES.md section 6); this module honours it.

The unseeded CityHash128 of the ``clickhouse-cityhash`` wheel is v1.0.2 and
runs in C (GB/s); every function here uses it where it is installed.  Its
seeded variant is not used: CityHash128 of a message of 16 bytes or more is
CityHash128WithSeed of the rest, seeded with (first 8 bytes ^ k3, next 8
bytes) (city.cc), so a seeded hash is the unseeded one of the message behind
a 16-byte prefix that encodes the seed.  Without the wheel, a pure Python
port on 64-bit integers runs (about 0.1-0.2 s per MiB; vectorised with numpy
across many messages).  The 16 stored bytes are the low then the high
64-bit half, each little-endian.
"""
from __future__ import annotations

import struct

try:        # C CityHash128 v1.0.2; returns (low64 << 64) | high64 as one int
    from clickhouse_cityhash.cityhash import CityHash128 as _C_CITY128
except ImportError:         # pragma: no cover - the pure port below runs
    _C_CITY128 = None


def c_available() -> bool:
    """Whether CityHash128 runs in C here (GB/s) rather than in the pure port (~20 MB/s)."""
    return _C_CITY128 is not None

M64 = 0xFFFFFFFFFFFFFFFF

# Some primes between 2^63 and 2^64 (city.cc).
k0 = 0xC3A5C85C97CB3127
k1 = 0xB492B66FBE98F273
k2 = 0x9AE16A3B2F90404F
k3 = 0xC949D7C7509E6557
# Hash128to64 multiplier (city.h).
kMul = 0x9DDFEA08EB382D69

_u64 = struct.Struct("<Q")
_u32 = struct.Struct("<I")


def _fetch64(s: bytes, i: int) -> int:
    return _u64.unpack_from(s, i)[0]


def _fetch32(s: bytes, i: int) -> int:
    return _u32.unpack_from(s, i)[0]


def _rot(v: int, shift: int) -> int:
    if shift == 0:
        return v
    return ((v >> shift) | (v << (64 - shift))) & M64


def _shift_mix(v: int) -> int:
    return v ^ (v >> 47)


def _hash128to64(lo: int, hi: int) -> int:
    a = ((lo ^ hi) * kMul) & M64
    a ^= a >> 47
    b = ((hi ^ a) * kMul) & M64
    b ^= b >> 47
    return (b * kMul) & M64


def _hash_len16(u: int, v: int) -> int:
    return _hash128to64(u, v)


def _hash_len0to16(s: bytes, off: int, n: int) -> int:
    if n > 8:
        a = _fetch64(s, off)
        b = _fetch64(s, off + n - 8)
        return _hash_len16(a, _rot((b + n) & M64, n)) ^ b
    if n >= 4:
        a = _fetch32(s, off)
        return _hash_len16((n + (a << 3)) & M64, _fetch32(s, off + n - 4))
    if n > 0:
        a = s[off]
        b = s[off + (n >> 1)]
        c = s[off + n - 1]
        y = (a + (b << 8)) & 0xFFFFFFFF
        z = (n + (c << 2)) & 0xFFFFFFFF
        return (_shift_mix(((y * k2) ^ (z * k3)) & M64) * k2) & M64
    return k2


def _weak_hash_len32_with_seeds(s: bytes, off: int, a: int, b: int) -> tuple[int, int]:
    w, x, y, z = struct.unpack_from("<4Q", s, off)
    a = (a + w) & M64
    b = _rot((b + a + z) & M64, 21)
    c = a
    a = (a + x + y) & M64
    b = (b + _rot(a, 44)) & M64
    return (a + z) & M64, (b + c) & M64


def _city_murmur(s: bytes, off: int, n: int, seed_lo: int, seed_hi: int) -> tuple[int, int]:
    a, b = seed_lo, seed_hi
    l = n - 16
    if l <= 0:
        a = (_shift_mix((a * k1) & M64) * k1) & M64
        c = (b * k1 + _hash_len0to16(s, off, n)) & M64
        d = _shift_mix((a + (_fetch64(s, off) if n >= 8 else c)) & M64)
    else:
        c = _hash_len16((_fetch64(s, off + n - 8) + k1) & M64, a)
        d = _hash_len16((b + n) & M64, (c + _fetch64(s, off + n - 16)) & M64)
        a = (a + d) & M64
        while True:
            a ^= (_shift_mix((_fetch64(s, off) * k1) & M64) * k1) & M64
            a = (a * k1) & M64
            b ^= a
            c ^= (_shift_mix((_fetch64(s, off + 8) * k1) & M64) * k1) & M64
            c = (c * k1) & M64
            d ^= c
            off += 16
            l -= 16
            if l <= 0:
                break
    a = _hash_len16(a, c)
    b = _hash_len16(d, b)
    return a ^ b, _hash_len16(b, a)


def _city128_with_seed(s: bytes, off: int, n: int, seed_lo: int, seed_hi: int) -> tuple[int, int]:
    """CityHash128WithSeed over s[off:off+n] (city.cc, v1.0.2)."""
    if n < 128:
        return _city_murmur(s, off, n, seed_lo, seed_hi)
    rot = _rot
    x = seed_lo
    y = seed_hi
    z = (n * k1) & M64
    v0 = (rot(y ^ k1, 49) * k1 + _fetch64(s, off)) & M64
    v1 = (rot(v0, 42) * k1 + _fetch64(s, off + 8)) & M64
    w0 = (rot((y + z) & M64, 35) * k1 + x) & M64
    w1 = (rot((x + _fetch64(s, off + 88)) & M64, 53) * k1) & M64
    unpack = struct.unpack_from
    # The inner loop of CityHash64, unrolled twice in the C++ (128 bytes a turn).
    while True:
        for _ in range(2):
            q = unpack("<8Q", s, off)
            x = (rot((x + y + v0 + q[2]) & M64, 37) * k1) & M64
            y = (rot((y + v1 + q[6]) & M64, 42) * k1) & M64
            x ^= w1
            y ^= v0
            z = rot(z ^ w0, 33)
            # WeakHashLen32WithSeeds(s, v1 * k1, x + w0)
            a = ((v1 * k1) & M64) + q[0] & M64
            b = rot((((x + w0) & M64) + a + q[3]) & M64, 21)
            c = a
            a = (a + q[1] + q[2]) & M64
            b = (b + rot(a, 44)) & M64
            v0, v1 = (a + q[3]) & M64, (b + c) & M64
            # WeakHashLen32WithSeeds(s + 32, z + w1, y)
            a = (z + w1 + q[4]) & M64
            b = rot((y + a + q[7]) & M64, 21)
            c = a
            a = (a + q[5] + q[6]) & M64
            b = (b + rot(a, 44)) & M64
            w0, w1 = (a + q[7]) & M64, (b + c) & M64
            z, x = x, z
            off += 64
        n -= 128
        if n < 128:
            break
    y = (y + rot(w0, 37) * k0 + z) & M64
    x = (x + rot((v0 + z) & M64, 49) * k0) & M64
    tail_done = 0
    while tail_done < n:
        tail_done += 32
        y = (rot((y - x) & M64, 42) * k0 + v1) & M64
        w0 = (w0 + _fetch64(s, off + n - tail_done + 16)) & M64
        x = (rot(x, 49) * k0 + w0) & M64
        w0 = (w0 + v0) & M64
        v0, v1 = _weak_hash_len32_with_seeds(s, off + n - tail_done, v0, v1)
    x = _hash_len16(x, v0)
    y = _hash_len16(y, w0)
    return ((_hash_len16((x + v1) & M64, w1) + y) & M64,
            _hash_len16((x + w1) & M64, (y + v1) & M64))


def _c_pair(s: bytes) -> tuple[int, int]:
    v = _C_CITY128(s)
    return v >> 64, v & M64


def _seed_prefix(seed_lo: int, seed_hi: int) -> bytes:
    """16 bytes that make CityHash128(prefix + m) = CityHash128WithSeed(m, seed)."""
    return _u64.pack((seed_lo ^ k3) & M64) + _u64.pack(seed_hi & M64)


def cityhash128_pair(data: bytes) -> tuple[int, int]:
    """CityHash128 (v1.0.2) of ``data`` as (low64, high64)."""
    s = bytes(data)
    if _C_CITY128 is not None:
        return _c_pair(s)
    n = len(s)
    if n >= 16:
        return _city128_with_seed(s, 16, n - 16, _fetch64(s, 0) ^ k3, _fetch64(s, 8))
    if n >= 8:
        return _city128_with_seed(b"", 0, 0, _fetch64(s, 0) ^ ((n * k0) & M64),
                                  _fetch64(s, n - 8) ^ k1)
    return _city128_with_seed(s, 0, n, k0, k1)


def cityhash128(data: bytes) -> bytes:
    """CityHash128 (v1.0.2) as the 16 bytes ClickHouse stores: low64 LE, high64 LE."""
    lo, hi = cityhash128_pair(data)
    return _u64.pack(lo) + _u64.pack(hi)


def cityhash128_with_seed(data: bytes, seed: tuple[int, int] | bytes = (0, 0)) -> bytes:
    """CityHash128WithSeed (v1.0.2); seed as (low64, high64) or its 16 stored bytes."""
    if isinstance(seed, (bytes, bytearray, memoryview)):
        seed_lo, seed_hi = struct.unpack("<2Q", bytes(seed))
    else:
        seed_lo, seed_hi = seed[0] & M64, seed[1] & M64
    s = bytes(data)
    if _C_CITY128 is not None:
        lo, hi = _c_pair(_seed_prefix(seed_lo, seed_hi) + s)
    else:
        lo, hi = _city128_with_seed(s, 0, len(s), seed_lo, seed_hi)
    return _u64.pack(lo) + _u64.pack(hi)


#: checksums.txt hashes files in pieces of this many bytes (ClickHouse
#: HashingWriteBuffer: DBMS_DEFAULT_HASHING_BLOCK_SIZE = 2048).
DBMS_DEFAULT_HASHING_BLOCK_SIZE = 2048


def chained_file_hash(data: bytes, block_size: int = DBMS_DEFAULT_HASHING_BLOCK_SIZE) -> bytes:
    """The hash checksums.txt records for a file: CityHash128WithSeed chained over pieces.

    The state starts at (0, 0); each piece is hashed with the previous state as
    seed (fixtures/clickhouse/FORMAT_NOTES.md section 6, verified there on every part).
    """
    state = (0, 0)
    s = bytes(data)
    if _C_CITY128 is not None:
        view = memoryview(s)
        for off in range(0, len(s), block_size):
            state = _c_pair(_seed_prefix(*state) + view[off:off + block_size])
        return _u64.pack(state[0]) + _u64.pack(state[1])
    for off in range(0, len(s), block_size):
        n = min(block_size, len(s) - off)
        state = _city128_with_seed(s, off, n, state[0], state[1])
    return _u64.pack(state[0]) + _u64.pack(state[1])


def cityhash64(data: bytes) -> int:
    """CityHash64 (v1.0.2), for completeness of the port (not used by block checksums)."""
    s = bytes(data)
    n = len(s)
    if n <= 16:
        return _hash_len0to16(s, 0, n)
    if n <= 32:
        a = (_fetch64(s, 0) * k1) & M64
        b = _fetch64(s, 8)
        c = (_fetch64(s, n - 8) * k2) & M64
        d = (_fetch64(s, n - 16) * k0) & M64
        return _hash_len16((_rot((a - b) & M64, 43) + _rot(c, 30) + d) & M64,
                           (a + _rot(b ^ k3, 20) - c + n) & M64)
    if n <= 64:
        z = _fetch64(s, 24)
        a = (_fetch64(s, 0) + (n + _fetch64(s, n - 16)) * k0) & M64
        b = _rot((a + z) & M64, 52)
        c = _rot(a, 37)
        a = (a + _fetch64(s, 8)) & M64
        c = (c + _rot(a, 7)) & M64
        a = (a + _fetch64(s, 16)) & M64
        vf = (a + z) & M64
        vs = (b + _rot(a, 31) + c) & M64
        a = (_fetch64(s, 16) + _fetch64(s, n - 32)) & M64
        z = _fetch64(s, n - 8)
        b = _rot((a + z) & M64, 52)
        c = _rot(a, 37)
        a = (a + _fetch64(s, n - 24)) & M64
        c = (c + _rot(a, 7)) & M64
        a = (a + _fetch64(s, n - 16)) & M64
        wf = (a + z) & M64
        ws = (b + _rot(a, 31) + c) & M64
        r = _shift_mix(((vf + ws) * k2 + (wf + vs) * k0) & M64)
        return (_shift_mix((r * k0 + vs) & M64) * k2) & M64
    x = _fetch64(s, 0)
    y = _fetch64(s, n - 16) ^ k1
    z = _fetch64(s, n - 56) ^ k0
    v = _weak_hash_len32_with_seeds(s, n - 64, n, y)
    w = _weak_hash_len32_with_seeds(s, n - 32, (n * k1) & M64, k0)
    z = (z + _shift_mix(v[1]) * k1) & M64
    x = (_rot((z + x) & M64, 39) * k1) & M64
    y = (_rot(y, 33) * k1) & M64
    length = (n - 1) & ~63
    off = 0
    while True:
        x = (_rot((x + y + v[0] + _fetch64(s, off + 16)) & M64, 37) * k1) & M64
        y = (_rot((y + v[1] + _fetch64(s, off + 48)) & M64, 42) * k1) & M64
        x ^= w[1]
        y ^= v[0]
        z = _rot(z ^ w[0], 33)
        v = _weak_hash_len32_with_seeds(s, off, (v[1] * k1) & M64, (x + w[0]) & M64)
        w = _weak_hash_len32_with_seeds(s, off + 32, (z + w[1]) & M64, y)
        z, x = x, z
        off += 64
        length -= 64
        if length == 0:
            break
    return _hash_len16((_hash_len16(v[0], w[0]) + _shift_mix(y) * k1 + z) & M64,
                       (_hash_len16(v[1], w[1]) + x) & M64)


# -- many messages at once ------------------------------------------------------
# The same CityHash128WithSeed, run on numpy uint64 lanes: one lane per message,
# so that verifying every block of a file (or hashing every file of a part) costs
# one pass of array operations per 128 bytes of the longest message instead of
# Python arithmetic per 128 bytes of every message.  Results equal the scalar code.
import numpy as np  # noqa: E402

_U = np.uint64
_K0, _K1, _K3, _KMUL = _U(k0), _U(k1), _U(k3), _U(kMul)
#: message bytes hashed per vectorised batch (bounds the aligned copies)
MANY_BATCH_BYTES = 64 << 20


def _vrot(v: np.ndarray, s: int) -> np.ndarray:
    return (v >> _U(s)) | (v << _U(64 - s))


def _vhash16(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    a = (u ^ v) * _KMUL
    a ^= a >> _U(47)
    b = (v ^ a) * _KMUL
    b ^= b >> _U(47)
    return b * _KMUL


def _vweak(w, x, y, z, a, b):
    a = a + w
    b = _vrot(b + a + z, 21)
    c = a
    a = a + x + y
    b = b + _vrot(a, 44)
    return a + z, b + c


def _aligned(messages: list[bytes], end_aligned: bool) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate with each start (or end) on an 8-byte boundary; word index of each start (end)."""
    offs = []
    cur = 8
    for m in messages:
        pad = (-(cur + len(m))) % 8 if end_aligned else (-cur) % 8
        cur += pad
        offs.append(cur)
        cur += len(m) + 8
    buf = np.zeros(cur + 16 - cur % 8, dtype=np.uint8)
    for o, m in zip(offs, messages):
        buf[o:o + len(m)] = np.frombuffer(m, dtype=np.uint8)
    words = buf.view("<u8")
    o = np.asarray(offs, dtype=np.int64)
    lens = np.asarray([len(m) for m in messages], dtype=np.int64)
    return words, ((o + lens) // 8 if end_aligned else o // 8)


#: below this many active lanes the 128-byte rounds run in plain Python
SCALAR_LANES = 16


def _scalar_rounds(s: bytes, off: int, rounds: int, st: list[int]) -> list[int]:
    """``rounds`` iterations of CityHash128WithSeed's 128-byte loop from ``off`` (state in, state out)."""
    x, y, z, v0, v1, w0, w1 = st
    rot = _rot
    unpack = struct.unpack_from
    for _ in range(2 * rounds):
        q = unpack("<8Q", s, off)
        x = (rot((x + y + v0 + q[2]) & M64, 37) * k1) & M64
        y = (rot((y + v1 + q[6]) & M64, 42) * k1) & M64
        x ^= w1
        y ^= v0
        z = rot(z ^ w0, 33)
        a = ((v1 * k1) + q[0]) & M64
        b = rot((((x + w0) & M64) + a + q[3]) & M64, 21)
        c = a
        a = (a + q[1] + q[2]) & M64
        b = (b + rot(a, 44)) & M64
        v0, v1 = (a + q[3]) & M64, (b + c) & M64
        a = (z + w1 + q[4]) & M64
        b = rot((y + a + q[7]) & M64, 21)
        c = a
        a = (a + q[5] + q[6]) & M64
        b = (b + rot(a, 44)) & M64
        w0, w1 = (a + q[7]) & M64, (b + c) & M64
        z, x = x, z
        off += 64
    return [x, y, z, v0, v1, w0, w1]


def _long_lanes(messages: list[bytes], seed_lo: np.ndarray, seed_hi: np.ndarray) -> np.ndarray:
    """CityHash128WithSeed of messages of >= 128 bytes; returns (n, 2) uint64 (low, high)."""
    n = len(messages)
    L = np.asarray([len(m) for m in messages], dtype=np.int64)
    k = L // 128
    order = np.argsort(-k, kind="stable")          # longest first: active lanes are a prefix
    msgs = [messages[i] for i in order]
    L, k = L[order], k[order]
    A, sa = _aligned(msgs, end_aligned=False)
    B, eb = _aligned(msgs, end_aligned=True)
    x = seed_lo[order].astype(np.uint64)
    y = seed_hi[order].astype(np.uint64)
    z = L.astype(np.uint64) * _K1
    v0 = _vrot(y ^ _K1, 49) * _K1 + A[sa]
    v1 = _vrot(v0, 42) * _K1 + A[sa + 1]
    w0 = _vrot(y + z, 35) * _K1 + x
    w1 = _vrot(x + A[sa + 11], 53) * _K1
    neg_k = -k                                   # ascending
    cols = np.arange(8, dtype=np.int64)
    for j in range(int(k.max())):
        m = int(np.searchsorted(neg_k, -j, side="left"))       # lanes with k > j (a prefix)
        if m <= SCALAR_LANES:
            # few long messages left: plain Python per lane is cheaper than numpy calls
            for i in range(m):
                st = _scalar_rounds(msgs[i], 128 * j, int(k[i]) - j,
                                    [int(a[i]) for a in (x, y, z, v0, v1, w0, w1)])
                x[i], y[i], z[i], v0[i], v1[i], w0[i], w1[i] = st
            break
        X, Y, Z = x[:m], y[:m], z[:m]
        V0, V1, W0, W1 = v0[:m], v1[:m], w0[:m], w1[:m]
        for h in (0, 1):
            q = A[(sa[:m] + 16 * j + 8 * h)[:, None] + cols]
            X = _vrot(X + Y + V0 + q[:, 2], 37) * _K1
            Y = _vrot(Y + V1 + q[:, 6], 42) * _K1
            X = X ^ W1
            Y = Y ^ V0
            Z = _vrot(Z ^ W0, 33)
            V0, V1 = _vweak(q[:, 0], q[:, 1], q[:, 2], q[:, 3], V1 * _K1, X + W0)
            W0, W1 = _vweak(q[:, 4], q[:, 5], q[:, 6], q[:, 7], Z + W1, Y)
            X, Z = Z, X
        x[:m], y[:m], z[:m] = X, Y, Z
        v0[:m], v1[:m], w0[:m], w1[:m] = V0, V1, W0, W1
    y = y + _vrot(w0, 37) * _K0 + z
    x = x + _vrot(v0 + z, 49) * _K0
    r = L - 128 * k
    for c in (1, 2, 3, 4):
        on = r > 32 * (c - 1)
        if not on.any():
            break
        base = np.where(on, eb - 4 * c, 0)
        ny = _vrot(y - x, 42) * _K0 + v1
        nw0 = w0 + B[base + 2]
        nx = _vrot(x, 49) * _K0 + nw0
        nw0 = nw0 + v0
        nv0, nv1 = _vweak(B[base], B[base + 1], B[base + 2], B[base + 3], v0, v1)
        x, y = np.where(on, nx, x), np.where(on, ny, y)
        w0 = np.where(on, nw0, w0)
        v0, v1 = np.where(on, nv0, v0), np.where(on, nv1, v1)
    x = _vhash16(x, v0)
    y = _vhash16(y, w0)
    lo = _vhash16(x + v1, w1) + y
    hi = _vhash16(x + w1, y + v1)
    out = np.empty((n, 2), dtype=np.uint64)
    out[order, 0] = lo
    out[order, 1] = hi
    return out


def cityhash128_with_seed_many(messages, seeds) -> list[bytes]:
    """CityHash128WithSeed of each message with its own (low64, high64) seed."""
    msgs = [bytes(m) for m in messages]
    if _C_CITY128 is not None:
        return [cityhash128_with_seed(m, sd) for m, sd in zip(msgs, seeds)]
    lo = np.asarray([s[0] & M64 for s in seeds], dtype=np.uint64)
    hi = np.asarray([s[1] & M64 for s in seeds], dtype=np.uint64)
    out: list[bytes | None] = [None] * len(msgs)
    longs = [i for i, m in enumerate(msgs) if len(m) >= 128]
    for i, m in enumerate(msgs):
        if len(m) < 128:
            a, b = _city_murmur(m, 0, len(m), int(lo[i]), int(hi[i]))
            out[i] = _u64.pack(a) + _u64.pack(b)
    # batches bounded in bytes
    batch: list[int] = []
    size = 0
    for i in longs + [None]:
        if i is not None and (size + len(msgs[i]) <= MANY_BATCH_BYTES or not batch):
            batch.append(i)
            size += len(msgs[i])
            continue
        if batch:
            res = _long_lanes([msgs[b] for b in batch], lo[batch], hi[batch])
            for b, (a, c) in zip(batch, res.tolist()):
                out[b] = _u64.pack(a) + _u64.pack(c)
        if i is not None:
            batch, size = [i], len(msgs[i])
    return out  # type: ignore[return-value]


def cityhash128_many(messages) -> list[bytes]:
    """CityHash128 (v1.0.2) of each message, vectorised across messages."""
    msgs = [bytes(m) for m in messages]
    if _C_CITY128 is not None:
        return [cityhash128(m) for m in msgs]
    out: list[bytes | None] = [None] * len(msgs)
    idx, tails, seeds = [], [], []
    for i, s in enumerate(msgs):
        if len(s) >= 16:
            idx.append(i)
            tails.append(s[16:])
            seeds.append((_fetch64(s, 0) ^ k3, _fetch64(s, 8)))
        else:
            out[i] = cityhash128(s)
    for i, h in zip(idx, cityhash128_with_seed_many(tails, seeds)):
        out[i] = h
    return out  # type: ignore[return-value]


def chained_file_hash_many(files, block_size: int = DBMS_DEFAULT_HASHING_BLOCK_SIZE) -> list[bytes]:
    """chained_file_hash of several files at once (one lane per file, piece by piece)."""
    data = [bytes(f) for f in files]
    if _C_CITY128 is not None:
        return [chained_file_hash(d, block_size) for d in data]
    state = [(0, 0)] * len(data)
    rounds = max((-(-len(d) // block_size) for d in data), default=0)
    for r in range(rounds):
        live = [i for i, d in enumerate(data) if len(d) > r * block_size]
        pieces = [data[i][r * block_size:(r + 1) * block_size] for i in live]
        hashed = cityhash128_with_seed_many(pieces, [state[i] for i in live])
        for i, h in zip(live, hashed):
            state[i] = struct.unpack("<2Q", h)
    return [_u64.pack(a) + _u64.pack(b) for a, b in state]

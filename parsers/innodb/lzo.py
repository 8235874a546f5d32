"""A small, bounded LZO1X decoder (what MariaDB's lzo1x_decompress_safe reads
for PAGE_LZO_ALGORITHM page_compressed pages).

Written from the stream description in the Linux kernel's
``Documentation/staging/lzo.rst`` (version 0, no RLE extension): first-byte
literal runs, then instructions 0000xxxx (long literal run, or 2/3-byte
near copies depending on the literals copied before), 0001HLLL (far copy,
end of stream at distance 16384), 001LLLLL (copy within 16 KiB),
01LDDDSS and 1LLDDDSS (short copies within 2 KiB); every match is followed
by 0..3 literals given in its low bits.  Pure Python (~1.5 ms a 16 KiB page), never
more than ``out_size`` bytes out; liblzo2 decodes where it is installed (below).
"""
from __future__ import annotations

import ctypes

#: liblzo2's return codes (lzo/lzoconf.h): LZO_E_OK, and LZO_E_INPUT_NOT_CONSUMED (bytes after
#: the end-of-stream marker: the output is whole, as the Python decoder reads it too)
LZO_E_OK = 0
LZO_E_INPUT_NOT_CONSUMED = -8

_clib: object = None          # None: not looked for yet; False: none here


def library_decoder():
    """liblzo2's ``lzo1x_decompress_safe`` through ctypes (the library MariaDB's provider_lzo
    links; Debian's liblzo2-2, which btrfs-progs and many others pull in), or None: then the
    Python decoder below does it all.  ctypes lets the GIL go during the call."""
    global _clib
    if _clib is None:
        _clib = False
        for name in ("liblzo2.so.2", "liblzo2.so", "liblzo2.2.dylib"):
            try:
                lib = ctypes.CDLL(name)
                fn = lib.lzo1x_decompress_safe
            except (OSError, AttributeError):
                continue
            fn.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                           ctypes.POINTER(ctypes.c_size_t), ctypes.c_void_p]
            fn.restype = ctypes.c_int
            _clib = fn
            break
    return _clib or None


def lzo1x_decompress_safe(src: bytes, out_size: int, stop_at: int | None = None) -> bytes:
    """Decode one LZO1X stream; ValueError on corrupt input or output over ``out_size``.

    With ``stop_at``, return as soon as that many bytes are out (a prefix,
    e.g. just the page headers); otherwise the stream must end at ``out_size``.

    liblzo2 decodes it where it is installed (never more than ``out_size`` bytes: the
    library's ``_safe`` decoder checks its output bound), ~50x faster than the Python below;
    whatever it does not decode whole to exactly ``out_size`` bytes (a corrupt or short
    stream, a prefix of a stream corrupt further on) the Python decoder decodes, so the
    bytes, and each error and its message, are the Python decoder's."""
    fn = library_decoder() if src and out_size > 0 else None
    if fn is not None:
        dst = ctypes.create_string_buffer(out_size)
        got = ctypes.c_size_t(out_size)
        rc = fn(src, len(src), dst, ctypes.byref(got), None)
        if rc in (LZO_E_OK, LZO_E_INPUT_NOT_CONSUMED) and got.value == out_size:
            return dst.raw if stop_at is None else dst.raw[:stop_at]
    return _decode(src, out_size, stop_at)


def _decode(src: bytes, out_size: int, stop_at: int | None = None) -> bytes:
    """:func:`lzo1x_decompress_safe` in Python (the format as the module doc gives it)."""
    out = bytearray()
    n = len(src)
    limit = out_size if stop_at is None else min(stop_at, out_size)
    if n == 0:
        raise ValueError("empty input")
    ip = 0
    state = 0
    if src[0] > 17:
        t = src[0] - 17
        if 1 + t > n or t > out_size:
            raise ValueError("input overrun at byte 1")
        out += src[1:1 + t]
        ip = 1 + t
        state = t if t < 4 else 4
    while True:
        if len(out) >= limit and stop_at is not None:
            return bytes(out[:stop_at])
        if ip >= n:
            raise ValueError(f"input overrun at byte {ip}")
        inst = src[ip]
        ip += 1
        if inst < 16 and state == 0:
            # long literal run: 3 + length
            length = inst
            if not length:
                length = 15
                while True:
                    if ip >= n:
                        raise ValueError(f"input overrun at byte {ip}")
                    b = src[ip]
                    ip += 1
                    if b:
                        length += b
                        break
                    length += 255
                    if length > out_size:
                        raise ValueError("length run past the output size")
            length += 3
            if ip + length > n or len(out) + length > out_size:
                raise ValueError(f"literal run of {length} bytes overruns at byte {ip}")
            out += src[ip:ip + length]
            ip += length
            state = 4
            continue
        if inst < 16:
            if ip >= n:
                raise ValueError(f"input overrun at byte {ip}")
            h = src[ip]
            ip += 1
            if state < 4:
                dist, length = (h << 2) + ((inst >> 2) & 3) + 1, 2
            else:
                dist, length = (h << 2) + ((inst >> 2) & 3) + 2049, 3
            s = inst & 3
        elif inst < 64:
            bits = 7 if inst < 32 else 31
            length = inst & bits
            if not length:
                length = bits
                while True:
                    if ip >= n:
                        raise ValueError(f"input overrun at byte {ip}")
                    b = src[ip]
                    ip += 1
                    if b:
                        length += b
                        break
                    length += 255
                    if length > out_size:
                        raise ValueError("length run past the output size")
            length += 2
            if ip + 2 > n:
                raise ValueError(f"input overrun at byte {ip}")
            le = src[ip] | (src[ip + 1] << 8)
            ip += 2
            if inst < 32:
                dist = 16384 + ((inst & 8) << 11) + (le >> 2)
                if dist == 16384:     # end of stream
                    if stop_at is not None:
                        return bytes(out[:stop_at])
                    if len(out) != out_size:
                        raise ValueError(f"stream ended after {len(out)} bytes, expected {out_size}")
                    return bytes(out)
            else:
                dist = (le >> 2) + 1
            s = le & 3
        else:
            if ip >= n:
                raise ValueError(f"input overrun at byte {ip}")
            h = src[ip]
            ip += 1
            dist = (h << 3) + ((inst >> 2) & 7) + 1
            length = 3 + ((inst >> 5) & 1) if inst < 128 else 5 + ((inst >> 5) & 3)
            s = inst & 3
        # copy a match (overlapping copies repeat the last ``dist`` bytes)
        have = len(out)
        start = have - dist
        if start < 0:
            raise ValueError(f"match distance {dist} reaches before the output start")
        if have + length > out_size:
            raise ValueError("output overrun (match)")
        if dist >= length:
            out += out[start:start + length]
        else:
            chunk = out[start:]
            out += (chunk * (length // dist + 1))[:length]
        if s:
            if ip + s > n or len(out) + s > out_size:
                raise ValueError(f"input overrun at byte {ip}")
            out += src[ip:ip + s]
            ip += s
        state = s

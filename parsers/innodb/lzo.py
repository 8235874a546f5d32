"""A small, bounded LZO1X decoder (what MariaDB's lzo1x_decompress_safe reads
for PAGE_LZO_ALGORITHM page_compressed pages).

Written from the stream description in the Linux kernel's
``Documentation/staging/lzo.rst`` (version 0, no RLE extension): first-byte
literal runs, then instructions 0000xxxx (long literal run, or 2/3-byte
near copies depending on the literals copied before), 0001HLLL (far copy,
end of stream at distance 16384), 001LLLLL (copy within 16 KiB),
01LDDDSS and 1LLDDDSS (short copies within 2 KiB); every match is followed
by 0..3 literals given in its low bits.  Pure Python: fine for the few
pages of an LZO tablespace, never more than ``out_size`` bytes out.
"""
from __future__ import annotations


def lzo1x_decompress_safe(src: bytes, out_size: int, stop_at: int | None = None) -> bytes:
    """Decode one LZO1X stream; ValueError on corrupt input or output over ``out_size``.

    With ``stop_at``, return as soon as that many bytes are out (a prefix,
    e.g. just the page headers); otherwise the stream must end at ``out_size``.
    """
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

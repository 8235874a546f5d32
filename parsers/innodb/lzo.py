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


def lzo1x_decompress_safe(src: bytes, out_size: int) -> bytes:
    """Decode one LZO1X stream; ValueError on corrupt input or output over ``out_size``."""
    out = bytearray()
    n = len(src)
    ip = 0

    def need(k: int) -> None:
        if ip + k > n:
            raise ValueError(f"input overrun at byte {ip}")

    def var_len(bits_mask: int, base: int) -> int:
        nonlocal ip
        length = 0
        while True:
            need(1)
            b = src[ip]
            ip += 1
            if b:
                return base + bits_mask + length + b
            length += 255
            if length > out_size:
                raise ValueError("length run past the output size")

    def literals(k: int) -> None:
        nonlocal ip
        need(k)
        if len(out) + k > out_size:
            raise ValueError("output overrun (literals)")
        out.extend(src[ip:ip + k])
        ip += k

    def copy_match(dist: int, length: int) -> None:
        start = len(out) - dist
        if dist <= 0 or start < 0:
            raise ValueError(f"match distance {dist} reaches before the output start")
        if len(out) + length > out_size:
            raise ValueError("output overrun (match)")
        if dist >= length:
            out.extend(out[start:start + length])
        else:
            for k in range(length):
                out.append(out[start + k])

    need(1)
    state = 0
    if src[0] > 17:
        t = src[0] - 17
        ip = 1
        literals(t)
        state = t if t < 4 else 4
    while True:
        need(1)
        inst = src[ip]
        ip += 1
        if inst < 16:
            if state == 0:
                length = 3 + (inst if inst else var_len(15, 0))
                literals(length)
                state = 4
                continue
            need(1)
            h = src[ip]
            ip += 1
            if state < 4:
                copy_match((h << 2) + ((inst >> 2) & 3) + 1, 2)
            else:
                copy_match((h << 2) + ((inst >> 2) & 3) + 2049, 3)
            s = inst & 3
        elif inst < 32:
            length = 2 + ((inst & 7) if inst & 7 else var_len(7, 0))
            need(2)
            le = src[ip] | (src[ip + 1] << 8)
            ip += 2
            dist = 16384 + ((inst & 8) << 11) + (le >> 2)
            if dist == 16384:
                if len(out) != out_size:
                    raise ValueError(f"stream ended after {len(out)} bytes, expected {out_size}")
                return bytes(out)
            copy_match(dist, length)
            s = le & 3
        elif inst < 64:
            length = 2 + ((inst & 31) if inst & 31 else var_len(31, 0))
            need(2)
            le = src[ip] | (src[ip + 1] << 8)
            ip += 2
            copy_match((le >> 2) + 1, length)
            s = le & 3
        else:
            need(1)
            h = src[ip]
            ip += 1
            dist = (h << 3) + ((inst >> 2) & 7) + 1
            length = 3 + ((inst >> 5) & 1) if inst < 128 else 5 + ((inst >> 5) & 3)
            copy_match(dist, length)
            s = inst & 3
        if s:
            literals(s)
        state = s

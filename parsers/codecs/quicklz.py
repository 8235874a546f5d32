"""QuickLZ 1.5.0, compression level 3, no streaming buffer: a bounded decoder
(and a small greedy encoder used by tests and the compressor layer).

Written from the format as PerconaFT's bundled ``ft/serialize/quicklz.cc``
defines it (``qlz_size_header``, ``qlz_size_compressed``,
``qlz_size_decompressed``, ``qlz_decompress_core`` for QLZ_COMPRESSION_LEVEL 3).

Stream layout::

    flags byte 01SSLLHC   C = compressed, H = 9-byte header (else 3),
                          LL = level, SS = streaming buffer setting
    header     3 bytes:   flags, u8 compressed size, u8 decompressed size
               9 bytes:   flags, u32le compressed size, u32le decompressed size
    body       control words (u32le; 31 flag bits LSB first, bit 31 a sentinel)
               each 0 bit = one literal byte, each 1 bit = one match (level 3:
               1..4 bytes coding offset and length); the last bytes
               (from size - UNCOMPRESSED_END - UNCONDITIONAL_MATCHLEN - 1 on) are
               always literals.

The decoder checks every read and every match against the buffers (the
``QLZ_MEMORY_SAFE`` rules) and never allocates more than the stream's
declared size, itself capped by ``max_output``.
"""
from __future__ import annotations

from .general import DEFAULT_MAX_OUTPUT, DecodeError

# quicklz.cc
MINOFFSET = 2
UNCONDITIONAL_MATCHLEN = 6
UNCOMPRESSED_END = 4
CWORD_LEN = 4
QLZ_COMPRESSION_LEVEL = 3
QLZ_POINTERS = 16
#: trailing-zero count of a control-word nibble (number of literals in a row), bitlut in quicklz.cc
_BITLUT = (4, 0, 1, 0, 2, 0, 1, 0, 3, 0, 1, 0, 2, 0, 1, 0)


def qlz_size_header(src) -> int:
    """Header length of a stream: 9 when flag bit 1 is set, else 3."""
    return 9 if src[0] & 2 else 3


def qlz_sizes(src) -> tuple[int, int]:
    """(compressed size incl. header, decompressed size) from the stream header."""
    if len(src) < 1:
        raise DecodeError("quicklz: empty stream")
    if src[0] & 2:
        if len(src) < 9:
            raise DecodeError("quicklz: truncated 9-byte header")
        return (int.from_bytes(src[1:5], "little"), int.from_bytes(src[5:9], "little"))
    if len(src) < 3:
        raise DecodeError("quicklz: truncated 3-byte header")
    return src[1], src[2]


def decompress(src, max_output: int = DEFAULT_MAX_OUTPUT, expected_size: int | None = None,
               stop_after: int | None = None) -> bytes:
    """Decode one QuickLZ level-3 stream.

    ``expected_size`` (when given) must equal the stream's declared size;
    ``stop_after`` returns only the first bytes (a cheap prefix decode).
    Raises DecodeError on any inconsistency: sizes, a truncated body, a match
    reaching before the start of the output, a level other than 3.
    """
    src = bytes(src)
    flags = src[0] if src else 0
    csize, dsize = qlz_sizes(src)
    hlen = qlz_size_header(src)
    if flags & 0x40 == 0:
        raise DecodeError(f"quicklz: bad flag byte {flags:#04x} (bit 6 must be set)")
    level = (flags >> 2) & 3
    if level != QLZ_COMPRESSION_LEVEL:
        raise DecodeError(f"quicklz: stream is level {level}, only level 3 is supported")
    if (flags >> 4) & 3:
        raise DecodeError("quicklz: streaming-buffer streams are not supported")
    if expected_size is not None and dsize != expected_size:
        raise DecodeError(f"quicklz: stream declares {dsize} bytes, container says {expected_size}")
    if dsize > max_output:
        raise DecodeError(f"quicklz: claims {dsize} bytes, over the cap of {max_output}")
    if csize < hlen or (csize > len(src) and stop_after is None):
        raise DecodeError(f"quicklz: declares {csize} compressed bytes, {len(src)} available")
    want = dsize if stop_after is None else min(dsize, stop_after)
    if not flags & 1:                                   # stored uncompressed
        if hlen + dsize > csize:
            raise DecodeError(f"quicklz: stored stream of {dsize} bytes is truncated")
        return src[hlen:hlen + want]
    if dsize == 0:
        raise DecodeError("quicklz: compressed stream of 0 bytes")
    end = min(csize, len(src))                           # first byte past the stream (or the input)
    dst = bytearray()
    s = hlen
    cword = 1
    last_matchstart = dsize - 1 - UNCONDITIONAL_MATCHLEN - UNCOMPRESSED_END
    while True:
        if len(dst) >= want and stop_after is not None:
            return bytes(dst[:want])
        if cword == 1:
            if s + CWORD_LEN > end:
                raise DecodeError(f"quicklz: control word past the end of the stream at {s}")
            cword = int.from_bytes(src[s:s + 4], "little")
            s += CWORD_LEN
            if cword == 0:
                raise DecodeError(f"quicklz: zero control word at {s - 4}")
        if cword & 1:
            # a match: 1 to 4 bytes (level 3 encodings in qlz_decompress_core)
            if s >= end:
                raise DecodeError(f"quicklz: match past the end of the stream at {s}")
            fetch = int.from_bytes(src[s:s + 4], "little")     # short near the end = zero-padded
            cword >>= 1
            if fetch & 3 == 0:
                offset, mlen, step = (fetch & 0xFF) >> 2, 3, 1
            elif fetch & 2 == 0:
                offset, mlen, step = (fetch & 0xFFFF) >> 2, 3, 2
            elif fetch & 1 == 0:
                offset, mlen, step = (fetch & 0xFFFF) >> 6, ((fetch >> 2) & 15) + 3, 2
            elif fetch & 127 != 3:
                offset, mlen, step = (fetch >> 7) & 0x1FFFF, ((fetch >> 2) & 0x1F) + 2, 3
            else:
                offset, mlen, step = fetch >> 15, ((fetch >> 7) & 255) + 3, 4
            if s + step > end:
                raise DecodeError(f"quicklz: match code past the end of the stream at {s}")
            s += step
            pos = len(dst)
            if offset < MINOFFSET + 1 or offset > pos:
                raise DecodeError(f"quicklz: match offset {offset} out of range at output {pos}")
            if mlen > dsize - pos - UNCOMPRESSED_END:
                raise DecodeError(f"quicklz: match of {mlen} bytes overruns the output at {pos}")
            start = pos - offset
            if offset >= mlen:
                dst += dst[start:start + mlen]
            else:                    # overlapping copy: the last `offset` bytes repeat
                dst += (dst[start:pos] * (mlen // offset + 1))[:mlen]
        elif len(dst) < last_matchstart:
            # a run of literal (0) bits: the engine copies them in groups of up to
            # four, checking dst < last_matchstart before each group; when the whole
            # run ends by last_matchstart every group start passes, so copy it at once
            run = ((cword & -cword).bit_length() - 1)
            if run > 4 and len(dst) + run <= last_matchstart:
                if s + run > end:
                    raise DecodeError(f"quicklz: literals past the end of the stream at {s}")
                dst += src[s:s + run]
                s += run
                cword >>= run
                continue
            n = _BITLUT[cword & 0xF]
            if s + n > end:
                raise DecodeError(f"quicklz: literals past the end of the stream at {s}")
            dst += src[s:s + n]
            s += n
            cword >>= n
        else:
            # the tail: every remaining byte is a literal
            while len(dst) < dsize:
                if cword == 1:
                    s += CWORD_LEN
                    cword = 1 << 31
                if s >= end:
                    raise DecodeError(f"quicklz: literal tail past the end of the stream at {s}")
                dst.append(src[s])
                s += 1
                cword >>= 1
            return bytes(dst[:want])


def _match_code(offset: int, mlen: int) -> bytes | None:
    """The shortest level-3 code for a match (the decoder's five forms)."""
    if mlen == 3 and offset < 64:
        return (offset << 2).to_bytes(1, "little")
    if mlen == 3 and offset < 16384:
        return ((offset << 2) | 1).to_bytes(2, "little")
    if mlen <= 18 and offset < 1024:
        return ((offset << 6) | ((mlen - 3) << 2) | 2).to_bytes(2, "little")
    if 3 <= mlen <= 33:
        return ((offset << 7) | ((mlen - 2) << 2) | 3).to_bytes(3, "little")
    if mlen <= 258:
        return ((offset << 15) | ((mlen - 3) << 7) | 3).to_bytes(4, "little")
    return None


def compress(data: bytes, pointers: int = QLZ_POINTERS) -> bytes:
    """Encode ``data`` as a QuickLZ level-3 stream that :func:`decompress` (and the
    engine's ``qlz_decompress``) reads back.

    Like the engine's level 3 it keeps ``pointers`` (16) earlier positions per
    3-byte prefix and takes the longest match; on the fixtures' 81 engine-written
    QuickLZ sub-blocks its output is within 0.3% of the engine's size.  Pure
    Python: slow (~0.5 MB/s); ``pointers=1`` is ~4x faster and ~3% larger.
    Falls back to a stored stream when that is smaller.
    """
    data = bytes(data)
    size = len(data)
    if size == 0:
        raise ValueError("quicklz cannot encode an empty input")
    base = 3 if size < 216 else 9
    body = bytearray()
    cword_pos = 0
    cword = 0
    nbits = 0

    def new_cword():
        nonlocal cword_pos, cword, nbits
        cword_pos = len(body)
        body.extend(b"\0\0\0\0")
        cword = 0
        nbits = 0

    def put_bit(bit: int):
        nonlocal cword, nbits
        if nbits == 31:
            body[cword_pos:cword_pos + 4] = (cword | (1 << 31)).to_bytes(4, "little")
            new_cword()
        cword |= bit << nbits
        nbits += 1

    new_cword()
    last_matchstart = size - 1 - UNCONDITIONAL_MATCHLEN - UNCOMPRESSED_END
    # level 3 keeps QLZ_POINTERS (16) earlier positions per 3-byte prefix and takes
    # the longest match among them (quicklz.cc); positions inside matches are
    # remembered too
    table: dict[bytes, list[int]] = {}

    def remember(pos: int) -> None:
        lst = table.setdefault(data[pos:pos + 3], [])
        lst.append(pos)
        if len(lst) > pointers:
            del lst[0]

    i = 0
    while i < size:
        if i < last_matchstart and i + 3 <= size:
            cands = table.get(data[i:i + 3])
            best_len, best_off = 0, 0
            if cands:
                limit = min(size - i - UNCOMPRESSED_END, 255 + 3)
                for cand in reversed(cands):
                    offset = i - cand
                    if offset <= MINOFFSET or offset > 0x1FFFF:
                        continue
                    mlen = 3
                    while mlen < limit and data[cand + mlen] == data[i + mlen]:
                        mlen += 1
                    if mlen > best_len:
                        best_len, best_off = mlen, offset
                        if mlen == limit:
                            break
            code = _match_code(best_off, best_len) if best_len >= 3 else None
            if code is not None:
                put_bit(1)
                body.extend(code)
                for k in range(i, min(i + best_len, last_matchstart)):
                    remember(k)
                i += best_len
                continue
            remember(i)
        put_bit(0)
        body.append(data[i])
        i += 1
    body[cword_pos:cword_pos + 4] = (cword | (1 << 31)).to_bytes(4, "little")
    stored = len(body) >= size
    total = base + (size if stored else len(body))
    flags = (0 if stored else 1) | (2 if base == 9 else 0) | (QLZ_COMPRESSION_LEVEL << 2) | (1 << 6)
    if base == 3:
        head = bytes([flags, total, size])
    else:
        head = bytes([flags]) + total.to_bytes(4, "little") + size.to_bytes(4, "little")
    return head + (data if stored else bytes(body))

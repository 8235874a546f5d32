"""The codec registry: every codec the what-if layer can project, by a stable
text name, with its encoder and bounded decoder.

Names (stable, used in the CLI and the JSON):

* ``none``, ``zlib:1..9``, ``lz4``, ``lz4hc:1..12``, ``zstd:-5..22``,
  ``lzma:0..9``, ``bzip2:1..9``, ``snappy``, ``brotli:0..11``;
* ClickHouse chains written as ClickHouse writes them, e.g. ``LZ4``,
  ``ZSTD(1)``, ``Delta(4),ZSTD(1)``, ``T64,LZ4``, ``Gorilla``,
  ``DoubleDelta``.  Their encoders live in :mod:`parsers.codecs.ch_block`
  (the ClickHouse parser's codec module); until it is there a chain codec
  raises :class:`CodecUnavailable` naming what is missing.

All general encoders and decoders go through :mod:`parsers.codecs.general`
(bounded decoders: a decoder never produces more than ``max_output`` bytes).
"""
from __future__ import annotations

import re
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator

from dbxray.parsers.codecs import ch_block
from dbxray.parsers.codecs import general as g

#: family -> (min level, max level, default level); None: no level
LEVELS: dict[str, tuple[int, int, int] | None] = {
    "none": None,
    "zlib": (1, 9, 6),
    "lz4": None,
    "lz4hc": (1, 12, 9),
    "zstd": (-5, 22, 3),
    "lzma": (0, 9, 6),
    "bzip2": (1, 9, 9),
    "snappy": None,
    "brotli": (0, 11, 11),
    "quicklz": None,          # QuickLZ 1.5 level 3, as PerconaFT bundles it (parsers/codecs/quicklz.py)
}

#: xz's CRC64 block check is 8 bytes; the engines (MariaDB page compression,
#: PerconaFT) call lzma_easy_buffer_encode with LZMA_CHECK_NONE, so the
#: registry's ``lzma`` codec is an .xz stream without a check.  The shared
#: encoder always writes the default CRC64 check: we subtract it.
XZ_CRC64_CHECK_BYTES = 8

#: ClickHouse general codec names -> registry family
_CH_GENERAL = {"NONE": "none", "LZ4": "lz4", "LZ4HC": "lz4hc", "ZSTD": "zstd"}
#: ClickHouse default levels (CompressionCodecZSTD.cpp: ZSTD_DEFAULT_LEVEL 1;
#: CompressionCodecLZ4.cpp: LZ4HC level 0 means LZ4HC_CLEVEL_DEFAULT 9)
_CH_DEFAULT_LEVEL = {"ZSTD": 1, "LZ4HC": 9}
_CH_SPECIAL = ("Delta", "DoubleDelta", "Gorilla", "T64", "FPC", "GCD")


class UnknownCodec(ValueError):
    """A codec name that the registry does not know (bad usage)."""


class CodecUnavailable(RuntimeError):
    """A known codec whose encoder is not installed / not written yet."""


@dataclass(frozen=True)
class Codec:
    """One codec with a level: ``family`` and ``level`` give its stable ``name``.

    ``chain`` is set for ClickHouse chain codecs (``Delta(4),ZSTD(1)``);
    general codecs have ``chain=None`` and a ClickHouse equivalent in
    :attr:`ch_chain` where ClickHouse has one.
    """

    family: str
    level: int | None = None
    chain: str | None = None

    @property
    def name(self) -> str:
        if self.chain is not None:
            return self.chain
        return self.family if self.level is None else f"{self.family}:{self.level}"

    @property
    def is_chain(self) -> bool:
        return self.chain is not None

    @property
    def speed_measured(self) -> bool:
        """Whether a speed measured here means something for the engine: the codec is a C
        library the engines link (zlib, lz4, zstd, lzma, bzip2, snappy, brotli) called
        through its binding.  ClickHouse's own transforms (Delta, DoubleDelta, Gorilla,
        T64, FPC, GCD) run here as reference implementations in Python/numpy, orders of
        magnitude slower than the engine's C++; ``none`` copies bytes."""
        if self.chain is None:
            return self.family != "none"
        items = [item.split("(")[0] for item in _split_chain(self.chain)]
        return not any(i in _CH_SPECIAL for i in items) and any(i != "NONE" for i in items)

    @property
    def ch_chain(self) -> str | None:
        """The ClickHouse CODEC(...) text for this codec, None when ClickHouse has none."""
        if self.chain is not None:
            return self.chain
        if self.family == "none":
            return "NONE"
        if self.family == "lz4":
            return "LZ4"
        if self.family == "lz4hc":
            return f"LZ4HC({self.level})"
        if self.family == "zstd":
            return f"ZSTD({self.level})"
        return None

    # -- raw encode / decode (general codecs) --------------------------------
    def compress(self, data: bytes) -> bytes:
        """The codec's compressed bytes for ``data`` (no engine framing)."""
        if self.chain is not None:
            raise CodecUnavailable(f"{self.name}: a ClickHouse chain has no raw form; use compress_ch_block")
        return _ENCODERS[self.family](data, self.level)

    def compressed_size(self, data: bytes) -> int:
        """Bytes of the compressed form (lzma: without the xz check, as the engines write it).

        lz4 and snappy count their output in a reused buffer instead of
        building bytes (same encoder, same count; tests/test_compress_registry.py)."""
        memo = getattr(_shared, "memo", None)
        if memo is not None:
            got = memo.get((self.name, id(data)))
            if got is not None and got[0] is data:
                memo.hits += 1
                return got[1]
        n = self._compressed_size(data)
        if memo is not None:
            memo[(self.name, id(data))] = (data, n)
        return n

    def _compressed_size(self, data: bytes) -> int:
        if self.chain is None:
            sizer = _SIZERS.get(self.family)
            if sizer is not None:
                return sizer(data)
        n = len(self.compress(data))
        if self.family == "lzma":
            n -= XZ_CRC64_CHECK_BYTES
        return n

    def decompress(self, blob: bytes, size: int, max_output: int = g.DEFAULT_MAX_OUTPUT) -> bytes:
        """Decode ``blob`` (made by :meth:`compress`) of ``size`` decoded bytes, bounded."""
        if size > max_output:
            raise g.DecodeError(f"{self.name}: claims {size} bytes, over the cap of {max_output}")
        fam = self.family
        if fam == "none":
            return bytes(blob[:max_output])
        if fam == "zlib":
            return g.zlib_decompress(blob, max_output)
        if fam in ("lz4", "lz4hc"):
            return g.lz4_block_decompress(blob, size, max_output)
        if fam == "zstd":
            return g.zstd_decompress(blob, max_output, size_hint=size)
        if fam == "lzma":
            return g.lzma_decompress(blob, max_output)
        if fam == "bzip2":
            return g.bzip2_decompress(blob, max_output)
        if fam == "snappy":
            return g.snappy_decompress(blob, max_output)
        if fam == "brotli":
            return g.brotli_decompress(blob, max_output, size_hint=size)
        if fam == "quicklz":
            from dbxray.parsers.codecs import quicklz
            return quicklz.decompress(blob, max_output, expected_size=size)
        raise UnknownCodec(self.name)

    # -- ClickHouse blocks ---------------------------------------------------
    def compress_ch_block(self, raw: bytes, type_size: int | None = None, value_type: str | None = None) -> bytes:
        """A full ClickHouse compressed block (25-byte framing included)."""
        chain = self.ch_chain
        if chain is None:
            raise CodecUnavailable(f"{self.name}: ClickHouse has no such codec")
        return ch_block.compress_block(raw, chain, type_size=type_size, value_type=value_type)

    def ch_block_size(self, raw: bytes, type_size: int | None = None, value_type: str | None = None) -> int:
        """Bytes of the full ClickHouse block :meth:`compress_ch_block` makes, without
        computing its CityHash128 (16 bytes whatever their value)."""
        return len(ch_block_body(raw, self.ch_chain or "", type_size, value_type)) + 16


class SizeMemo(dict):
    """(codec name, id(input)) -> (the input, its compressed size), and how often one was taken."""

    hits = 0


#: the memo open on each thread (:func:`same_input_sizes`)
_shared = threading.local()


@contextmanager
def same_input_sizes() -> Iterator[SizeMemo]:
    """Within: :meth:`Codec.compressed_size` of an input object it was already asked for on this
    thread with the same codec gives that size again, not encoding it twice (the projector opens
    one per unit: two storage models of a page that compress the same bytes with the same codec,
    InnoDB page compression and the ROW_FORMAT=COMPRESSED estimate under zlib).  Keyed by the
    object (the memo holds it, so its id is not reused meanwhile), never by its bytes."""
    outer = getattr(_shared, "memo", None)
    memo = _shared.memo = SizeMemo()
    try:
        yield memo
    finally:
        _shared.memo = outer


def _zlib(data: bytes, level: int | None) -> bytes:
    return g.zlib_compress(data, level)


def _lz4(data: bytes, level: int | None) -> bytes:
    """LZ4_compress_default, the call MariaDB (fil_page_compress_low) and ClickHouse
    (CompressionCodecLZ4) make, at every size: the codec layer's encoder
    (cramjam, which releases the GIL).  python-lz4's block API gives other
    bytes below LZ4_64Klimit (64 KiB + 11: LZ4_compress_default's 16-bit hash
    table there) and is not faster above it, so it is not used
    (tests/test_compress_registry.py compares the bytes at both sides of the limit)."""
    return g.lz4_block_compress(data)


def _lz4hc(data: bytes, level: int | None) -> bytes:
    return g.lz4_block_compress(data, level=level, hc=True)


def _zstd(data: bytes, level: int | None) -> bytes:
    return g.zstd_compress(data, level)


def _lzma(data: bytes, level: int | None) -> bytes:
    return g.lzma_compress(data, level)


def _bzip2(data: bytes, level: int | None) -> bytes:
    return g.bzip2_compress(data, level)


def _snappy(data: bytes, level: int | None) -> bytes:
    return g.snappy_compress(data)


def _brotli(data: bytes, level: int | None) -> bytes:
    return g.brotli_compress(data, level)


def _none(data: bytes, level: int | None) -> bytes:
    return bytes(data)


def _quicklz(data: bytes, level: int | None) -> bytes:
    """QuickLZ level 3 (pure Python: slow, about 0.3-0.5 MB/s; sizes within 0.3% of the engine's)."""
    from dbxray.parsers.codecs import quicklz
    return quicklz.compress(data)


_ENCODERS: dict[str, Callable[[bytes, int | None], bytes]] = {
    "none": _none, "zlib": _zlib, "lz4": _lz4, "lz4hc": _lz4hc, "zstd": _zstd,
    "lzma": _lzma, "bzip2": _bzip2, "snappy": _snappy, "brotli": _brotli, "quicklz": _quicklz,
}


#: families whose compressed size the codec layer counts without building the bytes
_SIZERS: dict[str, Callable[[bytes], int]] = {
    "lz4": g.lz4_block_compressed_size, "snappy": g.snappy_compressed_size,
}


def ch_block_body(raw: bytes, chain: str, type_size: int | None = None, value_type: str | None = None) -> bytes:
    """A ClickHouse block without its 16-byte checksum: header + payload (Multiple for chains).

    The codec layer's public ``encode_chain`` (``parsers.codecs.ch_block``):
    only the size matters here, and CityHash128 in Python would cost more
    than the codecs; the block takes ``16 + len(result)`` bytes on disk.
    """
    return ch_block.encode_chain(raw, chain, type_size=type_size, value_type=value_type)


_CH_ITEM = re.compile(r"^\s*([A-Za-z][A-Za-z0-9]*)\s*(?:\(\s*([-0-9,\s]*)\s*\))?\s*$")


def _split_chain(text: str) -> list[str]:
    """Commas outside parentheses (the codec layer's splitter)."""
    from dbxray.parsers.codecs.ch_encode import split_chain
    return [item for item in split_chain(text) if item]


def normalize_ch_chain(text: str) -> str:
    """A ClickHouse chain in canonical form: ``Delta(4),ZSTD(1)`` (no spaces, default levels filled)."""
    out = []
    for item in _split_chain(text):
        m = _CH_ITEM.match(item)
        if not m:
            raise UnknownCodec(f"{text!r}: cannot read {item!r}")
        name, args = m.group(1), m.group(2)
        canon = {n.upper(): n for n in list(_CH_GENERAL) + list(_CH_SPECIAL)}.get(name.upper())
        if canon is None:
            raise UnknownCodec(f"{text!r}: unknown ClickHouse codec {name!r}")
        if args is not None and args.strip():
            out.append(f"{canon}({','.join(a.strip() for a in args.split(','))})")
        elif canon in _CH_DEFAULT_LEVEL:
            out.append(f"{canon}({_CH_DEFAULT_LEVEL[canon]})")
        else:
            out.append(canon)
    if not out:
        raise UnknownCodec(f"{text!r}: empty codec chain")
    return ",".join(out)


def parse_codec(name: str) -> Codec:
    """The :class:`Codec` for a stable name or a ClickHouse chain; UnknownCodec otherwise.

    ``zstd`` alone means its default level (``zstd:3``); a single ClickHouse
    general codec (``ZSTD(3)``, ``LZ4``) maps onto the general family.
    """
    text = name.strip()
    if not text:
        raise UnknownCodec("empty codec name")
    low = text.lower()
    fam, _, lvl = low.partition(":")
    if fam in LEVELS and "(" not in text and text not in _CH_GENERAL:
        rng = LEVELS[fam]
        if rng is None:
            if lvl:
                raise UnknownCodec(f"{name!r}: {fam} has no level")
            return Codec(fam)
        if not lvl:
            return Codec(fam, rng[2])
        try:
            level = int(lvl)
        except ValueError:
            raise UnknownCodec(f"{name!r}: level must be an integer") from None
        if not rng[0] <= level <= rng[1]:
            raise UnknownCodec(f"{name!r}: {fam} levels are {rng[0]}..{rng[1]}")
        return Codec(fam, level)
    chain = normalize_ch_chain(text)
    items = _split_chain(chain)
    if len(items) == 1:
        m = _CH_ITEM.match(items[0])
        gen = _CH_GENERAL.get(m.group(1).upper())
        if gen is not None:
            level = int(m.group(2)) if m.group(2) else None
            if gen == "lz4hc" and level == 0:
                level = 9
            if gen in ("none", "lz4"):
                return Codec(gen)
            rng = LEVELS[gen]
            if level is not None and not rng[0] <= level <= rng[1]:
                raise UnknownCodec(f"{name!r}: {gen} levels are {rng[0]}..{rng[1]}")
            return Codec(gen, level)
    return Codec("chain", None, chain)


def all_codec_names() -> list[str]:
    """Every general codec name the registry knows, lowest to highest level."""
    out = []
    for fam, rng in LEVELS.items():
        if rng is None:
            out.append(fam)
        else:
            out.extend(f"{fam}:{lv}" for lv in range(rng[0], rng[1] + 1))
    return out


#: what ``whatif`` projects when no --codec is given
DEFAULT_CODECS = ("none", "lz4", "zstd:1", "zstd:3", "zstd:9", "zlib:6", "lzma:6", "snappy", "bzip2:1")

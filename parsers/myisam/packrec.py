"""The header of a myisampack-compressed data file (storage/myisam/mi_packrec.c
_mi_read_pack_info; myisampack.c writes it): 32 bytes, little endian after the magic
``fe fe 08`` (myisam_pack_file_magic; Aria's aria_pack writes ``fe fe 0a``,
maria_pack_file_magic): version, header_length (the Huffman trees and intervals that
precede the rows), min_pack_length, max_pack_length, elements, intervall_length, trees,
ref_length, rec_reflength.  The rows after it are bit-packed with those trees (not
decoded here)."""
from __future__ import annotations

import struct
from dataclasses import dataclass

MYISAM_PACK_FILE_MAGIC = b"\xfe\xfe\x08"
MARIA_PACK_FILE_MAGIC = b"\xfe\xfe\x0a"
HEAD_LENGTH = 32
_HEAD = struct.Struct("<4sIIIIIHBB")


@dataclass(frozen=True)
class PackHeader:
    version: int
    header_length: int          # bytes before the first row (trees and intervals)
    min_pack_length: int
    max_pack_length: int
    elements: int
    intervall_length: int
    trees: int
    ref_length: int
    rec_reflength: int          # row pointer bytes of the packed file (header[27])


def read_pack_header(buf: bytes, magic: bytes = MYISAM_PACK_FILE_MAGIC) -> PackHeader:
    """The pack header at the start of ``buf`` (ValueError naming what is wrong)."""
    if len(buf) < HEAD_LENGTH:
        raise ValueError(f"pack header cut: {len(buf)} of {HEAD_LENGTH} bytes")
    m, hl, mn, mx, el, il, tr, rl, ol = _HEAD.unpack_from(buf, 0)
    if m[:3] != magic:
        raise ValueError(f"pack magic {m.hex()} ({magic.hex()} expected): not a compressed data file")
    return PackHeader(version=m[3], header_length=hl, min_pack_length=mn, max_pack_length=mx, elements=el,
                      intervall_length=il, trees=tr, ref_length=rl, rec_reflength=ol)

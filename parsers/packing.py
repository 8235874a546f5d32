"""Packed sections: the engine sections of many similar files kept as small byte
strings while a big scan runs (FileEntry.pack_sections), opened again on demand.

A file's sections are pickled, then compressed with zstd against a dictionary made of
the first files' own pickles (zstd "raw content" dictionaries): the sections of the
files of one data dir share their keys, their classes and most of their values, so a
file's 750-byte pickle packs to tens or a few hundred bytes, in microseconds.  The
first files, whose pickles make the dictionary, are kept LZ4-compressed.
"""
from __future__ import annotations

import pickle
import threading
from typing import Any

#: pickles that make the dictionary, at most, and its size at most
DICT_SAMPLES = 8
DICT_BYTES = 32 << 10
#: zstd level: 1 is fastest, and the dictionary does the work
LEVEL = 1


class SectionPacker:
    """Packs and opens the sections of one scan's files (one packer per file list)."""

    def __init__(self) -> None:
        self._samples: list[bytes] = []
        self._size = 0
        self._compress = None
        self._decompressor = None
        self._lock = threading.Lock()          # zstd objects are not for concurrent use

    def pack(self, sections: dict[str, Any]) -> "PackedSections":
        data = pickle.dumps(sections, 5)
        with self._lock:
            if self._compress is None:
                if len(self._samples) < DICT_SAMPLES and self._size + len(data) <= DICT_BYTES:
                    self._samples.append(data)
                    self._size += len(data)
                    from lz4.block import compress
                    return PackedSections(compress(data), None)
                self._make_dictionary()
            # copied to a bytes object of its own size: the compressor's output is allocated
            # at the input's bound and shrunk in place, which would leave every file's blob
            # pinning a freed chunk of the C heap between the small objects
            return PackedSections(bytes(memoryview(self._compress(data))), self)

    def _make_dictionary(self) -> None:
        import zstandard
        d = zstandard.ZstdCompressionDict(b"".join(self._samples) or b"\0",
                                          dict_type=zstandard.DICT_TYPE_RAWCONTENT)
        self._compress = zstandard.ZstdCompressor(level=LEVEL, dict_data=d, write_checksum=False,
                                                  write_dict_id=False, write_content_size=True).compress
        self._decompressor = zstandard.ZstdDecompressor(dict_data=d)
        self._samples = []

    def unpack(self, blob: bytes) -> dict[str, Any]:
        with self._lock:
            data = self._decompressor.decompress(blob)
        return pickle.loads(data)


class PackedSections:
    """A file's sections as packed bytes (``packer`` None: LZ4 alone)."""

    __slots__ = ("blob", "packer")

    def __init__(self, blob: bytes, packer: SectionPacker | None):
        self.blob = blob
        self.packer = packer

    def open(self) -> dict[str, Any]:
        if self.packer is not None:
            return self.packer.unpack(self.blob)
        from lz4.block import decompress
        return pickle.loads(decompress(self.blob))

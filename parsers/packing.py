"""Packed sections: the engine sections (and, for the window, the unit arrays and unit
facts) of many similar files kept as small byte strings while a big scan runs
(FileEntry.pack), opened again on demand.

A file's sections are pickled, then compressed with zstd against a dictionary made of
the first files' own pickles (zstd "raw content" dictionaries): the sections of the
files of one data dir share their keys, their classes and most of their values, so a
file's 750-byte pickle packs to tens or a few hundred bytes, in microseconds.  The
first files, whose pickles make the dictionary, are kept LZ4-compressed.

While the scan runs, a packed value read is opened for good (an engine's cross-file step
may change it).  Once the scan has ended, :func:`settle` packs every file's values again
and marks the packers settled: from then on a read gets a fresh copy (the last
:data:`OPEN_CACHE` opened are kept, so a loop reading one file's values several times opens
them once), and what the views, the tree or a what-if read over 100,000 files is let go
again: the window's memory stays what the packed data dir takes.
"""
from __future__ import annotations

import pickle
import threading
from collections import OrderedDict
from typing import Any

#: pickles that make the dictionary, at most, and its size at most
DICT_SAMPLES = 8
DICT_BYTES = 32 << 10
#: zstd level: 1 is fastest, and the dictionary does the work
LEVEL = 1
#: packed values opened once settled, kept for the next reads (a file's units read a few
#: times in a row by one view or step)
OPEN_CACHE = 64


class SectionPacker:
    """Packs and opens the sections of one scan's files (one packer per file list)."""

    def __init__(self) -> None:
        self._samples: list[bytes] = []
        self._size = 0
        self._compress = None
        self._decompressor = None
        self._lock = threading.Lock()          # zstd objects are not for concurrent use
        #: the scan has ended (:func:`settle`): reads get fresh copies, the value stays packed
        self.settled = False

    def pack(self, sections: Any, decode=None) -> "PackedSections":
        """``sections`` (any picklable value: a file's sections, its unit array, its unit
        facts) packed; raises what pickling raises.  ``decode``, when given, turns the
        unpickled value back into the one read (arrays are packed as their bytes: numpy's
        own unpickling costs ~10 us an array)."""
        data = pickle.dumps(sections, 5)
        with self._lock:
            if self._compress is None:
                if len(self._samples) < DICT_SAMPLES and self._size + len(data) <= DICT_BYTES:
                    self._samples.append(data)
                    self._size += len(data)
                    from lz4.block import compress
                    return PackedSections(compress(data), self, False, decode)
                self._make_dictionary()
            # copied to a bytes object of its own size: the compressor's output is allocated
            # at the input's bound and shrunk in place, which would leave every file's blob
            # pinning a freed chunk of the C heap between the small objects
            return PackedSections(bytes(memoryview(self._compress(data))), self, True, decode)

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
    """A file's sections (or another of its values) as packed bytes: against the
    packer's dictionary, or LZ4 alone (``dictionary`` False: the dictionary's samples)."""

    __slots__ = ("blob", "packer", "dictionary", "decode", "summary")

    def __init__(self, blob: bytes, packer: SectionPacker, dictionary: bool = True, decode=None):
        self.blob = blob
        self.packer = packer
        self.dictionary = dictionary
        self.decode = decode
        #: what readers of every file ask without opening it (model.FileSummary), or None
        self.summary = None

    def open(self) -> Any:
        """A fresh copy of the value."""
        if self.dictionary:
            value = self.packer.unpack(self.blob)
        else:
            from lz4.block import decompress
            value = pickle.loads(decompress(self.blob))
        return value if self.decode is None else self.decode(value)

    def open_cached(self) -> Any:
        """The value, from the cache of the last :data:`OPEN_CACHE` opened (settled values:
        nothing changes them any more)."""
        with _cache_lock:
            hit = _opened.get(id(self))
            if hit is not None and hit[0] is self:
                _opened.move_to_end(id(self))
                return hit[1]
        value = self.open()
        with _cache_lock:
            _opened[id(self)] = (self, value)
            while len(_opened) > OPEN_CACHE:
                _opened.popitem(last=False)
        return value


_opened: "OrderedDict[int, tuple[PackedSections, Any]]" = OrderedDict()
_cache_lock = threading.Lock()


def clear_cache() -> None:
    """Let go of the values opened since the scan was settled."""
    with _cache_lock:
        _opened.clear()


def settle(entries, packer: SectionPacker | None = None, units: bool = True) -> SectionPacker:
    """The scan of ``entries`` has ended: every file's sections (and, with ``units``, its
    unit array and unit facts where small) are packed again, or for the first time, and
    every packer they use is settled, so that reads from now on leave them packed."""
    packer = packer or SectionPacker()
    packers = {id(packer): packer}
    for entry in entries:
        entry.pack(packer, units)
        for p in entry.packers():
            packers.setdefault(id(p), p)
    for p in packers.values():
        p.settled = True
    return packer

"""The MANIFEST: version edits replayed into the live SST files per column family
and level (RocksDB db/version_edit.h ``Tag``, ``NewFileCustomTag``,
db/version_edit.cc ``VersionEdit::DecodeFrom``, ``DecodeNewFile4From``;
db/version_set.cc ``VersionSet::Recover``). ``CURRENT`` names the MANIFEST in use."""
from __future__ import annotations

from dataclasses import dataclass, field

from .coding import CodingError, slice_, varint, varint32
from .logreader import LogProblem, iter_records

kComparator, kLogNumber, kNextFileNumber, kLastSequence, kCompactCursor = 1, 2, 3, 4, 5
kDeletedFile, kNewFile, kPrevLogNumber, kMinLogNumberToKeep = 6, 7, 9, 10
kNewFile2, kNewFile3, kNewFile4 = 100, 102, 103
kColumnFamily, kColumnFamilyAdd, kColumnFamilyDrop, kMaxColumnFamily = 200, 201, 202, 203
kInAtomicGroup = 300
kBlobFileAddition, kBlobFileGarbage = 400, 401
#: a tag with this bit can be skipped by readers that do not know it (length-prefixed)
kTagSafeIgnoreMask = 1 << 13
kDbId = kTagSafeIgnoreMask + 1
#: NewFileCustomTag
kTerminate, kNeedCompaction, kPathId = 1, 2, 65
kOldestAncesterTime, kFileCreationTime, kTemperature = 5, 6, 9
#: a custom field with this bit must be understood (kCustomTagNonSafeIgnoreMask)
kCustomTagNonSafeIgnoreMask = 1 << 6
_KNOWN_NONSAFE = {kPathId}


class ManifestError(Exception):
    def __init__(self, message: str, offset: int):
        self.offset = offset
        super().__init__(message)


@dataclass
class LiveFile:
    number: int
    level: int
    cf_id: int
    size: int
    smallest: bytes = b""
    largest: bytes = b""
    smallest_seqno: int = 0
    largest_seqno: int = 0
    path_id: int = 0
    oldest_ancester_time: int = 0
    file_creation_time: int = 0

    @property
    def name(self) -> str:
        return f"{self.number:06d}.sst"


@dataclass
class ColumnFamily:
    id: int
    name: str
    dropped: bool = False


@dataclass
class Manifest:
    """The last version the MANIFEST describes."""

    column_families: dict[int, ColumnFamily] = field(default_factory=dict)
    files: dict[int, LiveFile] = field(default_factory=dict)      # live SSTs by number
    comparator: str = ""
    db_id: str = ""
    log_number: int = 0
    next_file_number: int = 0
    last_sequence: int = 0
    max_column_family: int = 0
    edits: int = 0
    problems: list[LogProblem] = field(default_factory=list)

    def levels(self, cf_id: int) -> dict[int, list[LiveFile]]:
        out: dict[int, list[LiveFile]] = {}
        for lf in self.files.values():
            if lf.cf_id == cf_id:
                out.setdefault(lf.level, []).append(lf)
        return {k: sorted(v, key=lambda x: x.number) for k, v in sorted(out.items())}

    def cf_name(self, cf_id: int) -> str:
        cf = self.column_families.get(cf_id)
        return cf.name if cf else f"cf#{cf_id}"


def _new_file4_fields(buf, p: int, lf: LiveFile, at: int) -> int:
    while True:
        tag, p = varint32(buf, p)
        if tag == kTerminate:
            return p
        value, p = slice_(buf, p)
        if tag == kPathId:
            if len(value) != 1:
                raise ManifestError("path id field is not one byte", at)
            lf.path_id = value[0]
        elif tag == kOldestAncesterTime:
            lf.oldest_ancester_time = varint(value, 0)[0] if value else 0
        elif tag == kFileCreationTime:
            lf.file_creation_time = varint(value, 0)[0] if value else 0
        elif tag & kCustomTagNonSafeIgnoreMask and tag not in _KNOWN_NONSAFE:
            raise ManifestError(f"new-file field {tag} that readers must understand and this one does not", at)


def apply_edit(m: Manifest, buf: bytes, at: int) -> None:
    """VersionEdit::DecodeFrom, applied to ``m`` at once (``at``: the record's file offset)."""
    p = 0
    n = len(buf)
    cf = 0
    added: list[LiveFile] = []
    deleted: list[tuple[int, int]] = []
    cf_add: str | None = None
    cf_drop = False
    try:
        while p < n:
            tag, p = varint32(buf, p)
            if tag == kComparator:
                v, p = slice_(buf, p)
                m.comparator = v.decode("utf-8", "replace")
            elif tag in (kLogNumber, kPrevLogNumber, kNextFileNumber, kLastSequence, kMinLogNumberToKeep):
                v, p = varint(buf, p)
                if tag == kLogNumber:
                    m.log_number = v
                elif tag == kNextFileNumber:
                    m.next_file_number = v
                elif tag == kLastSequence:
                    m.last_sequence = v
            elif tag == kCompactCursor:
                _, p = varint32(buf, p)
                _, p = slice_(buf, p)
            elif tag == kDeletedFile:
                level, p = varint32(buf, p)
                num, p = varint(buf, p)
                deleted.append((level, num))
            elif tag in (kNewFile, kNewFile2, kNewFile3, kNewFile4):
                level, p = varint32(buf, p)
                num, p = varint(buf, p)
                path_id = 0
                if tag == kNewFile3:
                    path_id, p = varint32(buf, p)
                size, p = varint(buf, p)
                smallest, p = slice_(buf, p)
                largest, p = slice_(buf, p)
                lf = LiveFile(num & 0x3FFFFFFFFFFFFFFF, level, 0, size, smallest, largest, path_id=path_id)
                if tag != kNewFile:
                    lf.smallest_seqno, p = varint(buf, p)
                    lf.largest_seqno, p = varint(buf, p)
                if tag == kNewFile4:
                    p = _new_file4_fields(buf, p, lf, at)
                added.append(lf)
            elif tag == kColumnFamily:
                cf, p = varint32(buf, p)
            elif tag == kColumnFamilyAdd:
                v, p = slice_(buf, p)
                cf_add = v.decode("utf-8", "replace")
            elif tag == kColumnFamilyDrop:
                cf_drop = True
            elif tag == kMaxColumnFamily:
                m.max_column_family, p = varint32(buf, p)
            elif tag == kInAtomicGroup:
                _, p = varint32(buf, p)
            elif tag in (kBlobFileAddition, kBlobFileGarbage):
                for _ in range(3):
                    _, p = varint(buf, p)
                if tag == kBlobFileAddition:
                    _, p = slice_(buf, p)
                    _, p = slice_(buf, p)
                while True:
                    t, p = varint32(buf, p)
                    if t == kTerminate:
                        break
                    _, p = slice_(buf, p)
            elif tag & kTagSafeIgnoreMask:
                v, p = slice_(buf, p)
                if tag == kDbId:
                    m.db_id = v.decode("utf-8", "replace")
            else:
                raise ManifestError(f"unknown version edit tag {tag}", at)
    except CodingError as e:
        raise ManifestError(f"version edit cut short: {e}", at) from None
    m.edits += 1
    if cf_add is not None:
        m.column_families[cf] = ColumnFamily(cf, cf_add)
    if cf_drop:
        if cf in m.column_families:
            m.column_families[cf].dropped = True
        for num in [k for k, v in m.files.items() if v.cf_id == cf]:
            del m.files[num]
    for level, num in deleted:
        lf = m.files.get(num)
        if lf is not None and lf.cf_id == cf and lf.level == level:
            del m.files[num]
    for lf in added:
        lf.cf_id = cf
        m.files[lf.number] = lf


def read_manifest(buf) -> Manifest:
    """Replay every version edit of a MANIFEST's bytes; problems are collected, not raised."""
    m = Manifest()
    m.column_families[0] = ColumnFamily(0, "default")
    for at, payload in iter_records(buf, m.problems):
        try:
            apply_edit(m, payload, at)
        except ManifestError as e:
            m.problems.append(LogProblem(str(e), e.offset))
    m.column_families = {k: v for k, v in m.column_families.items() if not v.dropped}
    return m

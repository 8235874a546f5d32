"""``OPTIONS-NNNNNN`` files: the options each column family was opened with
(RocksDB options/options_parser.cc ``RocksDBOptionsParser::Parse``: INI-like
sections ``[Version]``, ``[DBOptions]``, ``[CFOptions "name"]``,
``[TableOptions/BlockBasedTable "name"]``; ``name=value`` lines, ``#`` comments),
and the compression each level is configured to use
(db/column_family.cc / compaction/compaction_picker.cc ``GetCompressionType``)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .compression import OPTION_NAMES, kDisableCompressionOption, kSnappyCompression, name_of

_SECTION = re.compile(r'^\[(?P<kind>[^\]" ]+)(?:\s+"(?P<name>(?:[^"\\]|\\.)*)")?\s*\]$')
MAX_OPTIONS_BYTES = 16 << 20


class OptionsError(Exception):
    def __init__(self, message: str, line: int):
        self.line = line
        super().__init__(f"line {line}: {message}")


@dataclass
class CfOptions:
    name: str
    cf: dict[str, str] = field(default_factory=dict)
    table: dict[str, str] = field(default_factory=dict)
    table_factory: str = ""

    def _ctype(self, key: str, default: int) -> int:
        v = self.cf.get(key)
        if v is None or v == "":
            return default
        if v not in OPTION_NAMES:
            raise OptionsError(f"{key}={v}: unknown compression", 0)
        return OPTION_NAMES[v]

    @property
    def compression(self) -> int:
        return self._ctype("compression", kSnappyCompression)

    @property
    def bottommost_compression(self) -> int:
        return self._ctype("bottommost_compression", kDisableCompressionOption)

    @property
    def compression_per_level(self) -> list[int]:
        v = self.cf.get("compression_per_level", "")
        return [OPTION_NAMES.get(x, -1) for x in v.split(":")] if v else []

    @property
    def num_levels(self) -> int:
        return int(self.cf.get("num_levels", "7") or 7)

    @property
    def dynamic_level_bytes(self) -> bool:
        return self.cf.get("level_compaction_dynamic_level_bytes", "false") == "true"

    @property
    def block_size(self) -> int:
        return int(self.table.get("block_size", "4096") or 4096)

    @property
    def format_version(self) -> int:
        return int(self.table.get("format_version", "5") or 5)

    def compression_level(self, bottommost: bool = False) -> int:
        """``level`` of compression_opts (32767: the codec's default)."""
        opts = self.cf.get("bottommost_compression_opts" if bottommost else "compression_opts", "")
        m = re.search(r"(?:^|[{;])level=(-?\d+)", opts)
        return int(m.group(1)) if m else 32767

    def configured(self, level: int, base_level: int | None = None, bottommost: bool = False) -> int:
        """GetCompressionType: the codec a file written to ``level`` gets (``bottommost``:
        the output level is the last non-empty one; ``base_level``: the dynamic base)."""
        if bottommost and self.bottommost_compression != kDisableCompressionOption:
            return self.bottommost_compression
        per = self.compression_per_level
        if per:
            if self.dynamic_level_bytes and level > 0 and base_level is not None:
                idx = max(0, level - base_level + 1)
            else:
                idx = level
            idx = min(max(idx, 0), len(per) - 1)
            return per[idx]
        return self.compression


@dataclass
class OptionsFile:
    version: dict[str, str] = field(default_factory=dict)
    db: dict[str, str] = field(default_factory=dict)
    cfs: dict[str, CfOptions] = field(default_factory=dict)

    @property
    def rocksdb_version(self) -> str:
        return self.version.get("rocksdb_version", "")


def read_options(text: str) -> OptionsFile:
    """Parse an OPTIONS file; an unparsable line raises :class:`OptionsError` with its number."""
    out = OptionsFile()
    current: dict[str, str] | None = None
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            m = _SECTION.match(line)
            if not m:
                raise OptionsError(f"malformed section header {line[:60]!r}", no)
            kind, name = m.group("kind"), m.group("name")
            if name is not None:
                name = re.sub(r"\\(.)", r"\1", name)
            if kind == "Version":
                current = out.version
            elif kind == "DBOptions":
                current = out.db
            elif kind == "CFOptions":
                cf = out.cfs.setdefault(name or "default", CfOptions(name or "default"))
                current = cf.cf
            elif kind.startswith("TableOptions/"):
                cf = out.cfs.setdefault(name or "default", CfOptions(name or "default"))
                cf.table_factory = kind.split("/", 1)[1]
                current = cf.table
            else:
                current = {}
            continue
        if "=" not in line or current is None:
            raise OptionsError(f"expected name=value, got {line[:60]!r}", no)
        k, v = line.split("=", 1)
        current[k.strip()] = v.strip()
    if not out.version:
        raise OptionsError("no [Version] section", 1)
    return out


def level_plan_text(cf: CfOptions) -> str:
    """Configured compression per level, e.g. ``L0 NoCompression, L1-L4 Snappy, bottom ZSTD``."""
    parts = [f"L{lv} {name_of(cf.configured(lv))}" for lv in range(cf.num_levels)]
    if cf.bottommost_compression != kDisableCompressionOption:
        parts.append(f"bottommost {name_of(cf.bottommost_compression)}")
    return ", ".join(parts)

"""The codec advisor: per target, the smallest codec, the fastest to decode
within 5% of the smallest, and the current one, with the DDL a DBA would run.
"""
from __future__ import annotations

from typing import Any

from .registry import parse_codec

#: "within 5% of the smallest"
WITHIN = 0.05

#: MariaDB innodb_compression_algorithm values (fsp0types.h PAGE_*_ALGORITHM)
MARIADB_ALGOS = {"zlib", "lz4", "lzma", "bzip2", "snappy"}
#: TokuDB ROW_FORMAT values (ha_tokudb: tokudb_zlib, tokudb_quicklz, tokudb_lzma, tokudb_snappy, ...)
TOKUDB_ROW_FORMATS = {"zlib": "tokudb_zlib", "lzma": "tokudb_lzma", "snappy": "tokudb_snappy",
                      "none": "tokudb_uncompressed", "quicklz": "tokudb_quicklz", "zstd": "tokudb_zstd"}


def _q(name: str | None) -> str:
    return f"`{name}`" if name else "`?`"


def ddl_for(target, codec_name: str, model: str) -> str:
    """The statement that would store ``target`` with ``codec_name`` under ``model``."""
    try:
        codec = parse_codec(codec_name)
    except ValueError:
        return f"-- {codec_name}: unknown codec"
    info = target.info or {}
    if target.engine == "innodb":
        table = f"{_q(info.get('database'))}.{_q(info.get('table'))}"
        if "row_compressed" in model:
            kbs = model.split("kbs")[1].split("k")[0] if "kbs" in model else "8"
            return f"ALTER TABLE {table} ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE={kbs};"
        if info.get("layout") == "mysql":
            if codec.family not in MYSQL_ALGOS | {"none"}:
                return f"-- {codec.name}: MySQL page compression has zlib and lz4 only; shown as a what-if only"
            algo = "none" if codec.family == "none" else codec.family
            return f"ALTER TABLE {table} COMPRESSION='{algo}'; OPTIMIZE TABLE {table};"
        if codec.family == "none":
            return f"ALTER TABLE {table} PAGE_COMPRESSED=0;"
        if codec.family not in MARIADB_ALGOS:
            return (f"-- {codec.name}: MariaDB/MySQL page compression has no {codec.family}; "
                    f"shown as a what-if only")
        level = f" PAGE_COMPRESSION_LEVEL={codec.level}" if codec.family in ("zlib", "lzma") and codec.level \
            else ""
        return (f"SET GLOBAL innodb_compression_algorithm='{codec.family}'; "
                f"ALTER TABLE {table} PAGE_COMPRESSED=1{level};")
    if target.engine == "clickhouse":
        chain = codec.ch_chain or codec.name
        db, table, col = info.get("database"), info.get("table"), info.get("column")
        if col is None:
            return (f"-- per column: ALTER TABLE {db}.{table} MODIFY COLUMN <column> <type> CODEC({chain}); "
                    f"then OPTIMIZE TABLE {db}.{table} FINAL")
        typ = f" {info['type']}" if info.get("type") else ""
        return f"ALTER TABLE {db}.{table} MODIFY COLUMN {col}{typ} CODEC({chain});"
    if target.engine == "tokudb":
        table = info.get("table") or f"{info.get('database')}.?"
        fmt = TOKUDB_ROW_FORMATS.get(codec.family)
        if fmt is None:
            return f"-- {codec.name}: TokuDB has no {codec.family} (what-if only)"
        return f"ALTER TABLE {table} ROW_FORMAT={fmt};"
    return ""


def _decode_speed(r) -> float:
    return float(r.decompress_mb_s or 0.0)


#: MySQL COMPRESSION= values (mysql-server storage/innobase/os/file.cc: Compression::ZLIB, LZ4)
MYSQL_ALGOS = {"zlib", "lz4"}


def available(engine: str, codec_name: str, layout: str | None = None) -> bool:
    """Whether the engine itself can write ``codec_name`` (advice is limited to those)."""
    try:
        codec = parse_codec(codec_name)
    except ValueError:
        return False
    if engine == "innodb":
        algos = MYSQL_ALGOS if layout == "mysql" else MARIADB_ALGOS
        return codec.family in algos or codec.family == "none"
    if engine == "tokudb":
        return codec.family in TOKUDB_ROW_FORMATS
    if engine == "clickhouse":
        return codec.ch_chain is not None
    return True


def advise(targets: list) -> list[dict[str, Any]]:
    """Advice entries for the JSON: smallest, fastest within 5%, current, per target.

    Only codecs the engine can write are advised (a zstd projection for
    InnoDB stays in the results as a what-if but is not advice).
    """
    out: list[dict[str, Any]] = []
    for t in targets:
        if t.engine == "tokudb" and not (t.info or {}).get("table"):
            continue      # engine-internal dictionaries (tokudb.directory, ...): no table, no DDL to give
        layout = (t.info or {}).get("layout")
        rs = [r for r in t.results if r.model == t.primary_model and available(t.engine, r.codec, layout)]
        if not rs:
            continue
        smallest = min(rs, key=lambda r: (r.estimate.projected, -_decode_speed(r)))
        bound = smallest.estimate.projected * (1 + WITHIN)
        near = [r for r in rs if r.estimate.projected <= bound]
        fastest = max(near, key=lambda r: (_decode_speed(r), -r.estimate.projected))
        current = next((r for r in rs if r.codec == t.current_codec), None)
        picks = [("smallest", smallest), ("fastest_decode_within_5pct", fastest)]
        if current is not None:
            picks.append(("current", current))
        for choice, r in picks:
            proj = int(round(r.estimate.projected))
            out.append({"target": t.target, "codec": r.codec, "projected_bytes": proj,
                        "saving_bytes": int(t.current_bytes) - proj,
                        "ddl": ddl_for(t, r.codec, r.model), "choice": choice, "model": r.model,
                        "ci95": r.estimate.ci95(), "decompress_mb_s": round(_decode_speed(r), 1)})
    return out


__all__ = ["advise", "ddl_for", "available"]

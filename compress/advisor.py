"""The codec advisor: per target, the smallest codec, the fastest to decode
within 5% of the smallest, and the current one, with the DDL a DBA would run
(the engines' own: ``compress/engines/``).
"""
from __future__ import annotations

from typing import Any

from . import engines
from .registry import parse_codec

#: "within 5% of the smallest"
WITHIN = 0.05


def ddl_for(target, codec_name: str, model: str) -> str:
    """The statement that would store ``target`` with ``codec_name`` under ``model``."""
    try:
        codec = parse_codec(codec_name)
    except ValueError:
        return f"-- {codec_name}: unknown codec"
    engine = engines.get(target.engine)
    return engine.ddl(target, codec, model) if engine is not None else ""


def _decode_speed(r) -> float:
    return float(r.decompress_mb_s or 0.0)


def available(engine: str, codec_name: str, layout: str | None = None) -> bool:
    """Whether the engine itself can write ``codec_name`` (advice is limited to those)."""
    try:
        codec = parse_codec(codec_name)
    except ValueError:
        return False
    w = engines.get(engine)
    return w.available(codec, layout) if w is not None else True


def advise(targets: list) -> list[dict[str, Any]]:
    """Advice entries for the JSON: smallest, fastest within 5%, current, per target.

    Only codecs the engine can write are advised (a zstd projection for
    InnoDB stays in the results as a what-if but is not advice).
    """
    out: list[dict[str, Any]] = []
    for t in targets:
        w = engines.get(t.engine)
        if w is not None and not w.advisable(t):
            continue      # e.g. TokuDB's engine-internal dictionaries: no table, no DDL to give
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

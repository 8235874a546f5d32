"""Human-readable sizes (KiB/MiB/GiB), shared by the CLI, the views and reports."""
from __future__ import annotations


def human_bytes(n: float | int | None, precision: int = 1) -> str:
    """1536 -> '1.5 KiB'; binary units, as du -h and the engines' docs use."""
    if n is None:
        return "-"
    n = float(n)
    sign = "-" if n < 0 else ""
    n = abs(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            if unit == "B":
                return f"{sign}{int(n)} B"
            return f"{sign}{n:.{precision}f} {unit}"
        n /= 1024
    return f"{sign}{n:.{precision}f} PiB"


def percent(part: float, whole: float) -> str:
    return "-" if not whole else f"{100.0 * part / whole:.1f}%"


_AXIS_UNITS = ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"))


def axis_unit(maxval: float) -> tuple[float, str]:
    """(scale, unit) for a chart axis whose largest value is ``maxval`` bytes."""
    for scale, unit in _AXIS_UNITS:
        if maxval >= scale:
            return float(scale), unit
    return 1.0, "B"


def short_label(name: str, n: int, tail: int) -> str:
    """``name`` cut to ``n`` characters for an axis label: its start, "…", and its
    last ``tail`` characters (``tail`` 0: the start and "…" only)."""
    if len(name) <= n:
        return name
    return name[: n - tail - 1] + "…" + (name[-tail:] if tail else "")


def human_speed(mb_s: float | None) -> str:
    """A measured speed in MB/s as a whole number, '-' where none was measured."""
    return "-" if mb_s is None else f"{mb_s:,.0f}"

"""Extent map speed, offscreen: image build and pan frame rate for 1M and 10M
synthetic pages (a benchmark that prints numbers, not a timed unit test).

    .venv/bin/python tests/benchmarks/bench_extentmap.py [1000000 10000000]

Measures, per size: building the units' colour mode (numpy), the RGBA image
(one LUT fancy-index), the view's first paint, a colour-mode switch, an index
highlight, frames per second while panning at a readable zoom (64 extents in
view) and while panning zoomed out (whole file in view), and the process RSS.
"""
from __future__ import annotations

import os
import resource
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent))

from PySide6.QtWidgets import QApplication  # noqa: E402

app = QApplication.instance() or QApplication([])

from parsers.model import Dataset  # noqa: E402
from parsers.tree import build_tree  # noqa: E402
from synthetic_innodb import synthetic_entry  # noqa: E402
from viz.extentmap import ExtentMapView, MapData  # noqa: E402


def rss_mb() -> float:
    """Peak resident set size of the process (MB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cur_rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def pan_fps(view: ExtentMapView, rows_in_view: float, frames: int = 60) -> float:
    vb = view.vb
    total = view.data.rows
    step = max(1.0, rows_in_view / 20)
    y = 0.0
    view.show_extents(0, rows_in_view)
    view.glw.grab()
    t0 = time.perf_counter()
    for _ in range(frames):
        y = (y + step) % max(1.0, total - rows_in_view)
        view.show_extents(y, y + rows_in_view)
        app.processEvents()
        view.glw.grab()          # one full repaint of the map, as a frame
    return frames / (time.perf_counter() - t0)


def bench(n: int) -> None:
    t = time.perf_counter()
    entry = synthetic_entry(n, compressed=False)
    t_units = time.perf_counter() - t
    import gc
    gc.collect()
    rss_units = cur_rss_mb()
    t = time.perf_counter()
    data = MapData(entry)
    res = data.mode("type")
    t_mode = time.perf_counter() - t
    t = time.perf_counter()
    img = data.rgba(res)
    t_rgba = time.perf_counter() - t
    del img

    ds = Dataset(root="/bench", files=[entry])
    root = build_tree(ds)
    view = ExtentMapView()
    view.resize(1400, 900)
    view.show()
    app.processEvents()
    t = time.perf_counter()
    view.set_dataset(ds, root)
    view.glw.grab()
    t_first = time.perf_counter() - t
    t = time.perf_counter()
    view.set_mode("lsn")
    view.glw.grab()
    t_switch = time.perf_counter() - t
    t = time.perf_counter()
    view.highlight_index(41)
    view.glw.grab()
    t_hl = time.perf_counter() - t
    view.clear_highlight()
    view.set_mode("type")
    fps_near = pan_fps(view, 64)
    fps_far = pan_fps(view, float(data.rows), frames=30)
    rss_view = cur_rss_mb()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"{n:>11,} pages ({data.rows:,} extents): units {t_units:.2f}s (synthetic, not timed by the view) | "
          f"mode {t_mode * 1000:.0f} ms | RGBA image {t_rgba * 1000:.0f} ms | first paint {t_first:.2f}s | "
          f"mode switch {t_switch:.2f}s | index highlight {t_hl:.2f}s | pan {fps_near:.0f} fps (64 extents in view), "
          f"{fps_far:.0f} fps (whole file) | RSS {rss_units:.0f} MB with the units "
          f"({entry.units.nbytes / 2**20:.0f} MB of them), {rss_view:.0f} MB with the view; peak {rss_mb():.0f} MB")
    view.close()
    view.deleteLater()
    app.processEvents()


if __name__ == "__main__":
    sizes = [int(a) for a in sys.argv[1:]] or [1_000_000, 10_000_000]
    for n in sizes:
        bench(n)

"""Extent map speed, offscreen (a benchmark that prints numbers, not a timed unit test).

1. First paint of a real tablespace, the way a user gets it: the window opens the
   file (File > Open), the scan worker reads the page headers in growing chunks
   and the extent map fills in as they arrive; "first paint" is the time from
   ``open_path()`` to the first map rendered with pages on it (a ``grab()`` of the
   map widget after its first ``preview_drawn``), "complete" the time until the
   scan's dataset (free pages, indexes, fill) is drawn.  Warm (file in the page
   cache) and cold (dropped first with posix_fadvise(POSIX_FADV_DONTNEED), no
   root needed).  The tablespace: ``--ibd PATH``, else the largest ``*.ibd``
   under /tmp/xray2g or /tmp/innodb-bench.  A 2.2 GB one written by MariaDB:

       mariadb-install-db --defaults-file=my.cnf   # datadir, socket, skip-networking
       mariadbd --defaults-file=my.cnf &
       CREATE TABLE bench.big (id BIGINT PRIMARY KEY, k INT, pad VARCHAR(900), KEY k(k));
       INSERT INTO bench.big SELECT seq, seq % 100003, REPEAT(MD5(seq), 25) FROM seq_1_to_2300000;
       SET GLOBAL innodb_fast_shutdown=0; SHUTDOWN;

2. For 1M and 10M synthetic pages (units already in memory): building the
   colour mode (numpy), the RGBA image (one LUT fancy-index), set_dataset up to
   the first grab, a colour-mode switch, an index highlight, frames per second
   while panning at a readable zoom (64 extents in view) and zoomed out (whole
   file in view), and the process RSS.

    .venv/bin/python tests/benchmarks/bench_extentmap.py [--ibd PATH] [--repeat 3] [1000000 10000000]
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

from dbxray.parsers.model import Dataset  # noqa: E402
from dbxray.parsers.scan import release_free_memory  # noqa: E402
from dbxray.parsers.tree import build_tree  # noqa: E402
from synthetic_innodb import synthetic_entry  # noqa: E402
from dbxray.viz.extentmap import ExtentMapView, MapData  # noqa: E402


def rss_mb() -> float:
    """Peak resident set size of this process image (MB): VmHWM, which starts again at
    exec (ru_maxrss carries the parent's peak into a child started by fork + exec)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def reset_peak() -> bool:
    """Start VmHWM again from the current RSS (Linux: 5 > /proc/self/clear_refs)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


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
    release_free_memory()           # as parsers.scan.scan() does once its parsers ran
    rss_units = cur_rss_mb()
    units_peak = rss_mb()
    t = time.perf_counter()
    data = MapData(entry)
    res = data.mode("type")
    t_mode = time.perf_counter() - t
    t = time.perf_counter()
    img = data.rgba(res)
    t_rgba = time.perf_counter() - t
    del img, res, data          # the view builds its own
    release_free_memory()
    # the peak from here on is the window's (its tree and the view): making the synthetic units
    # is the parser's work, and the whole-file RGBA image timed above is made by the view only
    # for maps of up to CELL_LIMIT_ROWS extents (larger ones are coloured a window at a time)
    peak_reset = reset_peak()

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
    rss_type = cur_rss_mb()
    t = time.perf_counter()
    view.set_mode("lsn")
    view.glw.grab()
    t_switch = time.perf_counter() - t
    rss_lsn = cur_rss_mb()
    t = time.perf_counter()
    view.highlight_index(41)
    view.glw.grab()
    t_hl = time.perf_counter() - t
    rss_hl = cur_rss_mb()
    view.clear_highlight()
    view.set_mode("type")
    fps_near = pan_fps(view, 64)
    fps_far = pan_fps(view, float(view.data.rows), frames=30)
    rss_view = cur_rss_mb()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"{n:>11,} pages ({view.data.rows:,} extents): units {t_units:.2f}s (synthetic, not timed by the view) | "
          f"mode {t_mode * 1000:.0f} ms | RGBA image {t_rgba * 1000:.0f} ms | set_dataset to first grab "
          f"(units in memory) {t_first:.2f}s | "
          f"mode switch {t_switch:.2f}s | index highlight {t_hl:.2f}s | pan {fps_near:.0f} fps (64 extents in view), "
          f"{fps_far:.0f} fps (whole file) | RSS {rss_units:.0f} MB with the units "
          f"({entry.units.nbytes / 2**20:.0f} MB of them); with the view: {rss_type:.0f} MB (page types), "
          f"{rss_lsn:.0f} MB (LSN age), {rss_hl:.0f} MB (LSN age + an index highlighted), {rss_view:.0f} MB "
          f"after panning in page types; peak {rss_mb():.0f} MB while the tree and the view were built and used"
          + (f" (peak {units_peak:.0f} MB while the synthetic units were made, before)" if peak_reset else
             " (VmHWM could not be reset: this peak includes making the synthetic units)"))
    view.close()
    view.deleteLater()
    app.processEvents()


def default_ibd() -> Path | None:
    for d in (Path("/tmp/xray2g"), Path("/tmp/innodb-bench")):
        if d.is_dir():
            files = sorted(d.rglob("*.ibd"), key=lambda p: p.stat().st_size, reverse=True)
            if files:
                return files[0]
    return None


def drop_cache(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def first_paint(path: Path, cold: bool) -> tuple[float, int, float, float]:
    """(first paint s, pages on it, complete map s, scan s) for one open of ``path`` in the window."""
    from PySide6.QtCore import QSettings

    from dbxray.app.window import MainWindow
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        w = MainWindow(settings=QSettings(os.path.join(tmp, "s.ini"), QSettings.IniFormat))
        w.resize(1400, 860)
        w.show()
        for _ in range(5):
            app.processEvents()
        em = w.extent_map
        w.tabs.setCurrentWidget(em)
        drawn: list[int] = []
        loaded: list[float] = []
        em.preview_drawn.connect(lambda n: drawn.append(n))
        if cold:
            drop_cache(path)
        t0 = time.perf_counter()
        w.dataset_loaded.connect(lambda ds: loaded.append(time.perf_counter() - t0))
        w.open_path(str(path))
        t_first, pages = float("nan"), 0
        while not loaded:
            app.processEvents()
            if drawn and pages == 0:
                em.glw.grab()                       # the map rendered with the first chunks on it
                t_first, pages = time.perf_counter() - t0, drawn[0]
            time.sleep(0.001)
        app.processEvents()
        em.glw.grab()
        t_done = time.perf_counter() - t0
        w.close()
        w.deleteLater()
        app.processEvents()
        return t_first, pages, t_done, loaded[0]


def bench_first_paint(path: Path, repeat: int) -> None:
    size = path.stat().st_size
    print(f"first paint: {path} ({size / 1e9:.2f} GB, {size / 2**30:.2f} GiB), window 1400x860 offscreen, "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    for cold in (False, True):
        if not cold:
            first_paint(path, cold=False)           # warms the page cache and the imports
        rows = [first_paint(path, cold) for _ in range(repeat)]
        firsts = sorted(r[0] for r in rows)
        dones = sorted(r[2] for r in rows)
        print(f"  {'cold' if cold else 'warm'}: first paint {firsts[0]:.2f}-{firsts[-1]:.2f} s "
              f"(median {firsts[len(firsts) // 2]:.2f} s, {rows[0][1]:,} pages on it), complete map "
              f"{dones[0]:.1f}-{dones[-1]:.1f} s (full scan with checksums)")


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--ibd", type=Path, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-first-paint", action="store_true")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("sizes", nargs="*", type=int)
    args = ap.parse_args()
    if not args.no_first_paint:
        ibd = args.ibd or default_ibd()
        if ibd is None:
            print("first paint: no tablespace (--ibd PATH; see the docstring for a 2 GB one)", file=sys.stderr)
        else:
            bench_first_paint(ibd, args.repeat)
    sizes = args.sizes or [1_000_000, 10_000_000]
    if args.child or len(sizes) == 1 and args.no_first_paint:
        for n in sizes:
            bench(n)
    else:
        # each size in a fresh process: its RSS figures are then its own, not what an
        # earlier scan or map left in this one
        import subprocess
        for n in sizes:
            subprocess.run([sys.executable, __file__, "--child", "--no-first-paint", str(n)], check=False)

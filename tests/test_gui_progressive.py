"""Progressive extent map: the scan worker reads a tablespace's page headers in
chunks and the map fills in before the scan ends (real file, real window)."""
import time

import numpy as np
from PySide6.QtCore import QSettings

import dbxray.parsers.innodb.preview as preview
from dbxray.app.window import MainWindow
from dbxray.parsers.scan import scan


def test_header_preview_equals_the_scan(sparse_fixtures):
    """Every chunk's page types and LSNs are the FIL headers the scan reads; chunks cover
    every page once, in order."""
    path = sparse_fixtures / "innodb" / "16k" / "fx" / "t_deleted.ibd"
    got = []
    n = preview.header_preview(str(path), got.append, lambda: False)
    assert got[0]["kind"] == "begin" and got[-1] == {"kind": "end", "pages": n}
    assert got[0]["n_pages"] == n == 576 and got[0]["physical"] == 16384 and got[0]["path"] == "t_deleted.ibd"
    chunks = [c for c in got if c["kind"] == "chunk"]
    assert [c["start"] for c in chunks] == list(np.cumsum([0] + [len(c["types"]) for c in chunks[:-1]]))
    types = np.concatenate([c["types"] for c in chunks])
    lsn = np.concatenate([c["lsn"] for c in chunks])
    ds = scan(str(path))
    e = ds.files[0]
    assert np.array_equal(types, e.detail["innodb"]["type"]) and np.array_equal(lsn, e.units["lsn"])
    names = {}
    for c in chunks:
        names.update(c["names"])
    assert names[17855] == "FIL_PAGE_INDEX" and names[8] == "FIL_PAGE_TYPE_FSP_HDR"
    # cancelled: stops between chunks
    got2 = []
    preview.header_preview(str(path), got2.append, lambda: True)
    assert [c["kind"] for c in got2] == ["begin", "end"] and got2[-1]["pages"] == 0


def test_preview_target(sparse_fixtures):
    """The file the map shows first: the opened tablespace, or the largest one of a data dir."""
    d = sparse_fixtures / "innodb" / "16k"
    biggest = max(d.rglob("*.ibd"), key=lambda p: p.stat().st_size)
    assert preview.preview_target(str(d)) == str(biggest)
    one = d / "fx" / "t_dynamic.ibd"
    assert preview.preview_target(str(one)) == str(one)
    assert preview.preview_target(str(d / "fx" / "t_dynamic.frm")) is None      # not InnoDB pages
    assert preview.preview_target(str(sparse_fixtures / "clickhouse" / "datadir")) is None
    assert preview.preview_target(str(d / "missing")) is None


def test_map_fills_in_while_the_scan_runs(qtbot, tmp_path, sparse_fixtures, monkeypatch, artifacts_dir):
    path = sparse_fixtures / "innodb" / "16k" / "fx" / "t_deleted.ibd"
    monkeypatch.setattr(preview, "PREVIEW_CHUNKS", (64,))
    real = preview.header_preview

    def slow(p, emit, cancelled, root=None):       # a slow disk: 100 ms a chunk (40 ms let a busy CI paint late)
        def emit_slowly(part):
            emit(part)
            if part["kind"] == "chunk":
                time.sleep(0.1)
        return real(p, emit_slowly, cancelled, root=root)

    monkeypatch.setattr(preview, "header_preview", slow)
    w = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat))
    qtbot.addWidget(w)
    w.resize(1400, 860)
    w.show()
    em = w.extent_map
    seen = []

    def drawn(pages):
        res = em.result
        seen.append((pages, em.preview.n_pages, dict(zip(res.labels, res.counts.tolist()))))
        if len(seen) == 2:
            w.grab().save(str(artifacts_dir / "extentmap_progressive.png"))

    em.preview_drawn.connect(drawn)
    with qtbot.waitSignal(w.scan_done, timeout=60000):
        w.open_path(str(path))
    assert w.tabs.currentWidget() is em                  # one tablespace opened: the map is shown
    partial = [s for s in seen if s[0] < s[1]]
    assert len(partial) >= 2, seen                       # drawn several times before the last page
    pages, total, counts = partial[0]
    assert total == 576 and counts["not read yet"] == total - pages and sum(counts.values()) == total
    assert [s[0] for s in seen] == sorted(s[0] for s in seen)
    # the scan's dataset replaces the preview: free pages known, no "not read yet"
    assert em.preview is None and "not read yet" not in em.result.labels and "free (XDES)" in em.result.labels
    assert em.entry is w.dataset.files[0]


def test_sparse_terabyte_tablespace_preview_stops_at_the_data(tmp_path, sparse_fixtures):
    """A 1 TB sparse tablespace (a real file's pages, then a hole to 1 TB): the preview maps
    the data pages only, in a blink, as the scan does (the hole is never walked)."""
    src = sparse_fixtures / "innodb" / "16k" / "fx" / "t_dynamic.ibd"
    big = tmp_path / "big.ibd"
    data = src.read_bytes()
    with open(big, "wb") as fh:
        fh.write(data)
        fh.truncate(1 << 40)
    got = []
    t = time.perf_counter()
    n = preview.header_preview(str(big), got.append, lambda: False)
    assert n == len(data) // 16384 and got[0]["n_pages"] == n
    assert time.perf_counter() - t < 5

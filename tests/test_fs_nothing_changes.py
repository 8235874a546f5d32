"""A scan changes nothing, on every filesystem DBAs run: tmpfs, XFS with 4 KiB
and 1 KiB blocks, btrfs with compress-force=zstd (each made for the test; root
needed, as in CI).  Every fixture folder is copied in with its holes re-punched;
``scan``, ``whatif --sample all`` and ``report`` then leave every file's size,
mtime, st_blocks and hole list exactly as they were.  (On tmpfs a read through a
map over a hole allocates it: dbxray blanks holes in its maps with zero pages or
reads around them.)"""
from __future__ import annotations

import os
import shutil

import pytest

from fixtures_util import fixtures_dir, make_sparse_copy, MISSING
from fsmount import KINDS, MountUnavailable, mounted, peak_rss_kb

FOLDERS = ["innodb", "innodb-public", "innodb-mysql", "mariadb/datadir", "clickhouse/datadir", "tokudb"]


def allocation_state(root: str) -> dict:
    """Per file: size, mtime, st_blocks, the SEEK_HOLE list and, where the filesystem
    has FIEMAP, its extents (data / unwritten / hole).  (SEEK_HOLE on XFS, ext4 and
    btrfs reports cached zero pages over an unwritten extent as data: a read there, or
    the kernel's read-ahead next to one, would change it; dbxray reads around them and
    turns read-ahead off near them.)"""
    from dbxray.parsers.fileio import fiemap, list_holes
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = os.path.join(dirpath, name)
            if os.path.islink(p):
                continue
            st = os.stat(p)
            fd = os.open(p, os.O_RDONLY)
            try:
                ext = fiemap(fd, st.st_size)
                holes = list_holes(fd, st.st_size)
                extents = None if ext is None else [(e.offset, e.length, e.kind) for e in ext if e.kind != "data"]
            finally:
                os.close(fd)
            out[p] = (st.st_size, st.st_mtime_ns, st.st_blocks, holes, extents)
    return out


@pytest.fixture(scope="module", params=sorted(k for k in KINDS if k != "btrfs-zstd-heuristic"))
def fs_copy(request, tmp_path_factory):
    if fixtures_dir() is None:
        pytest.fail(MISSING, pytrace=False)
    work = tmp_path_factory.mktemp(f"fs-{request.param}")
    try:
        with mounted(request.param, work) as mp:
            root = make_sparse_copy(mp)
            # written back before the state is taken: XFS shows extents under writeback as
            # unwritten until their I/O completes
            os.sync()
            yield request.param, root
    except MountUnavailable as e:
        pytest.fail(f"cannot test on {request.param}: {e}", pytrace=False)


def test_scan_whatif_report_change_no_allocation(fs_copy, tmp_path, qapp):
    from dbxray.app.report import write_report
    from dbxray.compress.whatif import run_whatif
    from dbxray.parsers.scan import scan

    kind, root = fs_copy
    before = allocation_state(str(root))
    assert any(v[3] for v in before.values()), "the copy holds no hole: the test would prove nothing"
    for folder in FOLDERS:
        ds = scan(str(root / folder))
        # the cross-engine estimates read the same ARCHIVE spans as the row-stream model: left
        # out here to keep the four filesystems' runs short
        run_whatif(ds, ["zstd:3"], sample="all", seed=1, cross_engine=False)
        write_report(ds, str(tmp_path / "r.html"), whatif_sample=None)
    after = allocation_state(str(root))
    changed = {p: (before[p], after.get(p)) for p in before if after.get(p) != before[p]}
    assert not changed, f"{kind}: {len(changed)} file(s) changed, e.g. {next(iter(changed.items()))}"


def test_tmpfs_hole_not_faulted_by_sparse_terabyte(tmp_path):
    """A 1 TB sparse tablespace on tmpfs (a real page 0 and page 1, then nothing):
    the scan reads it without allocating a byte and with bounded memory."""
    if fixtures_dir() is None:
        pytest.fail(MISSING, pytrace=False)
    src = fixtures_dir() / "innodb" / "16k" / "fx" / "t_dynamic.ibd"
    try:
        with mounted("tmpfs", tmp_path) as mp:
            p = mp / "big.ibd"
            shutil.copyfile(src, p)
            with open(p, "r+b") as fh:
                fh.truncate(1 << 40)
            blocks = os.stat(p).st_blocks
            out, maxrss_kb = peak_rss_kb("import sys; from dbxray.parsers.scan import scan; "
                                         "print(len(scan(sys.argv[1]).files))", str(p))
            nfiles = int(out.split()[-1])
            assert nfiles == 1
            assert maxrss_kb < 400 * 1024, f"peak RSS {maxrss_kb} KiB for a 1 TB sparse file"
            assert os.stat(p).st_blocks == blocks
    except MountUnavailable as e:
        pytest.fail(f"cannot test on tmpfs: {e}", pytrace=False)


def test_tmpfs_many_holes_read_around(tmp_path, monkeypatch):
    """A file with more holes than are blanked in its map (page-compressed
    tablespaces of real size: one hole per page) is read around its holes:
    same page map, checksums verified, nothing allocated on tmpfs."""
    if fixtures_dir() is None:
        pytest.fail(MISSING, pytrace=False)
    import numpy as np
    from dbxray.parsers import fileio
    from dbxray.parsers.innodb.pagemap import build_page_map
    from fixtures_util import repunch_innodb
    try:
        with mounted("tmpfs", tmp_path) as mp:
            shutil.copytree(fixtures_dir() / "innodb" / "16k", mp / "innodb" / "16k")
            shutil.copy(fixtures_dir() / "innodb" / "manifest.json", mp / "innodb" / "manifest.json")
            repunch_innodb(mp)
            names = ["t_pc_zlib.ibd", "t_pc_lz4.ibd", "t_pc_legacy_zlib.ibd", "t_pc_lzma.ibd"]
            paths = [mp / "innodb" / "16k" / "fx" / n for n in names]
            before = {p: (os.stat(p).st_blocks, fileio.list_holes(os.open(p, os.O_RDONLY), os.stat(p).st_size))
                      for p in paths}
            assert all(len(h) > 3 for _b, h in before.values())

            def maps():
                out = {}
                for p in paths:
                    with fileio.ReadOnlyFile(str(p)) as f:
                        pm = build_page_map(f, str(p), verify_checksums=True)
                        out[p] = (f.hole_safe_map, pm)
                return out
            blanked = maps()
            monkeypatch.setattr(fileio, "_MAX_BLANKED_HOLES", 0)
            around = maps()
            for p in paths:
                assert blanked[p][0] is True and around[p][0] is False
                a, b = blanked[p][1], around[p][1]
                for name in ("type", "kind", "stored", "payload_len", "index_id", "checksum_ok", "corrupt", "in_hole"):
                    assert np.array_equal(getattr(a, name), getattr(b, name)), (p.name, name)
                assert b.checksum_ok.all() and a.errors == b.errors
                assert (os.stat(p).st_blocks, fileio.list_holes(os.open(p, os.O_RDONLY), os.stat(p).st_size)) \
                    == before[p], p.name
    except MountUnavailable as e:
        pytest.fail(f"cannot test on tmpfs: {e}", pytrace=False)


def test_tmpfs_preview_reads_no_hole(tmp_path, monkeypatch):
    """The progressive preview (page headers in chunks) over a file whose map keeps its
    holes (too many to blank): headers in a hole are zeros without a read; same
    page types as with a blanked map; nothing allocated on tmpfs."""
    if fixtures_dir() is None:
        pytest.fail(MISSING, pytrace=False)
    import numpy as np
    from dbxray.parsers import fileio
    from dbxray.parsers.innodb.preview import header_preview
    from fixtures_util import punch_hole, repunch_innodb
    try:
        with mounted("tmpfs", tmp_path) as mp:
            shutil.copytree(fixtures_dir() / "innodb" / "16k" / "fx", mp / "innodb" / "16k" / "fx")
            shutil.copy(fixtures_dir() / "innodb" / "manifest.json", mp / "innodb" / "manifest.json")
            repunch_innodb(mp)
            p = mp / "innodb" / "16k" / "fx" / "t_pc_zlib.ibd"
            punch_hole(p, 5 * 16384, 16384)            # a whole page, as MariaDB punches freed pages
            st0 = os.stat(p).st_blocks

            def types():
                got = []
                header_preview(str(p), lambda m: got.append(m["types"]) if m["kind"] == "chunk" else None,
                               lambda: False)
                return np.concatenate(got)
            blanked = types()
            monkeypatch.setattr(fileio, "_MAX_BLANKED_HOLES", 0)
            around = types()
            assert np.array_equal(blanked, around) and around[5] == 0
            assert os.stat(p).st_blocks == st0
    except MountUnavailable as e:
        pytest.fail(f"cannot test on tmpfs: {e}", pytrace=False)


def test_tmpfs_header_gather_through_data_map(tmp_path, monkeypatch):
    """Files of 4 MiB and more whose holes are blanked have their page headers gathered
    through a second, unblanked map (ReadOnlyFile.data_map: whole 2 MiB blocks next to a
    hole stay mapped by one PMD): the same page map as through the blanked map, and no
    hole allocated on tmpfs (the headers whose memory page touches a hole are read with
    pread around the holes, the pages in holes not at all).  Without checksums no step
    reads whole pages through a map, so the blanked map is never made at all."""
    if fixtures_dir() is None:
        pytest.fail(MISSING, pytrace=False)
    import numpy as np
    from dbxray.parsers import fileio
    from dbxray.parsers.innodb import pagemap
    from fixtures_util import punch_hole, repunch_innodb
    try:
        with mounted("tmpfs", tmp_path) as mp:
            shutil.copytree(fixtures_dir() / "innodb" / "16k" / "fx", mp / "innodb" / "16k" / "fx")
            shutil.copy(fixtures_dir() / "innodb" / "manifest.json", mp / "innodb" / "manifest.json")
            repunch_innodb(mp)
            p = mp / "innodb" / "16k" / "fx" / "t_deleted.ibd"
            # in the data (pages 0..35 and 64..113; the rest is holes already): a hole over
            # whole pages, one inside a page behind its header, one over a page's header only
            punch_hole(p, 70 * 16384, 3 * 16384)
            punch_hole(p, 80 * 16384 + 4096, 8192)
            punch_hole(p, 100 * 16384, 4096)
            state = lambda: (os.stat(p).st_blocks, fileio.list_holes(os.open(p, os.O_RDONLY), os.stat(p).st_size))
            before = state()
            assert os.stat(p).st_size >= pagemap._DATA_MAP_MIN and len(before[1]) >= 4
            calls = []
            orig = fileio.ReadOnlyFile.data_map
            monkeypatch.setattr(fileio.ReadOnlyFile, "data_map", lambda self: calls.append(1) or orig(self))

            def build(verify=True):
                with fileio.ReadOnlyFile(str(p)) as f:
                    pm = pagemap.build_page_map(f, str(p), verify_checksums=verify)
                    assert f.hole_safe_map if verify else f._mm is None
                    return pm
            unmapped = build(verify=False)
            assert calls, "the header gather did not use the data map"
            calls.clear()
            gathered = build()
            assert calls, "the header gather did not use the data map"
            for name in ("type", "kind", "lsn", "page_no", "index_id", "level", "n_recs", "fill", "zero",
                         "owner_index", "free", "seg_id"):
                assert np.array_equal(getattr(unmapped, name), getattr(gathered, name), equal_nan=True), name
            assert unmapped.roots == gathered.roots and unmapped.segments.keys() == gathered.segments.keys()
            monkeypatch.setattr(pagemap, "_DATA_MAP_MIN", 1 << 62)
            blanked = build()
            assert len(calls) == 1
            for name in ("type", "kind", "lsn", "page_no", "space_id", "index_id", "level", "n_recs", "fill",
                         "zero", "in_hole", "checksum_ok", "corrupt", "owner_index", "free"):
                assert np.array_equal(getattr(gathered, name), getattr(blanked, name), equal_nan=True), name
            assert gathered.errors == blanked.errors and gathered.roots == blanked.roots
            assert gathered.zero[70:73].all() and gathered.zero[100] and not gathered.zero[80]
            assert state() == before
    except MountUnavailable as e:
        pytest.fail(f"cannot test on tmpfs: {e}", pytrace=False)

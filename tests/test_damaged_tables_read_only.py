"""Issue 19's bad input, all in one data dir and through every reader that touches it: a
truncated ``.ARZ``, a corrupt deflate stream, an ARZ bomb (a 2 MB stream inflating to
2 GiB), a ``.MYI`` with impossible counts, an Aria page with a bad CRC and a ``.frm`` of
an unknown version. The scan, a what-if and the comparison each finish; every error names
its file and an offset; each damaged table is still placed (engine, database, table) with
its partial figures; the undamaged tables beside them keep theirs; and nothing is written:
no file under the data dir is opened for writing and every file's bytes, size, mtime and
allocation are the same after."""
from __future__ import annotations

import re
import shutil
import struct
import zlib

import pytest

from test_readonly import _state, spy_writes


def _patch(path, offset, data: bytes) -> None:
    b = bytearray(path.read_bytes())
    b[offset:offset + len(data)] = data
    path.write_bytes(bytes(b))


@pytest.fixture(scope="module")
def damaged(sparse_fixtures, tmp_path_factory):
    src = sparse_fixtures / "mariadb" / "datadir"
    root = tmp_path_factory.mktemp("dmg")
    arc, misc = root / "arc", root / "misc"
    arc.mkdir()
    misc.mkdir()
    raw = (src / "arc" / "lineorder_words.ARZ").read_bytes()
    frm = (src / "arc" / "lineorder_words.frm").read_bytes()
    for name in ("cut", "corrupt", "bomb", "lineorder_words"):
        (arc / f"{name}.frm").write_bytes(frm)
    (arc / "lineorder_words.ARZ").write_bytes(raw)                       # undamaged, beside them
    (arc / "cut.ARZ").write_bytes(raw[:1_000_000])
    bad = bytearray(raw)
    bad[700_000:700_000 + 4096] = bytes(range(256)) * 16
    (arc / "corrupt.ARZ").write_bytes(bytes(bad))
    start = struct.unpack_from("<Q", raw, 21)[0]
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    seg = c.compress(bytes(64 << 20)) + c.flush(zlib.Z_FULL_FLUSH)
    (arc / "bomb.ARZ").write_bytes(raw[:start] + seg * 32 + c.flush(zlib.Z_FINISH) + struct.pack("<II", 0, 0))
    for stem, exts in (("myisam_fixed", ("MYI", "MYD", "frm")), ("aria_page", ("MAI", "MAD", "frm")),
                       ("myisam_dyn", ("MYI", "MYD", "frm"))):
        for ext in exts:
            shutil.copyfile(src / "misc" / f"{stem}.{ext}", misc / f"{stem}.{ext}")
    _patch(misc / "myisam_fixed.MYI", 28, (10 ** 12).to_bytes(8, "big"))        # state.records
    b = (misc / "aria_page.MAD").read_bytes()
    _patch(misc / "aria_page.MAD", 3 * 8192 + 4000, bytes([b[3 * 8192 + 4000] ^ 0x40]))
    f = bytearray((src / "misc" / "myisam_dyn.frm").read_bytes())
    f[2] = 42                                                                    # an frm version no server wrote
    (misc / "odd.frm").write_bytes(bytes(f))
    return root


def test_named_partial_and_nothing_written(damaged, monkeypatch, qapp):
    from dbxray.compress.whatif import run_whatif
    from dbxray.parsers.compare import compare_json
    from dbxray.parsers.scan import scan

    root = str(damaged)
    before = _state(root)
    writes = spy_writes(monkeypatch, root)
    ds = scan(root)
    result = run_whatif(ds, ["zlib:6", "zstd:3"], sample="0.05", seed=1)
    compared = compare_json(ds)
    monkeypatch.undo()
    assert writes == []
    assert _state(root) == before

    files = {f.path: f for f in ds.files}
    # every error names its file and an offset
    for f in ds.files:
        for m in f.errors:
            assert re.match(rf"{re.escape(f.path.rsplit('/', 1)[-1])} @ offset \d+: ", m) \
                or re.match(rf"{re.escape(f.path)} @ offset \d+: ", m), (f.path, m)
    # each damaged file named, still placed, partial figures kept
    want = {"arc/cut.ARZ": "cut short", "arc/corrupt.ARZ": "", "arc/bomb.ARZ": "decompression bomb",
            "misc/myisam_fixed.MYI": "cannot fit data_file_length", "misc/aria_page.MAD": "CRC does not match",
            "misc/odd.frm": "frm version 42"}
    for path, text in want.items():
        f = files[path]
        assert f.errors and any(text in m for m in f.errors), (path, f.errors)
        assert f.engine is not None and (f.database, f.table) == tuple(path[:path.rindex(".")].split("/")), path
    for name in ("cut", "corrupt"):
        sec = files[f"arc/{name}.ARZ"].sections["archive"]
        assert sec.complete is False and 0 < sec.rows < 26000
    assert files["arc/bomb.ARZ"].sections["archive"].complete is False
    tables = {t.key: t for t in ds.tables}
    assert tables["misc.myisam_fixed"].info["rows"] == 400                  # the data file still counted
    assert tables["misc.aria_page"].info["rows"] == 2000 and tables["misc.aria_page"].info["bad_crc_pages"] == 1
    # the undamaged tables beside them are whole
    assert not files["arc/lineorder_words.ARZ"].errors and tables["arc.lineorder_words"].info["rows"] == 26000
    assert not files["misc/myisam_dyn.MYI"].errors and tables["misc.myisam_dyn"].info["table_rows"] == 2000
    # the what-if ran beside them: the whole tables projected, the cut ARCHIVE streams left out
    # (a projection of part of a stream would be a false figure for the table)
    targets = {t["target"] for t in result["targets"]}
    assert {"arc/lineorder_words.ARZ", "misc/myisam_dyn.MYD", "misc/myisam_fixed.MYD", "misc/aria_page.MAD"} \
        <= targets
    assert not targets & {"arc/cut.ARZ", "arc/corrupt.ARZ", "arc/bomb.ARZ"}
    # ... and said so
    assert [n["target"] for n in result["not_projected"]] == ["arc/bomb.ARZ", "arc/corrupt.ARZ", "arc/cut.ARZ"]
    assert all("not read to its end" in n["why"] for n in result["not_projected"])
    from dbxray.app.cli_whatif import human_table
    assert "not projected: arc/cut.ARZ: its row stream was not read to its end" in human_table(result)
    # the comparison: the damaged Aria table beside its MyISAM twin (the same columns), with the
    # state's figures; the ARCHIVE tables are one engine in one schema, no group
    assert [[t["table"] for t in g["tables"]] for g in compared["groups"]] == [["misc.myisam_dyn", "misc.aria_page"]]
    aria = compared["groups"][0]["tables"][1]
    assert aria["rows"] == 2000 and aria["information_schema"]["data_length"] == 253952

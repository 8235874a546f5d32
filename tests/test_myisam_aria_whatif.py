"""What-if for MyISAM and Aria data files (compress/engines/myisam.py, aria.py): one
target per data file, both models labelled estimates, the InnoDB page_compressed
estimate equal (at --sample all) to the same framing computed here piece by piece,
advice only for the InnoDB conversion with MariaDB's algorithms."""
from __future__ import annotations

import pytest

from dbxray.compress.whatif import resolve_codecs, result_for, run_whatif, targets_by_name
from dbxray.parsers.scan import scan


def _innodb_estimate(data: bytes, codec, fs_block=4096, page=16384) -> int:
    total = 0
    for off in range(0, len(data), page):
        piece = data[off:off + page]
        if not any(piece):
            continue
        n = codec.compressed_size(piece)
        lsb = 1 if codec.family in ("lz4", "lzo", "snappy") else 0
        size = (26 + n + lsb + 4 + 255) & ~255           # fil0pagecompress.cc, full_crc32
        total += page if n > page - 26 or size >= page else min(page, -(-size // fs_block) * fs_block)
    return total


@pytest.fixture(scope="module")
def result(sparse_fixtures):
    ds = scan(str(sparse_fixtures / "mariadb" / "datadir" / "misc"))
    return ds, run_whatif(ds, ["zlib:6", "lz4"], sample="all", fs_block=4096, raw_models=False,
                          larger_pages=False, engines=("myisam", "aria"))


def test_targets_models_and_exact_projection(result):
    ds, res = result
    tg = targets_by_name(res)
    assert set(tg) == {"myisam_dyn.MYD", "myisam_fixed.MYD", "aria_dyn.MAD", "aria_page.MAD"}
    assert "errors" not in res
    for name, t in tg.items():
        pack = "myisampack_estimate" if name.endswith(".MYD") else "aria_pack_estimate"
        rows = {"innodb_from_rows_estimate", "innodb_row_compressed_kbs8k_from_rows_estimate",
                "innodb_row_compressed_kbs4k_from_rows_estimate", "myrocks_from_rows_estimate",
                "tokudb_from_rows_estimate"}       # Dynamic rows are read, Fixed and Page ones decoded with the .frm
        tool = pack[:-len("_estimate")]     # the packer model's own figure (packmodel.py), codec 'huffman'
        assert {r["model"] for r in t["results"]} == {"innodb_page_compressed_estimate", pack, tool} | rows
        assert [r["codec"] for r in t["results"] if r["model"] == tool] == ["huffman"]
        assert t["primary_model"] == "innodb_from_rows_estimate"
        data = open(ds.file(name).abspath, "rb").read()
        for codec in resolve_codecs(["zlib:6", "lz4"]):
            r = result_for(t, codec.name, "innodb_page_compressed_estimate")
            assert r["projected_bytes"] == _innodb_estimate(data, codec), (name, codec.name)
            p = result_for(t, codec.name, pack)
            want = sum(codec.compressed_size(data[o:o + 65536]) for o in range(0, len(data), 65536))
            assert p["projected_bytes"] == want and want < len(data), (name, codec.name)


def test_advice_is_the_innodb_conversion(result):
    _ds, res = result
    assert res["advice"], "the fixture's rows compress: some advice expected"
    for a in res["advice"]:
        if a["kind"] == "pack":             # the packer's command (tests/test_myisampack_model.py)
            assert a["tool"] in ("myisampack", "aria_pack") and a["read_only"] is True
            continue
        assert a["codec"] in ("zlib:6", "lz4")
        # Fixed (MyISAM) and Page (Aria) tables go back to InnoDB's default row format: InnoDB
        # refuses theirs (tests/test_archive_cross_engine.py runs each advised DDL)
        fmt = " ROW_FORMAT=DEFAULT" if a["target"] in ("myisam_fixed.MYD", "aria_page.MAD") else ""
        assert f"ENGINE=InnoDB{fmt} PAGE_COMPRESSED=1" in a["ddl"] and a["ddl"].splitlines()[-1].startswith(
            "SET GLOBAL innodb_compression_algorithm=")
        assert ("INSTALL SONAME 'provider_lz4'" in a["ddl"]) == (a["codec"] == "lz4")

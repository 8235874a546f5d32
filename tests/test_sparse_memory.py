"""Memory on sparse files: a 2 GiB tablespace whose FSP header claims 131,072
pages of which 20 hold data.  Reading its page headers (the window's progressive
preview, the page map) must not fault the holes in: before the holes were
blanked in the file's map, the preview peaked at 2.1 GB RSS on it (the page
cache's zero pages mapped in), now at a few tens of MB."""
from __future__ import annotations

import shutil

import pytest

from fixtures_util import MISSING, fixtures_dir
from fsmount import peak_rss_kb

CODE = {
    "preview": "from dbxray.parsers.innodb.preview import header_preview as h; "
               "n = h(sys.argv[1], lambda m: None, lambda: False)",
    "scan": "from dbxray.parsers.scan import scan; n = len(scan(sys.argv[1]).files[0].units)",
}


@pytest.fixture(scope="module")
def sparse_2g(tmp_path_factory):
    if fixtures_dir() is None:
        pytest.fail(MISSING, pytrace=False)
    p = tmp_path_factory.mktemp("sparse2g") / "big.ibd"
    shutil.copyfile(fixtures_dir() / "innodb" / "16k" / "fx" / "t_dynamic.ibd", p)
    with open(p, "r+b") as fh:
        fh.seek(38 + 8)                              # FSP_HEADER_OFFSET + FSP_SIZE
        fh.write((131072).to_bytes(4, "big"))
        fh.truncate(2 << 30)
    return p


@pytest.mark.parametrize("what", sorted(CODE))
def test_sparse_tablespace_memory_bounded(sparse_2g, what):
    out, hwm_kb = peak_rss_kb("import sys; " + CODE[what] + "; print(n)", str(sparse_2g))
    n = int(out.split()[-1])
    assert n == 131072
    assert hwm_kb < 300 * 1024, f"{what}: peak RSS {hwm_kb} KiB on a 2 GiB sparse tablespace"

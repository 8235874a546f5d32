"""The what-if takes a page-compressed page's size under its own codec from the page's header
where that is exact (compress/engines/innodb.py stored_sizes_exact, Model.known_size): MariaDB
full_crc32 pages of lz4, bzip2 and snappy, whose calls take no level.  On every such page of the
fixtures the stored size is what re-encoding the page gives; zlib and lzma pages (their level is
not on disk) are re-encoded as before."""
from __future__ import annotations

import numpy as np
import pytest

from dbxray.compress.engines.innodb import (InnoDBPageCompressed, innodb_current_codec, punch_granularity,
                                             stored_sizes_exact)
from dbxray.compress.sources import engine_units
from dbxray.parsers.scan import scan


def _target(fixtures_root, name):
    ds = scan(str(fixtures_root / "innodb" / "16k" / "fx" / f"{name}.ibd"))
    e = ds.files[0]
    base = engine_units(e)
    current, layout = innodb_current_codec(e)
    page = int(e.sections["innodb"]["page_size"])
    fs_block = punch_granularity(e, layout, page) or 4096
    return e, base, current, layout, page, fs_block


@pytest.mark.parametrize("name,family", [("t_pc_bzip2", "bzip2"), ("t_pc_lz4", "lz4"), ("t_pc_snappy", "snappy")])
def test_stored_size_is_the_reencoded_size(fixtures_root, name, family):
    e, base, current, layout, page, fs_block = _target(fixtures_root, name)
    assert current is not None and current.family == family and layout == "full_crc32"
    sizes = stored_sizes_exact(e, base, current, layout, page)
    assert sizes is not None
    pc = InnoDBPageCompressed(page_size=page, fs_block=fs_block, layout=layout, stored_codec=current.name,
                              stored_sizes=sizes)
    known = np.flatnonzero(sizes >= 0)
    assert len(known) >= 10
    for i in known:
        data = base.payload(int(i))
        got = pc.known_size(current, data, int(i))
        assert got is not None and got == pc.project(current, data, int(i)), (name, int(i))
    # another codec, or a page not stored compressed: encoded
    other = next(k for k in range(len(base)) if sizes[k] < 0)
    assert pc.known_size(current, base.payload(other), other) is None
    from dbxray.compress.registry import parse_codec
    assert pc.known_size(parse_codec("zstd:3"), base.payload(int(known[0])), int(known[0])) is None


@pytest.mark.parametrize("name", ["t_pc_zlib", "t_pc_lzma", "t_pc_legacy_zlib", "t_pc_zlib_l9"])
def test_leveled_codecs_are_reencoded(fixtures_root, name):
    e, base, current, layout, page, _ = _target(fixtures_root, name)
    assert current is not None and current.family in ("zlib", "lzma")
    assert stored_sizes_exact(e, base, current, layout, page) is None

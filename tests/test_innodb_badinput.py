"""Bad input for the InnoDB page parser: truncated files, a torn page, a zeroed
page, garbage in the FSP header, an unknown page type, page-compressed pages
that do not decode or claim huge sizes, MySQL type-14 pages built from the
layout in os/file.h.  Each gives an error naming the file and the page, the
rest of the file is still mapped, nothing raises.  Copies of real fixture
files are damaged in a temp dir; the fixtures are never written.
"""
from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from dbxray.parsers.model import UNIT_BAD_CHECKSUM, UNIT_COMPRESSED, UNIT_CORRUPT
from dbxray.parsers.scan import scan
from dbxray.parsers.fileio import ReadOnlyFile
from dbxray.parsers.innodb import pagecomp
from dbxray.parsers.innodb.fil import FIL_PAGE_INDEX, parse_fil_header
from dbxray.parsers.innodb.fsp import decode_fsp_flags, parse_fsp_header
from dbxray.parsers.innodb.index import parse_index_header
from dbxray.parsers.innodb.inode import parse_inode_page
from dbxray.parsers.innodb.lzo import lzo1x_decompress_safe
from dbxray.parsers.innodb.pagemap import PageMapError, build_page_map

PS = 16384


def copy_fixture(fixtures_root: Path, rel: str, dest: Path) -> Path:
    out = dest / "fx" / Path(rel).name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes((fixtures_root / rel).read_bytes())
    return out


def patch(path: Path, offset: int, data: bytes) -> None:
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def one(path: Path):
    ds = scan(str(path))
    assert ds.errors == []
    (e,) = [f for f in ds.files if f.path == path.name]
    return e


def test_truncated_file(fixtures_root, tmp_path):
    p = copy_fixture(fixtures_root, "innodb/16k/fx/t_dynamic.ibd", tmp_path)
    os.truncate(p, 5 * PS + 1000)
    e = one(p)
    assert any(m.startswith("t_dynamic.ibd @ offset 81920:") and "not a multiple of the page size" in m
               for m in e.errors), e.errors
    assert e.sections["innodb"]["pages"] == 5
    assert len(e.units) == 5
    assert e.sections["innodb"]["page_types"]["FIL_PAGE_INDEX"] == 2


def test_torn_page(fixtures_root, tmp_path):
    p = copy_fixture(fixtures_root, "innodb/16k/fx/t_dynamic.ibd", tmp_path)
    patch(p, 7 * PS + 8000, b"\xAA" * 64)          # half-written page 7
    e = one(p)
    assert e.sections["innodb"]["checksum"]["bad_pages"] == [7]
    assert e.units["flags"][7] & UNIT_BAD_CHECKSUM
    assert not (np.delete(e.units["flags"], 7) & UNIT_BAD_CHECKSUM).any()
    assert any("@ offset 114688: page 7: checksum mismatch" in m for m in e.errors), e.errors
    # old-style trailer LSN mismatch on a crc32 (MySQL) file is caught too
    q = copy_fixture(fixtures_root, "innodb-public/sakila/8.0/sakila/actor.ibd", tmp_path / "m")
    patch(q, 5 * PS - 4, b"\x00\x00\x00\x01")       # low LSN bytes of page 4's trailer
    e2 = one(q)
    assert e2.sections["innodb"]["checksum"]["bad_pages"] == [4]


def test_zeroed_page(fixtures_root, tmp_path):
    p = copy_fixture(fixtures_root, "innodb/16k/fx/t_dynamic.ibd", tmp_path)
    patch(p, 6 * PS, bytes(PS))
    e = one(p)
    assert any(m.startswith("t_dynamic.ibd @ offset 98304: page 6:") and "all zero" in m for m in e.errors), e.errors
    assert e.sections["innodb"]["page_types"]["FIL_PAGE_INDEX"] == 15
    assert e.sections["innodb"]["checksum"]["bad_pages"] == []      # a zero page is a valid empty page


def test_garbage_fsp_header(fixtures_root, tmp_path):
    p = copy_fixture(fixtures_root, "innodb/16k/fx/t_dynamic.ibd", tmp_path)
    patch(p, 38 + 16, b"\xFF\xFF\xFF\xFF")           # FSP_SPACE_FLAGS
    e = one(p)
    assert any(m.startswith("t_dynamic.ibd @ offset 54: page 0:") and "page size 16384 found from page 1" in m
               for m in e.errors), e.errors
    sec = e.sections["innodb"]
    assert sec["pages"] == 20 and sec["page_types"]["FIL_PAGE_INDEX"] == 16


def test_garbage_page_size(tmp_path):
    """No page 1 to find the size from: assume 16k, say so."""
    p = tmp_path / "junk.ibd"
    data = bytearray(np.random.default_rng(7).integers(0, 256, 3 * PS + 5, dtype=np.uint8).tobytes())
    data[38 + 16:38 + 20] = b"\xFF\xFF\xFF\xFF"     # FSP flags that decode to nothing valid
    p.write_bytes(bytes(data))
    e = one(p)
    assert any("page size unknown" in m for m in e.errors)
    assert any("not a multiple of the page size" in m for m in e.errors)
    assert len(e.units) == 3


def test_unknown_page_type(fixtures_root, tmp_path):
    p = copy_fixture(fixtures_root, "innodb/16k/fx/t_dynamic.ibd", tmp_path)
    patch(p, 9 * PS + 24, struct.pack(">H", 0x1234))
    e = one(p)
    assert any(m.startswith("t_dynamic.ibd @ offset 147480: page 9: unknown page type 4660") for m in e.errors), e.errors
    assert e.sections["innodb"]["page_types"]["UNKNOWN_PAGE_TYPE_4660"] == 1
    assert e.sections["innodb"]["checksum"]["bad_pages"] == [9]


def test_page_compressed_does_not_decode(fixtures_root, tmp_path):
    p = copy_fixture(fixtures_root, "innodb/16k/fx/t_pc_zlib.ibd", tmp_path)
    patch(p, 5 * PS + 40, b"\x00" * 200)            # inside page 5's zlib stream
    e = one(p)
    assert any(m.startswith("t_pc_zlib.ibd @ offset 81920: page 5: page_compressed (zlib) page does not decode")
               for m in e.errors), e.errors
    assert e.units["flags"][5] & UNIT_CORRUPT and e.units["flags"][5] & UNIT_COMPRESSED
    assert e.sections["innodb"]["page_compressed_pages"] == 18
    assert e.sections["innodb"]["page_types"]["FIL_PAGE_INDEX"] == 15     # the rest still decoded
    assert e.sections["innodb"]["checksum"]["bad_pages"] == [5]


def test_page_compressed_claims_huge_size(fixtures_root, tmp_path):
    p = copy_fixture(fixtures_root, "innodb/16k/fx/t_pc_legacy_zlib.ibd", tmp_path)
    patch(p, 4 * PS + 38, b"\xFF\xFF")              # FIL_PAGE_COMP_SIZE of page 4
    e = one(p)
    assert any(m.startswith("t_pc_legacy_zlib.ibd @ offset 65574: page 4: payload length 65535 out of range")
               for m in e.errors), e.errors
    assert e.sections["innodb"]["page_types"]["FIL_PAGE_INDEX"] == 15
    q = copy_fixture(fixtures_root, "innodb/16k/fx/t_pc_lz4.ibd", tmp_path / "b")
    patch(q, 4 * PS + 24, b"\x80\xFF")              # full_crc32 size byte: 65280 bytes > page
    e2 = one(q)
    assert any("page 4: compressed size 65280 out of range" in m for m in e2.errors), e2.errors


def _mysql_file_with_type14(fixtures_root, tmp_path, algorithm_id):
    src = fixtures_root / "innodb-public/sakila/8.0/sakila/actor.ibd"
    data = bytearray(src.read_bytes())
    original = bytes(data[4 * PS:5 * PS])
    built = pagecomp.build_mysql_compressed_page(original, algorithm_id=algorithm_id)
    data[4 * PS:5 * PS] = built
    out = tmp_path / f"a{algorithm_id}" / "sakila" / "actor.ibd"
    out.parent.mkdir(parents=True)
    out.write_bytes(bytes(data))
    return out, original, built


@pytest.mark.parametrize("algorithm_id,name", [(1, "zlib"), (2, "lz4")])
def test_mysql_type14_built_from_layout(fixtures_root, tmp_path, algorithm_id, name):
    """Pages BUILT HERE from MySQL's Compression::meta_t layout (os/file.h):
    version, algorithm, original type, original size, compressed size at
    FIL_PAGE_VERSION, payload at FIL_PAGE_DATA.  Real zlib pages are tested
    on import_compression_8_0_23 in test_innodb_mysql.py; no real lz4 page exists."""
    p, original, built = _mysql_file_with_type14(fixtures_root, tmp_path, algorithm_id)
    meta = pagecomp.parse_mysql_comp_meta(built, 0)
    assert (meta.algorithm, meta.original_type, meta.original_size) == (name, FIL_PAGE_INDEX, PS - 38)
    d = pagecomp.decode_mysql_page(built, PS)
    assert d.page[38:] == original[38:]
    e = one(p)
    assert e.errors == []
    sec = e.sections["innodb"]
    assert e.units["kind"][4] == FIL_PAGE_INDEX and e.units["flags"][4] & UNIT_COMPRESSED
    assert sec["page_compressed_pages"] == 1 and sec["compression_algorithm"] == name
    assert sec["compressed_payload_bytes"] == meta.compressed_size
    assert sec["checksum"]["bad_pages"] == []        # checked on the decompressed page
    assert [ix["pages"] for ix in sec["indexes"] if ix["root_page"] == 4] == [1]


def test_mysql_type14_bad_meta(fixtures_root, tmp_path):
    p, _, built = _mysql_file_with_type14(fixtures_root, tmp_path, 1)
    patch(p, 4 * PS + 32, b"\xFF\xF0")               # compressed size beyond the page
    e = one(p)
    assert any(m.startswith("actor.ibd @ offset 65536: page 4: FIL_PAGE_COMPRESSED (zlib) page does not decode: "
                            "compressed size 65520 out of range") for m in e.errors), e.errors


def test_tiny_and_empty_files(tmp_path):
    (tmp_path / "db").mkdir()
    (tmp_path / "db" / "empty.ibd").write_bytes(b"")
    (tmp_path / "db" / "tiny.ibd").write_bytes(b"\0" * 100)
    ds = scan(str(tmp_path))
    by = {f.path: f for f in ds.files}
    assert any("db/empty.ibd" in m and "empty" in m for m in by["db/empty.ibd"].errors)
    assert any(m.startswith("db/tiny.ibd: 100 bytes is too small") for m in by["db/tiny.ibd"].errors)


# -- fuzzing the page decoders (small corpus, quick) -----------------------------
SMALL = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SMALL
@given(st.binary(min_size=0, max_size=200))
def test_fuzz_header_parsers(b):
    for fn in (parse_fil_header, parse_fsp_header, parse_index_header):
        try:
            fn(b, 0)
        except ValueError:
            pass


@SMALL
@given(st.integers(min_value=0, max_value=2 ** 32 - 1))
def test_fuzz_fsp_flags(flags):
    f = decode_fsp_flags(flags)
    if f.valid:
        assert f.logical_page_size in (4096, 8192, 16384, 32768, 65536)
        assert f.physical_page_size <= f.logical_page_size


@SMALL
@given(st.binary(min_size=64, max_size=4096), st.sampled_from(["zlib", "lz4", "lzo", "lzma", "bzip2", "snappy"]),
       st.integers(min_value=0x8001, max_value=0x80FF))
def test_fuzz_page_decoders(body, algo, ptype):
    raw = bytearray(PS)
    raw[:len(body)] = body
    raw[24:26] = struct.pack(">H", ptype)
    for fn, args in ((pagecomp.decode_fcrc32_page, (PS, algo)), (pagecomp.decode_legacy_page, (PS,)),
                     (pagecomp.decode_mysql_page, (PS,))):
        try:
            d = fn(bytes(raw), *args)
            assert len(d.page) == PS
        except pagecomp.PageDecodeError:
            pass


@SMALL
@given(st.binary(min_size=0, max_size=600), st.integers(min_value=1, max_value=20000))
def test_fuzz_lzo(src, out_size):
    try:
        out = lzo1x_decompress_safe(src, out_size)
        assert len(out) == out_size
    except ValueError:
        pass


@SMALL
@given(st.binary(min_size=100, max_size=2000))
def test_fuzz_inode_page(b):
    page = (b * (PS // len(b) + 1))[:PS]
    for seg in parse_inode_page(page, PS, 64, 2):
        assert seg.seg_id != 0


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(min_value=0, max_value=20 * PS - 1), st.binary(min_size=1, max_size=64)),
                min_size=1, max_size=12))
def test_fuzz_page_map_on_damaged_files(fixtures_root, tmp_path_factory, damage):
    """Random overwrites of a real page_compressed file: never an exception."""
    src = (fixtures_root / "innodb/16k/fx/t_pc_lz4.ibd").read_bytes()
    data = bytearray(src)
    for off, blob in damage:
        data[off:off + len(blob)] = blob
    p = tmp_path_factory.mktemp("fz") / "t.ibd"
    p.write_bytes(bytes(data[:len(src)]))
    with ReadOnlyFile(str(p)) as f:
        try:
            pm = build_page_map(f, "t.ibd")
        except PageMapError:
            return
    assert pm.n_pages >= 1
    assert len(pm.kind) == pm.n_pages


def test_unmappable_file_is_read_or_refused(fixtures_root, tmp_path, monkeypatch):
    """Without mmap the file is read with pread, but never more than the cap."""
    from dbxray.parsers.innodb import pagemap
    p = copy_fixture(fixtures_root, "innodb/16k/fx/t_dynamic.ibd", tmp_path)
    monkeypatch.setattr(ReadOnlyFile, "mmap", lambda self: None)
    with ReadOnlyFile(str(p)) as f:
        pm = build_page_map(f, "t_dynamic.ibd")
    assert pm.n_pages == 20 and int((pm.kind == FIL_PAGE_INDEX).sum()) == 16
    monkeypatch.setattr(pagemap, "_MAX_UNMAPPED", 4 * PS)
    with ReadOnlyFile(str(p)) as f:
        with pytest.raises(PageMapError, match="too many to read into memory"):
            build_page_map(f, "t_dynamic.ibd")


def test_sparse_tail_is_not_walked(fixtures_root, tmp_path):
    """A tablespace followed by 64 GiB of hole: only the pages the FSP header
    states are mapped, the hole is reported and never read."""
    import resource
    p = copy_fixture(fixtures_root, "innodb/16k/fx/t_dynamic.ibd", tmp_path)
    os.truncate(p, 64 << 30)
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    e = one(p)
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    assert e.sections["innodb"]["pages"] == 20 and len(e.units) == 20
    assert any(m.startswith("t_dynamic.ibd @ offset 327680: pages 20..4194303") and "trailing hole" in m
               for m in e.errors), e.errors
    assert e.sections["innodb"]["page_types"]["FIL_PAGE_INDEX"] == 16
    assert r1.ru_minflt - r0.ru_minflt < 20000


def test_all_hole_file(tmp_path):
    p = tmp_path / "fx" / "hole.ibd"
    p.parent.mkdir()
    p.touch()
    os.truncate(p, 1 << 30)
    e = one(p)
    assert any(m.startswith("fx/hole.ibd") or m.startswith("hole.ibd") for m in e.errors)
    assert any("one hole" in m for m in e.errors), e.errors


def test_lzma_level9_page_decodes_but_huge_dictionary_is_refused():
    """MariaDB's lzma presets go up to 9 (64 MiB dictionary, ~65 MiB to decode):
    within the memlimit; a header declaring more is a decode error, not an allocation."""
    import lzma
    page = bytes(range(256)) * 64
    out, used = pagecomp.decode_payload("lzma", lzma.compress(page, preset=9 | lzma.PRESET_EXTREME), PS, None)
    assert out == page
    filters = [{"id": lzma.FILTER_LZMA2, "dict_size": 1536 << 20}]
    huge = lzma.compress(b"x" * 100, format=lzma.FORMAT_XZ, filters=filters)
    with pytest.raises(pagecomp.PageDecodeError, match="lzma"):
        pagecomp.decode_payload("lzma", huge, PS, None)


def test_lzma_header_decode_gives_the_exact_payload_length():
    """lzma pages are decoded by their headers only: an .xz stream ends in its
    footer magic "YZ", so the zero fill behind it gives its exact length.  A
    stream that does not end so (the legacy .lzma format, which may end in a
    zero byte) gets the full decode, and still its exact length."""
    import lzma
    rng = np.random.default_rng(5)
    page = bytes(rng.integers(0, 4, PS, dtype=np.uint8))
    for fmt in (lzma.FORMAT_XZ, lzma.FORMAT_ALONE):
        kw = {"check": lzma.CHECK_NONE} if fmt == lzma.FORMAT_XZ else {}
        stream = lzma.compress(page, format=fmt, **kw)
        data = stream + bytes(300) + b"\x01\x02\x03\x04"          # zero fill, then the page checksum
        out, used = pagecomp.decode_payload("lzma", data, PS, None, prefix=128)
        assert out == page[:128]
        assert used == len(stream), (fmt, used, len(stream))
        full, used_full = pagecomp.decode_payload("lzma", data, PS, None)
        assert full == page and used_full == len(stream)

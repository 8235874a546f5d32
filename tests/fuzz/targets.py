"""Fuzz targets: every decoder of the three engines, fed arbitrary bytes.

A target is ``(name, fn, seeds)``: ``fn(data: bytes)`` runs one decoder on
``data``; it may raise only the *documented* errors (``ALLOWED``): anything
else -- IndexError, struct.error, ValueError, OverflowError, MemoryError,
RecursionError... -- is a finding.  ``seeds`` are real fixture bytes (a page,
a block, a header) that the harness mutates, so the fuzzer starts deep
inside the format instead of at its first magic check.

Used by tests/fuzz/test_fuzz_quick.py (CI, few examples) and
tests/fuzz/campaign.py (the long campaign, see README.md).
"""
from __future__ import annotations

import glob
import os
import struct
import sys
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
for p in (str(REPO), str(HERE.parent)):
    if p not in sys.path:
        sys.path.insert(0, p)

from dbxray.parsers.clickhouse import blocks as ch_blocks  # noqa: E402
from dbxray.parsers.clickhouse import checksums as ch_checksums  # noqa: E402
from dbxray.parsers.clickhouse import columns as ch_columns  # noqa: E402
from dbxray.parsers.clickhouse import marks as ch_marks  # noqa: E402
from dbxray.parsers.clickhouse import packed as ch_packed  # noqa: E402
from dbxray.parsers.clickhouse import primary as ch_primary  # noqa: E402
from dbxray.parsers.clickhouse.varint import VarintError  # noqa: E402
from dbxray.parsers.codecs import (ch_block, ch_delta, ch_doubledelta, ch_fpc, ch_gcd, ch_gorilla,  # noqa: E402
                            ch_t64, quicklz)
from dbxray.parsers.codecs.general import DecodeError  # noqa: E402
from dbxray.parsers.fileio import FileReadError  # noqa: E402
from dbxray.parsers.innodb import fil, fsp, inode, pagecomp, records, redo, sdi, sysfile, trxsys, xdes  # noqa: E402
from dbxray.parsers.tokudb import blocktable, header, leaf, log, node, nonleaf  # noqa: E402
from dbxray.parsers.tokudb import methods as toku_methods  # noqa: E402
from dbxray.parsers.tokudb.wire import FormatError  # noqa: E402

#: the errors decoders document; anything else escaping a decoder is a finding
ALLOWED = (DecodeError, FileReadError, pagecomp.PageDecodeError, sdi.SdiError, redo.RedoError,
           records.RecordError, sysfile.PageError, ch_blocks.BlockError, ch_checksums.ChecksumsError,
           ch_marks.MarksError, ch_primary.PrimaryIndexError, ch_columns.ColumnsError, ch_packed.PackedError,
           VarintError, FormatError)

CAP = 1 << 20          # max_output handed to decoders (bombs stop here)
PAGE = 16384


def _pad(data: bytes, n: int) -> bytes:
    return data[:n] + bytes(max(0, n - len(data)))


def _fixtures() -> Path | None:
    from fixtures_util import fixtures_dir
    return fixtures_dir()


@lru_cache(maxsize=None)
def _seed_files(pattern: str, limit: int = 3) -> tuple[str, ...]:
    root = _fixtures()
    if root is None:
        return ()
    return tuple(sorted(glob.glob(str(root / pattern), recursive=True))[:limit])


def _read(path: str, off: int = 0, n: int = 1 << 16) -> bytes:
    with open(path, "rb") as f:
        f.seek(off)
        return f.read(n)


# -- InnoDB -------------------------------------------------------------------
def innodb_fil_fsp(data: bytes) -> None:
    page = _pad(data, 200)
    fil.parse_fil_header(page, 0)
    fil.parse_fil_trailer(_pad(data, PAGE), 0, PAGE)
    h = fsp.parse_fsp_header(page, 0)
    fsp.decode_fsp_flags(h.flags)
    fsp.decode_fsp_flags(struct.unpack_from(">I", page, 54)[0])


def innodb_xdes(data: bytes) -> None:
    page = _pad(data, PAGE)
    for i in range(4):
        xdes.parse_xdes_entry(page, 150 + i * xdes.xdes_size(64), 64)


def innodb_inode(data: bytes) -> None:
    inode.parse_inode_page(_pad(data, PAGE), PAGE, 64, 2)


def innodb_pagecomp(data: bytes) -> None:
    page = _pad(data, PAGE)
    for fn in (lambda: pagecomp.decode_legacy_page(page, PAGE),
               lambda: pagecomp.decode_mysql_page(page, PAGE),
               lambda: pagecomp.decode_fcrc32_page(page, PAGE, "zlib"),
               lambda: pagecomp.decode_fcrc32_page(page, PAGE, "lz4"),
               lambda: pagecomp.decode_fcrc32_page(page, PAGE, "lzo")):
        try:
            fn()
        except ALLOWED:
            pass


def innodb_sdi(data: bytes) -> None:
    n = struct.unpack_from(">I", _pad(data, 4), 0)[0] % (1 << 20)
    try:
        sdi.decode_sdi_blob(data[4:], n, "fuzz")
    except ALLOWED:
        pass
    sdi.uncompress_mysql_page(_pad(data, PAGE), 3)


def innodb_records(data: bytes) -> None:
    page = _pad(data, PAGE)
    records.read_index_page_header(page, 0)
    for compact in (True, False):
        try:
            records.walk_record_list(page, compact, max_records=2000)
        except ALLOWED:
            pass


def innodb_redo(data: bytes) -> None:
    redo.parse_redo_header(_pad(data, 4 * 512) if len(data) < 2048 else data, "fuzz", max(len(data), 2048))


def innodb_trxsys(data: bytes) -> None:
    page = _pad(data, PAGE)
    for fn in (lambda: trxsys.read_trx_sys(page, PAGE), lambda: trxsys.read_rseg_header(page, PAGE, 3),
               lambda: trxsys.read_rseg_array(page, PAGE), lambda: trxsys.undo_state_of(page)):
        try:
            fn()
        except ALLOWED:
            pass


# -- ClickHouse ------------------------------------------------------------------
def ch_block_decode(data: bytes) -> None:
    try:
        ch_block.parse_block_header(data, 0)
    except ALLOWED:
        pass
    try:
        ch_block.decompress_block(data, max_output=CAP)
    except ALLOWED:
        pass
    t = ch_blocks.walk_blocks(data)
    if len(t):
        ch_blocks.verify_block_checksums(data, t)
    ch_block.decompress_stream(data, max_output=CAP)


def ch_checksums_txt(data: bytes) -> None:
    ch_checksums.parse_checksums(data)


def ch_marks_files(data: bytes) -> None:
    for name in ("a.mrk", "a.mrk2", "a.mrk3", "a.cmrk2", "data.cmrk3", "data.mrk3", "data.cmrk4"):
        fl = ch_marks.marks_flavour(name)
        if fl is None:
            continue
        try:
            ch_marks.read_marks(data, fl, streams=3 if "data" in name else 1, max_bytes=CAP)
        except ALLOWED:
            pass


def ch_primary_idx(data: bytes) -> None:
    for types in (["UInt64"], ["String", "Date"], ["Int32", "DateTime", "String"]):
        try:
            ch_primary.read_primary_index(data, types, max_rows=100_000)
        except ALLOWED:
            pass


def ch_columns_txt(data: bytes) -> None:
    for fn in (ch_columns.parse_columns_txt, ch_columns.parse_columns_substreams,
               ch_columns.parse_serialization_json, ch_packed.read_packed_directory):
        try:
            fn(data)
        except ALLOWED:
            pass


def _codec(mod):
    def run(data: bytes) -> None:
        n = struct.unpack_from("<H", _pad(data, 2), 0)[0]
        mod.decode(data[2:], n)
    run.__name__ = f"ch_codec_{mod.__name__.rsplit('_', 1)[-1]}"
    return run


# -- TokuDB ----------------------------------------------------------------------------
def toku_header(data: bytes) -> None:
    header.read_header_slots(_pad(data, 8192) if len(data) < 8192 else data)


def toku_blocktable(data: bytes) -> None:
    blocktable.read_block_table(data, 0, len(data), 1 << 30)


def toku_node(data: bytes) -> None:
    for verify in (False, True):
        try:
            node.read_node(data, 0, len(data), 1, verify=verify)
        except ALLOWED:
            pass


def toku_leaf(data: bytes) -> None:
    for fn in (lambda: leaf.read_basement(data), lambda: list(leaf.iter_entries(data)),
               lambda: nonleaf.read_message_buffer(data, keep=True)):
        try:
            fn()
        except ALLOWED:
            pass


def toku_log(data: bytes) -> None:
    log.read_log(data, len(data))


def toku_subblock(data: bytes) -> None:
    """u32 uncompressed size, then the payload (method byte first)."""
    n = min(struct.unpack_from("<I", _pad(data, 4), 0)[0], 2 * CAP)
    try:
        toku_methods.decompress(data[4:], n, max_output=CAP)
    except ALLOWED:
        pass
    if len(data) > 5:
        toku_methods.decompress_prefix(data[4:], n, 16)


def qlz(data: bytes) -> None:
    quicklz.decompress(data, max_output=CAP)


# -- seeds ------------------------------------------------------------------------------
def _ibd_pages(page_nos=(0, 1, 2, 3)) -> list[bytes]:
    out = []
    for p in _seed_files("innodb/16k/fx/*.ibd", 2):
        out += [_read(p, n * PAGE, PAGE) for n in page_nos]
    return [s for s in out if s]


def _comp_pages() -> list[bytes]:
    out = []
    for p in _seed_files("innodb/16k/fx/t_pc_*.ibd", 8):
        with open(p, "rb") as f:
            data = f.read(PAGE * 12)
        for n in range(len(data) // PAGE):
            pg = data[n * PAGE:(n + 1) * PAGE]
            if int.from_bytes(pg[24:26], "big") in (14, 34354) or pg[24] & 0x80:
                out.append(pg)
    return out[:6]


def _ch(pattern: str, n: int = 1 << 14) -> list[bytes]:
    return [_read(p, 0, n) for p in _seed_files(f"clickhouse/datadir/store/*/*/*/{pattern}", 3)]


def _toku(pattern: str, off: int = 0, n: int = 8192) -> list[bytes]:
    return [_read(p, off, n) for p in _seed_files(f"tokudb/**/{pattern}", 2)]


@lru_cache(maxsize=None)
def _toku_parts() -> dict[str, list[bytes]]:
    """Block tables, nodes, sub-blocks, decoded partitions and QuickLZ streams
    cut from real dictionaries at the offsets the parser itself found."""
    from dbxray.parsers.scan import scan
    from dbxray.parsers.tokudb.ftfile import read_ft_file
    from dbxray.parsers.tokudb.payloads import unit_payload
    out: dict[str, list[bytes]] = {"bt": [], "node": [], "sub": [], "part": [], "qlz": []}
    for p in _seed_files("tokudb/datadir/*.tokudb", 4):
        with open(p, "rb") as f:
            buf = f.read()
        ft = read_ft_file(buf, len(buf))
        bt = ft.block_table
        if bt is not None:
            out["bt"].append(buf[bt.offset:bt.offset + bt.size])
            for e in bt.used[:4]:
                o, n = int(e["offset"]), int(e["size"])
                if 0 < n < 1 << 22:
                    out["node"].append(buf[o:o + n])
        entry = scan(p).files[0]
        for i in range(min(4, 0 if entry.units is None else len(entry.units))):
            o, st, lg = (int(entry.units[k][i]) for k in ("offset", "stored", "logical"))
            sub = buf[o + 8:o + st - 4]
            out["sub"].append(struct.pack("<I", lg) + sub)
            if sub and sub[0] & 0x0F == 9:
                out["qlz"].append(sub[1:])
            try:
                out["part"].append(unit_payload(entry, i))
            except Exception:  # noqa: BLE001
                pass
    return out


def _seed_blocks() -> list[bytes]:
    out = []
    for b in _ch("*.bin", 1 << 16):
        for off, st in __import__("hardening_util").ch_block_chain(b)[:2]:
            out.append(b[off:off + st])
    return out


def _codec_seeds(codec: str) -> list[bytes]:
    """[u16 size][payload] made by the codec's own encoder over a few value series."""
    import numpy as np
    rng = np.random.default_rng(1)
    series = [np.arange(500, dtype="<u4") * 3, np.cumsum(rng.integers(0, 9, 300)).astype("<i8"),
              rng.normal(size=200).astype("<f8"), (np.arange(400, dtype="<u2") % 7) * 12]
    out = []
    for v in series:
        raw = v.tobytes()
        w = v.dtype.itemsize
        if codec == "t64":
            if v.dtype.kind == "f":
                continue
            payload = ch_t64.encode(raw, {1: "UInt8", 2: "UInt16", 4: "UInt32", 8: "Int64"}[w])
        elif codec in ("gorilla", "fpc") and v.dtype.kind != "f" and codec == "fpc":
            continue
        else:
            payload = {"delta": ch_delta, "doubledelta": ch_doubledelta, "gorilla": ch_gorilla,
                       "gcd": ch_gcd, "fpc": ch_fpc}[codec].encode(raw, w)
        out.append(struct.pack("<H", len(raw)) + payload)
    return out


@lru_cache(maxsize=None)
def seeds(name: str) -> list[bytes]:
    """Real bytes to start from for target ``name`` (empty when fixtures are missing)."""
    try:
        if name in ("innodb_fil_fsp", "innodb_xdes"):
            return _ibd_pages((0,))
        if name in ("innodb_inode",):
            return _ibd_pages((2,))
        if name in ("innodb_records", "innodb_trxsys", "innodb_sdi"):
            return _ibd_pages((3, 4))
        if name == "innodb_pagecomp":
            return _comp_pages()
        if name == "innodb_redo":
            return [_read(p, 0, 1 << 14) for p in _seed_files("innodb/**/ib_logfile0", 1)]
        if name == "ch_block_decode":
            return _seed_blocks()
        if name.startswith("ch_codec_"):
            return _codec_seeds(name[len("ch_codec_"):])
        if name == "ch_checksums_txt":
            return _ch("checksums.txt")
        if name == "ch_marks_files":
            return _ch("*.cmrk2") + _ch("*.mrk2") + _ch("data.cmrk3")
        if name == "ch_primary_idx":
            return _ch("primary.idx")
        if name == "ch_columns_txt":
            return _ch("columns.txt") + _ch("serialization.json")
        if name == "toku_header":
            return _toku("*.tokudb", 0, 8192)
        if name in ("toku_blocktable", "toku_node", "toku_subblock", "toku_leaf", "qlz"):
            key = {"toku_blocktable": "bt", "toku_node": "node", "toku_subblock": "sub",
                   "toku_leaf": "part", "qlz": "qlz"}[name]
            return [b[:1 << 16] for b in _toku_parts()[key]]
        if name == "toku_log":
            return _toku("*.tokulog*", 0, 1 << 14)
    except Exception:  # noqa: BLE001 - seeds are a help, never a failure
        return []
    return []


TARGETS = [innodb_fil_fsp, innodb_xdes, innodb_inode, innodb_pagecomp, innodb_sdi, innodb_records,
           innodb_redo, innodb_trxsys,
           ch_block_decode, ch_checksums_txt, ch_marks_files, ch_primary_idx, ch_columns_txt,
           _codec(ch_delta), _codec(ch_doubledelta), _codec(ch_gorilla), _codec(ch_t64), _codec(ch_gcd),
           _codec(ch_fpc),
           toku_header, toku_blocktable, toku_node, toku_leaf, toku_log, toku_subblock, qlz]
BY_NAME = {t.__name__: t for t in TARGETS}


def run_one(name: str, data: bytes) -> str | None:
    """None when the decoder behaved; else the finding (exception type, message, where)."""
    import traceback
    try:
        BY_NAME[name](data)
    except ALLOWED:
        return None
    except Exception as e:  # noqa: BLE001
        tb = traceback.extract_tb(e.__traceback__)[-1]
        return f"{type(e).__name__}: {str(e)[:200]} ({os.path.relpath(tb.filename, REPO)}:{tb.lineno})"
    return None

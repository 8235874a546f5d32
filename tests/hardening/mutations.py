"""Mutations planned from a pristine file's own structure: truncations, bit flips in headers, size fields and payloads, huge sizes."""
from __future__ import annotations

import os
import random
from dataclasses import dataclass

from .targets import Target


@dataclass
class Mutation:
    op: str                 # "trunc" | "flip" | "set"
    offset: int
    bit: int = 0            # flip: bit number 0..7
    data: bytes = b""       # set: bytes written at offset
    why: str = ""           # "header", "mid-unit", "size field", "payload", ...
    unit: int = -1          # unit index concerned (payload decoder sample), -1 none

    def describe(self) -> str:
        if self.op == "trunc":
            return f"truncate to {self.offset} ({self.why})"
        if self.op == "flip":
            return f"flip bit {self.bit} @ {self.offset} ({self.why})"
        return f"set {self.data.hex()} @ {self.offset} ({self.why})"

    def to_json(self) -> dict:
        d = self.__dict__.copy()
        d["data"] = self.data.hex()
        return d

    @classmethod
    def from_json(cls, d: dict) -> "Mutation":
        d = dict(d)
        d["data"] = bytes.fromhex(d["data"])
        return cls(**d)

    def apply(self, path: str) -> None:
        if self.op == "trunc":
            os.truncate(path, self.offset)
            return
        fd = os.open(path, os.O_RDWR)
        try:
            if self.op == "flip":
                b = os.pread(fd, 1, self.offset)
                if len(b) == 1:
                    os.pwrite(fd, bytes([b[0] ^ (1 << self.bit)]), self.offset)
            else:
                os.pwrite(fd, self.data, self.offset)
        finally:
            os.close(fd)


def ch_block_chain(data: bytes, start: int = 0, limit: int = 4096) -> list[tuple[int, int]]:
    """(offset, stored bytes) of the ClickHouse compressed blocks from ``start``:
    16-byte checksum, method byte, u32 compressed size (incl. 9-byte header),
    u32 decompressed size."""
    out = []
    off = start
    while off + 25 <= len(data) and len(out) < limit:
        comp = int.from_bytes(data[off + 17:off + 21], "little")
        if comp < 9 or off + 16 + comp > len(data):
            break
        out.append((off, 16 + comp))
        off += 16 + comp
    return out


def _pick(seq: list, k: int) -> list:
    """First, middle and last (up to k) of seq, deterministic."""
    if len(seq) <= k:
        return list(seq)
    idx = sorted({0, len(seq) // 2, len(seq) - 1} | {round(i * (len(seq) - 1) / (k - 1)) for i in range(k)})
    return [seq[i] for i in idx[:k]]


def plan_mutations(target: Target, size: int, units, head: bytes, full: bool,
                   seed: int = 0) -> list[Mutation]:
    """The mutations of one file, from its size, its units and its first bytes."""
    rnd = random.Random(f"{target.rel}:{seed}")
    muts: list[Mutation] = []
    eng, name = target.engine, os.path.basename(target.abspath)
    k_units = 4 if full else 2

    # -- truncations -------------------------------------------------------
    cuts = {1: "inside the header", min(37, size - 1): "inside the header", size // 2: "middle of the file",
            size - 1: "last byte missing"}
    if full:
        cuts[0] = "empty"
        cuts[min(200, size - 1)] = "inside the header"
    # -- unit structure ----------------------------------------------------
    ulist: list[tuple[int, int, int, bool]] = []   # (index, offset, stored, compressed)
    if units is not None and len(units):
        from dbxray.parsers.model import UNIT_COMPRESSED
        for i in range(len(units)):
            off, st = int(units["offset"][i]), int(units["stored"][i])
            if st and off + st <= size:
                ulist.append((i, off, st, bool(int(units["flags"][i]) & UNIT_COMPRESSED)))
    blocks: list[tuple[int, int]] = []
    if eng == "clickhouse":
        start = 0
        if name == "checksums.txt":
            nl = head.find(b"\n")
            start = nl + 1 if nl >= 0 else 0
        if name.endswith((".bin", ".cmrk", ".cmrk2", ".cmrk3", ".cmrk4", ".cidx")) or name == "checksums.txt":
            with open(target.abspath, "rb") as f:
                blocks = ch_block_chain(f.read(), start)
    for i, off, st, _c in _pick(ulist, k_units):
        if st > 2:
            cuts[off + st // 2] = f"mid-unit {i}"
    for off, st in _pick(blocks, k_units):
        if st > 2:
            cuts[off + st // 2] = "mid-block"
        cuts[off + 20] = "inside a block header"
    if eng == "innodb" and size > 16384 * 2:
        cuts[16384 + 8192] = "mid-page"
    for off, why in sorted(cuts.items()):
        if 0 <= off < size:
            muts.append(Mutation("trunc", off, why=why))

    # -- bit flips in headers ---------------------------------------------
    hdr = []
    if eng == "innodb":
        # FIL header: checksum, page no, prev/next, LSN, type, flush LSN, space id;
        # FSP header: space id, size, free limit, flags; redo/ibdata header fields
        hdr = [0, 4, 7, 16, 24, 25, 34, 38, 46, 49, 54, 57, 150, 512, 526]
    elif eng == "tokudb":
        # magic, layout version, size, checkpoint count, nodesize, translation offset/size, root
        hdr = [0, 8, 11, 16, 19, 20, 36, 39, 40, 47, 48, 55, 56, 100, 4096 + 16, 4096 + 47]
    else:
        hdr = [0, 1, 8, 15, 16, 24, 30]
    n_hdr = len(hdr) if full else 5
    for off in hdr[:n_hdr] if full else rnd.sample(hdr, min(n_hdr, len(hdr))):
        if off < size:
            muts.append(Mutation("flip", off, bit=rnd.randrange(8), why="header"))
    if eng == "tokudb" and size > 4096 + 64:
        for off in (16, 40, 48):   # the same field in both header slots
            muts.append(Mutation("set", off, data=b"\xff\xff\xff\x7f", why="size field, slot 0"))
            muts.append(Mutation("set", 4096 + off, data=b"\xff\xff\xff\x7f", why="size field, slot 1"))
            if not full:
                break

    # -- size fields and payloads of units ------------------------------------
    for i, off, st, comp in _pick(ulist, k_units):
        if eng == "tokudb":
            # sub-block: u32 compressed size, u32 uncompressed size, payload (method byte first)
            muts.append(Mutation("set", off, data=b"\xff\xff\xff\x7f", why="compressed size field", unit=i))
            muts.append(Mutation("set", off + 4, data=b"\x00\x00\x00\x40", why="uncompressed size 1 GiB", unit=i))
            muts.append(Mutation("flip", off + 8, bit=rnd.randrange(8), why="method byte", unit=i))
        elif eng == "innodb":
            muts.append(Mutation("flip", off + 24, bit=rnd.randrange(8), why="page type", unit=i))
            muts.append(Mutation("set", off + 38, data=b"\xff\xff", why="page-compressed size field", unit=i))
            muts.append(Mutation("flip", off + 26, bit=rnd.randrange(8), why="compression algorithm", unit=i))
        if st > 16:
            muts.append(Mutation("flip", off + st // 2, bit=rnd.randrange(8),
                                 why="compressed payload" if comp else "unit body", unit=i))
            muts.append(Mutation("flip", off + 12 + rnd.randrange(min(st - 12, 64)), bit=rnd.randrange(8),
                                 why="payload start", unit=i))
    bin_units = {}
    if eng == "clickhouse" and ulist:
        bin_units = {off: i for i, off, _s, _c in ulist}
    for off, st in _pick(blocks, k_units):
        u = bin_units.get(off, -1)
        muts.append(Mutation("flip", off + 16, bit=rnd.randrange(8), why="codec byte", unit=u))
        muts.append(Mutation("flip", off + 20, bit=rnd.randrange(8), why="compressed size high byte", unit=u))
        muts.append(Mutation("set", off + 17, data=b"\xff\xff\xff\x7f", why="compressed size 2 GiB", unit=u))
        muts.append(Mutation("set", off + 21, data=b"\x00\x00\x00\x80", why="decompressed size 2 GiB", unit=u))
        if st > 30:
            muts.append(Mutation("flip", off + 25 + rnd.randrange(st - 25), bit=rnd.randrange(8),
                                 why="compressed payload", unit=u))
    if not blocks and not ulist and size > 8:
        # text and plain binary files (columns.txt, marks, primary.idx, ...): flips spread over the file
        for _ in range(4 if full else 2):
            muts.append(Mutation("flip", rnd.randrange(size), bit=rnd.randrange(8), why="body"))
        if name.endswith(".txt"):
            muts.append(Mutation("set", rnd.randrange(size), data=b"\n", why="line break"))
            muts.append(Mutation("set", rnd.randrange(size), data=b"9", why="digit"))
    # dedupe, keep order
    seen, out = set(), []
    for m in muts:
        key = (m.op, m.offset, m.bit, m.data)
        if key in seen or m.offset >= size + (1 if m.op == "trunc" else 0):
            continue
        if m.op == "set" and m.offset + len(m.data) > size:
            continue
        seen.add(key)
        out.append(m)
    return out

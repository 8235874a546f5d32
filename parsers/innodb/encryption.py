"""The page map's encryption step for MariaDB tablespaces: crypt data of page 0,
each page's key version, and, with a key file, the pages decrypted in batches
(buf0buf.cc buf_page_decrypt_after_read, fil0crypt.cc fil_space_decrypt).

Which pages are encrypted is the engine's rule: the tablespace has crypt data on
page 0, the page's key version is not 0, and it is neither page 0 nor an
extent descriptor page (fil_space_encrypt_valid_page_type).  The FIL header
fields before the encrypted area stay in clear: page number, type, LSN, and in
the older format the space id and the checksums.

A decrypted page is accepted only when it passes the check the engine makes
after decryption (buf_page_is_corrupted on the plain page): the end-of-page LSN of
a full_crc32 page, the checksum at FIL_PAGE_SPACE_OR_CHKSUM of the older format,
a page-compressed payload that decodes.  For the page map, uncompressed full_crc32
pages are decrypted only as far as their headers, and accepted when their
FIL_PAGE_SPACE_ID (in the ciphertext) decrypts to the tablespace's id.  Pages that fail are left encrypted and
named (wrong key, or a key of another server).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..arrays import distinct
from . import checksum as ck
from . import pagecrypt
from .crypt import CryptData, CryptDataError, crypt_data_offset, read_crypt_data
from .fil import (BUF_NO_CHECKSUM_MAGIC, FIL_PAGE_DATA, FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED, FIL_PAGE_TYPE_FSP_HDR,
                  FIL_PAGE_TYPE_XDES, FIL_PAGE_INODE)
from .pagecomp import PageDecodeError, decode_fcrc32_page, decode_legacy_page

FIL_PAGE_FILE_FLUSH_LSN_OR_KEY_VERSION = 26
FIL_PAGE_SPACE_ID = 34
FIL_PAGE_FCRC32_CHECKSUM = 4
FIL_PAGE_FCRC32_END_LSN = 8
FIL_PAGE_DATA_END = 8
FIL_PAGE_ENCRYPT_COMP_METADATA_LEN = 4
FIL_PAGE_COMPRESS_FCRC32_MARKER = 0x8000
#: pages decrypted per AES call (64 MiB of 16 KiB pages)
BATCH_BYTES = 64 << 20
#: pages tried with each algorithm before the file's algorithm is chosen
_PROBE = 8


@dataclass(repr=False)
class PageDecryptor:
    """Decrypts the pages of one tablespace: its page keys (one per key version), the
    algorithm found to give valid pages, the format.  Never printed with its keys."""

    space_id: int
    key_id: int
    algorithm: str
    page_keys: dict[int, bytes]
    full_crc32: bool
    physical: int

    def __repr__(self) -> str:
        return f"PageDecryptor(space {self.space_id}, key id {self.key_id}, {self.algorithm})"

    def area(self, types: np.ndarray, heads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(start, length) of the encrypted bytes of pages with these types / first 40 bytes."""
        types = types.astype(np.int64)
        if self.full_crc32:
            size = np.where(types & FIL_PAGE_COMPRESS_FCRC32_MARKER, (types & 0xFF) << 8, self.physical)
            start = np.full(len(types), FIL_PAGE_FILE_FLUSH_LSN_OR_KEY_VERSION, dtype=np.int64)
            return start, np.maximum(size - FIL_PAGE_FILE_FLUSH_LSN_OR_KEY_VERSION - FIL_PAGE_FCRC32_CHECKSUM, 0)
        pc = types == FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED
        start = np.where(pc, FIL_PAGE_DATA + FIL_PAGE_ENCRYPT_COMP_METADATA_LEN, FIL_PAGE_DATA).astype(np.int64)
        stored = (heads[:, FIL_PAGE_DATA].astype(np.int64) << 8) | heads[:, FIL_PAGE_DATA + 1]
        length = np.where(pc, np.minimum(stored, self.physical - start), self.physical - start - FIL_PAGE_DATA_END)
        return start, length

    def decrypt_rows(self, rows: np.ndarray, page_no: np.ndarray, lsn: np.ndarray, key_version: np.ndarray,
                     types: np.ndarray) -> np.ndarray:
        """The plain pages of ``rows`` (n, physical); rows whose key version has no key stay as they are."""
        out = rows.copy()
        start, length = self.area(types, rows[:, :FIL_PAGE_DATA + 2])
        for kv in distinct(key_version).tolist():
            key = self.page_keys.get(int(kv))
            if key is None:
                continue
            for s in distinct(start[key_version == kv]).tolist():
                sel = np.nonzero((key_version == kv) & (start == s))[0]
                width = int(length[sel].max()) if len(sel) else 0
                if width <= 0:
                    continue
                ivs = pagecrypt.page_ivs(self.space_id, page_no[sel], lsn[sel])
                plain = pagecrypt.decrypt(self.algorithm, key, ivs, rows[sel, s:s + width], length[sel])
                # bytes past a page's own length keep their stored value (zero fill)
                short = np.nonzero(length[sel] < width)[0]
                for r in short.tolist():
                    plain[r, int(length[sel[r]]):] = rows[sel[r], s + int(length[sel[r]]):s + width]
                out[sel, s:s + width] = plain
        return out

    def headers_full_crc32(self, pages: np.ndarray, sel: np.ndarray, lsn: np.ndarray, key_version: np.ndarray,
                           heads_of_sel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(plain header block, check) of uncompressed full_crc32 pages ``sel``, decrypting
        only the AES blocks of the FIL and INDEX headers (the page map reads nothing else of
        them; payloads are decrypted in full when asked).  The check: FIL_PAGE_SPACE_ID,
        which lies in the ciphertext, decrypts to this tablespace's id (a wrong key gives
        another value but once in 2^32)."""
        n = len(sel)
        head_bytes = heads_of_sel.shape[1]
        start = FIL_PAGE_FILE_FLUSH_LSN_OR_KEY_VERSION
        # the AES blocks up to the end of the INDEX header (PAGE_DATA = 94): from the header
        # blocks when they reach that far, else read from the pages
        nh = -(-(FIL_PAGE_DATA + 56 - start) // pagecrypt.BLOCK)
        end = start + nh * pagecrypt.BLOCK
        out = heads_of_sel
        ok = np.zeros(n, dtype=bool)
        versions = distinct(key_version).tolist() if n else []
        for kv in versions:
            key = self.page_keys.get(int(kv))
            if key is None:
                continue
            r = slice(None) if len(versions) == 1 else np.nonzero(key_version == kv)[0]
            rows = sel[r]
            ivs = pagecrypt.page_ivs(self.space_id, rows.astype(np.uint32), lsn[r])
            part = out[r]                      # a view for one key version (the usual case), else a copy
            ct = part[:, start:end] if end <= head_bytes else _columns(pages, rows, start, end)
            head = pagecrypt.decrypt_blocks(self.algorithm, key, ivs, ct, 0)
            w = min(end, head_bytes) - start
            part[:, start:start + w] = head[:, :w]
            if not isinstance(r, slice):
                out[r] = part
            ok[r] = _be_field(part, FIL_PAGE_SPACE_ID, ">u4") == self.space_id
        return out, ok

    def page(self, raw: bytes, page_no: int) -> bytes:
        """One page decrypted (the inspector, payloads); unchanged when its key version is 0."""
        row = np.frombuffer(raw, dtype=np.uint8).reshape(1, -1)
        kv = _key_versions(row[:, :FIL_PAGE_DATA], self.full_crc32)
        if kv[0] == 0:
            return raw
        lsn = row[:, 16:24].copy().view(">u8").reshape(1).astype(np.uint64)
        types = row[:, 24:26].copy().view(">u2").reshape(1)
        return self.decrypt_rows(row, np.array([page_no], np.uint32), lsn, kv, types).tobytes()


@dataclass
class EncryptionFacts:
    """What the encryption step found in one file."""

    crypt: CryptData | None = None
    key_version: np.ndarray | None = None   # per page, 0 where not encrypted
    candidates: np.ndarray | None = None    # pages the engine would decrypt
    decrypted: np.ndarray | None = None     # decrypted and valid
    failed: np.ndarray | None = None        # decrypted but not valid (wrong key)
    decryptor: PageDecryptor | None = None
    plain: dict[int, bytes] = field(default_factory=dict)   # whole plain pages kept (INODE, page-compressed)
    errors: list[tuple[str, int | None]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    algorithm: str | None = None

    def to_json(self, n_pages: int) -> dict:
        enc = int(self.candidates.sum()) if self.candidates is not None else 0
        out = self.crypt.to_json() if self.crypt is not None else {"scheme": None}
        kv = self.key_version[self.candidates] if enc else np.zeros(0, np.uint32)
        versions, counts = np.unique(kv, return_counts=True)
        dec = int(self.decrypted.sum()) if self.decrypted is not None else 0
        out.update({"algorithm": self.algorithm, "encrypted_pages": enc, "unencrypted_pages": n_pages - enc,
                    "key_versions": {str(int(v)): int(c) for v, c in zip(versions, counts)},
                    "decrypted_pages": dec,
                    "index_facts": "unknown (encrypted)" if enc > dec else ("from decrypted pages" if enc else
                                                                            "from plain pages")})
        return out


def _be_field(rows: np.ndarray, offset: int, fmt: str) -> np.ndarray:
    """One big-endian field of every row of a C-contiguous (n, width) uint8 array, as a strided view."""
    dt = np.dtype({"names": ["f"], "formats": [fmt], "offsets": [offset], "itemsize": rows.shape[1]})
    return np.ascontiguousarray(rows).reshape(-1).view(dt)["f"]


def _columns(pages: np.ndarray, sel: np.ndarray, a: int, b: int) -> np.ndarray:
    """Bytes [a, b) of the pages ``sel`` (n, b - a): one item copy per page through a
    strided record view, not a 2-D fancy index (a run of pages is a slice)."""
    phys = pages.shape[1]
    dt = np.dtype({"names": ["v"], "formats": [f"V{b - a}"], "offsets": [a], "itemsize": phys})
    col = pages.reshape(-1).view(dt)["v"]
    if len(sel) and int(sel[-1]) - int(sel[0]) + 1 == len(sel):
        got = col[int(sel[0]):int(sel[-1]) + 1]
    else:
        got = col[sel]
    return np.ascontiguousarray(got).view(np.uint8).reshape(len(sel), b - a)


def _rows(a: np.ndarray, sel: np.ndarray) -> np.ndarray:
    """Rows ``sel`` of a C-contiguous 2-D uint8 array (a copy), each row moved as one item."""
    w = a.shape[1]
    return a.view(np.dtype(f"V{w}")).reshape(-1)[sel].view(np.uint8).reshape(len(sel), w)


def _put_rows(a: np.ndarray, sel: np.ndarray, rows: np.ndarray) -> None:
    """``a[sel] = rows``, each row moved as one item."""
    w = a.shape[1]
    a.view(np.dtype(f"V{w}")).reshape(-1)[sel] = np.ascontiguousarray(rows).view(np.dtype(f"V{w}")).reshape(-1)


def _key_versions(heads: np.ndarray, full_crc32: bool) -> np.ndarray:
    """FIL_PAGE_FCRC32_KEY_VERSION (0) or FIL_PAGE_FILE_FLUSH_LSN_OR_KEY_VERSION (26) of each page."""
    o = 0 if full_crc32 else FIL_PAGE_FILE_FLUSH_LSN_OR_KEY_VERSION
    b = heads[:, o:o + 4].astype(np.uint32)
    return (b[:, 0] << 24) | (b[:, 1] << 16) | (b[:, 2] << 8) | b[:, 3]


def _plain_ok(plain: np.ndarray, lsn: np.ndarray, types: np.ndarray, full_crc32: bool, zip_size: int,
              algorithm: str | None, logical: int) -> np.ndarray:
    """The check the engine makes on a page after decrypting it."""
    n, physical = plain.shape
    if full_crc32:
        ok = np.zeros(n, dtype=bool)
        comp = (types.astype(np.int64) & FIL_PAGE_COMPRESS_FCRC32_MARKER) != 0
        p = np.nonzero(~comp)[0]
        if len(p):
            end = plain[p, physical - FIL_PAGE_FCRC32_END_LSN:physical - FIL_PAGE_FCRC32_CHECKSUM].astype(np.uint32)
            end = (end[:, 0] << 24) | (end[:, 1] << 16) | (end[:, 2] << 8) | end[:, 3]
            ok[p] = end == (lsn[p] & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        for i in np.nonzero(comp)[0].tolist():
            stored = (int(types[i]) & 0xFF) << 8
            try:
                decode_fcrc32_page(plain[i, :stored].tobytes(), logical, algorithm or "", prefix=128)
                ok[i] = True
            except PageDecodeError as e:
                ok[i] = str(e).endswith("not decoded")     # a codec not available here: cannot tell
        return ok
    f0 = (plain[:, 0].astype(np.uint32) << 24) | (plain[:, 1].astype(np.uint32) << 16) | \
        (plain[:, 2].astype(np.uint32) << 8) | plain[:, 3]
    pc = types == FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED
    ok = (f0 == BUF_NO_CHECKSUM_MAGIC) & ~pc
    # page_compressed: fil_page_decompress_for_non_full_crc32 wants BUF_NO_CHECKSUM_MAGIC
    # (in clear) and a payload that decodes; the page's own checksum is checked on the
    # decompressed page (pagemap's legacy compression step)
    for i in np.nonzero(pc)[0].tolist():
        if f0[i] != BUF_NO_CHECKSUM_MAGIC:
            continue
        try:
            decode_legacy_page(plain[i].tobytes(), logical, prefix=128, decrypted=True)
            ok[i] = True
        except PageDecodeError as e:
            ok[i] = str(e).endswith("not decoded")     # a codec not available here: cannot tell
    rest = np.nonzero(~ok & ~pc)[0]
    if not len(rest):
        return ok
    if zip_size:
        good = ck.zip_page_checksum_crc32(plain[rest]) == f0[rest]
        left = rest[~good]
        ok[rest[good]] = True
        if len(left):
            ok[left] = np.array(ck.zip_page_checksum_adler(plain[left]), dtype=np.uint32) == f0[left]
        return ok
    good = ck.crc32_page_checksum(plain[rest]) == f0[rest]
    ok[rest[good]] = True
    left = rest[~good]
    if len(left):
        ok[left] = (ck.crc32_page_checksum_legacy_big_endian(plain[left]) == f0[left]) | \
            (ck.innodb_new_checksum(plain[left]) == f0[left])
    return ok


def read_encryption(path: str, pages: np.ndarray, heads: np.ndarray, page0: bytes, n: int, physical: int,
                    logical: int, full_crc32: bool, zip_size: int, space_id: int, compression_algorithm: str | None,
                    zero: np.ndarray, keys=None, check=lambda: None, rows_of=None) -> EncryptionFacts:
    """Crypt data, key versions, and (with ``keys``) the decrypted pages of one file.

    ``heads`` (n, >= 96) are the pages' header blocks; the decrypted pages' header blocks
    are written into it.  ``pages`` (n, physical) are the stored pages (never written);
    ``rows_of(sel)``, when given, reads whole pages instead (around holes)."""
    facts = EncryptionFacts()
    off = crypt_data_offset(logical, physical)
    try:
        facts.crypt = read_crypt_data(page0, off)
    except CryptDataError as e:
        facts.errors.append((f"page 0: {e}; pages with a key version are taken as encrypted, key id unknown", off))
        magic_only = True
    else:
        magic_only = False
        if facts.crypt is None:
            return facts
    kv = _be_field(heads, 0 if full_crc32 else FIL_PAGE_FILE_FLUSH_LSN_OR_KEY_VERSION, ">u4").astype(np.uint32)
    types = _be_field(heads, 24, ">u2").astype(np.uint16)
    pno = np.arange(n)
    cand = (kv != 0) & (pno != 0) & ~zero & (types != FIL_PAGE_TYPE_FSP_HDR) & (types != FIL_PAGE_TYPE_XDES)
    facts.key_version = np.where(cand, kv, 0).astype(np.uint32)
    facts.candidates = cand
    facts.decrypted = np.zeros(n, dtype=bool)
    facts.failed = np.zeros(n, dtype=bool)
    if not cand.any() or keys is None:
        return facts
    if magic_only:
        facts.errors.append(("not decrypted: the crypt data on page 0 cannot be read, so the IV is unknown", off))
        return facts
    key_id = facts.crypt.key_id
    idx = np.nonzero(cand)[0]
    versions = sorted(set(distinct(kv[idx]).tolist()))
    page_keys = {}
    for v in versions:
        k = keys.key(key_id, v)
        if k is None:
            first = int(idx[kv[idx] == v][0])
            cnt = int((kv[idx] == v).sum())
            facts.errors.append((f"page {first}: key id {key_id} version {v} is not in the key file "
                                 f"{getattr(keys, 'source', '')}; {cnt} encrypted page(s) not decrypted", first * physical))
            continue
        page_keys[v] = pagecrypt.page_key(k, facts.crypt.iv)
    if not page_keys:
        return facts
    lsn_all = _be_field(heads, 16, ">u8").astype(np.uint64)
    dec = PageDecryptor(space_id, key_id, "AES_CBC", page_keys, full_crc32, physical)
    usable = idx[np.isin(kv[idx], list(page_keys))]

    def run(sel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rows = rows_of(sel) if rows_of is not None else np.asarray(pages[sel])
        plain = dec.decrypt_rows(rows, sel.astype(np.uint32), lsn_all[sel], kv[sel], types[sel])
        return plain, _plain_ok(plain, lsn_all[sel], types[sel], full_crc32, zip_size, compression_algorithm, logical)

    # the algorithm is not in the file: the one whose pages pass the engine's check
    probe = usable[:_PROBE]
    all_usable = usable
    best, best_ok = None, -1
    for algo in pagecrypt.ALGORITHMS:
        dec.algorithm = algo
        _, ok = run(probe)
        if ok.sum() > best_ok:
            best, best_ok = algo, int(ok.sum())
        if best_ok == len(probe):
            break
    if best_ok <= 0:
        facts.failed[all_usable] = True
        facts.errors.append((f"page {int(probe[0])}: key id {key_id}: no page decrypts to a valid page with "
                             f"AES_CBC or AES_CTR (wrong key for this tablespace?); {len(all_usable)} encrypted "
                             f"page(s) not decrypted", int(probe[0]) * physical))
        return facts
    dec.algorithm = best
    facts.algorithm = best
    facts.decryptor = dec
    # uncompressed full_crc32 pages other than INODE: only the blocks of the headers and the
    # end LSN are decrypted (the page map reads nothing else of them; payloads decrypt in full)
    hb = heads.shape[1]
    if full_crc32:
        fast_mask = ((types[usable].astype(np.int64) & FIL_PAGE_COMPRESS_FCRC32_MARKER) == 0) & \
            (types[usable] != FIL_PAGE_INODE)
        fast, usable = usable[fast_mask], usable[~fast_mask]
        fbatch = 1 << 16
        for a in range(0, len(fast), fbatch):
            check()
            sel = fast[a:a + fbatch]
            plain, ok = dec.headers_full_crc32(pages, sel, lsn_all[sel], kv[sel], _rows(heads, sel))
            if not ok.all():
                facts.failed[sel[~ok]] = True
                sel, plain = sel[ok], plain[ok]
            facts.decrypted[sel] = True
            _put_rows(heads, sel, plain)
    batch = max(1, BATCH_BYTES // physical)
    keep_types = (FIL_PAGE_INODE,)
    for a in range(0, len(usable), batch):
        check()
        sel = usable[a:a + batch]
        plain, ok = run(sel)
        good = sel[ok]
        facts.decrypted[good] = True
        facts.failed[sel[~ok]] = True
        heads[good, :heads.shape[1]] = plain[ok, :heads.shape[1]]
        t = types[sel]
        keep = ok & (np.isin(t, keep_types) | ((t.astype(np.int64) & FIL_PAGE_COMPRESS_FCRC32_MARKER) != 0 if
                                               full_crc32 else t == FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED))
        for r in np.nonzero(keep)[0].tolist():
            facts.plain[int(sel[r])] = plain[r].tobytes()
    bad = np.nonzero(facts.failed)[0]
    if len(bad):
        facts.errors.append((f"page {int(bad[0])}: key id {key_id}: {len(bad)} page(s) do not decrypt to a valid "
                             f"page with {best} (wrong key or corrupt page); left encrypted", int(bad[0]) * physical))
    return facts

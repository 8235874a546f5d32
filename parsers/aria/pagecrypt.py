"""Aria's page encryption (storage/maria/ma_crypt.c; the AES scheme of sql/encryption.cc,
shared with InnoDB: parsers/innodb/pagecrypt.py).

* The crypt data: the last ``ma_crypt_get_file_length()`` (22) bytes of the ``.MAI`` header
  (ma_crypt_write: scheme type CRYPT_SCHEME_1, the length 20, a random 4-byte "space" number,
  the 16-byte IV), present when the base info's extra options carry MA_EXTRA_OPTIONS_ENCRYPTED.
* The key: key id ENCRYPTION_KEY_SYSTEM_DATA (1) of the key management plugin
  (get_encryption_key_id; a temporary table's 2 where it exists), the page key the IV
  encrypted with it (scheme_get_key).
* A data page (ma_crypt_data_pre_write_hook): its header stays in clear (PAGE_HEADER_SIZE
  (7 + 1 + 1 + 1 + 2, + 4 for the key version) on HEAD and TAIL pages, FULL_PAGE_HEADER_SIZE
  (7 + 1, + 4) on BLOB pages), the rest but the 4 CRC bytes is encrypted with IV = space,
  page number, LSN (do_crypt); the key version is stored at KEY_VERSION_OFFSET (12) or
  FULL_PAGE_KEY_VERSION_OFFSET (8) and taken as 0 for the CRC, which covers the plain page.
  Bitmap pages are not encrypted.
* An index page (ma_crypt_index_pre_write_hook): after the key page header (which then holds
  the key version, and an LSN even in a non-transactional table:
  ma_crypt_get_index_page_header_space), its used bytes (KEYPAGE_USED) are encrypted.
* A non-transactional table stores a random number in the LSN bytes of each page it
  encrypts (store_rand_lsn): the counter block still reads it from there.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from ..innodb import pagecrypt
from . import pagecrc

CRYPT_SCHEME_1 = 1
CRYPT_SCHEME_1_IV_LEN = 16
CRYPT_SCHEME_1_ID_LEN = 4
CRYPT_SCHEME_1_KEY_VERSION_SIZE = 4
#: ma_crypt_get_file_length
CRYPT_DATA_LENGTH = 2 + CRYPT_SCHEME_1_IV_LEN + CRYPT_SCHEME_1_ID_LEN
#: include/mysql/service_encryption.h
ENCRYPTION_KEY_SYSTEM_DATA = 1
LSN_STORE_SIZE = 7
#: ma_blockrec.h: PAGE_TYPE_OFFSET, KEY_VERSION_OFFSET, FULL_PAGE_KEY_VERSION_OFFSET, TAIL_PAGE
PAGE_TYPE_OFFSET = 7
KEY_VERSION_OFFSET = 12
FULL_PAGE_KEY_VERSION_OFFSET = 8
TAIL_PAGE = 2
PAGE_TYPE_MASK = 7
#: PAGE_HEADER_SIZE and FULL_PAGE_HEADER_SIZE of an encrypted table
ENCRYPTED_PAGE_HEADER_SIZE = 12 + CRYPT_SCHEME_1_KEY_VERSION_SIZE
ENCRYPTED_FULL_PAGE_HEADER_SIZE = 8 + CRYPT_SCHEME_1_KEY_VERSION_SIZE


class AriaCryptError(Exception):
    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.offset = offset


@dataclass(frozen=True)
class AriaCryptData:
    """ma_crypt_read: the scheme, the "space" number and the IV, and where they are."""

    space: int
    iv: bytes
    offset: int


def read_crypt_data(buf, header_length: int) -> AriaCryptData:
    """The crypt data at the end of the ``.MAI`` header of ``header_length`` bytes."""
    at = header_length - CRYPT_DATA_LENGTH
    if at < 0 or header_length > len(buf):
        raise AriaCryptError(f"no room for the {CRYPT_DATA_LENGTH}-byte crypt data in a header of "
                             f"{header_length} bytes", max(at, 0))
    kind, length = buf[at], buf[at + 1]
    if kind != CRYPT_SCHEME_1 or length != CRYPT_SCHEME_1_IV_LEN + CRYPT_SCHEME_1_ID_LEN:
        raise AriaCryptError(f"crypt data: scheme {kind}, IV length {length} (ma_crypt_read reads scheme 1, 20)", at)
    space = struct.unpack_from("<I", buf, at + 2)[0]
    return AriaCryptData(space=space, iv=bytes(buf[at + 6:at + 6 + CRYPT_SCHEME_1_IV_LEN]), offset=at)


def page_lsns(pages: np.ndarray) -> np.ndarray:
    """lsn_korr of each page's first 7 bytes (3-byte file number, 4-byte offset)."""
    hi = pages[:, 0].astype(np.uint64) | (pages[:, 1].astype(np.uint64) << 8) | (pages[:, 2].astype(np.uint64) << 16)
    lo = pages[:, 3:7].copy().view("<u4").ravel().astype(np.uint64)
    return (hi << np.uint64(32)) | lo


@dataclass(repr=False)
class AriaDecryptor:
    """Decrypts one table's pages; never printed with its key."""

    crypt: AriaCryptData
    page_key: bytes
    key_id: int
    algorithm: str = "AES_CBC"

    def __repr__(self) -> str:
        return f"AriaDecryptor(space {self.crypt.space}, key id {self.key_id}, {self.algorithm})"

    def data_pages(self, pages: np.ndarray, page_no: np.ndarray, algorithm: str | None = None) -> np.ndarray:
        """HEAD, TAIL and BLOB pages (n, block) decrypted, their key version zeroed (the page
        the CRC was computed on)."""
        out = pages.copy()
        if not len(pages):
            return out
        block = pages.shape[1]
        types = pages[:, PAGE_TYPE_OFFSET] & PAGE_TYPE_MASK
        ivs = pagecrypt.page_ivs(self.crypt.space, page_no.astype(np.uint32), page_lsns(pages))
        for small, head, kv in ((True, ENCRYPTED_PAGE_HEADER_SIZE, KEY_VERSION_OFFSET),
                                (False, ENCRYPTED_FULL_PAGE_HEADER_SIZE, FULL_PAGE_KEY_VERSION_OFFSET)):
            sel = np.flatnonzero((types <= TAIL_PAGE) == small)
            if not len(sel):
                continue
            data = pages[sel, head:block - pagecrc.CRC_SIZE]
            out[sel, head:block - pagecrc.CRC_SIZE] = pagecrypt.decrypt(algorithm or self.algorithm, self.page_key,
                                                                         ivs[sel], data)
            out[sel, kv:kv + CRYPT_SCHEME_1_KEY_VERSION_SIZE] = 0
        return out

    def key_pages(self, pages: np.ndarray, page_no: np.ndarray, keypage_header: int) -> np.ndarray:
        """Index pages (n, block) decrypted over their used bytes, key version zeroed."""
        out = pages.copy()
        if not len(pages):
            return out
        block = pages.shape[1]
        used = (pages[:, keypage_header - 2].astype(np.int64) << 8) | pages[:, keypage_header - 1]
        length = np.clip(used - keypage_header, 0, block - keypage_header - pagecrc.CRC_SIZE)
        ivs = pagecrypt.page_ivs(self.crypt.space, page_no.astype(np.uint32), page_lsns(pages))
        data = pages[:, keypage_header:block - pagecrc.CRC_SIZE]
        plain = pagecrypt.decrypt(self.algorithm, self.page_key, ivs, data, length)
        cols = np.arange(data.shape[1])[None, :] < length[:, None]
        region = out[:, keypage_header:block - pagecrc.CRC_SIZE]
        region[cols] = plain[cols]
        kv = keypage_header - 4 - CRYPT_SCHEME_1_KEY_VERSION_SIZE      # before key id, flag, used
        out[:, kv:kv + CRYPT_SCHEME_1_KEY_VERSION_SIZE] = 0
        return out


def data_page_ok(page: np.ndarray, page_no: int) -> bool:
    """The decrypted data page passes its CRC (or has none)."""
    return pagecrc.check(page, page_no, len(page) - pagecrc.CRC_SIZE) != pagecrc.BAD


def decryptor(buf, header_length: int, keys, key_id: int = ENCRYPTION_KEY_SYSTEM_DATA) -> AriaDecryptor | None:
    """The table's decryptor from its ``.MAI`` header and a key file's KeyRing (None: no key
    ``key_id`` in it); AriaCryptError where the crypt data is not readable."""
    crypt = read_crypt_data(buf, header_length)
    if keys is None:
        return None
    key = keys.key(key_id)
    if key is None:
        return None
    return AriaDecryptor(crypt, pagecrypt.page_key(key, crypt.iv), key_id)


def choose_algorithm(dec: AriaDecryptor, pages: np.ndarray, page_no: np.ndarray) -> str | None:
    """The algorithm (AES_CBC, AES_CTR: the key file plugin's setting, not in the files)
    whose decrypted pages pass their CRC; None: neither (a wrong key)."""
    for algo in pagecrypt.ALGORITHMS:
        plain = dec.data_pages(pages, page_no, algo)
        if all(data_page_ok(plain[i], int(page_no[i])) for i in range(len(pages))):
            return algo
    return None

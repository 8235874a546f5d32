"""MariaDB tablespace crypt data on page 0 (fil0crypt.cc fil_space_read_crypt_data,
fsp0fsp.h fsp_header_get_encryption_offset) and the key version of each page.

The crypt data follow the extent descriptor array of page 0:

    offset = FSP_HEADER_OFFSET + XDES_ARR_OFFSET + XDES_SIZE * physical / FSP_EXTENT_SIZE

(10428 in a 16 KiB page, 2748 in a 4 KiB ROW_FORMAT=COMPRESSED page of a 16 KiB
server), laid out as CRYPT_MAGIC (6 bytes), type (1: CRYPT_SCHEME_UNENCRYPTED 0 or
CRYPT_SCHEME_1), IV length (1, always 16), IV, min_key_version (4), key_id (4),
encryption (1: FIL_ENCRYPTION_DEFAULT / ON / OFF), all big-endian.

Each page's key version (0 = not encrypted) is stored in clear: at
FIL_PAGE_FCRC32_KEY_VERSION = 0 in full_crc32 tablespaces, at
FIL_PAGE_FILE_FLUSH_LSN_OR_KEY_VERSION = 26 in the others.  Page 0 and the
extent descriptor pages are never encrypted (fil_space_encrypt_valid_page_type).
"""
from __future__ import annotations

from dataclasses import dataclass

from .fsp import extent_size_pages
from .xdes import XDES_ARR_OFFSET, xdes_size

#: fil0crypt.cc CRYPT_MAGIC
CRYPT_MAGIC = b"s\x0e\x0cREt"
MAGIC_SZ = 6
CRYPT_SCHEME_UNENCRYPTED = 0
CRYPT_SCHEME_1 = 1
CRYPT_SCHEME_1_IV_LEN = 16
#: fil0crypt.h fil_encryption_t
FIL_ENCRYPTION_NAMES = {0: "DEFAULT", 1: "ON", 2: "OFF"}
FSP_HEADER_OFFSET = 38
#: bytes of the crypt data with a 16-byte IV
CRYPT_DATA_SIZE = MAGIC_SZ + 2 + CRYPT_SCHEME_1_IV_LEN + 4 + 4 + 1
FIL_PAGE_FILE_FLUSH_LSN_OR_KEY_VERSION = 26
FIL_PAGE_FCRC32_KEY_VERSION = 0


class CryptDataError(Exception):
    """The crypt data on page 0 are there (magic found) but cut or not sensible."""


@dataclass
class CryptData:
    """fil_space_crypt_t as read from page 0."""

    offset: int
    type: int                    # CRYPT_SCHEME_UNENCRYPTED or CRYPT_SCHEME_1
    iv: bytes
    min_key_version: int
    key_id: int
    encryption: int              # fil_encryption_t

    @property
    def encrypted(self) -> bool:
        return self.type == CRYPT_SCHEME_1

    def to_json(self) -> dict:
        return {"scheme": self.type, "min_key_version": self.min_key_version, "key_id": self.key_id,
                "encryption": FIL_ENCRYPTION_NAMES.get(self.encryption, str(self.encryption)),
                "crypt_data_offset": self.offset}


def crypt_data_offset(logical: int, physical: int) -> int:
    """FSP_HEADER_OFFSET + fsp_header_get_encryption_offset(zip_size): behind the
    XDES array of a page of ``physical`` bytes (extent size of the logical page size)."""
    ext = extent_size_pages(logical)
    return FSP_HEADER_OFFSET + XDES_ARR_OFFSET + xdes_size(ext) * physical // ext


def read_crypt_data(page0: bytes, offset: int) -> CryptData | None:
    """The crypt data at ``offset`` of page 0; None when the magic is not there."""
    if page0[offset:offset + MAGIC_SZ] != CRYPT_MAGIC:
        return None
    body = page0[offset + MAGIC_SZ:offset + CRYPT_DATA_SIZE]
    if len(body) < 2:
        raise CryptDataError(f"crypt data at byte {offset} of page 0 cut after the magic")
    ctype, iv_len = body[0], body[1]
    if ctype not in (CRYPT_SCHEME_UNENCRYPTED, CRYPT_SCHEME_1) or iv_len != CRYPT_SCHEME_1_IV_LEN:
        raise CryptDataError(f"crypt data at byte {offset} of page 0 not sensible: scheme {ctype}, "
                             f"IV length {iv_len} (fil_space_read_crypt_data accepts scheme 0/1, IV length 16)")
    if len(body) < CRYPT_DATA_SIZE - MAGIC_SZ:
        raise CryptDataError(f"crypt data at byte {offset} of page 0 cut: {len(body) + MAGIC_SZ} of "
                             f"{CRYPT_DATA_SIZE} bytes")
    iv = bytes(body[2:2 + iv_len])
    p = 2 + iv_len
    return CryptData(offset=offset, type=ctype, iv=iv,
                     min_key_version=int.from_bytes(body[p:p + 4], "big"),
                     key_id=int.from_bytes(body[p + 4:p + 8], "big"), encryption=body[p + 8])

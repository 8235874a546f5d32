"""Decryption of MariaDB encrypted pages, many pages per AES call (fil0crypt.cc
fil_space_decrypt_full_crc32 / fil_space_decrypt_for_non_full_checksum,
sql/encryption.cc do_crypt and scheme_get_key, mysys_ssl/my_crypt.cc).

* The page key is the tablespace's crypt-data IV encrypted with AES-ECB under the
  key file's key (scheme_get_key): always 16 bytes, so pages use AES-128.
* The IV of a page is ``int4store(space) + int4store(page_no) + int8store(lsn)``,
  little-endian (do_crypt).
* AES_CTR: OpenSSL CTR with that IV as the 128-bit big-endian counter.
  AES_CBC: CBC without padding; the bytes after the last whole block are XORed
  with AES-ECB(page key, IV) (MyCTX_nopad::finish).
* Encrypted bytes: full_crc32 from FIL_PAGE_FILE_FLUSH_LSN_OR_KEY_VERSION (26) to
  the CRC-32C of the page's stored size; the others from FIL_PAGE_DATA (38), or 42
  for FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED, to 8 bytes before the end (page-compressed:
  the length stored at FIL_PAGE_DATA).

The AES primitives are the ``cryptography`` package's; this module only builds the
counter blocks and CBC chaining with numpy over a batch of pages.
"""
from __future__ import annotations

import numpy as np

BLOCK = 16
ALGORITHMS = ("AES_CBC", "AES_CTR")


def _ecb(key: bytes, data: np.ndarray, encrypt: bool) -> np.ndarray:
    """AES-ECB over all the bytes of ``data`` in one call (no copies besides the output)."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    c = Cipher(algorithms.AES(key), modes.ECB())
    op = c.encryptor() if encrypt else c.decryptor()
    buf = np.ascontiguousarray(data, dtype=np.uint8)
    out = np.empty(buf.size + BLOCK - 1, dtype=np.uint8)
    n = op.update_into(memoryview(buf).cast("B"), out)
    op.finalize()
    return out[:n].reshape(buf.shape)


def page_key(global_key: bytes, crypt_iv: bytes) -> bytes:
    """scheme_get_key: the crypt data's IV encrypted (AES-ECB) with the key file's key."""
    return _ecb(global_key, np.frombuffer(crypt_iv, dtype=np.uint8).reshape(1, BLOCK), True).tobytes()


def page_ivs(space_id: int, page_no: np.ndarray, lsn: np.ndarray) -> np.ndarray:
    """(n, 16) IVs: space, page number (4 bytes each) and LSN (8 bytes), little-endian."""
    n = len(page_no)
    rec = np.zeros(n, dtype=[("s", "<u4"), ("p", "<u4"), ("l", "<u8")])
    rec["s"] = space_id
    rec["p"] = page_no
    rec["l"] = lsn
    return rec.view(np.uint8).reshape(n, BLOCK)


def decrypt_ctr(key: bytes, ivs: np.ndarray, data: np.ndarray) -> np.ndarray:
    """AES-CTR over each row of ``data`` (n, L) with its IV (n, 16) as the initial counter."""
    n, length = data.shape
    nb = -(-length // BLOCK)
    ctr = ivs.copy().view(">u8").reshape(n, 2)
    hi, lo = ctr[:, 0].astype(np.uint64), ctr[:, 1].astype(np.uint64)
    j = np.arange(nb, dtype=np.uint64)
    new_lo = lo[:, None] + j[None, :]
    carry = (new_lo < lo[:, None]).astype(np.uint64)
    blocks = np.empty((n, nb, 2), dtype=">u8")
    blocks[:, :, 0] = hi[:, None] + carry
    blocks[:, :, 1] = new_lo
    stream = _ecb(key, blocks.view(np.uint8).reshape(n, nb * BLOCK), True)
    return np.bitwise_xor(data, stream[:, :length])


def decrypt_cbc(key: bytes, ivs: np.ndarray, data: np.ndarray, lengths: np.ndarray | None = None) -> np.ndarray:
    """AES-CBC without padding over each row of ``data`` (n, L); row i holds
    ``lengths[i]`` encrypted bytes (all L when None), whose tail after the last whole
    block is XORed with AES-ECB(key, IV)."""
    n, length = data.shape
    full = length // BLOCK * BLOCK
    out = data.copy()
    if full:
        dec = _ecb(key, data[:, :full], False)
        prev = np.empty((n, full), dtype=np.uint8)
        prev[:, :BLOCK] = ivs
        prev[:, BLOCK:] = data[:, :full - BLOCK]
        out[:, :full] = dec ^ prev
    if lengths is None:
        lengths = np.full(n, length, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    tail = lengths % BLOCK
    has = np.nonzero(tail)[0]
    if len(has):
        mask = _ecb(key, ivs[has], True)
        k = np.arange(BLOCK)
        start = (lengths[has] // BLOCK * BLOCK)[:, None] + k[None, :]
        valid = k[None, :] < tail[has][:, None]
        rows = np.broadcast_to(has[:, None], valid.shape)[valid]
        cols = start[valid]
        out[rows, cols] = data[rows, cols] ^ mask[valid]
    return out


def decrypt(algorithm: str, key: bytes, ivs: np.ndarray, data: np.ndarray,
            lengths: np.ndarray | None = None) -> np.ndarray:
    """Decrypt a batch of pages' encrypted areas with ``algorithm`` (AES_CBC or AES_CTR)."""
    if algorithm == "AES_CTR":
        return decrypt_ctr(key, ivs, data)
    if algorithm == "AES_CBC":
        return decrypt_cbc(key, ivs, data, lengths)
    raise ValueError(f"unknown algorithm {algorithm!r}")


def _counters(ivs: np.ndarray, first_block: int, m: int) -> np.ndarray:
    """(n, m*16) CTR counter blocks ``first_block..first_block+m-1`` of each IV (128-bit
    big-endian increment, as OpenSSL's CTR mode)."""
    n = len(ivs)
    v = np.ascontiguousarray(ivs).view(">u8").reshape(n, 2)
    hi, lo = v[:, 0].astype(np.uint64), v[:, 1].astype(np.uint64)
    low = np.repeat(lo, m) + np.tile(np.arange(first_block, first_block + m, dtype=np.uint64), n)
    high = np.repeat(hi, m)
    wrapped = np.nonzero(low < np.repeat(lo, m))[0]   # the low half wrapped: carry into the high half
    if len(wrapped):
        high[wrapped] += np.uint64(1)
    out = np.empty(2 * n * m, dtype=">u8")          # 1-D interleave: no per-row inner loops
    out[0::2] = high
    out[1::2] = low
    return out.view(np.uint8).reshape(n, m * BLOCK)


def decrypt_blocks(algorithm: str, key: bytes, ivs: np.ndarray, data: np.ndarray, first_block: int,
                   prev: np.ndarray | None = None) -> np.ndarray:
    """Whole blocks ``first_block..`` of each row's encrypted area, without the blocks before
    them: ``data`` (n, m*16) holds those ciphertext blocks, ``prev`` (n, 16) the ciphertext
    block before the first (CBC; unused when ``first_block`` is 0: the IV is).  CTR: the
    counter plus the block number; CBC: each block decrypted and XORed with the block
    before it, so any run of blocks can be read on its own."""
    data = np.ascontiguousarray(data)
    n, length = data.shape
    m = length // BLOCK
    if algorithm == "AES_CTR":
        stream = _ecb(key, _counters(ivs, first_block, m), True)
        np.bitwise_xor(stream, data, out=stream)
        return stream
    if algorithm != "AES_CBC":
        raise ValueError(f"unknown algorithm {algorithm!r}")
    out = _ecb(key, data, False)
    flat, src = out.reshape(-1), data.reshape(-1)
    np.bitwise_xor(flat[BLOCK:], src[:-BLOCK], out=flat[BLOCK:])      # each block ^ the one before it
    firsts = out.reshape(n, m, BLOCK)[:, 0, :]
    if n > 1:                                        # undo the XOR across rows, then the IV / prev block
        np.bitwise_xor(firsts[1:], src.reshape(n, m, BLOCK)[:-1, m - 1, :], out=firsts[1:])
    np.bitwise_xor(firsts, ivs if first_block == 0 else prev, out=firsts)
    return out


def decrypt_tail(algorithm: str, key: bytes, ivs: np.ndarray, tail: np.ndarray, tail_block: int) -> np.ndarray:
    """The bytes after the last whole block (``tail`` (n, t), t < 16): CTR: XOR with the
    counter's block ``tail_block``; CBC: XOR with AES-ECB(key, IV) (MyCTX_nopad::finish)."""
    n, t = tail.shape
    if algorithm == "AES_CTR":
        return decrypt_blocks("AES_CTR", key, ivs, np.pad(tail, ((0, 0), (0, BLOCK - t))), tail_block)[:, :t]
    return tail ^ _ecb(key, ivs, True)[:, :t]

"""Decryption keys: MariaDB file_key_management key files (plugin/file_key_management/parser.cc),
used by the InnoDB reader (innodb/encryption.py) through ``KeyRing.key(key_id, version)``.

One key a line, ``<id>;<hex key>``: the id a decimal number 1..2^32-2, the key 32,
48 or 64 hex digits (AES-128/192/256); ``#`` starts a comment; blank lines are
skipped.  Every key has version 1 (the plugin has no key rotation).

The whole file may be encrypted as ``openssl enc -aes-256-cbc -md sha1`` writes it
(``file_key_management_filekey``): ``Salted__``, an 8-byte salt, then the
AES-256-CBC ciphertext (PKCS#7 padding) under the key and IV that OpenSSL's
EVP_BytesToKey derives from the password and the salt with SHA-1, one round.

Keys are held in memory only: neither their bytes nor their hex ever appear in a
message, a repr, the JSON or a saved scan.
"""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field

#: parser.cc OpenSSL_prefix
OPENSSL_PREFIX = b"Salted__"
OPENSSL_SALT_LEN = 8
#: the plugin's only key version (file_key_management_plugin.cc KEY_VERSION)
KEY_VERSION = 1
MAX_KEY_FILE = 1 << 20
_LINE = re.compile(r"^\s*(?P<id>\d+)\s*;\s*(?P<key>[0-9a-fA-F]+)\s*(#.*)?$")


class KeyFileError(Exception):
    """The key file cannot be used at all (unreadable, wrong password)."""


@dataclass(repr=False)
class KeyRing:
    """Keys by id, from one key file; ``problems`` names the lines that were skipped."""

    source: str
    _keys: dict[int, bytes] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def __repr__(self) -> str:      # never the key bytes
        return f"KeyRing({self.source!r}, ids={sorted(self._keys)})"

    @property
    def ids(self) -> list[int]:
        return sorted(self._keys)

    def key(self, key_id: int, version: int = KEY_VERSION) -> bytes | None:
        """The key of ``key_id`` at ``version``; None when the file has no such key."""
        if version != KEY_VERSION:
            return None
        return self._keys.get(key_id)


def evp_bytes_to_key(password: bytes, salt: bytes, key_len: int = 32, iv_len: int = 16,
                     digest: str = "sha1") -> tuple[bytes, bytes]:
    """OpenSSL EVP_BytesToKey with one round: D_i = H(D_{i-1} || password || salt)."""
    out, prev = b"", b""
    while len(out) < key_len + iv_len:
        prev = hashlib.new(digest, prev + password + salt).digest()
        out += prev
    return out[:key_len], out[key_len:key_len + iv_len]


def decrypt_openssl_salted(data: bytes, password: bytes, source: str = "key file") -> bytes:
    """The plain text of an ``openssl enc -aes-256-cbc -md sha1`` file (parser.cc Parser::read_filekey)."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    if not data.startswith(OPENSSL_PREFIX) or len(data) < len(OPENSSL_PREFIX) + OPENSSL_SALT_LEN + 16:
        raise KeyFileError(f"{source}: not an OpenSSL 'Salted__' file or cut")
    salt = data[len(OPENSSL_PREFIX):len(OPENSSL_PREFIX) + OPENSSL_SALT_LEN]
    body = data[len(OPENSSL_PREFIX) + OPENSSL_SALT_LEN:]
    if len(body) % 16:
        raise KeyFileError(f"{source}: encrypted body of {len(body)} bytes is not a whole number of AES blocks (cut?)")
    key, iv = evp_bytes_to_key(password, salt)
    dec = Cipher(algorithms.AES(key), modes.CBC(iv)).decryptor()
    plain = dec.update(body) + dec.finalize()
    pad = plain[-1]
    if not 1 <= pad <= 16 or plain[-pad:] != bytes([pad]) * pad:
        raise KeyFileError(f"{source}: wrong password (the decrypted key file has no valid padding)")
    plain = plain[:-pad]
    try:
        plain.decode("ascii")
    except UnicodeDecodeError:
        raise KeyFileError(f"{source}: wrong password (the decrypted key file is not text)") from None
    return plain


def parse_key_text(text: str, source: str) -> KeyRing:
    """Keys of a plain key file; bad lines are named (line number, never their content) and skipped."""
    ring = KeyRing(source)
    for no, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        m = _LINE.match(s)
        if m is None:
            ring.problems.append(f"{source}: line {no}: syntax error (expected '<key id>;<hex key>'); line skipped")
            continue
        kid = int(m.group("id"))
        hexkey = m.group("key")
        if not 0 < kid < 0xFFFFFFFF:
            ring.problems.append(f"{source}: line {no}: invalid key id {kid}; line skipped")
        elif len(hexkey) not in (32, 48, 64):
            ring.problems.append(f"{source}: line {no}: key id {kid}: wrong key length ({len(hexkey)} hex digits; "
                                 f"32, 48 or 64 expected); line skipped")
        elif kid in ring._keys:
            ring.problems.append(f"{source}: line {no}: duplicate key id {kid}; line skipped")
        else:
            ring._keys[kid] = bytes.fromhex(hexkey)
    return ring


def load_key_file(path: str, password: bytes | None = None, password_file: str | None = None) -> KeyRing:
    """Read a key file, plain or ``Salted__``-encrypted (then ``password`` or the first
    line of ``password_file`` opens it)."""
    source = os.path.basename(path) or path
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_KEY_FILE + 1)
    except OSError as e:
        raise KeyFileError(f"{path}: cannot read the key file: {e.strerror or e}") from None
    if len(data) > MAX_KEY_FILE:
        raise KeyFileError(f"{path}: {len(data)}+ bytes is too large for a key file")
    if data.startswith(OPENSSL_PREFIX):
        if password is None and password_file is not None:
            try:
                with open(password_file, "rb") as fh:
                    password = fh.read(4096).rstrip(b"\r\n")
            except OSError as e:
                raise KeyFileError(f"{password_file}: cannot read the password file: {e.strerror or e}") from None
        if password is None:
            raise KeyFileError(f"{path}: the key file is encrypted (Salted__); a password is needed")
        data = decrypt_openssl_salted(data, password, path)
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise KeyFileError(f"{path}: not a key file (not text, and not 'Salted__' encrypted)") from None
    ring = parse_key_text(text, source)
    if not ring.ids and not ring.problems:
        raise KeyFileError(f"{path}: no keys in the key file")
    return ring

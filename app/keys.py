"""Loading a decryption key file for a scan, shared by the command line (``--keyfile``)
and the window (File › Key File…): parsers/keyfile.py reads it, this asks for the
password of an encrypted one and turns failures into messages (the scan goes on)."""
from __future__ import annotations

import sys


def load_keys(keyfile: str | None, password_file: str | None = None, prompt=None):
    """(KeyRing or None, messages): the key file of ``--keyfile``; a ``Salted__`` one is opened
    with the password file or, on a terminal, a prompt.  A key file that cannot be used
    is named in the messages and the scan goes on without keys."""
    if not keyfile:
        return None, []
    from dbxray.parsers.keyfile import OPENSSL_PREFIX, KeyFileError, load_key_file
    password = None
    try:
        with open(keyfile, "rb") as fh:
            encrypted = fh.read(len(OPENSSL_PREFIX)) == OPENSSL_PREFIX
    except OSError as e:
        return None, [f"{keyfile}: cannot read the key file: {e.strerror or e}; scanned without keys"]
    if encrypted and password_file is None:
        if prompt is None and sys.stdin.isatty():
            import getpass
            prompt = getpass.getpass
        if prompt is not None:
            password = prompt(f"password of the key file {keyfile}: ").encode()
    try:
        ring = load_key_file(keyfile, password=password, password_file=password_file)
    except KeyFileError as e:
        return None, [f"{e}; scanned without keys"]
    return ring, list(ring.problems)

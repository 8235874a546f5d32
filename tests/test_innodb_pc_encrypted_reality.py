"""MariaDB's older (pre-full_crc32) encrypted formats checked against the engine itself:
a private MariaDB 10.11 (tests/mariadb_server.py: own datadir and socket,
--skip-networking) with file_key_management and innodb_checksum_algorithm=crc32, so
tables are created in the older format, writes PAGE_COMPRESSED=1 ENCRYPTED=YES tables
with every page-compression algorithm the server has (zlib always; lz4, lzma, lzo,
snappy, bzip2 with their provider plugins) and a plain ENCRYPTED=YES table, each beside
an unencrypted twin of the same rows; its INFORMATION_SCHEMA is read before a slow
shutdown.  Once for AES_CBC and once for AES_CTR.

FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED (37401) pages (fil0crypt.cc
fil_encrypt_buf_for_non_full_checksum, fil0pagecompress.cc
fil_page_compress_for_non_full_crc32): the FIL header and 4 bytes behind it stay in
clear (payload length at FIL_PAGE_DATA, algorithm at FIL_PAGE_DATA + 2, key version at
26, BUF_NO_CHECKSUM_MAGIC at 0); the compressed payload behind them is encrypted.
dbxray must detect them, check them as the engine does, decrypt them with the key file,
decompress them and read them as plain pages."""
from __future__ import annotations

import secrets
import shutil
import zlib
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from dbxray.parsers.fileio import ReadOnlyFile
from dbxray.parsers.innodb.pagecomp import decode_legacy_page, parse_legacy_comp_header
from dbxray.parsers.innodb.pagemap import build_page_map
from dbxray.parsers.innodb.payloads import unit_payload
from dbxray.parsers.keyfile import load_key_file
from dbxray.parsers.model import ScanContext
from dbxray.parsers.scan import scan

from mariadb_server import PrivateServer, missing

WHY = missing(("file_key_management.so",))
pytestmark = pytest.mark.skipif(WHY is not None, reason=WHY or "")

PAGE = 16384
FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED = 37401
FSP_FLAGS_FCRC32_MASK_MARKER = 1 << 4          # fsp0types.h: set only in full_crc32 tablespaces
#: innodb_compression_algorithm values, and the provider plugin each needs (zlib is built in)
ALGORITHMS = {"zlib": None, "lz4": "provider_lz4.so", "lzma": "provider_lzma.so", "lzo": "provider_lzo.so",
              "snappy": "provider_snappy.so", "bzip2": "provider_bzip2.so"}
ROWS = 20000
ROWS_SQL = (f"SELECT seq, CONCAT('row ', seq, ' ', REPEAT(ELT(1 + seq % 5, 'alpha ', 'beta ', 'gamma ', 'delta ', "
            f"'eps '), 1 + seq % 11)), seq % 97 FROM seq_1_to_{ROWS}")


def _available() -> list[str]:
    return [a for a, plugin in ALGORITHMS.items() if plugin is None or missing((plugin,)) is None]


def _load_sql(algos: list[str]) -> str:
    """Each table flushed right after its rows (FLUSH TABLES ... FOR EXPORT): in the
    older format the algorithm is the global innodb_compression_algorithm when a page
    is written, stored in each page."""
    out = ["CREATE DATABASE p;", "USE p;"]
    tables = [(f"pc_{a}_{kind}", a, enc) for a in algos for kind, enc in (("enc", "YES"), ("plain", "NO"))]
    tables += [("flat_enc", None, "YES"), ("flat_plain", None, "NO")]
    for t, a, enc in tables:
        if a:
            out.append(f"SET GLOBAL innodb_compression_algorithm = {a};")
        pc = "PAGE_COMPRESSED=1 " if a else ""
        out.append(f"CREATE TABLE p.{t} (id INT PRIMARY KEY, v VARCHAR(200), k INT, KEY (k)) ENGINE=InnoDB "
                   f"{pc}ENCRYPTED={enc};")
        out.append(f"INSERT INTO p.{t} {ROWS_SQL};")
        out.append(f"FLUSH TABLES p.{t} FOR EXPORT; UNLOCK TABLES;")
    return "\n".join(out)


def _rows(text: str, names: list[str]) -> list[dict]:
    out = []
    for line in text.splitlines():
        vals = line.split("\t")
        out.append({n: (int(v) if v.lstrip("-").isdigit() else v) for n, v in zip(names, vals)})
    return out


@pytest.fixture(scope="module", params=["AES_CBC", "AES_CTR"])
def server_dir(request, tmp_path_factory):
    """The data dir after a slow shutdown, its key file and the server's own I_S view."""
    algorithm = request.param
    base = tmp_path_factory.mktemp(f"pcenc_{algorithm}")
    keys = base / "keys.txt"
    keys.write_text("".join(f"{i};{secrets.token_hex(32)}\n" for i in (1, 2)))
    algos = _available()
    opts = ["--plugin-load-add=file_key_management.so", f"--file-key-management-filename={keys}",
            f"--file-key-management-encryption-algorithm={algorithm}", "--innodb-checksum-algorithm=crc32",
            "--innodb-fast-shutdown=0"]
    opts += [f"--plugin-load-add={ALGORITHMS[a]}" for a in algos if ALGORITHMS[a]]
    server = PrivateServer(base / "srv", opts)
    with server:
        server.sql(_load_sql(algos))
        indexes = _rows(server.sql(
            "SELECT t.NAME, t.SPACE, i.INDEX_ID, i.NAME, i.PAGE_NO FROM information_schema.INNODB_SYS_TABLES t "
            "JOIN information_schema.INNODB_SYS_INDEXES i USING (TABLE_ID) WHERE t.NAME LIKE 'p/%';"),
            ["TABLE", "SPACE", "INDEX_ID", "INDEX", "PAGE_NO"])
        crypt = _rows(server.sql(
            "SELECT NAME, ENCRYPTION_SCHEME, MIN_KEY_VERSION, CURRENT_KEY_ID FROM "
            "information_schema.INNODB_TABLESPACES_ENCRYPTION WHERE NAME LIKE 'p/%';"),
            ["NAME", "ENCRYPTION_SCHEME", "MIN_KEY_VERSION", "CURRENT_KEY_ID"])
        flags = _rows(server.sql("SELECT NAME, FLAG FROM information_schema.INNODB_SYS_TABLESPACES "
                                 "WHERE NAME LIKE 'p/%';"), ["NAME", "FLAG"])
    return {"algorithm": algorithm, "datadir": server.datadir, "keys": keys, "algos": algos,
            "indexes": indexes, "crypt": {r["NAME"]: r for r in crypt}, "flags": {r["NAME"]: r["FLAG"] for r in flags}}


@pytest.fixture(scope="module")
def scans(server_dir):
    plain = {e.path: e for e in scan(str(server_dir["datadir"])).files}
    keyed = {e.path: e for e in scan(str(server_dir["datadir"]),
                                     ScanContext(keys=load_key_file(str(server_dir["keys"])))).files}
    return plain, keyed


def _enc_tables(server_dir) -> list[str]:
    return [f"pc_{a}_enc" for a in server_dir["algos"]] + ["flat_enc"]


def _twin(table: str) -> str:
    return table.replace("_enc", "_plain")


def test_tables_are_in_the_older_format(server_dir, scans):
    plain, _ = scans
    assert "zlib" in server_dir["algos"]
    for name, flag in server_dir["flags"].items():
        assert not flag & FSP_FLAGS_FCRC32_MASK_MARKER, name            # the server's own view
        sec = plain[f"{name}.ibd"].sections["innodb"]
        assert not sec["fsp_flags"] & FSP_FLAGS_FCRC32_MASK_MARKER
        assert sec["page_compressed"] == name.startswith("p/pc_")


def test_without_key_detected_counted_checked(server_dir, scans):
    """Crypt data equal INNODB_TABLESPACES_ENCRYPTION; every 37401 page counted as
    encrypted, its payload not decoded, its checksum as the engine checks it (none
    stored; BUF_NO_CHECKSUM_MAGIC in clear); no errors, no index invented."""
    plain, _ = scans
    for t in _enc_tables(server_dir):
        e = plain[f"p/{t}.ibd"]
        sec = e.sections["innodb"]
        enc = sec["encryption"]
        truth = server_dir["crypt"][f"p/{t}"]
        assert (enc["scheme"], enc["min_key_version"], enc["key_id"]) == \
            (truth["ENCRYPTION_SCHEME"], truth["MIN_KEY_VERSION"], truth["CURRENT_KEY_ID"]) == (1, 1, 1), t
        assert e.errors == [], (t, e.errors)
        assert sec["checksum"]["bad_pages"] == []
        assert enc["decrypted_pages"] == 0 and enc["index_facts"] == "unknown (encrypted)"
        assert sec["indexes"] == [], f"{t}: indexes invented from ciphertext"
        if t.startswith("pc_"):
            assert sec["page_types"]["page_compressed (not decoded)"] == enc["encrypted_pages"] > 100, t
            assert "FIL_PAGE_INDEX" not in sec["page_types"]


def test_with_key_indexes_equal_information_schema(server_dir, scans):
    """Decrypted, decompressed: every table's index ids, names and root pages equal
    INNODB_SYS_INDEXES, and each index holds the table's rows."""
    _, keyed = scans
    for t in _enc_tables(server_dir) + [_twin(t) for t in _enc_tables(server_dir)]:
        e = keyed[f"p/{t}.ibd"]
        sec = e.sections["innodb"]
        truth = sorted((r["INDEX_ID"], r["INDEX"], r["PAGE_NO"]) for r in server_dir["indexes"]
                       if r["TABLE"] == f"p/{t}")
        got = sorted((ix["index_id"], ix["name"], ix["root_page"]) for ix in sec["indexes"])
        assert got == truth and len(truth) == 2, t
        assert all(ix["records"] == ROWS for ix in sec["indexes"]), t
        assert e.errors == [] and sec["checksum"]["bad_pages"] == [], (t, e.errors)
        if t.endswith("_enc"):
            enc = sec["encryption"]
            assert enc["algorithm"] == server_dir["algorithm"]
            assert enc["decrypted_pages"] == enc["encrypted_pages"] > 100
            assert enc["index_facts"] == "from decrypted pages"


def test_with_key_page_types_equal_the_unencrypted_twin(server_dir, scans):
    _, keyed = scans
    shape = lambda sec: [(ix["name"], ix["pages"], ix["leaf_pages"], ix["levels"], ix["records"])  # noqa: E731
                         for ix in sec["indexes"]]
    for t in _enc_tables(server_dir):
        enc, twin = keyed[f"p/{t}.ibd"].sections["innodb"], keyed[f"p/{_twin(t)}.ibd"].sections["innodb"]
        assert enc["page_types"] == twin["page_types"], t
        assert "page_compressed (not decoded)" not in enc["page_types"]
        assert [s[1:] for s in shape(enc)] == [s[1:] for s in shape(twin)], t
        if t.startswith("pc_"):
            assert enc["page_compressed_pages"] == twin["page_compressed_pages"]
            assert enc["compression_algorithm"] == t.split("_")[1]
            # payloads / inspector: the root page decrypted and decompressed, as a plain page
            page = unit_payload(keyed[f"p/{t}.ibd"], 3)
            assert len(page) == PAGE and int.from_bytes(page[24:26], "big") == 17855
            assert int.from_bytes(page[4:8], "big") == 3


def test_each_page_holds_its_tables_algorithm(server_dir):
    """The algorithm field of 37401 pages is in clear: each table's pages carry the
    algorithm it was written with, and each decrypted page decodes to its original."""
    keys = load_key_file(str(server_dir["keys"]))
    for a in server_dir["algos"]:
        path = str(server_dir["datadir"] / "p" / f"pc_{a}_enc.ibd")
        with ReadOnlyFile(path) as f:
            pm = build_page_map(f, path, keys=keys)
            data = f.pread(0, f.size)
        pc = np.nonzero(pm.type == FIL_PAGE_PAGE_COMPRESSED_ENCRYPTED)[0]
        got = Counter(parse_legacy_comp_header(data[i * PAGE:(i + 1) * PAGE], 0, PAGE).algorithm for i in pc)
        assert set(got) == {a} and len(pc) > 100, (a, got)
        root = int(pc[pc == 3][0])
        page = decode_legacy_page(pm.crypt.decryptor.page(data[root * PAGE:(root + 1) * PAGE], root), PAGE,
                                  decrypted=True).page
        assert int.from_bytes(page[24:26], "big") == 17855 and int.from_bytes(page[4:8], "big") == root


def test_wrong_key_named_rest_shown(server_dir, tmp_path):
    d = tmp_path / "p"
    d.mkdir()
    shutil.copy(server_dir["datadir"] / "p" / "pc_zlib_enc.ibd", d)
    shutil.copy(server_dir["datadir"] / "p" / "pc_zlib_plain.ibd", d)
    kf = tmp_path / "wrong.txt"
    kf.write_text(f"1;{secrets.token_hex(32)}\n")
    files = {e.path: e for e in scan(str(d), ScanContext(keys=load_key_file(str(kf)))).files}
    e = files["pc_zlib_enc.ibd"]
    assert any("key id 1" in m and "wrong key" in m and "page " in m for m in e.errors), e.errors
    sec = e.sections["innodb"]
    assert sec["encryption"]["decrypted_pages"] == 0 and sec["indexes"] == []
    assert sec["page_types"]["page_compressed (not decoded)"] > 100 and sec["checksum"]["bad_pages"] == []
    assert files["pc_zlib_plain.ibd"].errors == [] and len(files["pc_zlib_plain.ibd"].sections["innodb"]["indexes"]) == 2


def test_checksum_of_the_decompressed_page(server_dir, tmp_path):
    """buf_page_check_corrupt checks the page once decrypted and decompressed: a page
    whose original (inside the ciphertext) has a wrong checksum is bad; the same page
    recompressed and re-encrypted unchanged is good.  Built from the server's own pages:
    decrypt, decompress, change, recompress with zlib, encrypt again (CTR and CBC:
    the cryptography package's own encryptor)."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    from dbxray.parsers.innodb import pagecrypt

    src = server_dir["datadir"] / "p" / "pc_zlib_enc.ibd"
    path = tmp_path / "pc_zlib_enc.ibd"
    shutil.copy(src, path)
    keys = load_key_file(str(server_dir["keys"]))
    with ReadOnlyFile(str(path)) as f:
        pm = build_page_map(f, str(path), keys=keys)
        data = bytearray(f.pread(0, f.size))
    dec = pm.crypt.decryptor
    key = dec.page_keys[1]

    def rewrite(i: int, flip: bool) -> None:
        raw = bytes(data[i * PAGE:(i + 1) * PAGE])
        orig = bytearray(decode_legacy_page(dec.page(raw, i), PAGE, decrypted=True).page)
        if flip:
            orig[200] ^= 0xFF                            # inside the records: the page's checksum no longer holds
        payload = zlib.compress(bytes(orig), 6)
        iv = pagecrypt.page_ivs(pm.space_id[0], np.array([i], np.uint32),
                                np.array([int.from_bytes(raw[16:24], "big")], np.uint64))[0].tobytes()
        if dec.algorithm == "AES_CTR":
            ct = Cipher(algorithms.AES(key), modes.CTR(iv)).encryptor().update(payload)
        else:                                            # CBC, no padding, the tail XORed with AES-ECB(IV)
            whole = len(payload) // 16 * 16
            ct = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor().update(payload[:whole])
            mask = Cipher(algorithms.AES(key), modes.ECB()).encryptor().update(iv)
            ct += bytes(b ^ m for b, m in zip(payload[whole:], mask))
        page = raw[:38] + len(payload).to_bytes(2, "big") + raw[40:42] + ct
        data[i * PAGE:(i + 1) * PAGE] = page.ljust(PAGE, b"\0")

    rewrite(3, flip=True)
    rewrite(4, flip=False)
    path.write_bytes(bytes(data))
    with ReadOnlyFile(str(path)) as f:
        pm2 = build_page_map(f, str(path), keys=keys)
    assert pm2.crypt.decrypted[3] and pm2.crypt.decrypted[4]
    assert not pm2.checksum_ok[3] and pm2.checksum_ok[4]
    assert int(pm2.index_id[4]) == int(pm.index_id[4])
    assert np.array_equal(np.nonzero(~pm2.checksum_ok)[0], [3])

"""MariaDB data-at-rest encryption (issue 15): crypt data, key versions, checksums of
encrypted pages, decryption with the key file, against the MariaDB fixture's
manifest (I_S INNODB_TABLESPACES_ENCRYPTION / INNODB_SYS_INDEXES, innochecksum -S)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess

import numpy as np
import pytest

from dbxray.parsers.innodb import pagecrypt
from dbxray.parsers.innodb.crypt import CRYPT_MAGIC, crypt_data_offset
from dbxray.parsers.keyfile import KeyFileError, load_key_file, parse_key_text
from dbxray.parsers.model import ScanContext
from dbxray.parsers.scan import scan

#: innochecksum -S names -> the engine constants dbxray counts under
INNOCHECKSUM_TYPES = {"Index page": "FIL_PAGE_INDEX", "Undo log page": "FIL_PAGE_UNDO_LOG",
                      "Inode page": "FIL_PAGE_INODE", "Freshly allocated page": "FIL_PAGE_TYPE_ALLOCATED",
                      "Insert buffer bitmap": "FIL_PAGE_IBUF_BITMAP", "System page": "FIL_PAGE_TYPE_SYS",
                      "Transaction system page": "FIL_PAGE_TYPE_TRX_SYS", "File Space Header": "FIL_PAGE_TYPE_FSP_HDR",
                      "Extent descriptor page": "FIL_PAGE_TYPE_XDES", "BLOB page": "FIL_PAGE_TYPE_BLOB"}


@pytest.fixture(scope="module")
def mdb(fixtures_root):
    return fixtures_root / "mariadb"


@pytest.fixture(scope="module")
def manifest(mdb):
    return json.loads((mdb / "manifest.json").read_text())


@pytest.fixture(scope="module")
def keyfile(mdb):
    return str(mdb / "keys.txt")


@pytest.fixture(scope="module")
def plain_scan(mdb):
    return {e.path: e for e in scan(str(mdb / "datadir")).files}


@pytest.fixture(scope="module")
def key_scan(mdb, keyfile):
    ds = scan(str(mdb / "datadir"), ScanContext(keys=load_key_file(keyfile)))
    return {e.path: e for e in ds.files}


def _crypt_files(manifest):
    return [f for f in manifest["files"] if f.get("encryption")]


def _checksum_types(f):
    return {INNOCHECKSUM_TYPES[k]: v for k, v in f["innochecksum"]["page_types"].items()
            if v and k in INNOCHECKSUM_TYPES}


def test_fixture_has_the_encrypted_tables(manifest):
    paths = sorted(f["path"] for f in _crypt_files(manifest))
    assert paths == ["enc/by_default.ibd", "enc/forced_off.ibd", "enc/k4.ibd", "enc/k7.ibd", "enc/pc_enc.ibd",
                     "enc/zip_enc.ibd"]


def test_crypt_data_field_by_field_without_key(manifest, plain_scan):
    for f in _crypt_files(manifest):
        e = plain_scan[f["path"]]
        enc = e.sections["innodb"]["encryption"]
        truth = f["encryption"]
        assert enc["scheme"] == truth["ENCRYPTION_SCHEME"], f["path"]
        assert enc["key_id"] == truth["CURRENT_KEY_ID"], f["path"]
        assert enc["min_key_version"] == truth["MIN_KEY_VERSION"], f["path"]
        assert enc["crypt_data_offset"] == f["crypt_data_offset"], f["path"]
        sec = e.sections["innodb"]
        assert enc["encrypted_pages"] + enc["unencrypted_pages"] == sec["pages"]
        assert enc["algorithm"] is None and enc["decrypted_pages"] == 0
        if truth["ENCRYPTION_SCHEME"] == 1:
            assert enc["encrypted_pages"] > 0 and set(enc["key_versions"]) == {str(truth["CURRENT_KEY_VERSION"])}
            assert enc["index_facts"] == "unknown (encrypted)"
            assert sec["indexes"] == [], f"{f['path']}: indexes invented from ciphertext"
        else:
            assert enc["encrypted_pages"] == 0 and enc["index_facts"] == "from plain pages"


def test_no_false_errors_and_checksums_as_the_engine(manifest, plain_scan, key_scan):
    for f in _crypt_files(manifest):
        for scanned in (plain_scan, key_scan):
            e = scanned[f["path"]]
            assert e.errors == [], e.errors
            assert e.sections["innodb"]["checksum"]["bad_pages"] == []
            assert f["innochecksum"]["rc"] == 0


def test_page_types_in_clear_equal_innochecksum(manifest, plain_scan):
    """The FIL header's type stays in clear: page types are known without the key
    (page-compressed pages excepted: their original type is inside the ciphertext)."""
    for f in _crypt_files(manifest):
        if f["path"] == "enc/pc_enc.ibd":
            continue
        assert plain_scan[f["path"]].sections["innodb"]["page_types"] == _checksum_types(f), f["path"]


def test_indexes_with_the_key_equal_information_schema(manifest, key_scan):
    sys_indexes = manifest["sql"]["innodb_sys_indexes"]
    for f in _crypt_files(manifest):
        e = key_scan[f["path"]]
        space = f["innodb_space_id"]
        truth = sorted((r["INDEX_ID"], r["NAME"], r["PAGE_NO"]) for r in sys_indexes if r["SPACE"] == space)
        got = sorted((ix["index_id"], ix["name"], ix["root_page"]) for ix in e.sections["innodb"]["indexes"])
        assert got == truth, f["path"]
        enc = e.sections["innodb"]["encryption"]
        assert enc["decrypted_pages"] == enc["encrypted_pages"]
        if enc["encrypted_pages"]:
            assert enc["algorithm"] == "AES_CBC"          # the fixture's file_key_management algorithm
            assert enc["index_facts"] == "from decrypted pages"
        assert not any("encrypted pages" in w for w in e.warnings)


def test_decrypted_page_types_equal_the_unencrypted_twin(key_scan, plain_scan, manifest):
    """enc.by_default (encrypted, key 4) and enc.forced_off (ENCRYPTED=NO) hold the same 800 rows:
    the same page types and index shapes; page-compressed enc.pc_enc decrypted gives its original
    types, equal to the encrypted enc.k4 of the same 1000 rows."""
    tw = key_scan["enc/by_default.ibd"].sections["innodb"]
    plain = plain_scan["enc/forced_off.ibd"].sections["innodb"]
    assert tw["page_types"] == plain["page_types"]
    shape = lambda sec: [(ix["name"], ix["pages"], ix["leaf_pages"], ix["levels"], ix["records"])  # noqa: E731
                         for ix in sec["indexes"]]
    assert shape(tw) == shape(plain)
    pc = key_scan["enc/pc_enc.ibd"].sections["innodb"]
    assert pc["page_types"] == key_scan["enc/k4.ibd"].sections["innodb"]["page_types"]
    assert pc["page_types"] == _checksum_types(next(f for f in manifest["files"] if f["path"] == "enc/k4.ibd"))
    for ix in pc["indexes"]:
        assert ix["records"] == manifest["tables"]["enc.pc_enc"]["row_count"]


def test_keys_never_in_the_output(key_scan, mdb):
    keys_hex = [line.split(";")[1].strip().lower() for line in (mdb / "keys.txt").read_text().splitlines()
                if ";" in line]
    text = json.dumps([e.to_json() for e in key_scan.values()], default=str).lower()
    for k in keys_hex:
        assert k not in text and k[:16] not in text
    ring = load_key_file(str(mdb / "keys.txt"))
    assert all(k[:8] not in repr(ring).lower() for k in keys_hex)


# -- AES over many pages: equal to the cryptography package's own modes, page by page ----------

def _aes_modes():
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    return Cipher, algorithms, modes


@pytest.mark.parametrize("length", [16338, 16354, 4050, 32, 17, 5])
def test_batch_cbc_and_ctr_equal_single_page_openssl(length):
    Cipher, algorithms, modes = _aes_modes()
    rng = np.random.default_rng(length)
    key = rng.integers(0, 256, 16, dtype=np.uint8).tobytes()
    n = 7
    data = rng.integers(0, 256, (n, length), dtype=np.uint8)
    ivs = pagecrypt.page_ivs(45, np.arange(3, 3 + n, dtype=np.uint32),
                             np.array([2 ** 64 - 1 - i for i in range(n)], dtype=np.uint64))
    ctr = pagecrypt.decrypt("AES_CTR", key, ivs, data)
    cbc = pagecrypt.decrypt("AES_CBC", key, ivs, data)
    full = length // 16 * 16
    for i in range(n):
        iv = ivs[i].tobytes()
        d = Cipher(algorithms.AES(key), modes.CTR(iv)).decryptor()
        assert ctr[i].tobytes() == d.update(data[i].tobytes()) + d.finalize()
        d = Cipher(algorithms.AES(key), modes.CBC(iv)).decryptor()
        head = d.update(data[i, :full].tobytes()) + d.finalize()
        assert cbc[i, :full].tobytes() == head
        e = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
        mask = e.update(iv) + e.finalize()
        tail = bytes(a ^ b for a, b in zip(data[i, full:].tobytes(), mask))
        assert cbc[i, full:].tobytes() == tail


def test_page_iv_layout():
    iv = pagecrypt.page_ivs(0x01020304, np.array([5], np.uint32), np.array([0x1122334455667788], np.uint64))[0]
    assert iv.tobytes() == bytes.fromhex("04030201" "05000000" "8877665544332211")


def test_crypt_offsets_of_the_fixture():
    assert crypt_data_offset(16384, 16384) == 10428
    assert crypt_data_offset(16384, 4096) == 2748


# -- bad input ---------------------------------------------------------------------------------

def _copy_enc(tmp_path, mdb, names):
    d = tmp_path / "enc"
    d.mkdir()
    for n in names:
        shutil.copy(mdb / "datadir" / "enc" / n, d / n)
        os.chmod(d / n, 0o644)
    return d


def test_wrong_key_named_rest_shown(tmp_path, mdb):
    lines = (mdb / "keys.txt").read_text().splitlines()
    keys = {int(a): b for a, b in (line.split(";") for line in lines if ";" in line)}
    keys[4], keys[7] = keys[7], keys[4]                   # key 4 is now another key
    kf = tmp_path / "wrong.txt"
    kf.write_text("".join(f"{k};{v}\n" for k, v in keys.items()))
    d = _copy_enc(tmp_path, mdb, ["k4.ibd"])
    e = scan(str(d), ScanContext(keys=load_key_file(str(kf)))).files[0]
    assert any("key id 4" in m and "k4.ibd" in m and "page " in m and "wrong key" in m for m in e.errors), e.errors
    sec = e.sections["innodb"]
    assert sec["indexes"] == [] and sec["encryption"]["decrypted_pages"] == 0
    assert sec["page_types"]["FIL_PAGE_INDEX"] == 13       # the rest still shown
    assert sec["checksum"]["bad_pages"] == []


def test_missing_key_id_named(tmp_path, mdb):
    kf = tmp_path / "k1.txt"
    kf.write_text((mdb / "keys.txt").read_text().splitlines()[0] + "\n")     # key 1 only
    d = _copy_enc(tmp_path, mdb, ["k7.ibd", "forced_off.ibd"])
    files = {e.path: e for e in scan(str(d), ScanContext(keys=load_key_file(str(kf)))).files}
    e = files["k7.ibd"]
    assert any("key id 7" in m and "not in the key file" in m and "page " in m for m in e.errors), e.errors
    assert files["forced_off.ibd"].errors == []
    assert len(files["forced_off.ibd"].sections["innodb"]["indexes"]) == 2


def test_key_file_bad_lines_named_and_skipped():
    ring = parse_key_text("# comment\n1;" + "a" * 64 + "\nthis is bad\n4;abc\n0;" + "b" * 32 + "\n1;" + "c" * 32
                          + "\n7; " + "d" * 48 + "  # trailing comment\n", "k.txt")
    assert ring.ids == [1, 7]
    text = "\n".join(ring.problems)
    assert "line 3: syntax error" in text and "line 4: key id 4: wrong key length" in text
    assert "line 5: invalid key id 0" in text and "line 6: duplicate key id 1" in text
    assert "a" * 16 not in text and "c" * 16 not in text


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl command needed to write a Salted__ key file")
def test_encrypted_key_file_password_and_wrong_password(tmp_path, mdb):
    enc = tmp_path / "keys.enc"
    subprocess.run(["openssl", "enc", "-aes-256-cbc", "-md", "sha1", "-pass", "pass:s3cret",
                    "-in", str(mdb / "keys.txt"), "-out", str(enc)], check=True)
    assert enc.read_bytes().startswith(b"Salted__")
    pw = tmp_path / "pw"
    pw.write_text("s3cret\n")
    ring = load_key_file(str(enc), password_file=str(pw))
    assert ring.ids == load_key_file(str(mdb / "keys.txt")).ids
    d = _copy_enc(tmp_path, mdb, ["k4.ibd"])
    e = scan(str(d), ScanContext(keys=ring)).files[0]
    assert [ix["root_page"] for ix in e.sections["innodb"]["indexes"]] == [3, 4]
    with pytest.raises(KeyFileError, match="wrong password"):
        load_key_file(str(enc), password=b"not the password")
    with pytest.raises(KeyFileError, match="password is needed"):
        load_key_file(str(enc))


def test_cli_keyfile_and_bad_password(tmp_path, mdb):
    from dbxray.app.keys import load_keys
    ring, msgs = load_keys(str(mdb / "keys.txt"))
    assert ring is not None and msgs == []
    enc = tmp_path / "keys.enc"
    enc.write_bytes(b"Salted__" + bytes(8) + bytes(48))
    ring, msgs = load_keys(str(enc), prompt=lambda _: "nope")
    assert ring is None and "keys.enc" in msgs[0] and "wrong password" in msgs[0]
    ring, msgs = load_keys(str(tmp_path / "absent.txt"))
    assert ring is None and "cannot read the key file" in msgs[0]


def test_cut_or_corrupt_crypt_data(tmp_path, mdb):
    d = _copy_enc(tmp_path, mdb, ["k4.ibd"])
    p = d / "k4.ibd"
    raw = bytearray(p.read_bytes())
    off = raw.find(CRYPT_MAGIC)
    assert off == 10428
    raw[off + 7] = 9                                      # IV length 9: not sensible
    p.write_bytes(bytes(raw))
    e = scan(str(d), ScanContext(keys=load_key_file(str(mdb / "keys.txt")))).files[0]
    assert any("page 0" in m and "crypt data at byte 10428" in m and "not sensible" in m for m in e.errors), e.errors
    sec = e.sections["innodb"]
    assert sec["encryption"]["encrypted_pages"] == 15     # still counted from the key versions
    assert sec["indexes"] == [] and sec["page_types"]["FIL_PAGE_INDEX"] == 13
    assert not any("space id" in m for m in e.errors)
    assert sec["checksum"]["bad_pages"] == [0]            # the byte changed on page 0, nothing else


def test_extent_map_encryption_mode(key_scan, plain_scan):
    from dbxray.viz.extentmap import MapData
    for scanned, suffix in ((plain_scan, "not decrypted"), (key_scan, "decrypted")):
        e = scanned["enc/k4.ibd"]
        md = MapData(e)
        assert ("encryption", "Encryption (key version)") in md.modes()
        res = md.mode("encryption")
        got = dict(zip(res.labels, res.counts.tolist()))
        enc = e.sections["innodb"]["encryption"]
        assert got == {"not encrypted": enc["unencrypted_pages"], f"key version 1 ({suffix})": enc["encrypted_pages"]}
    plain = MapData(plain_scan["inno/orders_plain.ibd"])
    assert "encryption" not in dict(plain.modes())


def test_payloads_of_decrypted_pages(key_scan):
    from dbxray.parsers.innodb.payloads import unit_payload
    from dbxray.parsers.innodb.pagemap import page_header_fields
    for path in ("enc/k4.ibd", "enc/pc_enc.ibd", "enc/zip_enc.ibd"):
        e = key_scan[path]
        root = next(ix for ix in e.sections["innodb"]["indexes"] if ix["name"] == "PRIMARY")
        raw = unit_payload(e, root["root_page"])
        h = page_header_fields(raw, "mariadb", e.sections["innodb"]["page_size"])
        assert h["PAGE_INDEX_ID"] == root["index_id"] and h["FIL_PAGE_SPACE_ID"] == e.sections["innodb"]["space_id"]


# -- redo log: MariaDB 10.8 layout, encrypted (issue 15 item 3) -------------------------------

def _status(manifest, name):
    return next(int(r["Value"]) for r in manifest["sql"]["innodb_status_log"] if r["Variable_name"] == name)


def test_encrypted_redo_log_of_the_fixture(mdb, manifest):
    from dbxray.parsers.innodb.redo import read_redo_header
    h = read_redo_header(str(mdb / "datadir" / "ib_logfile0"))
    truth = next(f for f in manifest["files"] if f["path"] == "ib_logfile0")
    assert h.format == int(truth["header_hex"][:8], 16) == 0xF09F979D
    assert h.encrypted and h.key_id == 1 and h.key_version == 1
    assert h.format_name == "MariaDB FORMAT_ENC_10_8 (encrypted)" and h.creator == "MariaDB " + manifest["server_version"].split("-")[0]
    assert h.header_checksum == "crc32c" and h.errors == []
    assert len(h.checkpoints) == 2 and all(c.valid for c in h.checkpoints)
    # a slow shutdown checkpoints at its end: after the LSN the server reported just before it
    assert h.checkpoint_lsn >= _status(manifest, "Innodb_lsn_current") >= _status(manifest, "Innodb_lsn_last_checkpoint")
    latest = max(h.checkpoints, key=lambda c: c.lsn)
    assert latest.end_lsn == latest.lsn                   # clean: nothing after the checkpoint
    assert h.to_json()["encrypted"] is True


def _header_10_8(fmt: int, key_id: int, key_version: int) -> bytes:
    import struct
    from dbxray.parsers.innodb.redo import crc32c
    b = bytearray(12288)
    struct.pack_into(">IIQ", b, 0, fmt, 0, 12288)
    b[16:32] = b"MariaDB 10.11.9\0"
    struct.pack_into(">II", b, 48, key_id, key_version)
    struct.pack_into(">I", b, 508, crc32c(bytes(b[:508])))
    for off, lsn in ((4096, 50000), (8192, 60000)):
        struct.pack_into(">QQ", b, off, lsn, lsn)
        struct.pack_into(">I", b, off + 60, crc32c(bytes(b[off:off + 60])))
    return bytes(b)


def test_redo_10_8_plain_and_encrypted_by_key_id():
    from dbxray.parsers.innodb.redo import parse_redo_header
    plain = parse_redo_header(_header_10_8(0x50687973, 0, 0), "ib_logfile0")
    assert not plain.encrypted and plain.key_id is None and plain.checkpoint_lsn == 60000
    assert "key_id" not in plain.to_json()
    enc = parse_redo_header(_header_10_8(0x50687973, 1, 3), "ib_logfile0")
    assert enc.encrypted and (enc.key_id, enc.key_version) == (1, 3) and enc.checkpoint_lsn == 60000
    bad = parse_redo_header(_header_10_8(0xF09F979D, 1, 0), "ib_logfile0")
    assert bad.encrypted and any("key version 0" in e and "ib_logfile0 @ offset 52" in e for e in bad.errors)


# -- the doublewrite buffer of ibdata1 (issue 15 item 4) --------------------------------------

def test_doublewrite_area_not_indexes(plain_scan, manifest):
    e = plain_scan["ibdata1"]
    sec = e.sections["innodb"]
    dw = sec["doublewrite"]
    system = e.sections["innodb"]["system"]["doublewrite"]
    assert dw["blocks"] == [[system["block1"], system["pages_per_block"]], [system["block2"], system["pages_per_block"]]]
    in_dblwr = set(range(64, 192))
    assert {b for b, k in dw["blocks"] for b in range(b, b + k)} == in_dblwr
    # every index listed is a live one: I_S's for space 0 (same root pages), the hard-coded
    # SYS_* dictionary indexes (ids 1..5) or the change buffer; none rooted in the doublewrite blocks
    truth = {(r["INDEX_ID"], r["NAME"], r["PAGE_NO"]) for r in manifest["sql"]["innodb_sys_indexes"] if r["SPACE"] == 0}
    got = {(ix["index_id"], ix["name"], ix["root_page"]) for ix in sec["indexes"]}
    assert truth <= got
    assert all(ix["root_page"] not in in_dblwr for ix in sec["indexes"])
    assert all(iid in (1, 2, 3, 4, 5) or name == "CLUST_IND" for iid, name, _ in got - truth)
    # copies: FIL headers of pages of real spaces
    spaces = {r["SPACE"]: r for r in manifest["sql"]["innodb_sys_tablespaces"]}
    pages_of = {f["innodb_space_id"]: f["apparent_size"] // 16384 for f in manifest["files"]
                if f.get("innodb_space_id") is not None and f["path"].endswith((".ibd", "ibdata1"))}
    assert dw["written_slots"] == len(dw["copies"]) > 0
    for c in dw["copies"]:
        assert 64 <= c["slot_page"] < 192
        if c["space_id"] is not None:
            assert c["space_id"] == 0 or c["space_id"] in spaces
            assert c["page_no"] < pages_of.get(c["space_id"], 1 << 32)


def test_doublewrite_fragment_pages_are_not_a_finding(plain_scan):
    """buf_dblwr_t::create allocates FSP_EXTENT_SIZE / 2 fragment pages to its segment before the two
    blocks and never writes them: the 32 zero pages 13..44 are those, not pages lost."""
    e = plain_scan["ibdata1"]
    dw = e.sections["innodb"]["doublewrite"]
    assert dw["reserved_pages"] == list(range(13, 45)) and dw["reserved_zero_pages"] == 32
    assert not any("all zero but the extent map marks them in use" in w for w in e.warnings + e.errors)


# -- FULLTEXT aux tables (issue 15 item 5) ----------------------------------------------------

def test_fts_aux_tables_attached_to_table_and_index(plain_scan, manifest):
    sys_tables = {r["TABLE_ID"]: r["NAME"] for r in manifest["sql"]["innodb_sys_tables"]}
    sys_indexes = {r["INDEX_ID"]: r for r in manifest["sql"]["innodb_sys_indexes"]}
    aux = [f for f in manifest["files"] if f.get("fts_aux_of")]
    assert len(aux) == 17
    per_index: dict = {}
    for f in aux:
        e = plain_scan[f["path"]]
        owner = f["fts_aux_of"]                                  # "inno/ft_docs"
        assert f"{e.database}/{e.table}" == owner, f["path"]
        fts = e.sections["innodb"]["fts"]
        assert sys_tables[fts["table_id"]] == owner
        if fts["index_id"] is not None:
            ix = sys_indexes[fts["index_id"]]
            assert ix["TABLE_ID"] == fts["table_id"] and ix["TYPE"] & 32 and ix["NAME"] == fts["index"]
        per_index.setdefault(fts["index_id"], []).append(f)
    parent = plain_scan["inno/ft_docs.ibd"].sections["innodb"]["fulltext"]
    got = {g["index_id"]: g for g in parent["indexes"]}
    fulltext_ids = {r["INDEX_ID"] for r in sys_indexes.values() if r["TABLE_ID"] == 20 and r["TYPE"] & 32}
    assert set(got) == fulltext_ids == {34, 41}
    for iid, files in per_index.items():
        g = got[iid] if iid is not None else parent["common"]
        assert g["aux_tables"] == len(files) == (6 if iid is not None else 5)
        assert g["aux_bytes"] == sum(f["apparent_size"] for f in files)
        assert g["aux_pages"] == sum(f["apparent_size"] // 16384 for f in files)


def test_fts_files_listed_under_their_table(mdb, manifest):
    ds = scan(str(mdb / "datadir"))
    t = next(t for t in ds.tables if (t.database, t.name) == ("inno", "ft_docs"))
    assert sorted(t.files) == sorted(manifest["tables"]["inno.ft_docs"]["files"]) or \
        set(manifest["tables"]["inno.ft_docs"]["files"]) - set(t.files) <= {"inno/ft_docs.frm"}
    assert not any(x.name.upper().startswith("FTS_") for x in ds.tables if x.engine == "innodb")


@pytest.mark.parametrize("algorithm", pagecrypt.ALGORITHMS)
def test_any_run_of_blocks_decrypts_on_its_own(algorithm):
    """decrypt_blocks (the page map's header-only path) equals the whole-area decryption
    on the same blocks, from the first block and from a later one (CBC: given the block before)."""
    rng = np.random.default_rng(7)
    key = rng.integers(0, 256, 16, dtype=np.uint8).tobytes()
    data = rng.integers(0, 256, (9, 16354), dtype=np.uint8)
    ivs = pagecrypt.page_ivs(7, np.arange(9, dtype=np.uint32), np.array([2 ** 64 - 3] * 9, dtype=np.uint64))
    whole = pagecrypt.decrypt(algorithm, key, ivs, data)
    assert np.array_equal(pagecrypt.decrypt_blocks(algorithm, key, ivs, data[:, :80], 0), whole[:, :80])
    got = pagecrypt.decrypt_blocks(algorithm, key, ivs, data[:, 16320:16352], 1020, prev=data[:, 16304:16320])
    assert np.array_equal(got, whole[:, 16320:16352])
    assert np.array_equal(pagecrypt.decrypt_tail(algorithm, key, ivs, data[:, 16352:], 1022), whole[:, 16352:])


def test_aes_ctr_pages_written_by_a_server():
    """AES_CTR (the fixture's key file is AES_CBC): 5 pages of a table a private MariaDB 10.11.19
    wrote with file_key_management_encryption_algorithm=AES_CTR (tests/data/mariadb_aes_ctr)."""
    from pathlib import Path
    from dbxray.parsers.fileio import ReadOnlyFile
    from dbxray.parsers.innodb.pagemap import build_page_map
    d = Path(__file__).parent / "data" / "mariadb_aes_ctr"
    keys = load_key_file(str(d / "keys.txt"))
    with ReadOnlyFile(str(d / "enc_t_pages0-4.ibd")) as f:
        pm = build_page_map(f, "enc_t", keys=keys)
        raw3 = f.pread(3 * 16384, 16384)
    c = pm.crypt
    assert c.crypt.key_id == 1 and c.algorithm == "AES_CTR"
    assert c.candidates.tolist() == [False, True, True, True, True] and c.decrypted.tolist() == c.candidates.tolist()
    assert pm.index_id[3] == 23 and pm.index_id[4] == 24 and pm.level[3] == 2
    assert (pm.space_id[1:] == 5).all()                   # in the ciphertext: decrypted
    # the whole page (payloads, inspector): the end-of-page LSN the engine checks
    plain = c.decryptor.page(raw3, 3)
    assert plain[-8:-4] == raw3[20:24] and plain[34:38] == (5).to_bytes(4, "big")
    wrong = parse_key_text("1;" + "00" * 32 + "\n", "zero.txt")
    with ReadOnlyFile(str(d / "enc_t_pages0-4.ibd")) as f:
        pm = build_page_map(f, "enc_t", keys=wrong)
    assert not pm.crypt.decrypted.any()
    assert any("key id 1" in m and "wrong key" in m for m, _ in pm.errors)


def test_cut_crypt_data_named():
    from dbxray.parsers.innodb.crypt import CryptDataError, read_crypt_data
    page = bytearray(16384)
    page[10428:10434] = CRYPT_MAGIC
    page[10434:10436] = bytes([1, 16])
    with pytest.raises(CryptDataError, match="cut"):
        read_crypt_data(bytes(page[:10440]), 10428)       # a page 0 that ends inside the crypt data
    assert read_crypt_data(bytes(page), 10428).key_id == 0


def test_page_whose_key_version_has_no_key(tmp_path, mdb):
    d = _copy_enc(tmp_path, mdb, ["k4.ibd"])
    p = d / "k4.ibd"
    raw = bytearray(p.read_bytes())
    raw[5 * 16384:5 * 16384 + 4] = (2).to_bytes(4, "big")   # page 5: key version 2 (the file has only 1)
    p.write_bytes(bytes(raw))
    e = scan(str(d), ScanContext(keys=load_key_file(str(mdb / "keys.txt")))).files[0]
    assert any("page 5: key id 4 version 2 is not in the key file" in m for m in e.errors), e.errors
    enc = e.sections["innodb"]["encryption"]
    assert enc["key_versions"] == {"1": 14, "2": 1} and enc["decrypted_pages"] == 14
    assert e.sections["innodb"]["checksum"]["bad_pages"] == [5]   # the changed bytes are under the CRC
    assert [ix["root_page"] for ix in e.sections["innodb"]["indexes"]] == [3, 4]


def test_whatif_with_the_key_projects_the_plain_pages(tmp_path, mdb, keyfile):
    """Without the key the what-if says "encrypted: cannot project" (issue 17: compressing
    ciphertext says nothing); with it, the decrypted pages, as the engine compresses them."""
    from dbxray.app.cli import main
    d = _copy_enc(tmp_path, mdb, ["k4.ibd", "pc_enc.ibd"])
    out = {}
    for label, extra in (("plain", []), ("key", ["--keyfile", keyfile])):
        o = tmp_path / f"{label}.json"
        assert main(["whatif", str(d), "--codec", "zlib:6", "--sample", "all", "--json", "-o", str(o),
                     "--no-progress"] + extra) == 0
        out[label] = json.loads(o.read_text())

    def target(doc, name):
        return next(t for t in doc["targets"] if t["target"].endswith(name))

    def projected(doc, name):
        return next(r for r in target(doc, name)["results"]
                    if r["codec"] == "zlib:6" and r["model"] == "innodb_page_compressed")["projected_bytes"]
    assert projected(out["key"], "k4.ibd") < 0.6 * target(out["key"], "k4.ibd")["logical_bytes"]
    for name in ("k4.ibd", "pc_enc.ibd"):
        t = target(out["plain"], name)
        assert any(n.startswith("encrypted: cannot project") for n in t["notes"])
        assert not [r for r in t["results"] if r["model"].startswith("innodb_")]
    assert not out["plain"].get("errors") and not out["key"].get("errors")

"""run_whatif on generated data: JSON contract, sampling, early stop, cancel, pipeline coverage."""
import json
import zlib

import numpy as np
import pytest

import dbxray.compress.sources as sources
from dbxray.compress.registry import UnknownCodec
from dbxray.compress.whatif import result_for, run_whatif
from compress_util import innodb_raw_entry, raw_payload_module
from dbxray.parsers.model import Cancelled, Dataset

P = 16384


@pytest.fixture()
def fake_parser(monkeypatch):
    monkeypatch.setattr(sources, "payload_source", lambda engine: raw_payload_module())


@pytest.fixture(scope="module")
def generated_tablespace(tmp_path_factory):
    """An InnoDB-like file: FSP_HDR page, 3 indexes of index pages of varied compressibility, zero pages."""
    rng = np.random.default_rng(5)
    pages = []
    hdr = bytearray(P)
    hdr[24:26] = (8).to_bytes(2, "big")
    pages.append(bytes(hdr))
    for i in range(300):
        pg = bytearray(P)
        pg[24:26] = (17855).to_bytes(2, "big")
        index = i % 3
        pg[38 + 28:38 + 36] = (100 + index).to_bytes(8, "big")
        alphabet = [4, 40, 256][index]
        fill = int(rng.integers(2000, P - 200))
        pg[200:200 + fill] = rng.integers(0, alphabet, fill, dtype=np.uint8).tobytes()
        pages.append(bytes(pg))
    pages.extend([bytes(P)] * 20)
    path = tmp_path_factory.mktemp("gen") / "db1" / "t_gen.ibd"
    path.parent.mkdir()
    path.write_bytes(b"".join(pages))
    return path


def _dataset(path):
    return Dataset(str(path.parent.parent), [innodb_raw_entry(path, "db1/t_gen.ibd")])


def test_json_contract(fake_parser, generated_tablespace):
    res = run_whatif(_dataset(generated_tablespace), ["zlib:6", "lz4"], sample="0.05", seed=3, fs_block=4096,
                     filesystem="xfs")
    assert {"tool", "schema_version", "kind", "root", "sample", "fs_block", "targets", "advice"} <= set(res)
    assert res["tool"] == "dbxray" and res["schema_version"] == 1 and res["kind"] == "whatif"
    assert res["sample"] == {"mode": "fraction", "fraction": 0.05, "seed": 3,
                             "units_sampled": res["sample"]["units_sampled"], "units_total": 321,
                             "units_encoded": res["sample"]["units_encoded"],
                             "description": res["sample"]["description"]}
    assert 0 < res["sample"]["units_encoded"] <= res["sample"]["units_sampled"]
    assert 0 < res["sample"]["units_sampled"] < 321
    assert res["fs_block"] == 4096
    t = res["targets"][0]
    assert t["target"] == "db1/t_gen.ibd" and t["engine"] == "innodb"
    assert t["logical_bytes"] == 321 * P and t["current_bytes"] == 321 * P
    split = t["split"]          # issue 17 item 1: what the bytes are made of, summing to the current bytes
    assert split["compressible_bytes"] + split["overhead_bytes"] + split["reclaimable_bytes"] == t["current_bytes"]
    assert split["rebuilt_bytes"] == t["current_bytes"] - split["reclaimable_bytes"]
    for r in t["results"]:
        plain = {"codec", "model", "projected_bytes", "ci95", "compress_mb_s", "decompress_mb_s"}
        if r["model"].startswith("innodb_"):     # the DDL rebuilds the table: the saving is compression only
            # max_bytes: what the units can physically take (issue 17 "Intervals"), an engine model's
            assert set(r) == plain | {"compression_saving_bytes", "compression_saving_ci95", "max_bytes"}
            assert r["ci95"][1] <= r["max_bytes"]
            assert r["compression_saving_bytes"] == split["rebuilt_bytes"] - r["projected_bytes"]
            assert r["compression_saving_ci95"] == [split["rebuilt_bytes"] - r["ci95"][1],
                                                    split["rebuilt_bytes"] - r["ci95"][0]]
        else:
            assert set(r) - {"max_bytes"} == plain
        lo, hi = r["ci95"]
        assert lo <= r["projected_bytes"] <= hi
        assert r["compress_mb_s"] > 0 and r["decompress_mb_s"] > 0
    models = {r["model"] for r in t["results"]}
    assert {"innodb_page_compressed", "innodb_row_compressed_kbs8k_estimate",
            "innodb_page_compressed_64k_pages_approximation", "zfs_recordsize_128k_ashift12"} <= models
    # a tablespace MariaDB extends with fallocate: btrfs would store it uncompressed
    assert "btrfs_128k_extents_fallocated" in models
    for a in res["advice"]:
        assert {"target", "codec", "projected_bytes", "saving_bytes", "ddl"} <= set(a)
        assert a["saving_bytes"] == split["rebuilt_bytes"] - a["projected_bytes"]
    assert any("PAGE_COMPRESSED=1" in a["ddl"] and "`db1`.`t_gen`" in a["ddl"] for a in res["advice"])
    json.dumps(res)


def test_same_seed_same_result_and_all_is_exact(fake_parser, generated_tablespace):
    ds = _dataset(generated_tablespace)
    kw = dict(raw_models=False, larger_pages=False, filesystem="xfs")
    a = run_whatif(ds, ["zlib:1"], sample="0.05", seed=9, **kw)
    b = run_whatif(ds, ["zlib:1"], sample="0.05", seed=9, **kw)
    strip = lambda r: [(x["codec"], x["model"], x["projected_bytes"], x["ci95"]) for x in r["targets"][0]["results"]]
    assert strip(a) == strip(b)
    full = run_whatif(ds, ["zlib:1"], sample="all", **kw)
    r = result_for(full["targets"][0], "zlib:1", "innodb_page_compressed")
    assert r["ci95"] == [r["projected_bytes"]] * 2
    assert full["sample"]["units_sampled"] == full["sample"]["units_total"] == 321
    # the full re-encode, computed here without the library
    want = P + 0
    for i in range(1, 301):
        pg = generated_tablespace.read_bytes()[i * P:(i + 1) * P]
        size = (26 + len(zlib.compress(pg, 1)) + 4 + 255) & ~255
        want += P if size >= P else min(P, -(-size // 4096) * 4096)
    assert r["projected_bytes"] == want


def test_pipeline_interval_coverage(fake_parser, generated_tablespace):
    """The 95% interval of the whole pipeline holds the full re-encode in >= 95 of 100 seeds."""
    ds = _dataset(generated_tablespace)
    kw = dict(raw_models=False, larger_pages=False, filesystem="xfs")
    full = result_for(run_whatif(ds, ["lz4"], sample="all", **kw)["targets"][0], "lz4",
                      "innodb_page_compressed")["projected_bytes"]
    hits = 0
    for seed in range(100):
        r = result_for(run_whatif(ds, ["lz4"], sample="0.05", seed=seed, **kw)["targets"][0], "lz4",
                       "innodb_page_compressed")
        hits += r["ci95"][0] <= full <= r["ci95"][1]
    assert hits >= 95, f"covered in {hits} of 100 seeds"


def test_target_error_stops_early(fake_parser, generated_tablespace):
    ds = _dataset(generated_tablespace)
    kw = dict(raw_models=False, larger_pages=False, filesystem="xfs")
    loose = run_whatif(ds, ["zlib:6"], sample="all", target_error=0.5, **kw)
    tight = run_whatif(ds, ["zlib:6"], sample="all", target_error=0.001, **kw)
    assert loose["sample"]["units_sampled"] < tight["sample"]["units_sampled"]
    r = result_for(loose["targets"][0], "zlib:6", "innodb_page_compressed")
    assert (r["ci95"][1] - r["ci95"][0]) / 2 <= 0.5 * r["projected_bytes"]
    r = result_for(tight["targets"][0], "zlib:6", "innodb_page_compressed")
    assert (r["ci95"][1] - r["ci95"][0]) / 2 <= 0.001 * r["projected_bytes"] + 1


def test_cancel_and_progress(fake_parser, generated_tablespace):
    ds = _dataset(generated_tablespace)
    seen = []
    run_whatif(ds, ["lz4"], sample="0.1", progress=lambda d, t, m: seen.append((d, t, m)),
               raw_models=False, larger_pages=False)
    assert seen and seen[-1][0] == seen[-1][1]
    done = [d for d, _, _ in seen]
    assert done == sorted(done) and len({t for _, t, _ in seen}) == 1
    with pytest.raises(Cancelled):
        run_whatif(ds, ["lz4"], sample="all", is_cancelled=lambda: True)


def test_unknown_codec_is_refused(generated_tablespace):
    with pytest.raises(UnknownCodec):
        run_whatif(_dataset(generated_tablespace), ["zstd:99"])


def test_missing_parser_is_an_error_not_a_crash(generated_tablespace, monkeypatch):
    def missing(engine):
        raise sources.SourceUnavailable("innodb: the parser's payloads.py is not there yet")
    monkeypatch.setattr(sources, "payload_source", missing)
    res = run_whatif(_dataset(generated_tablespace), ["lz4"])
    assert res["targets"] == [] and "not there yet" in res["errors"][0]


@pytest.fixture(scope="module")
def four_tablespaces(tmp_path_factory):
    """Four InnoDB-like files of 3 indexes each (12 strata of 16 KiB pages: enough to pool)."""
    rng = np.random.default_rng(11)
    root = tmp_path_factory.mktemp("pool")
    (root / "db1").mkdir()
    entries = []
    for f in range(4):
        pages = []
        for i in range(120):
            pg = bytearray(P)
            pg[24:26] = (17855).to_bytes(2, "big")
            pg[38 + 28:38 + 36] = (100 + 10 * f + i % 3).to_bytes(8, "big")
            fill = int(rng.integers(2000, P - 200))
            pg[200:200 + fill] = rng.integers(0, [4, 40, 256][i % 3], fill, dtype=np.uint8).tobytes()
            pages.append(bytes(pg))
        path = root / "db1" / f"t{f}.ibd"
        path.write_bytes(b"".join(pages))
        entries.append(innodb_raw_entry(path, f"db1/t{f}.ibd"))
    return Dataset(str(root), entries)


def test_every_target_sampled_before_any_is_estimated(fake_parser, four_tablespaces, monkeypatch):
    """A sampled run samples and encodes every target, pools the strata's spreads, then
    estimates each target from the same units (issue 17): each sampled unit is encoded once per
    codec, the sample is the one a run without pooling draws, the projections are the same, and
    the intervals are those of the pooled spreads (inside the physical range)."""
    import dbxray.compress.whatif as whatif
    from dbxray.compress.engines.innodb import InnoDBPageCompressed
    seen: dict = {}
    encode = InnoDBPageCompressed.project

    def counting(self, codec, payload, unit=None):
        key = (zlib.crc32(payload), codec.name)
        seen[key] = seen.get(key, 0) + 1
        return encode(self, codec, payload, unit)

    monkeypatch.setattr(InnoDBPageCompressed, "project", counting)
    kw = dict(sample="0.05", seed=2, fs_block=4096, filesystem="xfs", raw_models=False, larger_pages=False)
    pooled = run_whatif(four_tablespaces, ["zlib:6", "lz4"], **kw)
    assert seen and max(seen.values()) == 1
    assert len(seen) == 2 * pooled["sample"]["units_encoded"]
    monkeypatch.setattr(whatif, "fit_priors", lambda pool: {})
    alone = run_whatif(four_tablespaces, ["zlib:6", "lz4"], **kw)
    assert pooled["sample"] == alone["sample"]
    changed = 0
    for tp, ta in zip(pooled["targets"], alone["targets"]):
        for rp, ra in zip(tp["results"], ta["results"]):
            assert (rp["codec"], rp["model"], rp["projected_bytes"]) == (ra["codec"], ra["model"], ra["projected_bytes"])
            assert 0 <= rp["ci95"][0] <= rp["projected_bytes"] <= rp["ci95"][1] <= rp["max_bytes"]
            changed += rp["ci95"] != ra["ci95"]
    assert changed >= 4

"""The seed tables' numeric columns (real engine data) through every codec chain
the compressor layer projects: each block decoded from the fixture, encoded
with the chain, decoded again, and compared.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from dbxray.parsers.codecs.ch_block import (compress_block, decompress_block, encode_chain, verify_checksum,
                                     walk_blocks)

INT_CHAINS = ["LZ4", "ZSTD(1)", "Delta,ZSTD(1)", "DoubleDelta,LZ4", "T64,ZSTD(1)", "T64('bit'),LZ4",
              "GCD,LZ4", "Gorilla"]
FLOAT_CHAINS = ["LZ4", "ZSTD(1)", "Delta,ZSTD(1)", "Gorilla", "Gorilla,ZSTD(1)", "FPC(12)", "FPC(20),LZ4"]
COLUMNS = {"nq_UInt32": (4, "UInt32", INT_CHAINS), "nq_UInt64": (8, "UInt64", INT_CHAINS),
           "period_start": (4, "DateTime", INT_CHAINS),
           "nq_Float32": (4, None, FLOAT_CHAINS), "nq_Float64": (8, None, FLOAT_CHAINS)}


@pytest.mark.parametrize("table", ["seed_nq_mostly1", "seed_nq_u1000", "seed_nq_u1m"])
def test_seed_columns_through_every_chain(fixtures_root, table, artifacts_dir):
    ch = fixtures_root / "clickhouse"
    man = json.loads((ch / "manifest.json").read_text())
    part = man["tables"][table]["system_parts"][0]
    sizes = {}
    for col, (width, vtype, chains) in COLUMNS.items():
        data = (ch / "datadir" / part["rel_path"] / f"{col}.bin").read_bytes()
        raws = [decompress_block(data[o:o + h.stored_size]) for o, h in walk_blocks(data)]
        assert raws and all(len(r) % width == 0 for r in raws)
        for chain in chains:
            total = 0
            for raw in raws:
                block = bytes(16) + encode_chain(raw, chain, type_size=width, value_type=vtype)
                assert decompress_block(block) == raw, (col, chain)
                total += len(block)
            sizes[f"{col} {chain}"] = total
        # the data really is what the seed says: 90% ones / 1..1000 / 1..1e6
        vals = np.frombuffer(b"".join(raws), dtype={4: "<f4", 8: "<f8"}[width]
                             if col.startswith("nq_F") else f"<u{width}")
        if col.startswith("nq_"):
            assert vals.min() >= 1 and vals.max() <= 1_000_000
    assert verify_checksum(compress_block(raws[0], "T64,ZSTD(1)", type_size=4, value_type="DateTime"))
    (artifacts_dir / f"ch_codecs_seed_{table}.json").write_text(json.dumps(sizes, indent=1))

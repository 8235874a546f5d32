"""Coverage of the 95% interval on the TokuDB fixture's two dictionaries that under-covered
(issue 17, item 4): ``_fx_blobs_main`` (basements whose zlib ratio varies 0.27-0.55, 2 sampled
per node) and ``_fx_orders_key_idx_status`` (of 34 basements per node the 4 written first
compress 10-36% worse; a 2-basement sample misses them in 78% of seeds).

Through the projector's own path (compress/projector.py: strata by node, the nodes of one
height as a group, the partitions' stored bytes as ``aux``; the two passes of a run, the second
with the spreads the first pooled), every unit's projection computed once and cached, so each
seed costs the estimator only. Measured: 97 and 99 of 100 seeds, median width 15.0% and 5.1%;
the estimator before them: 93 and 100, but the second with a median width of 87% (t with 1 df on
a spread its sample does not see: the run here is too small to pool).
"""
from __future__ import annotations

import statistics
from concurrent.futures import ThreadPoolExecutor

import pytest

from dbxray.compress.engines.tokudb import TokuDBPartitions, tokudb_units
from dbxray.compress.projector import project
from dbxray.compress.registry import parse_codec
from dbxray.compress.sampling import parse_sample
from dbxray.compress.whatif import fit_priors

DICTS = ("_fx_blobs_main_178_1_1d.tokudb", "_fx_orders_key_idx_status_6_1_1d_B_0.tokudb")
SEEDS = 100


class _Cached(TokuDBPartitions):
    """The storage model with each unit's projection kept (the same bytes give the same figure)."""

    def __post_init__(self):
        super().__post_init__()
        self.memo = {}

    def project(self, codec, payload, unit=None):
        key = (codec.name, unit)
        if key not in self.memo:
            self.memo[key] = super().project(codec, payload, unit)
        return self.memo[key]


@pytest.fixture(scope="module")
def dictionaries(sparse_fixtures):
    from dbxray.parsers.scan import scan
    ds = scan(str(sparse_fixtures / "tokudb" / "datadir"))
    out = {}
    for name in DICTS:
        e = next(f for f in ds.files if f.path.endswith(name))
        out[name] = tokudb_units(e)
    return out


def test_tokudb_interval_coverage(dictionaries):
    """Both dictionaries sampled as one run does (compress/whatif.py): a first pass pools the
    strata's spreads, the second estimates with the prior fitted on them."""
    codec = parse_codec("zlib:6")
    pairs = {name: [(codec, _Cached())] for name in DICTS}     # a model (and its cache) per dictionary
    key = (codec.name, "tokudb_partitions")
    sample = parse_sample("0.05")
    with ThreadPoolExecutor(max_workers=1) as ex:
        full = {}
        for name, base in dictionaries.items():
            assert base.group is not None and base.aux is not None
            full[name] = project(base, pairs[name], parse_sample("all"), pool=ex).pairs[key].estimate
            assert full[name].exact
        covered = dict.fromkeys(DICTS, 0)
        widths: dict = {n: [] for n in DICTS}
        for seed in range(SEEDS):
            pool: dict = {}
            for name, base in dictionaries.items():
                project(base, pairs[name], sample, seed=seed, pool=ex, spread_pool=pool)
            priors = fit_priors(pool)
            for name, base in dictionaries.items():
                est = project(base, pairs[name], sample, seed=seed, pool=ex, priors=priors).pairs[key].estimate
                covered[name] += est.lo <= full[name].projected <= est.hi
                widths[name].append((est.hi - est.lo) / full[name].projected)
    for name in DICTS:
        # 95% nominal: 90 of 100 is under it by more than 2 standard errors (2.2 points)
        assert covered[name] >= 90, f"{name}: covered in {covered[name]} of {SEEDS} seeds"
        # and not by intervals that say nothing (the 200-seed benchmark: 12% and 5%)
        assert statistics.median(widths[name]) < 0.25, f"{name}: median width {statistics.median(widths[name]):.1%}"

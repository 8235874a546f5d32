"""Seeded uniform and owner-stratified sampling."""
import numpy as np
import pytest

from dbxray.compress.sampling import SampleSpecError, parse_sample, stratify, uniform


def test_parse_sample():
    assert parse_sample("all").is_all
    assert parse_sample("0.05").fraction == 0.05 and parse_sample("0.05").mode == "fraction"
    assert parse_sample("5%").fraction == pytest.approx(0.05)
    assert parse_sample(1.0).is_all
    for bad in ("0", "-1", "1.5", "abc", "nan"):
        with pytest.raises(SampleSpecError):
            parse_sample(bad)


def test_same_seed_same_sample_and_different_seed_differs():
    owners = np.repeat(np.arange(5), 200)
    a = stratify(owners, seed=7).take(0.05)
    b = stratify(owners, seed=7).take(0.05)
    c = stratify(owners, seed=8).take(0.05)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert any(not np.array_equal(x, y) for x, y in zip(a, c))


def test_small_owners_are_never_missed():
    owners = np.array([0] * 10000 + [1] * 3 + [2] * 1 + [3] * 50)
    st = stratify(owners, seed=0)
    got = {k: len(i) for k, i in zip(st.keys, st.take(0.01))}
    assert got == {0: 100, 1: 2, 2: 1, 3: 2}
    # every sampled unit belongs to its stratum, no duplicates
    for k, idx in zip(st.keys, st.take(0.3)):
        assert np.all(owners[idx] == k) and len(set(idx.tolist())) == len(idx)


def test_samples_are_nested_and_all_takes_everything():
    owners = np.random.default_rng(1).integers(0, 7, 3000)
    st = stratify(owners, seed=3)
    small, big, full = st.take(0.02), st.take(0.1), st.take(1.0)
    for s, b, f, o in zip(small, big, full, st.order):
        assert np.array_equal(b[:len(s)], s)
        assert len(f) == len(o)
    assert sum(len(f) for f in full) == 3000


def test_uniform_is_uniform():
    n = 20000
    counts = np.zeros(n)
    for seed in range(40):
        idx = uniform(n, seed=seed).take(0.05)[0]
        counts[idx] += 1
    # each decile of the population gets about a tenth of the draws
    dec = counts.reshape(10, -1).sum(axis=1)
    assert np.all(np.abs(dec / dec.sum() - 0.1) < 0.01)


def test_eligible_mask_leaves_units_out():
    owners = np.zeros(100, dtype=int)
    eligible = np.arange(100) % 2 == 0
    st = stratify(owners, seed=0, eligible=eligible)
    assert st.n_units == 50 and np.all(st.take(1.0)[0] % 2 == 0)


def test_groups_of_equal_the_loop_they_replace():
    """sources._groups_of (grouped_units' groups, vectorized) gives the groups the unit-by-unit
    loop did: consecutive units of one stratum in file order, ``factor`` at most, in the order
    of their first unit."""
    import numpy as np

    from dbxray.compress.sources import _groups_of

    def loop(units, strata, factor):
        groups, current = [], {}
        for k in units:
            s = int(strata[k])
            g = current.get(s)
            if g is None or len(g) >= factor:
                g = []
                current[s] = g
                groups.append(g)
            g.append(int(k))
        return groups

    rng = np.random.default_rng(7)
    for _ in range(2000):
        n = int(rng.integers(0, 80))
        factor = int(rng.integers(1, 6))
        strata = rng.integers(-2, 6, size=n)
        order = rng.permutation(n)
        units = order[(rng.random(n) < 0.8)[order]]
        assert _groups_of(units, strata, factor) == loop(units, strata, factor)

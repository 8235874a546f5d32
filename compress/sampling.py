"""Seeded sampling of units: uniform, or stratified by owner.

Units are the engine's own (InnoDB pages, ClickHouse compressed blocks, TokuDB
partitions).  A sample is drawn as a seeded random *order* of each stratum's
units, so that a larger sample always contains a smaller one with the same
seed: growing a sample until the confidence interval is narrow enough
(``--target-error``) only encodes the new units.

Stratifying by owner (index, column, dictionary) guarantees that every owner
gets at least ``min_per_stratum`` units (all of them when it has fewer), so a
small index or column is never missed.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class SampleSpecError(ValueError):
    """A ``--sample`` value that is neither a fraction in (0, 1] nor ``all``."""


@dataclass(frozen=True)
class SampleSpec:
    """``mode`` is ``"fraction"`` or ``"all"``; ``fraction`` is 1.0 for ``all``."""

    mode: str
    fraction: float

    @property
    def is_all(self) -> bool:
        return self.mode == "all"


def parse_sample(value) -> SampleSpec:
    """``"all"``, ``"0.05"``, ``"5%"``, ``0.05`` -> :class:`SampleSpec`."""
    if isinstance(value, SampleSpec):
        return value
    if value is None:
        return SampleSpec("fraction", 0.05)
    if isinstance(value, str):
        text = value.strip().lower()
        if text == "all":
            return SampleSpec("all", 1.0)
        try:
            f = float(text[:-1]) / 100 if text.endswith("%") else float(text)
        except ValueError:
            raise SampleSpecError(f"--sample {value!r}: give a fraction such as 0.05, 5% or 'all'") from None
    else:
        f = float(value)
    if not (0.0 < f <= 1.0) or f != f:
        raise SampleSpecError(f"--sample {value!r}: the fraction must be in (0, 1]")
    if f == 1.0:
        return SampleSpec("all", 1.0)
    return SampleSpec("fraction", f)


@dataclass
class Strata:
    """The population split into strata, each in a seeded random order.

    ``order[h]`` lists the unit indices of stratum h in sampling order;
    ``sizes[h]`` is N_h.  ``take(f)`` gives, per stratum, how many of them a
    fraction f samples.
    """

    keys: list
    order: list[np.ndarray]
    min_per_stratum: int = 2

    @property
    def sizes(self) -> np.ndarray:
        return np.array([len(o) for o in self.order], dtype=np.int64)

    @property
    def n_units(self) -> int:
        return int(self.sizes.sum())

    def counts(self, fraction: float) -> np.ndarray:
        """n_h for a sampling fraction: ceil(f * N_h), at least min_per_stratum, at most N_h."""
        sizes = self.sizes
        if fraction >= 1.0:
            return sizes.copy()
        n = np.ceil(sizes * fraction).astype(np.int64)
        n = np.maximum(n, self.min_per_stratum)
        return np.minimum(n, sizes)

    def take(self, fraction: float) -> list[np.ndarray]:
        """The sampled unit indices per stratum for ``fraction``."""
        return [o[:k] for o, k in zip(self.order, self.counts(fraction))]


def stratify(strata_ids, seed: int = 0, eligible=None, min_per_stratum: int = 2) -> Strata:
    """Strata over units labelled by ``strata_ids`` (any hashable labels, one per unit).

    ``eligible`` (bool mask) leaves out units that need no sampling (their
    projection is known exactly).  The order within each stratum comes from
    ``numpy.random.default_rng(seed)`` and does not depend on anything else.
    """
    ids = np.asarray(strata_ids)
    n = len(ids)
    mask = np.ones(n, dtype=bool) if eligible is None else np.asarray(eligible, dtype=bool)
    rng = np.random.default_rng(seed)
    keys, inverse = np.unique(ids, return_inverse=True)
    inverse = inverse.reshape(-1)
    perm_keys = rng.random(n)       # one random key per unit: a seeded shuffle inside each stratum
    order: list[np.ndarray] = []
    out_keys: list = []
    for h, key in enumerate(keys.tolist()):
        idx = np.flatnonzero((inverse == h) & mask)
        if len(idx) == 0:
            continue
        idx = idx[np.argsort(perm_keys[idx], kind="stable")]
        order.append(idx)
        out_keys.append(key)
    return Strata(out_keys, order, min_per_stratum)


def uniform(n_units: int, seed: int = 0, eligible=None) -> Strata:
    """A single stratum: a seeded uniform sample without replacement."""
    return stratify(np.zeros(n_units, dtype=np.int64), seed, eligible, min_per_stratum=2)

"""Projected bytes from a sample, with a 95% confidence interval.

Method: the **stratified (separate) ratio estimator**.  In stratum h (an
owner: index, column, dictionary) the known total of logical bytes X_h is
multiplied by the sampled ratio R_h = sum(y) / sum(x) (y = projected stored
bytes of a unit, x = its logical bytes).  Its variance is the textbook
larger of two standard estimates (Cochran, *Sampling Techniques*, 6.9,
6.12 and 6.15): the linearised one with its sample-mean adjustment

    v_lin = N_h^2 (1 - n_h/N_h) (X_bar_h / x_bar_h)^2 s_d^2 / n_h,   d_i = y_i - R_h x_i

and the jackknife one (leave-one-out ratios R_(j))

    v_jk = (1 - n_h/N_h) X_h^2 (n_h - 1)/n_h sum_j (R_(j) - mean R_(j))^2,

summed over strata; the interval uses Student's t with Satterthwaite's
degrees of freedom, each stratum counted with (n_h - 1)/2 degrees of freedom
instead of n_h - 1: Satterthwaite assumes normal data, for which
Var(s^2) = 2 sigma^4/(n - 1); compressed sizes are skewed and lumpy (rounded
to blocks), and with an excess kurtosis of about 2 the effective degrees of
freedom halve.  With the larger of the two variances this keeps the 95%
interval's coverage at or above 95% with the 2-5 units per stratum that
small owners get (checked in tests/test_compress_estimate.py and
tests/test_compress_whatif.py on fixtures and generated data).  Units whose projection is known without encoding
(pages the engine never compresses, holes) are added exactly and are not
sampled.  A stratum sampled whole contributes no variance.

The interval (and the estimate) never leave [0, the most the units can physically
take]: the storage model's ``max_bytes`` summed over the units not known exactly, plus
the known part (compress/bounds.py); ``Estimate.bound`` keeps it for sums of estimates.
Coverage over 200 seeds per fixture family: tests/benchmarks/bench_coverage.py.

Projections of storage models are rounded (to a filesystem block, a 256-byte
step...): when a sample of such values happens to be identical the sample
variance is 0 although the population's is not, so ``granularity`` sets a
floor of (granularity/2)^2 on s_d^2 for strata not sampled whole.  A stratum
whose variance is that floor (its sample spread below it, the jackknife too)
adds no term to Satterthwaite's denominator: the floor is set, not estimated
from the sample, so it carries no sampling error for Student's t to pay for.
Before this rule two equal sampled pages of a small index had their floor
multiplied by t(1 df) = 12.7 and the interval ran to the physical bound; the
coverage benchmark (README, Benchmarks) measured both (InnoDB fixtures 100.0% ->
97.8% covered, median width 195% -> 99% of the figure, 200 seeds).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

METHOD = ("stratified separate ratio estimator (y = projected bytes, x = logical bytes per unit), "
          "linearised variance with finite-population correction, Student t with Satterthwaite df")

# two-sided 95% Student t quantiles for df 1..30
_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
         2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
         2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]
_Z975 = 1.959963984540054


def t975(df: float) -> float:
    """The 97.5% quantile of Student's t (table to 30 df, Cornish-Fisher beyond)."""
    if not math.isfinite(df) or df > 1e6:
        return _Z975
    if df < 1:
        df = 1
    if df <= 30:
        lo = int(math.floor(df))
        hi = min(lo + 1, 30)
        frac = df - lo
        return _T975[lo - 1] * (1 - frac) + _T975[hi - 1] * frac
    z = _Z975
    return (z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)
            + (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * df ** 3))


@dataclass
class StratumSample:
    """One stratum: its population size and logical total, and the sampled (x, y)."""

    n_total: int          # N_h: units in the stratum (eligible for sampling)
    x_total: float        # X_h: logical bytes of all N_h units
    x: np.ndarray         # logical bytes of the sampled units
    y: np.ndarray         # projected bytes of the sampled units


@dataclass
class Estimate:
    """Projected bytes with its 95% interval; ``exact`` when nothing was left unsampled."""

    projected: float
    lo: float
    hi: float
    variance: float
    df: float
    units_sampled: int
    units_total: int
    #: the most the units can physically take (Model.max_bytes summed, the known part
    #: included); None when the model knows no bound. lo and hi never pass it.
    bound: float | None = None

    @property
    def exact(self) -> bool:
        return self.variance == 0.0 and self.units_sampled >= self.units_total

    @property
    def relative_half_width(self) -> float:
        if self.projected <= 0:
            return 0.0 if self.hi <= 0 else math.inf
        return (self.hi - self.lo) / 2 / self.projected

    def ci95(self) -> list[int]:
        return [int(math.floor(self.lo)), int(math.ceil(self.hi))]


def ratio_estimate(strata: list[StratumSample], fixed_bytes: float = 0.0, fixed_units: int = 0,
                   granularity: float = 1.0, lower_bound: float = 0.0,
                   upper_bound: float | None = None) -> Estimate:
    """Stratified ratio estimate of the total projected bytes (see the module doc).

    ``fixed_bytes`` / ``fixed_units`` are the exactly known part; the interval
    is clipped below at ``lower_bound`` + fixed_bytes (bytes cannot be negative)
    and above at ``upper_bound`` (the most the units can physically take, the
    known part included), the estimate with it.
    """
    total = float(fixed_bytes)
    var = 0.0
    sat_num = 0.0
    sat_den = 0.0
    sampled = fixed_units
    units = fixed_units
    for s in strata:
        n = len(s.x)
        units += s.n_total
        sampled += n
        if s.n_total == 0:
            continue
        if n == 0:
            raise ValueError("a stratum with units has no sample")
        x = np.asarray(s.x, dtype=np.float64)
        y = np.asarray(s.y, dtype=np.float64)
        sx = x.sum()
        if n >= s.n_total:
            total += float(y.sum())
            continue
        fpc = 1 - n / s.n_total
        if sx > 0:
            r = y.sum() / sx
            est = r * s.x_total
            d = y - r * x
            adj = (s.x_total / s.n_total / x.mean()) ** 2
        else:    # all sampled units empty: fall back to the mean per unit
            est = y.mean() * s.n_total
            d = y - y.mean()
            adj = 1.0
        total += float(est)
        floored = False
        if n > 1:
            s2 = float(d @ d) / (n - 1)
            floor = (granularity / 2.0) ** 2
            floored = s2 < floor
            v = s.n_total ** 2 * fpc / n * adj * max(s2, floor)
            sx_j = sx - x
            if sx > 0 and np.all(sx_j > 0):
                rj = (y.sum() - y) / sx_j
                v_jk = fpc * s.x_total ** 2 * (n - 1) / n * float(((rj - rj.mean()) ** 2).sum())
                if v_jk > v:
                    v, floored = v_jk, False
        else:
            v = s.n_total ** 2 * fpc * max(float(y[0]), granularity) ** 2   # one unit: as wide as it
        var += v
        sat_num += v
        if not floored:     # the floor is set, not estimated: it takes no Student-t penalty
            sat_den += v ** 2 / max((n - 1) / 2, 1.0)
    df = (sat_num ** 2 / sat_den) if sat_den > 0 else math.inf
    half = t975(df) * math.sqrt(var) if var > 0 else 0.0
    lo = max(total - half, float(fixed_bytes) + lower_bound)
    hi = total + half
    if upper_bound is not None:
        total, hi = min(total, upper_bound), min(hi, upper_bound)
        lo = min(lo, total)
    return Estimate(total, lo, hi, var, df, sampled, units, upper_bound)

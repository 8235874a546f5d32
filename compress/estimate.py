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

**Spreads pooled across the run** (``prior``; compress/whatif.py samples every target
before it estimates any).  Two sampled units say little of a stratum's spread (1 degree of
freedom: t = 12.7), and the same spread is measured again in every stratum of the same kind.
Each stratum's relative spread u = s_d^2 / x_bar^2 (:func:`stratum_spread`, per logical byte, so
units of any size compare) goes to a pool per storage model, codec and rounding step, but for a
stratum whose sampled units differ in size more than :data:`MIXED_SIZES` times (:func:`comparable`:
a 21-byte TokuDB partition beside a 280 KiB one, whose ratio's jackknife measures the size mix,
not how the bytes compress); from 10 strata on, the pool gives
an empirical-Bayes prior (:func:`fit_spread_prior`: the df-weighted mean u0 and, by moments,
the prior's own df0, at most the df the pool holds).  A stratum's variance is then
scale * (df0 u0 + nu u) / (df0 + nu), nu = n - 1 (the posterior mean of a scaled inverse
chi-square prior).  Its pooled part is one estimate shared by every stratum that uses it, so it
enters Satterthwaite's df once, with half the df it was estimated from (the same halving as any
estimated spread), and the stratum's own part with its own.  The granularity floor stays: a
stratum whose moderated spread is under it takes the floor, set, as before (without it, the
pooled spread under-covered a sum of many strata: 81-86 of 100 seeds on the fixture's plain 16 KiB
pages, tests/test_compress_estimate.py, as it cannot tell a stratum that varies more than the
pool's mean from 1-df noise).  Strata pooled only with strata of units of the same size (a power
of two) left the fixtures' TokuDB dictionaries with too few of a kind to pool: one of them, whose
4 first-written of 34 partitions per node compress 10-36% worse, is sampled without any of them
in 78% of seeds and had no spread to show for it (40% covered); pooled with every comparable
stratum of the run it borrows the spread the other dictionaries' nodes show (84% covered).

**Strata whose sampled units agree, given the pool** (issue 17).  (g/2)^2 is the most a stratum
can vary when its units sit on two adjacent steps; most strata whose samples agree vary less
(InnoDB fixtures: 98.0% covered with it), some far more (a tablespace of 1-, 2- and 4-block
pages whose 2 sampled pages both took 2 blocks).  With a pool, such a stratum takes
E[u | its sample spread under the rounding bound] instead: the pool's spreads as a distribution
(:func:`spread_distribution`, the nonparametric maximum-likelihood mixing distribution of every
stratum's observation: chi-square with half its n - 1 degrees of freedom as in Satterthwaite's,
or, for strata that agree, censored at n/(n - 1) (g/2)^2, the most the sample variance of n
values less than g apart can be), weighted by the chance that a stratum of each spread shows
agreeing units (:meth:`SpreadPrior.agreeing`).  So a run whose strata that vary often show
agreeing samples gives agreeing strata much of their spread, and a run whose agreeing strata
are mostly constant little.  It is set from the pool, as the floor was (no Student-t penalty).
Without a pool (under 10 strata, or none that varies) the floor stays.

**Strata of one kind, and what the units take on disk now** (issue 17; engines opt in through
``UnitSet.group`` and ``UnitSet.aux``, TokuDB only so far, compress/engines/tokudb.py).  TokuDB
stratifies by node so that every node is sampled, but the nodes of one height of one dictionary
hold one kind of partition: 2 sampled partitions per node give each node a spread of 1 degree of
freedom, and the run's prior (fitted by moments to dictionaries whose spreads differ 1,000
times, ``df0`` at least 4) pulled a dictionary whose basements vary most (``_fx_blobs_main``, zlib
ratios 0.27-0.55) down to the run's mean: 76% covered.  Such a ``group`` of strata now uses its
strata's pooled spread (:func:`group_spreads`, the pooled within-stratum variance of collapsed
strata, Cochran 5A.12: the df of all its strata, counted once in Satterthwaite's df) and is not
moderated towards the run's prior; the pool gets one observation per group (:func:`pool_spreads`).
And a sample of 2 of 34 basements misses the 4 that compress 10-36% worse in 78% of seeds
(``_fx_orders_key_idx_status``), where no spread measured from the sample can say they exist: but
each partition's stored bytes under the dictionary's current method (BP_SIZE, read from the
node headers without decoding anything) are known for every unit, and show them.  A stratum
with ``aux`` takes at least the variance its ratio estimate would have on those stored bytes
(:func:`aux_spread`: the linearised variance over the whole stratum, the population's S^2), scaled
to the projection by (R_y / R_z)^2 (as if a partition's projected bytes were proportional to its
stored ones); set from all N units, so no Student-t penalty.  Only intervals move: the sample
and the point estimates are unchanged.  Measured (tests/benchmarks/bench_coverage.py, 200
seeds): TokuDB 89.9% -> 95.9% covered, median width 8.5% -> 6.6%; ``_fx_blobs_main`` 78% -> 98%,
``_fx_orders_key_idx_status`` 84% -> 99%.  Tried and not kept (offline replay of the same
strata): the exact design variance over every possible sample (in place of the linearised
one) for strata of units of mixed sizes, 98.6% (the skewed errors of a 21-byte partition beside
280 KiB ones over-cover); adding this sample's own error on the stored bytes, 99.2%; the
grouped strata also moderated by the run's prior, 96.7% with median width 10.4%.  InnoDB pages'
record bytes (page_get_data_size, known for every page) as ``aux``: 93.2% -> 97.3-99.3% on the
fixtures with the median width 57.6% -> 66-94% (a page-compressed page's bytes are blocks, not
proportional to its records): not used.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

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
    #: strata of one kind in a target (the nodes of one height of a TokuDB tree): their spreads
    #: are one population's, pooled before the run's prior moderates them (None: a kind of its own)
    group: object = None
    #: what the units' current stored bytes, known for all N units, say of this estimate:
    #: (R_z, V_z) of :func:`aux_spread`; None when the engine knows no such bytes
    aux: tuple | None = None


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


@dataclass(frozen=True)
class SpreadPrior:
    """A spread per unit pooled over many strata of one kind (the same storage model and codec
    across a run's targets): ``u0`` the relative variance of a unit's ratio (s_d^2 / x_bar^2)
    a typical stratum has, worth ``df0`` degrees of freedom (inf: every stratum has it)."""

    u0: float
    df0: float
    strata: int
    #: the degrees of freedom u0 is estimated from (sum of the strata's df)
    pooled_df: float = math.inf
    #: the strata's spreads as a distribution (relative variances, 0 first, and their weights:
    #: :func:`spread_distribution`); what a stratum whose sampled units agree borrows
    grid: tuple = ()
    weights: tuple = ()
    _memo: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    def agreeing(self, nu: float, bound: float) -> float | None:
        """E[u | the stratum's sample spread is under ``bound``] under :attr:`grid` / :attr:`weights`:
        the spread of a stratum whose ``nu + 1`` sampled units agree to within the rounding step
        (None without a distribution)."""
        if not self.grid:
            return None
        key = (nu, bound)
        v = self._memo.get(key)
        if v is None:
            g = np.asarray(self.grid)
            w = np.asarray(self.weights) * _p_below(nu, bound, g)
            v = self._memo[key] = float(w @ g / w.sum()) if w.sum() > 0 else self.u0
        return v


#: a stratum whose sampled units differ in size more than this many times stays out of the pool
MIXED_SIZES = 8


def effective_df(df: float) -> float:
    """The degrees of freedom a stratum's sample spread is worth: half its n - 1, as in
    Satterthwaite's (module doc: compressed sizes are skewed and lumpy, their excess kurtosis
    about 2)."""
    return df / 2


def comparable(s: StratumSample) -> bool:
    """Whether a stratum's spread says how the bytes of a kind of unit compress: its sampled units
    within a factor :data:`MIXED_SIZES` of each other in size.  Beyond it the ratio's spread measures
    the size mix (a near-empty unit beside a full one: the jackknife ratio without the full one is
    the empty one's), and would widen every stratum it is pooled into."""
    x = np.asarray(s.x, dtype=np.float64)
    return len(x) > 0 and float(x.max()) <= MIXED_SIZES * float(x.min())


def stratum_spread(s: StratumSample, granularity: float = 1.0) -> tuple[float, float, float] | None:
    """A stratum's own spread per unit as (u, df, bound) for the pooled prior: u = s_d^2 / x_bar^2,
    the larger of the linearised and jackknife forms (the ratio_estimate variance divided by
    N^2 (1 - n/N) X_bar^2 / n), df = n - 1, and ``bound`` > 0 when its sampled units agree to
    within the model's rounding step g (the spread under the granularity floor): then its
    spread before rounding is only known to be under n/(n - 1) (g/2)^2 / x_bar^2, the most the
    sample variance of n values less than g apart can be (Popoviciu), else 0. None when the
    stratum tells nothing of it: sampled whole, fewer than 2 units, no logical bytes, or units
    of mixed sizes (:func:`comparable`)."""
    n = len(s.x)
    if n < 2 or n >= s.n_total or s.n_total == 0 or not comparable(s):
        return None
    scale = _unit_scale(s)
    if scale <= 0:
        return None
    v, v_floor, _ = _own_variance(s, granularity)
    return v / scale, float(n - 1), (n / (n - 1) * v_floor / scale if v < v_floor else 0.0)


def fit_spread_prior(spreads: list, min_strata: int = 10) -> SpreadPrior | None:
    """Empirical-Bayes prior of the per-stratum spreads, by moments on the variances themselves
    (zeros included: strata whose sampled units agree say the spread is small): the strata's
    u_h scatter by the prior's variance V plus their sampling variance 2 E[sigma^4] / df_h,
    so V = (Var(u) - 2 u0^2 m) / (1 + 2 m), m = mean(1 / df_h), u0 = the df-weighted mean;
    a scaled inverse chi-square prior of that mean and variance has df0 = 4 + 2 u0^2 / V,
    at most the degrees of freedom the strata hold together (sum df_h: u0 is estimated from
    them, it cannot be known better; that is also df0 when V <= 0, the spreads differing no
    more than sampling makes them); with it the spreads' distribution
    (:func:`spread_distribution`). None with fewer than ``min_strata`` strata or no spread
    at all."""
    vals = [tuple(v) + (0.0,) * (3 - len(v)) for v in spreads]
    vals = [v for v in vals if v[0] >= 0 and v[1] > 0 and math.isfinite(v[0])]
    if len(vals) < min_strata:
        return None
    u = np.array([v[0] for v in vals])
    d = np.array([v[1] for v in vals])
    u0 = float((u * d).sum() / d.sum())
    if u0 <= 0:
        return None
    m = float((1 / d).mean())
    big_v = (float(u.var(ddof=1)) - 2 * u0 ** 2 * m) / (1 + 2 * m)
    total_df = float(d.sum())
    df0 = total_df if big_v <= 0 else min(total_df, 4 + 2 * u0 ** 2 / big_v)
    grid, weights = spread_distribution(np.array(vals, dtype=np.float64))
    return SpreadPrior(u0, df0, len(vals), total_df, grid, weights)


def _p_below(nu: float, bound: float, grid: np.ndarray) -> np.ndarray:
    """P(chi-square(nu) < nu bound / sigma^2) for each sigma^2 of ``grid`` (1 at sigma^2 = 0): the
    chance that the sample spread of nu + 1 units falls under ``bound``."""
    g = np.asarray(grid, dtype=np.float64)
    out = np.ones_like(g)
    pos = g > 0
    out[pos] = _gammainc_lower(nu / 2, nu * bound / (2 * g[pos]))
    return out


def _gammainc_lower(a: float, x: np.ndarray) -> np.ndarray:
    """The regularized lower incomplete gamma function P(a, x) (its power series; 1 where x is
    over a + 60, the series' tail there under 1e-12)."""
    x = np.asarray(x, dtype=np.float64)
    out = np.ones_like(x)
    m = (x < a + 60.0) & (x > 0)
    out[x <= 0] = 0.0
    xs = x[m]
    term = np.ones_like(xs)
    acc = np.ones_like(xs)
    for j in range(1, 200):
        term = term * xs / (a + j)
        acc += term
    logp = -xs + a * np.log(xs) - math.lgamma(a + 1) + np.log(acc)
    out[m] = np.exp(np.minimum(logp, 0.0))
    return out


def spread_distribution(obs: np.ndarray, iterations: int = 500) -> tuple[tuple, tuple]:
    """The distribution of the strata's spreads that makes their observations most likely: the
    nonparametric maximum-likelihood mixing distribution (Kiefer and Wolfowitz 1956; EM on a
    fixed grid: 0, and relative variances a factor sqrt(2) apart from 1/1000 of the smallest
    observed to 4 times the largest).  Each stratum's (u, df, bound) (:func:`stratum_spread`)
    is a chi-square observation, df u / sigma^2 ~ chi-square(df), or, with ``bound`` > 0,
    censored: only P(df u / sigma^2 < df bound / sigma^2) is known.  Unlike the scaled inverse
    chi-square fitted by moments it says how often strata that vary show agreeing samples."""
    if not len(obs):
        return (), ()
    obs, count = np.unique(obs, axis=0, return_counts=True)     # equal observations, one row each
    seen = obs[(obs[:, 2] == 0) & (obs[:, 0] > 0), 0]
    cens = obs[obs[:, 2] > 0]
    if not len(seen):
        return (), ()
    lo = min(float(seen.min()), float(cens[:, 2].min()) if len(cens) else math.inf)
    hi = 4 * max(float(seen.max()), float(cens[:, 2].max()) if len(cens) else 0.0)
    k = int(math.ceil(math.log(hi / (lo / 1000)) / math.log(math.sqrt(2)))) + 1
    grid = np.concatenate([[0.0], lo / 1000 * math.sqrt(2) ** np.arange(k)])
    lik = np.empty((len(obs), len(grid)))
    pos = grid > 0
    for i, (u, df, c) in enumerate(obs):
        nu = effective_df(df)
        if c > 0:
            lik[i] = _p_below(nu, c, grid)
        else:
            r = np.full(len(grid), -np.inf)
            r[pos] = -nu / 2 * np.log(grid[pos]) - nu * u / (2 * grid[pos])
            lik[i] = np.exp(r - r.max())
    w = np.full(len(grid), 1.0 / len(grid))
    share = count / count.sum()
    for _ in range(iterations):
        post = lik * w
        post /= post.sum(axis=1, keepdims=True)
        w_new = share @ post
        done = np.abs(w_new - w).max() < 1e-8
        w = w_new
        if done:
            break
    return tuple(grid.tolist()), tuple(w.tolist())


def _unit_scale(s: StratumSample) -> float:
    """N^2 (1 - n/N) X_bar^2 / n: the stratum's variance is this times its u."""
    n = len(s.x)
    return s.n_total ** 2 * (1 - n / s.n_total) / n * (s.x_total / s.n_total) ** 2


def _own_variance(s: StratumSample, granularity: float) -> tuple[float, float, float]:
    """(variance of the stratum's estimate from its own sample, the variance the granularity
    floor gives, the estimate) for a stratum sampled in part with n >= 2 (see the module doc)."""
    n = len(s.x)
    x = np.asarray(s.x, dtype=np.float64)
    y = np.asarray(s.y, dtype=np.float64)
    sx = x.sum()
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
    s2 = float(d @ d) / (n - 1)
    floor = (granularity / 2.0) ** 2
    raw = s.n_total ** 2 * fpc / n * adj * s2
    v_floor = s.n_total ** 2 * fpc / n * adj * floor
    sx_j = sx - x
    if sx > 0 and np.all(sx_j > 0):
        rj = (y.sum() - y) / sx_j
        raw = max(raw, fpc * s.x_total ** 2 * (n - 1) / n * float(((rj - rj.mean()) ** 2).sum()))
    return raw, v_floor, float(est)




def aux_spread(x, z, n: int) -> tuple | None:
    """(R_z, V_z) of a whole stratum from a size known for every one of its units (their stored
    bytes now, z, beside their logical bytes x) for a sample of ``n`` of them: R_z = Z / X and
    V_z the linearised variance of the ratio estimate of Z, N^2 (1 - n/N) S_dz^2 / n with
    d_z = z - R_z x over all N units (S^2 with N - 1), the population's, not the sample's.
    None when it says nothing (fewer than 2 units, n >= N, no bytes)."""
    x = np.asarray(x, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    big_n = len(x)
    if big_n < 2 or n < 1 or n >= big_n or x.sum() <= 0 or z.sum() <= 0:
        return None
    rz = float(z.sum() / x.sum())
    d = z - rz * x
    return rz, big_n ** 2 * (1 - n / big_n) / n * float(d @ d) / (big_n - 1)


def group_spreads(strata: list[StratumSample], granularity: float = 1.0) -> dict:
    """Per group of strata of one kind (``StratumSample.group``): (u, df, strata) pooled over
    its comparable strata sampled in part, u the df-weighted mean of their own spreads (the
    pooled within-stratum variance of collapsed strata, Cochran 5A.12) and df the sum of
    their n - 1. Groups of fewer than 2 such strata are left out (a stratum alone keeps its own)."""
    acc: dict = {}
    for s in strata:
        n = len(s.x)
        if s.group is None or n < 2 or n >= s.n_total or not comparable(s):
            continue
        scale = _unit_scale(s)
        if scale <= 0:
            continue
        raw = _own_variance(s, granularity)[0]
        a = acc.setdefault(s.group, [0.0, 0.0, 0])
        a[0] += (n - 1) * raw / scale
        a[1] += n - 1
        a[2] += 1
    return {k: (a[0] / a[1], a[1], a[2]) for k, a in acc.items() if a[2] >= 2 and a[1] > 0}


def pool_spreads(strata: list[StratumSample], granularity: float = 1.0) -> list:
    """What a target's strata give the run's pool (:func:`fit_spread_prior`): each group of strata
    of one kind its pooled (u, df, 0) (:func:`group_spreads`: one observation of that kind's
    spread, worth the df of its strata together), every other stratum its own
    (:func:`stratum_spread`)."""
    groups = group_spreads(strata, granularity)
    out = [(u, df, 0.0) for u, df, _ in groups.values()]
    for s in strata:
        if s.group is not None and s.group in groups:
            continue
        sp = stratum_spread(s, granularity)
        if sp is not None:
            out.append(sp)
    return out


def ratio_estimate(strata: list[StratumSample], fixed_bytes: float = 0.0, fixed_units: int = 0,
                   granularity: float = 1.0, lower_bound: float = 0.0,
                   upper_bound: float | None = None,
                   prior: SpreadPrior | None = None) -> Estimate:
    """Stratified ratio estimate of the total projected bytes (see the module doc).

    ``fixed_bytes`` / ``fixed_units`` are the exactly known part; the interval
    is clipped below at ``lower_bound`` + fixed_bytes (bytes cannot be negative)
    and above at ``upper_bound`` (the most the units can physically take, the
    known part included), the estimate with it.  ``prior``: the spread pooled over the
    run's comparable strata of the same kind (:func:`fit_spread_prior`); each stratum's own
    spread is moderated towards it (see the module doc).  Strata of one ``group`` use their
    group's pooled spread as their own (:func:`group_spreads`); a stratum with ``aux`` takes at
    least the variance its units' stored bytes show over the whole stratum (module doc).
    """
    total = float(fixed_bytes)
    var = 0.0
    sat_num = 0.0
    sat_den = 0.0
    shared: dict = {}            # one estimate shared by several strata -> [its variance, its df]
    groups = group_spreads(strata, granularity)
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
        y = np.asarray(s.y, dtype=np.float64)
        if n >= s.n_total:
            total += float(y.sum())
            continue
        fpc = 1 - n / s.n_total
        parts: list = []     # (variance, df or None when set, shared key or None)
        if n > 1:
            raw, v_floor, est = _own_variance(s, granularity)
            scale = _unit_scale(s)
            g = groups.get(s.group) if s.group is not None and scale > 0 else None
            if g is not None:        # the group's pooled spread is the stratum's own, shared
                own_v, nu, gkey = scale * g[0], g[1], ("group", s.group)
            else:
                own_v, nu, gkey = raw, float(n - 1), None
            parts = None
            if prior is not None and scale > 0 and g is None:
                w = prior.df0 / (prior.df0 + nu)
                agree = (prior.agreeing(effective_df(float(n - 1)), n / (n - 1) * v_floor / scale)
                         if own_v < v_floor else None)
                if agree is not None:
                    # its sampled units agree: the spread the run's strata have when theirs agree
                    # (from the pool's distribution; set, no Student-t penalty, as the floor was)
                    parts = [(scale * agree, None, None)]
                else:
                    common = w * scale * prior.u0          # the pooled part: one estimate, shared
                    own = (1 - w) * own_v                  # the stratum's (or its group's) own part
                    if common + own >= v_floor:            # under the floor the floor stays, set
                        parts = [(common, prior.pooled_df, ("prior", id(prior))), (own, nu, gkey)]
            if parts is None:
                if own_v < v_floor:   # the floor is set, not estimated: it takes no Student-t penalty
                    parts = [(v_floor, None, None)]
                else:
                    parts = [(own_v, nu, gkey)]
            if s.aux is not None and est > 0 and s.x_total > 0:
                rz, vz = s.aux
                v_aux = (est / s.x_total / rz) ** 2 * vz if rz > 0 else 0.0
                if v_aux > sum(p[0] for p in parts):
                    # the stored bytes of all N units vary more than the sample shows (units
                    # the sample missed): that spread, known for the whole stratum, set
                    parts = [(v_aux, None, None)]
        else:
            x0 = float(s.x[0])
            est = float(y[0]) / x0 * s.x_total if x0 > 0 else float(y[0]) * s.n_total
            parts = [(s.n_total ** 2 * fpc * max(float(y[0]), granularity) ** 2, 2.0, None)]  # one unit: as wide as it
        total += float(est)
        for v, df, key in parts:
            var += v
            sat_num += v
            if df is None:
                continue
            if key is None:
                sat_den += v ** 2 / max(df / 2, 1.0)
            else:
                a = shared.setdefault(key, [0.0, df])
                a[0] += v
    for v, df in shared.values():      # each shared estimate counts once, with its own df
        sat_den += v ** 2 / max(df / 2, 1.0)
    df = (sat_num ** 2 / sat_den) if sat_den > 0 else math.inf
    half = t975(df) * math.sqrt(var) if var > 0 else 0.0
    lo = max(total - half, float(fixed_bytes) + lower_bound)
    hi = total + half
    if upper_bound is not None:
        total, hi = min(total, upper_bound), min(hi, upper_bound)
        lo = min(lo, total)
    return Estimate(total, lo, hi, var, df, sampled, units, upper_bound)

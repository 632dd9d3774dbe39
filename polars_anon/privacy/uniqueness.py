"""Population uniqueness: the share of population-unique records, estimated from a sample.

The input is the histogram of class sizes of the sample (how many classes hold
1, 2, ... records), the sample size n and the population size N (or the sampling
fraction f = n / N). The estimators follow ARX (``org.deidentifier.arx.risk``):

- **Zayatz** (1991): the share of sample uniques that are population uniques, from
  hypergeometric probabilities of drawing one record of a class, using the sample
  class sizes for the population's; population uniques = ``c1 u / f`` with u that share;
- **Pitman** (1996, Hoshino's use): maximum-likelihood (θ, α) of the two-parameter
  Poisson-Dirichlet model, then ``Γ(θ + 1) / Γ(θ + α) N^α`` population uniques;
- **SNB** (Chen and McNulty 1998, shifted negative binomial): the number of
  non-empty population classes K is estimated, then (α, β) solve the expected
  counts of classes of size 1 and 2; population uniques = ``K β^α``. With d = (1 - f)(1 - β), those are
  ``K f (β / (1 - d))^α (α d / (1 - d) + 1)`` and ``K α β^α f² (1 - β) / 2 (1 - d)^-(α+2) (2 - (1 - α) d)``
  (the sums over the population sizes of the binomial draws; ARX's ``ModelSNB`` multiplies by
  ``(1 - d)^(α+2)`` in the second, though its Jacobian is that of the division);
- **Dankar** et al. (2012) decision rule: Pitman when f <= 0.1 (Zayatz if Pitman
  finds no solution), else the smaller of Zayatz and SNB (Zayatz if SNB finds none).

A table without sample uniques has no estimated population uniques (all four give 0).
An estimate that has no solution, or lies outside [0, N], is NaN (and Dankar
falls back as above). Returned figures are *shares of the population* (uniques / N).

>>> round(estimate({1: 10, 2: 20, 5: 4}, 1000.0, "zayatz"), 6)
0.022948
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import lru_cache

import numpy as np

__all__ = ["ESTIMATORS", "estimate", "estimates"]

ESTIMATORS = ("pitman", "zayatz", "snb", "dankar")


def _hist(histogram: Mapping[int, int]) -> tuple[np.ndarray, np.ndarray]:
    sizes = np.array(sorted(int(s) for s in histogram if histogram[s] > 0), dtype=np.float64)
    counts = np.array([float(histogram[int(s)]) for s in sizes], dtype=np.float64)
    return sizes, counts


def _log_choose(a: np.ndarray | float, b: np.ndarray | float) -> np.ndarray:
    from scipy.special import gammaln

    return gammaln(np.asarray(a) + 1) - gammaln(np.asarray(b) + 1) - gammaln(np.asarray(a) - np.asarray(b) + 1)


def hypergeometric_one(population: float, successes: np.ndarray, draws: float) -> np.ndarray:
    """P(exactly one success) drawing `draws` of `population` items holding `successes` successes.

    >>> round(float(hypergeometric_one(10, np.array([2]), 3)[0]), 6)  # 2 * C(8, 2) / C(10, 3)
    0.466667
    """
    k = np.asarray(successes, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        log = np.log(k) + _log_choose(population - k, draws - 1) - _log_choose(population, draws)
    return np.where((k >= 1) & (population - k >= draws - 1), np.exp(log), 0.0)


def zayatz(histogram: Mapping[int, int], population: float) -> float:
    """Population uniques by Zayatz's model (a count)."""
    sizes, counts = _hist(histogram)
    n, u = float(sizes @ counts), float(counts.sum())
    c1 = float(histogram.get(1, 0))
    big_n = float(round(population))
    p1 = hypergeometric_one(big_n, sizes, n)
    total = float((counts / u * p1).sum())
    one = float(hypergeometric_one(big_n, np.array([1.0]), n)[0])
    if total <= 0:
        return math.nan
    share = (c1 / u) * one / total
    return c1 * share / (n / population)


def pitman(histogram: Mapping[int, int], population: float) -> float:
    """Population uniques by Pitman's model (a count); NaN when the likelihood has no solution.

    >>> round(pitman({1: 60, 2: 10, 3: 5, 8: 2}, 10_000.0), 4)
    958.7437
    >>> pitman({1: 10, 2: 20, 5: 4}, 1000.0)  # the likelihood is highest at α = 0 (Ewens): no solution
    nan
    """
    return _pitman(_key(histogram), float(population))


def _key(histogram: Mapping[int, int]) -> tuple[tuple[int, int], ...]:
    return tuple(sorted((int(s), int(c)) for s, c in histogram.items() if c))


@lru_cache(maxsize=4096)
def _pitman(key: tuple[tuple[int, int], ...], population: float) -> float:
    """:func:`pitman` of a histogram given as sorted (size, count) pairs, remembered: the suppression prefix
    search of :class:`~polars_anon.privacy.reidentification.PopulationUniqueness` meets the same histograms
    again under other lattice vectors."""
    from scipy.optimize import root
    from scipy.special import digamma, gammaln

    histogram = dict(key)
    sizes, counts = _hist(histogram)
    n, u = float(sizes @ counts), float(counts.sum())
    c1 = float(histogram.get(1, 0))
    c2 = float(histogram.get(2, 0)) or 1.0
    big = sizes > 1
    big_sizes, big_counts = sizes[big], counts[big]
    if _ewens_is_the_maximum(big_sizes, big_counts, n, u):
        return math.nan
    args = np.empty(5 + len(big_sizes), dtype=np.float64)

    def equations(x: np.ndarray) -> list[float]:
        # one digamma call over every argument; the same arithmetic, term by term, as the closed forms
        # o1 = (ψ(u + t/a) − ψ(t/a + 1)) / a, o2 = ψ(n + t) − ψ(t + 1), o3 = ((u − 1) − t o1) / a,
        # o4 = Σ c_s (ψ(s − a) − ψ(1 − a)) over the sizes s > 1
        t, a = np.float64(x[0]), np.float64(x[1])
        args[0], args[1], args[2], args[3], args[4] = u + t / a, t / a + 1, n + t, t + 1, 1 - a
        np.subtract(big_sizes, a, out=args[5:])
        d = digamma(args)
        o1 = (d[0] - d[1]) / a
        o2 = d[2] - d[3]
        o3 = ((u - 1) - t * o1) / a
        o4 = float((big_counts * (d[5:] - d[4])).sum())
        return [float(o1 - o2), float(o3 - o4)]

    c = c1 * (c1 - 1) / c2
    denominator = 2 * c1 * u + c1 * c - n * c
    t0 = (n * u * c - c1 * (n - 1) * (2 * u + c)) / denominator if denominator else 1.0
    a0 = (t0 * (c1 - n) + (n - 1) * c1) / (n * u)
    starts = [(t0, a0)] + [(t, a) for t in (1.0, 10.0, 100.0, 1000.0) for a in (0.2, 0.5, 0.8)]
    for t_start, a_start in starts:
        if not (math.isfinite(t_start) and math.isfinite(a_start) and 0 < a_start < 1 and t_start > -a_start):
            continue
        with np.errstate(all="ignore"):
            sol = root(equations, [t_start, a_start], method="hybr")
        t, a = (float(v) for v in sol.x)
        if sol.success and t >= 0 and 0 < a < 1 and max(abs(v) for v in equations(sol.x)) < 1e-6:
            value = math.exp(gammaln(t + 1) - gammaln(t + a) + a * math.log(population))
            return value if 0 <= value <= population else math.nan
    return math.nan


def _ewens_is_the_maximum(big_sizes: np.ndarray, big_counts: np.ndarray, n: float, u: float) -> bool:
    """Whether Pitman's likelihood falls as α leaves 0 at Ewens's maximum (α = 0, θ = θ_E): then the
    root finding from the 13 starts finds no solution (α > 0, θ >= 0), and is skipped.

    With L(θ, α) = Σ_{i<u} log(θ + iα) − Σ_{i<n} log(θ + i) + Σ_s c_s Σ_{k<s} log(k − α), θ_E solves
    ∂L/∂θ = 0 at α = 0, i.e. θ_E (ψ(n + θ_E) − ψ(1 + θ_E)) = u − 1, and ∂L/∂α there is
    u (u − 1) / (2 θ_E) − Σ_s c_s (ψ(s) − ψ(1)). When it is negative (beyond rounding) the test says yes.
    Checked against the solver on every histogram of the prefix search at five Adult lattice vectors and
    on random histograms (tests/privacy/test_privacy_papers.py): wherever it says yes, the 13 starts found
    no solution either; near zero (|∂L/∂α| under 1e-9 of its terms) the solver runs as before.
    """
    from scipy.optimize import brentq
    from scipy.special import digamma

    if not len(big_sizes) or u < 2:
        return False

    def excess(t: float) -> float:
        return t * float(digamma(n + t) - digamma(1 + t)) - (u - 1)

    high = n
    while excess(high) <= 0:
        if high > 1e12:
            return False
        high *= 2
    theta = float(brentq(excess, 0.0, high, xtol=1e-12))  # type: ignore[arg-type]
    gain = u * (u - 1) / (2 * theta)
    loss = float((big_counts * (digamma(big_sizes) - digamma(1.0))).sum())
    return gain - loss < -1e-9 * (gain + loss)


def _numpy_power(x: float, y: float) -> float:
    return float(np.power(x, y))


def _non_empty_classes(sizes: np.ndarray, counts: np.ndarray, c1: float, f: float) -> float:
    f2 = f * f
    var1 = float((sizes * f2 * (1 - f2) ** (sizes - 1) * counts).sum())
    var2 = float((counts * (1 - f2) ** sizes - 1).sum())  # (1 - f)^j (1 + f)^j without overflow
    var3 = float(((1 - f) ** sizes * counts).sum())
    var4 = float((sizes * f * (1 - f) ** (sizes - 1) * counts).sum())
    return float(counts.sum()) + c1 * (var1 / var2) * (var3 / var4) ** 2


def snb(histogram: Mapping[int, int], population: float) -> float:
    """Population uniques by the shifted negative binomial model (a count); NaN without a solution.

    >>> round(snb({1: 14, 2: 6, 3: 1, 4: 2, 7: 2, 14: 1, 23: 1, 86: 1}, 2067.0), 4)
    1.8066
    """
    return _snb(_key(histogram), float(population))


@lru_cache(maxsize=4096)
def _snb(key: tuple[tuple[int, int], ...], population: float) -> float:
    """:func:`snb` of a histogram given as sorted (size, count) pairs, remembered."""
    from scipy.optimize import root

    histogram = dict(key)
    sizes, counts = _hist(histogram)
    n = float(sizes @ counts)
    c1, c2 = float(histogram.get(1, 0)), float(histogram.get(2, 0))
    f = n / population
    if f >= 1:
        return c1
    with np.errstate(all="ignore"):
        k = _non_empty_classes(sizes, counts, c1, f)

    def residuals(a: float, b: float, power: Callable[[float, float], float]) -> list[float]:
        d = (1 - f) * (1 - b)
        first = k * f * power(b / (1 - d), a) * (a * d / (1 - d) + 1) - c1
        second = k * a * power(b, a) * f * f * (1 - b) / 2 / power(1 - d, a + 2) * (2 - (1 - a) * d) - c2
        return [float(first), float(second)]

    def equations(x: np.ndarray) -> list[float]:
        # on Python floats between NumPy's powers (math.pow differs in the last bit on some arguments): the same
        # IEEE operations in the same order as on NumPy scalars, without their overhead; where a Python float
        # would raise (a division by zero), on NumPy scalars, whose values (inf, nan) the solver was given before
        try:
            return residuals(float(x[0]), float(x[1]), _numpy_power)
        except ArithmeticError:
            return residuals(np.float64(x[0]), np.float64(x[1]), np.power)  # type: ignore[arg-type]

    if not math.isfinite(k) or k <= 0:
        return math.nan
    for start in ((1.0, 0.5), (0.5, 0.1), (2.0, 0.9), (0.1, 0.01)):
        with np.errstate(all="ignore"):
            sol = root(equations, list(start), method="hybr")
        a, b = (float(v) for v in sol.x)
        if sol.success and 0 < b < 1 and a > 0 and max(abs(v) for v in equations(sol.x)) < 1e-6 * max(c1, 1.0):
            value = k * b**a
            return value if 0 <= value <= population else math.nan
    return math.nan


def estimates(histogram: Mapping[int, int], population: float) -> dict[str, float | str]:
    """Every estimator's share of population uniques, and the one Dankar's rule picks (``dankar_model``).

    >>> e = estimates({2: 5}, 100.0)
    >>> e["pitman"], e["dankar"], e["dankar_model"]
    (0.0, 0.0, 'none')
    """
    histogram = {int(s): int(c) for s, c in histogram.items() if c}
    if not histogram.get(1):
        return {"pitman": 0.0, "zayatz": 0.0, "snb": 0.0, "dankar": 0.0, "dankar_model": "none"}
    n = sum(s * c for s, c in histogram.items())
    f = n / population
    z, p, s = zayatz(histogram, population), pitman(histogram, population), snb(histogram, population)
    if f <= 0.1:
        model, value = ("pitman", p) if _valid(p) else ("zayatz", z)
    elif _valid(s):
        model, value = ("zayatz", z) if z < s else ("snb", s)
    else:
        model, value = "zayatz", z
    out = {"pitman": p, "zayatz": z, "snb": s, "dankar": value}
    shares: dict[str, float | str] = {
        key: (v / population if _valid(v) else (0.0 if v == 0 else math.nan)) for key, v in out.items()
    }
    shares["dankar_model"] = model
    return shares  # type: ignore[return-value]


def estimate(histogram: Mapping[int, int], population: float, estimator: str = "dankar") -> float:
    """One estimator's share of population uniques (see :func:`estimates`); NaN when it has no estimate.

    Dankar's rule computes only the estimators it reads: Pitman (Zayatz when Pitman has no solution) at a
    sampling fraction of at most 0.1, else Zayatz and SNB.

    >>> estimate({1: 10, 2: 20, 5: 4}, 1000.0) == estimates({1: 10, 2: 20, 5: 4}, 1000.0)["dankar"]
    True
    """
    histogram = {int(s): int(c) for s, c in histogram.items() if c}
    if not histogram.get(1):
        return 0.0
    if estimator == "dankar":
        f = sum(s * c for s, c in histogram.items()) / population
        value = pitman(histogram, population) if f <= 0.1 else math.nan
        if not _valid(value):
            z = zayatz(histogram, population)
            s = snb(histogram, population) if f > 0.1 else math.nan
            value = z if not _valid(s) or z < s else s
        return value / population if _valid(value) else (0.0 if value == 0 else math.nan)
    value = {"pitman": pitman, "zayatz": zayatz, "snb": snb}[estimator](histogram, population)
    return value / population if _valid(value) else math.nan


def _valid(value: float) -> bool:
    return math.isfinite(value) and value != 0

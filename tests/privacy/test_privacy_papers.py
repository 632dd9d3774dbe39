"""Privacy models against the defining papers' worked examples and hand computations."""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
import pytest
from scipy.stats import hypergeom, poisson

import polars_anon as pa
from polars_anon.privacy import BetaLikeness, DeltaDisclosure, KMap, LDiversity, TCloseness
from polars_anon.privacy.evaluate import class_measures
from polars_anon.privacy.uniqueness import estimates, pitman, zayatz

# Li et al. 2007, t-Closeness, Table 3 (the 3-diverse patient table): salaries 3k..11k, one
# patient each; the three classes hold {3k, 4k, 5k}, {6k, 8k, 11k} and {7k, 9k, 10k}.
SALARY = pl.DataFrame(
    {
        "zip": ["476**"] * 3 + ["4790*"] * 3 + ["476**"] * 3,
        "age": ["2*"] * 3 + [">=40"] * 3 + ["3*"] * 3,
        "salary": [3, 4, 5, 6, 8, 11, 7, 9, 10],
    }
)


def _measures(model, table=SALARY, qids=("zip", "age")) -> dict[tuple, float]:
    got = class_measures(table, list(qids), model)
    return {tuple(r[: len(qids)]): r[-2] for r in got.iter_rows()}


def test_li_et_al_salary_ordered_distance() -> None:
    """Li et al. §4.2: D[P1, Q] = 0.375 and D[P2, Q] = 0.167 with the ordered distance."""
    m = _measures(TCloseness("salary", t=0.2, distance="ordered"))
    assert m[("476**", "2*")] == pytest.approx(0.375)
    assert m[("4790*", ">=40")] == pytest.approx(1 / 6)
    # P3 = {7k, 9k, 10k}: r = (-1,-1,-1,-1,2,-1,2,2,-1)/9, cumulative |.| = (1+2+3+4+2+3+1+1+0)/9 = 17/9, / 8
    assert m[("476**", "3*")] == pytest.approx(17 / 72)


def test_li_et_al_salary_equal_distance() -> None:
    """Equal ground distance: 1/2 (3 |1/3 - 1/9| + 6 / 9) = 2/3 for every class of three distinct salaries."""
    assert set(np.round(list(_measures(TCloseness("salary", t=0.2)).values()), 12)) == {round(2 / 3, 12)}


def test_hierarchical_distance_hand_example() -> None:
    """Root (level 2) -> A {a1, a2}, B {b1, b2}; the table is uniform over the four leaves.

    Class {a1, a1}: extra(a1) = 3/4, extra(a2) = extra(b1) = extra(b2) = -1/4; node A: pos 3/4,
    neg 1/4 -> 1/2 * 1/4; node B: 0; root: extra(A) = 1/2, extra(B) = -1/2 -> 2/2 * 1/2.
    EMD = 1/8 + 1/2 = 5/8 (Li et al.'s cost(N) = level(N)/H min(pos, neg)).
    """
    h = pa.Hierarchy.from_dict({"*": {"A": ["a1", "a2"], "B": ["b1", "b2"]}})
    t = pl.DataFrame(
        {"q": ["x", "x", "y", "y", "y", "y", "z", "z"], "s": ["a1", "a1", "a2", "b1", "b2", "a2", "b1", "b2"]}
    )
    m = _measures(TCloseness("s", t=0.5, distance="hierarchical", hierarchy=h), t, ("q",))
    # overall: a1 2/8, a2 2/8, b1 2/8, b2 2/8
    assert m[("x",)] == pytest.approx(5 / 8)
    # class z = {b1, b2}: A -> 0 (both -1/4), B -> 0 (+1/4, +1/4), root: (-1/2, +1/2) -> 1/2
    assert m[("z",)] == pytest.approx(1 / 2)


def test_l_diversity_variants_hand_example() -> None:
    """Machanavajjhala et al. 2007: a class with counts (4, 2, 1, 1)."""
    t = pl.DataFrame({"q": ["x"] * 8, "s": list("aaaabbcd")})
    assert _measures(LDiversity("s", l=3), t, ("q",))[("x",)] == 4
    p = np.array([4, 2, 1, 1]) / 8
    assert _measures(LDiversity("s", l=3, variant="entropy"), t, ("q",))[("x",)] == pytest.approx(
        math.exp(-(p * np.log(p)).sum())
    )
    # recursive (c, 2): r1 = 4 < c (2 + 1 + 1) holds for c > 1
    ratio = _measures(LDiversity("s", l=2, variant="recursive", c=1.1), t, ("q",))[("x",)]
    assert ratio == pytest.approx(1.0)
    assert class_measures(t, ["q"], LDiversity("s", l=2, variant="recursive", c=1.0))["satisfied"].item() is False
    assert class_measures(t, ["q"], LDiversity("s", l=2, variant="recursive", c=1.1))["satisfied"].item() is True


def test_delta_disclosure_and_beta_likeness_hand_example() -> None:
    """Overall (a, b) = (1/2, 1/2); class x = (3/4, 1/4), class y = (1/4, 3/4)."""
    t = pl.DataFrame({"q": ["x"] * 4 + ["y"] * 4, "s": list("aaab") + list("abbb")})
    assert _measures(DeltaDisclosure("s", delta=1.0), t, ("q",))[("x",)] == pytest.approx(math.log(2))
    assert _measures(BetaLikeness("s", beta=1.0), t, ("q",))[("x",)] == pytest.approx(0.5)
    # enhanced: the gain 1/2 is within -ln(1/2) = 0.693, so the measure is the gain
    assert _measures(BetaLikeness("s", beta=1.0, variant="enhanced"), t, ("q",))[("x",)] == pytest.approx(0.5)
    # a rare value (1/8 overall) held by 3/4 of a class: gain 5 > -ln(1/8) = 2.08 -> infinite
    rare = pl.DataFrame({"q": ["x"] * 4 + ["y"] * 4, "s": list("rrrb") + list("bbbb")})
    assert math.isinf(_measures(BetaLikeness("s", beta=10.0, variant="enhanced"), rare, ("q",))[("x",)])
    assert _measures(BetaLikeness("s", beta=10.0), rare, ("q",))[("x",)] == pytest.approx((3 / 4 - 3 / 8) / (3 / 8))


def test_zayatz_by_hand() -> None:
    """Zayatz: share of sample uniques that are population uniques, from hypergeometric draws of one."""
    hist, population = {1: 10, 2: 20, 5: 4}, 1000
    n, u = 10 + 40 + 20, 34
    terms = sum(c / u * hypergeom.pmf(1, population, s, n) for s, c in hist.items())
    share = (10 / u) * hypergeom.pmf(1, population, 1, n) / terms
    assert zayatz(hist, population) == pytest.approx(10 * share / (n / population))


def test_pitman_solves_its_likelihood_equations() -> None:
    """At Pitman's estimate (θ, α) both ML equations vanish; checked by a plain loop over the sums."""
    rng = np.random.default_rng(3)
    pop = rng.zipf(1.4, 200_000)
    sample = rng.choice(pop, 4_000, replace=False)
    _, counts = np.unique(sample, return_counts=True)
    sizes, classes = np.unique(counts, return_counts=True)
    hist = dict(zip(sizes.tolist(), classes.tolist()))
    value = pitman(hist, 200_000)
    assert 0 < value < 200_000
    true_uniques = int((np.unique(pop, return_counts=True)[1] == 1).sum())
    assert value == pytest.approx(true_uniques, rel=0.25)  # an estimate: within 25% of the truth here
    assert estimates(hist, 200_000)["dankar_model"] == "pitman"  # sampling fraction 2% <= 10%


def _pitman_thirteen_starts(hist: dict[int, int], population: float) -> float:
    """The plain solver: 13 starts of MINPACK's hybrid method on the likelihood equations, written as loops
    (Hoshino 2001), with no shortcut; the reference for :func:`pitman`'s test that skips the starts."""
    from scipy.optimize import root
    from scipy.special import gammaln

    n, u = sum(s * c for s, c in hist.items()), sum(hist.values())
    c1, c2 = hist.get(1, 0), hist.get(2, 0) or 1

    def equations(x: np.ndarray) -> list[float]:
        t, a = float(x[0]), float(x[1])
        o1 = sum(1 / (t + i * a) for i in range(1, u))
        o3 = sum(i / (t + i * a) for i in range(1, u))
        o2 = sum(1 / (t + i) for i in range(1, n))
        o4 = sum(c * sum(1 / (k - a) for k in range(1, s)) for s, c in hist.items())
        return [o1 - o2, o3 - o4]

    c = c1 * (c1 - 1) / c2
    t0 = (n * u * c - c1 * (n - 1) * (2 * u + c)) / (2 * c1 * u + c1 * c - n * c)
    a0 = (t0 * (c1 - n) + (n - 1) * c1) / (n * u)
    for start in [(t0, a0)] + [(t, a) for t in (1.0, 10.0, 100.0, 1000.0) for a in (0.2, 0.5, 0.8)]:
        if not (0 < start[1] < 1 and start[0] > -start[1]):
            continue
        with np.errstate(all="ignore"):
            sol = root(equations, list(start), method="hybr")
        t, a = (float(v) for v in sol.x)
        if sol.success and t >= 0 and 0 < a < 1 and max(abs(v) for v in equations(sol.x)) < 1e-6:
            value = math.exp(gammaln(t + 1) - gammaln(t + a) + a * math.log(population))
            return value if value <= population else math.nan
    return math.nan


@pytest.mark.parametrize(
    "hist",
    [
        {1: 60, 2: 10, 3: 5, 8: 2},  # a solution (α > 0)
        {1: 100, 2: 20, 4: 5},  # a solution
        {1: 30, 2: 12, 3: 6, 4: 3, 6: 2, 11: 1},  # a solution
        {1: 10, 2: 20, 5: 4},  # none: the likelihood falls as α leaves 0 (Ewens's maximum)
        {1: 8, 2: 30, 3: 10, 7: 2},  # none
        {1: 3, 2: 5, 4: 9, 9: 6},  # none
    ],
)
def test_pitman_agrees_with_the_plain_solver(hist: dict[int, int]) -> None:
    """:func:`pitman` (one vectorized residual, no starts where the likelihood is highest at α = 0) finds a
    solution exactly where 13 plain starts do, and the same estimate. Half the cases are of the skipped kind:
    ∂L/∂α < 0 at Ewens's maximum (α = 0, θ_E with θ_E Σ_{i<n} 1/(θ_E + i) = u − 1), computed here by loops."""
    from scipy.optimize import brentq

    n, u = sum(s * c for s, c in hist.items()), sum(hist.values())
    theta = brentq(lambda t: sum(t / (t + i) for i in range(1, n)) - (u - 1), 1e-9, 1e9)
    slope = sum(i / theta for i in range(1, u)) - sum(c * sum(1 / k for k in range(1, s)) for s, c in hist.items())
    expected = _pitman_thirteen_starts(hist, 10_000.0)
    assert math.isnan(expected) == (slope < 0)  # the cases are of the kind their comment says
    got = pitman(hist, 10_000.0)
    if math.isnan(expected):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize(
    ("hist", "population"),
    [
        ({1: 14, 2: 6, 3: 1, 4: 2, 7: 2, 14: 1, 23: 1, 86: 1}, 2067.0),  # a solution
        ({1: 15, 2: 5, 4: 1, 5: 2, 6: 1, 9: 1, 24: 1, 25: 1, 91: 1}, 2066.0),  # a solution
        ({1: 100, 2: 20, 4: 5}, 317_238_626.0),  # none (a sampling fraction of 5e-7)
    ],
)
def test_snb_agrees_with_the_numpy_scalar_solver(hist: dict[int, int], population: float) -> None:
    """:func:`snb` evaluates its equations on Python floats between NumPy powers; the same four starts on
    NumPy scalars (Chen and McNulty's equations as written) give the same value to the last bit."""
    from scipy.optimize import root

    from polars_anon.privacy.uniqueness import snb

    sizes = np.array(sorted(hist), dtype=np.float64)
    counts = np.array([hist[int(s)] for s in sizes], dtype=np.float64)
    n, c1, c2 = float(sizes @ counts), float(hist[1]), float(hist.get(2, 0))
    f, f2 = n / population, (n / population) ** 2
    k = (
        float(counts.sum())
        + c1
        * (float((sizes * f2 * (1 - f2) ** (sizes - 1) * counts).sum()) / float((counts * (1 - f2) ** sizes - 1).sum()))
        * (float(((1 - f) ** sizes * counts).sum()) / float((sizes * f * (1 - f) ** (sizes - 1) * counts).sum())) ** 2
    )

    def equations(x: np.ndarray) -> list[float]:
        a, b = np.float64(x[0]), np.float64(x[1])
        d = (1 - f) * (1 - b)
        first = k * f * np.power(b / (1 - d), a) * (a * d / (1 - d) + 1) - c1
        second = k * a * np.power(b, a) * f * f * (1 - b) / 2 / np.power(1 - d, a + 2) * (2 - (1 - a) * d) - c2
        return [float(first), float(second)]

    expected = math.nan
    for start in ((1.0, 0.5), (0.5, 0.1), (2.0, 0.9), (0.1, 0.01)):
        with np.errstate(all="ignore"):
            sol = root(equations, list(start), method="hybr")
        a, b = (float(v) for v in sol.x)
        if sol.success and 0 < b < 1 and a > 0 and max(abs(v) for v in equations(sol.x)) < 1e-6 * max(c1, 1.0):
            expected = k * b**a
            break
    got = snb(hist, population)
    assert (math.isnan(got) and math.isnan(expected)) or got == expected


def test_no_sample_uniques_means_no_population_uniques() -> None:
    assert estimates({2: 10, 3: 4}, 10_000) == {
        "pitman": 0.0,
        "zayatz": 0.0,
        "snb": 0.0,
        "dankar": 0.0,
        "dankar_model": "none",
    }


def test_k_map_poisson_derivation() -> None:
    """ARX's derivation: the smallest c with P(X <= c) >= 1 - significance, X ~ Poisson(f k), plus one."""
    lam = 0.05 * 20  # sampling fraction 5%, k = 20
    c = 0
    while poisson.cdf(c, lam) < 0.99:
        c += 1
    assert KMap(20, sampling_fraction=0.05).derived_k(10_000) == c + 2
    assert KMap(3, sampling_fraction=0.9).derived_k(10_000) == 3  # never above k


def test_enhanced_beta_likeness_of_a_value_every_row_of_which_is_suppressed_warns_not() -> None:
    """hunt40: x2's one row (the only r) is suppressed (k=2, budget 1), so the published rows hold no r: a check
    over them reads the cap -ln p(r) = -ln 0, no cap, now without NumPy's divide-by-zero warning. By hand, x1 =
    {p, q, p} over the input's p = 1/2, q = 1/4: gains (2/3)/(1/2) - 1 = (1/3)/(1/4) - 1 = 1/3, under beta = 5
    and the caps ln 2, ln 4; over the published p = 2/3, q = 1/3 both gains are 0."""
    table = pl.DataFrame({"x": ["x1", "x1", "x1", "x2"], "s": ["p", "q", "p", "r"]})
    h = {"x": pa.Hierarchy.suppression(["x1", "x2"])}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = pa.anonymize(
            table, hierarchies=h, k=2, max_suppressed=1, privacy=[BetaLikeness("s", beta=5.0, variant="enhanced")]
        )
        assert got.collect().rows() == [("x1", "p"), ("x1", "q"), ("x1", "p")]
    assert got.report["suppressed"] == 1

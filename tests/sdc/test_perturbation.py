"""PRAM, invariant PRAM, noise addition, rank swapping and the utility measures: hand computations,
invariance in expectation, covariance kept within a tolerance, reproducibility."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from polars_anon.errors import InvalidParameterError
from polars_anon.sdc import (
    add_noise,
    correlations,
    eigen_utility,
    il1s,
    invariant_matrix,
    invariant_pram,
    pram,
    rank_swap,
)

N = 40_000
RNG = np.random.default_rng(7)
CATS = RNG.choice(["a", "b", "c"], size=N, p=[0.5, 0.3, 0.2]).tolist()
P = {"a": {"a": 0.8, "b": 0.1, "c": 0.1}, "b": {"a": 0.2, "b": 0.7, "c": 0.1}, "c": {"c": 1.0}}


def _counts(values: list) -> np.ndarray:
    return np.array([values.count(c) for c in "abc"], dtype=np.float64)


def test_pram_frequencies_match_their_expectation():
    """E[counts after] = counts before @ P; each within 5 binomial standard deviations."""
    out = pram(pl.LazyFrame({"g": CATS}), "g", P, seed=11).collect()["g"].to_list()
    mat = np.array([[P[a].get(b, 0.0) for b in "abc"] for a in "abc"])
    before = _counts(CATS)
    expected = before @ mat
    sd = np.sqrt(before @ (mat * (1 - mat)))
    assert np.all(np.abs(_counts(out) - expected) <= 5 * sd)


def test_pram_identity_deterministic_and_seeded():
    lf = pl.LazyFrame({"g": ["a", "b", None, "c"], "x": [1, 2, 3, 4]})
    same = pram(lf, "g", {c: {c: 1.0} for c in "abc"}).collect()
    assert_frame_equal(same, lf.collect())
    assert pram(lf, "g", {"a": {"b": 1.0}}).collect()["g"].to_list() == ["b", "b", None, "c"]
    big = pl.LazyFrame({"g": CATS[:2000]})
    one, two = (pram(big, "g", P, seed=3).collect() for _ in range(2))
    assert_frame_equal(one, two)
    assert not pram(big, "g", P, seed=4).collect().equals(one)


def test_invariant_matrix_keeps_frequencies():
    rng = np.random.default_rng(1)
    base = rng.uniform(0.05, 1, (4, 4))
    base /= base.sum(axis=1, keepdims=True)
    p = np.array([0.1, 0.2, 0.3, 0.4])
    for alpha in (0.0, 0.5, 1.0):
        r = invariant_matrix(base, p, alpha)
        assert np.allclose(p @ r, p) and np.allclose(r.sum(axis=1), 1.0) and np.all(r >= 0)


def test_invariant_pram_keeps_frequencies_in_expectation():
    """Averaged over 10 seeds (400,000 draws) the category frequencies stay within 0.5 percentage points."""
    lf = pl.LazyFrame({"g": CATS})
    before = _counts(CATS) / N
    after = np.mean(
        [_counts(invariant_pram(lf, "g", pd=0.6, alpha=1.0, seed=s).collect()["g"].to_list()) / N for s in range(10)],
        axis=0,
    )
    assert np.max(np.abs(after - before)) < 0.005
    changed = sum(a != b for a, b in zip(CATS, invariant_pram(lf, "g", pd=0.6, seed=0).collect()["g"], strict=True))
    assert changed > 0.02 * N  # it did perturb


def _gaussian(n: int = N) -> pl.DataFrame:
    cov = np.array([[4.0, 1.5, 0.5], [1.5, 2.0, -0.3], [0.5, -0.3, 1.0]])
    x = RNG.multivariate_normal([10.0, -3.0, 0.0], cov, size=n)
    return pl.DataFrame({"a": x[:, 0], "b": x[:, 1], "c": x[:, 2]})


def test_correlated_rescaled_noise_keeps_means_and_covariance():
    df = _gaussian()
    out = add_noise(df, ["a", "b", "c"], noise=50, method="correlated_rescaled", seed=5).collect()
    before, after = np.cov(df.to_numpy().T), np.cov(out.to_numpy().T)
    assert np.max(np.abs(after - before)) < 0.06 * np.max(np.abs(before))
    assert np.allclose(out.to_numpy().mean(axis=0), df.to_numpy().mean(axis=0), atol=0.05)
    assert il1s(df, out, ["a", "b", "c"]) > 0


def test_correlated_noise_scales_covariance_and_keeps_correlations():
    df = _gaussian()
    out = add_noise(df, ["a", "b", "c"], noise=50, method="correlated", seed=5).collect()
    assert np.allclose(np.cov(out.to_numpy().T), 1.5 * np.cov(df.to_numpy().T), atol=0.1)
    assert np.allclose(correlations(out, ["a", "b", "c"]), correlations(df, ["a", "b", "c"]), atol=0.02)


def test_additive_noise_variance_and_reproducibility():
    df = _gaussian()
    out = add_noise(df, "a", noise=100, seed=2).collect()  # sd of the noise = 1.0 * sd(a)
    assert np.var(out["a"].to_numpy()) == pytest.approx(2 * np.var(df["a"].to_numpy()), rel=0.05)
    assert_frame_equal(out, add_noise(df, "a", noise=100, seed=2).collect())
    assert out["b"].equals(df["b"])


def test_rank_swap_is_a_permutation_within_the_window():
    x = RNG.permutation(1000).astype(np.float64)
    df = pl.DataFrame({"x": x, "y": np.arange(1000)})
    out = rank_swap(df, "x", p=5, seed=9)
    assert sorted(out["x"].to_list()) == sorted(x.tolist()) and out["y"].equals(df["y"])
    moved = np.abs(out["x"].to_numpy() - x)  # values are their own ranks here
    assert moved.max() <= 50 and (moved > 0).mean() > 0.9
    assert out.equals(rank_swap(df, "x", p=5, seed=9))
    with_null = rank_swap(pl.DataFrame({"x": [3.0, None, 1.0, 2.0]}), "x", p=100, seed=0)
    assert with_null["x"][1] is None and sorted(with_null["x"].drop_nulls().to_list()) == [1.0, 2.0, 3.0]


def test_utility_measures_by_hand():
    a = pl.DataFrame({"x": [1.0, 2.0, 3.0], "y": [2.0, 4.0, 7.0]})
    b = pl.DataFrame({"x": [1.0, 2.0, 4.0], "y": [2.0, 4.0, 7.0]})
    assert il1s(a, b, ["x", "y"]) == pytest.approx(1 / (1.0 * np.sqrt(2)))  # sd(x) = 1
    assert np.allclose(correlations(a, ["x", "y"]), np.corrcoef(a.to_numpy().T))
    ea = np.sort(np.linalg.eigvalsh(np.corrcoef(a.to_numpy().T)))[::-1]
    eb = np.sort(np.linalg.eigvalsh(np.corrcoef(b.to_numpy().T)))[::-1]
    assert eigen_utility(a, b, ["x", "y"]) == pytest.approx(float(np.sum(np.abs(ea - eb) / ea)))
    assert eigen_utility(a, a, ["x", "y"]) == 0.0


def test_moments_have_the_same_bits_in_any_row_order():
    # Polars' float sums (mean, pl.cov, sum, std) add in thread order: the figures, and the noise scaled by them,
    # differed in their last bits between runs (POLARS_MAX_THREADS=1 vs 2); reversed rows showed it in-process.
    rng = np.random.default_rng(5)
    df = pl.DataFrame({"x": rng.lognormal(0, 3, 200), "y": rng.normal(0, 1e3, 200)})
    p = df.with_columns(pl.col("x") * 1.1 + 0.3, pl.col("y") - 0.7)
    for _ in range(3):
        assert correlations(df, ["x", "y"]).tobytes() == correlations(df.reverse(), ["x", "y"]).tobytes()
        assert il1s(df, p, ["x", "y"]) == il1s(df.reverse(), p.reverse(), ["x", "y"])
        df, p = df.sample(fraction=1.0, shuffle=True, seed=_), p.sample(fraction=1.0, shuffle=True, seed=_)
    assert np.allclose(correlations(df, ["x", "y"]), np.corrcoef(df.to_numpy().T), rtol=1e-12)
    holes = df.with_columns(pl.when(pl.int_range(pl.len()) % 7 == 0).then(None).otherwise(pl.col("y")).alias("y"))
    both = holes.drop_nulls().to_numpy().T  # a covariance over the rows where both columns have a value
    cov_xy = np.cov(both)[0, 1]
    expect = cov_xy / np.sqrt(np.var(df["x"].to_numpy(), ddof=1) * np.var(both[1], ddof=1))
    assert correlations(holes, ["x", "y"])[0, 1] == pytest.approx(expect, rel=1e-12)


def test_moments_take_only_the_exact_sums_they_need(monkeypatch):
    # review16: each exact sum costs ~0.1 s CPU a 3M-row column; _moments took 3 per pair (two masked column sums
    # and the centred products, 21 for 3 columns) and il1s the whole matrix for its variances (24 in all). The centred
    # products are one Int128 sum each (bounded by the columns' ranges), not exact sums.
    import polars_anon.sdc.perturbation as pert

    calls = []
    real = pert.exact_sum
    monkeypatch.setattr(pert, "exact_sum", lambda e: calls.append(1) or real(e))
    df = pl.DataFrame({"x": [1.0, 2.0, 4.0, 7.0], "y": [2.0, 1.0, 5.0, 3.0], "z": [0.5, 0.25, 3.0, 1.0]})
    cols = ["x", "y", "z"]
    want = np.corrcoef(df.to_numpy().T)
    assert np.allclose(correlations(df, cols), want, rtol=1e-14) and len(calls) == 3  # the column sums
    calls.clear()
    assert il1s(df, df.with_columns(pl.col("x") + 1), cols) == pytest.approx(
        4 / (np.std(df["x"].to_numpy(), ddof=1) * 2**0.5)
    )
    assert len(calls) == 3 + 3  # the gaps, the sums
    calls.clear()
    holes = df.with_columns(pl.Series("z", [0.5, None, 3.0, 1.0]))
    rows = holes.drop_nulls().to_numpy().T
    assert correlations(holes, cols)[0, 2] == pytest.approx(
        np.cov(rows)[0, 2] / np.sqrt(np.var(df["x"].to_numpy(), ddof=1) * np.var(rows[2], ddof=1)), rel=1e-14
    )
    assert len(calls) == 3 + 2 * 2  # + x and y over z's rows


def test_refusals():
    lf = pl.LazyFrame({"g": ["a"], "x": [1.0]})
    with pytest.raises(InvalidParameterError, match="PRAM matrix row 'a' must hold probabilities"):
        pram(lf, "g", {"a": {"a": 0.5}})
    with pytest.raises(InvalidParameterError, match="needs at least 2 columns"):
        add_noise(lf, "x", method="correlated")
    with pytest.raises(InvalidParameterError, match="seed must be an integer >= 0"):
        add_noise(lf, "x", seed=-1)
    with pytest.raises(InvalidParameterError, match=r"p \(a percentage\) must be a number in \[0, 100\], got 200"):
        rank_swap(lf, "x", p=200)


@pytest.mark.parametrize(
    ("matrix", "words"),
    [
        (
            {"M": {"Female": 1.0}},
            r"names 1 values column 'sex' does not hold: \['M'\]; its values: \['Female', 'Male'\]",
        ),
        ({"Male": {"Man": 1.0}}, r"names 1 values column 'sex' does not hold: \['Man'\]"),
        ({"M": {"F": 1.0}}, r"names 2 values column 'sex' does not hold: \['M', 'F'\]"),
    ],
)
def test_pram_refuses_a_value_the_column_does_not_hold(matrix, words):
    """newuser6 (mend41 item 1): a row the String column lacks perturbed nothing, silently; a target it lacks
    published a new category."""
    lf = pl.LazyFrame({"sex": ["Female", "Male", None]})
    with pytest.raises(InvalidParameterError, match=words):
        pram(lf, "sex", matrix, seed=1)


def test_pram_reads_the_columns_values_once_and_lists_only_a_few():
    many = pl.LazyFrame({"g": [str(i) for i in range(30)]})
    with pytest.raises(InvalidParameterError, match=r"does not hold: \['x'\]; it holds 30 values"):
        pram(many, "g", {"x": {"0": 1.0}}, seed=1)


def test_rank_swap_refuses_a_column_that_is_not_numeric():
    """newuser6 (mend41 item 5): a String column was swapped in lexicographic order; sdcMicro swaps numbers only."""
    df = pl.DataFrame({"x": [1, 2, 3], "s": ["b", "a", "c"]})
    with pytest.raises(InvalidParameterError, match=r"^columns \['s'\] must be numeric, got String$"):
        rank_swap(df, ["x", "s"], seed=1)


NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize("bad", [NAN, INF, -INF, 2**1030])  # 2**1030: no float holds it (hunt35 F4)
@pytest.mark.parametrize(
    ("call", "words"),
    [
        (
            lambda lf, v: add_noise(lf, "x", noise=v, seed=1),
            r"noise \(percent of the standard deviation\) must be a finite",
        ),
        (lambda lf, v: add_noise(lf, ["x", "y"], noise=v, method="correlated", seed=1), r"noise \(percent"),
        (lambda lf, v: rank_swap(lf, "x", p=v, seed=1), r"p \(a percentage\) must be a number in \[0, 100\]"),
        (lambda lf, v: invariant_pram(lf, "g", pd=v, seed=1), r"pd must be a number in \(0, 1\]"),
        (lambda lf, v: invariant_pram(lf, "g", alpha=v, seed=1), r"alpha must be a number in \[0, 1\]"),
        (
            lambda lf, v: pram(lf, "g", {"a": {"a": v, "b": 1.0}}, seed=1),
            r"PRAM matrix\['a'\]\['a'\] \(a probability\)",
        ),
    ],
)
def test_nan_and_inf_parameters_are_refused_by_name(call, words, bad):
    """review23 item 2: noise=NaN gave an all-NaN column and inf a column of +-inf (``noise < 0`` let them through);
    2**1030 raised a bare OverflowError (float() of it)."""
    lf = pl.LazyFrame({"g": ["a", "b"] * 3, "x": [1.0, 2.0, 4.0, 3.0, 5.0, 0.0], "y": [2.0, 1.0, 0.0, 4.0, 3.0, 5.0]})
    with pytest.raises(InvalidParameterError, match=words + ".*, got " + repr(bad).replace("-", "\\-")):
        call(lf, bad)


def test_without_a_seed_the_key_is_fresh_so_the_draws_cannot_be_recomputed():
    """review4 finding 1: with a public default key (0) an attacker recomputes every draw, subtracts the noise and
    inverts the swap. Without a seed each call draws its own key: two calls differ, and neither is seed 0's output."""
    df = pl.DataFrame({"x": np.arange(200, dtype=np.float64), "g": ["a", "b"] * 100})
    half = {"a": {"a": 0.5, "b": 0.5}, "b": {"a": 0.5, "b": 0.5}}
    calls = {
        "add_noise": lambda **s: add_noise(df, "x", noise=150, **s).collect()["x"],
        "rank_swap": lambda **s: rank_swap(df, "x", p=20, **s)["x"],
        "pram": lambda **s: pram(df, "g", half, **s).collect()["g"],
        "invariant_pram": lambda **s: invariant_pram(df, "g", pd=0.5, **s).collect()["g"],
    }
    for name, call in calls.items():
        one, two, public = call(), call(), call(seed=0)
        assert not one.equals(two), name
        assert not one.equals(public) and not two.equals(public), name
        assert call(seed=0).equals(public), name  # a given seed still gives the same output


@pytest.mark.parametrize(
    ("values", "why"),
    [
        ([1.0, float("nan"), 3.0, 4.0], "hold NaN or infinite values"),
        ([1.0, float("inf"), 3.0, None], "hold NaN or infinite values"),
        ([1.0, None, None], "have fewer than 2 values"),
    ],
    ids=["nan", "infinite", "one value"],
)
def test_noise_says_why_a_spread_is_undefined(values: list, why: str) -> None:
    """hunt42: three values and a NaN were refused as having "fewer than 2 values"."""
    with pytest.raises(InvalidParameterError, match=f"columns \\['x'\\] {why}: their spread, the noise's scale"):
        add_noise(pl.DataFrame({"x": values}), "x", noise=10, seed=1)


def test_il1s_of_a_constant_column_is_0_unchanged_and_infinite_changed() -> None:
    """hunt42: a constant column gave NaN (0 / 0) silently. By hand: x = [1, 1] unchanged adds 0, so IL1s is y's
    |1| / (sqrt(2) sd(y)) with sd([1, 3]) = sqrt(2): 0.5; x changed to [1, 2] has no spread to scale by: inf."""
    a = pl.DataFrame({"x": [1.0, 1.0], "y": [1.0, 3.0]})
    assert il1s(a, a.with_columns(y=pl.Series([2.0, 3.0])), ["x", "y"]) == pytest.approx(0.5, rel=1e-15)
    assert il1s(a, a.with_columns(x=pl.Series([1.0, 2.0])), ["x", "y"]) == float("inf")
    with pytest.raises(InvalidParameterError, match=r"columns \['x'\] have fewer than 2 values: their spread, IL1s"):
        il1s(a.head(1), a.head(1), ["x"])


def test_rank_swap_refuses_a_column_named_twice() -> None:
    """hunt42: Polars' ComputeError ("the name 'x' passed to `LazyFrame.with_columns` is duplicate")."""
    with pytest.raises(InvalidParameterError, match=r"columns lists \['x'\] more than once; name each column once"):
        rank_swap(pl.DataFrame({"x": [5, 1, 3, 2, 4]}), ["x", "x"], p=50, seed=2)

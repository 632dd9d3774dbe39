"""Gower and Ahmad-Dey dissimilarities [paper 004 §4, eq. 1 and 2] against hand-computed values."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest

from polars_anon.distance import NUMERIC_BINS, AhmadDey, Gower, _binned, encode_records


def _all_pairs(dist, records):
    num, cat = dist.transform(records)
    return dist.distances(num, cat, num, cat)


def test_gower_hand_values():
    df = pl.DataFrame({"age": ["20", "30", "60"], "sex": ["M", "F", "M"], "race": ["a", "a", "b"]})
    r = encode_records(df, ["age"], ["sex", "race"])
    d = _all_pairs(Gower(r), r)
    # range 40: (10/40 + 1 + 0) / 3, (40/40 + 0 + 1) / 3, (30/40 + 1 + 1) / 3
    assert d[0, 1] == pytest.approx(1.25 / 3)
    assert d[0, 2] == pytest.approx(2 / 3)
    assert d[1, 2] == pytest.approx(2.75 / 3)
    assert np.allclose(d, d.T) and np.all(np.diag(d) == 0)


def test_gower_constant_numeric_counts_as_an_attribute_with_zero_difference():
    df = pl.DataFrame({"x": [5.0, 5.0], "c": ["u", "v"]})
    r = encode_records(df, ["x"], ["c"])
    assert _all_pairs(Gower(r), r)[0, 1] == pytest.approx(0.5)


def test_categorical_codes_follow_the_given_order_then_sorted():
    r = encode_records(pl.DataFrame({"c": ["b", "z", "a", "y"]}), [], ["c"], {"c": ["z", "y", "q"]})
    assert r.labels == (("z", "y", "a", "b"),)
    assert r.cat.tolist() == [[3, 0, 2, 1]]


def test_ahmad_dey_categorical_hand_values():
    df = pl.DataFrame({"a": ["x", "x", "y", "y"], "b": ["u", "u", "u", "v"]})
    ad = AhmadDey(encode_records(df, [], ["a", "b"]))
    # delta_a(x, y): P(b|x) = (1, 0), P(b|y) = (1/2, 1/2) -> 1/2
    # delta_b(u, v): P(a|u) = (2/3, 1/3), P(a|v) = (0, 1) -> 2/3
    assert ad.delta[0][0, 1] == pytest.approx(0.5)
    assert ad.delta[1][0, 1] == pytest.approx(2 / 3)
    d = _all_pairs(ad, encode_records(df, [], ["a", "b"]))
    assert d[0, 3] == pytest.approx(0.5 + 2 / 3)  # (x, u) vs (y, v)
    assert d[0, 1] == 0.0


def test_ahmad_dey_numeric_weight_hand_value():
    df = pl.DataFrame({"x": [1.0, 1.0, 2.0, 2.0], "c": ["p", "q", "p", "p"]})
    r = encode_records(df, ["x"], ["c"])
    ad = AhmadDey(r)
    # x has 2 distinct values (its own bins): P(c|1) = (1/2, 1/2), P(c|2) = (1, 0) -> w = 1/2
    assert ad.weights.tolist() == pytest.approx([0.5])
    # delta_c(p, q): P(x|p) = (1/3, 2/3), P(x|q) = (1, 0) -> 2/3
    assert ad.delta[0][0, 1] == pytest.approx(2 / 3)
    d = _all_pairs(ad, r)
    assert d[1, 2] == pytest.approx(0.5 * 1.0**2 + 2 / 3)  # (1, q) vs (2, p), x scaled to [0, 1]


def test_ahmad_dey_weight_averages_occupied_bins_only():
    """Paper 004: w_r averages delta over pairs of discretized values that occur (hunt36: empty bins counted)."""
    df = pl.DataFrame({"x": [0.0, 0.1, 0.2, 0.3, 0.4, 10.0], "c": ["a", "a", "a", "b", "b", "b"]})
    ad = AhmadDey(encode_records(df, ["x"], ["c"]))
    # 6 distinct values -> 5 bins of width 2 on [0, 10]: bin 0 holds 0..0.4 (c: a, a, a, b, b), bin 4 holds 10 (b);
    # bins 1-3 are empty. P(c|bin 0) = (3/5, 2/5), P(c|bin 4) = (0, 1): w = TV = 3/5 (empty bins counted gave 0.36)
    assert ad.weights.tolist() == pytest.approx([0.6], rel=1e-12)


def test_ahmad_dey_delta_is_the_max_over_value_subsets():
    """delta(a, b) = max over omega of P(omega|a) + P(not omega|b) - 1, averaged over the other attributes."""
    rng = np.random.default_rng(3)
    df = pl.DataFrame(
        {
            "a": rng.choice(["a0", "a1", "a2"], 60).tolist(),
            "b": rng.choice(["b0", "b1", "b2", "b3"], 60).tolist(),
            "c": rng.choice(["c0", "c1"], 60).tolist(),
        }
    )
    ad = AhmadDey(encode_records(df, [], ["a", "b", "c"]))
    for s_index, s in enumerate(["a", "b", "c"]):
        others = [v for v in ["a", "b", "c"] if v != s]
        values = sorted(df[s].unique().to_list())
        for i, j in itertools.combinations(range(len(values)), 2):
            total = 0.0
            for v in others:
                dom = sorted(df[v].unique().to_list())
                pa = df.filter(pl.col(s) == values[i])[v].value_counts(normalize=True)
                pb = df.filter(pl.col(s) == values[j])[v].value_counts(normalize=True)
                p_a = dict(zip(pa[v], pa["proportion"]))
                p_b = dict(zip(pb[v], pb["proportion"]))
                best = max(
                    sum(p_a.get(u, 0) for u in omega) + sum(p_b.get(u, 0) for u in dom if u not in omega) - 1
                    for size in range(len(dom) + 1)
                    for omega in itertools.combinations(dom, size)
                )
                total += best
            assert ad.delta[s_index][i, j] == pytest.approx(total / len(others))


def test_single_attribute_falls_back_to_mismatch():
    ad = AhmadDey(encode_records(pl.DataFrame({"c": ["u", "v", "w"]}), [], ["c"]))
    assert ad.delta[0].tolist() == [[0, 1, 1], [1, 0, 1], [1, 1, 0]]


def test_numeric_binning_equal_width():
    codes, n = _binned(np.arange(10.0))
    assert n == NUMERIC_BINS == 5
    assert codes.tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    codes, n = _binned(np.array([7.0, 3.0, 7.0]))
    assert (codes.tolist(), n) == ([1, 0, 1], 2)


@pytest.mark.parametrize("cls", [Gower, AhmadDey])
def test_one_row_path_equals_the_block_path(cls):
    rng = np.random.default_rng(5)
    df = pl.DataFrame(
        {"x": rng.random(50), "y": rng.integers(0, 9, 50).astype(float), "c": rng.choice(list("abc"), 50)}
    )
    r = encode_records(df, ["x", "y"], ["c"])
    dist = cls(r)
    num, cat = dist.transform(r)
    block = dist.distances(num, cat, num, cat)
    for i in (0, 17, 49):
        assert np.array_equal(dist.distances(num[:, i : i + 1], cat[:, i : i + 1], num, cat)[0], block[i])

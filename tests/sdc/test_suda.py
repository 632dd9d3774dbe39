"""SUDA2: sdcMicro's test_suda2.R examples (the book and the SDC-guideline tables, the contribution
example) and a brute-force enumeration of minimal sample uniques."""

from __future__ import annotations

import itertools
import math
import random

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polars_anon.errors import InvalidParameterError
from polars_anon.sdc import suda2


def _scores(frame: pl.DataFrame, keys: list[str]) -> list[float]:
    return suda2(frame, keys).frame.collect()["suda_score"].to_list()


def test_sdcmicro_contribution_example():
    """test_suda2.R "simple example contribution": contributions 50, 37.5, 37.5 whatever the column order."""
    frame = pl.DataFrame({"a": [2, 1, 1], "b": [0, 3, 0], "c": [0, 6, 0]})
    for order in (["a", "b", "c"], ["a", "c", "b"], ["c", "a", "b"], ["c", "b", "a"]):
        res = suda2(frame, order)
        assert res.contributions == {"a": 50.0, "b": 37.5, "c": 37.5}
    assert _scores(frame, ["a", "b", "c"]) == [2.0, 4.0, 2.0]  # by hand: {a}; {b}, {c}; {a,b}, {a,c}


def test_sdcmicro_book_example():
    """test_suda2.R "suda2 book example": scores of records 5 to 8 are 4, 2, 6, 8."""
    tab = pl.DataFrame(
        {
            "age": ["20s"] * 7 + ["60s"],
            "gender": ["male"] * 4 + ["female"] * 3 + ["male"],
            "income": ["50k+", "50k+"] + ["50k-"] * 6,
            "education": ["highschool"] * 4 + ["university", "highschool", "middleschool", "university"],
        }
    )
    assert _scores(tab, tab.columns)[4:] == [4.0, 2.0, 6.0, 8.0]


def test_sdcmicro_guideline_example():
    """test_suda2.R "suda2 sdc guideline": scores (0, 0, 6, 0, 12, 0, 6, 10, 0, 0)."""
    tab = pl.DataFrame({
        "Residence": ["Urban"] * 4 + ["Rural"] + ["Urban"] * 5,
        "Gender": ["Female", "Female", "Female", "Male", "Female", "Male", "Female", "Male", "Female", "Female"],
        "Education": ["Secondary incomplete", "Secondary incomplete", "Primary incomplete", "Secondary complete",
                      "Secondary complete", "Secondary complete", "Primary complete", "Post-secondary",
                      "Secondary incomplete", "Secondary incomplete"],
        "Labor": ["Employed", "Employed", "Non-LF", "Employed", "Unemployed", "Employed", "Non-LF", "Unemployed",
                  "Non-LF", "Non-LF"],
    })  # sdcMicro's test data, one column a line  # fmt: skip
    assert _scores(tab, tab.columns) == [0, 0, 6, 0, 12, 0, 6, 10, 0, 0]


def _reference(rows: list[tuple], m: int) -> list[float]:
    """Brute force: every subset of keys, every record; an MSU is unique with no unique proper subset."""

    def unique(i: int, subset: tuple[int, ...]) -> bool:
        return sum(all(r[j] == rows[i][j] for j in subset) for r in rows) == 1

    out = []
    for i in range(len(rows)):
        score = 0.0
        for size in range(1, m + 1):
            for subset in itertools.combinations(range(m), size):
                if unique(i, subset) and not any(unique(i, s) for s in itertools.combinations(subset, size - 1) if s):
                    score += math.factorial(m - size)
        out.append(score)
    return out


@settings(max_examples=60, deadline=None)
@given(rows=st.integers(1, 4).flatmap(lambda m: st.lists(st.tuples(*[st.integers(0, 2)] * m), min_size=1, max_size=10)))
def test_scores_match_brute_force(rows):
    m = len(rows[0])
    keys = [f"k{j}" for j in range(m)]
    frame = pl.DataFrame({v: [r[j] for r in rows] for j, v in enumerate(keys)}, schema={v: pl.Int64 for v in keys})
    res = suda2(frame, keys)
    out = res.frame.collect()
    assert out["suda_score"].to_list() == _reference(rows, m)
    dis = out["dis_suda_score"]
    assert ((dis >= 0) & (dis <= 1)).all() and ((dis > 0) == (out["suda_score"] > 0)).all()


def test_wide_codes_match_brute_force():
    """Keys of a wide integer range (coded by dense ranks), strings and missing values, seven of them: the packed
    codes outgrow the lookup array and the scores go back by a join; still the brute-force scores."""
    rng = random.Random(7)
    pool = [None, 0, 3, 10**9, -(10**12), 77, 5, 6, 9, 11, 12, 13, 14, 15]
    rows = [tuple(rng.choice(pool) for _ in range(7)) for _ in range(20)]
    keys = [f"k{j}" for j in range(7)]
    frame = pl.DataFrame({v: [r[j] for r in rows] for j, v in enumerate(keys)}, schema={v: pl.Int64 for v in keys})
    frame = frame.with_columns(pl.col("k6").cast(pl.String))
    assert suda2(frame, keys, missing="category").frame.collect()["suda_score"].to_list() == _reference(rows, 7)


def test_dis_score_by_hand():
    """Three keys: records 1-2 a pair, 3 and 4 unique ({a} each, score 2! = 2). U = 2, P = 2, f = 0.5:
    Dis = 1/2, Q = 1.25, adj = 2 * 2^-1.25, DIS = 1 / (1 + (4 - 2) / (2^1.25 * adj)) = 1/2."""
    frame = pl.DataFrame({"a": [1, 1, 2, 3], "b": [0, 0, 0, 0], "c": [5, 5, 5, 5]})
    out = suda2(frame, ["a", "b", "c"], dis_fraction=0.5).frame.collect()
    assert out["suda_score"].to_list() == [0, 0, 2, 2]
    assert out["dis_suda_score"].to_list() == pytest.approx([0, 0, 0.5, 0.5])


def test_refusals():
    frame = pl.DataFrame({f"k{j}": [1] for j in range(5)})
    with pytest.raises(InvalidParameterError, match="at most max_keys=4 keys"):
        suda2(frame, frame.columns, max_keys=4)
    for bad in (0, float("nan"), float("inf")):
        with pytest.raises(InvalidParameterError, match=r"dis_fraction must be a number in \(0, 1\], got " + str(bad)):
            suda2(frame, ["k0"], dis_fraction=bad)


def test_figures_do_not_depend_on_the_patterns_order():
    """An engine's group-by hands the patterns in an order that varies between runs; the DIS scores (their
    normalization sums every score) and the contributions must come out bit for bit the same in any order (they
    differed in the last digits, and the report's bytes with them)."""
    from polars_anon.sdc.suda import suda2_patterns

    keys = ["a", "b", "c", "d"]
    rng = random.Random(3)  # a skewed key, so that the scores vary
    rows = [
        (int(rng.paretovariate(1.2)) % 60, rng.randrange(30), rng.randrange(9), rng.randrange(5)) for _ in range(20000)
    ]
    pats = pl.DataFrame(rows, schema=keys, orient="row").group_by(keys).len("n").sort(keys)
    res, scores = suda2_patterns(pats, keys, "n")
    for seed in range(5):
        shuffled = pats.sample(fraction=1.0, shuffle=True, seed=seed)
        res2, scores2 = suda2_patterns(shuffled, keys, "n")
        assert res2.contributions == res.contributions
        again = shuffled.select(keys).join(scores, on=keys, how="left", maintain_order="left")
        assert scores2["dis_suda_score"].to_list() == again["dis_suda_score"].to_list()

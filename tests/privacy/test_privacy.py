"""Privacy checks and disclosure attacks [paper 004 §5.2] against hand-computed values."""

from __future__ import annotations

import polars as pl
import pytest

from polars_anon.errors import ColumnNotFoundError, InvalidParameterError, NullValueError
from polars_anon.privacy import homogeneity_rate, l_diversity, ml_inference, record_linkage, t_closeness

T = pl.DataFrame(
    {
        "q": ["a", "a", "a", "b", "b", "c", "c", "c", "c"],
        "s": ["x", "x", "x", "x", "y", "x", "y", "y", "z"],
    }
)


def test_homogeneity_rate():
    assert homogeneity_rate(T, ["q"], "s") == pytest.approx(3 / 9)  # class a is all x
    assert homogeneity_rate(T.lazy(), ["q"], "s") == pytest.approx(3 / 9)
    assert homogeneity_rate(T.with_columns(pl.lit("*").alias("q")), ["q"], "s") == 0.0


def test_l_diversity_and_t_closeness():
    assert l_diversity(T, ["q"], "s") == 1
    # overall (x, y, z) = (5, 3, 1)/9; class a = (1, 0, 0): TV = (4/9 + 3/9 + 1/9) / 2 = 4/9
    # class b = (1/2, 1/2, 0): (1/18 + 3/18 + 2/18) / 2 = 1/6
    # class c = (1/4, 1/2, 1/4): (11/36 + 6/36 + 5/36) / 2 = 11/36
    assert t_closeness(T, ["q"], "s") == pytest.approx(4 / 9)
    assert t_closeness(T.with_columns(pl.lit("*").alias("q")), ["q"], "s") == pytest.approx(0.0)


def test_the_checks_take_the_models_null_policy():
    """review23 item 6: on a null the three refused with "say how the model reads them: sensitive_null=..." and took
    no such parameter. Now they take the models' sensitive_null (the model decides; by hand below)."""
    df = pl.DataFrame({"q": [1, 1, 2, 2], "s": [1, None, 2, 2]})
    for check in (homogeneity_rate, l_diversity, t_closeness):
        with pytest.raises(NullValueError, match="holds 1 null values; say how the model reads them"):
            check(df, ["q"], "s")
        with pytest.raises(InvalidParameterError, match="sensitive_null must be one of"):
            check(df, ["q"], "s", sensitive_null="drop")  # type: ignore[arg-type]
    # ignore: class 1 = {1}, class 2 = {2, 2}: both single-valued (4 of 4 rows); value: class 1 = {1, null}
    assert homogeneity_rate(df, ["q"], "s", sensitive_null="ignore") == 1.0
    assert homogeneity_rate(df, ["q"], "s", sensitive_null="value") == 0.5
    assert l_diversity(df, ["q"], "s", sensitive_null="ignore") == 1
    assert l_diversity(df.with_columns(s=pl.Series([1, None, 2, 3])), ["q"], "s", sensitive_null="value") == 2
    # ignore: table (1, 2) = (1/3, 2/3), class 1 = (1, 0): TV = (2/3 + 2/3) / 2 = 2/3
    # value: table (1, null, 2) = (1/4, 1/4, 1/2), class 1 = (1/2, 1/2, 0), class 2 = (0, 0, 1): TV 1/2 both
    assert t_closeness(df, ["q"], "s", sensitive_null="ignore") == pytest.approx(2 / 3)
    assert t_closeness(df, ["q"], "s", sensitive_null="value") == pytest.approx(1 / 2)


def test_record_linkage_ties_count_in_expectation():
    orig = pl.DataFrame({"age": [20, 21, 60, 61], "s": ["a", "a", "b", "c"]})
    pub = pl.DataFrame({"age": [20, 20, 60, 60], "s": ["a", "b", "b", "c"]})
    # every original links to two published records at the same distance, one right: 1/2 each
    assert record_linkage(orig, pub, ["age"], "s") == pytest.approx(0.5)


def test_record_linkage_mixed_gower():
    orig = pl.DataFrame({"age": ["20", "40", "60"], "sex": ["F", "M", "F"], "s": ["p", "q", "r"]})
    # published swaps the sexes of rows 0 and 1; ranges come from the original (40)
    pub = pl.DataFrame({"age": ["20", "40", "60"], "sex": ["M", "F", "F"], "s": ["p", "q", "r"]})
    # orig (20, F): to pub0 (0 + 1)/2 = .5, pub1 (.5 + 0)/2 = .25, pub2 (1 + 0)/2 = .5 -> links pub1 (q): wrong
    # orig (40, M): pub0 (.5 + 0)/2 = .25, pub1 (0 + 1)/2 = .5, pub2 (.5 + 1)/2 -> pub0 (p): wrong
    # orig (60, F): pub2 distance 0: right
    assert record_linkage(orig, pub, ["age", "sex"], "s") == pytest.approx(1 / 3)
    # ages as categories: orig0 (20, F) is at 1/2 from all three (right 1/3 of the time),
    # orig1 (40, M) at 1/2 from pub0 and pub1 (right 1/2), orig2 matches pub2 exactly
    assert record_linkage(orig, pub, ["age", "sex"], "s", numeric=[]) == pytest.approx((1 / 3 + 1 / 2 + 1) / 3)


def test_record_linkage_reads_generalized_values_as_categories():
    orig = pl.DataFrame({"age": ["20", "25"], "s": ["a", "b"]})
    pub = pl.DataFrame({"age": ["20-29", "20-29"], "s": ["a", "b"]})
    assert record_linkage(orig, pub, ["age"], "s") == pytest.approx(0.5)


def test_ml_inference_right_and_inverted():
    orig = pl.DataFrame({"q": ["a", "b"] * 10, "age": [1, 2] * 10, "s": ["x", "y"] * 10})
    assert ml_inference(orig, orig, ["q", "age"], "s") == 1.0
    inverted = orig.with_columns(pl.col("s").replace({"x": "y", "y": "x"}))
    assert ml_inference(orig, inverted, ["q", "age"], "s") == 0.0


def test_ml_inference_takes_any_classifier():
    from sklearn.tree import DecisionTreeClassifier

    orig = pl.DataFrame({"q": ["a", "b", "c", "a"], "s": ["x", "y", "y", "x"]})
    assert ml_inference(orig, orig, ["q"], "s", model=DecisionTreeClassifier(random_state=0)) == 1.0


def test_missing_column_is_named():
    with pytest.raises(ColumnNotFoundError, match=r"columns \['salary'\] not in the frame"):
        homogeneity_rate(T, ["q"], "salary")

"""Distinct counts of undeclared columns in bounded memory (polars_anon.attributes.distinct_counts).

The partitioned count is checked against Polars' own one-pass ``n_unique`` (the brute force):
exact whenever the identifying check would refuse the column, the same decision always, and
an upper bound under the threshold when it stops early.
"""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_anon as pa
from polars_anon.attributes import IDENTIFYING_SHARE, distinct_counts, distinct_estimates, refuse_identifying
from polars_anon.errors import InvalidParameterError

FLOATS = [0.0, -0.0, float("nan"), -float("nan"), None, 1.5, 2.5]


def _exact(lf: pl.LazyFrame, column: str) -> int:
    return int(lf.select(pl.col(column).n_unique()).collect().item())


def _refused(count: int, n_rows: int) -> bool:
    return count > IDENTIFYING_SHARE * n_rows


@settings(max_examples=100, deadline=None)
@given(
    values=st.lists(st.one_of(st.none(), st.integers(0, 60)), min_size=2, max_size=100),
    budget=st.integers(2, 40),
)
def test_partitioned_count_gives_the_exact_decision(values: list[int | None], budget: int) -> None:
    """Any budget (2 to 40 values a pass, so up to 63 partitions): refused exactly when n_unique refuses, with the
    exact count; otherwise a bound between the exact count and the threshold."""
    lf = pl.LazyFrame({"c": values}, schema={"c": pl.Int64})
    n = len(values)
    got = distinct_counts(lf, ["c"], n, budget=budget)["c"]
    exact = _exact(lf, "c")
    assert _refused(got, n) == _refused(exact, n)
    if _refused(exact, n):
        assert got == exact
    else:
        assert exact <= got <= IDENTIFYING_SHARE * n


@pytest.mark.parametrize("budget", [1, 3, 1000])
def test_equal_floats_share_a_partition(budget: int) -> None:
    """0.0 and -0.0, and every NaN, are one value for n_unique: the partitions must not count them twice."""
    values = FLOATS * 40  # 280 rows, 5 distinct values: never refused, so only check the bound's side
    lf = pl.LazyFrame({"f": values}, schema={"f": pl.Float64})
    assert _exact(lf, "f") == 5
    unique = pl.LazyFrame({"f": FLOATS}, schema={"f": pl.Float64})  # 7 rows, 5 distinct: 5 <= 6.3, not refused
    assert distinct_counts(unique, ["f"], 7, budget=budget)["f"] <= IDENTIFYING_SHARE * 7
    ids = pl.LazyFrame({"f": [*FLOATS[2:], *range(40)]}, schema={"f": pl.Float64})  # NaN, -NaN, null, 1.5, 2.5, 0..39
    assert distinct_counts(ids, ["f"], 45, budget=budget)["f"] == _exact(ids, "f") == 44


@pytest.mark.parametrize("budget", [7, 40, 1 << 22])
def test_several_columns_and_types(budget: int) -> None:
    """Strings, nulls, dates, low- and high-cardinality columns in one call: each exact where it is refused."""
    n = 300
    df = pl.DataFrame(
        {
            "id": [f"v{i:04d}" for i in range(n)],
            "party": ["DEM", "REP", None] * (n // 3),
            "when": pl.date_range(pl.date(2020, 1, 1), pl.date(2020, 1, 1) + pl.duration(days=n - 1), eager=True),
            "half": [i // 2 for i in range(n)],
        }
    )
    got = distinct_counts(df.lazy(), df.columns, n, budget=budget)
    assert got["id"] == got["when"] == n
    assert got["party"] == 3 if budget > 3 else got["party"] <= IDENTIFYING_SHARE * n
    assert _exact(df.lazy(), "half") <= got["half"] <= IDENTIFYING_SHARE * n
    with pytest.raises(
        InvalidParameterError, match=r"column 'id' is not declared and has 300 distinct values in 300 rows"
    ):
        refuse_identifying(got, n)


def test_estimates_only_plan_the_passes() -> None:
    """A wildly wrong estimate changes the passes, never the count."""
    lf = pl.LazyFrame({"id": range(500)})
    assert distinct_estimates(lf, ["id"]).collect().columns == ["id"]
    for estimate in (0, 1, 10**9):
        assert distinct_counts(lf, ["id"], 500, {"id": estimate}, budget=50) == {"id": 500}


def test_pipeline_refuses_with_the_exact_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Polars road, with passes forced small: an undeclared id is refused with its exact count."""
    monkeypatch.setitem(distinct_counts.__kwdefaults__, "budget", 16)  # 13 passes for the 200 ids
    df = pl.DataFrame({"id": range(200), "sex": ["F", "M"] * 100})
    h = {"sex": pa.Hierarchy.suppression(["F", "M"])}
    with pytest.raises(
        InvalidParameterError, match=r"column 'id' is not declared and has 200 distinct values in 200 rows"
    ):
        pa.anonymize(df, hierarchies=h, k=2).collect()
    out = pa.anonymize(
        df.with_columns(pl.col("id") // 4), hierarchies=h, k=2
    ).collect()  # 50 distinct in 200: published
    assert out.height == 200

"""A Datetime qid in milliseconds or nanoseconds on Spark, which holds every timestamp in microseconds.

A hierarchy built from the column's own values (``Hierarchy.dates(df["t"].unique())``) has leaves with 3 or 9 digits
of second, and Spark's values are labelled with 6: refused, and the refusal now says so and how to build the
hierarchy (from the values cast to microseconds), which then publishes.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import polars as pl
import pytest

import polars_anon as pa

BASE = [dt.datetime(2020, 1, 1, 10, 30, 15, 123000) + dt.timedelta(days=40 * i, seconds=i) for i in range(4)]
S = pa.Hierarchy.suppression(["F", "M"])


def _frame(unit: str) -> pl.DataFrame:
    """Each timestamp twice, with the same sex: classes of 2 at the leaves."""
    return pl.DataFrame({"t": pl.Series(BASE * 2, dtype=pl.Datetime(unit)), "s": ["F", "M"] * 4})


@pytest.mark.parametrize(("unit", "leaf"), [("ms", "2020-01-01 10:30:15.123"), ("ns", "2020-01-01 10:30:15.123000000")])
def test_spark_names_the_time_unit_and_the_advice_publishes(unit: str, leaf: str, spark: Any) -> None:
    df = _frame(unit)
    own = {"t": pa.Hierarchy.dates(df["t"].unique()), "s": S}
    with pytest.raises(pa.ValueNotInHierarchyError) as refused:
        pa.anonymize(df, hierarchies=own, k=2, engine="spark")
    assert (
        f"another time unit ('2020-01-01 10:30:15.123000' as '{leaf}'): the engine holds the column in microseconds"
        in str(refused.value)
    )
    assert "Hierarchy.dates(df['t'].cast(pl.Datetime('us')).unique())" in str(refused.value)
    advised = {"t": pa.Hierarchy.dates(df["t"].cast(pl.Datetime("us")).unique()), "s": S}
    out = pa.anonymize(df, hierarchies=advised, k=2, engine="spark").collect()
    assert out["t"].to_list() == [f"{d:%Y-%m-%d %H:%M:%S}.123000" for d in BASE * 2]


def test_polars_names_the_column_s_own_unit() -> None:
    """The other way round: a hierarchy in microseconds over a column in milliseconds, on Polars."""
    df = _frame("ms")
    other = {"t": pa.Hierarchy.dates(df["t"].cast(pl.Datetime("us")).unique()), "s": S}
    with pytest.raises(pa.ValueNotInHierarchyError, match=r"the engine holds the column in milliseconds; build"):
        pa.anonymize(df, hierarchies=other, k=2)

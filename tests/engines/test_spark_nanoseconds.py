"""A nanosecond value below the microsecond on Spark, which holds every time in microseconds (hunt47).

Spark cut it silently: distinct values 02:30:00.000000001 and .000000999 of a Datetime("ns") qid published by
Mondrian as one 02:30:00.000000 (merged, and not a range holding the originals), naive or in UTC; a Parquet file in
nanoseconds was refused already (pipeline.capabilities.SOURCE_DTYPES). A Polars frame holding one is now refused
naming the column and its first such value; whole microseconds pass, labelled as on Polars
(tests/engines/test_spark_time_units.py).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import polars as pl
import pytest

import polars_anon as pa

BASE = 1616898600 * 10**9  # 2021-03-28 02:30:00
S = pa.Hierarchy.suppression(["F", "M"])


def _times(zone: str | None) -> pl.Series:
    """Four instants, three rows each, three of them apart below the microsecond."""
    ns = pl.Series([v for v in (BASE + 1, BASE + 999, BASE + 5_000, BASE + 1_000_001) for _ in range(3)])
    times = ns.cast(pl.Datetime("ns"))
    return times.dt.replace_time_zone(zone) if zone else times


@pytest.mark.parametrize("zone", [None, "UTC"])
def test_a_qid_below_the_microsecond_is_refused_naming_it(zone: str | None, spark: Any) -> None:
    """Mondrian without a hierarchy (failing before: published, three values as one)."""
    df = pl.DataFrame({"t": _times(zone), "sex": ["F", "M", "F"] * 4})
    shown = "2021-03-28 02:30:00.000000001" + ("+00:00" if zone else "")
    with pytest.raises(pa.InvalidParameterError, match=re.escape(f"column 't' holds {shown}, a time below the micro")):
        pa.anonymize(df, qids=["t", "sex"], hierarchies={"sex": S}, k=3, method="mondrian", engine="spark")


def test_any_column_spark_would_cut_is_refused(spark: Any) -> None:
    """A column published as is (not a qid) would be cut too: refused, the message one line with the way out
    (failing before: published cut)."""
    seen = pl.Series([BASE + 7] * 6 + [BASE + 2_000] * 6).cast(pl.Datetime("ns"))
    df = pl.DataFrame({"sex": ["F", "M", "F"] * 4, "seen": seen})
    with pytest.raises(pa.InvalidParameterError) as refused:
        pa.anonymize(df, hierarchies={"sex": S}, k=3, method="greedy", engine="spark", insensitive=["seen"])
    said = str(refused.value)
    assert said.startswith("column 'seen' holds 2021-03-28 02:30:00.000000007, a time below the microsecond")
    assert "dt.cast_time_unit('us')" in said and "\n" not in said


def test_whole_microseconds_in_nanoseconds_publish_as_on_polars(spark: Any) -> None:
    """Nothing is cut: the same rows as the Polars engine, labelled in nanoseconds (9 digits)."""
    t = pl.Series(
        [dt.datetime(2021, 1, d, 0, 0, 0, d) for d in (1, 2, 3, 4) for _ in range(3)], dtype=pl.Datetime("ns")
    )
    df = pl.DataFrame({"t": t, "sex": ["F", "M", "F"] * 4})
    args: dict[str, Any] = {"qids": ["t", "sex"], "hierarchies": {"sex": S}, "k": 3, "method": "mondrian"}
    out = pa.anonymize(df, engine="spark", **args).collect()
    assert out.equals(pa.anonymize(df, **args).collect()) and out["t"][0] == "2021-01-01 00:00:00.000001000"


def test_only_the_columns_the_job_reads_are_refused(spark: Any) -> None:
    """mend51: the refusal checked every column of the frame when Spark received it, before the request was read: a
    dropped column below the microsecond was refused too (failing before). It is not read: the job publishes."""
    seen = pl.Series([BASE + 7] * 6 + [BASE + 2_000] * 6).cast(pl.Datetime("ns"))
    df = pl.DataFrame({"sex": ["F", "M", "F"] * 4, "seen": seen})
    out = pa.anonymize(df, hierarchies={"sex": S}, k=3, method="greedy", engine="spark", drop=["seen"]).collect()
    assert out.columns == ["sex"] and out.height == 12


@pytest.mark.parametrize("nest", ["list", "struct"])
def test_a_time_below_the_microsecond_inside_a_list_or_struct_is_refused(spark: Any, nest: str) -> None:
    """mend51: nested in a List, Arrow's conversion failed in its own words ('Casting from timestamp[ns] to
    timestamp[us] would lose data'); in a Struct, published cut (the values merged). Refused as a column's own, naming
    the column and the value; dropped, published as above."""
    seen = pl.Series("seen", [BASE + 7] * 6 + [BASE + 2_000] * 6).cast(pl.Datetime("ns")).to_frame()
    nested = seen.select(pl.concat_list("seen") if nest == "list" else pl.struct("seen")).to_series()
    df = pl.DataFrame({"sex": ["F", "M", "F"] * 4, "seen": nested})
    args: dict[str, Any] = {"hierarchies": {"sex": S}, "k": 3, "method": "greedy", "engine": "spark"}
    shown = "2021-03-28 02:30:00.000000007"
    with pytest.raises(
        pa.InvalidParameterError, match=re.escape(f"column 'seen' holds {shown}, a time below the micro")
    ):
        pa.anonymize(df, insensitive=["seen"], **args)
    assert pa.anonymize(df, drop=["seen"], **args).collect().columns == ["sex"]


def test_whole_microseconds_in_an_array_of_two_dimensions_are_sent_to_spark(spark: Any) -> None:
    """mend57: Spark's own walk of nested dtypes rebuilt an Array of two dimensions with its whole shape around its
    items, themselves arrays (Array(Array(Array(...))), one dimension too many): the cast to microseconds failed
    (InvalidOperationError). One walk now, _dtypes.map_nested: sent, published as Spark reads it back."""
    micros = pl.Series([[[1_000, 2_000, 3_000], [4_000, 5_000, 6_000]]] * 4, dtype=pl.Array(pl.Int64, (2, 3)))
    df = pl.DataFrame({"sex": ["F", "F", "M", "M"], "a": micros.cast(pl.Array(pl.Datetime("ns"), (2, 3)))})
    out = pa.anonymize(df, hierarchies={"sex": S}, k=2, engine="spark", insensitive=["a"]).collect()
    assert out["a"].dtype == pl.List(pl.List(pl.Datetime("us"))) and out["a"][0][1][2] == dt.datetime(
        1970, 1, 1, 0, 0, 0, 6
    )

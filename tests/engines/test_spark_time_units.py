"""A Datetime qid in milliseconds or nanoseconds on Spark, which holds every timestamp in microseconds.

A Polars frame sent to Spark carries each Datetime column's unit, as a Parquet file Spark reads does: its values are
labelled in it (3 or 9 digits of second), as on the Polars engine, and a hierarchy built from the column's own values
(``Hierarchy.dates(df["t"].unique())``) publishes the same rows on both; a value below the microsecond, which Spark
would cut, is refused (tests/engines/test_spark_nanoseconds.py).
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
def test_spark_labels_a_frame_in_its_own_unit_as_polars_does(unit: str, leaf: str, spark: Any) -> None:
    """Was: a frame in ms or ns sent to Spark was labelled in microseconds, its own hierarchy refused on Spark alone
    and one in microseconds published there, rows that differed between engines (hunt47: mondrian published
    '...00.000000' on Spark, '...00.000' on Polars). The frame now carries its unit, as a Parquet file read by Spark
    does: the column's own hierarchy publishes the same rows as on Polars, and one in microseconds is refused on
    both, naming the column's unit."""
    df = _frame(unit)
    own = {"t": pa.Hierarchy.dates(df["t"].unique()), "s": S}
    out = pa.anonymize(df, hierarchies=own, k=2, engine="spark").collect()
    assert out.equals(pa.anonymize(df, hierarchies=own, k=2).collect()) and out["t"][0] == leaf
    rows = pa.anonymize(df, qids=["t", "s"], hierarchies={"s": S}, k=2, method="mondrian", engine="spark").collect()
    assert rows.equals(pa.anonymize(df, qids=["t", "s"], hierarchies={"s": S}, k=2, method="mondrian").collect())
    micro = {"t": pa.Hierarchy.dates(df["t"].cast(pl.Datetime("us")).unique()), "s": S}
    named = {"ms": "milliseconds", "ns": "nanoseconds"}[unit]
    with pytest.raises(pa.ValueNotInHierarchyError, match=f"the engine holds the column in {named}; build"):
        pa.anonymize(df, hierarchies=micro, k=2, engine="spark")


def test_polars_names_the_column_s_own_unit() -> None:
    """The other way round: a hierarchy in microseconds over a column in milliseconds, on Polars."""
    df = _frame("ms")
    other = {"t": pa.Hierarchy.dates(df["t"].cast(pl.Datetime("us")).unique()), "s": S}
    with pytest.raises(pa.ValueNotInHierarchyError, match=r"the engine holds the column in milliseconds; build"):
        pa.anonymize(df, hierarchies=other, k=2)


def test_spark_reads_a_table_s_schema_without_a_query(spark: Any, tmp_path: Any) -> None:
    """ci12: the engine's schema of a table (read at the start of every run) was an empty ``limit(0)`` collected, a
    Spark job of its own; now read from the Spark schema alone, the dtypes the table's rows reach Polars in (time
    units, Enums, zones), for a frame sent to Spark and a Parquet file Spark reads."""
    from polars_anon.engines.spark import SparkEngine

    engine = SparkEngine(spark)
    df = _frame("ms").with_columns(
        pl.Series("e", ["a", "b"] * 4, dtype=pl.Enum(["b", "a"])), pl.col("t").dt.replace_time_zone("UTC").alias("z")
    )
    df.write_parquet(tmp_path / "t.parquet")

    def last_job() -> int:
        return max(spark.sparkContext.statusTracker().getJobIdsForGroup(), default=-1)

    for table in (engine.table(df), engine.read_parquet(tmp_path / "t.parquet")):
        before = last_job()
        schema = engine.schema(table)
        assert last_job() == before
        assert schema == engine.to_polars(table).schema
        assert schema["t"] == pl.Datetime("ms") and schema["e"] == pl.Enum(["b", "a"])

"""The time units a DuckDB or Spark engine brings a Parquet file's Datetime columns to Polars in belong to what it
read, not to the engine: two files read by one engine object keep their own, and rows the engine did not read from a
file keep theirs. (The engine kept the units of the last file it read and applied them to every later table: the
first file's rows came back in the second file's unit, a Polars frame's in the file's.) Polars' labels of each file
are the reference, and the labels are also written by hand."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from polars_anon.engines.duckdb import DuckDBEngine
from polars_anon.engines.spark import SparkEngine

AT = dt.datetime(2020, 1, 1, 12, 0, 0, 123000)
# Polars' String cast writes every digit of the column's unit
LABELS = {"ms": "2020-01-01 12:00:00.123", "us": "2020-01-01 12:00:00.123000", "ns": "2020-01-01 12:00:00.123000000"}


def _file(tmp_path: Path, unit: str) -> Path:
    path = tmp_path / f"{unit}.parquet"
    pl.DataFrame({"t": pl.Series([AT, AT], dtype=pl.Datetime(unit)), "n": [1, 2]}).write_parquet(path)  # type: ignore[arg-type]
    return path


def _labels(frame: pl.DataFrame) -> list[str]:
    return frame["t"].cast(pl.String).unique().to_list()


def _check_two_reads(engine: Any, tmp_path: Path, first: str, second: str) -> None:
    """Read a file in `first`, then one in `second`, on `engine`; every table keeps its own file's labels."""
    a, b = _file(tmp_path, first), _file(tmp_path, second)
    ta, tb = engine.read_parquet(a), engine.read_parquet(b)
    for table, path, unit in ((ta, a, first), (tb, b, second)):
        expected = [LABELS[unit]]
        assert _labels(pl.read_parquet(path)) == expected  # Polars reads the file so
        assert _labels(engine.to_polars(table)) == expected
        assert _labels(engine.counts(table, ["t"])) == expected
        assert engine.marginals(table, ["t"])["t"]["t"].to_list() == expected  # labelled through a view and SQL
        assert engine.schema(table)["t"] == pl.Datetime(unit)  # type: ignore[arg-type]
    own = engine.table(pl.DataFrame({"t": pl.Series([AT], dtype=pl.Datetime("us"))}))  # not from a file
    assert _labels(engine.to_polars(own)) == [LABELS["us"]]


@pytest.mark.parametrize(("first", "second"), [("ms", "ns"), ("ns", "ms"), ("ms", "us")])
def test_duckdb_keeps_each_files_units(first: str, second: str, tmp_path: Path) -> None:
    engine = DuckDBEngine.own()
    _check_two_reads(engine, tmp_path, first, second)
    published = engine.sample(engine.read_parquet(_file(tmp_path, first)), (1, 2, 3), 2**32)  # derived: a query
    assert _labels(engine.to_polars(published)) == [LABELS[first]]


@pytest.mark.parametrize(("first", "second"), [("ms", "us"), ("us", "ms")])  # Spark cannot read nanoseconds
def test_spark_keeps_each_files_units(first: str, second: str, spark: Any, tmp_path: Path) -> None:
    engine = SparkEngine(spark)
    _check_two_reads(engine, tmp_path, first, second)
    written = tmp_path / "out"
    engine.write(engine.read_parquet(_file(tmp_path, first)), written)  # Spark writes microseconds: read as written
    assert _labels(pl.read_parquet(written)) == _labels(engine.to_polars(engine.read_parquet(written)))

"""Fixtures of the engine tests: Adult with a row id (to compare engines' rows after sorting), and as Spark data."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest


@pytest.fixture(scope="session")
def adult_rows(adult: pl.DataFrame) -> pl.DataFrame:
    return adult.with_row_index("rid").with_columns(pl.col("rid").cast(pl.Int64))


@pytest.fixture(scope="session")
def adult_sdf(adult_rows: pl.DataFrame, spark: Any) -> Any:
    return spark.createDataFrame(adult_rows.to_arrow()).cache()

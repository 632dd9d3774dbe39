"""Table risk models break ties between equally small classes by the class's first input row (ARX's order),
the same on Polars, DuckDB and Spark: the first row comes from each engine's aggregation pass.

Hand computation: ``zip`` in input order c, b, a, d, d, d, d, d; classes a, b, c of one row and d of five.
Average risk 4 / 8 = 0.5 > 0.45; one singleton out: 3 / 7 = 0.43 <= 0.45. The singletons tie on size; c holds
the first row (row 0), so c goes (sorted tuples would take a). The rest publish at level 0 (one row suppressed,
within the budget of one).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_anon as pa

ZIP = ["c", "b", "a", "d", "d", "d", "d", "d"]
KEPT = ["b", "a", "d", "d", "d", "d", "d"]


def _args() -> dict[str, Any]:
    h = pa.Hierarchy.suppression(["a", "b", "c", "d"])
    return {
        "hierarchies": {"zip": h},
        "k": 1,
        "method": "fulldomain",
        "max_suppressed": 1,
        "privacy": [pa.AverageRisk(0.45)],
    }


def _data() -> pl.DataFrame:
    return pl.DataFrame({"rid": list(range(len(ZIP))), "zip": ZIP})


def _published(rows: pl.DataFrame) -> list[str]:
    return rows.sort("rid")["zip"].to_list()


def test_polars_suppresses_the_class_of_the_first_row() -> None:
    res = pa.anonymize(_data(), insensitive=["rid"], **_args())
    assert _published(res.collect()) == KEPT
    assert res.report["suppressed"] == 1


def test_first_row_not_sorted_tuple() -> None:
    """The same rows in another order: a first, then c: now a goes (the order follows the rows, not the values)."""
    data = pl.DataFrame({"rid": list(range(8)), "zip": ["a", "b", "c", "d", "d", "d", "d", "d"]})
    rows = pa.anonymize(data, insensitive=["rid"], **_args()).collect()
    assert _published(rows) == ["b", "c", "d", "d", "d", "d", "d"]


@pytest.mark.parametrize("engine", ["duckdb", "spark"])
def test_sql_engines_suppress_the_class_of_the_first_row(engine: Any, tmp_path: Path, request: Any) -> None:
    data: Any = _data()
    if engine == "spark":
        data = request.getfixturevalue("spark").createDataFrame(_data().to_arrow())  # partitions in row order
    out = tmp_path / "out.parquet"
    report = pa.anonymize(data, engine=engine, insensitive=["rid"], **_args()).sink_parquet(out, report_html=False)
    assert _published(pl.read_parquet(out)) == KEPT
    assert report["suppressed"] == 1

"""Greedy and MDAV on Spark's blocks (issue 18) agree with the driver's algorithm on the same blocks.

Greedy: :mod:`polars_anon.engines.planners.spark_greedy` (round 1 per block in Spark
tasks, later rounds on the driver) gives the same tuple map, rows and report as the driver's
blocked greedy with the same ``candidates``. MDAV: ``engine="spark"`` (records on Spark, blocks
cut by Spark queries, each block clustered in a task) gives the same rows and report as the
Polars road with the same ``block_size``. Spark's rows are compared after sorting by a row id.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_anon as pa
import polars_anon.algorithms.mdav as mdav_module
from polars_anon.algorithms.mdav import _median_cut, cut_rule
from polars_anon.demo import demo_hierarchy_specs, voter_register
from polars_anon.engines.planners import spark_mdav
from polars_anon.engines.planners.spark_greedy import GreedyPlanner
from polars_anon.engines.spark import SparkEngine
from polars_anon.errors import InvalidParameterError
from polars_anon.job import build_hierarchies
from tests.engines import equal

VARYING = {
    "seconds",
    "write_seconds",
    "output",
    "engine",
    "risk",
    "min_class_size",
    "n_classes",
    "n_rows",
    "k_anonymous",
}
"""Timings, paths, the engine's name, and the facts the verification adds (compared by the engine agreement tests)."""
LEFT_OUT = {"metrics", "metrics_normalized", "metric_units"}
"""What greedy's Spark blocks leave out of the report (the metrics read every input tuple, which stays on Spark)."""


def _greedy_both(spark: Any, df: pl.DataFrame, hierarchies: dict, **asked: Any) -> None:
    """Greedy's Spark planner (forced by driver_tuples=1) against the driver's blocked greedy: the same map, rows
    and report."""
    engine = SparkEngine(spark)
    table = engine.table(df)
    options = {key: asked.pop(key) for key in ("candidates", "first", "partners") if key in asked}
    polars = pa.anonymize(df, hierarchies=hierarchies, method="greedy", **options, **asked)
    rows = polars.collect()
    want = polars.verifier.planned  # type: ignore[attr-defined]  # the driver's blocked greedy: its map and facts
    got = pa.anonymize(
        table, engine="spark", driver_tuples=1, hierarchies=hierarchies, method="greedy", **options, **asked
    )
    planned = got.verifier.planned  # type: ignore[attr-defined]
    # the tuple map stays on Spark: the driver holds one row per published class, the driver's published classes
    assert planned.plan.map.by_partition
    assert planned.plan.map.published_sizes().equals(want.plan.map.published_sizes())
    assert planned.plan.details["rounds"] >= 1 and planned.plan.details["block"] == options["candidates"]
    distributed = got.report["details"]["distributed"]
    assert distributed["driver_tuples"] == 1 and set(distributed["left_out"]) == set(LEFT_OUT)
    assert set(distributed["metrics"]) == set(want.facts["metrics"]) and all(got.report[key] == {} for key in LEFT_OUT)
    equal(planned.facts, want.facts, ignore={*VARYING, *LEFT_OUT, "distributed"})
    assert engine.to_polars(got.published).sort("rid").equals(rows)


def test_greedy_on_spark_is_the_driver_blocked_greedy_on_adult(
    spark: Any, adult_rows: pl.DataFrame, adult_hierarchies: dict
) -> None:
    """Adult's first 8,000 rows: 6,220 distinct tuples, some 100 blocks of 64 candidates (round 1 in Spark tasks,
    later rounds on the driver), the route all of Adult (18,109 tuples) took, at a third of the greedy work."""
    _greedy_both(spark, adult_rows.head(8_000), adult_hierarchies, k=5, candidates=64, insensitive="rid")


def test_greedy_on_spark_is_the_driver_blocked_greedy_on_a_register(spark: Any) -> None:
    """A generated register, with paper 000's choices (smallest class first, partners among all)."""
    df = voter_register(8_000, seed=5).with_row_index("rid").with_columns(pl.col("rid").cast(pl.Int64))
    hierarchies = build_hierarchies(df.lazy(), demo_hierarchy_specs())
    _greedy_both(
        spark,
        df,
        hierarchies,
        k=10,
        candidates=40,
        first="smallest",
        partners="all",
        drop=["voter_id", "name"],
        insensitive="rid",
    )


def test_greedy_beyond_driver_tuples_takes_the_spark_route(spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through pa.anonymize: beyond driver_tuples, greedy on Spark is greedy_on_spark (the same rows as the driver's
    blocked greedy), and the report says which cap sent it there; DuckDB has no greedy planner and refuses. The
    planner reads what it reads through Arrow, no row collected as Python objects (ci12: the rows published with
    their own value were a ``collect`` of a query of its own, a Spark job; now a column of the published classes)."""
    DataFrame = type(spark.range(1))  # pyspark's classic DataFrame (its collect, not the API class's)
    collected: list[Any] = []
    plan, collect = GreedyPlanner.plan, DataFrame.collect

    def spied(planner: GreedyPlanner) -> Any:
        monkeypatch.setattr(DataFrame, "collect", lambda frame: collected.append(frame) or collect(frame))
        try:
            return plan(planner)
        finally:
            monkeypatch.setattr(DataFrame, "collect", collect)

    monkeypatch.setattr(GreedyPlanner, "plan", spied)
    df = voter_register(3_000, seed=2).with_row_index("rid").with_columns(pl.col("rid").cast(pl.Int64))
    asked: dict[str, Any] = {
        "hierarchies": build_hierarchies(df.lazy(), demo_hierarchy_specs()),
        "k": 10,
        "method": "greedy",
        "candidates": 40,
        "drop": ["voter_id", "name"],
        "insensitive": "rid",
    }
    result = pa.anonymize(spark.createDataFrame(df.to_arrow()), engine="spark", driver_tuples=100, **asked)
    assert result.collect().equals(pa.anonymize(df, **asked).collect())  # in input order
    assert result.report["details"]["distributed"]["driver_tuples"] == 100
    assert collected == []
    with pytest.raises(InvalidParameterError, match="more than 100 distinct qid tuples .* or use method 'mondrian'$"):
        pa.anonymize(df, engine="duckdb", driver_tuples=100, **asked)


def test_mdav_on_spark_is_polars_mdav_on_the_same_blocks(
    spark: Any, adult_rows: pl.DataFrame, adult_sdf: Any, adult_hierarchies: dict, tmp_path: Path, monkeypatch: Any
) -> None:
    """block_size=1,000 cuts Adult's first 3,000 rows into 5 blocks, with all three cut rules (below, at most, half
    by row order) on both roads: the cuts of all of Adult at block_size=10,000, at a tenth of the MDAV work."""
    rules: dict[str, list[str]] = {"polars": [], "spark": []}

    def spy(road: str) -> Any:
        def recorded(values: np.ndarray, counts: np.ndarray, k: int) -> tuple[Any, str]:
            median, rule = cut_rule(values, counts, k)
            rules[road].append(rule)
            return median, rule

        return recorded

    monkeypatch.setattr(mdav_module, "cut_rule", spy("polars"))
    monkeypatch.setattr(spark_mdav, "cut_rule", spy("spark"))
    kw: dict[str, Any] = {
        "hierarchies": adult_hierarchies,
        "k": 5,
        "method": "mdav",
        "publish": "aggregate",
        "block_size": 1_000,
        "insensitive": "rid",
    }
    polars = pa.anonymize(adult_rows.head(3_000), **kw)
    rows = polars.collect()
    on_spark = pa.anonymize(adult_sdf.filter("rid < 3000"), engine="spark", **kw)
    out = tmp_path / "mdav.parquet"
    on_spark.sink_parquet(out)  # Spark's writer, verified by Spark's group-by of the written rows
    assert pl.read_parquet(out / "*.parquet").equals(rows) and rows.height == 3_000  # in input order
    assert on_spark.report["details"]["n_blocks"] == polars.report["details"]["n_blocks"] == 5
    assert sorted(rules["polars"]) == sorted(rules["spark"]) == ["half", "le", "le", "lt"]
    equal(on_spark.report, polars.report, ignore=VARYING)
    assert on_spark.report["min_class_size"] == polars.report["min_class_size"] >= 5


def test_mdav_on_spark_refuses_what_it_does_not_do(
    spark: Any, adult_sdf: Any, adult_rows: pl.DataFrame, adult_hierarchies: dict
) -> None:
    kw: dict[str, Any] = {"hierarchies": adult_hierarchies, "k": 5, "method": "mdav", "insensitive": "rid"}
    with pytest.raises(
        InvalidParameterError, match=r"'mdav' on engine 'spark': publish='permute' draws one random permutation"
    ):
        pa.anonymize(adult_sdf, engine="spark", publish="permute", **kw)
    with pytest.raises(InvalidParameterError, match=r"distance='ahmad_dey' is fitted on co-occurrences"):
        pa.anonymize(adult_sdf, engine="spark", publish="aggregate", distance="ahmad_dey", **kw)
    with pytest.raises(InvalidParameterError, match=r"method 'mdav' works on row records, which engine 'duckdb'"):
        pa.anonymize(adult_rows.head(50), engine="duckdb", **kw)


def test_the_median_cut_rule_is_the_sorted_half_it_replaced() -> None:
    """:func:`cut_rule` (via ``_median_cut``) against the cut it replaced: a stable argsort, the median at n // 2."""

    def reference(values: np.ndarray, k: int) -> np.ndarray:
        n = len(values)
        order = np.argsort(values, kind="stable")
        median = values[order[n // 2]]
        smallest = max(k, n // 4)
        for left in (values < median, values <= median):
            if smallest <= int(left.sum()) <= n - smallest:
                return left
        left = np.zeros(n, dtype=bool)
        left[order[: n // 2]] = True
        return left

    rng = np.random.default_rng(0)
    for trial in range(300):
        n, k = int(rng.integers(4, 60)), int(rng.integers(1, 4))
        values = rng.integers(0, int(rng.integers(1, 6)), n).astype(np.float64)
        assert np.array_equal(_median_cut(values, k), reference(values, k)), trial

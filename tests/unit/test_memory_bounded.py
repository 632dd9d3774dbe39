"""The Polars road never caches its rows in memory to share them between queries.

``pl.collect_all`` shares the common input of its queries by default (a CACHE node in the
plan), and the streaming engine then buffers rows of it: the 15M-row demo's aggregation pass
peaked at 1.9 GB instead of 0.7 GB. Every collect of several queries over the rows goes
through :func:`polars_anon._memory.collect_apart`; this test reads the plans of every such
collect over the rows in a whole run (aggregation, verification of the written file) and finds no CACHE.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_anon as pa
from polars_anon._memory import collect_apart

N = 400


def test_collect_apart_plans_share_nothing() -> None:
    lf = pl.LazyFrame({"a": [1, 2, 2], "b": ["x", "y", "y"]}).with_columns(pl.col("a") * 2)
    queries = [lf.group_by("a").len(), lf.select(pl.col("b").n_unique())]
    assert "CACHE[" in pl.explain_all(queries)  # what plain collect_all would run
    assert "CACHE[" not in pl.explain_all(queries, optimizations=pl.QueryOptFlags(comm_subplan_elim=False))
    assert [f.height for f in collect_apart(queries)] == [2, 1]


def test_no_shared_cache_in_a_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run with an undeclared column and a sensitive attribute of many values (several queries a collect)."""
    seen: list[tuple[int, str]] = []
    collect_all = pl.collect_all

    def spy(queries: Any, **kwargs: Any) -> Any:
        queries = list(queries)
        plan = pl.explain_all(queries, optimizations=kwargs.get("optimizations", pl.QueryOptFlags()))
        seen.append((len(queries), plan))
        return collect_all(queries, **kwargs)

    monkeypatch.setattr(pl, "collect_all", spy)
    df = pl.DataFrame({
        "sex": ["F", "M"] * (N // 2),
        "age": [30 + i % 10 for i in range(N)],
        "diagnosis": [f"d{i % 80:02d}" for i in range(N)],  # 80 values (over WIDE): counted as (tuple, value) frames
        "note": [["a", "b", "c"][i % 3] for i in range(N)],  # undeclared: its distinct values are counted
    })  # fmt: skip
    h = {"sex": pa.Hierarchy.suppression(["F", "M"]), "age": pa.Hierarchy.intervals(range(30, 40), [5, 10])}
    df.write_parquet(tmp_path / "in.parquet")
    result = pa.anonymize(pl.scan_parquet(tmp_path / "in.parquet"), hierarchies=h, k=5, sensitive="diagnosis", privacy=[pa.LDiversity("diagnosis", l=2)])
    result.sink_parquet(tmp_path / "out.parquet")
    assert pl.read_parquet(tmp_path / "out.parquet").height == N
    over_rows = [plan for n, plan in seen if n > 1 and "Parquet SCAN" in plan]  # not the metrics over the aggregates
    assert len(over_rows) >= 2, "the run should collect several queries over the rows at once (aggregation, verification)"
    assert not [plan for plan in over_rows if "CACHE[" in plan]

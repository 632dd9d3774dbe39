"""The Polars road's passes over the rows hold their groups, not their rows (polars_anon._passes).

``pl.collect_all`` shares the common input of its queries by default (a CACHE node in the
plan), and the streaming engine then buffers rows of it: the 15M-row demo's aggregation pass
peaked at 1.9 GB instead of 0.7 GB. Every collect of several queries over the rows goes
through :func:`polars_anon._passes.collect_apart`; this test reads the plans of every such
collect over the rows in a whole run (aggregation, verification of the written file) and finds no CACHE.
Group-bys over many rows run in passes over shares of the tuples: the same groups, the same bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_anon as pa
from polars_anon._passes import PASS_ROWS, collect_apart, collect_by_tuples

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
    df = pl.DataFrame(
        {
            "sex": ["F", "M"] * (N // 2),
            "age": [30 + i % 10 for i in range(N)],
            "diagnosis": [
                f"d{i % 80:02d}" for i in range(N)
            ],  # 80 values (over WIDE): counted as (tuple, value) frames
            "note": [["a", "b", "c"][i % 3] for i in range(N)],  # undeclared: its distinct values are counted
        }
    )
    h = {"sex": pa.Hierarchy.suppression(["F", "M"]), "age": pa.Hierarchy.intervals(range(30, 40), [5, 10])}
    df.write_parquet(tmp_path / "in.parquet")
    result = pa.anonymize(
        pl.scan_parquet(tmp_path / "in.parquet"),
        hierarchies=h,
        k=5,
        sensitive="diagnosis",
        privacy=[pa.LDiversity("diagnosis", l=2)],
    )
    result.sink_parquet(tmp_path / "out.parquet")
    assert pl.read_parquet(tmp_path / "out.parquet").height == N
    over_rows = [plan for n, plan in seen if n > 1 and "Parquet SCAN" in plan]  # not the metrics over the aggregates
    assert len(over_rows) >= 1, (
        "the run should collect several queries over the rows at once (the verification; the aggregation is one "
        "query per sensitive attribute a model reads, here one)"
    )
    assert not [plan for plan in over_rows if "CACHE[" in plan]


@settings(max_examples=40, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.sampled_from(["a", "b", None]), st.integers(0, 4), st.sampled_from(["x", "y", "z"])),
        min_size=1,
        max_size=60,
    ),
    rows_per_pass=st.integers(1, 70),
)
def test_passes_by_tuples_give_the_one_pass_groups(rows: list[tuple[str | None, int, str]], rows_per_pass: int) -> None:
    """Group-bys run over shares of the tuples (1 to 60 passes) stack into the one-pass group-bys (brute force)."""
    lf = pl.LazyFrame(rows, schema={"q": pl.String, "r": pl.Int64, "s": pl.String}, orient="row")

    def queries(part: pl.LazyFrame) -> list[pl.LazyFrame]:
        return [part.group_by("q", "r").len(), part.group_by("q", "r", "s").agg(pl.col("s").len().alias("n"))]

    for got, want in zip(
        collect_by_tuples(lf, ["q", "r"], queries, rows_per_pass=rows_per_pass), collect_apart(queries(lf))
    ):
        assert_frame_equal(got, want, check_row_order=False)


def test_a_run_in_passes_writes_the_same_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The aggregation and the verification in many passes (40 rows a pass): the same output file, byte for byte."""
    from polars_anon.demo import demo_hierarchy_specs, voter_register
    from polars_anon.job import build_hierarchies

    register = voter_register(2_000, seed=3)
    lf = register.lazy()
    h = build_hierarchies(lf, demo_hierarchy_specs(), tmp_path)
    kwargs: dict[str, Any] = {
        "hierarchies": h,
        "k": 3,
        "drop": ["name"],
        "insensitive": "voter_id",
        "sensitive": "party",
        "privacy": [pa.LDiversity("party", l=2)],
    }
    written = []
    for rows_per_pass in (PASS_ROWS, 40):
        monkeypatch.setitem(collect_by_tuples.__kwdefaults__, "rows_per_pass", rows_per_pass)
        path = tmp_path / f"out_{rows_per_pass}.parquet"
        report = pa.anonymize(lf, method="greedy", **kwargs).sink_parquet(path, report=False)
        written.append((path.read_bytes(), report["n_classes"], report["min_class_size"]))
    assert written[0] == written[1]


@pytest.mark.parametrize("read", ["sink_parquet", "collect"])
def test_the_planning_memory_is_returned_before_the_table_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, read: str
) -> None:
    """glibc keeps the pages the planning freed (the method's and the report's arrays) resident unless trimmed; the
    published table's read and write is the run's peak, so the heap is trimmed when it starts (pipeline.result), not
    only where a phase ends: the 3M register's fulldomain job peaked 443-452 MiB against 457-485 without it."""
    import polars_anon.pipeline.result as result

    events: list[str] = []
    monkeypatch.setattr(result, "release_freed_memory", lambda: events.append("trim") or True, raising=False)
    sink = result.POLARS.write
    monkeypatch.setattr(
        type(result.POLARS), "write", lambda self, table, path: (events.append("write"), sink(table, path))[1]
    )
    df = pl.DataFrame({"sex": ["F", "M"] * (N // 2), "age": [30 + i % 10 for i in range(N)]})
    h = {"sex": pa.Hierarchy.suppression(["F", "M"]), "age": pa.Hierarchy.intervals(range(30, 40), [5, 10])}
    anonymized = pa.anonymize(df.lazy(), hierarchies=h, k=2)
    assert events == []  # planning alone reads no published row
    if read == "collect":
        assert anonymized.collect().height == N
        assert events == ["trim"]
    else:
        anonymized.sink_parquet(tmp_path / "out.parquet")
        assert events == ["trim", "write"]

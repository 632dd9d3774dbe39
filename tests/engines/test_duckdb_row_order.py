"""DuckDB publishes the rows in input order (DESIGN invariant 3) on an input it reads in parallel: the published
query's ``ORDER BY __anon_rowid`` (engines/duckdb.py, ``join_map``) is what keeps it (mend51, ci4's doubt: the
driver road's tests were too small for DuckDB to reorder; only the planner road's register test noticed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

import polars_anon as pa


def test_a_parquet_read_in_parallel_is_published_in_input_order(tmp_path: Path) -> None:
    """150,000 rows in 15 row groups, the driver's map joined back: without the ORDER BY, DuckDB's threads
    published the row groups interleaved (50,000 rows were enough)."""
    n = 150_000
    rng = np.random.default_rng(0)
    path = tmp_path / "rows.parquet"
    pl.DataFrame({"id": np.arange(n), "g": rng.choice(["a", "b", "c", "d"], n)}).write_parquet(
        path, row_group_size=10_000
    )
    h = {"g": pa.Hierarchy.suppression(["a", "b", "c", "d"])}
    out = pa.anonymize(path, engine="duckdb", qids=["g"], hierarchies=h, k=2, insensitive=["id"]).collect()
    assert out["id"].to_list() == list(range(n))

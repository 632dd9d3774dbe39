"""benchmarks/floor_bench.py: the hand-written floor writes the table the job writes (so the ratio compares like
with like), on a small register."""

from __future__ import annotations

from pathlib import Path

import polars as pl
from polars.testing import assert_frame_equal

from polars_anon.demo import write_voter_register
from tests.benchmarks import script


def test_the_floor_writes_the_jobs_table(tmp_path: Path) -> None:
    bench = script("floor_bench")
    data = write_voter_register(tmp_path / "register.parquet", 20_000, seed=0)
    job = bench.run_job(data, tmp_path / "job.parquet")
    floor = bench.run_floor(data, tmp_path / "floor.parquet", job["levels"])
    published = pl.read_parquet(tmp_path / "job.parquet")
    assert published.height == 20_000, "the job suppressed rows: the floor would not be the same table"
    assert_frame_equal(pl.read_parquet(tmp_path / "floor.parquet"), published)
    assert floor["smallest"] >= 10 and floor["classes"] == published.select(bench.QIDS).n_unique()

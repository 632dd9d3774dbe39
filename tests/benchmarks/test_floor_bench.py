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


def test_the_phases_cover_the_job_and_are_put_back(tmp_path: Path) -> None:
    """benchmarks/floor_phases.py: the road's main phases are timed, the top-level ones (disjoint) add up to most of
    the job's CPU and not more, each with the process's minor page faults in it (no more than the job's), and every
    wrapped function is the original again afterwards."""
    script("floor_bench")  # the phases script reads the job's keys from it
    phases = script("floor_phases")
    import polars_anon.job
    import polars_anon.pipeline.road

    before = (polars_anon.job.count_tuples, polars_anon.pipeline.road.run_method)
    data = write_voter_register(tmp_path / "register.parquet", 20_000, seed=0)
    totals: dict[str, tuple[float, float, int]] = {}
    cpu, wall, faults = phases.time_job(data, tmp_path / "job.parquet", totals)
    assert (polars_anon.job.count_tuples, polars_anon.pipeline.road.run_method) == before
    labels = {label for _, _, label in phases.PHASES}
    assert set(totals) <= labels and pl.read_parquet(tmp_path / "job.parquet").height == 20_000
    for word in ("tuple pass", "the method", "sink_parquet", "independent check", "plan_facts"):
        assert any(word in label for label in totals), word
    top = [v for label, v in totals.items() if not label.startswith(" ")]
    assert 0.3 * cpu <= sum(c for c, _, _ in top) <= cpu * 1.05 + 0.05
    assert sum(w for _, w, _ in top) <= wall * 1.05 + 0.05  # wall seconds too: disjoint, within the job's
    assert 0 < sum(f for _, _, f in top) <= faults  # the first touches of fresh memory: counted, disjoint

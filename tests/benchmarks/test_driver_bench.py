"""Smoke test of benchmarks/driver_bench.py: its drawn aggregates follow the demo generator, and its driver run is
the Polars road's method on the same aggregates. The full figures are in benchmarks/results/driver.md."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polars_anon as pa
from polars_anon.demo import DEMO_QIDS, _zips, voter_register
from polars_anon.job import build_hierarchies
from tests.benchmarks import script


def test_zips_are_the_demo_generator_s() -> None:
    codes, weights = script("driver_bench").zip_codes(1500)
    demo_codes, demo_weights = _zips(0)
    assert codes.tolist() == demo_codes.tolist() and np.array_equal(weights, demo_weights)
    assert len(set(script("driver_bench").zip_codes(40_000)[0].tolist())) == 40_000


def test_drawn_aggregates_count_like_a_generated_register() -> None:
    bench = script("driver_bench")
    a = bench.draw_aggregates(50_000, 1500)
    assert int(a["size"].sum()) == 50_000 and a.select(DEMO_QIDS).is_unique().all()
    generated = voter_register(50_000, seed=3).select(DEMO_QIDS).unique().height  # real rows, another seed
    assert a.height == pytest.approx(generated, rel=0.01)
    assert a.height == pytest.approx(bench.expected_tuples(50_000, 1500), rel=0.01)
    assert bench.expected_tuples(50_000, 1500) == pytest.approx(script("scaling_bench").expected_tuples(50_000))


@pytest.mark.parametrize("method", ["fulldomain", "mondrian"])
def test_the_driver_run_is_the_polars_road_s_method(method: str, tmp_path: Path) -> None:
    """The aggregates of real generated rows, through drive(): the classes and suppression pa.anonymize reports."""
    rows = voter_register(20_000)
    path = tmp_path / "aggregates.parquet"
    rows.group_by(DEMO_QIDS).agg(pl.len().cast(pl.UInt32).alias("size")).sort(DEMO_QIDS).write_parquet(path)
    got = script("driver_bench").drive(path, method)
    hierarchies = build_hierarchies(rows.lazy(), script("driver_bench").demo_hierarchy_specs())
    result = pa.anonymize(rows.select(DEMO_QIDS), hierarchies=hierarchies, k=10, method=method)
    result.collect()
    assert (got["classes"], got["suppressed"]) == (result.report["n_classes"], result.report["suppressed"])
    assert got["peak_mb"] >= got["received_mb"] > 0

"""The arithmetic of benchmarks/cluster_plan.py's plan, by hand (its Spark measurement runs in the script only)."""

from __future__ import annotations

import pytest

from tests.benchmarks import script


def test_plan_scales_the_measured_figures() -> None:
    bench = script("cluster_plan")
    f = {"input_b_row": 8.0, "group_b_record": 16.0, "join_b_row": 20.0, "output_b_row": 2.0, "core_s_per_m": 5.0}
    rows = 200_000_000  # 1.6e9 bytes of input: 12 splits of 128 MiB (11.9 rounded up)
    p = bench.plan(f, rows, 1500, cores=40)
    tuples, per_task = (
        script("driver_bench").expected_tuples(rows, 1500),
        script("driver_bench").expected_tuples(rows // 12, 1500),
    )
    assert (p["tasks"], p["input_gb"], p["output_gb"]) == (12, 1.6, 0.4)
    assert p["tuples"] == pytest.approx(tuples) and p["group_shuffle_gb"] == pytest.approx(12 * per_task * 16 / 1e9)
    assert p["join"] == "shuffle" and p["join_gb"] == pytest.approx((rows + tuples) * 20 / 1e9)  # 2.57M tuples: over 2M
    assert p["compute_s"] == pytest.approx(5.0 * 200 / 12)  # 12 input splits keep 12 of the 40 cores busy
    small = bench.plan(f, 2_000_000, 1500, cores=40)  # 1 split; about 0.8M tuples: broadcast to each of 10 executors
    assert small["join"] == "broadcast" and small["join_gb"] == pytest.approx(small["tuples"] * 20 * 10 / 1e9)

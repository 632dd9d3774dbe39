"""Smoke test of benchmarks/call_overhead.py: a few calls, the parts within the total, the road left as it was."""

from __future__ import annotations

import polars_anon.pipeline.road as road
import polars_anon.report.metrics as report_metrics
from tests.benchmarks import script


def test_call_overhead_parts_add_up_and_the_road_is_restored() -> None:
    before = (road.method_advice, road.aggregate, report_metrics.evaluate_both)
    figures = script("call_overhead").measure(rows=12, calls=1)
    assert (road.method_advice, road.aggregate, report_metrics.evaluate_both) == before
    parts = {k: v for k, v in figures.items() if k != "total"}
    assert set(parts) == {"report metrics (evaluate_both)", "method advice (other candidates)", "aggregation pass"}
    assert all(v > 0 for v in parts.values()) and sum(parts.values()) <= figures["total"]

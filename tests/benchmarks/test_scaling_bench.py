"""Smoke test of benchmarks/scaling_bench.py: its --quick mode (20,000 rows, the Polars engine) end to end through
the CLI, and the arithmetic of its generation estimate. The full runs' figures are in benchmarks/results/scaling.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from polars_anon.demo import DEMO_QIDS, voter_register, write_rows
from tests.benchmarks import script


@pytest.mark.skipif(
    not Path("/usr/bin/time").exists(), reason="the benchmark measures runs with /usr/bin/time -v (GNU time)"
)
def test_scaling_quick(tmp_path: Path) -> None:
    bench = script("scaling_bench")
    [r] = bench.main(["--quick", "--out", str(tmp_path)])
    n = bench.QUICK_ROWS
    tuples = voter_register(n).select(DEMO_QIDS).unique().height  # the register in memory: one chunk of the demo's
    size = write_rows(tmp_path / "again.parquet", n).stat().st_size  # same rows and seed, same bytes
    assert (r["engine"], r["rows"], r["tuples"], r["classes"], r["input_bytes"]) == ("polars", n, tuples, tuples, size)
    assert 0 < r["output_bytes"] < size  # names dropped: smaller than the input
    table = (tmp_path / "scaling.md").read_text()
    assert f"| {n:,} | fulldomain | polars | {r['wall_s']} | {r['wall_s'] / (n / 1e6):.1f} |" in table
    assert f"| {tuples:,} | {n:,} | {size / 2**20:.1f} | {size / n:.2f} |" in table
    assert "## Notes" in table and "3,807,000 possible qid tuples" in table  # 1,500 zips x 3 x 9 x 94 years


def test_estimate_extrapolates_the_first_chunks(tmp_path: Path) -> None:
    bench = script("scaling_bench")
    e = bench.estimate(tmp_path, 60_000, sample=20_000)
    size = write_rows(tmp_path / "first.parquet", 20_000).stat().st_size  # the register's first 20,000 rows
    assert (e["sample"], e["bytes"], e["expected_bytes"]) == (20_000, size, 3 * size)
    assert e["expected_seconds"] == pytest.approx(3 * e["seconds"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["first.parquet"]  # the sample file was removed
    assert "the 60,000-row register should take about" in bench.estimate_text(e)


def test_expected_tuples_matches_generated_registers() -> None:
    """The formula's count against distinct tuples of generated registers (one and three chunks' worth of seeds)."""
    bench = script("scaling_bench")
    for rows, seed in ((20_000, 0), (50_000, 3)):
        measured = voter_register(rows, seed).select(DEMO_QIDS).unique().height
        assert bench.expected_tuples(rows, seed) == pytest.approx(measured, rel=0.01)
    assert bench.expected_tuples(10**12) == pytest.approx(bench.UNIVERSE, rel=1e-3)  # every possible tuple seen

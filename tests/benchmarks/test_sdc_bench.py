"""Smoke test of benchmarks/sdc_bench.py: its --quick run (20,000 rows) writes the table, and every local
suppression it timed reached its k (re-checked with wildcard frequencies)."""

from __future__ import annotations

from pathlib import Path

from tests.benchmarks import script


def test_sdc_bench_quick(tmp_path: Path) -> None:
    bench = script("sdc_bench")
    [fig] = bench.main(["--quick", "--out", str(tmp_path)])
    assert fig["rows"] == bench.QUICK_ROWS and fig["supp_k3_min_fk"] >= 3 and fig["supp_k5_min_fk"] >= 5
    assert 0 < fig["supp_k3_cells"] <= fig["supp_k5_cells"] < 5 * bench.QUICK_ROWS
    reg = bench.register(1000)
    assert reg.columns == [*bench.KEYS, "w"] and 0 < reg["edu"].null_count() < 60
    assert f"| {bench.QUICK_ROWS:,} |" in (tmp_path / "sdc.md").read_text()

"""CPU seconds of the sdc moments on a generated table (3M rows by default): ``correlations`` of 3 and 6 columns,
``add_noise`` (additive and correlated, collected) and ``il1s`` of 3 columns, each the best of `--reps` runs.

Run from the worktree root: ``PYTHONPATH=. nice -n 10 python benchmarks/moments_bench.py [--rows N]`` (without
PYTHONPATH the installed package runs, named in the first line). Prints one line a call with the load
(``/proc/loadavg``); the figures in ``benchmarks/results/moments.md`` came from it.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

import polars_anon
from polars_anon.sdc import add_noise, correlations, il1s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=3_000_000)
    parser.add_argument("--reps", type=int, default=2)
    args = parser.parse_args()
    print(f"package: {Path(polars_anon.__file__).parent}", flush=True)
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "moments.parquet"
        a, b, c = (rng.normal(size=args.rows) for _ in range(3))
        extra = {f"x{i}": a * (i + 2) + b for i in range(3)}
        pl.DataFrame({"a": a, "b": b, "c": c, **extra}).write_parquet(path)
        lf = pl.scan_parquet(path)
        c3, c6 = ["a", "b", "c"], ["a", "b", "c", "x0", "x1", "x2"]
        shifted = lf.with_columns(pl.col("a") + 1)
        jobs = {
            "correlations(3)": lambda: correlations(lf, c3),
            "correlations(6)": lambda: correlations(lf, c6),
            "add_noise additive(3) + collect": lambda: add_noise(lf, c3, 10, seed=1).select(pl.sum("a")).collect(),
            "add_noise correlated(3) + collect": lambda: (
                add_noise(lf, c3, 10, "correlated", 1).select(pl.sum("a")).collect()
            ),
            "il1s(3)": lambda: il1s(lf, shifted, c3),
        }
        for name, job in jobs.items():
            best = float("inf")
            for _ in range(args.reps):
                start = time.process_time()
                job()
                best = min(best, time.process_time() - start)
            load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
            print(f"{name}: {best:.2f} s CPU ({args.rows:,} rows; load {load})", flush=True)


if __name__ == "__main__":
    main()

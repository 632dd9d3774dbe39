"""Time explore over the issue's grid on the demo voter register, and the HTML report of one job.

Generates the register with :func:`polars_anon.demo.write_voter_register` (seed 0)
into a temporary folder, writes the demo job file, and runs

    polars-anon explore job.toml --k 2,5,10,20,50,100 --methods fulldomain,greedy,mondrian

under ``/usr/bin/time -v`` (wall time, CPU time, peak memory), then one
``polars-anon anonymize job.toml`` (fulldomain, k = 10) to time the report page.
Each figure is printed with the load average and written to
benchmarks/results/explore.md. The target is explore under 60 s at 1,000,000 rows.

    python benchmarks/explore_bench.py [--rows 1000000]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

from polars_anon.demo import write_voter_register

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parents[1]
CLI = [
    sys.executable,
    "-m",
    "polars_anon.cli",
]  # this checkout's code (PYTHONPATH below), not the installed entry point
JOB = """input = "voters.parquet"
output = "out/voters_k10.parquet"
k = 10
drop = ["voter_id", "name"]
sensitive = "party"
[qids.zip]
hierarchy = { mask = 5 }
[qids.gender]
hierarchy = "suppress"
[qids.race]
hierarchy = "suppress"
[qids.birth_year]
hierarchy = { intervals = [5, 10, 20] }
"""


def timed(cmd: list[str], cwd: Path) -> dict[str, float]:
    """Wall and CPU seconds and peak RSS of one command (``/usr/bin/time -v``)."""
    load = os.getloadavg()[0]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(["/usr/bin/time", "-v", *cmd], cwd=cwd, capture_output=True, text=True, check=True, env=env)
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", proc.stderr)
    h, m, s = (float(g) if g else 0.0 for g in wall.groups())  # type: ignore[union-attr]
    user = float(re.search(r"User time \(seconds\): ([\d.]+)", proc.stderr).group(1))  # type: ignore[union-attr]
    system = float(re.search(r"System time \(seconds\): ([\d.]+)", proc.stderr).group(1))  # type: ignore[union-attr]
    peak = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr).group(1))  # type: ignore[union-attr]
    return {
        "wall_s": round(h * 3600 + m * 60 + s, 1),
        "cpu_s": round(user + system, 1),
        "peak_mb": peak // 1024,
        "load_before": round(load, 2),
        "load_after": round(os.getloadavg()[0], 2),
    }


def _front(r: dict) -> str:
    return (
        " / ".join(
            name for name, key in (("highest", "front_highest_risk"), ("at risk", "front_records_at_risk")) if r[key]
        )
        or "-"
    )


def _row(command: str, t: dict[str, float]) -> str:
    return f"| {command} | {t['wall_s']} | {t['cpu_s']} | {t['peak_mb']} | {t['load_before']} / {t['load_after']} |"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        start = time.perf_counter()
        write_voter_register(folder / "voters.parquet", args.rows, seed=0)
        generated = time.perf_counter() - start
        (folder / "job.toml").write_text(JOB)
        grid = ["--k", "2,5,10,20,50,100", "--methods", "fulldomain,greedy,mondrian"]
        explore = timed([*CLI, "explore", "job.toml", *grid, "--quiet"], folder)
        table = pl.read_csv(folder / "out" / "voters_k10.explore.csv")
        job = timed([*CLI, "anonymize", "job.toml", "--quiet"], folder)
        report = json.loads((folder / "out" / "voters_k10.report.json").read_text())
        page_kb = (folder / "out" / "voters_k10.report.html").stat().st_size // 1024
    print(f"generated {args.rows:,} rows in {generated:.1f} s")
    print(f"explore (18 configurations): {explore}")
    print(
        f"anonymize + report page: {job}; anonymize {report['seconds']} s, write "
        f"{report['write_seconds']} s, page {page_kb} KB"
    )
    lines = [
        f"# explore and the report page on the demo register ({args.rows:,} rows; `python "
        "benchmarks/explore_bench.py`)\n",
        "| command | wall (s) | CPU (s) | peak RSS (MB) | load avg before / after |",
        "|---|---|---|---|---|",
        _row(f"`polars-anon explore job.toml {' '.join(grid)}`", explore),
        _row(f"`polars-anon anonymize job.toml` (fulldomain, k = 10, with its {page_kb} KB HTML page)", job),
        (
            "\nThe explore table (loss: average cell loss; risks from the published class sizes; records "
            "at risk: in classes "
            "< 100 rows; front: on the Pareto front of highest risk / records at risk):\n"
        ),
        "| method | k | loss | suppressed | classes | smallest class | highest risk | records at "
        "risk | front | method s |",
        "|---|---|---|---|---|---|---|---|---|---|",
        *(
            f"| {r['method']} | {r['k']} | {r['loss']:.4f} | {r['suppressed']} | {r['n_classes']:,} | "
            f"{r['min_class_size']:,} | "
            f"{r['highest_risk']:.4g} | {r['records_at_risk']:.2%} | {_front(r)} | {r['seconds']:.1f} |"
            for r in table.iter_rows(named=True)
        ),
    ]
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / "explore.md"
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

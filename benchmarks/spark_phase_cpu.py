"""CPU seconds of Spark's write and verify phases, apart from the load (issue 32).

On a machine shared with other work the report's phases (wall seconds) grow with the load; the CPU seconds the
job's processes spend in a phase grow much less. This script runs the engines benchmark's greedy job on the demo
register (k = 10) through the CLI's ``main`` in this process, on a Spark ``local[2]`` session it starts, and samples
the CPU seconds (user + system) of this process and its JVM child around ``SparkEngine.write`` (the write phase:
planning, the map's broadcast, the join, Spark's Parquet writer) and ``Anonymized.verify`` (the verify phase: the
written folder grouped by Spark, every guarantee checked on the driver).

    python benchmarks/spark_phase_cpu.py --rows 1000000 [--code DIR] [--label after]

``--code DIR`` runs another checkout's package (e.g. the commit before a change, exported with ``git archive``).
Each run appends a row to ``benchmarks/results/spark_phase_cpu.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "spark_phase_cpu.md"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--data", type=Path, default=None, help="a register already written (default: generate one)")
    ap.add_argument("--code", type=Path, default=HERE.parent, help="the checkout whose package runs")
    ap.add_argument("--label", default="after")
    ap.add_argument("--java-options", default=None, help="spark.driver.extraJavaOptions of the session")
    args = ap.parse_args()
    sys.path.insert(0, str(args.code.resolve()))
    sys.path.insert(1, str(HERE))
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from engines_bench import _job
    from spark_driver_bench import _tree

    import polars_anon.engines.spark as spark_engine
    from polars_anon.cli import main as cli
    from polars_anon.demo import write_voter_register
    from polars_anon.pipeline.result import Anonymized

    def cpu() -> float:
        return sum(seconds for _, seconds, _ in _tree(os.getpid()).values())

    spent: dict[str, list[float]] = {"write": [0.0, 0.0], "verify": [0.0, 0.0]}

    def timed(owner: Any, name: str, phase: str) -> None:
        inner = getattr(owner, name)

        def run(*a: Any, **kw: Any) -> Any:
            c, t = cpu(), time.perf_counter()
            try:
                return inner(*a, **kw)
            finally:
                spent[phase][0] += cpu() - c
                spent[phase][1] += time.perf_counter() - t

        setattr(owner, name, run)

    timed(spark_engine.SparkEngine, "write", "write")
    timed(Anonymized, "verify", "verify")
    options = {"spark.driver.extraJavaOptions": args.java_options} if args.java_options else None
    spark = spark_engine.session("local[2]", options)
    with tempfile.TemporaryDirectory() as tmp:
        data = args.data or write_voter_register(Path(tmp) / f"voters_{args.rows}.parquet", args.rows)
        job = _job(Path(tmp), data, "greedy")
        os.chdir(tmp)
        load, start, start_cpu = os.getloadavg()[0], time.perf_counter(), cpu()
        code = cli(["anonymize", str(job), "-q", "--overwrite", "--engine", "spark"])
        wall, total = time.perf_counter() - start, cpu() - start_cpu
        report = json.loads((Path(tmp) / "out.report.json").read_text())
    spark.stop()
    assert code == 0, code
    row = (
        f"| {args.label} | {args.rows:,} | {report['n_input_classes']:,} | {wall:.1f} | {total:.1f} | "
        f"{spent['write'][0]:.2f} | {spent['verify'][0]:.2f} | "
        f"{100 * (spent['write'][0] + spent['verify'][0]) / total:.0f}% | "
        f"{spent['write'][1]:.1f} | {spent['verify'][1]:.1f} | {report['n_rows']:,} | {load:.1f} |"
    )
    print(row, flush=True)
    if not RESULTS.exists():
        RESULTS.write_text(
            "# CPU seconds of Spark's write and verify phases (benchmarks/spark_phase_cpu.py)\n\n"
            "The demo register's greedy job (k = 10) by the CLI's `main` on Spark `local[2]`, session start-up "
            "excluded. CPU = user + system seconds of the Python process and its JVM (driver and executors in one), "
            "sampled from /proc around `SparkEngine.write` (write) and `Anonymized.verify` (verify); total = the "
            "whole job. wall = seconds of each, inflated by the load (1-minute load average at start; 2 cores "
            "shared with other work).\n\n"
            "| code | rows | tuples | wall (s) | CPU (s) | write CPU (s) | verify CPU (s) | write + verify share "
            "of CPU | write wall (s) | verify wall (s) | published rows | load |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|\n"
        )
    with RESULTS.open("a") as f:
        f.write(row + "\n")


if __name__ == "__main__":
    main()

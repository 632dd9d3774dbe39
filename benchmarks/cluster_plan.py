"""A plan, with numbers, for a 200M-row register on a Spark cluster: measured per row here, scaled there.

Step 1 measures, on a generated register (default 1M rows) in Spark local mode, what each
phase of a job moves and costs, from Spark's own stage metrics (the UI's REST API): the qid
group-by's shuffle (bytes per shuffled aggregate row), the publishing join (broadcast, and a
forced shuffle join: bytes per row and per map tuple), the written bytes per row and the
executors' task time per million rows. Step 2 scales those figures to `--plan-rows` rows
(default 200M) for the demo's 1,500 zips (a state) and 40,000 zips (a nation), with the
driver's aggregates from the generator's expected tuple count (driver_bench.expected_tuples)
and the driver's measured peak (benchmarks/results/driver.md). Results:
benchmarks/results/cluster_plan.md.

    python benchmarks/cluster_plan.py [--rows 1000000] [--plan-rows 200000000] [--cores 40]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

import polars as pl

from polars_anon.demo import demo_hierarchy_specs, write_voter_register

sys.path.insert(0, str(Path(__file__).resolve().parent))
from driver_bench import expected_tuples
from sections import replace_section

RESULTS = Path(__file__).resolve().parent / "results"
TITLE = "A 200M-row register on a Spark cluster: the plan (benchmarks/cluster_plan.py)"
SPLIT = 128 * 2**20
"""Spark's default input split (spark.sql.files.maxPartitionBytes)."""
PORT = 4077


def _stages(spark: Any) -> list[dict[str, Any]]:
    app = spark.sparkContext.applicationId
    with urllib.request.urlopen(f"http://localhost:{PORT}/api/v1/applications/{app}/stages") as answer:
        return json.load(answer)


def _jobs(spark: Any) -> list[dict[str, Any]]:
    app = spark.sparkContext.applicationId
    with urllib.request.urlopen(f"http://localhost:{PORT}/api/v1/applications/{app}/jobs") as answer:
        return json.load(answer)


def measure(data: Path, folder: Path, shuffle_join: bool) -> dict[str, dict[str, float]]:
    """One fulldomain job on Spark local[2] with the UI's REST API on: per phase (named by the engine step that ran
    it), the stages' shuffle bytes and records, written bytes and executor run time (s)."""
    import polars_anon.engines.spark as engine_module
    from polars_anon import spark as pas
    from polars_anon.job import build_hierarchies

    config = {"spark.ui.enabled": "true", "spark.ui.port": str(PORT)}
    if shuffle_join:
        config["spark.sql.autoBroadcastJoinThreshold"] = "-1"
    spark = engine_module.session("local[2]", config)
    phases = {"_counts": "group-by", "distinct": "distinct", "write": "publish and write"}
    calls: dict[str, int] = {}
    originals = {name: getattr(engine_module.SparkEngine, name) for name in phases}

    def labelled(name: str) -> Any:
        def run(self: Any, *args: Any, **kwargs: Any) -> Any:
            calls[name] = calls.get(name, 0) + 1
            label = phases[name] if not (name == "_counts" and calls[name] > 1) else "verify group-by"
            self.spark.sparkContext.setJobDescription(label)
            try:
                return originals[name](self, *args, **kwargs)
            finally:
                self.spark.sparkContext.setJobDescription(None)

        return run

    broadcast = engine_module.BROADCAST_ROWS
    try:
        for name in phases:
            setattr(engine_module.SparkEngine, name, labelled(name))
        if shuffle_join:
            engine_module.BROADCAST_ROWS = 0
        hierarchies = build_hierarchies(pl.scan_parquet(data), demo_hierarchy_specs())
        result = pas.anonymize(
            spark.read.parquet(str(data)), hierarchies=hierarchies, k=10, drop=["name"], insensitive=["voter_id"]
        )
        out = folder / "out.parquet"
        shutil.rmtree(out, ignore_errors=True)
        result.sink_parquet(out, report=False)
        stage_phase = {s: j.get("description", "other") for j in _jobs(spark) for s in j["stageIds"]}
        totals: dict[str, dict[str, float]] = {}
        for s in _stages(spark):
            t = totals.setdefault(stage_phase.get(s["stageId"], "other"), {})
            for key in ("shuffleWriteBytes", "shuffleWriteRecords", "outputBytes", "outputRecords", "executorCpuTime"):
                t[key] = t.get(key, 0) + (s.get(key) or 0)
        totals["report"] = {"tuples": result.report["n_input_classes"], "map_rows": result.report["n_input_classes"]}
        return totals
    finally:
        for name, fn in originals.items():
            setattr(engine_module.SparkEngine, name, fn)
        engine_module.BROADCAST_ROWS = broadcast
        spark.stop()


def per_row(
    rows: int,
    tasks: int,
    data_bytes: int,
    broadcast: dict[str, dict[str, float]],
    shuffled: dict[str, dict[str, float]],
) -> dict[str, float]:
    """The per-row and per-record figures a plan scales."""
    group = broadcast["group-by"]
    write = broadcast["publish and write"]
    join = shuffled["publish and write"]
    tuples = broadcast["report"]["tuples"]
    cpu_s = sum(p.get("executorCpuTime", 0) for name, p in broadcast.items() if name != "report") / 1e9
    return {
        "input_b_row": data_bytes / rows,
        "group_b_record": group["shuffleWriteBytes"] / group["shuffleWriteRecords"],
        "group_records": group["shuffleWriteRecords"],
        "tasks": tasks,
        "join_b_row": join["shuffleWriteBytes"] / (rows + tuples),
        "output_b_row": write["outputBytes"] / rows,
        "core_s_per_m": cpu_s / (rows / 1e6),
    }


def plan(f: dict[str, float], rows: int, zips: int, cores: int, split: int = SPLIT) -> dict[str, float]:
    """The 200M-row figures for a register with `zips` zip codes, read in `split`-byte input splits, from the
    measured per-row figures `f`."""
    input_bytes = rows * f["input_b_row"]
    tasks = max(1, math.ceil(input_bytes / split))
    tuples = expected_tuples(rows, zips)
    per_task = expected_tuples(rows // tasks, zips)
    broadcast = tuples <= 2_000_000
    return {
        "zips": zips,
        "split_mb": split / 2**20,
        "input_gb": input_bytes / 1e9,
        "tasks": tasks,
        "tuples": tuples,
        "group_shuffle_gb": tasks * per_task * f["group_b_record"] / 1e9,
        "join": "broadcast" if broadcast else "shuffle",
        "join_gb": (tuples * f["join_b_row"] * cores / 4 / 1e9)
        if broadcast
        else (rows + tuples) * f["join_b_row"] / 1e9,
        "output_gb": rows * f["output_b_row"] / 1e9,
        "compute_s": f["core_s_per_m"] * rows / 1e6 / min(cores, tasks),
    }


def main(argv: list[str] | None = None) -> list[dict[str, float]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the register measured here")
    parser.add_argument("--plan-rows", type=int, default=200_000_000)
    parser.add_argument("--cores", type=int, default=40, help="executor cores of the planned cluster (default 10 x 4)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cluster_plan_") as tmp:
        data = write_voter_register(Path(tmp) / "voters.parquet", args.rows)
        load = os.getloadavg()[0]
        broadcast = measure(data, Path(tmp), shuffle_join=False)
        shuffled = measure(data, Path(tmp), shuffle_join=True)
        tasks = max(1, math.ceil(data.stat().st_size / SPLIT))
        figures = per_row(args.rows, tasks, data.stat().st_size, broadcast, shuffled)
    plans = [
        plan(figures, args.plan_rows, zips, args.cores, split)
        for zips in (1_500, 40_000)
        for split in (SPLIT, SPLIT // 4)
    ]
    print(figures, plans, sep="\n")
    args.out.mkdir(parents=True, exist_ok=True)
    command = "python benchmarks/cluster_plan.py " + " ".join(argv if argv is not None else sys.argv[1:])
    measured = "\n".join(
        [
            f"Command: `{command}` (Spark local[2], load {load:.2f} at the start).",
            "",
            "| figure | measured |",
            "|---|---|",
            f"| input Parquet | {figures['input_b_row']:.2f} B/row |",
            f"| qid group-by shuffle | {figures['group_b_record']:.1f} B per shuffled aggregate row "
            f"({figures['group_records']:,.0f} rows from {args.rows:,}) |",
            f"| shuffle join (map > broadcast limit) | {figures['join_b_row']:.1f} B per row and map tuple shuffled |",
            f"| written output | {figures['output_b_row']:.2f} B/row |",
            f"| executor CPU time | {figures['core_s_per_m']:.1f} core-s per million rows (every phase) |",
        ]
    )
    replace_section(
        args.out / "cluster_plan.md", TITLE, "Measured here", measured, ["Measured here", "The plan", "Notes"]
    )
    rows = [
        "| zips | input | split (maxPartitionBytes) | input splits (tasks) | distinct qid tuples | "
        "group-by shuffle | publish join | join moves | output | executor compute |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for p in plans:
        rows.append(
            f"| {p['zips']:,} | {p['input_gb']:.2f} GB | {p['split_mb']:.0f} MB | {p['tasks']} | "
            f"{p['tuples']:,.0f} | {p['group_shuffle_gb']:.2f} GB | {p['join']} | "
            f"{p['join_gb']:.2f} GB | {p['output_gb']:.2f} GB | {p['compute_s']:.0f} s on "
            f"{min(args.cores, p['tasks'])} cores |"
        )
    table = f"{args.plan_rows:,} rows, {args.cores} executor cores.\n\n" + "\n".join(rows)
    replace_section(args.out / "cluster_plan.md", TITLE, "The plan", table, ["Measured here", "The plan", "Notes"])
    replace_section(args.out / "cluster_plan.md", TITLE, "Notes", NOTES, ["Measured here", "The plan", "Notes"])
    return plans


NOTES = """How the plan is computed. input = rows x the measured Parquet bytes per row (the demo register's 7 columns;
a register with more columns scales every volume but the group-by's). input splits = input / split: the scan
stages (group-by, publish, verify) run one task per split, so a split count below the executor cores leaves cores
idle: at 128 MB a 1.5 GB register keeps 11 cores busy whatever the cluster, at 32 MB (`--conf
spark.sql.files.maxPartitionBytes=32m`, or a register written as more files) 44. group-by shuffle = tasks x
the expected distinct tuples of one split's rows x the measured bytes per shuffled aggregate row (Spark
aggregates within each task first, so the shuffle grows with the splits' tuples, not the rows). The driver receives
the distinct tuples (benchmarks/results/driver.md: 62 MB of Arrow and 1.3-1.6 GB of driver memory for the state's
2.57M tuples at 200M rows, 5.7-56 s of driver work; for the nation's 21M tuples 4.2 GB on arrival and 7.4-10.7 GB
at the method's peak, 7-16 min: beyond the default `driver_tuples` of 5M, where Mondrian runs as Spark rounds and
greedy's first round in Spark tasks). publish join: the map is broadcast when it has at most 2,000,000 tuples
(`BROADCAST_ROWS`), each executor receiving it; above, rows and map tuples are both shuffled (the measured bytes per
shuffled record). executor compute = the measured executor CPU per million rows (every phase of a fulldomain job:
group-by, distinct counts, publish and write, verify) x rows / min(cores, tasks); start-up, scheduling and the
network come on top (Spark's local start-up here: about 10 s).

The plan for 200 million rows. Executors: 10 of 4 cores and 8 GB (spark.executor.memory=6g plus overhead); each
task's hash aggregation holds one split's distinct tuples (a few million rows of four keys: well under 1 GB), and
nothing else is held per executor but Spark's shuffle buffers. Set spark.sql.files.maxPartitionBytes=32m (or
write the register as 40+ files) so the scans use all 40 cores, and spark.sql.shuffle.partitions=80. Driver:
spark.driver.memory=2g for the JVM (it collects the aggregates as Arrow: 62 MB for a state) and 2 GB for Python
(the method, the report); for a nation, keep the default driver_tuples and run Mondrian (engine rounds) or
raise driver_tuples to 25M with a 16 GB driver for greedy or fulldomain on the driver. What moves over the network:
the input (1.5 GB read once per scan: group-by, publish, verify), the group-by's partial aggregates (0.6 GB for a
state, 1.4 GB for a nation with 32 MB splits), the publish join (a broadcast of the map below 2M tuples, else a \
shuffle of about
4-5 GB: every row once), the output (0.45 GB written, read once more by the verification). Expected wall time:
about 52 s of executor CPU on 40 busy cores (187 s on the 11 cores 128 MB splits keep busy), plus start-up
and the shuffle: 2-4 minutes.
"""


if __name__ == "__main__":
    main()

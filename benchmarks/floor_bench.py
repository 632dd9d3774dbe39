"""The fulldomain job against the one-pass floor: how far the road is from reading, generalizing, counting and
writing the table once.

    python benchmarks/floor_bench.py [--rows 3000000 15000000] [--label after]

For each row count, a generated register (:func:`polars_anon.demo.write_voter_register`, seed 0;
written once to ``--data`` and reused; generation is not timed) and two timings, each in a fresh
process (the child times its own work, not the interpreter's start):

- ``job``: the demo's fulldomain job through the job road (:func:`polars_anon.job.run_job`, what the
  CLI runs): qids zip (mask 5), gender, race (suppress), birth_year (bands of 5, 10, 20), ``name``
  dropped, ``voter_id`` insensitive, ``party`` undeclared, k = 10, no HTML page; everything the road
  does (hierarchies from the data, aggregates, search, publish, verify the written file, report);
- ``floor``: one hand-written Polars query at the levels the job chose: scan -> generalize (string
  and integer expressions, no hierarchy) -> ``sink_parquet`` and the class counts (``group_by(qids).len()``)
  from the same scan (``collect_all`` of both: one read of the input).

Prints both times (wall and CPU: the machine is shared), the ratio, each child's peak resident memory
and the load; appends a row to benchmarks/results/floor.md.

    python benchmarks/floor_bench.py --rows 3000000 --base /tmp/base --rounds 2 [--bytecode]

alternates another checkout's job (``--base``, e.g. ``git archive <commit> | tar -x -C /tmp/base``), this
checkout's job and the floor, each a fresh process, and prints a table row a round (wall s / CPU s / peak
MiB, and each job over the floor); ``--bytecode`` lets the children keep ``.pyc`` files as an installed package
does (the machine sets ``PYTHONDONTWRITEBYTECODE=1``; the children get it otherwise). Where the CPU goes, phase
by phase: ``benchmarks/floor_phases.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
CODE = Path(os.environ.get("FLOOR_BENCH_CODE") or ROOT)
"""The checkout whose package a child imports: this one, or ``--base``'s (set for the child by the parent)."""
sys.path.insert(0, str(CODE))  # that checkout's package, not the installed one

RESULTS = ROOT / "benchmarks" / "results"
QIDS = ["zip", "gender", "race", "birth_year"]
WIDTHS = [5, 10, 20]  # the birth_year bands of the demo's hierarchy spec


def _job_keys(data: Path, out: Path) -> dict[str, Any]:
    from polars_anon.demo import demo_hierarchy_specs

    return {
        "input": str(data),
        "output": str(out),
        "k": 10,
        "method": "fulldomain",
        "drop": ["name"],
        "insensitive": ["voter_id"],
        "report_html": False,
        "qids": {q: {"hierarchy": s} for q, s in demo_hierarchy_specs().items()},
    }


def run_job(data: Path, out: Path) -> dict[str, Any]:
    """The child: the job, timed from its keys on (the keys, with the demo's hierarchy specs, are built before the
    clocks start, as the floor's levels are given to the floor: importing the demo module is no part of a job); its
    levels."""
    from polars_anon.job import Job
    from polars_anon.job import run_job as run

    keys = _job_keys(data, out)
    start, cpu = time.perf_counter(), time.process_time()
    report = run(Job.from_dict(keys))
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"seconds": seconds, "cpu": cpu, "levels": {q: report["generalization"][q]["level"] for q in QIDS}}


def generalized(levels: dict[str, int]) -> list[pl.Expr]:
    """The qids at fixed levels, as the demo's hierarchies label them (written by hand: the floor)."""
    zip_level, year = levels["zip"], levels["birth_year"]
    out = [pl.col("zip").str.slice(0, 5 - zip_level) + pl.lit("*" * zip_level) if zip_level else pl.col("zip")]
    out += [pl.lit("*").alias(q) if levels[q] else pl.col(q) for q in ("gender", "race")]
    if year == 0:
        out.append(pl.col("birth_year").cast(pl.String))
    elif year > len(WIDTHS):
        out.append(pl.lit("*").alias("birth_year"))
    else:
        lo = pl.col("birth_year") // WIDTHS[year - 1] * WIDTHS[year - 1]
        out.append(pl.format("{}-{}", lo, lo + WIDTHS[year - 1] - 1).alias("birth_year"))
    return out


def run_floor(data: Path, out: Path, levels: dict[str, int]) -> dict[str, Any]:
    """The child: the floor, timed (one read: the written table and the class counts from one scan)."""
    start, cpu = time.perf_counter(), time.process_time()
    lf = pl.scan_parquet(data).drop("name").with_columns(generalized(levels))
    sink = lf.sink_parquet(out, lazy=True)
    _, counts = pl.collect_all([sink, lf.group_by(QIDS).len()])
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"seconds": seconds, "cpu": cpu, "classes": counts.height, "smallest": int(counts["len"].min())}  # type: ignore[arg-type]


def _child(*args: str, code: Path | None = None, bytecode: bool = False) -> dict[str, Any]:
    env = dict(os.environ, FLOOR_BENCH_CODE=str(code or ROOT))
    if bytecode:  # keep .pyc files, as an installed package does (the first child writes them, untimed)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    proc = subprocess.run(
        [sys.executable, __file__, *args], capture_output=True, text=True, check=False, cwd=ROOT, env=env
    )  # a fresh process per timing
    if proc.returncode:
        raise SystemExit(f"child {args} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _commit() -> str:
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "polars_anon"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    return (head.stdout.strip() or "unknown") + ("+dirty" if dirty.stdout.strip() else "")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in ("job", "floor"):
        data, out = Path(sys.argv[2]), Path(sys.argv[3])
        figures = run_job(data, out) if sys.argv[1] == "job" else run_floor(data, out, json.loads(sys.argv[4]))
        figures["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024  # the child's whole life
        print(json.dumps(figures))
        return
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[3_000_000, 15_000_000])
    parser.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()), help="folder of the generated inputs")
    parser.add_argument("--label", default="", help="a word for the results row (e.g. before, after)")
    parser.add_argument("--commit", help="the commit to record (default: this checkout's HEAD)")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument(
        "--base",
        type=Path,
        help="another checkout (e.g. from git archive): alternate its job with "
        "this one's and the floor, --rounds times, and print one table row a round (no file written)",
    )
    parser.add_argument("--rounds", type=int, default=2, help="rounds of --base")
    parser.add_argument(
        "--bytecode",
        action="store_true",
        help="children keep .pyc files (PYTHONDONTWRITEBYTECODE "
        "unset), as an installed package; default: set, as on the CI machine",
    )
    args = parser.parse_args()
    from polars_anon.demo import write_voter_register

    if args.base is not None:
        for rows in args.rows:
            data = args.data / f"floor_register_{rows}.parquet"
            if not data.exists():
                write_voter_register(data, rows, seed=0)
            for r in range(1, args.rounds + 1):
                _alternate(data, rows, r, args.base, args.bytecode)
        return

    for rows in args.rows:
        data = args.data / f"floor_register_{rows}.parquet"
        if not data.exists():
            write_voter_register(data, rows, seed=0)
        with tempfile.TemporaryDirectory(prefix="floor_") as tmp:
            load_before = os.getloadavg()
            job = _child("job", str(data), str(Path(tmp) / "job.parquet"))
            floor = _child("floor", str(data), str(Path(tmp) / "floor.parquet"), json.dumps(job["levels"]))
            load_after = os.getloadavg()
        ratio = job["seconds"] / floor["seconds"]
        load = f"{load_before[0]:.1f}/{load_after[0]:.1f} (1-min, before/after)"
        print(
            f"{rows:,} rows: job {job['seconds']:.2f} s (CPU {job['cpu']:.1f} s, {job['peak_mib']} MiB), floor "
            f"{floor['seconds']:.2f} s (CPU {floor['cpu']:.1f} s, {floor['peak_mib']} MiB), ratio {ratio:.2f}x "
            f"(CPU {job['cpu'] / floor['cpu']:.2f}x); levels {job['levels']}; load {load}"
        )
        if not args.no_write:
            path = RESULTS / "floor.md"
            if not path.exists():
                path.write_text(
                    "# The fulldomain job against the one-pass floor (benchmarks/floor_bench.py)\n\n"
                    "| label | commit | rows | job s | floor s | ratio | levels (zip, gender, race, birth_year) | load "
                    "| peak MiB job / floor | CPU s job / floor |\n"
                    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
                )
            levels = ", ".join(str(job["levels"][q]) for q in QIDS)
            row = f"| {args.label} | {args.commit or _commit()} | {rows:,} | {job['seconds']:.2f}"
            row += f" | {floor['seconds']:.2f}"
            with path.open("a") as f:
                mib, cpu = f"{job['peak_mib']} / {floor['peak_mib']}", f"{job['cpu']:.1f} / {floor['cpu']:.1f}"
                f.write(f"{row} | {ratio:.2f} | {levels} | {load} | {mib} | {cpu} |\n")


def _alternate(data: Path, rows: int, round_: int, base: Path, bytecode: bool) -> None:
    """One round: the base's job, this checkout's job, the floor (at this checkout's levels), each a fresh
    process; one Markdown row: wall s / CPU s / peak MiB of each, and the ratios to the floor."""
    with tempfile.TemporaryDirectory(prefix="floor_") as tmp:
        load = [os.getloadavg()[0]]
        old = _child("job", str(data), str(Path(tmp) / "base.parquet"), code=base, bytecode=bytecode)
        new = _child("job", str(data), str(Path(tmp) / "job.parquet"), bytecode=bytecode)
        floor = _child(
            "floor", str(data), str(Path(tmp) / "floor.parquet"), json.dumps(new["levels"]), bytecode=bytecode
        )
        load.append(os.getloadavg()[0])
    if old["levels"] != new["levels"]:
        print(f"levels differ: base {old['levels']}, this checkout {new['levels']}")

    def fig(f: dict[str, Any]) -> str:
        return f"{f['seconds']:.2f} / {f['cpu']:.2f} / {f['peak_mib']}"

    def ratio(f: dict[str, Any]) -> str:
        return f"{f['seconds'] / floor['seconds']:.1f}x, {f['cpu'] / floor['cpu']:.2f}x"

    print(
        f"| {rows:,} | {round_} | {load[0]:.0f}-{load[1]:.0f} | {fig(new)} | {fig(old)} | {fig(floor)} "
        f"| {ratio(new)} | {ratio(old)} |",
        flush=True,
    )


if __name__ == "__main__":
    main()

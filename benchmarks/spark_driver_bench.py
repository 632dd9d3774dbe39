"""Spark's cost over Polars on one machine, phase by phase, and the Spark driver's own memory (issue 32).

One job (the demo register, k = 10, greedy) is run by ``python -m polars_anon.cli anonymize`` on Polars and on
Spark (``--master local[2]``), optionally past ``--driver-tuples`` (greedy's Spark blocks). While it runs, every
process of its tree is sampled from /proc every 0.2 s: the peak resident memory of the Python driver (the process
started) and of the JVM (its child) apart, and the CPU seconds of the whole tree (user + system, the last value
seen of each process). The report gives the phases (aggregate, method, write, verify) and ``seconds``.

    python benchmarks/spark_driver_bench.py --rows 1000000 [--driver-tuples 100000] [--code DIR] [--label after]
    python benchmarks/spark_driver_bench.py --rows 5000000 --lazyframe   # pa.anonymize(pl.scan_parquet(...))

``--code DIR`` runs another checkout's package (e.g. the commit before a change, exported with ``git archive``):
the "before" rows of ``benchmarks/results/spark_driver.md``. Each run appends a row to that file's table.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engines_bench import _job  # the same job file as the engines benchmark

from polars_anon.demo import write_voter_register

RESULTS = Path(__file__).resolve().parent / "results" / "spark_driver.md"
ROOT = Path(__file__).resolve().parents[1]
TICK = os.sysconf("SC_CLK_TCK")


def _tree(root: int) -> dict[int, tuple[int, float, str]]:
    """Every process under `root` (itself included): pid -> (RSS kB, CPU seconds, command name)."""
    parents: dict[int, int] = {}
    stats: dict[int, list[str]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                text = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            name, rest = text.split("(", 1)[1].rsplit(")", 1)
            fields = rest.split()
            parents[int(entry)], stats[int(entry)] = int(fields[1]), [name, *fields]
    tree, grew = {root}, True
    while grew:
        more = {p for p, pp in parents.items() if pp in tree} - tree
        grew, tree = bool(more), tree | more
    out = {}
    for pid in tree:
        try:
            match = re.search(r"VmRSS:\s+(\d+)", Path(f"/proc/{pid}/status").read_text())
        except OSError:
            continue
        fields = stats[pid]
        cpu = (int(fields[12]) + int(fields[13])) / TICK  # utime, stime (after the name: fields 14, 15 of stat)
        out[pid] = (int(match.group(1)) if match else 0, cpu, fields[0])
    return out


LAZY = """
import json, sys
import polars as pl
import polars_anon as pa
from polars_anon.demo import demo_hierarchy_specs
from polars_anon.job import build_hierarchies
data, out, engine = sys.argv[1:4]
scan = pl.scan_parquet(data)
H = build_hierarchies(scan, demo_hierarchy_specs())
asked = {"k": 10, "method": "greedy", "drop": ["name"], "insensitive": ["voter_id"]}
result = pa.anonymize(scan, hierarchies=H, engine=engine, **asked)
print(json.dumps(result.sink_parquet(out, overwrite=True, report=False), default=str))
"""
"""The Python API's road: a LazyFrame scanning Parquet given to ``pa.anonymize`` (``--lazyframe``)."""


def run(job: Path, engine: str, code: Path, driver_tuples: int | None, lazy: Path | None = None) -> dict[str, object]:
    out = job.parent / "out.parquet"
    cmd = [sys.executable, "-m", "polars_anon.cli", "anonymize", str(job), "-q", "--overwrite", "--engine", engine]
    cmd += ["--master", "local[2]"] if engine == "spark" else []
    cmd += ["--driver-tuples", str(driver_tuples)] if driver_tuples is not None and engine != "polars" else []
    if lazy is not None:
        cmd = [sys.executable, "-c", LAZY, str(lazy), str(job.parent / "lazy_out.parquet"), engine]
    env = {**os.environ, "PYTHONPATH": str(code), "PYSPARK_PYTHON": sys.executable}
    load = os.getloadavg()[0]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=job.parent, env=env)
    driver, jvm, cpu = [0], [0], {}

    def sample() -> None:
        while proc.poll() is None:
            for pid, (rss, seconds, name) in _tree(proc.pid).items():
                cpu[pid] = seconds
                if pid == proc.pid:
                    driver[0] = max(driver[0], rss)
                elif name == "java":
                    jvm[0] = max(jvm[0], rss)
            time.sleep(0.2)

    sampler = threading.Thread(target=sample)
    sampler.start()
    stdout, stderr = proc.communicate()
    sampler.join()
    wall = time.perf_counter() - start
    if proc.returncode:
        raise RuntimeError(f"{engine} failed: {stderr[-2000:]}")
    report = json.loads(stdout)
    del out
    return {
        "engine": engine,
        "wall_s": round(wall, 1),
        "cpu_s": round(sum(cpu.values()), 1),
        "driver_mb": driver[0] // 1024,
        "jvm_mb": jvm[0] // 1024,
        "seconds": report["seconds"],
        "write_seconds": report.get("write_seconds"),
        "phases": report.get("phases"),
        "classes": report["n_input_classes"],
        "rows": report["n_rows"],
        "loss": report["loss"],
        "load": round(load, 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--method", default="greedy")
    ap.add_argument("--engines", nargs="+", default=["polars", "spark"])
    ap.add_argument("--driver-tuples", type=int, default=None)
    ap.add_argument("--code", type=Path, default=ROOT, help="the checkout whose package runs (default this one)")
    ap.add_argument("--label", default="after", help="the table's label of this checkout (before / after)")
    ap.add_argument("--data", type=Path, default=None, help="a register already written (default: generate one)")
    ap.add_argument("--lazyframe", action="store_true", help="run pa.anonymize(pl.scan_parquet(data)) instead")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = args.data or write_voter_register(Path(tmp) / f"voters_{args.rows}.parquet", args.rows)
        job = _job(Path(tmp), data, args.method)
        lines, kind = [], "LazyFrame " if args.lazyframe else ""
        for engine in args.engines:
            r = run(job, engine, args.code, args.driver_tuples, data if args.lazyframe else None)
            print(args.label, args.rows, args.method, r, flush=True)
            phases = r["phases"] or {}
            lines.append(
                f"| {args.label} | {args.rows:,} | {kind}{args.method} | {args.driver_tuples or '-'} | {engine} | "
                f"{r['wall_s']} | {r['cpu_s']} | {r['driver_mb']} | {r['jvm_mb'] or '-'} | {r['seconds']} | "
                + " | ".join(str(phases.get(p, "-")) for p in ("aggregate", "method", "write", "verify"))
                + f" | {r['write_seconds']} | {r['classes']:,} | {r['rows']:,} | {r['load']} |"
            )
    if not RESULTS.exists():
        RESULTS.write_text(
            "# Spark's driver and cost over Polars, phase by phase (benchmarks/spark_driver_bench.py)\n\n"
            "driver = peak RSS of the Python process; JVM = peak RSS of its Java child (Spark local[2]: driver and "
            "executors in one JVM); CPU = user + system seconds of the whole process tree (sampled every 0.2 s); "
            "phases from the report (before: the report had no phases). load = 1-minute load average at start "
            "(2 cores shared with other work).\n\n"
            "| code | rows | method | driver_tuples | engine | wall (s) | CPU (s) | driver (MB) | JVM (MB) | "
            "seconds | aggregate | method | write | verify | write_seconds | tuples | published rows | load |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
        )
    with RESULTS.open("a") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

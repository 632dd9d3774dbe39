"""The same job on Polars, DuckDB and Spark (local mode), end to end: Parquet in, verified Parquet out.

For each size and method, one job file (the demo register's qids and hierarchies, k = 10)
is run by ``polars-anon anonymize job.toml --engine E`` under ``/usr/bin/time -v``: wall
time, the peak resident memory of the largest process (Python, or Spark's JVM, which in
local mode is driver and executors in one) and the peak of the whole process tree
(sampled from /proc every 0.2 s; Python + JVM). The outputs are checked to hold the same
rows on every engine. Figures are printed with the load average and written to
benchmarks/results/engines.md (a section per size).

    python benchmarks/engines_bench.py [--rows 1000000] [--methods fulldomain greedy mondrian] [--master local[2]]
    python benchmarks/engines_bench.py --rows 1000000 --driver-tuples 100000   # the engines' routes beyond the driver

With ``--driver-tuples N`` the DuckDB and Spark runs get ``--driver-tuples N``: beyond N distinct
tuples a method runs through its engine planner (Mondrian's SQL rounds, greedy's Spark blocks);
the pairs without one are skipped. Polars runs as usual, the reference the rows are compared with.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import polars as pl

from polars_anon.demo import demo_hierarchy_specs, write_voter_register

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sections import replace_section

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parents[1]
TITLE = "One job on Polars, DuckDB and Spark, end to end (benchmarks/engines_bench.py)"
SIZES = (1_000_000, 15_000_000)
ENGINES = ("polars", "duckdb", "spark")


def _job(folder: Path, data: Path, method: str) -> Path:
    qids = "\n".join(
        f"[qids.{q}]\nhierarchy = {json.dumps(s) if isinstance(s, str) else _inline(s)}"
        for q, s in demo_hierarchy_specs().items()
    )
    text = (
        f'input = "{data}"\noutput = "out.parquet"\nk = 10\nmethod = "{method}"\ndrop = '
        '["name"]\ninsensitive = ["voter_id"]\n'
    )
    text += "report_html = false\n" + qids + "\n"
    path = folder / f"{method}.toml"
    path.write_text(text)
    return path


def _inline(spec: dict) -> str:
    return "{" + ", ".join(f"{k} = {json.dumps(v)}" for k, v in spec.items()) + "}"


def _tree_rss(root: int) -> int:
    """Resident memory (kB) of `root` and every descendant."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    tree, grew = {root}, True
    while grew:
        more = {p for p, pp in parents.items() if pp in tree} - tree
        grew, tree = bool(more), tree | more
    total = 0
    for pid in tree:
        try:
            match = re.search(r"VmRSS:\s+(\d+)", Path(f"/proc/{pid}/status").read_text())
            total += int(match.group(1)) if match else 0
        except OSError:
            continue
    return total


def run(job: Path, engine: str, master: str, driver_tuples: int | None = None) -> dict[str, object]:
    """One run under /usr/bin/time -v; the tree's peak sampled meanwhile.

    Returns wall time, peak RSS (largest process, whole tree), the report's published rows, loss, input classes
    (the aggregate rows the driver held), seconds to the map and to write, a digest of the published rows, the load.
    """
    out = job.parent / "out.parquet"
    shutil.rmtree(out, ignore_errors=True) if out.is_dir() else out.unlink(missing_ok=True)  # the last engine's output
    cmd = [
        "/usr/bin/time",
        "-v",
        sys.executable,
        "-m",
        "polars_anon.cli",
        "anonymize",
        str(job),
        "-q",
        "--overwrite",
        "--engine",
        engine,
    ]
    cmd += ["--master", master] if engine == "spark" else []
    cmd += ["--driver-tuples", str(driver_tuples)] if driver_tuples is not None and engine != "polars" else []
    load = os.getloadavg()[0]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }  # this checkout's CLI
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=job.parent, env=env)
    peak = [0]

    def sample() -> None:
        while proc.poll() is None:
            peak[0] = max(peak[0], _tree_rss(proc.pid))
            time.sleep(0.2)

    sampler = threading.Thread(target=sample)
    sampler.start()
    stdout, stderr = proc.communicate()
    sampler.join()
    if proc.returncode:
        raise RuntimeError(f"{engine} failed: {stderr[-2000:]}")
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", stderr)
    h, m, s = (float(g) if g else 0.0 for g in wall.groups())  # type: ignore[union-attr]
    largest = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr).group(1))  # type: ignore[union-attr]
    report = json.loads(stdout)
    published = pl.scan_parquet(out if out.is_file() else f"{out}/*.parquet")
    # a wrapping sum of row hashes: independent of row order, and streamed (150M-row outputs stay out of memory)
    row_hash = pl.struct("voter_id", "zip", "gender", "race", "birth_year").hash()
    digest = published.select(row_hash.sum()).collect().item()
    return {
        "engine": engine,
        "wall_s": round(h * 3600 + m * 60 + s, 1),
        "largest_mb": largest // 1024,
        "tree_mb": peak[0] // 1024,
        "rows": report["n_rows"],
        "loss": report["loss"],
        "digest": digest,
        "load": round(load, 2),
        "classes": report["n_input_classes"],
        "map_s": report["seconds"],
        "write_s": report["write_seconds"],
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, nargs="+", default=[1_000_000])
    ap.add_argument("--methods", nargs="+", default=["fulldomain", "greedy", "mondrian"])
    ap.add_argument("--engines", nargs="+", default=list(ENGINES), choices=ENGINES)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument(
        "--driver-tuples",
        type=int,
        default=None,
        help="passed to the DuckDB and Spark runs (their routes beyond the driver)",
    )
    args = ap.parse_args()
    from polars_anon.engines.planners import PLANNERS

    header = [
        (
            f"Command: `python benchmarks/engines_bench.py --rows {rows_text(args.rows)} --methods "
            f"{' '.join(args.methods)}"
            f"{'' if args.driver_tuples is None else f' --driver-tuples {args.driver_tuples}'}`. "
            f"2-core machine shared with other work; Spark in local mode (`--master {args.master}`), "
            "start-up included. "
            "largest = peak RSS of the largest process (/usr/bin/time -v; Spark: the JVM, driver and "
            "executors in one); "
            "tree = peak RSS of the whole process tree (Python + JVM), sampled."
        ),
        "",
        "| rows | method | engine | wall (s) | largest (MB) | tree (MB) | published rows | loss | "
        "same rows as polars | load (1 min) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for rows in args.rows:
            lines = list(header)
            data = write_voter_register(Path(tmp) / f"voters_{rows}.parquet", rows)
            for method in args.methods:
                job, first = _job(Path(tmp), data, method), None
                for engine in args.engines:
                    if args.driver_tuples is not None and engine != "polars" and (method, engine) not in PLANNERS:
                        print(rows, method, engine, "skipped: no planner beyond driver_tuples", flush=True)
                        continue
                    r = run(job, engine, args.master, args.driver_tuples)
                    first = first or r
                    same = r["digest"] == first["digest"] and r["rows"] == first["rows"]
                    print(rows, method, r, flush=True)
                    lines.append(
                        f"| {rows:,} | {method} | {engine} | {r['wall_s']} | {r['largest_mb']} | {r['tree_mb']} | "
                        f"{r['rows']:,} | {r['loss']:.4f} | {'yes' if same else 'NO'} | {r['load']} |"
                    )
            data.unlink()
            RESULTS.mkdir(exist_ok=True)
            names = [f"{n:,} rows" for n in sorted({*SIZES, *args.rows})]
            order = [*names, *(f"{n}, beyond the driver" for n in names)]
            name = f"{rows:,} rows" + ("" if args.driver_tuples is None else ", beyond the driver")
            replace_section(RESULTS / "engines.md", TITLE, name, "\n".join(lines), order)
            print("\n".join(lines))


def rows_text(rows: list[int]) -> str:
    return " ".join(map(str, rows))


if __name__ == "__main__":
    main()

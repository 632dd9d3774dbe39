"""Every method on every dataset with ARX hierarchies: time and peak memory, each run in a fresh process.

    python benchmarks/every_method.py [--k 2 5 10 100] [--datasets adult cup ...] [--variants topdown mdav ...]
    python benchmarks/every_method.py run <dataset> <variant> <k>     # one run (what the sweep starts)

Each run is ``/usr/bin/time -v python benchmarks/every_method.py run ...``: the child
loads the dataset (:mod:`datasets`), then times ``pa.anonymize(...).collect()``
(aggregates, the method, the report, publishing and the independent check) and
prints its figures as JSON; the parent adds the wall time and peak resident memory
of the whole process (interpreter start and reading the CSV files included) and the
load average (``os.getloadavg()[0]``) when the run started, since the machine is
shared. The limit is on ``seconds`` (the anonymization): 10 s, 60 s for mdav.

Variants: fulldomain, datafly, greedy (nllm, its default metric), mondrian strict
and relaxed, each published as hierarchy nodes (``-hierarchy``) and as ranges and
value sets (``-rangeset``: a range for a qid whose hierarchy leaves are numbers in
increasing order, a set otherwise), mdav (its defaults) and topdown.

Results: benchmarks/results/every_method.csv and every_method.md.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import polars as pl

import polars_anon as pa
from polars_anon.algorithms.mondrian import axes

sys.path.insert(0, str(Path(__file__).resolve().parent))
import datasets

RESULTS = Path(__file__).resolve().parent / "results"
LIMIT = {"mdav": 60.0}
DEFAULT_LIMIT = 10.0
VARIANTS = [
    "fulldomain",
    "datafly",
    "greedy",
    "mondrian-strict-hierarchy",
    "mondrian-relaxed-hierarchy",
    "mondrian-strict-rangeset",
    "mondrian-relaxed-rangeset",
    "mdav",
    "topdown",
]


def method_options(variant: str, df: pl.DataFrame, qids: list[str], hs: dict[str, pa.Hierarchy]) -> tuple[str, dict]:
    """``(method, options)`` of a variant name."""
    if not variant.startswith("mondrian"):
        return variant, {}
    _, mode, publish = variant.split("-")
    if publish == "hierarchy":
        return "mondrian", {"mode": mode, "publish": "hierarchy"}
    return "mondrian", {"mode": mode, "publish": rangeset(df, qids, hs)}


def rangeset(df: pl.DataFrame, qids: list[str], hs: dict[str, pa.Hierarchy]) -> dict[str, str]:
    """Per qid ``"range"`` when its hierarchy order is numeric and increasing, else ``"set"``."""
    present = {q: df[q].unique().to_list() for q in qids}
    return {ax.qid: "range" if ax.numeric else "set" for ax in axes(present, hs)}


def run_one(name: str, variant: str, k: int) -> dict:
    """The child: one anonymization, its figures."""
    df, qids, hs = datasets.load(name)
    method, opts = method_options(variant, df, qids, hs)
    start, start_cpu = time.perf_counter(), time.process_time()
    try:
        result = pa.anonymize(df.select(qids), hierarchies=hs, k=k, method=method, **opts)
        out = result.collect()
    except pa.errors.AnonError as exc:  # e.g. a full-domain lattice too large to search
        return {"refused": f"{type(exc).__name__}: {exc}"[:160], "seconds": round(time.perf_counter() - start, 3)}
    seconds, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    rep = result.report
    return {
        "seconds": round(seconds, 3),
        "cpu_s": round(cpu, 3),
        "method_seconds": rep.get("seconds"),
        "loss": None if rep.get("loss") is None else round(rep["loss"], 4),
        "suppressed": rep["suppressed"],
        "classes": rep.get("n_classes"),
        "rows": out.height,
    }


def time_v(cmd: list[str], timeout: float) -> tuple[str, float | None, int | None, str]:
    """Run under /usr/bin/time -v: (stdout, wall seconds, peak RSS MB, stderr tail)."""
    try:
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}  # this checkout's package
        proc = subprocess.run(
            ["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, timeout=timeout, check=False, env=env
        )
    except subprocess.TimeoutExpired:
        return "", None, None, f"timeout after {timeout:.0f} s"
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", proc.stderr)
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    secs = None
    if wall:
        h, m, s = (float(g) if g else 0.0 for g in wall.groups())
        secs = round(h * 3600 + m * 60 + s, 2)
    return (
        proc.stdout,
        secs,
        int(peak.group(1)) // 1024 if peak else None,
        proc.stderr[-300:] if proc.returncode else "",
    )


def sweep(args: argparse.Namespace) -> list[dict]:
    rows = []
    for name in args.datasets:
        for k in args.k:
            for variant in args.variants:
                load = os.getloadavg()[0]
                cmd = [sys.executable, str(Path(__file__).resolve()), "run", name, variant, str(k)]
                out, wall, peak, err = time_v(cmd, args.timeout)
                figures = json.loads(out.strip().splitlines()[-1]) if out.strip() else {"refused": err.strip()[-160:]}
                limit = LIMIT.get(variant, DEFAULT_LIMIT)
                row = {
                    "dataset": name,
                    "k": k,
                    "variant": variant,
                    "seconds": figures.get("seconds"),
                    "cpu_s": figures.get("cpu_s"),
                    "wall_s": wall,
                    "peak_mb": peak,
                    "load": round(load, 1),
                    "loss": figures.get("loss"),
                    "suppressed": figures.get("suppressed"),
                    "classes": figures.get("classes"),
                    "within_limit": None if figures.get("refused") else (figures.get("seconds") or 1e9) <= limit,
                    "cpu_within_limit": None if figures.get("refused") else (figures.get("cpu_s") or 1e9) <= limit,
                    "note": figures.get("refused", ""),
                }
                rows.append(row)
                print(row, flush=True)
    return rows


def write(rows: list[dict], args: argparse.Namespace) -> None:
    RESULTS.mkdir(exist_ok=True)
    with (RESULTS / "every_method.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    cols = list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join("" if r[c] is None else str(r[c]) for c in cols) + " |" for r in rows]
    over = [r for r in rows if r["within_limit"] is False]
    over_cpu = [r for r in rows if r["cpu_within_limit"] is False]
    summary = ("every run within its limit" if not over else f"{len(over)} runs over their limit in wall time") + (
        f", {len(over_cpu)} in CPU time" if over_cpu else ", every run within it in CPU time"
    )
    (RESULTS / "every_method.md").write_text(
        "# Every method on every dataset with ARX hierarchies\n\n"
        f"`python benchmarks/every_method.py --k {' '.join(map(str, args.k))}` (each run a fresh process under "
        "`/usr/bin/time -v`; `seconds`: pa.anonymize(...).collect(), limit 10 s, mdav 60 s; `cpu_s`: "
        "the CPU seconds of "
        "that call, all threads (on a quiet machine the wall time is at most about that: the runs do no waiting, so "
        "`cpu_within_limit` judges the limit when the shared machine is loaded); `wall_s` and `peak_mb`: "
        "the whole process; `load`: 1-minute load average when the run started, 2 cores shared). "
        f"{summary}.\n\n" + "\n".join(lines) + "\n"
    )


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "run":
        print(json.dumps(run_one(sys.argv[2], sys.argv[3], int(sys.argv[4]))))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--k", type=int, nargs="+", default=[2, 5, 10, 100])
    ap.add_argument("--datasets", nargs="+", default=datasets.available())
    ap.add_argument("--variants", nargs="+", default=VARIANTS)
    ap.add_argument("--timeout", type=float, default=600.0)
    args = ap.parse_args()
    rows = sweep(args)
    write(rows, args)


if __name__ == "__main__":
    main()

"""Full-domain search for every objective on ARX's benchmark datasets.

    python benchmarks/fulldomain_objectives.py [--datasets adult,fars,cup] [--ks 5,10,100] [--limit 0.05] [--repeat 1]

For each dataset of ``../shared/data`` (ARX's Adult, FARS 10 % subset and cup, every
hierarchy of the folder a quasi-identifier, as ARX's tests do), each objective,
each k, with at most ``--limit`` of the rows suppressed: the chosen level vector,
its value, the rows suppressed, the lattice vectors evaluated and the search time
(building the lattice tables and searching; the class aggregates are computed once
per dataset beforehand, as the pipeline does). The best of ``--repeat`` runs is
kept. The load average is recorded before and after, since the machine is shared.

Writes ``benchmarks/results/fulldomain_objectives.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
DATA = REPO.parent / "shared" / "data"
RESULTS = HERE / "results"
DATASETS = {"adult": "adult/adult.csv", "fars": "fars/fars_subset.csv", "cup": "cup/cup.csv"}
OBJECTIVES = [
    ("ncp", {}),
    ("loss", {}),
    ("entropy", {}),
    ("entropy", {"monotonic": True}),
    ("discernibility", {}),
    ("discernibility", {"monotonic": True}),
    ("aecs", {}),
    ("height", {}),
    ("precision", {}),
    ("kl_divergence", {}),
    ("ambiguity", {}),
]


def load(name: str):
    import polars as pl

    import polars_anon as pa

    path = DATA / DATASETS[name]
    folder = path.parent
    df = pl.read_csv(path, separator=";", infer_schema=False)
    hs = {p.stem.split("_hierarchy_")[1]: pa.Hierarchy.from_csv(p) for p in folder.glob(f"{name}_hierarchy_*.csv")}
    qids = [c for c in df.columns if c in hs]
    agg = df.group_by(qids).len("size").with_columns(pl.col("size").cast(pl.UInt32)).sort(qids)
    return agg, qids, {q: hs[q] for q in qids}


def label(metric: str, options: dict) -> str:
    if metric == "discernibility":
        return "discernibility (DM*)" if options.get("monotonic") else "discernibility (DM)"
    if metric == "entropy":
        return "entropy (monotonic)" if options.get("monotonic") else "entropy"
    return metric


def run_one(agg, qids, hs, k: int, budget: int, metric: str, options: dict, repeat: int) -> dict:
    from polars_anon.algorithms import Task
    from polars_anon.algorithms.fulldomain import search
    from polars_anon.algorithms.objectives import Settings

    best = cpu = None
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        found = search(Task(agg, qids, hs, k), budget, Settings(metric, max_suppressed=budget, **options))
        seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - start_cpu
        best = seconds if best is None else min(best, seconds)
        cpu = cpu_seconds if cpu is None else min(cpu, cpu_seconds)
    value = found.score.value
    return {
        "objective": label(metric, options),
        "k": k,
        "vector": list(found.levels.values()),
        "value": value if isinstance(value, list) else float(value),
        "suppressed": found.suppressed,
        "evaluated": found.evaluated,
        "seconds": round(best, 3),
        "cpu_seconds": round(cpu, 3),
    }


def markdown(out: dict) -> str:
    lines = [
        "# Full-domain search per objective (ARX's datasets, every hierarchy a qid)",
        "",
        f"Command: `{out['command']}`  ",
        f"Machine: {out['machine']}; load average before {out['load_before']}, after {out['load_after']}  ",
        (
            f"Suppression limit: {out['limit']:.0%} of the rows. Time: lattice tables + search, best of "
            f"{out['repeat']} "
            "(`seconds` wall, `cpu` the process's CPU seconds, all threads: less sensitive to the shared "
            "machine's load)."
        ),
        "",
    ]
    for name, info in out["datasets"].items():
        lines += [
            f"## {name} ({info['rows']} rows, {info['tuples']} distinct tuples, {info['lattice']} "
            f"vectors, qids {', '.join(info['qids'])})",
            "",
        ]
        lines += [
            "| objective | k | vector | value | suppressed | evaluated | seconds | cpu |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for r in info["runs"]:
            value = r["value"] if isinstance(r["value"], float) else r["value"][0]
            lines.append(
                f"| {r['objective']} | {r['k']} | {r['vector']} | {value:.10g} | {r['suppressed']} | "
                f"{r['evaluated']} | {r['seconds']} | {r.get('cpu_seconds', '')} |"
            )
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="adult,fars,cup")
    ap.add_argument("--ks", default="5,10,100")
    ap.add_argument("--limit", type=float, default=0.05)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    import math

    out: dict = {
        "command": "python benchmarks/fulldomain_objectives.py " + " ".join(sys.argv[1:]),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}",
        "load_before": [round(x, 2) for x in os.getloadavg()],
        "limit": args.limit,
        "repeat": args.repeat,
        "datasets": {},
    }
    for name in args.datasets.split(","):
        agg, qids, hs = load(name)
        rows = int(agg["size"].sum())
        budget = int(args.limit * rows)
        info = {
            "rows": rows,
            "tuples": agg.height,
            "qids": qids,
            "lattice": math.prod(h.height for h in hs.values()),
            "runs": [],
        }
        for k in [int(x) for x in args.ks.split(",")]:
            for metric, options in OBJECTIVES:
                r = run_one(agg, qids, hs, k, budget, metric, options, args.repeat)
                print(name, r, flush=True)
                info["runs"].append(r)
        out["datasets"][name] = info
    out["load_after"] = [round(x, 2) for x in os.getloadavg()]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "fulldomain_objectives.json").write_text(json.dumps(out, indent=2) + "\n")
    (RESULTS / "fulldomain_objectives.md").write_text(markdown(out) + "\n")


if __name__ == "__main__":
    main()

"""Time of fulldomain on Adult with δ-presence and with a risk model, next to the same search without them.

    nice -n 10 python benchmarks/privacy_times.py [--arx /path/to/arx] [--repeat 2] [--only TEXT]

Configurations as ARX's suite sets them (`benchmarks/arx_privacy_suite.py`): the qids every
column but `occupation` (δ-presence, on ARX's 3,016-row research subset of Adult, the population
the whole of Adult) or all nine (risk models, on Adult, k = 1 as ARX's RiskBased cases, next to
k = 1 and k = 2 alone); the metric and suppression limit of the case; "without" is the same call
with k alone. A warm-up run comes first. Wall seconds of ``pa.anonymize(...).collect()``
(the search, the publish step and the independent check), the best of ``--repeat`` runs, with the
1-minute load average. Writes ``benchmarks/results/privacy_times.md``; with ``--only``, runs the rows whose
models contain TEXT and replaces just those rows of the file (the others keep their earlier figures).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import arx_privacy_suite as suite  # noqa: E402

import polars_anon as pa  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
USA = suite.USA


def timed(
    data: pl.DataFrame, qids: list[str], hs: dict, k: int, metric: str, limit: float, models: list, repeat: int
) -> tuple[float, float, float, dict]:
    best, load, cpu, report = math.inf, 0.0, 0.0, {}
    for _ in range(repeat):
        start, cpu_start = time.perf_counter(), time.process_time()
        res = pa.anonymize(
            data,
            hierarchies={q: hs[q] for q in qids},
            k=k,
            method="fulldomain",
            metric=metric,
            max_suppressed=math.floor(limit * data.height),
            privacy=models,
        )
        res.collect()
        seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
        if seconds < best:
            best, load, cpu, report = seconds, os.getloadavg()[0], cpu_seconds, res.report
    return best, load, cpu, report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arx", default=os.environ.get("ARX", "/work/peers/arx"), help="an ARX checkout")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--only", help="run only the rows whose models contain this text; keep the file's others")
    args = parser.parse_args()
    adult = pl.read_csv(suite.ADULT / "adult.csv", separator=";", infer_schema=False)
    subset = pl.read_csv(Path(args.arx) / "data" / "adult_subset.csv", separator=";", infer_schema=False)
    hs = {q: pa.Hierarchy.from_csv(suite.ADULT / f"adult_hierarchy_{q}.csv") for q in suite.ALL9}
    eight = [q for q in suite.ALL9 if q != "occupation"]
    runs = [
        ("subset, k=5, entropy, 0%", subset.select(eight), eight, 5, "entropy", 0.0,
         [("k only", []), ("δ-presence (0.05, 0.15)", [pa.DeltaPresence(adult.select(eight), 0.05, 0.15)]),
          ("δ-presence (0, 0.2)", [pa.DeltaPresence(adult.select(eight), 0.0, 0.2)])]),
        ("subset, k=5, entropy, 5%", subset.select(eight), eight, 5, "entropy", 0.05,
         [("k only", []), ("δ-presence (0.05, 0.15)", [pa.DeltaPresence(adult.select(eight), 0.05, 0.15)])]),
        ("Adult, 9 qids, entropy, 4%", adult, suite.ALL9, 1, "entropy", 0.04,
         [("k = 1 (nothing to search)", []), ("k = 2", [], 2), ("average risk <= 0.01", [pa.AverageRisk(0.01)]),
          ("sample uniques <= 1%", [pa.Risk("prosecutor", threshold=0.5, share=0.01)]),
          ("population uniqueness (Dankar) <= 1e-4", [pa.PopulationUniqueness(1e-4, population_size=USA)])]),
    ]  # a table: one run an entry  # fmt: skip
    timed(subset.select(eight), eight, hs, 5, "entropy", 0.0, [], 1)  # warm-up: imports, first allocations
    rows = []
    for name, data, qids, k, metric, limit, variants in runs:
        for label, models, *own_k in variants:
            if args.only and args.only not in label:
                continue
            seconds, load, cpu, report = timed(
                data, qids, hs, own_k[0] if own_k else k, metric, limit, models, args.repeat
            )
            row = {
                "configuration": name,
                "models": label,
                "seconds": round(seconds, 2),
                "cpu": round(cpu, 2),
                "load": round(load, 1),
                "evaluated": report["details"]["evaluated_vectors"],
                "suppressed": report["suppressed"],
                "value": report["details"]["objective"]["value"],
            }
            print(row, flush=True)
            rows.append(row)
    table = [
        f"| {r['configuration']} | {r['models']} | {r['seconds']} | {r['cpu']} | {r['load']} | {r['evaluated']} | "
        f"{r['suppressed']} | {r['value']:.6g} |"
        for r in rows
    ]
    out = RESULTS / "privacy_times.md"
    note = []
    if args.only and out.exists():  # the earlier rows, these replacing theirs
        new = {tuple(line.split(" | ")[:2]): line for line in table}
        earlier = [line for line in out.read_text().splitlines() if line.startswith("| ") and "---" not in line][1:]
        table = [new.pop(tuple(line.split(" | ")[:2]), line) for line in earlier] + list(new.values())
        note = [
            "",
            f"Rows with models containing {args.only!r} re-run with `--only {args.only!r}`; the others earlier.",
        ]
    lines = [
        "# fulldomain on Adult with δ-presence and risk models, next to k alone",
        "",
        f"`nice -n 10 python benchmarks/privacy_times.py --repeat {args.repeat}` (best of {args.repeat}; wall seconds "
        "of anonymize + collect and the process's CPU seconds over the same span (every thread), with the 1-minute "
        "load average at that run: a 2-core machine shared with other work, so the wall times are pessimistic).",
        "",
        "| configuration | models | s | CPU s | load | vectors evaluated | suppressed | objective |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
        *table,
        *note,
    ]
    RESULTS.mkdir(exist_ok=True)
    out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

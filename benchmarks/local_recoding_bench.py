"""Local recoding, ours (``method="topdown"``) against ARX's, side by side, both scored by ``scorer.py``.

    python benchmarks/local_recoding_bench.py --arx-cp CLASSPATH [--datasets adult fars] [--k 5 10]
        [--models none ldiv tclose-equal tclose-hier] [--timeout 600] [--cache DIR]

ARX is a peer built outside the repository: ``--arx-cp`` (or the ``ARX_CP`` environment
variable) is a Java classpath holding ARX's classes, its ``lib/`` jars and a driver class
``ArxLocal`` called as ``java ArxLocal data.csv out.csv k qid=hierarchy.csv ...
[sensitive=a] [ldiv=l] [tclose=t:equal|t:hier:file]``. It runs ARX as its GUI's local
transformation does: the loss metric with generalization/suppression factor 0, a
suppression limit of 99 %, then ``ARXResult.optimizeIterativeFast(output, 0.01)`` (100
iterations); it prints ``{"seconds": ...}`` (reading the data to the optimized output)
and writes the published CSV (a driver that falls back to ARX's heuristic search where ARX refuses
its optimal one adds ``"heuristic": true``, noted in the row; where ARX finds no solution it writes
no table and prints a ``"note"`` instead, kept in the row). The driver's source and build:
``benchmarks/peers/`` (README there). ``--cache DIR`` keeps ARX's outputs,
times and timeouts between runs
(a cached figure carries the load of the run that measured it; ``--cached-only`` runs
no ARX job, notes the runs not cached).

Per dataset of ``../shared/data`` that ships ARX hierarchies (``datasets.py``; all its
qids; ARX reads the same hierarchies, written back as ARX CSVs), each k and each privacy model,
both outputs are scored by :func:`scorer.score`
against the input (the project's loss and cell NCP with numeric attributes as ranges),
and the times (ours: ``pa.anonymize(...).collect()``, the whole road; ARX: the driver's
figure, JVM start excluded) are compared. Privacy models run on Adult with ``occupation``
as the sensitive attribute and the other 7 qids: distinct 2-diversity (``ldiv``),
0.2-closeness with equal (``tclose-equal``) or hierarchical distance (``tclose-hier``).
Ours gets the budget ARX gets: up to 99 % of the rows may be suppressed, each
counted as roots by both scorers, only when that lowers the loss.

Times: wall seconds of both (above) and CPU seconds: ours the process's CPU time over
the same call (every thread), ARX the JVM process's (``getrusage`` of the child, JVM
start included). On a shared machine the CPU seconds are the steadier figure.

Results: ``benchmarks/results/local_recoding.md`` and ``.csv``; every row names the
1-minute load average when its runs started (2 cores, shared). Parts run in parallel
with ``--no-write`` (stdout to a file each) are written as one table by
``--rows-from part1.log part2.log``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's package, not the installed one
sys.path.insert(0, str(Path(__file__).resolve().parent))
import datasets
import scorer

import polars_anon as pa

RESULTS = Path(__file__).resolve().parent / "results"
ROW = "__bench_row"
ARX_SUPPRESSION = 0.99
MODELS = ("none", "ldiv", "tclose-equal", "tclose-hier")
SENSITIVE = "occupation"  # privacy models: Adult, this attribute sensitive, the other 7 qids


def our_model(model: str, hs: dict[str, pa.Hierarchy]) -> list:
    if model == "ldiv":
        return [pa.LDiversity(SENSITIVE, l=2)]
    if model == "tclose-equal":
        return [pa.TCloseness(SENSITIVE, t=0.2)]
    if model == "tclose-hier":
        return [pa.TCloseness(SENSITIVE, t=0.2, distance="hierarchical", hierarchy=hs[SENSITIVE])]
    return []


def arx_model(model: str, hierarchy: Path) -> list[str]:
    if model == "none":
        return []
    out = [f"sensitive={SENSITIVE}"]
    if model == "ldiv":
        return [*out, "ldiv=2"]
    if model == "tclose-equal":
        return [*out, "tclose=0.2:equal"]
    return [*out, f"tclose=0.2:hier:{hierarchy}"]


def run_ours(
    df: pl.DataFrame,
    qids: list[str],
    hs: dict,
    k: int,
    model: str,
    global_start: bool = False,
    search: str | None = None,
) -> dict:
    sensitive = [SENSITIVE] if model != "none" else []
    data = df.select(*qids, *sensitive).with_row_index(ROW)
    start, cpu = time.perf_counter(), time.process_time()
    result = pa.anonymize(
        data,
        hierarchies={q: hs[q] for q in qids},
        k=k,
        method="topdown",
        insensitive=ROW,
        sensitive=sensitive or None,
        privacy=our_model(model, hs),
        max_suppressed=int(ARX_SUPPRESSION * df.height),
        global_start=global_start,
        **({} if search is None else {"search": search}),  # None: the method's default
    )
    out = result.collect()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"seconds": seconds, "cpu_seconds": cpu, **scorer.score(data, out, qids, hs, row=ROW)}


def keep_note(cache: Path | None, key: str, meta: dict) -> dict:
    """`meta` of an ARX run that gave no table (its note, load), cached like a result."""
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
        (cache / f"{key}.json").write_text(json.dumps(meta))
    return meta


def run_arx(
    cp: str,
    name: str,
    df: pl.DataFrame,
    qids: list[str],
    hs: dict,
    k: int,
    model: str,
    timeout: float,
    cache: Path | None,
    cached_only: bool = False,
) -> dict:
    key = f"{name}_k{k}_{model}"
    if cache is not None and (cache / f"{key}.json").exists():
        meta = json.loads((cache / f"{key}.json").read_text())
        if "note" in meta:  # a run that gave no result, kept with its timeout and load
            return meta
        pub = pl.read_csv(cache / f"{key}.csv", separator=";", infer_schema=False)
        return {**meta, **scorer.score(df, pub, qids, hs)}
    if cached_only:
        return {"note": "ARX not run (not in the cache)"}
    sensitive = [SENSITIVE] if model != "none" else []
    with tempfile.TemporaryDirectory() as tmp:
        data, out = Path(tmp) / "data.csv", Path(tmp) / "out.csv"
        df.select(*qids, *sensitive).write_csv(data, separator=";")
        files = {q: hs[q].to_csv(Path(tmp) / f"h_{i}.csv") for i, q in enumerate({*qids, *sensitive})}
        cmd = ["java", "-Xmx1g", "-cp", cp, "ArxLocal", str(data), str(out), str(k)]
        cmd += [f"{q}={files[q]}" for q in qids] + arx_model(model, files.get(SENSITIVE, Path()))
        load = os.getloadavg()[0]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return keep_note(cache, key, {"note": f"ARX: no result in {timeout:.0f} s", "arx_load": load})
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        lines = [x for x in proc.stdout.splitlines() if x.startswith("{")]
        if proc.returncode != 0 or not lines:
            return {"note": f"ARX failed: {(proc.stderr or proc.stdout).strip().splitlines()[-1:]}"[:160]}
        meta = {**json.loads(lines[-1]), "arx_load": load, "cpu_seconds": cpu}
        if "note" in meta:  # ARX found no solution: no table, no times to compare
            return keep_note(cache, key, {"note": meta["note"], "arx_load": load})
        pub = pl.read_csv(out, separator=";", infer_schema=False)
        if cache is not None:
            cache.mkdir(parents=True, exist_ok=True)
            pub.write_csv(cache / f"{key}.csv", separator=";")
            (cache / f"{key}.json").write_text(json.dumps(meta))
    return {**meta, **scorer.score(df, pub, qids, hs)}


def bench(args: argparse.Namespace) -> list[dict]:
    rows = []
    for name in args.datasets:
        df, qids, hs = datasets.load(name)
        for model in args.models:
            if model != "none" and name != "adult":
                continue
            q = [c for c in qids if c != SENSITIVE] if model != "none" else qids
            for k in args.k:
                load = round(os.getloadavg()[0], 1)
                ours = run_ours(df, q, hs, k, model, args.global_start, args.topdown_search)
                arx = run_arx(args.arx_cp, name, df, q, hs, k, model, args.timeout, args.cache, args.cached_only)
                row = {"data": name, "qids": len(q), "k": k, "model": model, "load": load}
                for who, res in (("ARX", arx), ("ours", ours)):
                    row[f"{who} {scorer.LOSS}"] = round(res[scorer.LOSS], 4) if scorer.LOSS in res else None
                    row[f"{who} {scorer.NCP}"] = round(res[scorer.NCP], 4) if scorer.NCP in res else None
                    # ARX's own count (its suppressed rows read "*", which is also the root label of some hierarchies)
                    row[f"{who} {scorer.SUPPRESSED}"] = res.get("suppressed", res.get(scorer.SUPPRESSED))
                    row[f"{who} seconds"] = round(res["seconds"], 2) if "seconds" in res else None
                    row[f"{who} CPU seconds"] = round(res["cpu_seconds"], 2) if "cpu_seconds" in res else None
                for m in (scorer.LOSS, scorer.NCP):
                    a, o = row[f"ARX {m}"], row[f"ours {m}"]
                    row[f"ours / ARX, {m}"] = round(o / a, 3) if a and o is not None else None
                a, o = row["ARX seconds"], row["ours seconds"]
                row["ARX seconds / ours"] = round(a / o, 1) if a and o else None
                a, o = row["ARX CPU seconds"], row["ours CPU seconds"]
                row["ARX CPU seconds / ours"] = round(a / o, 1) if a and o else None
                row["ARX load"] = round(arx["arx_load"], 1) if "arx_load" in arx else None
                heuristic = "ARX: heuristic search (space above its optimal search's threshold)"
                row["note"] = arx.get("note", heuristic if arx.get("heuristic") else "")
                rows.append(row)
                print(json.dumps(row), flush=True)
    return rows


def write(rows: list[dict], command: str) -> None:
    RESULTS.mkdir(exist_ok=True)
    cols = list(rows[0])
    with open(RESULTS / "local_recoding.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
    lines = [
        "# Local recoding: ours (topdown) against ARX's, one scorer",
        "",
        "Written by `benchmarks/local_recoding_bench.py` (see its docstring for the ARX configuration and the",
        "scorer). Losses are means over quasi-identifier cells, suppressed rows counted as roots; a ratio below 1",
        "means ours loses less. Seconds: ours `pa.anonymize(...).collect()`, ARX reading to optimized output",
        "(its driver's figure, JVM start excluded). CPU seconds: ours the process's CPU time over the same call",
        "(every thread), ARX the JVM process's (its start included). Loads are 1-minute load averages (2 cores).",
        f"Command: {command}",
        "",
        "| " + " | ".join(cols) + " |",
        "|" + "---|" * len(cols),
    ]
    lines += ["| " + " | ".join("" if r[c] is None else str(r[c]) for c in cols) + " |" for r in rows]
    (RESULTS / "local_recoding.md").write_text("\n".join(lines) + "\n")


def main() -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--arx-cp", default=os.environ.get("ARX_CP"), help="classpath of ARX and the ArxLocal driver")
    p.add_argument("--datasets", nargs="+", default=list(datasets.NAMES))
    p.add_argument("--k", nargs="+", type=int, default=[2, 5, 10, 20, 50, 100])
    p.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    p.add_argument("--timeout", type=float, default=600.0, help="seconds before an ARX run is abandoned")
    p.add_argument("--cache", type=Path, default=None, help="directory keeping ARX's outputs between runs")
    p.add_argument("--cached-only", action="store_true", help="ARX from --cache only; runs not cached are noted")
    p.add_argument("--no-write", action="store_true", help="print rows only")
    p.add_argument("--global-start", action="store_true", help="ours with topdown's option global_start=True")
    p.add_argument(
        "--topdown-search",
        default=None,
        choices=("all", "auto", "one"),
        help="ours with topdown's option search (default: its default)",
    )
    p.add_argument("--rows-from", nargs="+", type=Path, help="write the results from the rows printed by earlier runs")
    args = p.parse_args()
    if args.rows_from:
        rows = [json.loads(x) for f in args.rows_from for x in f.read_text().splitlines() if x.startswith("{")]
        write(rows, " and ".join(f"`{x}`" for f in args.rows_from for x in f.read_text().splitlines()[:1]))
        return
    if not args.arx_cp:
        p.error("--arx-cp (or ARX_CP) is required: the classpath of ARX and the ArxLocal driver")
    command = " ".join(x if not x.startswith(("--arx-cp", "/")) or "cache" in x else "..." for x in sys.argv[1:])
    print(f"python benchmarks/local_recoding_bench.py {command}", flush=True)
    rows = bench(args)
    if rows and not args.no_write:
        write(rows, f"`python benchmarks/local_recoding_bench.py {command}`")


if __name__ == "__main__":
    main()

"""The ARX suite's configurations where fulldomain beats ARX: valid on the written file, optimal by an exhaustive walk.

    nice -n 10 python benchmarks/arx_lattice_walk.py [--arx /path/to/arx] [--cases EntropyLDiversity[0],...]

For each case (default: every case `benchmarks/results/arx_privacy_suite.csv` marks ``lower``
or ``higher``), as :mod:`arx_privacy_suite` builds it:

1. ``pa.anonymize(method="fulldomain")`` is written with ``sink_parquet`` (the road checks every
   guarantee on the file as written before renaming it), then the file is read back and checked
   again with ``pa.check`` against every model, the input as ``reference`` (t-closeness etc. as
   enforced), the population matched at the published levels;
2. every vector of the lattice is evaluated (no pruning: the classes of the vector, the classes
   that violate k or a model, the table models' single-class suppression, the objective) and the best
   within the suppression budget is taken by the search's own order (value, then fewer suppressed
   rows, then level sum, then the vector): it must be the vector the search returned. With
   ``--by-bound`` (for lattices whose every evaluation is slow: population uniqueness), the vectors are
   evaluated best-first by the objective's lower bound, the part of the value that suppression does not
   change (entropy: the generalization sum; the pooled term of suppressed rows is >= 0), until the
   bound is above the best value found: no vector left can beat it;
3. ARX's own optimal vector (from its test) is evaluated on the same lattice: its value and
   suppressed rows, so ARX's figure and ours can be compared on one vector.

Writes ``benchmarks/results/arx_lattice_walk.{csv,md}`` with the load average.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import arx_privacy_suite as suite  # noqa: E402

import polars_anon as pa  # noqa: E402
from polars_anon.algorithms import fulldomain  # noqa: E402
from polars_anon.algorithms.objectives import compare  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def walk(found: fulldomain.SearchResult, budget: int) -> tuple[tuple[int, ...] | None, float | None, int, int]:
    """The best vector of the whole lattice within `budget`: (vector, value, suppressed, feasible vectors)."""
    lat, obj = found.lattice, found.scorer
    best: tuple[Any, ...] | None = None
    feasible = 0
    for v in lat.grid():
        ev = lat.evaluate(v.copy())
        if ev.suppressed > budget or ev.suppressed >= lat.n_rows:
            continue
        feasible += 1
        score = obj.value(ev)
        best = _better(best, obj, score, ev.suppressed, tuple(int(x) for x in v))
    if best is None:
        return None, None, 0, 0
    return best[3], float(best[4]), int(best[1]), feasible


def _better(best: tuple[Any, ...] | None, obj: Any, score: Any, suppressed: int, at: tuple[int, ...]) -> tuple:
    """The better of `best` and this vector: the lower objective, then fewer rows suppressed, then lower levels
    (their sum, then the vector), as (key, suppressed, level sum, vector, value)."""
    if best is not None:
        c = compare(score.key, best[0], obj.atol, obj.rtol)
        if c > 0 or (c == 0 and (suppressed, sum(at), at) >= best[1:4]):
            return best
    return (score.key, suppressed, sum(at), at, score.value)


def walk_by_bound(
    found: fulldomain.SearchResult, budget: int
) -> tuple[tuple[int, ...] | None, float | None, int, int, int]:
    """:func:`walk`, best-first: every vector in increasing order of the objective's lower bound (the part of
    the value that does not depend on suppression), evaluated until the bound is above the best value found;
    every vector not evaluated then has a value above the best, so the best is the best of the lattice.
    Each evaluated vector's value is asserted at least its bound (the bound's premise, checked where used).
    Returns (vector, value, suppressed, feasible vectors, evaluated vectors)."""
    lat, obj = found.lattice, found.scorer
    grid = lat.grid()
    bounds = obj.bound(grid)
    order = np.lexsort(bounds.T[::-1])
    best: tuple[Any, ...] | None = None
    feasible = evaluated = 0
    for i in order.tolist():
        if best is not None and compare(bounds[i], best[0], obj.atol, obj.rtol) > 0:
            break  # this bound and every later one is above the best value: no vector left can reach it
        v = grid[i]
        ev = lat.evaluate(v.copy())
        evaluated += 1
        score = obj.value(ev)
        assert compare(score.key, bounds[i], obj.atol, obj.rtol) >= 0, (v, score.key, bounds[i])
        if ev.suppressed > budget or ev.suppressed >= lat.n_rows:
            continue
        feasible += 1
        best = _better(best, obj, score, ev.suppressed, tuple(int(x) for x in v))
    if best is None:
        return None, None, 0, 0, evaluated
    return best[3], float(best[4]), int(best[1]), feasible, evaluated


def run(
    case: suite.Case,
    subset: pl.DataFrame,
    population: pl.DataFrame,
    hs: dict[str, pa.Hierarchy],
    by_bound: bool = False,
) -> dict:
    row: dict[str, Any] = {"case": case.name, "metric": case.metric, "limit": case.limit, "arx": case.expected}
    args = suite.build(case, subset, population, hs)
    data = args.pop("data")
    qids = list(args["hierarchies"])
    captured: dict[str, fulldomain.SearchResult] = {}
    original = fulldomain.search

    def spy(task: Any, max_suppressed: int = 0, settings: Any = None) -> fulldomain.SearchResult:
        captured["found"] = out = original(task, max_suppressed, settings)
        return out

    fulldomain.search = spy
    start = time.perf_counter()
    try:
        res = pa.anonymize(data, method="fulldomain", **args)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "out.parquet"
            res.sink_parquet(path)  # verified on the file as written
            written = pl.read_parquet(path)
    finally:
        fulldomain.search = original
    row["search_seconds"] = round(time.perf_counter() - start, 2)
    found = captured["found"]
    levels = [int(found.levels[q]) for q in qids]
    row["ours"] = float(res.report["details"]["objective"]["value"])
    row["levels"] = str(levels)
    row["suppressed"] = res.report["suppressed"]
    # 1. the written file, checked again with pa.check
    models = args["privacy"]
    if any(m.needs_population_table for m in models):
        got = pa.check(
            written,
            qids,
            models,
            k=args["k"],
            hierarchies=args["hierarchies"],
            reference=data,
            levels=dict(zip(qids, levels)),
        )
    elif any(m.uses_distribution for m in models):
        got = pa.check(written, qids, models, k=args["k"], reference=data)
    else:  # a reference is refused where no model reads a distribution
        got = pa.check(written, qids, models, k=args["k"])
    row["valid"] = bool(got["k_anonymous"] and all(m["satisfied"] for m in got["models"]))
    # 2. the exhaustive walk
    start = time.perf_counter()
    if by_bound:
        best, value, suppressed, feasible, row["evaluated_vectors"] = walk_by_bound(found, args["max_suppressed"])
    else:
        best, value, suppressed, feasible = walk(found, args["max_suppressed"])
    row["walk_seconds"] = round(time.perf_counter() - start, 2)
    row["vectors"] = len(found.lattice.grid())
    row["feasible_vectors"] = feasible
    row["walk_levels"] = str(list(best)) if best is not None else None
    row["walk_value"] = value
    row["optimal"] = best is not None and list(best) == levels and suppressed == row["suppressed"]
    # 3. ARX's vector on our lattice
    if case.vector is not None and len(case.vector) == len(qids):
        ev = found.lattice.evaluate(np.array(case.vector, dtype=np.int64))
        row["arx_levels"] = str(case.vector)
        row["arx_vector_ours"] = float(found.scorer.value(ev).value)  # type: ignore[arg-type]
        row["arx_vector_suppressed"] = int(ev.suppressed)
        row["arx_vector_feasible"] = int(ev.suppressed) <= args["max_suppressed"]
    row["load"] = os.getloadavg()[0]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--arx", default=os.environ.get("ARX", "/work/peers/arx"), help="an ARX checkout")
    parser.add_argument("--cases", help="comma-separated case names (default: the lower and higher ones)")
    parser.add_argument("--rows", nargs="+", help="write the results from the rows printed by earlier runs (logs)")
    parser.add_argument(
        "--by-bound",
        action="store_true",
        help="walk best-first by the objective's lower bound, stopping above the best value (walk_by_bound)",
    )
    args = parser.parse_args()
    if args.rows:
        import ast

        found = {}
        for log in args.rows:
            for line in Path(log).read_text().splitlines():
                if line.startswith("{"):
                    row = ast.literal_eval(line)
                    found[row["case"]] = row  # a later run of a case replaces an earlier one
        write(list(found.values()), "arx_lattice_walk")
        return
    arx = Path(args.arx)
    if args.cases:
        names = args.cases.split(",")
    else:
        done = pl.read_csv(RESULTS / "arx_privacy_suite.csv")
        names = done.filter(pl.col("outcome").is_in(["lower", "higher"]))["case"].to_list()
    cases = [c for c in suite.read_cases(arx, None) if c.name in names]
    population = pl.read_csv(suite.ADULT / "adult.csv", separator=";", infer_schema=False)
    subset = pl.read_csv(arx / "data" / "adult_subset.csv", separator=";", infer_schema=False)
    hs = {q: pa.Hierarchy.from_csv(suite.ADULT / f"adult_hierarchy_{q}.csv") for q in suite.ALL9}
    rows = []
    for case in cases:
        row = run(case, subset, population, hs, args.by_bound)
        print(row, flush=True)
        rows.append(row)
    stem = (
        "arx_lattice_walk"
        if not args.cases
        else "arx_lattice_walk_" + "_".join(n.replace("[", "").replace("]", "") for n in names)
    )
    write(rows, stem)


def write(rows: list[dict], stem: str) -> None:
    """``benchmarks/results/<stem>.{csv,md}`` from the rows of :func:`run`."""
    RESULTS.mkdir(exist_ok=True)
    table = pl.DataFrame(rows, infer_schema_length=None)
    table.write_csv(RESULTS / f"{stem}.csv")
    load = table["load"]
    lines = [
        "# ARX's suite: the configurations where fulldomain differs from ARX, walked exhaustively",
        "",
        f"`nice -n 10 python benchmarks/arx_lattice_walk.py`; 1-minute load {load.min():.1f} to {load.max():.1f}; "
        "the seconds of each search and walk are in the CSV.",
        "valid: the written file passes `pa.check` (every model, the input as reference); optimal: the search's vector",
        "is the best of every vector of the lattice within the budget; ARX's vector: its value and suppressed rows",
        "on our lattice (feasible: within the budget).",
        *(
            [
                "Walked best-first by the objective's lower bound (`--by-bound`; every vector whose bound is at most"
                " the best value evaluated, the rest cannot reach it): "
                + ", ".join(
                    f"{r['case']} ({r['evaluated_vectors']} of {r['vectors']} vectors evaluated)"
                    for r in rows
                    if r.get("evaluated_vectors")
                )
                + "."
            ]
            if any(r.get("evaluated_vectors") for r in rows)
            else []
        ),
        "",
        "| case | metric | limit | ARX | ours | valid | optimal | vectors | ARX's vector: ours, suppressed, feasible |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        *(
            f"| {r['case']} | {r['metric']} | {r['limit']} | {r['arx']} | {r['ours']} | {r['valid']} | {r['optimal']} "
            f"| {r['vectors']} | {r.get('arx_vector_ours')}, {r.get('arx_vector_suppressed')}, "
            f"{r.get('arx_vector_feasible')} |"
            for r in rows
        ),
    ]
    (RESULTS / f"{stem}.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

"""What the driver holds as a register grows: its class aggregates and the method run on them.

On DuckDB and Spark the driver never sees a row: it receives one row per distinct qid tuple
(the class aggregates) and runs the checks, the method and the report on them
(:func:`polars_anon.pipeline.road.plan_request`, the same code every engine calls). This script
measures that part alone, for registers too large to generate here: the demo generator draws
zip, gender, race and birth year independently, so the tuple counts of an n-row register are
one multinomial draw over the product of their probabilities (the same distribution as
generating the rows; not the same rows). Each (rows, zips, method) runs in a fresh process:
the driver's seconds and its peak RSS (``ru_maxrss``: Python, Polars, NumPy; the aggregates
arrive as Parquet here, as Arrow from an engine).

``--zips`` sets the number of zip codes: 1,500 is the demo's (a state's register); 40,000
is a national one, whose universe of possible tuples is 27 times larger. Results:
benchmarks/results/driver.md.

    python benchmarks/driver_bench.py [--rows 15000000 150000000 200000000] [--zips 1500 40000] \
        [--methods fulldomain mondrian greedy]
    python benchmarks/driver_bench.py --quick --out /tmp/x      # 100,000 rows, 1,500 zips, fulldomain (the smoke test)
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

import numpy as np
import polars as pl

from polars_anon.demo import DEMO_QIDS, GENDERS, RACES, _years, demo_hierarchy_specs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sections import replace_section

RESULTS = Path(__file__).resolve().parent / "results"
TITLE = "What the driver holds: class aggregates and the method on them (benchmarks/driver_bench.py)"
ROWS = (15_000_000, 150_000_000, 200_000_000)
ZIPS = (1_500, 40_000)
METHODS = ("fulldomain", "mondrian", "greedy")
SCHEMA = pl.Schema({"zip": pl.String, "gender": pl.String, "race": pl.String, "birth_year": pl.Int64})


def zip_codes(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """`n` five-digit zips with the demo's Zipf-like weights (for 1,500 zips, exactly the demo's; see demo._zips)."""
    rng = np.random.default_rng([seed, 0])
    low, high = (32000, 35000) if n <= 1500 else (10000, 100000)
    codes = np.sort(rng.choice(np.arange(low, high), n, replace=False))
    weights = 1.0 / (rng.permutation(n) + 8.0) ** 1.1
    return np.char.zfill(codes.astype(str), 5), weights / weights.sum()


def draw_aggregates(rows: int, zips: int, seed: int = 0) -> pl.DataFrame:
    """The class aggregates of a generated `rows`-row register with `zips` zip codes: one multinomial draw.

    >>> a = draw_aggregates(1000, 1500)
    >>> a.columns, int(a["size"].sum())
    (['zip', 'gender', 'race', 'birth_year', 'size'], 1000)
    """
    values = [
        zip_codes(zips, seed),
        (np.array(GENDERS[0]), np.array(GENDERS[1])),
        (np.array(RACES[0]), np.array(RACES[1])),
        _years(),
    ]
    p = np.ones(1)
    for _, q in values:
        p = np.multiply.outer(p, q / q.sum()).ravel()
    counts = np.random.default_rng([seed, 7]).multinomial(rows, p / p.sum())
    del p
    where = np.flatnonzero(counts)
    index = np.unravel_index(where, [len(v) for v, _ in values])
    columns = {q: pl.Series(q, v[i]) for q, (v, _), i in zip(DEMO_QIDS, values, index)}
    frame = pl.DataFrame(columns).with_columns(
        pl.col("birth_year").cast(pl.Int64), size=pl.Series(counts[where], dtype=pl.UInt32)
    )
    return frame.sort(DEMO_QIDS)


def expected_tuples(rows: int, zips: int, seed: int = 0) -> float:
    """Expected distinct tuples of a `rows`-row register: sum over possible tuples of 1 - (1 - p)^rows."""
    p = np.ones(1)
    for q in (zip_codes(zips, seed)[1], np.asarray(GENDERS[1], float), np.asarray(RACES[1], float), _years()[1]):
        p = np.multiply.outer(p, q / q.sum()).ravel()
    return float(-np.expm1(rows * np.log1p(-p)).sum())


def drive(aggregates_path: Path, method: str, k: int = 10) -> dict[str, Any]:
    """The driver's part on the aggregates at `aggregates_path` (run in a fresh process): seconds and peak RSS."""
    from polars_anon.job import build_hierarchies
    from polars_anon.pipeline.road import plan_request
    from polars_anon.pipeline.state import Aggregated
    from polars_anon.request import check_request

    start = time.perf_counter()
    table = pl.read_parquet(aggregates_path)  # what an engine hands over (as Arrow)
    hierarchies = build_hierarchies(table.lazy(), demo_hierarchy_specs())
    table = table.with_columns(pl.col(q).cast(pl.String) for q in DEMO_QIDS)
    received = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    request = check_request(SCHEMA, hierarchies=hierarchies, k=k, method=method)
    planned = plan_request(
        Aggregated(pl.LazyFrame(), table.select(*DEMO_QIDS, "size"), 0, None, table, None),
        request,
        SCHEMA,
        start,
        "spark",
    )
    seconds = time.perf_counter() - start
    report = planned.facts
    return {
        "seconds": round(seconds, 1),
        "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "received_mb": round(received),
        "classes": planned.plan.map.published_sizes().height,
        "suppressed": report["suppressed"],
    }


def measure(folder: Path, rows: int, zips: int, methods: list[str], timeout: int = 1800) -> list[dict[str, Any]]:
    """Draw the aggregates once, write them as Parquet, run each method in a fresh process.

    Each process is stopped after `timeout` s.
    """
    start = time.perf_counter()
    table = draw_aggregates(rows, zips)
    drawn = time.perf_counter() - start
    path = folder / f"aggregates_{rows}_{zips}.parquet"
    table.write_parquet(path)
    base = {
        "rows": rows,
        "zips": zips,
        "tuples": table.height,
        "expected": expected_tuples(rows, zips),
        "arrow_mb": table.estimated_size() / 2**20,
    }
    del table
    results = []
    for method in methods:
        load = os.getloadavg()[0]
        code = (
            f"import sys, json; sys.path.insert(0, {str(Path(__file__).parent)!r}); import driver_bench "
            f"as d; print(json.dumps(d.drive(__import__('pathlib').Path({str(path)!r}), {method!r})))"
        )
        try:
            done = subprocess.run(
                [sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            done = subprocess.CompletedProcess([], 1, "", f"stopped after {timeout:,} s")
        if done.returncode:
            r = {"error": (done.stderr.strip().splitlines() or ["killed"])[-1]}
        else:
            r = json.loads(done.stdout.strip().splitlines()[-1])
        r |= base | {"method": method, "load": round(load, 2), "draw_s": round(drawn, 1)}
        print(r, flush=True)
        results.append(r)
    path.unlink()
    return results


HEADER = [
    "| rows | zips | qid tuples (expected) | aggregates in Arrow (MB) | method | driver (s) | "
    "driver peak (MB) | after receiving (MB) | classes | suppressed | load (1 min) |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
]


def row_text(r: dict[str, Any]) -> str:
    if "error" in r:
        figures = [r["error"], "", "", "", ""]
    else:
        figures = [r["seconds"], r["peak_mb"], r["received_mb"], f"{r['classes']:,}", f"{r['suppressed']:,}"]
    cells = [
        f"{r['rows']:,}",
        f"{r['zips']:,}",
        f"{r['tuples']:,} ({r['expected']:,.0f})",
        f"{r['arrow_mb']:.0f}",
        r["method"],
        *figures,
        r["load"],
    ]
    return "| " + " | ".join(map(str, cells)) + " |"


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=list(ROWS))
    parser.add_argument("--zips", type=int, nargs="+", default=list(ZIPS))
    parser.add_argument("--methods", nargs="+", default=list(METHODS))
    parser.add_argument("--timeout", type=int, default=1800, help="seconds a method may run (default 1800)")
    parser.add_argument("--quick", action="store_true", help="100,000 rows, 1,500 zips, fulldomain")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.zips, args.methods = [100_000], [1_500], ["fulldomain"]
    args.out.mkdir(parents=True, exist_ok=True)
    command = "python benchmarks/driver_bench.py " + " ".join(argv if argv is not None else sys.argv[1:])
    order = [*(section(z) for z in sorted({*ZIPS, *args.zips})), "Notes"]
    results = []
    with tempfile.TemporaryDirectory(prefix="driver_bench_") as tmp:
        for zips in args.zips:
            runs = [r for rows in args.rows for r in measure(Path(tmp), rows, zips, args.methods, args.timeout)]
            body = "\n".join([f"Command: `{command}`.", "", *HEADER, *map(row_text, runs)])
            replace_section(args.out / "driver.md", TITLE, section(zips), body, order)
            results += runs
    replace_section(args.out / "driver.md", TITLE, "Notes", NOTES, order)
    return results


def section(zips: int) -> str:
    return f"{zips:,} zip codes" + (
        " (the demo's: a state's register)" if zips == 1500 else " (a national register)" if zips == 40_000 else ""
    )


NOTES = """qid tuples = the aggregates' rows (drawn), with the expected count beside it. aggregates in Arrow = their
in-memory size as they reach the driver. driver (s) = reading them, building the hierarchies, the method and the
report (`plan_request`); driver peak = the process's peak RSS, after receiving = its peak once the aggregates were
read and the hierarchies built. k = 10, the demo job's hierarchies (zip masked digit by digit, gender and race
suppressed, birth year in 5-, 10-, 20-year bands). The publish, write and verify steps run on the engine, not here."""


if __name__ == "__main__":
    main()

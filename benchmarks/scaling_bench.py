"""Scaling without a cluster: the demo register's job at 1M, 15M and 150M rows on Polars and on Spark local mode.

The register (``polars_anon.demo.write_voter_register``: the demo's rows and distributions,
generated 1M rows at a time into one Parquet file, so never more than one chunk in memory)
is anonymized by ``polars-anon anonymize job.toml --engine E`` through ``engines_bench.run``:
wall time, seconds per million rows, peak RSS of the largest process and of the process tree,
seconds to the tuple map (aggregation and method) and to publish, verify and write. Beside
them: the aggregate rows the driver held (distinct qid tuples, counted here by a streamed
Polars group-by on the input and required to equal the engine's own count), the input and
output bytes per row on disk (the network figure of a cluster plan) and the load average.
Each register is deleted once its runs are done. Results: benchmarks/results/scaling.md,
a section per size.

    python benchmarks/scaling_bench.py [--rows 1000000 15000000 150000000] [--engines polars spark] \
        [--methods fulldomain]
    python benchmarks/scaling_bench.py --estimate --rows 150000000   # time the first 5M rows, extrapolate time and disk
    python benchmarks/scaling_bench.py --quick --out /tmp/x          # 20,000 rows, Polars only (the smoke test)
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

from polars_anon.demo import CHUNK, DEMO_QIDS, GENDERS, N_ZIPS, RACES, _years, _zips, write_rows, write_voter_register

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engines_bench import _job, run
from sections import replace_section

RESULTS = Path(__file__).resolve().parent / "results"
TITLE = "Scaling on one machine: Polars and Spark local mode (benchmarks/scaling_bench.py)"
SIZES = (1_000_000, 15_000_000, 150_000_000)
ENGINES = ("polars", "spark")
QUICK_ROWS = 20_000
UNIVERSE = N_ZIPS * len(GENDERS[0]) * len(RACES[0]) * len(_years()[0])  # every possible (zip, gender, race, birth_year)


def distinct_tuples(data: Path) -> int:
    """The class aggregates' row count: distinct qid tuples of the input, by a streamed group-by."""
    return pl.scan_parquet(data).group_by(DEMO_QIDS).len().select(pl.len()).collect().item()


def expected_tuples(rows: int, seed: int = 0) -> float:
    """Expected distinct qid tuples among `rows` generated voters: the sum over every possible tuple t of
    1 - (1 - p_t)^rows, p_t the product of the generator's independent zip, gender, race and birth-year probabilities.

    >>> round(expected_tuples(1))
    1
    """
    probabilities = [_zips(seed)[1], *(np.asarray(p, dtype=float) for p in (GENDERS[1], RACES[1])), _years()[1]]
    p = np.ones(1)
    for q in probabilities:
        p = np.multiply.outer(p, q / q.sum()).ravel()
    return float(-np.expm1(rows * np.log1p(-p)).sum())


def disk_bytes(path: Path) -> int:
    """Bytes on disk of a file, or of every file in a folder (Spark writes a folder)."""
    return path.stat().st_size if path.is_file() else sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def measure(folder: Path, rows: int, engines: list[str], methods: list[str], master: str) -> list[dict[str, Any]]:
    """Generate the register of `rows` voters, run every method on every engine, delete the register."""
    data = write_voter_register(folder / f"voters_{rows}.parquet", rows)
    input_bytes, tuples = disk_bytes(data), distinct_tuples(data)
    results = []
    for method in methods:
        job, first = _job(folder, data, method), None
        for engine in engines:
            r = run(job, engine, master)
            if r["classes"] != tuples:
                raise RuntimeError(f"{engine} aggregated {r['classes']:,} qid tuples, the input has {tuples:,}")
            first = first or r
            same = (r["digest"], r["rows"]) == (first["digest"], first["rows"])
            output_bytes = disk_bytes(folder / "out.parquet")
            r |= {
                "n": rows,
                "method": method,
                "tuples": tuples,
                "input_bytes": input_bytes,
                "output_bytes": output_bytes,
                "same": same,
            }
            print(rows, method, r, flush=True)
            results.append(r)
    data.unlink()
    return results


def row_text(r: dict[str, Any]) -> str:
    """One table row of a run (as `measure` returns it)."""
    n = r["n"]
    cells = [
        f"{n:,}",
        r["method"],
        r["engine"],
        r["wall_s"],
        f"{r['wall_s'] / (n / 1e6):.1f}",
        r["largest_mb"],
        r["tree_mb"],
        f"{r['map_s']:.1f}",
        f"{r['write_s']:.1f}",
        f"{r['tuples']:,}",
        f"{r['rows']:,}",
        f"{r['input_bytes'] / 2**20:.1f}",
        f"{r['input_bytes'] / n:.2f}",
        f"{r['output_bytes'] / n:.2f}",
        "yes" if r["same"] else "NO",
        r["load"],
    ]
    return "| " + " | ".join(map(str, cells)) + " |"


HEADER = [
    (
        "| rows | method | engine | wall (s) | s/M rows | largest (MB) | tree (MB) | to map (s) | "
        "write (s) | qid tuples on the driver "
        "| published rows | input (MB) | input B/row | output B/row | same rows as polars | load (1 min) |"
    ),
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
]


def estimate(folder: Path, rows: int, sample: int = 5 * CHUNK) -> dict[str, float]:
    """Time the first `sample` rows of the `rows`-row register (the chunks it starts with) and extrapolate to `rows`."""
    sample = min(sample, rows)
    load, start = os.getloadavg()[0], time.perf_counter()
    part = write_rows(folder / "first_chunks.parquet", sample)
    seconds, size = time.perf_counter() - start, part.stat().st_size
    part.unlink()
    return {
        "rows": rows,
        "sample": sample,
        "seconds": seconds,
        "bytes": size,
        "load": load,
        "tuples": expected_tuples(rows),
        "expected_seconds": seconds * rows / sample,
        "expected_bytes": size * rows / sample,
    }


def estimate_text(e: dict[str, float]) -> str:
    return (
        f"Generating the first {e['sample']:,} rows ({e['sample'] / CHUNK:g} chunks) took {e['seconds']:.1f} s and "
        f"{e['bytes'] / 2**20:.1f} MB ({e['bytes'] / e['sample']:.2f} B/row), load {e['load']:.2f}: "
        f"the {e['rows']:,}-row "
        f"register should take about {e['expected_seconds'] / 60:.1f} min and "
        f"{e['expected_bytes'] / 2**30:.2f} GB on disk. "
        f"Its expected distinct qid tuples (the driver's aggregate rows; `expected_tuples`): {e['tuples']:,.0f}."
    )


def notes() -> str:
    """The results file's closing section: the input, the generator's universe, the columns."""
    expected = ", ".join(f"{expected_tuples(n):,.0f} at {n / 1e6:g}M rows" for n in (*SIZES, 200_000_000))
    return f"""Input: one Parquet file per size, written chunk by chunk ({CHUNK:,} rows a chunk) by
`polars_anon.demo.write_voter_register`, the demo's own rows: the same seeds, distributions and unique `voter_id`s.
(A job's `input` may also be a folder of Parquet parts, as Spark writes them; every engine reads the parts in name \
order.)

The generator's universe does not grow with the rows: {N_ZIPS:,} zips x {len(GENDERS[0])} genders x \
{len(RACES[0])} races
x {len(_years()[0])} birth years = {UNIVERSE:,} possible qid tuples. So the driver's aggregates grow sublinearly
and stop at {UNIVERSE:,} rows whatever the register's size: a state's register. A national one (about 40,000 zips)
has a universe some {40_000 / N_ZIPS:.0f} times larger, so its driver holds more than these figures show. \
The expected count, the sum
over the possible tuples of 1 - (1 - p)^rows (`expected_tuples`; compare the measured counts above), is
{expected}.

s/M rows = wall / (rows / 1M), start-up included. largest = peak RSS of the largest process (/usr/bin/time -v; Spark:
the JVM, driver and executors in one); tree = peak RSS of the process tree (Python + JVM), sampled every 0.2 s.
to map = request to tuple map (aggregation, the method on the driver); write = publish, write, re-check the written
file. qid tuples = aggregate rows on the driver (a streamed group-by on the input; equal to the engine's count)."""


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, nargs="+", default=list(SIZES))
    ap.add_argument("--engines", nargs="+", default=list(ENGINES), choices=ENGINES)
    ap.add_argument("--methods", nargs="+", default=["fulldomain"])
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--estimate", action="store_true", help="only time the first 5M rows of each size's register")
    ap.add_argument("--quick", action="store_true", help=f"smoke run: {QUICK_ROWS:,} rows, Polars only")
    ap.add_argument("--out", type=Path, default=RESULTS, help="folder of scaling.md")
    args = ap.parse_args(argv)
    if args.quick:
        args.rows, args.engines = [QUICK_ROWS], ["polars"]
    command = "python benchmarks/scaling_bench.py " + " ".join(sys.argv[1:] if argv is None else argv)
    sizes = sorted({*SIZES, *args.rows})
    order = [f"{n:,} rows" for n in sizes] + [f"{n:,} rows: generation estimate" for n in sizes] + ["Notes"]
    args.out.mkdir(parents=True, exist_ok=True)
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for rows in args.rows:
            if args.estimate:
                name = f"{rows:,} rows: generation estimate"
                body = f"Command: `{command}`.\n\n{estimate_text(estimate(Path(tmp), rows))}"
            else:
                found = measure(Path(tmp), rows, args.engines, args.methods, args.master)
                results += found
                name = f"{rows:,} rows"
                head = f"Command: `{command}`. Spark in local mode (`--master {args.master}`)."
                body = "\n".join([head, "", *HEADER, *map(row_text, found)])
            replace_section(args.out / "scaling.md", TITLE, name, body, order)
            print(body, flush=True)
    replace_section(args.out / "scaling.md", TITLE, "Notes", notes(), order)
    return results


if __name__ == "__main__":
    main()

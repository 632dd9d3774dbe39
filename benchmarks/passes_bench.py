"""Passes over the input: how often each engine's road reads the input Parquet file for one job.

    python benchmarks/passes_bench.py [--rows 200000] [--engines polars duckdb spark]

The job: a generated register (:func:`polars_anon.demo.voter_register`, seed 0) of `rows` rows with
three qids with built-in hierarchies (``zip`` masked, ``gender`` suppressed, ``birth_year`` in
bands) and one undeclared column (``party``), k = 10, fulldomain; run plain, with l-diversity
(``party``, l = 2) and with ``encode = ["proportional"]`` (Polars only), through the job road
(:func:`polars_anon.job.run_job`, what the CLI runs).

A read is one query that scans the input file with at least one column (:class:`Reads`):

- Polars: every executed query (``LazyFrame.collect``, ``collect_all``, ``sink_*``,
  ``collect_batches``) counts the ``Parquet SCAN [<input>]`` nodes of its optimized plan;
  a scan that projects no column (``select(pl.len())``: the row count from the Parquet
  metadata) is counted apart as ``metadata``, not as a read;
- pyarrow: every ``pyarrow.parquet.ParquetFile`` opened on the input counts one read (the Polars
  road's tuple pass from the Parquet dictionaries opens the file once and reads its row groups);
- DuckDB and Spark: every query the engine runs over the input (the engine's group-by,
  distinct counts, collect and write) counts the input file's scans in its SQL or logical plan;
  a DuckDB query that asks for no row (``LIMIT 0``: the engine's check that a table can be
  queried at all) is counted apart as ``metadata``.

Prints a table and writes benchmarks/results/passes.md (a section per row count).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's package, not the installed one

from polars_anon.demo import voter_register
from polars_anon.job import Job, run_job

RESULTS = ROOT / "benchmarks" / "results"
TITLE = "Passes over the input (benchmarks/passes_bench.py)"
QIDS = {"zip": {"mask": 5}, "gender": "suppress", "birth_year": {"intervals": [5, 10, 20]}}
VARIANTS: dict[str, dict[str, Any]] = {
    "plain": {},
    "l-diversity": {"privacy": [{"model": "l-diversity", "attribute": "party", "l": 2}]},
    "proportional": {"encode": ["proportional"]},
}


class Reads:
    """Counts the queries that read `path` (see the module docstring), by engine method or Polars query."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)
        self.reads = 0
        self.metadata = 0
        self.log: list[str] = []
        self.tainted = {self.path}  # the input file, and the names of engine views over it
        self._depth = 0

    def polars(self, lf: pl.LazyFrame, what: str) -> None:
        try:
            plan = lf.explain()
        except Exception:  # noqa: BLE001 - a plan that cannot be explained is not one of ours
            return
        lines = plan.splitlines()
        for i, line in enumerate(lines):
            if f"SCAN [{self.path}" in line:
                rest = " ".join(lines[i + 1 : i + 3])
                if "PROJECT 0/" in rest:
                    self.metadata += 1
                else:
                    self.reads += 1
                    self.log.append(what)

    def pyarrow(self, source: object) -> None:
        if str(source) == self.path:
            self.reads += 1
            self.log.append("pyarrow ParquetFile")

    def text(self, text: str, what: str, query: str = "") -> None:
        n = sum(text.count(name) for name in self.tainted)
        if query.rstrip().endswith("LIMIT 0"):  # no row asked: DuckDB reads the schema only
            self.metadata += n
            return
        self.reads += n
        self.log += [what] * n

    @contextmanager
    def installed(self) -> Iterator[Reads]:
        """Patch Polars' query entry points and the engines' query methods for the duration."""
        patches: list[tuple[Any, str, Any]] = []

        def patch(owner: Any, name: str, wrap: Callable[[Any], Any]) -> None:
            if hasattr(owner, name):
                original = getattr(owner, name)
                patches.append((owner, name, original))
                setattr(owner, name, wrap(original))

        def outer(count: Callable[..., None]) -> Callable[[Any], Any]:
            def wrap(original: Any) -> Any:
                def run(*args: Any, **kwargs: Any) -> Any:
                    if self._depth == 0:
                        count(*args, **kwargs)
                    self._depth += 1
                    try:
                        return original(*args, **kwargs)
                    finally:
                        self._depth -= 1

                return run

            return wrap

        for name in ("collect", "sink_parquet", "sink_ipc", "sink_csv", "collect_batches", "profile"):
            patch(pl.LazyFrame, name, outer(lambda lf, *a, _n=name, **k: self.polars(lf, _n)))
        patch(pl, "collect_all", outer(lambda lfs, *a, **k: [self.polars(lf, "collect_all") for lf in lfs]))
        patch(pq.ParquetFile, "__init__", outer(lambda pf, source, *a, **k: self.pyarrow(source)))
        self._engines(patch, outer)
        try:
            yield self
        finally:
            for owner, name, original in reversed(patches):
                setattr(owner, name, original)

    def _engines(self, patch: Callable[..., None], outer: Callable[..., Any]) -> None:
        from polars_anon.engines.duckdb import DuckDBEngine

        def view(original: Any) -> Any:
            def run(eng: Any, rel: Any) -> str:
                name = original(eng, rel)
                if any(t in rel.sql_query() for t in self.tainted):
                    self.tainted.add(name)
                return name

            return run

        patch(DuckDBEngine, "view", view)
        patch(DuckDBEngine, "_fetch", outer(lambda eng, rel, q, *a, **k: self.text(rel.sql_query(), "duckdb query", q)))
        for name in ("write", "to_polars"):
            patch(DuckDBEngine, name, outer(lambda eng, rel, *a, _n=name, **k: self.text(rel.sql_query(), _n)))
        try:
            from polars_anon.engines.spark import SparkEngine
        except ImportError:  # pragma: no cover - Spark not installed
            return

        def spark_plan(df: Any) -> str:
            return " ".join(df.inputFiles())

        patch(SparkEngine, "distinct", outer(lambda eng, df, *a, **k: self.text(spark_plan(df), "spark distinct")))
        for name in ("write", "to_polars"):
            patch(SparkEngine, name, outer(lambda eng, df, *a, _n=name, **k: self.text(spark_plan(df), _n)))


def write_input(path: Path, rows: int) -> Path:
    """The register's three qids and one undeclared column."""
    voter_register(rows, seed=0).select("zip", "gender", "birth_year", "party").write_parquet(path)
    return path


def job_keys(data: Path, output: Path, engine: str, variant: str) -> dict[str, Any]:
    keys = {"input": str(data), "output": str(output), "k": 10, "method": "fulldomain", "engine": engine}
    keys |= {"qids": {q: {"hierarchy": s} for q, s in QIDS.items()}, "report_html": False, **VARIANTS[variant]}
    if engine == "spark":
        keys["spark"] = {"master": "local[2]", "config": {"spark.sql.shuffle.partitions": 4}}
    return keys


def count_reads(data: Path, folder: Path, engine: str, variant: str) -> Reads:
    """Run the job once, counting its reads of `data`."""
    folder.mkdir(parents=True, exist_ok=True)
    reads = Reads(data)
    job = Job.from_dict(job_keys(data, folder / "out.parquet", engine, variant))
    with reads.installed():
        run_job(job)
    return reads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--engines", nargs="+", default=["polars", "duckdb", "spark"])
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    lines = [
        (
            f"{args.rows:,}-row register (zip, gender, birth_year with built-in hierarchies; party undeclared), "
            f"k = 10, fulldomain, through the job road. Load at start: {os.getloadavg()[0]:.2f}."
        ),
        "",
        "| engine | variant | reads of the input | metadata-only scans | seconds |",
        "| --- | --- | --- | --- | --- |",
    ]
    with tempfile.TemporaryDirectory(prefix="passes_") as tmp:
        data = write_input(Path(tmp) / "register.parquet", args.rows)
        for engine in args.engines:
            for variant in VARIANTS:
                if variant == "proportional" and engine != "polars":
                    continue  # encodings run on the Polars engine only
                start = time.perf_counter()
                reads = count_reads(data, Path(tmp) / f"{engine}-{variant}", engine, variant)
                seconds = time.perf_counter() - start
                print(f"{engine:7} {variant:13} reads {reads.reads:3}  metadata {reads.metadata}  {seconds:.1f} s")
                print(f"        {reads.log}")
                lines.append(f"| {engine} | {variant} | {reads.reads} | {reads.metadata} | {seconds:.1f} |")
    lines.append(f"\nLoad at end: {os.getloadavg()[0]:.2f}.")
    if not args.no_write:
        (RESULTS / "passes.md").write_text(f"# {TITLE}\n\n" + "\n".join(lines) + "\n")
        print(f"wrote {RESULTS / 'passes.md'}")


if __name__ == "__main__":
    main()

"""The anonymization pipeline: one straight road.

scan -> :func:`~polars_anon.request.check_request` (parameters, before any data is
read) -> class aggregates (the one pass over the data, which also counts the
distinct values of undeclared columns) -> :func:`~polars_anon.request.check_data`
-> the method, on the aggregates -> a :class:`~polars_anon.tuplemap.TupleMap` ->
:func:`~polars_anon.publish.publish` (the one publish step) -> the independent
check of every guarantee on the published rows (fail closed) -> outputs, all or
nothing (:class:`~polars_anon.outputs.Outputs`) -> the report
(:func:`~polars_anon.report.build_report`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from polars_anon._types import Method, NullPolicy
from polars_anon._validate import as_lazy
from polars_anon.algorithms import Plan, Task
from polars_anon.attributes import distinct_counts
from polars_anon.classes import class_sizes
from polars_anon.errors import InvalidParameterError, NotKAnonymousError
from polars_anon.hierarchy import Hierarchy
from polars_anon.io import report_path
from polars_anon.outputs import Outputs, staged_write
from polars_anon.publish import publish
from polars_anon.report import build_report, jsonable
from polars_anon.request import Request, check_data, check_request
from polars_anon.tuplemap import SIZE
from polars_anon.verify import Verifier, verify_k

__all__ = ["Anonymized", "anonymize", "prepare", "verify_k"]

OUTPUT_SUFFIXES = (".parquet", ".pq")


@dataclass
class Anonymized:
    """An anonymization: the published LazyFrame, its report and its independent check.

    Nothing is verified until :meth:`collect` or :meth:`sink_parquet`, which run the
    check of every guarantee on the published rows and refuse to return or write a
    table that fails it.
    """

    lf: pl.LazyFrame
    report: dict[str, Any]
    verifier: Verifier
    prepared: pl.LazyFrame
    """The prepared input the map was computed from (identifying columns dropped,
    qids as String labels, nulls at the roots under ``null="suppress"``)."""

    def lazy(self) -> pl.LazyFrame:
        """The published table as a LazyFrame (not yet verified: collect or sink to verify)."""
        return self.lf

    def collect(self) -> pl.DataFrame:
        """Collect the published table after checking every guarantee on it."""
        df = self.lf.collect()
        self.report.update(self.verifier(df.lazy()))
        return df

    def stage(self, out: Outputs, path: str | Path) -> None:
        """Write the table into the output set `out`: to a temporary file, verified from the written bytes.

        The caller commits `out` (renaming every output into place) once all are written.
        """
        path = Path(path)
        if path.suffix.lower() not in OUTPUT_SUFFIXES:
            raise InvalidParameterError(f"output {str(path)!r} must end in .parquet (the published table is written as Parquet)")
        if path.is_dir():
            raise InvalidParameterError(f"output {str(path)!r} is a folder; give a file path ending in .parquet")
        start = time.perf_counter()

        def write(tmp: Path) -> dict[str, Any]:
            self.lf.sink_parquet(tmp)
            return self.verifier(pl.scan_parquet(tmp))

        self.report.update(staged_write(out, path, write))
        self.report["write_seconds"] = round(time.perf_counter() - start, 3)
        self.report["output"] = str(path)

    def sink_parquet(self, path: str | Path, *, overwrite: bool = False, report: bool | str | Path = True) -> dict[str, Any]:
        """Write the published table to Parquet, verified, and its report JSON beside it; all or nothing.

        The table is streamed to a temporary file in the target folder, re-read and
        checked, and only then renamed to `path` together with the report (to
        ``<stem>.report.json``, or the path given as `report`; False skips it). An
        existing output is refused unless `overwrite`; on any failure or interrupt
        nothing new remains and nothing that existed is touched. Returns the report.
        """
        with Outputs(overwrite=overwrite) as out:
            target = report_path(path) if report is True else (Path(report) if report else None)
            if target is not None:
                out.check(target)
            self.stage(out, path)
            if target is not None:
                write_report(out, self.report, target)
            out.commit()
        return self.report


def write_report(out: Outputs, report: dict[str, Any], path: Path) -> None:
    """Stage the report JSON in `out`."""
    staged_write(out, path, lambda tmp: tmp.write_text(json.dumps(jsonable(report), indent=2) + "\n"))


def prepare(lf: pl.LazyFrame, request: Request) -> pl.LazyFrame:
    """The input as the methods see it: identifying columns dropped, qids as String labels."""
    return lf.drop(list(request.drop)).with_columns(pl.col(q).cast(pl.String) for q in request.qids)


def _aggregate(prepared: pl.LazyFrame, request: Request) -> tuple[pl.DataFrame, dict[str, int]]:
    """The class aggregates and the distinct counts of undeclared columns: one pass over the data."""
    undeclared = request.undeclared
    queries = [class_sizes(prepared, request.qids)]
    if undeclared:
        queries.append(distinct_counts(prepared, undeclared))
    frames = pl.collect_all(queries)  # materializes: one row per class (and one row of counts)
    distinct = frames[1].row(0, named=True) if undeclared else {}
    return frames[0], distinct


def _roots(prepared: pl.LazyFrame, aggregates: pl.DataFrame, request: Request) -> tuple[pl.LazyFrame, pl.DataFrame, int]:
    """``null="suppress"``: nulls become their hierarchy's root, in the rows and in the aggregates."""
    null_rows = int(aggregates.filter(pl.any_horizontal(pl.col(q).is_null() for q in request.qids))[SIZE].sum())
    if not null_rows:
        return prepared, aggregates, 0
    roots = [pl.col(q).fill_null(h.root) for q, h in request.hierarchies.items()]
    merged = aggregates.lazy().with_columns(roots).group_by(request.qids).agg(pl.col(SIZE).sum().cast(pl.UInt32))
    return prepared.with_columns(roots), merged.sort(request.qids).collect(), null_rows


def _verifier(request: Request, plan: Plan, prepared: pl.LazyFrame) -> Verifier:
    if plan.verify is not None:
        own = plan.verify
        return lambda lf: own(lf, prepared)
    qids, k = request.qids, request.k
    return lambda lf: verify_k(lf, qids, k)


def _check_map(plan: Plan, aggregates: pl.DataFrame, request: Request) -> None:
    """The map must send every input row once and, for k-anonymity, form classes of k rows (fail early)."""
    plan.map.check_covers(aggregates)
    if plan.guarantee == "k-anonymity" and not plan.map.by_row:
        sizes = plan.map.published_sizes()[SIZE]
        if sizes.is_empty() or int(sizes.min()) < request.k:
            smallest = 0 if sizes.is_empty() else int(sizes.min())
            raise NotKAnonymousError(
                f"method {request.method.name!r} produced a class of {smallest} rows, fewer than k={request.k}; nothing was written"
            )


def anonymize(
    data: pl.LazyFrame | pl.DataFrame,
    *,
    qids: Sequence[str] | None = None,
    hierarchies: Mapping[str, Hierarchy],
    k: int,
    method: Method = "fulldomain",
    metric: str | None = None,
    drop: Sequence[str] | str = (),
    sensitive: str | None = None,
    insensitive: Sequence[str] | str = (),
    seed: int = 0,
    null: NullPolicy = "error",
    **options: Any,
) -> Anonymized:
    """Anonymize a table (k-anonymity and each method's guarantee).

    Parameters
    ----------
    data
        Polars LazyFrame or DataFrame (for example ``pl.scan_parquet(...)``).
    qids
        Quasi-identifier columns; defaults to the keys of `hierarchies`.
    hierarchies
        Quasi-identifier -> :class:`~polars_anon.Hierarchy` (a key that is not a qid is refused).
    k
        Minimum class size, >= 1 and at most the row count.
    method
        Algorithm name from :data:`polars_anon.algorithms.METHODS`.
    metric
        The cost the method optimizes, for methods that take one (others refuse it).
    drop
        Identifying columns (direct identifiers) to remove before publishing.
    sensitive
        The sensitive attribute (published as is; privacy models and some metrics read it).
    insensitive
        Columns published as is that would otherwise be refused because nearly every
        value is distinct (see :mod:`polars_anon.attributes`).
    seed
        Seed for randomized steps; same input, parameters and seed give the same bytes.
    null
        ``"error"`` refuses nulls in a quasi-identifier with their count;
        ``"suppress"`` publishes them as the hierarchy root.
    **options
        The method's options (its dataclass in :mod:`polars_anon.algorithms`; unknown
        keys and wrong types are refused).

    Returns
    -------
    Anonymized
        ``.collect()`` or ``.sink_parquet(path)`` verify and return or write the table;
        ``.report`` holds the facts.

    Examples
    --------
    >>> from polars_anon import Hierarchy
    >>> df = pl.DataFrame({"age": [31, 33, 38, 36], "sex": ["F", "M", "F", "M"]})
    >>> H = {"age": Hierarchy.intervals(range(30, 40), [5, 10]), "sex": Hierarchy.suppression(["F", "M"])}
    >>> anonymize(df, hierarchies=H, k=2).collect().rows()
    [('30-39', 'F'), ('30-39', 'M'), ('30-39', 'F'), ('30-39', 'M')]
    """
    start = time.perf_counter()
    lf = as_lazy(data)
    schema = lf.collect_schema()
    request = check_request(
        schema, qids=qids, hierarchies=hierarchies, k=k, method=method, metric=metric, options=options,
        drop=drop, sensitive=sensitive, insensitive=insensitive, null=null, seed=seed,
    )  # fmt: skip
    prepared = prepare(lf, request)
    aggregates, distinct = _aggregate(prepared, request)
    check_data(aggregates, request, distinct)
    prepared, aggregates, null_rows = _roots(prepared, aggregates, request)
    records = None
    if request.method.records:
        keep = [*request.qids, *([request.sensitive] if request.sensitive else [])]
        records = prepared.select(keep).collect()  # materializes: the qids of every row (the method works on records)
    task = Task(aggregates, request.qids, request.hierarchies, request.k, request.seed, request.metric, request.sensitive, records)
    plan = request.method.run(task, request.options)
    _check_map(plan, aggregates, request)
    report = build_report(request, schema, aggregates, plan, time.perf_counter() - start)
    report["null_rows"] = null_rows
    return Anonymized(publish(prepared, plan.map), report, _verifier(request, plan, prepared), prepared)

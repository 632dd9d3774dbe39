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

from polars_anon._progress import stage
from polars_anon._types import Method, NullPolicy
from polars_anon._validate import as_lazy
from polars_anon.algorithms import Plan, Task
from polars_anon.attributes import distinct_counts
from polars_anon.classes import class_sizes
from polars_anon.errors import NotKAnonymousError
from polars_anon.hierarchy import Hierarchy
from polars_anon.io import html_path, report_path
from polars_anon.outputs import Outputs, check_parquet_target, staged_write
from polars_anon.publish import publish
from polars_anon.report import build_report, jsonable
from polars_anon.request import Request, check_data, check_request
from polars_anon.tuplemap import SIZE
from polars_anon.verify import Verifier, verify_k

__all__ = ["Aggregated", "Anonymized", "aggregate", "anonymize", "prepare", "run_method", "verify_k"]

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
        path = check_parquet_target(path)
        start = time.perf_counter()

        def write(tmp: Path) -> dict[str, Any]:
            with stage(f"write {path.name}"):
                self.lf.sink_parquet(tmp)
            with stage(f"verify {path.name}"):
                return self.verifier(pl.scan_parquet(tmp))

        self.report.update(staged_write(out, path, write))
        self.report["write_seconds"] = round(time.perf_counter() - start, 3)
        self.report["output"] = str(path)

    def sink_parquet(
        self, path: str | Path, *, overwrite: bool = False, report: bool | str | Path = True, report_html: bool = True
    ) -> dict[str, Any]:
        """Write the published table to Parquet, verified, and its report beside it; all or nothing.

        The table is streamed to a temporary file in the target folder, re-read and
        checked, and only then renamed to `path` together with the report (JSON to
        ``<stem>.report.json``, or the path given as `report`; False skips it) and,
        unless `report_html` is False, its HTML page (``<stem>.report.html``, beside
        the JSON). An existing output is refused unless `overwrite`; on any failure or
        interrupt nothing new remains and nothing that existed is touched. Returns the report.
        """
        check_parquet_target(path)
        with Outputs(overwrite=overwrite) as out:
            target = report_path(path) if report is True else (Path(report) if report else None)
            html = html_path(target) if target is not None and report_html else None
            for extra in (target, html):
                if extra is not None:
                    out.check(extra)
            self.stage(out, path)
            if target is not None:
                write_report(out, self.report, target, html=html)
            out.commit()
        return self.report


def write_report(out: Outputs, report: dict[str, Any], path: Path, *, html: Path | None = None) -> None:
    """Stage the report JSON in `out` and, when `html` is a path, its HTML page rendered from that JSON."""
    text = json.dumps(jsonable(report), indent=2) + "\n"
    staged_write(out, path, lambda tmp: tmp.write_text(text))
    if html is not None:
        from polars_anon.report.html import write_html  # imports the plotting library

        write_html(out, json.loads(text), html)


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


@dataclass(frozen=True)
class Aggregated:
    """The input as the methods see it, after the one pass over the data and its checks.

    :func:`aggregate` makes it once; :func:`run_method` runs a method on it, as often as
    asked (``pa.anonymize`` runs one, :func:`polars_anon.explore.explore` a grid).
    """

    prepared: pl.LazyFrame
    """The rows to publish: identifying columns dropped, qids as String, nulls at the roots under ``null="suppress"``."""
    aggregates: pl.DataFrame
    """One row per distinct qid tuple and its ``size`` (the methods' input)."""
    null_rows: int
    """Rows with a null qid published as roots (``null="suppress"``)."""
    records: pl.DataFrame | None = None
    """The qids (and the sensitive column) of every row, for methods declared ``records=True``."""


def aggregate(lf: pl.LazyFrame, request: Request, *, records: bool | None = None) -> Aggregated:
    """Prepare the input, aggregate it in one pass and check the data against `request`.

    `records` (default: whether the request's method needs them) also collects the
    qids of every row. The checks of the data hold for every request that differs
    from `request` only by its method, options, metric or a k no larger.
    """
    prepared = prepare(lf, request)
    with stage("aggregate classes"):
        aggregates, distinct = _aggregate(prepared, request)
    check_data(aggregates, request, distinct)
    prepared, aggregates, null_rows = _roots(prepared, aggregates, request)
    rows = None
    if request.method.records if records is None else records:
        keep = [*request.qids, *([request.sensitive] if request.sensitive else [])]
        rows = prepared.select(keep).collect()  # materializes: the qids of every row (the method works on records)
    return Aggregated(prepared, aggregates, null_rows, rows)


def run_method(data: Aggregated, request: Request) -> Plan:
    """Run the request's method on the aggregates; its map is checked (every row once, classes of k)."""
    records = data.records if request.method.records else None
    if request.method.records and records is None:
        raise ValueError(f"method {request.method.name!r} works on records: aggregate(..., records=True)")
    task = Task(data.aggregates, request.qids, request.hierarchies, request.k, request.seed, request.metric, request.sensitive, records)
    plan = request.method.run(task, request.options)
    _check_map(plan, data.aggregates, request)
    return plan


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
    data = aggregate(lf, request)
    plan = run_method(data, request)
    report = build_report(request, schema, data.aggregates, plan, time.perf_counter() - start)
    report["null_rows"] = data.null_rows
    return Anonymized(publish(data.prepared, plan.map), report, _verifier(request, plan, data.prepared), data.prepared)

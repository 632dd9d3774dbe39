"""The anonymization pipeline: one straight road.

scan -> :func:`~polars_anon.request.check_request` (parameters, before any data is
read) -> class aggregates (the pass over the data, which also counts the
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
from typing import TYPE_CHECKING, Any

import polars as pl

from polars_anon._memory import release_freed_memory
from polars_anon._passes import collect_apart, collect_by_tuples
from polars_anon._progress import stage
from polars_anon._types import EngineName, Method, NullPolicy
from polars_anon._validate import as_lazy
from polars_anon.algorithms import Plan, Task
from polars_anon.attributes import distinct_counts, distinct_estimates
from polars_anon.errors import InvalidParameterError, NotKAnonymousError
from polars_anon.hierarchy import Hierarchy
from polars_anon.io import html_path, report_path
from polars_anon.outputs import Outputs, check_parquet_target, staged_write
from polars_anon.privacy.base import Model
from polars_anon.privacy.constraints import Constraints
from polars_anon.privacy.counts import (
    COUNT,
    WIDE,
    encode_counts,
    from_wide,
    long_counts,
    population_counts,
    read_population,
    same_table,
    sensitive_counts,
    wide_columns,
)
from polars_anon.privacy.evaluate import class_frames
from polars_anon.privacy.risk import risk_summary
from polars_anon.publish import publish
from polars_anon.report import build_report, jsonable
from polars_anon.request import Request, check_data, check_privacy, check_request
from polars_anon.tuplemap import SIZE
from polars_anon.verify import Verifier, verify_classes_of, verify_k

if TYPE_CHECKING:
    from polars_anon.engines.pipeline import EngineAnonymized

__all__ = [
    "Aggregated",
    "Anonymized",
    "Publication",
    "aggregate",
    "anonymize",
    "prepare",
    "run_method",
    "task_constraints",
    "verify_k",
]


class Publication:
    """What the result of every engine offers: :meth:`stage` (write into an output set, verified from the
    written data) and :meth:`sink_parquet` (the table and its report, all or nothing)."""

    report: dict[str, Any]

    def stage(
        self, out: Outputs, path: str | Path
    ) -> None:  # pragma: no cover - each engine's result writes its own way
        raise NotImplementedError

    def check_target(self, path: str | Path) -> Path:
        """Refuse an output path this result cannot write (before anything is read or written)."""
        return check_parquet_target(path)

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
        self.check_target(path)
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


@dataclass
class Anonymized(Publication):
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
        path = self.check_target(path)
        start = time.perf_counter()

        def write(tmp: Path) -> dict[str, Any]:
            with stage(f"write {path.name}"):
                self.lf.sink_parquet(tmp)
            with stage(f"verify {path.name}"):
                return self.verifier(pl.scan_parquet(tmp))

        self.report.update(staged_write(out, path, write))
        self.report["write_seconds"] = round(time.perf_counter() - start, 3)
        self.report["output"] = str(path)


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


def counted_attributes(request: Request) -> list[str]:
    """The sensitive attributes some model reads: their (tuple, value) counts are aggregated."""
    return [a for a in request.sensitives if any(m.sensitive_attribute == a for m in request.privacy)]


def population_model(request: Request) -> Model | None:
    tables = [m for m in request.privacy if m.needs_population_table]
    if len({same_table(m.population_frame) for m in tables}) > 1:
        raise InvalidParameterError("the privacy models name different population tables; give them one")
    return tables[0] if tables else None


@dataclass
class Counted:
    """What the aggregate pass counted for the models: the values of each sensitive attribute, and their counts
    (wide: columns of the aggregates; long: a (tuple, value, count) frame), the population's tuple counts."""

    labels: dict[str, pl.Series]
    long: dict[str, pl.DataFrame]
    population: pl.DataFrame | None

    def wide(self) -> list[str]:
        return [a for a in self.labels if a not in self.long]


def _aggregate(prepared: pl.LazyFrame, request: Request) -> tuple[pl.DataFrame, dict[str, int], Counted]:
    """The passes over the data: the class aggregates (with a count column per value of each sensitive
    attribute a model reads, when it has few), the (tuple, value) counts of attributes with many values,
    the population's tuple counts and an estimate of the distinct values of each undeclared column,
    in passes of bounded memory (:mod:`polars_anon._passes`: the group-bys over shares of the qid
    tuples, each query its own scan); then the exact distinct counts the identifying check needs
    (:func:`~polars_anon.attributes.distinct_counts`)."""
    undeclared, qids, counted = request.undeclared, list(request.qids), counted_attributes(request)
    labels = {}
    if counted:
        values = collect_apart(
            [prepared.select(pl.col(a).unique().sort(nulls_last=True)) for a in counted]
        )  # materializes: each attribute's values
        labels = {a: f[a] for a, f in zip(counted, values)}
    long = [a for a in counted if len(labels[a]) > WIDE]
    columns = [e for a in counted if a not in long for e in wide_columns(a, labels[a])]

    def by_tuples(rows: pl.LazyFrame) -> list[pl.LazyFrame]:
        return [
            rows.group_by(qids).agg(pl.len().alias(SIZE), *columns),
            *(sensitive_counts(rows, qids, a) for a in long),
        ]

    grouped = collect_by_tuples(prepared, qids, by_tuples)  # materializes: one row per class (and per class and value)
    table = grouped[0].sort(qids, nulls_last=True)
    others = [distinct_estimates(prepared, undeclared)] if undeclared else []
    model = population_model(request)
    if model is not None:
        pop = read_population(model.population_frame, qids, model.name)
        others.append(pop.group_by(qids).agg(pl.len().cast(pl.Int64).alias(COUNT)))
    rest = collect_apart(others)  # materializes: one row of estimates; one row per population tuple
    distinct = {}
    if undeclared:  # exact where it decides, in passes of bounded memory (see polars_anon.attributes)
        distinct = distinct_counts(prepared, undeclared, int(table[SIZE].sum()), rest[0].row(0, named=True))
    return table, distinct, Counted(labels, dict(zip(long, grouped[1:])), rest[-1] if model is not None else None)


def _roots(
    prepared: pl.LazyFrame, aggregates: pl.DataFrame, request: Request
) -> tuple[pl.LazyFrame, pl.DataFrame, int]:
    """``null="suppress"``: nulls become their hierarchy's root, in the rows and in the aggregates."""
    merged, null_rows = rooted_aggregates(aggregates, request)
    return (prepared.with_columns(_root_exprs(request)) if null_rows else prepared), merged, null_rows


def rooted_aggregates(aggregates: pl.DataFrame, request: Request) -> tuple[pl.DataFrame, int]:
    """The aggregates with null qids at their hierarchy's root (merged), and the rows that held a null."""
    null_rows = int(aggregates.filter(pl.any_horizontal(pl.col(q).is_null() for q in request.qids))[SIZE].sum())
    if not null_rows:
        return aggregates, 0
    weights = [c for c in aggregates.columns if c not in request.qids]
    return _rooted(aggregates, request, weights).with_columns(pl.col(SIZE).cast(pl.UInt32)), null_rows


def _root_exprs(request: Request) -> list[pl.Expr]:
    return [pl.col(q).fill_null(h.root) for q, h in request.hierarchies.items()]


def _rooted(frame: pl.DataFrame, request: Request, weights: Sequence[str], by: Sequence[str] = ()) -> pl.DataFrame:
    """`frame` with nulls at the roots, the `weights` of equal (qids, `by`) rows summed."""
    keys = [*request.qids, *by]
    rooted = frame.lazy().with_columns(_root_exprs(request)).group_by(keys).agg(pl.col(w).sum() for w in weights)
    return rooted.sort(keys, nulls_last=True).collect()


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
    """The qids (and the sensitive columns) of every row, for methods declared ``records=True``."""
    table: pl.DataFrame | None = None
    """The aggregates with the models' count columns (a column per value of each sensitive attribute with few)."""
    counted: Counted | None = None
    """What the pass counted for the privacy models (see :func:`task_constraints`)."""


def aggregate(lf: pl.LazyFrame, request: Request, *, records: bool | None = None) -> Aggregated:
    """Prepare the input, aggregate it in one pass and check the data against `request`.

    `records` (default: whether the request's method needs them) also collects the
    qids of every row. The checks of the data hold for every request that differs
    from `request` only by its method, options, metric or a k no larger.
    """
    prepared = prepare(lf, request)
    with stage("aggregate classes"):
        table, distinct, counted = _aggregate(prepared, request)
    check_data(table, request, distinct)
    prepared, table, null_rows = _roots(prepared, table, request)
    rows = None
    if request.method.records if records is None else records:
        keep = [*request.qids, *request.sensitives]
        rows = prepared.select(keep).collect()  # materializes: the qids of every row (the method works on records)
    return Aggregated(prepared, table.select(*request.qids, SIZE), null_rows, rows, table, counted)


def run_method(
    data: Aggregated, request: Request, constraints: tuple[Constraints, dict[str, pl.LazyFrame]] | None = None
) -> Plan:
    """Run the request's method on the aggregates; its map is checked (every row once, classes of k).

    `constraints` (from :func:`task_constraints`; built when not given) are what the method enforces.
    """
    records = data.records if request.method.records else None
    if request.method.records and records is None:
        raise ValueError(f"method {request.method.name!r} works on records: aggregate(..., records=True)")
    built, counts = task_constraints(data, request) if constraints is None else constraints
    task = Task(data.aggregates, request.qids, request.hierarchies, request.k, request.seed, request.metric, request.sensitive, records,
                sensitive_counts=counts, constraints=built)  # fmt: skip
    plan = request.method.run(task, request.options)
    release_freed_memory()  # the method's working arrays, freed now, would stay resident otherwise
    _check_map(plan, data.aggregates, request)
    return plan


def task_constraints(data: Aggregated, request: Request) -> tuple[Constraints, dict[str, pl.LazyFrame]]:
    """The constraints of the task (k and every model), refusing a model no generalization can meet; and the
    relational (tuple, value, count) frame of each sensitive attribute, for the Task."""
    if data.counted is None or data.table is None or not request.privacy:
        return Constraints(data.aggregates[SIZE].to_numpy(), request.k), {}
    qids, table, counted = list(request.qids), data.table, data.counted
    long, population = counted.long, counted.population
    if request.null == "suppress":
        long = {a: _rooted(f, request, [COUNT], [a]) for a, f in long.items()}
        population = None if population is None else _rooted(population, request, [COUNT])
    aggregates = table.select(*qids, SIZE)
    sens = {a: from_wide(table, a, counted.labels[a]) for a in counted.wide()}
    sens |= {a: encode_counts(f, aggregates, qids, a) for a, f in long.items()}
    frames = {a: long_counts(table, qids, a, counted.labels[a]) for a in counted.wide()} | {
        a: f.lazy() for a, f in long.items()
    }
    pop = None
    if population is not None:
        pop = population_counts(population, aggregates, qids, population_model(request).name)  # type: ignore[union-attr]
    hierarchies = {**request.hierarchies, **(request.sensitive_hierarchies or {})}
    constraints = Constraints(
        aggregates[SIZE].to_numpy(), request.k, request.privacy, sens, pop, hierarchies, aggregates
    )
    # fulldomain searches every vector the refusal would wrongly exclude (its failing classes suppressed within the
    # budget); the other methods keep the refusal
    suppressing = request.method.name == "fulldomain" and int(getattr(request.options, "max_suppressed", 0) or 0) > 0
    check_privacy(constraints, may_suppress=suppressing)
    return constraints, {a: frames[a] for a in counted.labels}


def _population_size(request: Request, n_rows: int) -> int | None:
    """The population size a model states (its population_size, or rows / sampling_fraction), for the risk figures."""
    for m in request.privacy:
        if getattr(m, "population_size", None) is not None:
            return int(m.population_size)  # type: ignore[attr-defined]
        if getattr(m, "sampling_fraction", None) is not None:
            return round(n_rows / m.sampling_fraction)  # type: ignore[attr-defined]
    return None


@dataclass(frozen=True)
class Planned:
    """What the driver decided, whatever engine holds the rows: the method's plan, the report so far,
    the constraints every published class must meet and the risk figures' inputs."""

    plan: Plan
    report: dict[str, Any]
    constraints: Constraints
    input_risk: dict[str, Any]
    population: int | None


def plan_request(
    data: Aggregated, request: Request, schema: pl.Schema, start: float, engine: str = "polars"
) -> Planned:
    """Run the request's method on the aggregates and build the report (the driver's part of every engine)."""
    built = task_constraints(data, request)
    plan = run_method(data, request, built)
    return planned_from(plan, data, request, schema, start, engine, built[0])


def planned_from(
    plan: Plan,
    data: Aggregated,
    request: Request,
    schema: pl.Schema,
    start: float,
    engine: str,
    constraints: Constraints,
) -> Planned:
    """The report of a plan (however it was computed: :func:`plan_request`, or a distributed planner), as :class:`Planned`."""
    report = build_report(request, schema, data.aggregates, plan, time.perf_counter() - start)
    report["null_rows"] = data.null_rows
    report["engine"] = engine
    population = _population_size(request, constraints.n_rows)
    input_risk = risk_summary(data.aggregates, list(request.qids), aggregated=True, population_size_=population)
    report["risk"] = {"input": input_risk}
    return Planned(plan, report, constraints, input_risk, population)


def check_classes(
    classes: pl.DataFrame, frames: Sequence[pl.DataFrame | None], request: Request, planned: Planned
) -> dict[str, Any]:
    """Every guarantee on the published classes (grouped by any engine), then the output's risk; fail closed."""
    qids = list(request.qids)
    facts, published = verify_classes_of(
        classes, frames, qids, request.k, planned.constraints, planned.plan.details.get("levels")
    )
    output = risk_summary(published, qids, population_size_=planned.population, aggregated=True)
    facts["risk"] = {"input": planned.input_risk, "output": output}
    return facts


def _verifier(request: Request, planned: Planned, prepared: pl.LazyFrame) -> Verifier:
    """The independent check of the published rows: the method's own (MDAV's permutation, which checks the
    models on its clusters) or k-anonymity and every model on the published classes; then the output's risk."""
    qids, plan, constraints = list(request.qids), planned.plan, planned.constraints

    def verify(lf: pl.LazyFrame) -> dict[str, Any]:
        if plan.verify is None:
            return check_classes(
                *class_frames(lf, qids, list(constraints.sensitive), constraints.labels), request, planned
            )
        facts = plan.verify(lf, prepared)
        output = risk_summary(lf, qids, population_size_=planned.population, aggregated=False)
        facts["risk"] = {"input": planned.input_risk, "output": output}
        return facts

    return verify


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
    sensitive: str | Sequence[str] | None = None,
    insensitive: Sequence[str] | str = (),
    seed: int = 0,
    null: NullPolicy = "error",
    privacy: Sequence[Model] = (),
    engine: EngineName = "polars",
    driver_tuples: int | None = None,
    **options: Any,
) -> Anonymized | EngineAnonymized:
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
        The sensitive attribute, or a list of them (published as is; privacy models
        and some metrics read them; a model's attribute is sensitive without being listed).
    insensitive
        Columns published as is that would otherwise be refused because nearly every
        value is distinct (see :mod:`polars_anon.attributes`).
    seed
        Seed for randomized steps; same input, parameters and seed give the same bytes.
    null
        ``"error"`` refuses nulls in a quasi-identifier with their count;
        ``"suppress"`` publishes them as the hierarchy root.
    privacy
        Privacy models every class must satisfy besides k (``pa.LDiversity``,
        ``pa.TCloseness``, ... see :mod:`polars_anon.privacy`); each method enforces
        them and the published table is checked against each before it is returned.
    engine
        Where the rows are grouped, published, verified and written: ``"polars"``
        (default), ``"duckdb"`` or ``"spark"`` (the active Spark session, or a local one).
        The method runs on the driver over the class aggregates either way; the result
        of another engine offers ``.table()`` (its own table), ``.collect()`` and
        ``.sink_parquet()``. See :mod:`polars_anon.engines`.
    driver_tuples
        Engines ``"duckdb"`` and ``"spark"`` only: the most class aggregates (distinct
        quasi-identifier tuples) brought to the driver (default 5,000,000). Beyond it,
        ``method="mondrian"`` runs its rounds as engine queries, ``"greedy"`` on Spark its
        first round per block in Spark tasks, and other methods are refused (see
        :mod:`polars_anon.engines.distributed`).
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
    if engine == "polars" and driver_tuples is not None:
        raise InvalidParameterError(
            f"driver_tuples={driver_tuples!r} caps the class aggregates engines 'duckdb' and 'spark' bring to their driver; "
            "engine 'polars' holds them in this process: drop driver_tuples or choose engine 'duckdb' or 'spark'"
        )
    if engine != "polars":
        from polars_anon.engines import get_engine
        from polars_anon.engines.pipeline import engine_anonymize

        asked = {"qids": qids, "method": method, "metric": metric, "drop": drop, "sensitive": sensitive, "insensitive": insensitive,
                 "seed": seed, "null": null, "privacy": privacy}  # fmt: skip
        return engine_anonymize(
            get_engine(engine, data=data),
            data,
            hierarchies=hierarchies,
            k=k,
            driver_tuples=driver_tuples,
            **asked,
            **options,
        )
    start = time.perf_counter()
    lf = as_lazy(data)
    schema = lf.collect_schema()
    request = check_request(
        schema, qids=qids, hierarchies=hierarchies, k=k, method=method, metric=metric, options=options,
        drop=drop, sensitive=sensitive, insensitive=insensitive, null=null, seed=seed, privacy=privacy,
    )  # fmt: skip
    data = aggregate(lf, request)
    planned = plan_request(data, request, schema, start)
    verifier = _verifier(request, planned, data.prepared)
    return Anonymized(publish(data.prepared, planned.plan.map), planned.report, verifier, data.prepared)

"""The road every engine shares: its group-bys in, the same checks, method and report on the driver, its
join and writer out, its group-by on the written data to verify.

The engine groups by the quasi-identifiers in their own types; the driver casts the
keys to String with Polars, so the labels the hierarchies see are exactly those of
the Polars road (a float or a date is spelt the same whatever engine read it).
:func:`engine_map` turns the method's map back into the engine's own key types.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from polars_anon._progress import stage
from polars_anon.algorithms import Method
from polars_anon.anonymize import (
    Aggregated,
    Counted,
    Planned,
    Publication,
    check_classes,
    counted_attributes,
    plan_request,
    population_model,
    rooted_aggregates,
)
from polars_anon.engines import Engine, key_col
from polars_anon.engines.distributed import DRIVER_TUPLES, PLANNERS, check_driver_tuples, route
from polars_anon.errors import InvalidParameterError, NotKAnonymousError
from polars_anon.outputs import Outputs, check_parquet_target, staged_write
from polars_anon.privacy.counts import COUNT, read_population
from polars_anon.privacy.evaluate import class_frames, indexed
from polars_anon.report.disclosure import disclosure_counts, disclosure_of
from polars_anon.request import Request, check_data, check_request
from polars_anon.tuplemap import SIZE, SUPPRESSED, TupleMap, out_col

__all__ = ["EngineAnonymized", "aggregate_on", "engine_anonymize", "engine_map"]


def _as_strings(frame: pl.DataFrame, qids: Sequence[str], by: Sequence[str] = ()) -> pl.DataFrame:
    """Engine counts with the qids cast to String as Polars spells them; equal labels merged, sorted."""
    keys = [*qids, *by]
    cast = frame.with_columns(pl.col(q).cast(pl.String) for q in qids)
    return cast.group_by(keys).agg(pl.col(COUNT).sum()).sort(keys, nulls_last=True)


def refuse_unsupported(method: Method, engine: str) -> None:
    """A method on row records runs on an engine only through its planner there (MDAV on Spark, per block in Spark
    tasks: :mod:`polars_anon.engines.spark_mdav`, which refuses the options it does not support). Asked before any
    data is read."""
    if method.records and (method.name, engine) not in PLANNERS:
        raise InvalidParameterError(
            f"method {method.name!r} works on row records, which engine {engine!r} does not hand to the driver; "
            f"use engine 'polars' or a method that works on class aggregates (fulldomain, greedy, mondrian, datafly)"
        )


def aggregate_on(engine: Engine, table: Any, request: Request) -> tuple[Aggregated, pl.DataFrame]:
    """The engine's group-bys, checked against `request` like the Polars road's one pass (:func:`polars_anon.anonymize.aggregate`).

    Each sensitive attribute a model reads is counted as a (tuple, value, ``count``) frame. Returns the
    aggregates and the engine's class counts in the engine's own key types (for :func:`engine_map`).
    """
    qids, counted = list(request.qids), counted_attributes(request)
    with stage("aggregate classes"):
        native = engine.counts(table, qids)
        classes = _as_strings(native, qids).rename({COUNT: SIZE}).with_columns(pl.col(SIZE).cast(pl.UInt32))
        long = {a: _as_strings(engine.counts(table, [*qids, a]), qids, [a]) for a in counted}
        distinct = engine.distinct(table, request.undeclared) if request.undeclared else {}
    population = None
    model = population_model(request)
    if model is not None:
        pop = read_population(model.population_frame, qids, model.name)
        population = (
            pop.group_by(qids).agg(pl.len().cast(pl.Int64).alias(COUNT)).collect()
        )  # materializes: one row per population tuple
    check_data(classes, request, distinct)
    rooted, null_rows = rooted_aggregates(classes, request)
    labels = {a: f[a].unique().sort(nulls_last=True) for a, f in long.items()}
    counts = Counted(labels, long, population)
    return Aggregated(pl.LazyFrame(), rooted.select(*qids, SIZE), null_rows, None, rooted, counts), native


def engine_map(tmap: TupleMap, native: pl.DataFrame, request: Request) -> pl.DataFrame:
    """The map in the engine's key types: ``__anon_in_<qid>`` (each original value, null included under
    ``null="suppress"``), ``__anon_out_<qid>`` (its published label) and ``__anon_suppressed``."""
    if tmap.by_row or tmap.split:
        raise InvalidParameterError(
            f"method {request.method.name!r} split the rows of one tuple over several classes (row order decides which "
            f"goes where), which only engine 'polars' publishes; use mondrian's mode = 'strict' or engine 'polars'"
        )
    qids = list(request.qids)
    frame = tmap.frame.select(*qids, *(out_col(q) for q in qids), SUPPRESSED)
    for q in qids:
        values = native.select(pl.col(q).unique())
        label = pl.col(q).cast(pl.String)
        if q in request.hierarchies and request.null == "suppress":
            label = label.fill_null(request.hierarchies[q].root)
        lookup = values.select(pl.col(q).alias(key_col(q)), label.alias(q))
        frame = frame.join(lookup, on=q, how="inner", nulls_equal=True)
    return frame.select(*(key_col(q) for q in qids), *(out_col(q) for q in qids), SUPPRESSED)


def published_classes(
    engine: Engine, table: Any, request: Request, planned: Planned
) -> tuple[pl.DataFrame, list[pl.DataFrame | None]]:
    """The engine's group-by of a published table: its classes (sorted, indexed) and each sensitive attribute's counts."""
    qids = list(request.qids)
    classes = indexed(engine.counts(table, qids).rename({COUNT: SIZE}), qids)
    frames: list[pl.DataFrame | None] = [engine.counts(table, [*qids, a]) for a in planned.constraints.sensitive]
    return classes, frames


@dataclass
class EngineAnonymized(Publication):
    """An anonymization run on DuckDB or Spark: the published table (the engine's own), its report, its check.

    :meth:`table` returns the engine's table after the engine's group-by checked it,
    :meth:`collect` the rows as a Polars DataFrame (checked by Polars), :meth:`sink_parquet`
    writes it with the engine's writer, verified from the written data, all or nothing.
    """

    engine: Engine
    published: Any
    report: dict[str, Any]
    request: Request
    planned: Planned

    def verify(self, table: Any) -> dict[str, Any]:
        """Every guarantee on `table` (the published rows, or as written), grouped by the engine, and every input
        row accounted for (published or suppressed); fail closed."""
        facts = check_classes(
            *published_classes(self.engine, table, self.request, self.planned), self.request, self.planned
        )
        qids = list(self.request.qids)
        counts = {a: self.engine.counts(table, [*qids, a]) for a in self.request.sensitives}
        facts["attribute_disclosure"] = disclosure_of(counts, qids)
        expected = self.report["n_input_rows"] - self.report["suppressed"]
        if facts["n_rows"] != expected:
            raise NotKAnonymousError(
                f"independent check failed: the published table has {facts['n_rows']:,} rows, but {expected:,} were due "
                f"(input rows minus suppressed ones); nothing was written"
            )
        return facts

    def table(self) -> Any:
        """The published table (a DuckDB relation, a Spark DataFrame), after checking every guarantee on it."""
        self.report.update(self.verify(self.published))
        return self.published

    def collect(self) -> pl.DataFrame:
        """The published rows as a Polars DataFrame, after checking every guarantee on them."""
        df = self.engine.to_polars(self.published)
        constraints = self.planned.constraints
        grouped = class_frames(df.lazy(), self.request.qids, list(constraints.sensitive), constraints.labels)
        self.report.update(check_classes(*grouped, self.request, self.planned))
        qids = list(self.request.qids)
        self.report["attribute_disclosure"] = disclosure_of(
            disclosure_counts(df.lazy(), qids, self.request.sensitives), qids
        )
        return df

    def check_target(self, path: str | Path) -> Path:
        return check_parquet_target(path, folder=self.engine.name == "spark")

    def stage(self, out: Outputs, path: str | Path) -> None:
        """Write the table with the engine's writer to a temporary name in `out`, verified from the written data."""
        path = self.check_target(path)
        start = time.perf_counter()

        def write(tmp: Path) -> dict[str, Any]:
            with stage(f"write {path.name}"):
                self.engine.write(self.published, tmp)
            with stage(f"verify {path.name}"):
                return self.verify(self.engine.read_parquet(tmp))

        self.report.update(staged_write(out, path, write))
        self.report["write_seconds"] = round(time.perf_counter() - start, 3)
        self.report["output"] = str(path)


def engine_anonymize(
    engine: Engine,
    data: object,
    *,
    hierarchies: Mapping[str, Any],
    k: int,
    driver_tuples: int | None = None,
    **asked: Any,
) -> EngineAnonymized:
    """:func:`polars_anon.anonymize` on `engine` (same parameters; `data` is the engine's table or a Polars frame).

    `driver_tuples` (default :data:`~polars_anon.engines.distributed.DRIVER_TUPLES`) caps the class aggregates
    brought to the driver; beyond it the method runs as engine queries where it can
    (:mod:`polars_anon.engines.distributed`), else is refused.
    """
    start = time.perf_counter()
    limit = DRIVER_TUPLES if driver_tuples is None else check_driver_tuples(driver_tuples)
    table = engine.table(data)
    schema = engine.schema(table)
    named = ("qids", "method", "metric", "drop", "sensitive", "insensitive", "seed", "null", "privacy")
    options = {key: value for key, value in asked.items() if key not in named}
    request = check_request(
        schema, hierarchies=hierarchies, k=k, options=options, **{key: asked[key] for key in named if key in asked}
    )
    refuse_unsupported(request.method, engine.name)
    planner = route(engine, table, request, limit)
    if planner is not None:
        published, planned = planner(engine, table, request, schema, start)
        if not request.method.records:
            planned.report["details"].setdefault("distributed", {})["driver_tuples"] = limit
        return EngineAnonymized(engine, published, planned.report, request, planned)
    data_, native = aggregate_on(engine, table, request)
    planned = plan_request(data_, request, schema, start, engine.name)
    mapping = engine_map(planned.plan.map, native, request)
    columns = [c for c in schema.names() if c not in request.drop]
    published = engine.publish(table, mapping, list(request.qids), columns)
    return EngineAnonymized(engine, published, planned.report, request, planned)

"""What the road carries from one step to the next (imported by the engines and planners: it imports none of them).

- :class:`EngineAggregates`: what an engine's aggregation pass hands the road (before the data checks);
- :class:`Aggregated`: the checked aggregates the methods see;
- :class:`Planned`: the method's plan with the report and the constraints every published class must meet;
- :class:`EnginePlan`: what a planner (a method run inside an engine, :mod:`polars_anon.engines.planners`)
  returns: a plan (its tuple map) and the engine's own map, nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import polars as pl

from polars_anon._passes import TupleCodes
from polars_anon.algorithms import Plan
from polars_anon.errors import InvalidParameterError
from polars_anon.labels import label_exprs
from polars_anon.privacy.base import Model
from polars_anon.privacy.constraints import Constraints
from polars_anon.privacy.counts import (
    COUNT,
    encode_counts,
    from_wide,
    long_counts,
    population_counts,
    population_ids,
    same_table,
)
from polars_anon.request import Request, check_privacy
from polars_anon.tuplemap import SIZE

__all__ = [
    "Aggregated",
    "Counted",
    "FIRST_ROW",
    "EngineAggregates",
    "EnginePlan",
    "Planned",
    "counted_attributes",
    "first_rows_frame",
    "needs_first_rows",
    "population_model",
    "population_size",
    "root_exprs",
    "rooted",
    "rooted_aggregates",
    "task_constraints",
]


def counted_attributes(request: Request) -> list[str]:
    """The sensitive attributes some model reads: their (tuple, value) counts are aggregated."""
    return [a for a in request.sensitives if any(m.sensitive_attribute == a for m in request.privacy)]


def population_model(request: Request) -> Model | None:
    """The model that reads a population table (all such models must name one table), or None."""
    tables = [m for m in request.privacy if m.needs_population_table]
    if len({same_table(m.population_frame) for m in tables}) > 1:
        raise InvalidParameterError("the privacy models name different population tables; give them one")
    return tables[0] if tables else None


FIRST_ROW = "__anon_first_row"
"""The position of a tuple's first input row (0-based, or any key increasing in input order: Spark's)."""


def needs_first_rows(request: Request) -> bool:
    """Whether a model suppresses single classes for the whole table (average risk, sample or population
    uniqueness): their tie order is the class's first input row, which the aggregation pass then adds."""
    return any(m.scope == "table" for m in request.privacy)


def first_rows_frame(frame: pl.DataFrame, qids: Sequence[str]) -> pl.DataFrame:
    """An engine's (qids, :data:`FIRST_ROW`) group-by with the qids cast to String as Polars spells them (equal
    labels merged: the smallest position kept).

    >>> first_rows_frame(pl.DataFrame({"a": [1.0, 1], "__anon_first_row": [4, 2]}), ["a"]).rows()
    [('1.0', 2)]
    """
    cast = frame.with_columns(label_exprs(frame.schema, qids))
    return cast.group_by(qids).agg(pl.col(FIRST_ROW).min().cast(pl.Int64))


@dataclass
class Counted:
    """What the aggregate pass counted for the models: the values of each sensitive attribute, and their counts
    (wide: columns of the aggregates; long: a (tuple, value, count) frame), the population's tuple counts; and,
    for table risk models only (:func:`needs_first_rows`), each tuple's first input row."""

    labels: dict[str, pl.Series]
    long: dict[str, pl.DataFrame]
    population: pl.DataFrame | None
    first_rows: pl.DataFrame | None = None
    """(qids as String labels, :data:`FIRST_ROW`): the tie order of single-class suppression (ARX's)."""

    def wide(self) -> list[str]:
        return [a for a in self.labels if a not in self.long]


@dataclass(frozen=True)
class EngineAggregates:
    """An engine's aggregation pass, before the road checks it (:meth:`polars_anon.engines.Engine.aggregate`)."""

    table: pl.DataFrame
    """One row per distinct qid tuple (String labels, as Polars spells them), its ``size`` and the models'
    wide count columns."""
    distinct: dict[str, int]
    """The distinct values of each undeclared column (exact where it decides)."""
    counted: Counted
    rows: pl.LazyFrame | None = None
    """The rows as the methods see them (Polars only: identifying columns dropped, qids as String)."""
    native: pl.DataFrame | None = None
    """The qid group-by in the engine's own key types (DuckDB, Spark: to turn a map back into them)."""
    codes: TupleCodes | None = None
    """The qids of `table` as integer codes, row for row (Polars, without a privacy model's counts)."""


def root_exprs(request: Request) -> list[pl.Expr]:
    """Each qid with a hierarchy, its nulls at the root (``null="suppress"``)."""
    return [pl.col(q).fill_null(h.root) for q, h in request.hierarchies.items()]


def rooted(frame: pl.DataFrame, request: Request, weights: Sequence[str], by: Sequence[str] = ()) -> pl.DataFrame:
    """`frame` with nulls at the roots, the `weights` of equal (qids, `by`) rows summed."""
    keys = [*request.qids, *by]
    grouped = frame.lazy().with_columns(root_exprs(request)).group_by(keys).agg(pl.col(w).sum() for w in weights)
    return grouped.sort(keys, nulls_last=True).collect()


def rooted_aggregates(aggregates: pl.DataFrame, request: Request) -> tuple[pl.DataFrame, int]:
    """The aggregates with null qids at their hierarchy's root (merged), and the rows that held a null."""
    null_rows = int(aggregates.filter(pl.any_horizontal(pl.col(q).is_null() for q in request.qids))[SIZE].sum())
    if not null_rows:
        return aggregates, 0
    weights = [c for c in aggregates.columns if c not in request.qids]
    return rooted(aggregates, request, weights).with_columns(pl.col(SIZE).cast(pl.UInt32)), null_rows


@dataclass(frozen=True)
class Aggregated:
    """The input as the methods see it, after the one pass over the data and its checks.

    :func:`polars_anon.pipeline.road.aggregate` makes it once; :func:`~polars_anon.pipeline.road.run_method`
    runs a method on it, as often as asked (``pa.anonymize`` runs one, :func:`polars_anon.explore.explore` a grid).
    """

    prepared: pl.LazyFrame
    """The rows to publish (Polars): identifying columns dropped, qids as String, nulls at the roots under
    ``null="suppress"``; an empty frame on the other engines (their rows stay in the engine)."""
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
    native: pl.DataFrame | None = None
    """The engine's qid group-by in its own key types (DuckDB, Spark), for the engine's map."""
    search: pl.DataFrame | None = None
    """A differentially private search's own sample, aggregated like `aggregates` (drawn with an independent key;
    :func:`polars_anon.pipeline.road.search_sample`)."""
    codes: TupleCodes | None = None
    """The qids of `aggregates` as integer codes, row for row (:class:`~polars_anon._passes.TupleCodes`; None when
    the engine made none, nulls were merged at the roots or the method reads none): handed to it as ``Task.codes``."""


def task_constraints(data: Aggregated, request: Request) -> tuple[Constraints, dict[str, pl.LazyFrame]]:
    """The constraints of the task (k and every model), refusing a model no generalization can meet; and the
    relational (tuple, value, count) frame of each sensitive attribute, for the Task."""
    if data.counted is None or data.table is None or not request.privacy:
        return Constraints(data.aggregates[SIZE].to_numpy(), request.k), {}
    qids, table, counted = list(request.qids), data.table, data.counted
    long, population = counted.long, counted.population
    if request.null == "suppress":
        long = {a: rooted(f, request, [COUNT], [a]) for a, f in long.items()}
        population = None if population is None else rooted(population, request, [COUNT])
    aggregates = table.select(*qids, SIZE)
    sens = {a: from_wide(table, a, counted.labels[a]) for a in counted.wide()}
    sens |= {a: encode_counts(f, aggregates, qids, a) for a, f in long.items()}
    frames = {a: long_counts(table, qids, a, counted.labels[a]) for a in counted.wide()}
    frames |= {a: f.lazy() for a, f in long.items()}
    pop = None
    model = population_model(request)
    if population is not None and model is not None:
        pop = population_counts(population, aggregates, qids, model.name)
        ids = population_ids(pop.extra, request.hierarchies, model.name, model.population_frame)  # refused naming both
        pop = replace(pop, extra_ids=ids)  # mapped once: the constraints read them
    hierarchies = {**request.hierarchies, **(request.sensitive_hierarchies or {})}
    first_row = None
    if counted.first_rows is not None:
        first = counted.first_rows
        if request.null == "suppress":
            first = first.with_columns(root_exprs(request)).group_by(qids).agg(pl.col(FIRST_ROW).min())
        joined = aggregates.select(qids).join(first, on=qids, how="left", nulls_equal=True, maintain_order="left")
        first_row = joined[FIRST_ROW].to_numpy()
    constraints = Constraints(
        aggregates[SIZE].to_numpy(),
        request.k,
        request.privacy,
        sens,
        pop,
        hierarchies,
        aggregates,
        first_row=first_row,
        road=request.road,
    )
    check_privacy(constraints, may_suppress=_may_suppress(request))
    return constraints, {a: frames[a] for a in counted.labels}


def _may_suppress(request: Request) -> bool:
    """Whether the request's method suppresses within a budget above zero: a method with option ``max_suppressed``
    (fulldomain, topdown, datafly) given one, or datafly's default (None: k, at least 1). Such a method may publish
    where the whole table fails a class model (the failing classes of a finer level suppressed), so the up-front
    refusal (:func:`~polars_anon.request.check_privacy`) leaves it to the method, which publishes or refuses
    (:meth:`~polars_anon.privacy.constraints.Constraints.no_publication`).

    >>> from types import SimpleNamespace as NS
    >>> [_may_suppress(NS(options=NS(max_suppressed=b))) for b in (0, 3, None)], _may_suppress(NS(options=NS()))
    ([False, True, True], False)
    """
    if not hasattr(request.options, "max_suppressed"):
        return False
    budget = request.options.max_suppressed
    return budget is None or int(budget) > 0


def population_size(request: Request, n_rows: int) -> int | None:
    """The population size a model states (its population_size, or rows / sampling_fraction), for the risk figures."""
    for m in request.privacy:
        size = getattr(m, "population_size", None)
        if size is not None:
            return int(size)
        fraction = getattr(m, "sampling_fraction", None)
        if fraction is not None:
            return round(n_rows / fraction)
    return None


@dataclass(frozen=True)
class Planned:
    """What the driver decided, whatever engine holds the rows: the method's plan, its facts, the constraints
    every published class must meet and the risk figures' inputs."""

    plan: Plan
    facts: Mapping[str, Any]
    """The report's facts known before anything is published (:func:`~polars_anon.report.plan_facts`)."""
    constraints: Constraints
    input_risk: dict[str, Any]
    population: int | None


@dataclass(frozen=True)
class EnginePlan:
    """What a planner returns: the method's plan and the engine's own map; the road does the rest.

    `plan.map` meets the map's contract (:class:`~polars_anon.tuplemap.TupleMap`) and is checked by the
    road like every method's. `mapping` is the same map in the engine's key types, for
    :meth:`~polars_anon.engines.Engine.join_map` (a frame on the driver, or a table of the engine):
    ``__anon_in_<qid>``, ``__anon_out_<qid>``, ``__anon_suppressed``; or, for a row map, the engine's row id
    and the published labels. `aggregates` are the input's class aggregates the report reads (a planner
    that never brings them to the driver gives what it has: see `input_sizes`). `input_sizes` is the input's
    class-size histogram (``s``, ``classes``, ``nullrows``) when the aggregates are not on the driver.
    """

    plan: Plan
    mapping: Any
    aggregates: pl.DataFrame
    null_rows: int = 0
    input_sizes: pl.DataFrame | None = None
    rows: Any = None
    """The engine's rows the mapping is joined to, when they differ from the input table (a row map's rows
    carry the row id the map is keyed on)."""
    row_key: str | None = None
    """The row id column of a row map (``mapping`` and ``rows`` both carry it); None for a tuple map."""
    facts: dict[str, Any] = field(default_factory=dict)
    """Figures for the report that only the planner saw (``metrics=False`` when the map cannot give the
    metrics, ``unchanged`` shares per qid)."""

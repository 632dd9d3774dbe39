"""The Polars engine's aggregation pass (:class:`polars_anon.engines.polars.PolarsEngine` calls it).

:func:`prepare` makes the rows the methods see; :func:`aggregate_rows` runs the passes over them: the
class aggregates with the models' counts, the population's tuple counts and the distinct values of
each undeclared column. The road itself (check the request, aggregate, check the data, the method,
publish, verify, write, report) is :mod:`polars_anon.pipeline.road`; ``pa.anonymize`` is its
:func:`~polars_anon.pipeline.road.anonymize`.
"""

from __future__ import annotations

import polars as pl

from polars_anon._passes import collect_apart, collect_by_tuples
from polars_anon.attributes import distinct_counts, distinct_estimates
from polars_anon.pipeline.state import Counted, counted_attributes, population_model
from polars_anon.privacy.counts import COUNT, WIDE, read_population, sensitive_counts, wide_columns
from polars_anon.request import Request
from polars_anon.tuplemap import SIZE

__all__ = ["aggregate_rows", "prepare"]


def prepare(lf: pl.LazyFrame, request: Request) -> pl.LazyFrame:
    """The input as the methods see it: identifying columns dropped, qids as String labels."""
    return lf.drop(list(request.drop)).with_columns(pl.col(q).cast(pl.String) for q in request.qids)


def aggregate_rows(prepared: pl.LazyFrame, request: Request) -> tuple[pl.DataFrame, dict[str, int], Counted]:
    """The passes over the prepared rows (see :func:`_aggregate`): the class aggregates with the models' count
    columns, the distinct counts of the undeclared columns, and what was counted for the models."""
    return _aggregate(prepared, request)


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

"""Float sums that give the same bits whatever the row order and the number of threads.

Polars adds a float column's partial sums in an order that depends on ``POLARS_MAX_THREADS``
and on the row order a group-by or join happened to produce, so the last digits of a metric
(and of the report) changed between two runs of the same job. Every float aggregation of the
metrics goes through :func:`exact_sum` (and :func:`exact_mean`): :func:`math.fsum`, the
correctly rounded sum, which depends only on the values.
"""

from __future__ import annotations

import math

import polars as pl

__all__ = ["exact_mean", "exact_sum"]


def _fsum(values: pl.Series) -> pl.Series:
    return pl.Series([math.fsum(values.drop_nulls().cast(pl.Float64).to_numpy())], dtype=pl.Float64)


def exact_sum(value: pl.Expr) -> pl.Expr:
    """The correctly rounded sum of `value` (Float64, :func:`math.fsum`; nulls skipped, 0.0 when empty).

    It does not depend on the order of the rows nor on how Polars splits them between threads,
    so a metric (and the report) gets the same bits on every run: Polars' own float ``sum`` adds
    partial sums in an order that changes with ``POLARS_MAX_THREADS`` and with the row order of
    a group-by. Per group in a ``group_by(...).agg`` (one Python call per group).

    >>> df = pl.DataFrame({"x": [0.1, 0.2, 0.3, None]})
    >>> df.select(exact_sum(pl.col("x"))).item(), sum([0.1, 0.2, 0.3])
    (0.6, 0.6000000000000001)
    """
    return value.map_batches(_fsum, returns_scalar=True, return_dtype=pl.Float64)


def exact_mean(value: pl.Expr) -> pl.Expr:
    """The mean of `value`'s non-null values from :func:`exact_sum` (null when there is none).

    >>> pl.DataFrame({"x": [1.0, 2.0, None]}).select(exact_mean(pl.col("x"))).item()
    1.5
    """
    return pl.when(value.count() > 0).then(exact_sum(value) / value.count())

"""Float sums that give the same bits whatever the row order and the number of threads.

Polars adds a float column's partial sums in an order that depends on ``POLARS_MAX_THREADS``
and on the row order a group-by or join happened to produce, so the last digits of a metric
(and of the report) changed between two runs of the same job. Every float aggregation of the
metrics goes through :func:`stable_sum` (and :func:`stable_mean`): the values sorted, then
added one after the other (a cumulative sum), so the result depends only on the values.
"""

from __future__ import annotations

import numpy as np
import polars as pl

__all__ = ["sorted_product_sum", "sorted_products_sum", "sorted_sum", "stable_mean", "stable_sum"]


def stable_sum(value: pl.Expr) -> pl.Expr:
    """The sum of `value` (Float64; nulls skipped, 0.0 when empty) added in ascending order, left to right.

    It depends only on the multiset of values, not on the order of the rows nor on how Polars splits
    them between threads, so a metric (and the report) gets the same bits on every run: Polars' own
    float ``sum`` adds partial sums in an order that changes with ``POLARS_MAX_THREADS`` and with the
    row order of a group-by. Native (a sort and a cumulative sum), per group in a ``group_by(...).agg``;
    :func:`math.fsum` through a Python call per group was 40 times slower on 20,000 groups.

    >>> df = pl.DataFrame({"x": [0.3, 0.1, None, 0.2], "y": [0.1, 0.2, 0.3, None]})
    >>> df.select(stable_sum(pl.col("x")), stable_sum(pl.col("y"))).row(0)
    (0.6000000000000001, 0.6000000000000001)
    """
    return value.cast(pl.Float64).sort().cum_sum().last().fill_null(0.0)


def stable_mean(value: pl.Expr) -> pl.Expr:
    """The mean of `value`'s non-null values from :func:`stable_sum` (null when there is none).

    >>> pl.DataFrame({"x": [1.0, 2.0, None]}).select(stable_mean(pl.col("x"))).item()
    1.5
    """
    return pl.when(value.count() > 0).then(stable_sum(value) / value.count())


def sorted_sum(values: np.ndarray) -> float:
    """:func:`stable_sum` in NumPy: the values sorted, added left to right (0.0 if none), the same bits.

    Polars' cumulative sum starts from 0.0 (0.0 + x is x, except 0.0 + -0.0 = 0.0): only values that are all
    -0.0 sum to -0.0 in NumPy's ``cumsum``, and to 0.0 in Polars' and here.

    >>> sorted_sum(np.array([0.3, 0.1, 0.2])), sorted_sum(np.array([-0.0]))
    (0.6000000000000001, 0.0)
    """
    return float(np.cumsum(np.sort(values))[-1]) + 0.0 if len(values) else 0.0


def sorted_product_sum(values: np.ndarray, codes: np.ndarray, counts: np.ndarray) -> float:
    """``float(np.sort(values[codes] * counts).sum())`` (NumPy's sum of the sorted products, whatever the row order),
    without sorting every row: the products take few distinct values (one of a few distinct values times a small
    integer count), so the sorted array is each distinct (value, count) product, sorted, repeated as often as it
    occurs. The same array, so the same sum, bit for bit (equal products are interchangeable).

    `values`: Float64 by code (a hierarchy's nodes: few); `codes`: non-negative integer codes; `counts`:
    non-negative integers (row counts).

    >>> v, c, n = np.array([0.5, 0.25]), np.array([1, 0, 1, 1]), np.array([3, 2, 3, 8])
    >>> sorted_product_sum(v, c, n), float(np.sort(v[c] * n).sum())
    (4.5, 4.5)
    """
    if len(codes) == 0:
        return 0.0
    counts = np.asarray(counts, dtype=np.int64)
    distinct, rank = np.unique(values, return_inverse=True)  # a few hundred or thousand nodes
    width = int(counts.max()) + 1
    if np.signbit(values).any() or np.isnan(values).any() or len(distinct) * width > max(4 * len(codes), 1 << 20):
        return float(np.sort(values[codes] * counts.astype(np.float64)).sum())  # -0.0 or NaN, or too many pairs
    seen = np.bincount(rank[codes].astype(np.int64) * width + counts, minlength=len(distinct) * width)
    pair = np.flatnonzero(seen)
    products = distinct[pair // width] * (pair % width).astype(np.float64)
    order = np.argsort(products, kind="stable")
    return float(np.repeat(products[order], seen[pair][order]).sum())


def sorted_products_sum(values: np.ndarray, codes: np.ndarray, counts: np.ndarray) -> float:
    """:func:`sorted_sum` of ``counts * values[codes]`` (Float64 products, added left to right in ascending order),
    without sorting every row when the (code, count) pairs are few: each distinct pair's product once, sorted,
    repeated as often as it occurs, then added left to right. The same ascending sequence (equal products are
    interchangeable), so the same bits.

    `values`: Float64 by code, non-negative and not NaN (else the plain sort); `codes`, `counts`: non-negative
    integers.

    >>> v, c, n = np.array([0.5, 0.1]), np.array([1, 0, 1, 1]), np.array([3, 2, 3, 8])
    >>> sorted_products_sum(v, c, n) == sorted_sum(n.astype(np.float64) * v[c])
    True
    """
    if len(codes) == 0:
        return 0.0
    counts = np.asarray(counts, dtype=np.int64)
    width = int(counts.max()) + 1
    if np.signbit(values).any() or np.isnan(values).any() or len(values) * width > max(4 * len(codes), 1 << 20):
        return sorted_sum(counts.astype(np.float64) * values[codes])
    seen = np.bincount(codes.astype(np.int64) * width + counts, minlength=len(values) * width)
    pair = np.flatnonzero(seen)
    products = (pair % width).astype(np.float64) * values[pair // width]
    order = np.argsort(products, kind="stable")
    return float(np.cumsum(np.repeat(products[order], seen[pair][order]))[-1]) + 0.0

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

__all__ = [
    "ascending",
    "sorted_products",
    "sorted_products_numpy_sum",
    "sorted_sum",
    "stable_mean",
    "stable_sum",
]


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
    return float(np.cumsum(ascending(values))[-1]) + 0.0 if len(values) else 0.0


def ascending(values: np.ndarray) -> np.ndarray:
    """``np.sort(values)`` (Float64): the values ascending, for a sum added left to right from the smallest.

    Equal values are interchangeable; the one pair that compares equal with other bits, -0.0 and 0.0, may come in
    any order, which changes no sum that :func:`sorted_sum` or :func:`sorted_products_numpy_sum` returns (a sum of
    zeros is -0.0 only if every one is -0.0, in any order, and :func:`sorted_sum` adds 0.0 at the end); NaN sorts
    last.
    NumPy's sort (SIMD) took 0.0034 CPU s for 684,166 random floats where Polars' took 0.017 on one thread (the 3M
    register's squared distance error: 0.005 against 0.020; ``benchmarks/results/floor.md``, branch ``between31``).

    >>> ascending(np.array([0.3, 0.1, 0.2])).tolist()
    [0.1, 0.2, 0.3]
    """
    return np.sort(np.asarray(values, dtype=np.float64))


def sorted_products(values: np.ndarray, codes: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``np.sort(counts * values[codes])`` (Float64), without sorting every row: the products take few distinct values
    (one of a few values times a small integer count), so the sorted array is each distinct (value, count) product,
    sorted, repeated as often as it occurs. The same array, bit for bit (equal products are interchangeable); every
    row sorted when a value is negative (-0.0 included) or NaN or when the (value, count) pairs would be too many.

    `values`: Float64 by code (a hierarchy's nodes: few); `codes`, `counts`: non-negative integers (row counts).

    >>> sorted_products(np.array([0.5, 0.25]), np.array([1, 0, 1, 1]), np.array([3, 2, 3, 8])).tolist()
    [0.75, 0.75, 1.0, 2.0]
    """
    counts = np.asarray(counts, dtype=np.int64)
    if len(codes) == 0:
        return np.zeros(0)
    width = int(counts.max()) + 1
    limit = max(4 * len(codes), 1 << 20)
    if len(values) * width > limit and 8 * len(values) > len(codes):
        # many values: their sort costs most of the rows' own, and the pairs are then too many as a rule (T*'s
        # distance per combination of numeric leaves, 238,420 for 684,166 pairs at 3M: 0.042 -> 0.022 CPU s)
        return ascending(values[codes] * counts)
    distinct, ranked = values, codes
    if len(values) <= len(codes):  # few values (a hierarchy's nodes): equal ones share their pairs
        distinct, rank = np.unique(values, return_inverse=True)
        ranked = rank[codes]
    too_many = len(distinct) * width > limit
    if too_many or np.signbit(values).any() or np.isnan(values).any():
        return ascending(values[codes] * counts)
    seen = np.bincount(ranked.astype(np.int64) * width + counts, minlength=len(distinct) * width)
    pair = np.flatnonzero(seen)
    products = distinct[pair // width] * (pair % width).astype(np.float64)
    order = np.argsort(products, kind="stable")
    return np.repeat(products[order], seen[pair][order])


def sorted_products_numpy_sum(values: np.ndarray, codes: np.ndarray, counts: np.ndarray) -> float:
    """NumPy's sum (pairwise) of :func:`sorted_products`: ``float(np.sort(values[codes] * counts).sum())``, the same
    bits in any row order (the report's per-qid loss).

    >>> v, c, n = np.array([0.5, 0.25]), np.array([1, 0, 1, 1]), np.array([3, 2, 3, 8])
    >>> sorted_products_numpy_sum(v, c, n), float(np.sort(v[c] * n).sum())
    (4.5, 4.5)
    """
    return float(sorted_products(values, codes, counts).sum()) if len(codes) else 0.0

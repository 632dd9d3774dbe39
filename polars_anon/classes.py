"""Equivalence classes: rows sharing one quasi-identifier tuple, and their sizes."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_anon._validate import check_k, check_qids

__all__ = ["class_size_histogram", "class_sizes", "is_k_anonymous", "k_summary", "min_class_size", "tuple_key"]

SIZE = "size"


def class_sizes(lf: pl.LazyFrame, qids: Sequence[str]) -> pl.LazyFrame:
    """One row per equivalence class: the quasi-identifier tuple and its ``size`` (UInt32).

    Rows are sorted by the tuple so the result is deterministic. Refuses an empty
    `qids` and names that are not columns (the refusals of ``anon_class_sizes``).

    >>> class_sizes(pl.LazyFrame({"a": [1, 1, 2]}), ["a"]).collect().rows()
    [(1, 2), (2, 1)]
    """
    qids = check_qids(lf, qids)
    return lf.group_by(qids).agg(pl.len().alias(SIZE)).sort(qids, nulls_last=True)


def k_summary(lf: pl.LazyFrame, qids: Sequence[str], k: int = 1) -> pl.LazyFrame:
    """One row: ``k``, ``min_class_size``, ``n_classes``, ``n_rows``, ``violating_rows``, ``k_anonymous``.

    An empty table is not k-anonymous (``k_anonymous`` is False: there is no class
    to vouch for). Refuses an empty `qids`, names that are not columns, and `k`
    that is not an integer >= 1 (:class:`~polars_anon.errors.InvalidParameterError`).

    >>> k_summary(pl.LazyFrame({"a": [1, 1, 2]}), ["a"], k=2).collect().row(0)
    (2, 1, 2, 3, 1, False)
    >>> k_summary(pl.LazyFrame({"a": []}, schema={"a": pl.String}), ["a"]).collect()["k_anonymous"].item()
    False
    """
    qids = check_qids(lf, qids)
    k = check_k(k)
    sizes = lf.group_by(qids).agg(pl.len().alias(SIZE))
    return sizes.select(
        pl.lit(k, dtype=pl.Int64).alias("k"),
        pl.col(SIZE).min().cast(pl.Int64).fill_null(0).alias("min_class_size"),
        pl.len().cast(pl.Int64).alias("n_classes"),
        pl.col(SIZE).sum().cast(pl.Int64).alias("n_rows"),
        pl.col(SIZE).filter(pl.col(SIZE) < k).sum().cast(pl.Int64).alias("violating_rows"),
        (pl.col(SIZE).min() >= k).fill_null(False).alias("k_anonymous"),
    )


def min_class_size(lf: pl.LazyFrame, qids: Sequence[str]) -> int:
    """Smallest class size (the effective k); 0 for an empty table.

    >>> min_class_size(pl.LazyFrame({"a": [1, 1, 2]}), ["a"])
    1
    """
    return int(k_summary(lf, qids).collect()["min_class_size"].item())


def is_k_anonymous(lf: pl.LazyFrame, qids: Sequence[str], k: int) -> bool:
    """True when every class has at least `k` rows (False for an empty table); refuses `k` < 1 as :func:`k_summary`.

    >>> is_k_anonymous(pl.LazyFrame({"a": [1, 1, 2, 2]}), ["a"], 2)
    True
    """
    return bool(k_summary(lf, qids, k).collect()["k_anonymous"].item())


def class_size_histogram(lf: pl.LazyFrame, qids: Sequence[str]) -> pl.LazyFrame:
    """How many classes have each size: columns ``size``, ``classes``, ``rows``.

    >>> class_size_histogram(pl.LazyFrame({"a": [1, 1, 2]}), ["a"]).collect().rows()
    [(1, 1, 1), (2, 1, 2)]
    """
    return (
        lf.group_by(check_qids(lf, qids))
        .agg(pl.len().alias(SIZE))
        .group_by(SIZE)
        .agg(pl.len().alias("classes"))
        .with_columns((pl.col(SIZE).cast(pl.Int64) * pl.col("classes")).alias("rows"))
        .sort(SIZE)
    )


def tuple_key(tuples: pl.DataFrame, qids: Sequence[str]) -> pl.Expr | None:
    """Expression for a dense Int64 code of the quasi-identifier tuple, or None if it would overflow.

    Each quasi-identifier is cast to an Enum of the values `tuples` holds (every
    value the expression will meet must be there) and the physical codes are
    combined with strides, so equal tuples get equal codes, in any frame, without
    a join. The code follows the sorted order of the values, first qid fastest.

    >>> t = pl.DataFrame({"a": ["x", "y"], "b": ["u", "v"]})
    >>> t.select(tuple_key(t, ["a", "b"])).to_series().to_list()
    [0, 3]
    """
    key: pl.Expr | None = None
    stride = 1
    for q in qids:
        labels = tuples[q].drop_nulls().unique().sort()
        code = pl.col(q).cast(pl.Enum(labels)).to_physical().cast(pl.Int64)
        key = code if key is None else key + code * stride
        stride *= max(len(labels), 1)
        if stride >= 1 << 62:
            return None
    return key

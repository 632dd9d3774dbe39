"""Equivalence classes: rows sharing one quasi-identifier tuple, and their sizes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from polars_anon._validate import check_k, check_qids, refuse_reserved

__all__ = [
    "class_size_histogram",
    "class_sizes",
    "is_k_anonymous",
    "k_summary",
    "min_class_size",
    "pack_codes",
    "tuple_key",
    "tuple_labels",
    "unpack_codes",
]

SIZE = "size"


def class_sizes(lf: pl.LazyFrame, qids: Sequence[str]) -> pl.LazyFrame:
    """One row per equivalence class: the quasi-identifier tuple and its ``size`` (UInt32).

    Rows are sorted by the tuple so the result is deterministic. Refuses an `lf` that is not a Polars frame, `qids`
    that is not a column name or a list of them (None, a number), an empty
    `qids`, names that are not columns and a qid named like the aggregates' own columns
    (``size``, ``count``: :func:`~polars_anon._validate.refuse_reserved`), as ``anon_class_sizes`` does.

    >>> class_sizes(pl.LazyFrame({"a": [1, 1, 2]}), ["a"]).collect().rows()
    [(1, 2), (2, 1)]
    """
    qids = check_qids(lf, qids)
    refuse_reserved(qids, helpers=False)
    return lf.group_by(qids).agg(pl.len().alias(SIZE)).sort(qids, nulls_last=True)


def k_summary(lf: pl.LazyFrame, qids: Sequence[str], k: int = 1) -> pl.LazyFrame:
    """One row: ``k``, ``min_class_size``, ``n_classes``, ``n_rows``, ``violating_rows``, ``k_anonymous``.

    An empty table is not k-anonymous (``k_anonymous`` is False: there is no class
    to vouch for). Refuses `qids` that is not a column name or a list of them (``qids=None``), an empty `qids`,
    names that are not columns, a qid named ``size``
    or ``count`` (as :func:`class_sizes`), and `k` that is not an integer >= 1
    (:class:`~polars_anon.errors.InvalidParameterError`).

    >>> k_summary(pl.LazyFrame({"a": [1, 1, 2]}), ["a"], k=2).collect().row(0)
    (2, 1, 2, 3, 1, False)
    >>> k_summary(pl.LazyFrame({"a": []}, schema={"a": pl.String}), ["a"]).collect()["k_anonymous"].item()
    False
    """
    qids = check_qids(lf, qids)
    refuse_reserved(qids, helpers=False)
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

    Refuses an empty `qids`, names that are not columns and a qid named ``size`` or ``count``, as :func:`class_sizes`.

    >>> class_size_histogram(pl.LazyFrame({"a": [1, 1, 2]}), ["a"]).collect().rows()
    [(1, 1, 1), (2, 1, 2)]
    """
    qids = check_qids(lf, qids)
    refuse_reserved(qids, helpers=False)
    return (
        lf.group_by(qids)
        .agg(pl.len().alias(SIZE))
        .group_by(SIZE)
        .agg(pl.len().alias("classes"))
        .with_columns((pl.col(SIZE).cast(pl.Int64) * pl.col("classes")).alias("rows"))
        .sort(SIZE)
    )


def pack_codes(codes: Sequence[pl.Expr], radix: Sequence[int]) -> pl.Expr | None:
    """One Int64 from several small codes (mixed radix, first code fastest), or None if it would overflow.

    The one tuple-packing helper: :func:`tuple_key`, the publish step and the
    metrics' pairing all pack tuples with it; :func:`unpack_codes` reverses it.

    >>> pl.select(pack_codes([pl.lit(1), pl.lit(2)], [3, 4])).item()
    7
    """
    if float(np.prod(np.asarray(radix, dtype=np.float64))) >= 2.0**62:
        return None
    key: pl.Expr | None = None
    stride = 1
    for code, r in zip(codes, radix):
        key = code if key is None else key + code * stride
        stride *= max(int(r), 1)
    return key


def unpack_codes(key: str | pl.Expr, radix: Sequence[int], names: Sequence[str]) -> list[pl.Expr]:
    """The codes packed by :func:`pack_codes`, one column per name.

    >>> pl.select(unpack_codes(pl.lit(7), [3, 4], ["a", "b"])).row(0)
    (1, 2)
    """
    value = pl.col(key) if isinstance(key, str) else key
    out, stride = [], 1
    for name, r in zip(names, radix):
        out.append(((value // stride) % r).alias(name))
        stride *= r
    return out


def tuple_labels(tuples: pl.DataFrame, qids: Sequence[str]) -> list[pl.Series]:
    """Each qid's distinct values in `tuples` (nulls left out), sorted: the categories :func:`tuple_key` codes them
    by. Their counts (each at least 1) are its radixes; their product, its code space.

    >>> [v.to_list() for v in tuple_labels(pl.DataFrame({"a": ["y", "x", "y"]}), ["a"])]
    [['x', 'y']]
    """
    return [tuples[q].drop_nulls().unique().sort() for q in qids]


def tuple_key(tuples: pl.DataFrame, qids: Sequence[str], labels: Sequence[pl.Series] | None = None) -> pl.Expr | None:
    """Expression for a dense Int64 code of the quasi-identifier tuple, or None if it would overflow.

    Each quasi-identifier is cast to an Enum of the values `tuples` holds (every
    value the expression will meet must be there) and the physical codes are
    packed with :func:`pack_codes`, so equal tuples get equal codes, in any frame,
    without a join. The code follows the sorted order of the values, first qid fastest. `labels`: the
    :func:`tuple_labels` of `tuples`, when the caller has them.

    >>> t = pl.DataFrame({"a": ["x", "y"], "b": ["u", "v"]})
    >>> t.select(tuple_key(t, ["a", "b"])).to_series().to_list()
    [0, 3]
    """
    labels = tuple_labels(tuples, qids) if labels is None else labels
    codes = [pl.col(q).cast(pl.Enum(v)).to_physical().cast(pl.Int64) for q, v in zip(qids, labels)]
    return pack_codes(codes, [max(len(v), 1) for v in labels])

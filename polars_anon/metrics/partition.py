"""Metrics of the published partition: class sizes, purity, spread [papers 001 §5, 002 §4.2, 003 §2.2].

An equivalence class is a distinct published quasi-identifier tuple of the
rows that were kept; suppressed rows belong to no class and are counted apart.
Per attribute, each metric is the same metric with that attribute as the only
quasi-identifier (its classes are the distinct published values of that
column). The examples use paper 000 Table I anonymized to Table Ib
(:func:`polars_anon.metrics._frames.example`): two classes of 3.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import polars as pl

from polars_anon.metrics._frames import stack
from polars_anon.metrics.data import SENSITIVE, SIZE, SUPPRESSED, MetricData, pub_col

__all__ = [
    "DIAMETER_MAX_QIDS",
    "DIAMETER_MAX_TUPLES",
    "c_avg",
    "cm",
    "diameter",
    "diameter_of",
    "discernibility",
    "k",
    "min_class_size",
    "n_classes",
    "suppressed",
]

DIAMETER_MAX_QIDS = 12
"""Above this many quasi-identifiers the 2^m group-bys are not made (see :func:`diameter`)."""
DIAMETER_MAX_TUPLES = 20_000
"""Up to this many distinct published tuples the diameter compares every pair directly."""


def _classes(data: MetricData, columns: Sequence[str], by: Sequence[str] = ()) -> pl.LazyFrame:
    """Sizes (``size``) of the classes of the kept rows over the given published columns (in no set order).

    Grouped once per `data` and columns: the class metrics share them.
    """

    def group() -> pl.DataFrame:
        kept = data.pairs.lazy().filter(~pl.col(SUPPRESSED))
        return kept.group_by(*columns, *by).agg(pl.col(SIZE).sum().alias("size")).collect()  # one row per class

    return data.remember(f"classes {list(columns)} {list(by)}", group).lazy()


def _per_class(
    data: MetricData,
    value: pl.Expr,
    *,
    by: Sequence[str] = (),
    before: Callable[[pl.LazyFrame, list[str]], pl.LazyFrame] | None = None,
) -> pl.LazyFrame:
    """A class-level aggregation `value` over all qids (table row) and over each qid alone."""
    frames = []
    groups: list[tuple[str | None, list[str]]] = [(None, [pub_col(i) for i in range(len(data.qids))])]
    if data.per_attribute:
        groups += [(q, [pub_col(i)]) for i, q in enumerate(data.qids)]
    for attribute, columns in groups:
        classes = _classes(data, columns, list(by))
        if before is not None:
            classes = before(classes, columns)
        frames.append(classes.select(pl.lit(attribute, dtype=pl.String).alias("attribute"), value.alias("value")))
    return pl.concat(frames, how="vertical_relaxed")


def discernibility(data: MetricData) -> pl.LazyFrame:
    """Discernibility metric [paper 002 §4.2, paper 003 §2.2.4, Bayardo and Agrawal 2005]: sum over classes of |E|^2.

    A suppressed row is penalized |D| (the original row count), as in Bayardo
    and Agrawal's definition; the papers' formula is the sum of squares alone,
    which is what remains when nothing is suppressed. Range [n, n^2].

    >>> from polars_anon.metrics._frames import example, value_of
    >>> value_of(discernibility(example()))  # 3^2 + 3^2
    18
    """
    penalty = data.suppressed_rows * data.n_rows
    return _per_class(data, (pl.col("size").cast(pl.Int64) ** 2).sum().fill_null(0) + penalty)


def c_avg(data: MetricData) -> pl.LazyFrame:
    """Average class size metric [paper 003 §2.2.5, LeFevre et al. 2006]: |D'| / (k |eq(D')|).

    |D'| is the number of kept rows, |eq(D')| the number of classes, k the
    k given (a report's: the k the release enforces); when no k is given, the smallest class size (the effective k)
    stands in. 1 means every class has exactly k rows. Null when there is no
    class. Range [1, n / k] for a k-anonymous table.

    >>> from polars_anon.metrics._frames import example, value_of
    >>> value_of(c_avg(example()))  # 6 / (3 * 2)
    1.0
    """
    k_used = pl.col("size").min() if data.k is None else pl.lit(data.k)
    # no class (every row suppressed): null, as without k (with k it was 0 / 0, NaN: hunt34)
    return _per_class(data, pl.when(pl.len() > 0).then(pl.col("size").sum() / (k_used * pl.len())))


def cm(data: MetricData) -> pl.LazyFrame:
    """Classification metric [paper 002 §4.2, paper 003 §2.2.3, Iyengar 2002]: sum over rows of penalty(r) / N.

    penalty(r) is 1 when r is suppressed or its sensitive (class) value is not
    the majority value of its equivalence class, else 0; N counts the original
    rows. Needs the sensitive attribute. Range [0, 1].

    >>> from polars_anon.metrics._frames import example, value_of
    >>> round(value_of(cm(example())), 6)  # (land, land, land) pure; (sea, sea, land) one minority row
    0.166667
    """

    def majority(classes: pl.LazyFrame, columns: list[str]) -> pl.LazyFrame:
        return classes.group_by(columns).agg(pl.col("size").sum().alias("n"), pl.col("size").max().alias("top"))

    minority = (pl.col("n") - pl.col("top")).sum().fill_null(0)
    return _per_class(data, (minority + data.suppressed_rows) / data.n_rows, by=[SENSITIVE], before=majority)


def min_class_size(data: MetricData) -> pl.LazyFrame:
    """Minimum class size, the effective k [paper 001 §5, Figure 9]. 0 when no row was kept.

    >>> from polars_anon.metrics._frames import example, value_of
    >>> value_of(min_class_size(example()))
    3
    """
    return _per_class(data, pl.col("size").min().cast(pl.Int64).fill_null(0))


def n_classes(data: MetricData) -> pl.LazyFrame:
    """Number of equivalence classes of the kept rows, |eq(D')| [paper 003 §2.2.5].

    >>> from polars_anon.metrics._frames import example, value_of
    >>> value_of(n_classes(example()))
    2
    """
    return _per_class(data, pl.len().cast(pl.Int64))


def suppressed(data: MetricData) -> pl.LazyFrame:
    """Suppressed rows [paper 002 §4.2]: rows of the original table that are not in the anonymized one.

    The same value for every attribute.

    >>> from polars_anon.metrics._frames import example, value_of
    >>> value_of(suppressed(example()))
    0
    """
    return _constant(data, data.suppressed_rows, pl.Int64)


def k(data: MetricData) -> pl.LazyFrame:
    """The k the release enforces [paper 001 §5]; with differential privacy, the model's own k when larger.

    The k given to :func:`polars_anon.metrics.compute` (null if not given); a report's metrics are computed with the
    report's ``k``: the requested k, or the larger k a differentially private release enforces.

    >>> from polars_anon.metrics._frames import example, value_of
    >>> value_of(k(example()))
    3
    """
    return _constant(data, data.k, pl.Int64)


def _constant(data: MetricData, value: object, dtype: pl.DataType | type[pl.DataType]) -> pl.LazyFrame:
    attributes = [None, *data.qids] if data.per_attribute else [None]
    return pl.LazyFrame(
        {"attribute": attributes, "value": [value] * len(attributes)},
        schema={"attribute": pl.String, "value": dtype},
    )


def diameter(data: MetricData) -> pl.LazyFrame:
    """Diameter [paper 003 §2.2.6]: the largest Hamming distance between two published records.

    Over the distinct published tuples of the kept rows, exactly. Up to
    :data:`DIAMETER_MAX_TUPLES` tuples every pair is compared (in blocks, NumPy).
    Above, without comparing every pair: N(S) = sum over groups of the tuples by
    the attributes in S of (group size)^2 counts the ordered pairs agreeing at
    least on S; the Moebius inversion over supersets gives the pairs agreeing
    exactly on S, and the diameter is m - |S| for the smallest S that has such a
    pair (2^m group-bys; null above :data:`DIAMETER_MAX_QIDS` quasi-identifiers,
    the only case without a value). Both give the same number (tested); the SQL
    twin always takes the second way. 0 for a single tuple. Per attribute: 1 when
    it has two published values, else 0. Range [0, m].

    >>> from polars_anon.metrics._frames import example, value_of
    >>> value_of(diameter(example()))  # (*, mammals) and (*, cetaceans) differ in race only
    1
    """
    m = len(data.qids)
    cols = [pub_col(i) for i in range(m)]
    tuples = _classes(data, cols).select(cols)  # the distinct published tuples
    per = [
        tuples.select(
            pl.lit(q, dtype=pl.String).alias("attribute"),
            (pl.col(pub_col(i)).n_unique() >= 2).cast(pl.Int64).alias("value"),
        )
        for i, q in enumerate(data.qids)
    ]
    distinct = tuples.collect()  # materializes: the distinct published tuples
    value = diameter_of(distinct.to_numpy())
    return stack(
        data,
        pl.LazyFrame({"attribute": [None], "value": [value]}, schema={"attribute": pl.String, "value": pl.Int64}),
        pl.concat(per),
    )


def diameter_of(tuples: np.ndarray) -> int | None:
    """The whole-table value of :func:`diameter` from the distinct published tuples (one row each, any order; node
    ids as integers): every pair compared up to :data:`DIAMETER_MAX_TUPLES` rows, else the subsets' pair counts
    (None above :data:`DIAMETER_MAX_QIDS` columns).

    >>> diameter_of(np.array([[0, 1], [0, 2]])), diameter_of(np.zeros((0, 2), dtype=np.int64))
    (1, 0)
    """
    m = tuples.shape[1]
    if len(tuples) > DIAMETER_MAX_TUPLES and m > DIAMETER_MAX_QIDS:
        return None  # before the pivots: whether they find a pair must not decide between a value and None
    if len(tuples) > 256 and _differ_everywhere(tuples):
        return m  # the largest distance there is: no need to compare every pair nor count those of every subset
    if len(tuples) <= DIAMETER_MAX_TUPLES:
        return _max_hamming(tuples)
    cols = [pub_col(i) for i in range(m)]
    return _diameter_by_subsets(pl.LazyFrame(tuples, schema=cols, orient="row"), cols)


def _max_hamming(t: np.ndarray) -> int:
    """The largest Hamming distance between two rows of `t` (0 for fewer than two).

    Computed block by block (at most 4M cells).
    """
    m, best = t.shape[1], 0
    block = max(1, min(256, 4_000_000 // max(1, len(t) * m)))
    for lo in range(0, len(t) - 1, block):
        a = t[lo : lo + block]
        best = max(best, int((a[:, None, :] != t[None, lo:, :]).sum(axis=2).max()))
        if best == m:
            break
    return best


def _differ_everywhere(t: np.ndarray, pivots: int = 64) -> bool:
    """Whether one of the first `pivots` rows of `t` differs from another row in every column (then the diameter is
    the number of columns, its largest value). A pass per pivot over the rows: where the published tuples are many
    (fars_int at k = 2: 35,215) the first pivot usually finds such a row, where the 2^m group-bys of
    :func:`_diameter_by_subsets` took 0.4 CPU s. False only says that these pivots found none.

    >>> _differ_everywhere(np.array([[0, 0], [0, 1], [1, 1]])), _differ_everywhere(np.array([[0, 0], [0, 1]]))
    (True, False)
    """
    m = t.shape[1]
    return any(bool(((t != t[p]).sum(axis=1) == m).any()) for p in range(min(pivots, len(t))))


def _diameter_by_subsets(tuples: pl.LazyFrame, cols: list[str]) -> int:
    """The diameter from the pairs agreeing on each subset of columns (Moebius inversion over supersets)."""
    m = len(cols)
    n_pairs = []
    for mask in range(1 << m):
        chosen = [cols[j] for j in range(m) if mask >> j & 1]
        groups = tuples.group_by(chosen).agg(pl.len().alias("c")) if chosen else tuples.select(pl.len().alias("c"))
        n_pairs.append(groups.select((pl.col("c").cast(pl.Int64) ** 2).sum()))
    counts = np.array([f.item() for f in pl.collect_all(n_pairs)], dtype=np.int64)  # materializes: 2^m numbers
    exact = counts.copy()
    masks = np.arange(1 << m)
    for j in range(m):  # superset Moebius inversion: pairs agreeing on exactly S
        lower = masks[(masks >> j & 1) == 0]
        exact[lower] -= exact[lower | 1 << j]
    full = (1 << m) - 1
    agree = [mask.bit_count() for mask in range(1 << m) if mask != full and exact[mask] > 0]
    return m - min(agree) if agree else 0

"""Attribute-disclosure checks on a published table, as one number each [paper 004 §5.2].

:func:`homogeneity_rate` (share of records whose class holds a single sensitive
value: the homogeneity attack on standard k-anonymity), :func:`l_diversity`
(distinct l-diversity: the fewest sensitive values in a class) and
:func:`t_closeness` (the largest distance between a class's sensitive distribution
and the table's; equal ground distance, so the Earth Mover's distance is the total
variation distance). The privacy models of :mod:`polars_anon.privacy` measure
these and more per class; these functions keep their one-number form.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_anon._validate import as_lazy, check_columns

__all__ = ["homogeneity_rate", "l_diversity", "t_closeness"]


def _class_stats(lf: pl.LazyFrame, qids: Sequence[str], sensitive: str) -> pl.LazyFrame:
    check_columns(lf, [*qids, sensitive], "columns")
    return lf.group_by(*qids, sensitive).agg(pl.len().alias("__anon_n"))


def homogeneity_rate(data: pl.LazyFrame | pl.DataFrame, qids: Sequence[str], sensitive: str) -> float:
    """Share of records in classes where every record has the same sensitive value [paper 004 §5.2].

    >>> df = pl.DataFrame({"q": ["a", "a", "b", "b", "b"], "s": [1, 1, 1, 2, 2]})
    >>> homogeneity_rate(df, ["q"], "s")
    0.4
    """
    qids = list(qids)
    stats = _class_stats(as_lazy(data), qids, sensitive)
    per_class = stats.group_by(qids).agg(pl.len().alias("__anon_values"), pl.col("__anon_n").sum())
    out = per_class.select(
        pl.col("__anon_n").filter(pl.col("__anon_values") == 1).sum() / pl.col("__anon_n").sum()
    ).collect()  # materializes: one row
    return float(out.item() or 0.0)


def l_diversity(data: pl.LazyFrame | pl.DataFrame, qids: Sequence[str], sensitive: str) -> int:
    """Distinct l-diversity: the fewest distinct sensitive values in any class.

    >>> l_diversity(pl.DataFrame({"q": ["a", "a", "b", "b"], "s": [1, 2, 1, 1]}), ["q"], "s")
    1
    """
    qids = list(qids)
    stats = _class_stats(as_lazy(data), qids, sensitive)
    per_class = stats.group_by(qids).agg(pl.len().alias("l"))
    return int(per_class.select(pl.col("l").min()).collect().item() or 0)  # materializes: one row


def t_closeness(data: pl.LazyFrame | pl.DataFrame, qids: Sequence[str], sensitive: str) -> float:
    """The largest distance between a class's sensitive distribution and the whole table's.

    The distance is the Earth Mover's distance with equal ground distance (t-closeness
    for categorical values), which is the total variation ``1/2 sum |p - q|``.

    >>> t_closeness(pl.DataFrame({"q": ["a", "a", "b", "b"], "s": [1, 1, 2, 2]}), ["q"], "s")
    0.5
    """
    qids = list(qids)
    stats = _class_stats(as_lazy(data), qids, sensitive)
    overall = (
        stats.group_by(sensitive)
        .agg(pl.col("__anon_n").sum().alias("__anon_q"))
        .with_columns(pl.col("__anon_q") / pl.col("__anon_q").sum())
    )
    classes = stats.select(*qids).unique()
    grid = classes.join(overall, how="cross")  # every (class, sensitive value), zeros included
    joined = grid.join(stats, on=[*qids, sensitive], how="left", nulls_equal=True).with_columns(
        (pl.col("__anon_n").fill_null(0) / pl.col("__anon_n").sum().over(qids)).alias("__anon_p")
    )
    tv = joined.group_by(qids).agg(((pl.col("__anon_p") - pl.col("__anon_q")).abs().sum() / 2).alias("t"))
    return float(tv.select(pl.col("t").max()).collect().item() or 0.0)  # materializes: one row

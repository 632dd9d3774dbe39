"""The metrics of an anonymization report, computed on class aggregates (not rows).

A full-domain result (``fulldomain``, ``datafly``: the plan reports ``levels``)
maps each distinct original tuple to one published tuple, so the tuple map with
the class sizes is all the metrics need: a few thousand rows where the table has
millions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from polars_anon.errors import ValueNotInHierarchyError
from polars_anon.generalize import generalize_expr
from polars_anon.hierarchy import Hierarchy
from polars_anon.metrics.data import from_mapping
from polars_anon.metrics.registry import METRICS, evaluate

__all__ = ["levels_mapping", "report_metrics"]


def levels_mapping(
    aggregates: pl.DataFrame, qids: Sequence[str], hierarchies: Mapping[str, Hierarchy], levels: Mapping[str, int], k: int
) -> pl.DataFrame:
    """Tuple map of a full-domain result: original tuple, ``__anon_out_<qid>``, ``size``, ``__anon_small``.

    `aggregates` holds the distinct original tuples (String) and their ``size``.
    Tuples whose published class has fewer than k rows are marked
    ``__anon_small``: the full-domain methods suppress exactly those rows.

    >>> from polars_anon import Hierarchy
    >>> agg = pl.DataFrame({"g": ["F", "M"], "size": [3, 1]})
    >>> levels_mapping(agg, ["g"], {"g": Hierarchy.suppression(["F", "M"])}, {"g": 0}, 2).rows()
    [('F', 'F', 3, False), ('M', 'M', 1, True)]
    """
    out = [f"__anon_out_{q}" for q in qids]
    return (
        aggregates.lazy()
        .select(*qids, "size", *[generalize_expr(q, hierarchies[q], int(levels.get(q, 0))).alias(o) for q, o in zip(qids, out)])
        .with_columns((pl.col("size").sum().over(out) < k).alias("__anon_small"))
        .select(*qids, *out, "size", "__anon_small")
        .collect()  # materializes: one row per class
    )


def report_metrics(
    aggregates: pl.DataFrame,
    qids: Sequence[str],
    hierarchies: Mapping[str, Hierarchy],
    levels: Mapping[str, int] | None,
    k: int,
) -> dict[str, Any]:
    """Every metric that needs no sensitive attribute, name -> value, for the report.

    Empty when the method does not publish one level per attribute (its tuple
    map is not known here), or when the input held nulls published as roots
    (``null="suppress"``: those rows have no original leaf). Compute them from
    the files with :func:`polars_anon.metrics.compute` or ``polars-anon metrics``.
    """
    if levels is None:
        return {}
    mapping = levels_mapping(aggregates, qids, hierarchies, levels, k)
    try:
        data = from_mapping(mapping, qids, hierarchies, suppressed="__anon_small", k=k, levels=levels)
    except ValueNotInHierarchyError:
        return {}
    names = [n for n, m in METRICS.items() if not m.needs_sensitive]
    return evaluate(data, names).row(0, named=True)

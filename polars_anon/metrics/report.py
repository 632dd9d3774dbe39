"""The metrics of an anonymization report, computed on class aggregates (not rows).

A full-domain result (``fulldomain``, ``datafly``: the plan reports ``levels``)
maps each distinct original tuple to one published tuple, so the tuple map with
the class sizes is all the metrics need: a few thousand rows where the table has
millions. A local-recoding method (``greedy``, ``mondrian``) hands its tuple map
over as :attr:`polars_anon.algorithms.Plan.mapping`, with a row count per
(original tuple, published tuple): Mondrian's relaxed cuts send the rows of one
original tuple to two classes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from polars_anon.errors import ValueNotInHierarchyError
from polars_anon.generalize import generalize_expr
from polars_anon.hierarchy import Hierarchy
from polars_anon.metrics.data import from_mapping
from polars_anon.metrics.registry import evaluate, metric_names

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
    mapping: pl.DataFrame | None = None,
) -> dict[str, Any]:
    """Every metric that needs no sensitive attribute (aliases left out), name -> value, for the report.

    From the full-domain `levels`, or else from the method's tuple `mapping`
    (original qids, ``__anon_out_<qid>``, ``size``, optionally a Boolean
    ``__anon_suppressed``; see :attr:`polars_anon.algorithms.Plan.mapping`). The
    values equal :func:`polars_anon.metrics.compute` on the published table.
    Empty when neither is known (e.g. ``mdav``), when a qid has no hierarchy or a
    published value is not a hierarchy node, or when the input held nulls
    published as roots (``null="suppress"``: those rows have no original leaf).
    Compute them from the files with :func:`polars_anon.metrics.compute` or
    ``polars-anon metrics``.

    >>> from polars_anon import Hierarchy
    >>> H = {"g": Hierarchy.suppression(["F", "M"])}
    >>> agg = pl.DataFrame({"g": ["F", "M"], "size": [3, 1]})
    >>> tuple_map = pl.DataFrame({"g": ["F", "F", "M"], "__anon_out_g": ["F", "*", "*"], "size": [2, 1, 1]})
    >>> report_metrics(agg, ["g"], H, None, 2, tuple_map)["modified"]
    50.0
    """
    if any(q not in hierarchies for q in qids):
        return {}
    try:
        if levels is not None:
            tuples = levels_mapping(aggregates, qids, hierarchies, levels, k)
            data = from_mapping(tuples, qids, hierarchies, suppressed="__anon_small", k=k, levels=levels)
        elif mapping is not None:
            flag = "__anon_suppressed" if "__anon_suppressed" in mapping.columns else None
            data = from_mapping(mapping, qids, hierarchies, suppressed=flag, k=k)
        else:
            return {}
    except ValueNotInHierarchyError:
        return {}
    return evaluate(data, metric_names(None, has_sensitive=False)).row(0, named=True)

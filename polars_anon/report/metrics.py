"""The metrics of an anonymization report, computed on the tuple map (class aggregates, not rows).

Every method hands its :class:`~polars_anon.tuplemap.TupleMap` to the publish step;
the same map, with its row counts, is all the metrics need: a few thousand rows
where the table has millions. The values equal :func:`polars_anon.metrics.compute`
on the published table.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import polars as pl  # noqa: F401  (the doctests)

from polars_anon.errors import ValueNotInHierarchyError
from polars_anon.hierarchy import Hierarchy
from polars_anon.metrics.cells import loss_per_node
from polars_anon.metrics.data import MetricData, from_mapping
from polars_anon.metrics.registry import METRICS, evaluate_both, metric_names
from polars_anon.metrics.sums import sorted_products_numpy_sum
from polars_anon.tuplemap import SIZE, SUPPRESSED, TupleMap, out_col

__all__ = ["map_data", "map_loss", "report_metrics"]


def map_data(
    tmap: TupleMap, hierarchies: Mapping[str, Hierarchy], k: int, levels: Mapping[str, int] | None = None
) -> MetricData | None:
    """:class:`MetricData` of a map, or None when the metrics do not apply to it.

    None for a row map (MDAV), when a qid has no hierarchy, or when a published value
    is not a hierarchy node (Mondrian's ranges and sets) or an original value not a
    leaf (``null="suppress"`` publishes nulls, which have no original leaf, as roots).
    """
    if tmap.by_row or any(q not in hierarchies for q in tmap.qids):
        return None
    ids = {q: tmap.known_ids(q, hierarchies[q]) for q in tmap.qids}
    labelled = all(published is not None for _, published in ids.values())  # else read from the published labels
    frame, classes = (tmap.stored, tmap.published_nodes()) if labelled else (tmap.frame, None)
    leaf_nodes = None
    if labelled and not tmap.stored[SUPPRESSED].any():  # each leaf's one node, where the map knows it
        found = {q: tmap.leaf_nodes(q) for q in tmap.qids}
        leaf_nodes = {q: table for q, table in found.items() if table is not None}
    try:
        return from_mapping(
            frame,
            tmap.qids,
            hierarchies,
            suppressed=SUPPRESSED,
            k=k,
            levels=levels,
            ids=ids,
            classes=classes,
            leaf_nodes=leaf_nodes,
        )
    except ValueNotInHierarchyError:
        return None


def report_metrics(data: MetricData | None) -> dict[str, dict[str, Any]]:
    """Every metric that needs no sensitive attribute (aliases left out), for the report.

    Returns ``metrics`` (name -> raw value), ``metrics_normalized`` (name -> value in
    [0, 1]: the raw value over the same metric on the fully suppressed table, or over
    its own range; see :attr:`polars_anon.metrics.Metric.normalization`) and
    ``metric_units`` (name -> what the raw number counts). All empty when `data` is None.

    >>> from polars_anon import Hierarchy
    >>> H = {"g": Hierarchy.suppression(["F", "M"])}
    >>> agg = pl.DataFrame({"g": ["F", "M"], "size": [3, 1]})
    >>> m = TupleMap.from_labels(agg, ["g"], {"g": pl.Series(["F", "*"])})
    >>> parts = report_metrics(map_data(m, H, 2))
    >>> parts["metrics"]["modified"], parts["metrics_normalized"]["loss"], parts["metric_units"]["modified"]
    (25.0, 0.25, '%')
    """
    if data is None:
        return {"metrics": {}, "metrics_normalized": {}, "metric_units": {}}
    names = metric_names(None, has_sensitive=False)
    raw, normalized = evaluate_both(data, names)
    return {"metrics": raw, "metrics_normalized": normalized, "metric_units": {n: METRICS[n].unit for n in names}}


def map_loss(tmap: TupleMap, hierarchies: Mapping[str, Hierarchy]) -> tuple[float | None, dict[str, float]]:
    """The average cell loss of a map, and per qid (see :func:`polars_anon.metrics.cells.loss_per_node`).

    A suppressed row counts 1 per cell. ``(None, {})`` when a qid has no hierarchy or a
    published value is not a node of it (ranges, sets, means).

    >>> from polars_anon import Hierarchy
    >>> agg = pl.DataFrame({"g": ["F", "M"], "size": [3, 1]})
    >>> published = TupleMap.from_labels(agg, ["g"], {"g": pl.Series(["F", "*"])})
    >>> map_loss(published, {"g": Hierarchy.suppression(["F", "M"])})
    (0.25, {'g': 0.25})
    """
    if tmap.by_row or any(q not in hierarchies for q in tmap.qids):
        return None, {}
    frame = tmap.stored
    sup = frame[SUPPRESSED].to_numpy()
    n = float(tmap.n_rows)  # the Float64 sum of the row counts, the same float: whole numbers below 2**53 add exactly
    classes = tmap.published_nodes()  # the kept rows' classes as node ids (the map check's), or None
    per = {}
    try:
        for j, q in enumerate(tmap.qids):
            h = hierarchies[q]
            published = tmap.known_ids(q, h)[1]
            values = np.append(loss_per_node(h).astype(np.float64), 1.0)  # a suppressed row costs 1: the last code
            if published is not None and classes is not None:
                cost = _one_cost(np.append(values[classes[0][:, j]], [1.0] if sup.any() else []))
                if cost is not None:
                    per[q] = cost if n else 0.0
                    continue
            if published is None:
                published = h.ids_of(tmap.frame[out_col(q)])
            codes = np.where(sup, len(values) - 1, published)
            # the sum of the sorted costs times sizes: the same bits in any row order
            per[q] = sorted_products_numpy_sum(values, codes, frame[SIZE].to_numpy()) / n if n else 0.0
    except ValueNotInHierarchyError:
        return None, {}
    return (math.fsum(per.values()) / len(per) if per else 0.0), per


def _one_cost(costs: np.ndarray) -> float | None:
    """The cost every row of a qid has when it is 0.0 (a qid published as is) or 1.0 (at its root), from the costs
    that occur (the published classes' and a suppressed row's), else None: then the sorted sum of the rows' costs
    times their sizes is 0.0, or the row count (whole numbers below 2**53 are added exactly), and the qid's loss
    that over the row count, without a pass over the rows."""
    if not len(costs) or np.signbit(costs).any():
        return None
    for cost in (0.0, 1.0):
        if bool((costs == cost).all()):
            return cost
    return None

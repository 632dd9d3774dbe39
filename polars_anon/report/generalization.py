"""How far each quasi-identifier was generalized, from the tuple map (for the report).

Per quasi-identifier: the full-domain level when there is one, the share of input
rows published with their original value, the share published as the hierarchy's
root (suppressed rows not included: they are removed, and counted in the report's
``suppressed``), the number of distinct published values and the most frequent
ones with their row counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import polars as pl

from polars_anon.hierarchy import Hierarchy
from polars_anon.metrics.cell_counts import Cells, qid_cells
from polars_anon.metrics.data import MetricData, orig_col
from polars_anon.tuplemap import SIZE, SUPPRESSED, TupleMap, out_col

__all__ = ["TOP", "generalization"]

TOP = 5
"""Published values listed per quasi-identifier."""


def generalization(
    tmap: TupleMap,
    hierarchies: Mapping[str, Hierarchy],
    levels: Mapping[str, int] | None = None,
    top: int = TOP,
    *,
    metric_data: MetricData | None = None,
) -> dict[str, dict[str, Any]]:
    """qid -> ``level``, ``unchanged``, ``root`` (shares of the input rows), ``n_values`` and ``top``.

    ``unchanged`` is None for a row map (MDAV keeps no original tuple), ``root`` None for a
    qid without hierarchy; a null published at the root (null='suppress') counts in ``root``, not in
    ``unchanged``. ``n_values`` counts the distinct published values, a missing cell (local suppression's) not among
    them; ``top`` lists ``[value, rows]`` by decreasing rows, then value (a missing cell's value: None).
    `metric_data`: the report's metric data of `tmap`: each qid's cells
    (:func:`~polars_anon.metrics.cell_counts.qid_cells`, which the report's metrics count too) give its shares where
    the hierarchy is the same, from a few thousand cells instead of every map row; else its pairs give the leaf ids
    where the map's builder knew only the published nodes.

    >>> from polars_anon import Hierarchy
    >>> agg = pl.DataFrame({"g": ["F", "M", "X"], "size": [3, 1, 1]})
    >>> m = TupleMap.from_labels(agg, ["g"], {"g": pl.Series(["F", "*", "*"])})
    >>> generalization(m, {"g": Hierarchy.suppression(["F", "M", "X"])})["g"]
    {'level': None, 'unchanged': 0.6, 'root': 0.4, 'n_values': 2, 'top': [['F', 3], ['*', 2]]}
    """
    n = float(tmap.n_rows)
    out: dict[str, dict[str, Any]] = {}
    kept_frame: pl.DataFrame | None = None
    kept_sizes: tuple[np.ndarray, np.ndarray] | None = None
    cells = _cells(metric_data, hierarchies)
    for q in tmap.qids:
        o = out_col(q)
        h = hierarchies.get(q)
        known = tmap.known(q)
        known_leaves = None if known is None else known.leaves
        if known is not None and known_leaves is None and metric_data is not None and q in metric_data.qids:
            known_leaves = metric_data.pairs[orig_col(list(metric_data.qids).index(q))].to_numpy()
        if h is not None and q in cells:  # the metric data's cells: a few thousand, not every tuple
            c = cells[q]
            counts, same, root = _from_ids(o, ~c.sup, c.size, c.leaf, c.pub, h)
        elif h is not None and known is not None and known.hierarchy is h and known_leaves is not None:
            if kept_sizes is None:  # read once for every qid
                kept_sizes = (~tmap.stored[SUPPRESSED].to_numpy(), tmap.stored[SIZE].to_numpy())
            counts, same, root = _from_ids(o, *kept_sizes, known_leaves, known.nodes, h)
        else:
            kept = kept_frame = tmap.frame.filter(~pl.col(SUPPRESSED)) if kept_frame is None else kept_frame
            counts = kept.group_by(o).agg(pl.col(SIZE).sum()).sort([SIZE, o], descending=[True, False])
            unchanged = (pl.col(q) == pl.col(o)).fill_null(False)
            if h is not None and h.null_root is not None:  # a null at the root (null='suppress'): no original value
                unchanged = unchanged & (pl.col(q).cast(pl.String) != h.null_root)
            same = None if tmap.by_row or tmap.by_partition else kept.filter(unchanged)[SIZE].sum()
            root = None if h is None else kept.filter(pl.col(o).cast(pl.String) == h.root)[SIZE].sum()
        out[q] = {
            "level": None if levels is None or q not in levels else int(levels[q]),
            "unchanged": None if same is None else (float(same) / n if n else 0.0),
            "root": None if root is None else (float(root) / n if n else 0.0),
            "n_values": counts.height - counts[o].null_count(),  # a missing cell (local suppression) is no value
            "top": [[label, int(rows)] for label, rows in counts.head(top).iter_rows()],
        }
    return out


def _cells(metric_data: MetricData | None, hierarchies: Mapping[str, Hierarchy]) -> dict[str, Cells]:
    """qid -> its cells in the report's metric data of the map (its original leaves, published nodes and rows), for
    the qids whose hierarchy is the one the shares are computed with."""
    if metric_data is None:
        return {}
    return {
        q: c
        for q, c in zip(metric_data.qids, qid_cells(metric_data))
        if metric_data.hierarchies[q] is hierarchies.get(q)
    }


def _from_ids(
    o: str, kept: np.ndarray, size: np.ndarray, leaves: np.ndarray, nodes: np.ndarray, h: Hierarchy
) -> tuple[pl.DataFrame, int, int]:
    """The published values' row counts (sorted as the group-by of the labels), the rows published unchanged and the
    rows published as the root, from the published node ids the map's builder knew and the original leaves (its
    builder's, or the report's metric data's: labels are unique in a hierarchy, the root is node 0): NumPy over the
    ids, not a group-by and two filters of every tuple's String labels. `kept`: the map rows not suppressed, `size`
    their row counts; `o` names the labels' column."""
    rows = np.bincount(nodes[kept], weights=size[kept], minlength=h.n_nodes)  # exact: fewer than 2**53 rows
    present = np.flatnonzero(rows)
    counts = pl.DataFrame(
        [pl.Series(o, h.labels, dtype=pl.String).gather(present), pl.Series(SIZE, rows[present].astype(np.int64))]
    ).sort([SIZE, o], descending=[True, False])
    same = leaves == nodes
    if h.null_root is not None:  # a null the road put at the root (null='suppress'): published as no value of its own
        same &= leaves != 0
    root = int(size[kept & (nodes == 0)].sum())
    return counts, int(size[kept & same].sum()), root

"""Each quasi-identifier's cells of a :class:`~polars_anon.metrics.data.MetricData` as NumPy arrays: its distinct
(original leaf, published node, suppressed) and their rows, counted once per data.

The report reads them three times: its metrics (:mod:`polars_anon.metrics.arrays`), Cramer's V
(:mod:`polars_anon.metrics.distribution`: which published column is a function of its original one, how many
values each holds) and the generalization shares (:mod:`polars_anon.report.generalization`): a few thousand
cells instead of every pair.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import polars as pl  # noqa: F401  (the doctests)

from polars_anon.metrics.data import SIZE, SUPPRESSED, MetricData, orig_col, pub_col

__all__ = ["Cells", "float_sizes", "qid_cells"]


@dataclass(frozen=True)
class Cells:
    """One qid's cells as arrays (the Polars frame :attr:`MetricData.cells` holds them too): distinct (leaf, published
    node, suppressed) and their rows, in
    ascending (leaf, published node, suppressed) order (a suppressed pair's published node is the root, 0)."""

    leaf: np.ndarray
    pub: np.ndarray
    sup: np.ndarray
    size: np.ndarray

    @cached_property
    def node_of_leaf(self) -> np.ndarray | None:
        """Per leaf id (up to the largest that occurs), the node its pairs are published as (0 for an id no pair
        holds), when every leaf's pairs are published as one node (a suppressed pair's is the root); else None.

        >>> cells = Cells(np.array([1, 1, 2]), np.array([0, 0, 2]), np.array([False, True, False]), np.array([3, 1, 2]))
        >>> cells.node_of_leaf.tolist(), Cells(cells.leaf, np.array([0, 1, 2]), cells.sup, cells.size).node_of_leaf
        ([0, 0, 2], None)
        """
        repeated = self.leaf[1:] == self.leaf[:-1]  # ascending by leaf, then node: a leaf's nodes are neighbours
        if not bool((self.pub[1:][repeated] == self.pub[:-1][repeated]).all()):
            return None
        table = np.zeros(int(self.leaf.max(initial=0)) + 1, dtype=np.int64)
        table[self.leaf] = self.pub
        return table


def qid_cells(data: MetricData) -> list[Cells]:
    """Each qid's :class:`Cells` of `data`, counted once per data (the report's metrics and its generalization
    shares read them).

    >>> from polars_anon import Hierarchy
    >>> from polars_anon.metrics.data import from_mapping
    >>> H = {"g": Hierarchy.suppression(["F", "M"])}  # nodes *, F, M
    >>> data = from_mapping(pl.DataFrame({"g": ["F", "M", "F"], "__anon_out_g": ["F", "*", "F"], "size": [3, 1, 2]}),
    ...                     ["g"], H)
    >>> [c.tolist() for c in vars(qid_cells(data)[0]).values()]  # F kept as F (5 rows), M published as * (1)
    [[1, 2], [1, 0], [False, False], [5, 1]]
    """
    return data.remember("cell_arrays", lambda: _qid_cells(data))


def _qid_cells(data: MetricData) -> list[Cells]:
    pairs = data.pairs
    sup = pairs[SUPPRESSED].to_numpy().astype(bool)
    size = float_sizes(data)  # bincount's weights, converted once
    any_sup = bool(sup.any())
    known = data.leaf_nodes or {}
    out = []
    for i, q in enumerate(data.qids):
        o, p = (pairs[c(i)].to_numpy().astype(np.int64, copy=False) for c in (orig_col, pub_col))
        n_nodes = data.hierarchies[q].n_nodes
        if not any_sup and q in known:
            out.append(_cells_of_leaves(o, known[q], size, n_nodes))
            continue
        out.append(
            (None if any_sup else _cells_of_function(o, p, size, n_nodes)) or _count_cells(o, p, sup, size, n_nodes)
        )
    return out


def float_sizes(data: MetricData) -> np.ndarray:
    """The pairs' row counts as Float64 (``bincount``'s weights), converted once per data (the cells and Cramer's V
    read them)."""
    return data.remember("float_sizes", lambda: data.pairs[SIZE].to_numpy().astype(np.float64))


def _cells_of_leaves(o: np.ndarray, node_of: np.ndarray, size: np.ndarray, n_nodes: int) -> Cells:
    """:func:`_cells_of_function`'s cells when the node each leaf is published as is known (`node_of`, per node id):
    one weighted count of the leaves."""
    rows = np.bincount(o, weights=size, minlength=n_nodes)  # whole numbers summed: exact
    leaf = np.flatnonzero(rows)
    return Cells(
        leaf, node_of[leaf].astype(np.int64, copy=False), np.zeros(len(leaf), dtype=bool), rows[leaf].astype(np.int64)
    )


def _cells_of_function(o: np.ndarray, p: np.ndarray, size: np.ndarray, n_nodes: int) -> Cells | None:
    """A qid's cells when no pair is suppressed and every leaf is published as one node (a full-domain map): one
    cell per leaf, its rows a weighted count of the leaves (the same cells as :func:`_count_cells`, a pass fewer);
    None when a leaf is published as two nodes."""
    node_of = np.zeros(n_nodes, dtype=np.int64)
    node_of[o] = p
    if not np.array_equal(node_of[o], p):
        return None
    rows = np.bincount(o, weights=size, minlength=n_nodes)  # whole numbers summed: exact
    leaf = np.flatnonzero(rows)
    return Cells(leaf, node_of[leaf], np.zeros(len(leaf), dtype=bool), rows[leaf].astype(np.int64))


def _count_cells(o: np.ndarray, p: np.ndarray, sup: np.ndarray, size: np.ndarray, n_nodes: int) -> Cells:
    """One qid's cells, in ascending (leaf, published node, suppressed) order: a ``bincount`` over the dense ranks
    of the leaves and published nodes that occur (a few thousand cells), not over every (node, node) pair."""
    has_o, has_p = np.bincount(o, minlength=n_nodes) > 0, np.bincount(p, minlength=n_nodes) > 0
    leaves, published = np.flatnonzero(has_o), np.flatnonzero(has_p)
    rank_o, rank_p = np.cumsum(has_o) - 1, np.cumsum(has_p) - 1
    width = 2 * len(published)
    key = rank_o[o] * width + rank_p[p] * 2 + sup
    if len(leaves) * width <= max(1 << 20, 16 * len(key)):
        counts = np.bincount(key, weights=size, minlength=len(leaves) * width)
        cell = np.flatnonzero(counts)
        rows = counts[cell]
    else:
        cell, inverse = np.unique(key, return_inverse=True)
        rows = np.bincount(inverse, weights=size)
    return Cells(leaves[cell // width], published[cell % width // 2], (cell % 2).astype(bool), rows.astype(np.int64))

"""Each quasi-identifier's cells of a :class:`~polars_anon.metrics.data.MetricData` as NumPy arrays: its distinct
(original leaf, published node, suppressed) and their rows, counted once per data.

Each qid's leaf rows, where every leaf is published as one node, are summed from the cells of the pairs of original
columns (:func:`original_pair_cells`, counted once: Cramer's V reads them too), not counted over the pairs again.

The report reads them three times: its metrics (:mod:`polars_anon.metrics.arrays`), Cramer's V
(:mod:`polars_anon.metrics.distribution`: which published column is a function of its original one, how many
values each holds) and the generalization shares (:mod:`polars_anon.report.generalization`): a few thousand
cells instead of every pair.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import combinations

import numpy as np
import polars as pl  # noqa: F401  (the doctests)

from polars_anon.hierarchy import Hierarchy
from polars_anon.metrics.data import SIZE, SUPPRESSED, MetricData, orig_col, pub_col

__all__ = [
    "JOINT_CELLS",
    "Cells",
    "PairCells",
    "counted_apart",
    "float_sizes",
    "joint_cells",
    "leaf_pair_cells",
    "original_pair_cells",
    "pair_cells",
    "qid_cells",
]


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
    by_pairs = original_pair_cells(data) if not any_sup and all(q in known for q in data.qids) else None
    for i, q in enumerate(data.qids):
        o, p = (pairs[c(i)].to_numpy().astype(np.int64, copy=False) for c in (orig_col, pub_col))
        n_nodes = data.hierarchies[q].n_nodes
        if not any_sup and q in known:
            rows = None if by_pairs is None else _leaf_rows(by_pairs, data, i)
            out.append(_cells_of_leaves(o, known[q], size, n_nodes, rows))
            continue
        out.append(
            (None if any_sup else _cells_of_function(o, p, size, n_nodes)) or _count_cells(o, p, sup, size, n_nodes)
        )
    return out


def float_sizes(data: MetricData) -> np.ndarray:
    """The pairs' row counts as Float64 (``bincount``'s weights), converted once per data (the cells and Cramer's V
    read them)."""
    return data.remember("float_sizes", lambda: data.pairs[SIZE].to_numpy().astype(np.float64))


PairCells = dict[tuple[str, str], tuple[np.ndarray, np.ndarray, np.ndarray]]
"""Per pair of original qid columns (:func:`~polars_anon.metrics.data.orig_col` names), its :func:`pair_cells`."""


def original_pair_cells(data: MetricData) -> PairCells | None:
    """:func:`joint_cells` of the original qid columns (their codes: the leaf ids), counted once per data (or by
    :func:`counted_apart`); None with fewer than two qids or a hierarchy of more than 2**20 nodes (Cramer's V then
    codes the ids by rank)."""
    if len(data.qids) < 2 or any(h.n_nodes > 1 << 20 for h in data.hierarchies.values()):
        return None
    columns = [orig_col(i) for i in range(len(data.qids))]

    def count() -> PairCells | None:
        apart = data.remember(_APART, lambda: None)
        if apart is not None:
            return apart()
        return leaf_pair_cells(
            [data.pairs[c].to_numpy() for c in columns], float_sizes(data), data.hierarchies.values()
        )

    return data.remember("original_pair_cells", count)


def leaf_pair_cells(
    leaves: Sequence[np.ndarray], size: np.ndarray, hierarchies: Iterable[Hierarchy]
) -> PairCells | None:
    """:func:`original_pair_cells` of tuples given as each qid's leaf ids (`leaves`, in the qids' order) and their
    rows (`size`): the same cells for the same tuples in any order (sums of whole numbers, in ascending code)."""
    hierarchies = list(hierarchies)
    if len(leaves) < 2 or any(h.n_nodes > 1 << 20 for h in hierarchies):
        return None
    columns = [orig_col(i) for i in range(len(leaves))]
    codes = {c: ids.astype(np.int64, copy=False) for c, ids in zip(columns, leaves)}
    return joint_cells(codes, size.astype(np.float64, copy=False), columns)


def counted_apart(data: MetricData, counted: Callable[[], PairCells | None]) -> None:
    """Let :func:`original_pair_cells` of `data` be `counted()` (:func:`leaf_pair_cells` of the same tuples, counted
    elsewhere: the road's, from the aggregates, beside the method), read when first needed."""
    data.remember(_APART, lambda: counted)


_APART = "original_pair_cells_apart"
"""The :meth:`MetricData.remember` key of :func:`counted_apart`'s function."""


def _leaf_rows(
    cells: Mapping[tuple[str, str], tuple[np.ndarray, np.ndarray, np.ndarray]], data: MetricData, i: int
) -> np.ndarray:
    """Qid `i`'s rows per leaf id (Float64, length its hierarchy's nodes), summed from a pair of original columns it
    is in: the same whole numbers as a weighted count of its leaves over every pair."""
    first = i + 1 < len(data.qids)
    n, a, b = cells[(orig_col(i), orig_col(i + 1)) if first else (orig_col(i - 1), orig_col(i))]
    return np.bincount(a if first else b, weights=n, minlength=data.hierarchies[data.qids[i]].n_nodes)


def _cells_of_leaves(
    o: np.ndarray, node_of: np.ndarray, size: np.ndarray, n_nodes: int, rows: np.ndarray | None = None
) -> Cells:
    """:func:`_cells_of_function`'s cells when the node each leaf is published as is known (`node_of`, per node id):
    one weighted count of the leaves (`rows`, when given: those counts, found otherwise)."""
    if rows is None:
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


def pair_cells(a: np.ndarray, b: np.ndarray, size: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The non-empty cells of the contingency table of codes `a` and `b` weighted by `size`: counts, a, b codes.

    Cells in ascending combined code either way: a ``bincount`` over every cell of the table when it has at most
    2**20 cells or 16 per pair (up to 2**24 cells: 128 MiB), else the distinct combined codes (a sort). A table of
    111,111 x 136 node ids (Cup's ZIP x AGE) over 63,441 pairs took 0.01-0.02 s to bincount and scan, 28 such pairs
    per report; its sort takes milliseconds. The counts are sums of integer sizes, exact in Float64 both ways: the
    same cells and bits.
    """
    width_a, width_b = int(a.max(initial=0)) + 1, int(b.max(initial=0)) + 1
    combined = a * width_b + b
    if width_a * width_b <= max(1 << 20, min(16 * len(combined), 1 << 24)):  # at most 128 MiB of counts
        counts = np.bincount(combined, weights=size, minlength=width_a * width_b)
        cell = np.flatnonzero(counts)
        n = counts[cell]
    else:  # a sparse or a huge table: sorting the codes costs less
        cell, inverse = np.unique(combined, return_inverse=True)
        n = np.bincount(inverse, weights=size)
    return n, cell // width_b, cell % width_b


JOINT_CELLS = 1 << 18
"""The most cells of a joint table of three or more columns (2 MiB of Float64) that :func:`joint_cells` counts."""


def joint_cells(
    codes: Mapping[str, np.ndarray], size: np.ndarray, columns: Sequence[str]
) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """:func:`pair_cells` of every pair of `columns` (in :func:`itertools.combinations` order), several pairs from one
    count where it can: the columns of a pair not yet counted are joined by the others that pair with one of them
    and not yet counted while their joint table has at most :data:`JOINT_CELLS` cells, and no more than `size` has
    entries; that table is counted over them once and summed down to each of its pairs (the 3M register's six pairs
    of qids: three counts, not six).
    The same cells (sums of whole numbers, exact in Float64 while the rows total less than 2**53; beyond, the joint
    table's sums and a pair's own may round apart in the last bit) in the same order (ascending combined code)."""
    widths = {c: int(codes[c].max(initial=0)) + 1 for c in columns}
    # a joint table of more cells than entries costs more to sum down than the entries to count per pair (Adult's
    # 8 qids over 18,109 tuples: 0.004 CPU s in tables of up to 2**18 cells, 0.001 in tables of at most 18,109)
    limit = min(JOINT_CELLS, len(size))
    todo = set(combinations(columns, 2))
    out = {}
    for a, b in combinations(columns, 2):
        if (a, b) not in todo:
            continue
        group, n_cells = [a, b], widths[a] * widths[b]
        for c in columns:
            pairs_todo = any((x, c) in todo or (c, x) in todo for x in group)
            if c not in group and n_cells * widths[c] <= limit and pairs_todo:
                group.append(c)
                n_cells *= widths[c]
        group.sort(key=list(columns).index)
        table = _joint_table(codes, size, group, [widths[c] for c in group]) if len(group) > 2 else None
        for x, y in combinations(group, 2):
            if (x, y) in todo:
                out[(x, y)] = pair_cells(codes[x], codes[y], size) if table is None else _marginal(table, group, x, y)
                todo.discard((x, y))
    return out


def _joint_table(
    codes: Mapping[str, np.ndarray], size: np.ndarray, group: Sequence[str], widths: Sequence[int]
) -> np.ndarray:
    """The rows (`size`) of every combination of the codes of `group` (its first column slowest), as an array of
    shape `widths`."""
    key = np.zeros(len(size), dtype=np.int64)
    for c, width in zip(group, widths):
        key *= width
        key += codes[c]
    return np.bincount(key, weights=size, minlength=int(np.prod(widths))).reshape(widths)


def _marginal(table: np.ndarray, group: Sequence[str], x: str, y: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`pair_cells` of columns `x` and `y` (`x` first in `group`) from the joint `table` of `group`."""
    pair = table.sum(axis=tuple(i for i, c in enumerate(group) if c not in (x, y)))
    cell = np.flatnonzero(pair)
    return pair.ravel()[cell], cell // pair.shape[1], cell % pair.shape[1]
